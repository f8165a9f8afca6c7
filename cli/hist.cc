// `tileprof hist REPORT`: the By Tile histogram in the text report's layout.
#include "analyzer/memory_views.h"
#include "cli/report_command.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::string report;
  bool including_gaps = false;
  uint64_t bucket_kb = 0;  // 0: the spec's rule
  std::string format = "table";
};

int Run(const Options& options) {
  auto loaded = analyzer::OpenReport(options.report, analyzer::TotalsAndTopTiles(0));
  if (!loaded) return PrintOutput("hist", loaded.error(), options.format);
  analyzer::HistogramOptions hist;
  hist.including_gaps = options.including_gaps;
  if (options.bucket_kb > 0) hist.bucket_kib = options.bucket_kb;
  return PrintOutput("hist", analyzer::HistogramView(*loaded, hist), options.format);
}

RunFn Setup(CLI::App& cmd) {
  auto options = std::make_shared<Options>();
  cmd.footer(
      "Reads any report (text .rep, JSON, CBOR, SQLite). Buckets are 1, 2, 4, ... KB wide, the\n"
      "smallest width giving at most 128 rows (docs/text-report.md), unless --bucket-kb is given.\n"
      "--including-gaps and --bucket-kb need per-tile data (JSON, CBOR or SQLite).\n"
      "Exit status: 0 ok, 1 the report could not be read or lacks a histogram, 2 usage.");
  cmd.add_option("REPORT", options->report, "Report file")->required();
  cmd.add_flag("--including-gaps", options->including_gaps,
               "Bucket the tiles' bytes including gaps");
  cmd.add_option("--bucket-kb", options->bucket_kb, "Bucket width in KB")
      ->check(CLI::PositiveNumber);
  AddFormatOption(cmd, options->format);
  return [options] { return Run(*options); };
}

const Registration kHist{"hist", "Print the By Tile memory histogram of a report", Setup};

}  // namespace
}  // namespace tileprof::cli
