// `tileprof compare A B`: two reports side by side.
#include <optional>
#include <thread>

#include "analyzer/memory_views.h"
#include "cli/report_command.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::string a, b;
  size_t count = 20;
  std::string format = "table";
};

int Run(const Options& options) {
  // Per-tile totals and whole-report sums: CompareView shows no tile's
  // detail. Execution-only reports compare their Execution sections.
  analyzer::OpenOptions needs = analyzer::TotalsAndTopTiles(0, /*total=*/true);
  needs.execution_only = true;
  // Read B on a second thread while A is read: reading dominates the run.
  std::optional<Expected<analyzer::LoadedReport>> b_read;
  std::thread reader([&] { b_read.emplace(analyzer::OpenReport(options.b, needs)); });
  auto a = analyzer::OpenReport(options.a, needs);
  reader.join();
  Expected<analyzer::LoadedReport>& b = *b_read;
  if (!a) return PrintOutput("compare", a.error(), options.format);
  if (!b) return PrintOutput("compare", b.error(), options.format);
  return PrintOutput("compare", analyzer::CompareView(*a, *b, options.count), options.format);
}

RunFn Setup(CLI::App& cmd) {
  auto options = std::make_shared<Options>();
  cmd.footer(
      "Target, totals, per-category bytes with deltas (B - A), and the tiles whose memory changed\n"
      "most, by the size of the change. Per-tile deltas need per-tile data in both reports;\n"
      "text reports are compared on the tile blocks both printed. When both reports have an\n"
      "Execution section: total cycles, each kind of cycles, and the vertex types whose cycles\n"
      "changed most (-n of them).\n"
      "Exit status: 0 ok, 1 a report could not be read, 2 usage.");
  cmd.add_option("A", options->a, "Base report")->required();
  cmd.add_option("B", options->b, "New report")->required();
  cmd.add_option("-n", options->count, "Tiles to list")
      ->check(CLI::Range(size_t{1}, size_t{1000000}))
      ->capture_default_str();
  AddFormatOption(cmd, options->format);
  return [options] { return Run(*options); };
}

const Registration kCompare{"compare", "Compare the memory and execution of two reports", Setup};

}  // namespace
}  // namespace tileprof::cli
