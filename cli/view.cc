// `tileprof view REPORT [--compare OTHER] -o page.html`: one self-contained
// page of PopVision-like views (`html` is the same command, its old name).
#include "analyzer/open_report.h"
#include "analyzer/view_page.h"
#include "cli/report_command.h"
#include "common/file.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::string report;
  std::string compare;
  std::string output = "report.html";
  std::string format = "table";
};

int Run(const std::string& command, const Options& options) {
  auto loaded = analyzer::OpenReport(options.report);
  if (!loaded) return PrintOutput(command, loaded.error(), options.format);
  std::optional<analyzer::LoadedReport> other;
  if (!options.compare.empty()) {
    auto second = analyzer::OpenReport(options.compare);
    if (!second) return PrintOutput(command, second.error(), options.format);
    other = std::move(*second);
  }
  Expected<std::string> page = analyzer::ViewPage(*loaded, other ? &*other : nullptr);
  if (!page) return PrintOutput(command, page.error(), options.format);
  if (Status written = WriteFileAtomic(options.output, *page); !written)
    return PrintOutput(command, written.error(), options.format);
  analyzer::Output out;
  analyzer::Table table{"written", "Written", {"file", "bytes"}, {}};
  table.Add({options.output, uint64_t{page->size()}});
  out.tables.push_back(std::move(table));
  return PrintOutput(command, out, options.format);
}

SetupFn SetupAs(std::string command) {
  return [command](CLI::App& cmd) -> RunFn {
    auto options = std::make_shared<Options>();
    cmd.footer(
        "Views: Summary, Insights (fits or not, the worst tiles, histogram, recommendations),\n"
        "Memory (per tile by category with the capacity line, the tile map; click a tile for\n"
        "its breakdown and largest variables), Liveness (live bytes at every program step;\n"
        "click a step), Program tree, Execution (cycles per step, when the report was run)\n"
        "and, with --compare, Compare. One HTML file with the data and script inside: no\n"
        "network access, opens from file://. Units: bytes, kB, KiB, MB or MiB, chosen on the "
        "page.\n"
        "Exit status: 0 ok, 1 a report could not be read or the page not written, 2 usage.");
    cmd.add_option("REPORT", options->report, "Report file (text, JSON, CBOR or SQLite)")
        ->required();
    cmd.add_option("--compare", options->compare, "A second report: adds the Compare view");
    cmd.add_option("-o,--output", options->output, "HTML file to write")->capture_default_str();
    AddFormatOption(cmd, options->format);
    return [command, options] { return Run(command, *options); };
  };
}

const Registration kView{"view", "Write a self-contained HTML page of a report's views",
                         SetupAs("view")};
const Registration kHtml{"html", "The same as `view` (its earlier name)", SetupAs("html")};

}  // namespace
}  // namespace tileprof::cli
