#include "engine/session/report_output.h"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/file.h"
#include "engine/exec/executable.h"
#include "engine/session/event_sink.h"
#include "engine/session/instruction_info.h"
#include "reports/cbor_codec.h"
#include "reports/json_codec.h"
#include "reports/sqlite_profile.h"
#include "reports/text_writer.h"
#include "version.h"

namespace tileprof::engine {
namespace {

// "2.60" from /proc/cpuinfo's first "cpu MHz"; "" when unknown.
std::string NominalGhz() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (!line.starts_with("cpu MHz")) continue;
    auto colon = line.find(':');
    if (colon == std::string::npos) break;
    try {
      return fmt::format("{:.2f}", std::stod(line.substr(colon + 1)) / 1000.0);
    } catch (...) {
      break;
    }
  }
  return "";
}

}  // namespace

bool ReportSettings::NeedsTensorMap() const {
  return !config.files.tensor_map.empty() || !flags.tensor_map_file_path.empty() ||
         config.CompileEvents();
}

std::string OversizeReportMessage(std::string_view what, uint64_t size, uint64_t max_size) {
  return fmt::format(
      "Dropping a Poplar {} of size {} which is larger than the configured maximum report size {}. "
      "To change the "
      "maximum report size use the max_report_size argument in ipu.utils.create_ipu_config.\n"
      "Example:\n"
      "cfg = ipu.utils.create_ipu_config(max_report_size=0x100000000) Note that the max report "
      "size is in bytes.",
      what, size, max_size);
}

std::string SerializeCompilationReport(const report::CompilationReport& report,
                                       const ReportConfig& config) {
  if (config.use_poplar_text_report) return report::WriteTextReport(report, nullptr, {});
  report::ReportDocument document{report, std::nullopt};
  return config.use_poplar_cbor_report ? report::WriteCborReport(document)
                                       : report::WriteJsonReport(document);
}

std::string SerializeExecutionReport(const report::ExecutionReport& report,
                                     const ReportConfig& config) {
  if (config.use_poplar_text_report) {
    // The text layout prints execution after a compilation part; an empty
    // compilation report prints none of its sections.
    return report::WriteTextReport(report::CompilationReport{}, &report,
                                   {.format_version_line = false, .show_execution_steps = true});
  }
  report::ReportDocument document{std::nullopt, report};
  return config.use_poplar_cbor_report ? report::WriteCborReport(document)
                                       : report::WriteJsonReport(document);
}

std::string ModuleReportDirectory(std::string_view report_directory, std::string_view module) {
  std::string component;
  for (char c : module) component += (c == '/' || c == '\0') ? '_' : c;
  if (component.empty() || component == "." || component == "..")
    component.insert(component.begin(), '_');
  std::string dir(report_directory);
  if (!dir.empty() && !dir.ends_with('/')) dir += '/';
  return dir + component;
}

std::string FrameworkJson(std::string_view module) {
  struct utsname host {};
  const bool have_host = uname(&host) == 0;
  nlohmann::ordered_json json = {
      {"TensorFlow", {{"Version", "tileprof"}, {"Githash", ""}, {"Cluster", std::string(module)}}},
      {"System Information",
       {{"Operating system", have_host ? host.sysname : ""},
        {"Operating system version", have_host ? host.release : ""},
        {"Machine", have_host ? host.machine : ""},
        {"Nominal CPU frequency [GHz]", NominalGhz()},
        {"Number of total cpus", std::thread::hardware_concurrency()}}}};
  return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string AutoReportProfilePath(const EngineOptions& engine) {
  if (!engine.OutputGraphProfile() && !engine.OutputExecutionProfile()) return "";
  std::filesystem::path dir = engine.AutoReportDirectory();
  if (dir.empty()) dir = ".";
  return (dir / "profile.db").string();
}

Status WriteOutputFile(const std::string& path, std::string_view contents) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code error;
    std::filesystem::create_directories(parent, error);
    if (error)
      return MakeError("'{}': cannot create the directory: {}", parent.string(), error.message());
  }
  return WriteFileAtomic(path, contents);
}

Expected<WrittenReports> WriteCompileOutputs(const CompiledModule& compiled,
                                             const ReportSettings& settings, EventSink& events,
                                             CompileLog& log) {
  WrittenReports written;
  const ReportFiles& files = settings.config.files;
  const report::CompilationReport& compilation = compiled.result.report;
  const report::ReportDocument document{compilation, std::nullopt};
  auto write = [&](const std::string& path, std::string_view contents) -> Status {
    TILEPROF_RETURN_IF_ERROR(WriteOutputFile(path, contents));
    written.files.push_back(path);
    return {};
  };
  // The text report the command names is the user's own file: like the
  // JSON/CBOR/SQLite outputs it is not subject to max_report_size, which
  // caps what rides in events and the report directory.
  if (!files.text.empty())
    TILEPROF_RETURN_IF_ERROR(write(
        files.text,
        report::WriteTextReport(compilation, nullptr, {.show_liveness = settings.text_liveness})));
  if (!files.json.empty())
    TILEPROF_RETURN_IF_ERROR(write(files.json, report::WriteJsonReport(document)));
  if (!files.cbor.empty())
    TILEPROF_RETURN_IF_ERROR(write(files.cbor, report::WriteCborReport(document)));
  if (!files.sqlite.empty()) {
    TILEPROF_RETURN_IF_ERROR(report::WriteProfileDatabase(files.sqlite, document));
    written.files.push_back(files.sqlite);
  }
  const std::string module(compiled.module.name());
  const report::TensorMap& tensor_map = compiled.result.tensor_map;
  // An executable loaded from the cache was not compiled here: no compile
  // events (as the original), and no tensor map, which executables do not
  // keep — said, rather than an empty map written.
  const bool from_cache = compiled.cache.outcome == CacheOutcome::kHit;
  const bool wants_map = !files.tensor_map.empty() || !settings.flags.tensor_map_file_path.empty();
  if (from_cache && wants_map) {
    std::string note = fmt::format(
        "The tensor map was not written: {} was loaded from the executable cache ({}), "
        "which keeps no tensor map. Compile without the cache to get it.",
        module, compiled.cache.path);
    log.Warning("poplar_compiler.cc", note);
    written.notes.push_back(std::move(note));
  }
  std::string tensor_map_json;
  if (wants_map && !from_cache) tensor_map_json = report::WriteTensorMapJson(tensor_map);
  if (!files.tensor_map.empty() && !from_cache)
    TILEPROF_RETURN_IF_ERROR(write(files.tensor_map, tensor_map_json));
  if (!settings.flags.tensor_map_file_path.empty() && !from_cache) {
    log.Verbose("poplar_compiler.cc", "[Poplar] Dumping tensor mapping");
    std::string path = settings.flags.tensor_map_file_path;
    if (!path.ends_with('/')) path += '/';
    TILEPROF_RETURN_IF_ERROR(write(path + module + ".tensor_map.json", tensor_map_json));
  }
  if (std::string profile = AutoReportProfilePath(settings.engine);
      !profile.empty() && settings.engine.OutputGraphProfile()) {
    std::filesystem::path parent = std::filesystem::path(profile).parent_path();
    std::error_code error;
    if (!parent.empty()) std::filesystem::create_directories(parent, error);
    if (error)
      return MakeError("'{}': cannot create the directory: {}", parent.string(), error.message());
    TILEPROF_RETURN_IF_ERROR(report::WriteProfileDatabase(profile, document));
    written.files.push_back(profile);
    written.profile = profile;
  }
  if (written.profile.empty()) written.profile = files.text;

  if (events.CompileEventsOn() && !from_cache && compiled.skipped_engine_compilation.empty()) {
    report::InstructionInfo info = ClassifyMlTypes(compiled.module);
    size_t notes_before = events.notes().size();
    std::string graph;
    if (settings.config.enable_poplar_serialized_graph && compiled.result.graph != nullptr) {
      graph = exec::SerializeExecutable(ExecutableInfoOf(compiled), compiled.result);
    }
    TILEPROF_RETURN_IF_ERROR(events.CompileEnd(module, &compilation, &tensor_map, &info,
                                               &written.files, graph.empty() ? nullptr : &graph));
    written.notes.insert(written.notes.end(),
                         events.notes().begin() + static_cast<ptrdiff_t>(notes_before),
                         events.notes().end());
  }
  return written;
}

Expected<WrittenReports> WriteRunOutputs(const CompiledModule& compiled,
                                         const report::ExecutionReport& execution,
                                         const ReportSettings& settings) {
  WrittenReports written;
  const ReportFiles& files = settings.config.files;
  const report::ReportDocument document{compiled.result.report, execution};
  auto write = [&](const std::string& path, std::string_view contents) -> Status {
    TILEPROF_RETURN_IF_ERROR(WriteOutputFile(path, contents));
    written.files.push_back(path);
    return {};
  };
  if (!files.text.empty()) {
    TILEPROF_RETURN_IF_ERROR(write(
        files.text, report::WriteTextReport(compiled.result.report, &execution,
                                            {.show_execution_steps = settings.text_execution_steps,
                                             .show_liveness = settings.text_liveness})));
  }
  if (!files.json.empty())
    TILEPROF_RETURN_IF_ERROR(write(files.json, report::WriteJsonReport(document)));
  if (!files.cbor.empty())
    TILEPROF_RETURN_IF_ERROR(write(files.cbor, report::WriteCborReport(document)));
  if (!files.sqlite.empty()) {
    TILEPROF_RETURN_IF_ERROR(report::WriteProfileDatabase(files.sqlite, document));
    written.files.push_back(files.sqlite);
  }
  if (std::string profile = AutoReportProfilePath(settings.engine);
      !profile.empty() && settings.engine.OutputExecutionProfile()) {
    std::filesystem::path parent = std::filesystem::path(profile).parent_path();
    std::error_code error;
    if (!parent.empty()) std::filesystem::create_directories(parent, error);
    if (error)
      return MakeError("'{}': cannot create the directory: {}", parent.string(), error.message());
    // The graph profile only when it was asked for too, as Poplar's
    // separate outputGraphProfile / outputExecutionProfile switches.
    report::ReportDocument profiled{std::nullopt, execution};
    if (settings.engine.OutputGraphProfile()) profiled.compilation = compiled.result.report;
    TILEPROF_RETURN_IF_ERROR(report::WriteProfileDatabase(profile, profiled));
    written.files.push_back(profile);
    written.profile = profile;
  }
  if (written.profile.empty()) written.profile = files.text;
  return written;
}

}  // namespace tileprof::engine
