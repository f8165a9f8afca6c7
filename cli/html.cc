// `tileprof html REPORT -o report.html`: one self-contained page.
#include "analyzer/html_page.h"
#include "analyzer/open_report.h"
#include "cli/report_command.h"
#include "common/file.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::string report;
  std::string output = "report.html";
  std::string format = "table";
};

int Run(const Options& options) {
  auto loaded = analyzer::OpenReport(options.report, analyzer::kHtmlNeeds);
  if (!loaded) return PrintOutput("html", loaded.error(), options.format);
  std::string page = analyzer::HtmlPage(*loaded);
  if (Status written = WriteFileAtomic(options.output, page); !written)
    return PrintOutput("html", written.error(), options.format);
  analyzer::Output out;
  analyzer::Table table{"written", "Written", {"file", "bytes"}, {}};
  table.Add({options.output, uint64_t{page.size()}});
  out.tables.push_back(std::move(table));
  return PrintOutput("html", out, options.format);
}

RunFn Setup(CLI::App& cmd) {
  auto options = std::make_shared<Options>();
  cmd.footer(
      "Summary, plots (per tile, histogram, categories: each the report can give) and the "
      "most-used\n"
      "tiles in one HTML file with no external resources.\n"
      "Exit status: 0 ok, 1 the report could not be read or the page not written, 2 usage.");
  cmd.add_option("REPORT", options->report, "Report file")->required();
  cmd.add_option("-o,--output", options->output, "HTML file to write")->capture_default_str();
  AddFormatOption(cmd, options->format);
  return [options] { return Run(*options); };
}

const Registration kHtml{"html", "Write a self-contained HTML page of a report", Setup};

}  // namespace
}  // namespace tileprof::cli
