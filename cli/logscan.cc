// `tileprof logscan LOG...`: compilations, cache hits and misses, and the
// builds that happened after warm-up, from TensorFlow/Poplar or tileprof logs.
#include <iostream>

#include "analyzer/log_scan.h"
#include "cli/command.h"
#include "common/file.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::vector<std::string> logs;
  std::string format = "text";
  int warmup = -1;
};

int Run(const Options& options) {
  std::vector<std::vector<analyzer::LogEvent>> parsed;
  for (const std::string& path : options.logs) {
    Expected<std::string> text =
        path == "-"
            ? Expected<std::string>(std::string(std::istreambuf_iterator<char>(std::cin), {}))
            : ReadFile(path);
    if (!text) {
      PrintDiagnostic("logscan", text.error().message());
      return kExitError;
    }
    parsed.push_back(analyzer::ParseLog(*text, path));
  }
  analyzer::LogScanOptions scan_options;
  if (options.warmup >= 0) scan_options.warmup_events = options.warmup;
  analyzer::LogScanSummary summary = analyzer::ScanLogs(parsed, scan_options);
  std::cout << (options.format == "json" ? analyzer::FormatLogScanJson(summary)
                                         : analyzer::FormatLogScanText(summary));
  return kExitOk;
}

RunFn Setup(CLI::App& cmd) {
  auto options = std::make_shared<Options>();
  cmd.footer(
      "Recognised lines (anywhere in a line, after any glog or TensorFlow prefix):\n"
      "  Begin XLA compilation: <module>  (Hash: 0x...)    End XLA compilation: <module> ...\n"
      "  Loaded <module> from <file>.poplar_exec           Couldn't find <file> in executable "
      "cache\n"
      "  A pre-compiled Poplar program has been saved to <file>\n"
      "  Starting phase: <phase>    Ending phase: <phase> (duration N ms; diff RSS: X MB)\n"
      "  Compiling module <module>:  (progress bar)       Begin Poplar graph construction.\n"
      "Get them with TF_POPLAR_VLOG_LEVEL=1 and POPLAR_LOG_LEVEL=INFO. Durations come from the\n"
      "line timestamps. Warm-up ends before the first build of a module that was already built,\n"
      "unless --warmup says how many builds it has. A module compiled under several hashes is\n"
      "recompiling: its HLO changed (batch size, constants, concat in a loop); find the change\n"
      "with 'tileprof dumpdiff'.\n"
      "Exit status: 0 ok, 1 a log could not be read, 2 usage.");
  cmd.add_option("logs", options->logs, "Log files ('-' for standard input)")->required();
  cmd.add_option("--format", options->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd.add_option("--warmup", options->warmup,
                 "Number of builds (compilations and loads) that make up warm-up")
      ->check(CLI::NonNegativeNumber);
  return [options] { return Run(*options); };
}

const Registration kLogScan{"logscan", "Find compilations and cache misses after warm-up in logs",
                            Setup};

}  // namespace
}  // namespace tileprof::cli
