#include "engine/session/event_sink.h"

#include <fmt/format.h>

namespace tileprof::engine {
namespace {

double SystemSeconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

Expected<EventSink> EventSink::Open(ReportSettings settings, EventSinkOptions options,
                                    CompileLog* log) {
  EventSink sink(std::move(settings), std::move(options), log);
  if (sink.CompileEventsOn() && !sink.options_.path.empty()) {
    TILEPROF_ASSIGN_OR_RETURN(report::TraceEventWriter writer,
                              report::TraceEventWriter::Open(sink.options_.path));
    sink.writer_.emplace(std::move(writer));
  }
  return sink;
}

report::TraceEvent EventSink::NewEvent(report::TraceEventType type) const {
  report::TraceEvent event;
  event.timestamp = options_.clock ? options_.clock() : SystemSeconds();
  event.ordinal = options_.ordinal;
  event.type = type;
  return event;
}

Status EventSink::Emit(report::TraceEvent event) {
  if (writer_) TILEPROF_RETURN_IF_ERROR(writer_->Append(event));
  if (options_.keep_events) kept_.push_back(std::move(event));
  return {};
}

Expected<std::string> EventSink::Payload(std::string_view module, std::string_view what,
                                         std::string_view file_name, std::string bytes, bool capped,
                                         std::vector<std::string>* written) {
  const uint64_t max = settings_.config.max_report_size;
  if (capped && bytes.size() > max) {
    // The original logs this at INFO; a dropped report is worth a warning.
    std::string note = OversizeReportMessage(what, bytes.size(), max);
    if (log_ != nullptr) log_->Warning("poplar_compiler.cc", note);
    notes_.push_back(std::move(note));
    return std::string();
  }
  if (settings_.config.report_directory.empty()) return bytes;
  std::string path = ModuleReportDirectory(settings_.config.report_directory, module) + "/" +
                     std::string(file_name);
  TILEPROF_RETURN_IF_ERROR(WriteOutputFile(path, bytes));
  if (written != nullptr) written->push_back(path);
  return path;
}

Status EventSink::CompileBegin(std::string_view module) {
  compile_start_.insert_or_assign(std::string(module), std::chrono::steady_clock::now());
  if (!CompileEventsOn()) return {};
  report::TraceEvent event = NewEvent(report::TraceEventType::kCompileBegin);
  event.module_name = std::string(module);
  return Emit(std::move(event));
}

Status EventSink::CompileEnd(std::string_view module, const report::CompilationReport* report,
                             const report::TensorMap* tensor_map,
                             const report::InstructionInfo* info, std::vector<std::string>* written,
                             const std::string* serialized_graph) {
  if (!CompileEventsOn()) return {};
  const ReportConfig& config = settings_.config;
  report::TraceEvent event = NewEvent(report::TraceEventType::kCompileEnd);
  event.module_name = std::string(module);
  const std::string ext(config.ReportExtension());
  if (report != nullptr && config.profiling) {
    TILEPROF_ASSIGN_OR_RETURN(event.compilation_report,
                              Payload(module, "compilation report", "graph." + ext,
                                      SerializeCompilationReport(*report, config), true, written));
  }
  if (tensor_map != nullptr) {
    TILEPROF_ASSIGN_OR_RETURN(event.tensor_map,
                              Payload(module, "tensor map", "tensor_map.json",
                                      report::WriteTensorMapJson(*tensor_map), false, written));
  }
  if (info != nullptr) event.instruction_info = report::WriteInstructionInfoJson(*info);
  if (serialized_graph != nullptr && config.enable_poplar_serialized_graph) {
    TILEPROF_ASSIGN_OR_RETURN(event.poplar_graph,
                              Payload(module, "serialized graph", "serialized_graph.poplar_exec",
                                      *serialized_graph, true, written));
  }
  if (!config.report_directory.empty()) {
    std::string path = ModuleReportDirectory(config.report_directory, module) + "/framework.json";
    TILEPROF_RETURN_IF_ERROR(WriteOutputFile(path, FrameworkJson(module)));
    if (written != nullptr) written->push_back(path);
  }
  // After the report is serialised: the original's duration includes that.
  auto start = compile_start_.find(module);
  if (start != compile_start_.end()) {
    event.duration_us = std::chrono::duration_cast<std::chrono::microseconds>(
                            std::chrono::steady_clock::now() - start->second)
                            .count();
    compile_start_.erase(start);
  }
  return Emit(std::move(event));
}

Status EventSink::HostToDevice(const std::vector<report::TransferredTensor>& tensors) {
  if (!IoEventsOn()) return {};
  report::TraceEvent event = NewEvent(report::TraceEventType::kHostToDeviceTransfer);
  event.data_transfer = report::DataTransferJson(tensors);
  return Emit(std::move(event));
}

Status EventSink::DeviceToHost(const std::vector<report::TransferredTensor>& tensors) {
  if (!IoEventsOn()) return {};
  report::TraceEvent event = NewEvent(report::TraceEventType::kDeviceToHostTransfer);
  event.data_transfer = report::DataTransferJson(tensors);
  return Emit(std::move(event));
}

Status EventSink::LoadEngine(std::string_view module) {
  if (!IoEventsOn()) return {};
  report::TraceEvent event = NewEvent(report::TraceEventType::kLoadEngine);
  event.module_name = std::string(module);
  return Emit(std::move(event));
}

uint64_t EventSink::ExecutionCount(std::string_view module) const {
  auto it = executions_.find(module);
  return it == executions_.end() ? 0 : it->second;
}

bool EventSink::WantsExecutionReport(std::string_view module, bool loaded_from_cache) const {
  if (!ExecuteEventsOn() || !settings_.config.profiling || loaded_from_cache) return false;
  const uint64_t count = ExecutionCount(module);
  const int64_t every = settings_.config.report_every_nth_execution;
  return every <= 0 ? count == 0 : count % static_cast<uint64_t>(every) == 0;
}

Status EventSink::Execute(std::string_view module, const report::ExecutionReport* report,
                          bool loaded_from_cache) {
  const bool attach = WantsExecutionReport(module, loaded_from_cache);
  auto [it, inserted] = executions_.try_emplace(std::string(module), 0);
  ++it->second;
  if (!ExecuteEventsOn()) return {};
  report::TraceEvent event = NewEvent(report::TraceEventType::kExecute);
  event.module_name = std::string(module);
  if (attach && report != nullptr) {
    // In the report directory the file is overwritten by every profiled run
    // (spec section 6); the events keep every one.
    const std::string ext(settings_.config.ReportExtension());
    TILEPROF_ASSIGN_OR_RETURN(
        event.execution_report,
        Payload(module, "execution report", "execution." + ext,
                SerializeExecutionReport(*report, settings_.config), true, nullptr));
  }
  return Emit(std::move(event));
}

Status EventSink::Close() {
  if (!writer_) return {};
  Status closed = writer_->Close();
  writer_.reset();
  return closed;
}

}  // namespace tileprof::engine
