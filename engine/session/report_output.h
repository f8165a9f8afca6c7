// Where reports go once a module is compiled (or run): the files the user
// named, the per-module report directory (../shared/spec/trace-events.md
// section 6), the tensor_map_file_path flag, the autoReport engine options,
// and the size cap of section 7. The trace events themselves are
// event_sink.h's; it uses the serialisers here for its payloads.
//
//   ReportSettings settings{.config = config, .flags = env.flags, .engine = env.engine};
//   EventSink events = *EventSink::Open(settings, {.path = "events.pb"}, &log);
//   events.CompileBegin(module_name);                // before graph construction
//   ... compile ...
//   auto written = WriteCompileOutputs(compiled, outputs, settings, events, log);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "engine/compiler/compile_log.h"
#include "engine/session/options.h"
#include "engine/session/session.h"
#include "reports/report.h"
#include "reports/report_document.h"
#include "reports/tensor_map.h"

namespace tileprof::engine {

class EventSink;

// Everything that decides where reports go.
struct ReportSettings {
  ReportConfig config;   // --config / CLI report flags
  PoplarFlags flags;     // TF_POPLAR_FLAGS (--tensor_map_file_path)
  EngineOptions engine;  // POPLAR_ENGINE_OPTIONS (autoReport.*)
  // The text report of a run lists every execution step (--show-execution-steps).
  bool text_execution_steps = true;
  // The text report has tileprof's Liveness section (--show-liveness).
  bool text_liveness = false;

  // Whether the compile step must record the tensor map: a tensor-map
  // file, --tensor_map_file_path, or compile events are asked for.
  bool NeedsTensorMap() const;
};

// The spec's INFO text for a report over max_report_size, with `what` =
// "compilation report", "execution report" or "serialized graph".
std::string OversizeReportMessage(std::string_view what, uint64_t size, uint64_t max_size);

// The report in the configured format (ReportConfig::ReportExtension): the
// text report (execution: with its execution steps, as
// printExecutionSummary(showExecutionSteps=true)), CBOR or JSON.
std::string SerializeCompilationReport(const report::CompilationReport& report,
                                       const ReportConfig& config);
std::string SerializeExecutionReport(const report::ExecutionReport& report,
                                     const ReportConfig& config);

// "<report_directory>/<module>", the module name made safe as one path
// component ('/' and NUL become '_', "." and ".." get a leading '_').
std::string ModuleReportDirectory(std::string_view report_directory, std::string_view module);

// framework.json (spec section 6): tileprof in place of TensorFlow, the
// module as "Cluster", and the host's system information; compact.
std::string FrameworkJson(std::string_view module);

// Where autoReport writes the profile database: "<autoReport.directory or
// .>/profile.db"; "" when neither output*Profile option is on.
std::string AutoReportProfilePath(const EngineOptions& engine);

// Creates the file's directory if needed, then writes it atomically.
Status WriteOutputFile(const std::string& path, std::string_view contents);

struct WrittenReports {
  std::vector<std::string> files;  // every file written, in order
  // Messages for the user (dropped oversize reports); already logged.
  std::vector<std::string> notes;
  // The profile to name in an out-of-memory message: the autoReport
  // database when written, else the text report.
  std::string profile;
};

// Writes the compile step's outputs: the files of settings.config.files, the
// tensor map by TF_POPLAR_FLAGS --tensor_map_file_path, the autoReport
// profile, and COMPILE_END through `events` (which also fills the report
// directory). Errors name the file.
Expected<WrittenReports> WriteCompileOutputs(const CompiledModule& compiled,
                                             const ReportSettings& settings, EventSink& events,
                                             CompileLog& log);

// After a run (for `tileprof run`): rewrites the report files of
// settings.config.files (text, JSON, CBOR, SQLite) with the compilation and
// the execution report, and the autoReport profile when
// autoReport.outputExecutionProfile (or .all) is on. The EXECUTE event and
// the report directory's execution file are EventSink::Execute's.
Expected<WrittenReports> WriteRunOutputs(const CompiledModule& compiled,
                                         const report::ExecutionReport& execution,
                                         const ReportSettings& settings);

}  // namespace tileprof::engine
