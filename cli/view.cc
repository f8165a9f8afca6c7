// `tileprof view REPORT [--compare OTHER] -o page.html`: one self-contained
// page of PopVision-like views (`html` is the same command, its old name);
// with `--serve [PORT]`, the same page served on 127.0.0.1 instead.
#include <iostream>
#include <optional>

#include "analyzer/open_report.h"
#include "analyzer/view_page.h"
#include "analyzer/view_server.h"
#include "cli/report_command.h"
#include "common/file.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::string report;
  std::string compare;
  std::string output = "report.html";
  std::string format = "table";
  std::optional<int> serve;  // the port, when serving
};

// Serves the page until Ctrl-C or SIGTERM.
int Serve(const std::string& command, const Options& options, const analyzer::LoadedReport& report,
          const analyzer::LoadedReport* other) {
  auto server = analyzer::ViewServer::Start(report, other, static_cast<uint16_t>(*options.serve));
  if (!server) return PrintOutput(command, server.error(), options.format);
  std::cout << "Serving the view of " << options.report
            << (other ? " and " + options.compare : std::string())
            << " at http://127.0.0.1:" << (*server)->port() << "/ (Ctrl-C to stop)" << std::endl;
  if (Status served = (*server)->ServeUntilSignalled(); !served)
    return PrintOutput(command, served.error(), options.format);
  return kExitOk;
}

int Run(const std::string& command, const Options& options) {
  auto loaded = analyzer::OpenReport(options.report);
  if (!loaded) return PrintOutput(command, loaded.error(), options.format);
  std::optional<analyzer::LoadedReport> other;
  if (!options.compare.empty()) {
    auto second = analyzer::OpenReport(options.compare);
    if (!second) return PrintOutput(command, second.error(), options.format);
    other = std::move(*second);
  }
  if (options.serve) return Serve(command, options, *loaded, other ? &*other : nullptr);
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
        "network access, opens from file://. With --serve, no file: the same page is served\n"
        "on http://127.0.0.1:PORT/ (the data fetched beside it) until Ctrl-C, for reports\n"
        "too large for one file. Units: bytes, kB, KiB, MB or MiB, chosen on the page.\n"
        "Exit status: 0 ok (and when --serve is stopped by Ctrl-C or SIGTERM), 1 a report\n"
        "could not be read, the page not written or the port not listened on, 2 usage.");
    cmd.add_option("REPORT", options->report, "Report file (text, JSON, CBOR or SQLite)")
        ->required();
    cmd.add_option("--compare", options->compare, "A second report: adds the Compare view");
    cmd.add_option("-o,--output", options->output, "HTML file to write (not with --serve)")
        ->capture_default_str();
    cmd.add_option("--serve", options->serve,
                   "Serve the page on 127.0.0.1:PORT until Ctrl-C instead of writing a file "
                   "(-o is ignored); PORT 8000 when not given, 0 for any free port")
        ->expected(0, 1)
        ->default_str("8000")
        ->type_name("[PORT]")
        ->check(CLI::Range(0, 65535));
    AddFormatOption(cmd, options->format);
    return [command, options] { return Run(command, *options); };
  };
}

const Registration kView{
    "view", "Write a self-contained HTML page of a report's views (or serve it)", SetupAs("view")};
const Registration kHtml{"html", "The same as `view` (its earlier name)", SetupAs("html")};

}  // namespace
}  // namespace tileprof::cli
