// `tileprof export-trace REPORT -o trace.json`: the execution steps of a
// report as a Chrome trace (Perfetto and chrome://tracing open it).
#include <fmt/format.h>

#include <iostream>

#include "cli/command.h"
#include "common/file.h"
#include "reports/chrome_trace.h"
#include "reports/report_file.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::string report;
  std::string output = "trace.json";
  uint64_t tiles_per_ipu = 0;  // 0: the report's target
};

int Run(const Options& options) {
  Expected<report::ReportDocument> document = report::ReadReportFile(options.report);
  if (!document) {
    PrintDiagnostic("export-trace", document.error().message());
    return kExitError;
  }
  if (!document->execution) {
    PrintDiagnostic("export-trace",
                    options.report +
                        ": has no execution report (a compilation-only report has no steps "
                        "to show; `tileprof run` writes one)");
    return kExitError;
  }
  report::ChromeTraceOptions trace;
  const report::Target* target = document->compilation && document->compilation->target
                                     ? &*document->compilation->target
                                     : nullptr;
  trace.tiles_per_ipu = options.tiles_per_ipu > 0 ? options.tiles_per_ipu
                        : target                  ? target->tiles_per_ipu
                                                  : 0;
  if (target != nullptr && options.tiles_per_ipu == 0) trace.num_ipus = target->num_ipus;
  if (document->compilation) trace.programs = &document->compilation->programs;
  const report::ExecutionReport& execution = *document->execution;
  std::string json = report::WriteChromeTrace(execution, trace);
  if (Status written = WriteFileAtomic(options.output, json); !written) {
    PrintDiagnostic("export-trace", written.error().message());
    return kExitError;
  }
  bool per_tile = false;
  for (const report::ExecutionStep& step : execution.steps)
    per_tile = per_tile || !step.cycles_by_tile.empty();
  std::cout << fmt::format("Wrote {}: {} execution steps{}\n", options.output,
                           execution.steps.size(),
                           per_tile ? ", per tile" : " (no per-tile cycles: steps only)");
  return kExitOk;
}

RunFn Setup(CLI::App& cmd) {
  auto options = std::make_shared<Options>();
  cmd.footer(
      "REPORT is a report with an execution part in any format (JSON, CBOR, SQLite profile\n"
      "database, or text), recognised by its first bytes. The trace has one process per IPU;\n"
      "thread 0 shows the execution steps one after another; \"programs\" shows them inside the\n"
      "program nodes that run them, as nested slices (when the report has a program tree);\n"
      "with per-tile cycles (a tile-level profile), one thread per tile shows each tile's busy\n"
      "cycles in every step, and above them a thread per group of 64 tiles its busiest tile.\n"
      "Times are microseconds at the report's clock. Open the file in https://ui.perfetto.dev\n"
      "or chrome://tracing.");
  cmd.add_option("REPORT", options->report, "Report file")->required();
  cmd.add_option("-o,--output", options->output, "Chrome trace JSON to write")
      ->capture_default_str();
  cmd.add_option("--tiles-per-ipu", options->tiles_per_ipu,
                 "Tiles per IPU, to assign tiles to IPUs when the report has no target")
      ->check(CLI::PositiveNumber);
  return [options] { return Run(*options); };
}

const Registration kExportTrace{
    "export-trace",
    "Write the execution steps of a report as a Chrome trace (Perfetto, chrome://tracing)", Setup};

}  // namespace
}  // namespace tileprof::cli
