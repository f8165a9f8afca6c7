// The session's trace events (../shared/spec/trace-events.md): one EventSink
// per session decides, from the report options, which events exist, fills
// their payloads (reports in the configured format, under the size cap, or
// as file paths when a report directory is set) and appends them to the
// event file as they happen (report::TraceEventWriter: a crash keeps the
// events so far).
//
//   EventSink events = *EventSink::Open(settings, {.path = "events.pb"}, &log);
//   events.CompileBegin("cluster_1");              // graph construction starts
//   events.CompileEnd("cluster_1", &report, &tensor_map, &info);
//   events.LoadEngine("cluster_1");
//   events.HostToDevice({{"a", 8}, {"b", 8}});
//   if (events.WantsExecutionReport("cluster_1")) report = ...;
//   events.Execute("cluster_1", &report);          // null: not profiled
//   events.DeviceToHost({{"out.0", 8}});
//   events.Close();
//
// Gates (ReportConfig): compile events with profiling or enable_ipu_events;
// HOST_TO_DEVICE/DEVICE_TO_HOST/LOAD_ENGINE also need profiling (the I/O
// trace); EXECUTE needs compile events and a profile_execution level. The
// compilation report rides in COMPILE_END only with profiling (events
// alone are "timing only"); the execution report in EXECUTE on the first
// execution of a module not loaded from the cache, or every N-th with
// report_every_nth_execution = N. The caller keeps the spec's "no compile
// events" rules that depend on what it did: no CompileBegin/CompileEnd for a
// module loaded from the executable cache.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "engine/compiler/compile_log.h"
#include "engine/session/report_output.h"
#include "reports/report.h"
#include "reports/tensor_map.h"
#include "reports/trace_events.h"

namespace tileprof::engine {

struct EventSinkOptions {
  std::string path;          // event file; "" = no file
  bool keep_events = false;  // also keep copies (events()): tests, drains
  int32_t ordinal = 0;       // the device ordinal events carry
  // Seconds since the epoch for timestamps; the system clock when unset.
  std::function<double()> clock;
};

class EventSink {
 public:
  // Opens the event file when events are on and a path is given. A sink
  // with events off accepts every call and records nothing.
  static Expected<EventSink> Open(ReportSettings settings, EventSinkOptions options,
                                  CompileLog* log = nullptr);
  EventSink(EventSink&&) noexcept = default;
  EventSink& operator=(EventSink&&) = delete;

  bool CompileEventsOn() const { return settings_.config.CompileEvents(); }
  bool IoEventsOn() const { return CompileEventsOn() && settings_.config.IoEvents(); }
  bool ExecuteEventsOn() const { return settings_.config.ExecuteEvents(); }

  Status CompileBegin(std::string_view module);
  // Duration: since CompileBegin of the module (0 without one). Null
  // payloads are left out. With a report directory the report, tensor map
  // and framework.json go to files there and the event holds their paths.
  // Files written are appended to `written` when given. The serialised
  // graph (enable_poplar_serialized_graph) is tileprof's executable format
  // (engine/exec), not Poplar's Cap'n Proto: "serialized_graph.poplar_exec".
  Status CompileEnd(std::string_view module, const report::CompilationReport* report,
                    const report::TensorMap* tensor_map, const report::InstructionInfo* info,
                    std::vector<std::string>* written = nullptr,
                    const std::string* serialized_graph = nullptr);
  Status HostToDevice(const std::vector<report::TransferredTensor>& tensors);
  Status DeviceToHost(const std::vector<report::TransferredTensor>& tensors);
  Status LoadEngine(std::string_view module);
  // Whether the next Execute of `module` will carry an execution report, so
  // the caller builds one only then.
  bool WantsExecutionReport(std::string_view module, bool loaded_from_cache = false) const;
  // Counts the execution; the report is attached when WantsExecutionReport
  // said so (a null report then leaves the field empty).
  Status Execute(std::string_view module, const report::ExecutionReport* report,
                 bool loaded_from_cache = false);

  // Executions counted per module.
  uint64_t ExecutionCount(std::string_view module) const;
  // Messages about dropped reports, in order (also logged).
  const std::vector<std::string>& notes() const { return notes_; }
  const std::vector<report::TraceEvent>& events() const { return kept_; }
  Status Close();

 private:
  EventSink(ReportSettings settings, EventSinkOptions options, CompileLog* log)
      : settings_(std::move(settings)), options_(std::move(options)), log_(log) {}
  report::TraceEvent NewEvent(report::TraceEventType type) const;
  Status Emit(report::TraceEvent event);
  // The payload under the cap (or "" and a note), or its file path when a
  // report directory is set.
  Expected<std::string> Payload(std::string_view module, std::string_view what,
                                std::string_view file_name, std::string bytes, bool capped,
                                std::vector<std::string>* written);

  ReportSettings settings_;
  EventSinkOptions options_;
  CompileLog* log_ = nullptr;
  std::optional<report::TraceEventWriter> writer_;
  std::map<std::string, std::chrono::steady_clock::time_point, std::less<>> compile_start_;
  std::map<std::string, uint64_t, std::less<>> executions_;
  std::vector<std::string> notes_;
  std::vector<report::TraceEvent> kept_;
};

}  // namespace tileprof::engine
