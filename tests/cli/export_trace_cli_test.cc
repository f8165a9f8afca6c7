// `tileprof export-trace` end to end on the sample execution report.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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
