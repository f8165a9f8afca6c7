// `tileprof export-trace` end to end on the sample execution report.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/chrome_trace.h"
#include "tests/cli_run.h"

namespace {

using ::testing::HasSubstr;
using tileprof::cli_test::CliRun;
using tileprof::cli_test::Tileprof;

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tileprof_export_trace_" + std::to_string(getpid()) + "_" + name))
      .string();
}

const std::string kSample =
    std::string(TILEPROF_SOURCE_DIR) + "/samples/export_trace/execution.json";

TEST(ExportTraceCli, SampleGivesAChromeTracePerIpuAndTile) {
  const std::string out = TempPath("trace.json");
  CliRun run = Tileprof("export-trace " + kSample + " --tiles-per-ipu 4 -o " + out);
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(run.out, "Wrote " + out + ": 4 execution steps, per tile\n");
  std::ifstream in(out);
  nlohmann::json trace = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(trace.is_discarded());
  std::map<uint64_t, size_t> tile_events_per_ipu;
  size_t steps = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["tid"] == 0) {
      ++steps;
    } else {
      ++tile_events_per_ipu[e["pid"].get<uint64_t>()];
      EXPECT_EQ(e["pid"].get<uint64_t>(), (e["tid"].get<uint64_t>() - 1) / 4);
    }
  }
  EXPECT_EQ(steps, 4u * 2);  // each IPU's steps row
  // Non-zero tile cycles in the sample: IPU 0 has 1 + 3 + 4, IPU 1 has 3 + 4.
  EXPECT_EQ(tile_events_per_ipu, (std::map<uint64_t, size_t>{{0, 8}, {1, 7}}));
  std::filesystem::remove(out);
}

// A run of the adder profiled per tile: the programs row nests every slice
// inside its parent's (as Perfetto draws them), and its 1,472 tiles get
// 23 group rows of 64.
TEST(ExportTraceCli, ARunsProgramTreeAndTileGroups) {
  const std::string dir = TempPath("run");
  std::filesystem::create_directories(dir);
  {
    std::ofstream config(dir + "/config.json");
    config << R"({"json_report": "report.json", "profile_execution": "tile"})";
  }
  // Tileprof() runs a shell command line: run and export in the directory.
  CliRun run = Tileprof("--version > /dev/null && cd " + dir + " && " + TILEPROF_CLI + " run " +
                        std::string(TILEPROF_SOURCE_DIR) +
                        "/samples/adder.hlo --config config.json -o r.rep > /dev/null && " +
                        TILEPROF_CLI + " export-trace report.json -o trace.json");
  ASSERT_EQ(run.status, 0) << run.out;
  std::ifstream in(dir + "/trace.json");
  nlohmann::json trace = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(trace.is_discarded());
  std::vector<std::pair<double, double>> slices;  // IPU 0's programs row
  std::set<uint64_t> groups;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e["pid"] != 0) continue;
    const uint64_t tid = e["tid"];
    if (tid == tileprof::report::kProgramsTid) {
      const double ts = e["ts"];
      slices.push_back({ts, ts + e["dur"].get<double>()});
    }
    if (tid >= tileprof::report::kTileGroupTid) groups.insert(tid);
  }
  ASSERT_GT(slices.size(), 3u);
  // Sorted by start, longest first: each slice ends before the next that
  // starts after it ends, or contains it (a stack of open slices).
  std::sort(slices.begin(), slices.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second > b.second;
  });
  std::vector<double> ends;
  const double eps = 1e-9;
  for (const auto& [begin, end] : slices) {
    while (!ends.empty() && ends.back() <= begin + eps) ends.pop_back();
    if (!ends.empty()) {
      EXPECT_LE(end, ends.back() + eps) << "a slice crosses its parent's end";
    }
    ends.push_back(end);
  }
  EXPECT_EQ(groups.size(), 23u);
  std::filesystem::remove_all(dir);
}

TEST(ExportTraceCli, ReportsWithoutExecutionAreRefused) {
  const std::string rep = TempPath("c.rep");
  CliRun compile = Tileprof("compile " + std::string(TILEPROF_SOURCE_DIR) +
                            "/samples/adder.hlo --progress=false -o " + rep);
  ASSERT_EQ(compile.status, 0) << compile.out;
  CliRun run = Tileprof("export-trace " + rep + " -o " + TempPath("x.json"));
  EXPECT_EQ(run.status, 1);
  EXPECT_THAT(run.out, HasSubstr(rep + ": has no execution report"));
  CliRun missing = Tileprof("export-trace " + TempPath("nothing.json"));
  EXPECT_EQ(missing.status, 1);
  EXPECT_THAT(missing.out, HasSubstr("nothing.json"));
  std::filesystem::remove(rep);
}

}  // namespace
