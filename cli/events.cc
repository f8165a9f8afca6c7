// `tileprof events FILE`: a trace-event file as extract_all_strings_from_event_trace
// prints it, or just the compile reports, execute reports or tensor maps.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "common/file.h"
#include "reports/trace_events.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::string file;
  bool compile_reports = false;
  bool execute_reports = false;
  bool tensor_maps = false;
  std::string format = "text";
};

nlohmann::ordered_json EventJson(const report::TraceEvent& e) {
  nlohmann::ordered_json json = {{"timestamp", e.timestamp},
                                 {"ordinal", e.ordinal},
                                 {"type", report::TraceEventTypeName(e.type)}};
  auto add = [&json](const char* key, const std::string& value) {
    if (!value.empty()) json[key] = value;
  };
  add("module_name", e.module_name);
  if (e.type == report::TraceEventType::kCompileEnd) json["duration_us"] = e.duration_us;
  add("compilation_report", e.compilation_report);
  add("tensor_map", e.tensor_map);
  add("instruction_info", e.instruction_info);
  add("poplar_graph", e.poplar_graph);
  add("execution_report", e.execution_report);
  add("activity_trace", e.activity_trace);
  add("data_transfer", e.data_transfer);
  return json;
}

// The (module, payload) pairs extract_compile_reports and friends return.
std::vector<std::pair<std::string, std::string>> Extract(
    const std::vector<report::TraceEvent>& events, const Options& options) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const report::TraceEvent& e : events) {
    if (options.compile_reports && e.type == report::TraceEventType::kCompileEnd &&
        !e.compilation_report.empty())
      out.emplace_back(e.module_name, e.compilation_report);
    if (options.tensor_maps && e.type == report::TraceEventType::kCompileEnd &&
        !e.tensor_map.empty())
      out.emplace_back(e.module_name, e.tensor_map);
    if (options.execute_reports && e.type == report::TraceEventType::kExecute &&
        !e.execution_report.empty())
      out.emplace_back(e.module_name, e.execution_report);
  }
  return out;
}

int Run(const Options& options) {
  auto bytes = ReadFile(options.file);
  if (!bytes) {
    PrintDiagnostic("events", bytes.error().message());
    return kExitError;
  }
  auto stream = report::DecodeTraceEventStream(*bytes);
  if (!stream) {
    PrintDiagnostic("events", options.file + ": " + stream.error().message());
    return kExitError;
  }
  bool extract = options.compile_reports || options.execute_reports || options.tensor_maps;
  if (options.format == "json") {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    if (extract) {
      for (const auto& [module, payload] : Extract(stream->events, options))
        all.push_back({{"module_name", module}, {"payload", payload}});
    } else {
      for (const report::TraceEvent& e : stream->events) all.push_back(EventJson(e));
    }
    std::cout << all.dump(2) << '\n';
  } else if (extract) {
    for (const auto& [module, payload] : Extract(stream->events, options)) {
      std::cout << "==> " << module << " <==\n" << payload;
      if (!payload.ends_with('\n')) std::cout << '\n';
    }
  } else {
    std::cout << report::EventsToText(stream->events);
  }
  if (!stream->truncated.empty()) {
    // The events before a crash are worth showing; the status still says
    // the file is incomplete.
    PrintDiagnostic("events", options.file + ": " + stream->truncated);
    return kExitError;
  }
  return kExitOk;
}

RunFn Setup(CLI::App& cmd) {
  auto options = std::make_shared<Options>();
  cmd.footer(
      "FILE is a stream of length-delimited tensorflow.IpuTraceEvent messages (field numbers\n"
      "of the full-report era), as protobuf's writeDelimitedTo writes them. Without a\n"
      "selection it prints every event the way extract_all_strings_from_event_trace does\n"
      "(the Trace_Event_Report.rep layout). A file cut short by a crash prints the events\n"
      "before the cut and exits 1.");
  cmd.add_option("FILE", options->file, "Trace-event file")->required();
  cmd.add_flag("--compile-reports", options->compile_reports,
               "Only the compilation reports of COMPILE_END events");
  cmd.add_flag("--execute-reports", options->execute_reports,
               "Only the execution reports of EXECUTE events");
  cmd.add_flag("--tensor-maps", options->tensor_maps, "Only the tensor maps of COMPILE_END events");
  cmd.add_option("--format", options->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  return [options] { return Run(*options); };
}

const Registration kEvents{
    "events", "Print the trace events of a file, or extract their reports and tensor maps", Setup};

}  // namespace
}  // namespace tileprof::cli
