// `tileprof logscan LOG...`: what compiled, how often and for how long, from
// TensorFlow, JAX, PopTorch, PopART or Poplar logs (or tileprof's own).
#include <iostream>

#include "analyzer/log_scan.h"
#include "cli/command.h"
#include "common/mapped_file.h"
#include "reports/text_input.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::vector<std::string> logs;
  std::string format = "text";
  int warmup = -1;
};

int Run(const Options& options) {
  analyzer::LogScanOptions scan_options;
  if (options.warmup >= 0) scan_options.warmup_events = options.warmup;
  analyzer::LogScanner scanner(scan_options);
  for (const std::string& path : options.logs) {
    // Mapped, not read: a log of several GB costs no copy.
    Expected<MappedFile> file = MappedFile::Open(path == "-" ? "/dev/stdin" : path, true);
    if (!file) {
      PrintDiagnostic("logscan", file.error().Within(path).message());
      return kExitError;
    }
    std::string_view text(reinterpret_cast<const char*>(file->bytes().data()), file->size());
    if (Status text_ok = report::CheckText(text, path, "log"); !text_ok) {
      PrintDiagnostic("logscan", text_ok.error().message());
      return kExitError;
    }
    scanner.Scan(text, path);
  }
  analyzer::LogScanSummary summary = scanner.Finish();
  std::cout << (options.format == "json" ? analyzer::FormatLogScanJson(summary)
                                         : analyzer::FormatLogScanText(summary));
  return std::cout.good() ? kExitOk : kExitError;
}

RunFn Setup(CLI::App& cmd) {
  auto options = std::make_shared<Options>();
  cmd.footer(
      "Reads logs of every SDK era (docs/logscan.md): TensorFlow and JAX progress bars\n"
      "('Compiling module NAME:' and '[###] 100% Compilation Finished [Elapsed: ...]') and VLOG\n"
      "lines (Begin/End XLA compilation, poplar_compiler.cc, executable cache, 'attached to'),\n"
      "PopTorch 'Graph compilation' bars, PopART INFO lines, Poplar engine phases of SDK 1-3\n"
      "(Starting/Ending phase, PO:PERF), behind TensorFlow, glog, absl, spdlog or mpirun "
      "prefixes,\n"
      "with ANSI colours, CR LF and '\\r' redraws. A line it cannot place is skipped.\n"
      "Each compilation is reported with its module, framework, duration when the log shows one,\n"
      "and the Poplar phases under it. Warm-up ends before the first build of a module that was\n"
      "already built, unless --warmup says how many builds it has. A module compiled under "
      "several\n"
      "hashes is recompiling: its HLO changed (batch size, constants, concat in a loop); find the\n"
      "change with 'tileprof dumpdiff'.\n"
      "Exit status: 0 ok, 1 a log could not be read or is not text, 2 usage.");
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
