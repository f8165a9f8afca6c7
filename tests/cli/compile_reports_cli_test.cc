// `tileprof compile` report options end to end: --config and flags, the
// report formats, tensor maps (--tensor-map, TF_POPLAR_FLAGS
// --tensor_map_file_path), trace events read back by `tileprof events`, the
// report directory, the size cap and autoReport.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli_run.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using tileprof::cli_test::CliRun;
using tileprof::cli_test::Tileprof;

namespace fs = std::filesystem;

class CompileReportsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tileprof_compile_reports_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // Runs with an environment prefix ("VAR='value' ...") from the temp dir.
  CliRun Run(const std::string& env, const std::string& args) const {
    std::string command =
        "cd " + dir_.string() + " && " + env + " " + TILEPROF_CLI + " " + args + " 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    CliRun run;
    if (!pipe) return run;
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) run.out.append(buffer, n);
    int status = pclose(pipe);
    run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return run;
  }

  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  fs::path dir_;
};

const std::string kAdder = std::string(TILEPROF_SOURCE_DIR) + "/samples/adder.hlo";

// Every tensor is the 9-element array of spec tensor-map.md 1.2.
void ExpectTensorMapLayout(const std::string& text) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << text;
  ASSERT_TRUE(json["mappings"].is_object());
  ASSERT_TRUE(json["mappings"].contains("main"));
  std::vector<std::string> names;
  for (const auto& tensor : json["mappings"]["main"]) {
    ASSERT_EQ(tensor.size(), 9u);
    names.push_back(tensor[0]);
    uint64_t sum = 0;
    for (const auto& pair : tensor[7]) sum += pair[1].get<uint64_t>();
    EXPECT_EQ(sum, tensor[6].get<uint64_t>());
    EXPECT_EQ(tensor[3], "float");
  }
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "o1", "o2", "out"}));
  EXPECT_EQ(text.find(' '), std::string::npos) << "compact";
}

TEST_F(CompileReportsCli, ConfigFileEventsAndReportDirectory) {
  std::ofstream(Path("cfg.json")) << R"({"profiling": true, "use_poplar_text_report": true,
      "report_directory": "reports", "events": "events.pb", "tensor_map": "map.json"})";
  CliRun run = Run("", "compile " + kAdder + " --target ipu1 --progress=false --config cfg.json");
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("Wrote:    reports/adder/graph.txt"));
  const std::string report = Read(Path("Trace_Event_Report.rep"));
  EXPECT_THAT(report, HasSubstr("Memory Usage:"));
  EXPECT_EQ(Read(Path("reports/adder/graph.txt")), report);
  ExpectTensorMapLayout(Read(Path("map.json")));
  EXPECT_EQ(Read(Path("reports/adder/tensor_map.json")), Read(Path("map.json")));
  EXPECT_TRUE(fs::exists(Path("reports/adder/framework.json")));

  CliRun events = Run("", "events events.pb");
  ASSERT_EQ(events.status, 0) << events.out;
  EXPECT_THAT(events.out, HasSubstr(": Compile begin: adder\n"));
  EXPECT_THAT(events.out, HasSubstr(": Compile end: adder\nDuration: "));
  // With a report directory the events hold the paths.
  CliRun reports = Run("", "events events.pb --compile-reports");
  EXPECT_EQ(reports.out, "==> adder <==\nreports/adder/graph.txt\n");
  CliRun json = Run("", "events events.pb --format json");
  nlohmann::json parsed = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << json.out;
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[1]["instruction_info"], R"({"ml_types":{}})");
  EXPECT_EQ(parsed[1]["tensor_map"], "reports/adder/tensor_map.json");
}

TEST_F(CompileReportsCli, SerializedGraphIsTheExecutableFormat) {
  CliRun run = Run("", "compile " + kAdder +
                           " --target ipu1 --progress=false --events e.pb "
                           "--report-directory reports --enable-poplar-serialized-graph");
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("Wrote:    reports/adder/serialized_graph.poplar_exec"));
  const std::string graph = Read(Path("reports/adder/serialized_graph.poplar_exec"));
  EXPECT_EQ(graph.substr(0, 8), std::string("TPEXE\r\n\x1a", 8));
  // Off by default: "typically very large".
  CliRun plain = Run("", "compile " + kAdder +
                             " --target ipu1 --progress=false --events f.pb "
                             "--report-directory plain");
  ASSERT_EQ(plain.status, 0) << plain.out;
  EXPECT_FALSE(fs::exists(Path("plain/adder/serialized_graph.poplar_exec")));
}

TEST_F(CompileReportsCli, EventsCarryTheReportWithoutADirectory) {
  CliRun run = Run("", "compile " + kAdder +
                           " --target ipu1 --progress=false --profiling --use-poplar-text-report "
                           "--events events.pb");
  ASSERT_EQ(run.status, 0) << run.out;
  CliRun reports = Run("", "events events.pb --compile-reports");
  EXPECT_EQ(reports.out, "==> adder <==\n" + Read(Path("Trace_Event_Report.rep")));
  CliRun maps = Run("", "events events.pb --tensor-maps");
  ASSERT_THAT(maps.out, HasSubstr("==> adder <==\n"));
  ExpectTensorMapLayout(
      maps.out.substr(maps.out.find('\n') + 1, maps.out.size() - maps.out.find('\n') - 2));
  // --events alone is enable_ipu_events: timing only, no report.
  CliRun timing =
      Run("", "compile " + kAdder + " --target ipu1 --progress=false --events t.pb -o t.rep");
  ASSERT_EQ(timing.status, 0) << timing.out;
  EXPECT_EQ(Run("", "events t.pb --compile-reports").out, "");
  EXPECT_THAT(Run("", "events t.pb --tensor-maps").out, HasSubstr("==> adder <==\n{\"mappings\""));
}

TEST_F(CompileReportsCli, OversizeReportIsDropped) {
  CliRun run = Run("", "compile " + kAdder +
                           " --target ipu1 --progress=false --profiling --events e.pb "
                           "--max-report-size 0x100");
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_THAT(
      run.out,
      HasSubstr("which is larger than the configured maximum report size 256. To change the "
                "maximum report size use the max_report_size argument in "
                "ipu.utils.create_ipu_config.\nExample:\ncfg = "
                "ipu.utils.create_ipu_config(max_report_size=0x100000000) Note that the max "
                "report size is in bytes."));
  EXPECT_THAT(run.out, HasSubstr("  Note:     Dropping a Poplar compilation report of size "));
  EXPECT_EQ(Run("", "events e.pb --compile-reports").out, "");
  // The tensor map is not a report: it is kept.
  EXPECT_THAT(Run("", "events e.pb --tensor-maps").out, HasSubstr("{\"mappings\""));
}

TEST_F(CompileReportsCli, TensorMapFilePathFlag) {
  CliRun run = Run("TF_POPLAR_FLAGS='--tensor_map_file_path=maps'",
                   "compile " + kAdder + " --progress=false");
  ASSERT_EQ(run.status, 0) << run.out;
  ExpectTensorMapLayout(Read(Path("maps/adder.tensor_map.json")));
}

TEST_F(CompileReportsCli, EveryFormat) {
  CliRun run = Run("", "compile " + kAdder +
                           " --progress=false -o r.rep --json-report r.json --cbor-report r.cbor "
                           "--profile-db r.db");
  ASSERT_EQ(run.status, 0) << run.out;
  nlohmann::json json = nlohmann::json::parse(Read(Path("r.json")), nullptr, false);
  ASSERT_FALSE(json.is_discarded());
  EXPECT_EQ(json["format"], "tileprof-report");
  EXPECT_EQ(json["compilation"]["tiles"].size(), 1472u);
  const std::string cbor = Read(Path("r.cbor"));
  ASSERT_GE(cbor.size(), 3u);
  EXPECT_EQ(cbor.substr(0, 3), "\xd9\xd9\xf7");
  EXPECT_EQ(Read(Path("r.db")).substr(0, 16), std::string("SQLite format 3\0", 16));
}

TEST_F(CompileReportsCli, AutoReportWritesTheProfileDatabase) {
  const std::string oom = std::string(TILEPROF_SOURCE_DIR) + "/samples/oom/model.hlo";
  CliRun run = Run(
      R"(POPLAR_ENGINE_OPTIONS='{"autoReport.all":"true","autoReport.directory":"./report_OOM"}')",
      "compile " + oom + " --target ipu1 --progress=false");
  EXPECT_EQ(run.status, 1) << run.out;
  EXPECT_THAT(
      run.out,
      HasSubstr("Out of memory: Cannot fit all variable data onto one or more tiles. Profile "
                "saved to: ./report_OOM/profile.db"));
  EXPECT_EQ(Read(Path("report_OOM/profile.db")).substr(0, 15), "SQLite format 3");
}

TEST_F(CompileReportsCli, BadOptionsNameThemselves) {
  std::ofstream(Path("bad.json")) << R"({"profilling": true})";
  CliRun bad = Run("", "compile " + kAdder + " --config bad.json");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_THAT(bad.out,
              HasSubstr("bad.json: unknown option 'profilling'; valid options: profiling,"));
  CliRun size = Run("", "compile " + kAdder + " --max-report-size 12kB");
  EXPECT_EQ(size.status, 2) << size.out;
  EXPECT_THAT(size.out, HasSubstr("--max-report-size: '12kB' is not a byte count"));
  CliRun missing = Run("", "compile " + kAdder + " --config nowhere.json");
  EXPECT_EQ(missing.status, 2) << missing.out;
  EXPECT_THAT(missing.out, HasSubstr("nowhere.json"));
  EXPECT_FALSE(fs::exists(Path("Trace_Event_Report.rep")));
}

}  // namespace
