// `tileprof top REPORT [-n 5] [--by memory|cycles]`: the most-used tiles
// with their full memory breakdown, in the text report's per-tile layout, or
// the vertex types that took the most cycles.
#include "analyzer/execution_views.h"
#include "analyzer/memory_views.h"
#include "cli/report_command.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::string report;
  size_t count = 5;
  std::string by = "memory";
  std::string format = "table";
};

int Run(const Options& options) {
  if (options.by == "cycles") {
    auto loaded = analyzer::OpenReport(options.report, analyzer::kExecutionNeeds);
    if (!loaded) return PrintOutput("top", loaded.error(), options.format);
    return PrintOutput("top", analyzer::TopVertexTypesView(*loaded, options.count), options.format);
  }
  auto loaded = analyzer::OpenReport(options.report, analyzer::TotalsAndTopTiles(options.count));
  if (!loaded) return PrintOutput("top", loaded.error(), options.format);
  return PrintOutput("top", analyzer::TopTilesView(*loaded, options.count), options.format);
}

RunFn Setup(CLI::App& cmd) {
  auto options = std::make_shared<Options>();
  cmd.footer(
      "Tiles by excluding-gaps bytes, descending, ties by tile id. A text report has only the\n"
      "tile blocks it printed (at most five, and only when memory was imbalanced).\n"
      "--by cycles lists the vertex types of the Execution section by cycles (Poplar's\n"
      "'Cycles by vertex type', summed over tiles and instances), -n of them.\n"
      "Exit status: 0 ok, 1 the report could not be read or has no tile data, 2 usage.");
  cmd.add_option("REPORT", options->report, "Report file")->required();
  cmd.add_option("-n", options->count, "Number of tiles")
      ->check(CLI::Range(size_t{1}, size_t{100000}))
      ->capture_default_str();
  cmd.add_option("--by", options->by, "memory (tiles) or cycles (vertex types)")
      ->check(CLI::IsMember({"memory", "cycles"}))
      ->capture_default_str();
  AddFormatOption(cmd, options->format);
  return [options] { return Run(*options); };
}

const Registration kTop{"top", "Show the most-used tiles, or the vertex types by cycles", Setup};

}  // namespace
}  // namespace tileprof::cli
