// Chrome trace export of execution steps (reports/chrome_trace.h), checked
// as a trace viewer reads it: valid JSON, a traceEvents array of complete
// ("X") and metadata ("M") events with the fields the Trace Event Format
// requires, steps back to back, tiles inside their step, pid = IPU.
// Also: reading a report file of any format (reports/report_file.h).
#include "reports/chrome_trace.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "common/file.h"
#include "reports/cbor_codec.h"
#include "reports/json_codec.h"
#include "reports/report_file.h"
#include "reports/sqlite_profile.h"
#include "reports/text_writer.h"
#include "tests/reports/codec_fixtures.h"

namespace tileprof::report {
namespace {

using Json = nlohmann::json;

ExecutionReport TwoIpuExecution() {
  ExecutionReport execution;
  execution.programs = {"main"};
  execution.clock_hz = 1.33e9;
  execution.total_cycles = 3325;
  execution.steps = {
      {"copy \"a\"", 665, {665, 0, 0, 0}}, {"add", 1330, {1330, 1000, 0, 5}}, {"sync", 1330, {}}};
  return execution;
}

Json Parse(const std::string& text) {
  Json json = Json::parse(text, nullptr, false);
  EXPECT_FALSE(json.is_discarded()) << text.substr(0, 200);
  return json;
}

// The structural rules of the Trace Event Format for the events we write.
void ExpectWellFormed(const Json& trace) {
  ASSERT_TRUE(trace.is_object());
  ASSERT_TRUE(trace["traceEvents"].is_array());
  for (const Json& e : trace["traceEvents"]) {
    ASSERT_TRUE(e["ph"].is_string()) << e;
    ASSERT_TRUE(e["name"].is_string()) << e;
    ASSERT_TRUE(e["pid"].is_number_unsigned()) << e;
    ASSERT_TRUE(e["tid"].is_number_unsigned()) << e;
    if (e["ph"] == "X") {
      ASSERT_TRUE(e["ts"].is_number()) << e;
      ASSERT_TRUE(e["dur"].is_number()) << e;
      EXPECT_GE(e["ts"].get<double>(), 0.0);
      EXPECT_GE(e["dur"].get<double>(), 0.0);
    } else {
      ASSERT_EQ(e["ph"], "M") << e;
      ASSERT_TRUE(e["args"].is_object()) << e;
    }
  }
}

TEST(ChromeTrace, StepsAndTilesPerIpu) {
  Json trace = Parse(WriteChromeTrace(TwoIpuExecution(), {.tiles_per_ipu = 2, .num_ipus = 2}));
  ExpectWellFormed(trace);
  std::map<std::pair<uint64_t, uint64_t>, std::string> thread_names;
  std::map<uint64_t, std::string> process_names;
  std::vector<Json> steps_ipu0, tiles;
  for (const Json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name")
      thread_names[{e["pid"], e["tid"]}] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "process_name") process_names[e["pid"]] = e["args"]["name"];
    if (e["ph"] == "X" && e["tid"] == 0 && e["pid"] == 0) steps_ipu0.push_back(e);
    if (e["ph"] == "X" && e["tid"] != 0) tiles.push_back(e);
  }
  EXPECT_EQ(process_names, (std::map<uint64_t, std::string>{{0, "IPU 0"}, {1, "IPU 1"}}));
  // Tiles with cycles only: 0, 1 (IPU 0) and 3 (IPU 1); tile 2 never works.
  EXPECT_EQ(thread_names,
            (std::map<std::pair<uint64_t, uint64_t>, std::string>{{{0, 0}, "steps"},
                                                                  {{1, 0}, "steps"},
                                                                  {{0, 1}, "tile 0"},
                                                                  {{0, 2}, "tile 1"},
                                                                  {{1, 4}, "tile 3"}}));
  // Steps back to back at 1.33 GHz: 665 cycles = 0.5 us.
  ASSERT_EQ(steps_ipu0.size(), 3u);
  EXPECT_EQ(steps_ipu0[0]["name"], "copy \"a\"");
  EXPECT_DOUBLE_EQ(steps_ipu0[0]["ts"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(steps_ipu0[0]["dur"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(steps_ipu0[1]["ts"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(steps_ipu0[1]["dur"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(steps_ipu0[2]["ts"].get<double>(), 1.5);
  EXPECT_EQ(steps_ipu0[2]["args"]["cycles"], 1330);
  // Tile events: inside their step, on their IPU, zero-cycle tiles left out.
  ASSERT_EQ(tiles.size(), 4u);
  for (const Json& t : tiles) {
    const Json& step = steps_ipu0[t["args"]["step"].get<size_t>()];
    EXPECT_DOUBLE_EQ(t["ts"].get<double>(), step["ts"].get<double>());
    EXPECT_LE(t["dur"].get<double>(), step["dur"].get<double>());
    EXPECT_EQ(t["pid"].get<uint64_t>(), (t["tid"].get<uint64_t>() - 1) / 2);
  }
  EXPECT_EQ(tiles[3]["tid"], 4);
  EXPECT_EQ(tiles[3]["args"]["cycles"], 5);
}

TEST(ChromeTrace, WithoutClockOrTilesStepsOnly) {
  ExecutionReport execution = TwoIpuExecution();
  execution.clock_hz = 0;
  for (ExecutionStep& step : execution.steps) step.cycles_by_tile.clear();
  Json trace = Parse(WriteChromeTrace(execution, {}));
  ExpectWellFormed(trace);
  EXPECT_EQ(trace["otherData"]["time_unit"], "cycles (no clock in the report)");
  size_t complete = 0;
  for (const Json& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++complete;
    EXPECT_EQ(e["pid"], 0);
    EXPECT_EQ(e["tid"], 0);
  }
  EXPECT_EQ(complete, 3u);
  Json empty = Parse(WriteChromeTrace(ExecutionReport{}, {}));
  ExpectWellFormed(empty);
}

// The program tree as nested slices on the programs row: a loop's
// iterations are one slice of the loop, each step a slice of its own node,
// every slice inside its parent's.
TEST(ChromeTrace, ProgramsNestTheirSteps) {
  const std::vector<Program> programs = {{"main", "Sequence", {1, 2}, std::nullopt},
                                         {"copy", "Copy", {}, std::nullopt},
                                         {"loop", "Repeat", {3}, std::nullopt},
                                         {"body", "Sequence", {4, 5}, std::nullopt},
                                         {"add", "Execute", {}, 0},
                                         {"sync", "Sync", {}, std::nullopt}};
  ExecutionReport execution;
  execution.clock_hz = 1e6;  // one cycle, one microsecond
  execution.steps = {{"copy", 10, {}}, {"add", 5, {}},  {"sync", 1, {}},
                     {"add", 5, {}},   {"sync", 1, {}}, {"unknown", 2, {}}};
  Json trace = Parse(WriteChromeTrace(execution, {.programs = &programs}));
  ExpectWellFormed(trace);
  std::map<std::string, std::vector<std::pair<double, double>>> slices;  // name -> [ts, end)
  for (const Json& e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e["tid"] != kProgramsTid) continue;
    EXPECT_EQ(e["cat"], "program");
    const double ts = e["ts"].get<double>();
    slices[e["name"]].push_back({ts, ts + e["dur"].get<double>()});
  }
  using Spans = std::vector<std::pair<double, double>>;
  EXPECT_EQ(slices["copy"], (Spans{{0, 10}}));
  EXPECT_EQ(slices["add"], (Spans{{10, 15}, {16, 21}}));
  EXPECT_EQ(slices["sync"], (Spans{{15, 16}, {21, 22}}));
  EXPECT_EQ(slices["body"], (Spans{{10, 22}}));  // both iterations, one slice
  EXPECT_EQ(slices["loop"], (Spans{{10, 22}}));
  EXPECT_EQ(slices["main"], (Spans{{0, 22}}));  // closed by the step of no program
  EXPECT_FALSE(slices.count("unknown"));
}

// With more tiles per IPU than a group, each group of tiles gets a row of
// its busiest tile's cycles.
TEST(ChromeTrace, TileGroupsShowTheirBusiestTile) {
  ExecutionReport execution;
  execution.clock_hz = 1e6;
  execution.steps = {{"add", 10, {1, 2, 0, 4, 0, 0, 7, 0}}};
  Json trace =
      Parse(WriteChromeTrace(execution, {.tiles_per_ipu = 4, .num_ipus = 2, .tile_group = 2}));
  ExpectWellFormed(trace);
  std::map<std::pair<uint64_t, uint64_t>, std::string> names;
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> cycles;
  for (const Json& e : trace["traceEvents"]) {
    if (e["tid"].get<uint64_t>() < kTileGroupTid) continue;
    if (e["ph"] == "M" && e["name"] == "thread_name")
      names[{e["pid"], e["tid"]}] = e["args"]["name"];
    if (e["ph"] == "X") cycles[{e["pid"], e["tid"]}] = e["args"]["cycles"];
  }
  using Key = std::pair<uint64_t, uint64_t>;
  EXPECT_EQ(names, (std::map<Key, std::string>{{{0, kTileGroupTid}, "tiles 0-1"},
                                               {{0, kTileGroupTid + 1}, "tiles 2-3"},
                                               {{1, kTileGroupTid + 1}, "tiles 6-7"}}));
  EXPECT_EQ(cycles, (std::map<Key, uint64_t>{{{0, kTileGroupTid}, 2},
                                             {{0, kTileGroupTid + 1}, 4},
                                             {{1, kTileGroupTid + 1}, 7}}));
}

TEST(ChromeTrace, InvalidUtf8StepNamesStayValidJson) {
  ExecutionReport execution;
  execution.steps = {{"bad \xff name", 1, {}}};
  ExpectWellFormed(Parse(WriteChromeTrace(execution, {})));
}

TEST(ReportFile, ReadsEveryFormatByItsFirstBytes) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("report_file_test_" + std::to_string(getpid())))
          .string();
  std::filesystem::create_directories(dir);
  ReportDocument document = testing::FullDocument();
  ASSERT_TRUE(WriteJsonReportFile(dir + "/r.anything", document));
  ASSERT_TRUE(WriteCborReportFile(dir + "/r.json", document));  // names do not matter
  ASSERT_TRUE(WriteProfileDatabase(dir + "/r.db", document));
  for (const char* name : {"/r.anything", "/r.json", "/r.db"}) {
    Expected<ReportDocument> read = ReadReportFile(dir + name);
    ASSERT_TRUE(read) << name << ": " << read.error().message();
    EXPECT_EQ(read->execution, document.execution) << name;
  }
  ExecutionReport execution = testing::SmallExecution();
  ASSERT_TRUE(WriteFileAtomic(
      dir + "/r.rep",
      WriteTextReport(testing::SmallCompilation(), &execution, {.show_execution_steps = true})));
  Expected<ReportDocument> text = ReadReportFile(dir + "/r.rep");
  ASSERT_TRUE(text) << text.error().message();
  ASSERT_TRUE(text->execution);
  EXPECT_EQ(text->execution->total_cycles, execution.total_cycles);
  Expected<ReportDocument> missing = ReadReportFile(dir + "/none");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("none"), std::string::npos);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(SniffReportFormat("  \n{"), ReportFormat::kJson);
  EXPECT_EQ(SniffReportFormat("\xbf"), ReportFormat::kCbor);
  EXPECT_EQ(SniffReportFormat("Target:"), ReportFormat::kText);
  EXPECT_EQ(SniffReportFormat(""), ReportFormat::kText);
}

}  // namespace
}  // namespace tileprof::report
