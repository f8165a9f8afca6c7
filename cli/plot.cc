// `tileprof plot REPORT -o FILE.svg [--kind tiles|histogram|categories|execution]`.
#include "analyzer/open_report.h"
#include "analyzer/plots.h"
#include "cli/report_command.h"
#include "common/file.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::string report;
  std::string output;
  std::string kind = "tiles";
  std::string format = "table";
};

int Run(const Options& options) {
  analyzer::PlotKind kind = *analyzer::ParsePlotKind(options.kind);  // checked by CLI11
  auto loaded = analyzer::OpenReport(options.report, analyzer::PlotNeeds(kind));
  if (!loaded) return PrintOutput("plot", loaded.error(), options.format);
  auto svg = analyzer::PlotSvg(*loaded, kind);
  if (!svg) return PrintOutput("plot", svg.error(), options.format);
  if (Status written = WriteFileAtomic(options.output, *svg); !written)
    return PrintOutput("plot", written.error(), options.format);
  analyzer::Output out;
  analyzer::Table table{"written", "Written", {"file", "kind", "bytes"}, {}};
  table.Add({options.output, options.kind, uint64_t{svg->size()}});
  out.tables.push_back(std::move(table));
  return PrintOutput("plot", out, options.format);
}

RunFn Setup(CLI::App& cmd) {
  auto options = std::make_shared<Options>();
  cmd.footer(
      "tiles: memory per tile (excluding gaps) with the tile capacity line, red where over it;\n"
      "  with more than 1,000 tiles each column is the largest tile of its run (needs per-tile "
      "data).\n"
      "histogram: the By Tile histogram. categories: the categories of the five most-used tiles.\n"
      "execution: the cycle split of the Execution section (compute, exchange, sync, host I/O).\n"
      "Exit status: 0 ok, 1 the report could not be read or lacks the data, 2 usage.");
  cmd.add_option("REPORT", options->report, "Report file")->required();
  cmd.add_option("-o,--output", options->output, "SVG file to write")->required();
  cmd.add_option("--kind", options->kind, "tiles, histogram, categories or execution")
      ->check(CLI::IsMember({"tiles", "histogram", "categories", "execution"}))
      ->capture_default_str();
  AddFormatOption(cmd, options->format);
  return [options] { return Run(*options); };
}

const Registration kPlot{"plot", "Plot a report's memory or execution as SVG", Setup};

}  // namespace
}  // namespace tileprof::cli
