// `tileprof top REPORT [-n 5]`: the most-used tiles with their full memory
// breakdown, in the text report's per-tile layout.
#include "analyzer/memory_views.h"
#include "cli/report_command.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::string report;
  size_t count = 5;
  std::string format = "table";
};

int Run(const Options& options) {
  auto loaded = analyzer::OpenReport(options.report, analyzer::TotalsAndTopTiles(options.count));
  if (!loaded) return PrintOutput("top", loaded.error(), options.format);
  return PrintOutput("top", analyzer::TopTilesView(*loaded, options.count), options.format);
}

RunFn Setup(CLI::App& cmd) {
  auto options = std::make_shared<Options>();
  cmd.footer(
      "Tiles by excluding-gaps bytes, descending, ties by tile id. A text report has only the\n"
      "tile blocks it printed (at most five, and only when memory was imbalanced).\n"
      "Exit status: 0 ok, 1 the report could not be read or has no tile data, 2 usage.");
  cmd.add_option("REPORT", options->report, "Report file")->required();
  cmd.add_option("-n", options->count, "Number of tiles")
      ->check(CLI::Range(size_t{1}, size_t{100000}))
      ->capture_default_str();
  AddFormatOption(cmd, options->format);
  return [options] { return Run(*options); };
}

const Registration kTop{"top", "Show the most-used tiles with their full memory breakdown", Setup};

}  // namespace
}  // namespace tileprof::cli
