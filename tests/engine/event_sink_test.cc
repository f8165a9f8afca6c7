// The session's trace events (engine/session/event_sink.h) against the gates
// and payload rules of ../shared/spec/trace-events.md sections 3, 5, 6, 7.
#include "engine/session/event_sink.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "common/file.h"
#include "reports/cbor_codec.h"
#include "reports/json_codec.h"
#include "reports/sqlite_profile.h"
#include "reports/text_writer.h"

namespace tileprof::engine {
namespace {

using report::TraceEventType;

std::string TempDir(const std::string& name) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("event_sink_test_" + std::to_string(getpid()) + "_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

EventSink MustOpen(ReportConfig config, std::string path = "") {
  ReportSettings settings{.config = std::move(config)};
  Expected<EventSink> sink = EventSink::Open(
      settings, {.path = std::move(path), .keep_events = true, .ordinal = 3, .clock = [] {
                   return 1588587072.5;
                 }});
  if (!sink) {
    ADD_FAILURE() << sink.error().message();
    std::abort();
  }
  return std::move(*sink);
}

report::CompilationReport SmallReport() {
  report::CompilationReport report;
  report.target = report::MakeTarget("ipu1", 1, 4, 1024, 1.6e9);
  report.graph = report::GraphInfo{4, 5, 6, 1};
  for (uint32_t tile = 0; tile < 4; ++tile) {
    report::TileMemory memory;
    memory.tile = tile;
    report::At(memory.by_category, report::Category::kVariables) = 100 + tile;
    memory.by_region[0] = {100 + tile, 128};
    memory.always_live = 100 + tile;
    report.tiles.push_back(memory);
  }
  return report;
}

report::ExecutionReport SmallExecution() {
  report::ExecutionReport execution;
  execution.programs = {"main"};
  execution.total_cycles = 1234;
  execution.clock_hz = 1.6e9;
  execution.steps = {{"add", 100, {50, 100, 0, 0}}, {"copy", 20, {}}};
  return execution;
}

std::vector<TraceEventType> Types(const EventSink& sink) {
  std::vector<TraceEventType> types;
  for (const auto& e : sink.events()) types.push_back(e.type);
  return types;
}

TEST(EventSink, NothingWhenEventsAreOff) {
  EventSink sink = MustOpen({});
  report::CompilationReport report = SmallReport();
  report::ExecutionReport execution = SmallExecution();
  ASSERT_TRUE(sink.CompileBegin("m"));
  ASSERT_TRUE(sink.CompileEnd("m", &report, nullptr, nullptr));
  ASSERT_TRUE(sink.LoadEngine("m"));
  ASSERT_TRUE(sink.HostToDevice({{"a", 8}}));
  EXPECT_FALSE(sink.WantsExecutionReport("m"));
  ASSERT_TRUE(sink.Execute("m", &execution));
  EXPECT_TRUE(sink.events().empty());
  EXPECT_EQ(sink.ExecutionCount("m"), 1u);
}

TEST(EventSink, EventsAloneAreTimingOnly) {
  ReportConfig config;
  config.enable_ipu_events = true;
  EventSink sink = MustOpen(config);
  report::CompilationReport report = SmallReport();
  report::TensorMap map{{{"main", {{"a", 0, {2}, "float", false, false, 2, {{0, 2}}, ""}}}}};
  report::InstructionInfo info{{{"/dot", report::MlType::kInferenceFwd}}};
  ASSERT_TRUE(sink.CompileBegin("m"));
  ASSERT_TRUE(sink.CompileEnd("m", &report, &map, &info));
  // No I/O trace without profiling, no EXECUTE without profile_execution.
  ASSERT_TRUE(sink.LoadEngine("m"));
  ASSERT_TRUE(sink.HostToDevice({{"a", 8}}));
  ASSERT_TRUE(sink.Execute("m", nullptr));
  ASSERT_EQ(Types(sink), (std::vector<TraceEventType>{TraceEventType::kCompileBegin,
                                                      TraceEventType::kCompileEnd}));
  const report::TraceEvent& begin = sink.events()[0];
  EXPECT_EQ(begin.module_name, "m");
  EXPECT_EQ(begin.ordinal, 3);
  EXPECT_EQ(begin.timestamp, 1588587072.5);
  const report::TraceEvent& end = sink.events()[1];
  EXPECT_TRUE(end.compilation_report.empty());
  EXPECT_EQ(end.tensor_map, report::WriteTensorMapJson(map));
  EXPECT_EQ(end.instruction_info, R"({"ml_types":{"/dot":1}})");
  EXPECT_GE(end.duration_us, 0);
}

TEST(EventSink, CompileEndCarriesTheReportInTheConfiguredFormat) {
  report::CompilationReport report = SmallReport();
  ReportConfig config;
  config.profiling = true;
  {
    EventSink sink = MustOpen(config);
    ASSERT_TRUE(sink.CompileEnd("m", &report, nullptr, nullptr));
    Expected<report::ReportDocument> json =
        report::ReadJsonReport(sink.events()[0].compilation_report, "e");
    ASSERT_TRUE(json) << json.error().message();
    EXPECT_EQ(json->compilation, report);
    EXPECT_EQ(sink.events()[0].duration_us, 0);  // no CompileBegin
  }
  config.use_poplar_cbor_report = true;
  {
    EventSink sink = MustOpen(config);
    ASSERT_TRUE(sink.CompileEnd("m", &report, nullptr, nullptr));
    const std::string& bytes = sink.events()[0].compilation_report;
    Expected<report::ReportDocument> cbor =
        report::ReadCborReport({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "e");
    ASSERT_TRUE(cbor) << cbor.error().message();
    EXPECT_EQ(cbor->compilation, report);
  }
  config.use_poplar_text_report = true;  // text wins over CBOR, as ReportFileExtension()
  {
    EventSink sink = MustOpen(config);
    ASSERT_TRUE(sink.CompileEnd("m", &report, nullptr, nullptr));
    EXPECT_EQ(sink.events()[0].compilation_report, report::WriteTextReport(report, nullptr, {}));
  }
}

TEST(EventSink, OversizeReportIsDroppedWithTheSpecsMessage) {
  report::CompilationReport report = SmallReport();
  ReportConfig config;
  config.profiling = true;
  config.use_poplar_text_report = true;
  const size_t size = report::WriteTextReport(report, nullptr, {}).size();
  config.max_report_size = size - 1;
  EventSink sink = MustOpen(config);
  ASSERT_TRUE(sink.CompileEnd("m", &report, nullptr, nullptr));
  EXPECT_TRUE(sink.events()[0].compilation_report.empty());
  ASSERT_EQ(sink.notes().size(), 1u);
  EXPECT_EQ(sink.notes()[0],
            "Dropping a Poplar compilation report of size " + std::to_string(size) +
                " which is larger than the configured maximum report size " +
                std::to_string(size - 1) +
                ". To change the maximum report size use the max_report_size argument in "
                "ipu.utils.create_ipu_config.\nExample:\ncfg = "
                "ipu.utils.create_ipu_config(max_report_size="
                "0x100000000) Note that the max report size is in bytes.");
  // Exactly at the cap is kept.
  config.max_report_size = size;
  EventSink at_cap = MustOpen(config);
  ASSERT_TRUE(at_cap.CompileEnd("m", &report, nullptr, nullptr));
  EXPECT_EQ(at_cap.events()[0].compilation_report.size(), size);
  EXPECT_TRUE(at_cap.notes().empty());
}

TEST(EventSink, IoEventsWithProfiling) {
  ReportConfig config;
  config.profiling = true;
  EventSink sink = MustOpen(config);
  ASSERT_TRUE(sink.LoadEngine("m"));
  ASSERT_TRUE(sink.HostToDevice({{"a", 8}, {"b", 16}}));
  ASSERT_TRUE(sink.DeviceToHost({{"out.0", 8}}));
  ASSERT_EQ(Types(sink), (std::vector<TraceEventType>{TraceEventType::kLoadEngine,
                                                      TraceEventType::kHostToDeviceTransfer,
                                                      TraceEventType::kDeviceToHostTransfer}));
  EXPECT_EQ(sink.events()[0].module_name, "m");
  EXPECT_EQ(sink.events()[1].data_transfer, report::DataTransferJson({{"a", 8}, {"b", 16}}));
  EXPECT_NE(sink.events()[1].data_transfer.find("\"total_size\" : 24"), std::string::npos);
  EXPECT_EQ(sink.events()[2].data_transfer, report::DataTransferJson({{"out.0", 8}}));
}

TEST(EventSink, ExecutionReportOnTheFirstExecutionOnly) {
  ReportConfig config;
  config.profiling = true;
  config.profile_execution = ExecutionProfile::kDevice;
  EventSink sink = MustOpen(config);
  report::ExecutionReport execution = SmallExecution();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(sink.WantsExecutionReport("m"), i == 0);
    ASSERT_TRUE(sink.Execute("m", &execution));
  }
  ASSERT_EQ(sink.events().size(), 3u);
  Expected<report::ReportDocument> first =
      report::ReadJsonReport(sink.events()[0].execution_report, "e");
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_EQ(first->execution, execution);
  EXPECT_FALSE(first->compilation);
  EXPECT_TRUE(sink.events()[1].execution_report.empty());
  EXPECT_TRUE(sink.events()[2].execution_report.empty());
  // Counted per module; a module loaded from the cache gets none.
  EXPECT_TRUE(sink.WantsExecutionReport("other"));
  EXPECT_FALSE(sink.WantsExecutionReport("other", /*loaded_from_cache=*/true));
  ASSERT_TRUE(sink.Execute("other", &execution, true));
  EXPECT_TRUE(sink.events()[3].execution_report.empty());
}

TEST(EventSink, EveryNthExecution) {
  ReportConfig config;
  config.profiling = true;
  config.profile_execution = ExecutionProfile::kTile;
  config.report_every_nth_execution = 3;
  EventSink sink = MustOpen(config);
  report::ExecutionReport execution = SmallExecution();
  std::vector<bool> attached;
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(sink.Execute("m", &execution));
    attached.push_back(!sink.events().back().execution_report.empty());
  }
  EXPECT_EQ(attached, (std::vector<bool>{true, false, false, true, false, false, true}));
}

TEST(EventSink, TextExecutionReportShowsItsSteps) {
  ReportConfig config;
  config.profiling = true;
  config.use_poplar_text_report = true;
  config.profile_execution = ExecutionProfile::kDevice;
  EventSink sink = MustOpen(config);
  report::ExecutionReport execution = SmallExecution();
  ASSERT_TRUE(sink.Execute("m", &execution));
  const std::string& text = sink.events()[0].execution_report;
  EXPECT_EQ(text,
            report::WriteTextReport({}, &execution,
                                    {.format_version_line = false, .show_execution_steps = true}));
  EXPECT_NE(text.find("add"), std::string::npos);
  EXPECT_EQ(text.find("Target:"), std::string::npos);
}

TEST(EventSink, ReportDirectoryHoldsFilesAndEventsHoldPaths) {
  std::string dir = TempDir("reportdir");
  ReportConfig config;
  config.profiling = true;
  config.profile_execution = ExecutionProfile::kDevice;
  config.report_every_nth_execution = 1;
  config.report_directory = dir;
  EventSink sink = MustOpen(config);
  report::CompilationReport report = SmallReport();
  report::TensorMap map{{{"main", {}}}};
  std::vector<std::string> written;
  ASSERT_TRUE(sink.CompileEnd("cluster/1", &report, &map, nullptr, &written));
  const std::string module_dir = dir + "/cluster_1";
  EXPECT_EQ(written,
            (std::vector<std::string>{module_dir + "/graph.json", module_dir + "/tensor_map.json",
                                      module_dir + "/framework.json"}));
  EXPECT_EQ(sink.events()[0].compilation_report, module_dir + "/graph.json");
  EXPECT_EQ(sink.events()[0].tensor_map, module_dir + "/tensor_map.json");
  Expected<report::ReportDocument> graph = report::ReadJsonReportFile(module_dir + "/graph.json");
  ASSERT_TRUE(graph) << graph.error().message();
  EXPECT_EQ(graph->compilation, report);
  EXPECT_EQ(*ReadFile(module_dir + "/tensor_map.json"), R"({"mappings":{"main":[]}})");
  std::string framework = *ReadFile(module_dir + "/framework.json");
  EXPECT_NE(framework.find(R"("Cluster":"cluster/1")"), std::string::npos) << framework;
  EXPECT_NE(framework.find(R"("System Information":{"Operating system":)"), std::string::npos)
      << framework;

  // The execution file is overwritten by every profiled run.
  report::ExecutionReport execution = SmallExecution();
  ASSERT_TRUE(sink.Execute("cluster/1", &execution));
  execution.total_cycles = 999;
  ASSERT_TRUE(sink.Execute("cluster/1", &execution));
  EXPECT_EQ(sink.events()[2].execution_report, module_dir + "/execution.json");
  Expected<report::ReportDocument> last =
      report::ReadJsonReportFile(module_dir + "/execution.json");
  ASSERT_TRUE(last) << last.error().message();
  EXPECT_EQ(last->execution->total_cycles, 999u);
  std::filesystem::remove_all(dir);
}

TEST(EventSink, EventFileIsWrittenAsEventsHappen) {
  std::string dir = TempDir("file");
  std::string path = dir + "/events.pb";
  ReportConfig config;
  config.profiling = true;
  EventSink sink = MustOpen(config, path);
  report::CompilationReport report = SmallReport();
  ASSERT_TRUE(sink.CompileBegin("m"));
  // Before Close the events so far are in "<path>.partial" (a crash keeps them).
  Expected<std::string> partial = ReadFile(path + ".partial");
  ASSERT_TRUE(partial) << partial.error().message();
  Expected<report::TraceEventStream> early = report::DecodeTraceEventStream(*partial);
  ASSERT_TRUE(early);
  EXPECT_EQ(early->events.size(), 1u);
  ASSERT_TRUE(sink.CompileEnd("m", &report, nullptr, nullptr));
  ASSERT_TRUE(sink.Close());
  Expected<std::string> bytes = ReadFile(path);
  ASSERT_TRUE(bytes);
  Expected<report::TraceEventStream> stream = report::DecodeTraceEventStream(*bytes);
  ASSERT_TRUE(stream) << stream.error().message();
  EXPECT_EQ(stream->events, sink.events());
  std::filesystem::remove_all(dir);
}

TEST(EventSink, NoFileWhenEventsAreOff) {
  std::string dir = TempDir("off");
  EventSink sink = MustOpen({}, dir + "/events.pb");
  ASSERT_TRUE(sink.Close());
  EXPECT_FALSE(std::filesystem::exists(dir + "/events.pb"));
  std::filesystem::remove_all(dir);
}

TEST(ReportOutput, ModuleDirectoriesAreOnePathComponent) {
  EXPECT_EQ(ModuleReportDirectory("r", "cluster_1"), "r/cluster_1");
  EXPECT_EQ(ModuleReportDirectory("r/", "a/b"), "r/a_b");
  EXPECT_EQ(ModuleReportDirectory("r", ".."), "r/_..");
  EXPECT_EQ(ModuleReportDirectory("r", ""), "r/_");
}

TEST(ReportOutput, AutoReportProfilePath) {
  EngineOptions engine;
  EXPECT_EQ(AutoReportProfilePath(engine), "");
  engine.values["autoReport.all"] = "true";
  EXPECT_EQ(AutoReportProfilePath(engine), "./profile.db");
  engine.values["autoReport.directory"] = "./report";
  EXPECT_EQ(AutoReportProfilePath(engine), "./report/profile.db");
  engine.values["autoReport.all"] = "false";
  engine.values["autoReport.outputExecutionProfile"] = "true";
  EXPECT_EQ(AutoReportProfilePath(engine), "./report/profile.db");
}

TEST(ReportOutput, RunOutputsHoldBothReports) {
  std::string dir = TempDir("run");
  SessionOptions options;
  options.target.preset = "ipu1";
  options.progress = ProgressMode::kOff;
  CompileLog log;
  Expected<CompiledModule> compiled =
      CompileHloFile(std::string(TILEPROF_SOURCE_DIR) + "/samples/adder.hlo", options, log);
  ASSERT_TRUE(compiled) << compiled.error().message();
  ReportSettings settings;
  settings.config.files.text = dir + "/r.rep";
  settings.config.files.json = dir + "/r.json";
  settings.config.files.sqlite = dir + "/r.db";
  settings.engine.values["autoReport.outputExecutionProfile"] = "true";
  settings.engine.values["autoReport.directory"] = dir + "/auto";
  report::ExecutionReport execution = SmallExecution();
  Expected<WrittenReports> written = WriteRunOutputs(*compiled, execution, settings);
  ASSERT_TRUE(written) << written.error().message();
  EXPECT_EQ(written->files, (std::vector<std::string>{dir + "/r.rep", dir + "/r.json",
                                                      dir + "/r.db", dir + "/auto/profile.db"}));
  EXPECT_EQ(written->profile, dir + "/auto/profile.db");
  Expected<report::ReportDocument> json = report::ReadJsonReportFile(dir + "/r.json");
  ASSERT_TRUE(json) << json.error().message();
  EXPECT_EQ(json->compilation, compiled->result.report);
  EXPECT_EQ(json->execution, execution);
  Expected<report::ReportDocument> db = report::ReadProfileDatabase(dir + "/r.db");
  ASSERT_TRUE(db) << db.error().message();
  EXPECT_EQ(db->execution, execution);
  // Only the execution profile was asked of autoReport.
  Expected<report::ReportDocument> profile = report::ReadProfileDatabase(dir + "/auto/profile.db");
  ASSERT_TRUE(profile) << profile.error().message();
  EXPECT_FALSE(profile->compilation);
  EXPECT_EQ(profile->execution, execution);
  std::string text = *ReadFile(dir + "/r.rep");
  EXPECT_NE(text.find("Memory Usage:"), std::string::npos);
  EXPECT_NE(text.find("Execution"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tileprof::engine
