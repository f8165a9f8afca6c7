#include "cli/report_flags.h"

#include <charconv>

#include "common/file.h"

namespace tileprof::cli {

Expected<uint64_t> ParseByteCount(std::string_view text) {
  int base = 10;
  std::string_view digits = text;
  if (digits.starts_with("0x") || digits.starts_with("0X")) {
    base = 16;
    digits.remove_prefix(2);
  }
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
    return MakeError("'{}' is not a byte count (decimal or 0x hexadecimal)", text);
  return value;
}

void AddReportFlags(CLI::App& cmd, ReportFlags& flags, bool text_output) {
  const char* group = "Report options";
  cmd.add_option(
         "--config", flags.config_file,
         "JSON object of report options: profiling, enable_ipu_events, use_poplar_text_report, ... "
         "(the flags below override it)")
      ->type_name("FILE")
      ->group(group);
  cmd.add_flag("--profiling", flags.profiling,
               "Compilation (and execution) reports in the trace events, COMPILE_BEGIN/END and I/O "
               "events")
      ->group(group);
  cmd.add_flag("--enable-ipu-events", flags.enable_ipu_events,
               "Trace events without reports in them (timing only)")
      ->group(group);
  cmd.add_flag("--use-poplar-text-report", flags.use_poplar_text_report,
               "Reports in events and the report directory as text instead of JSON")
      ->group(group);
  cmd.add_flag("--use-poplar-cbor-report", flags.use_poplar_cbor_report,
               "... as CBOR instead of JSON")
      ->group(group);
  cmd.add_flag("--enable-poplar-serialized-graph", flags.enable_poplar_serialized_graph,
               "Accepted for compatibility; tileprof has no serialised Poplar graph to include")
      ->group(group);
  cmd.add_option("--profile-execution", flags.profile_execution,
                 "EXECUTE events: none, device, ipu or tile")
      ->check(CLI::IsMember({"none", "device", "ipu", "tile"}))
      ->type_name("LEVEL")
      ->group(group);
  cmd.add_option("--report-every-nth-execution", flags.report_every_nth_execution,
                 "Execution report every N-th execution (0: the first only)")
      ->type_name("N")
      ->group(group);
  cmd.add_option("--max-report-size", flags.max_report_size,
                 "Reports larger than this many bytes are dropped from events (default 0x10000000)")
      ->type_name("BYTES")
      ->group(group);
  cmd.add_option("--report-directory", flags.report_directory,
                 "Write reports to DIR/<module>/ (graph, tensor_map.json, framework.json, "
                 "execution); events "
                 "then hold the paths")
      ->type_name("DIR")
      ->group(group);
  if (!text_output)
    cmd.add_option("--text-report", flags.files.text, "Also write the text report to FILE")
        ->type_name("FILE")
        ->group(group);
  cmd.add_option("--json-report", flags.files.json,
                 "Also write the report as JSON (docs/report-schema.md)")
      ->type_name("FILE")
      ->group(group);
  cmd.add_option("--cbor-report", flags.files.cbor, "Also write the report as CBOR")
      ->type_name("FILE")
      ->group(group);
  cmd.add_option("--profile-db", flags.files.sqlite,
                 "Also write the SQLite profile database (profile.db)")
      ->type_name("FILE")
      ->group(group);
  cmd.add_option("--tensor-map", flags.files.tensor_map, "Write the tensor map JSON to FILE")
      ->type_name("FILE")
      ->group(group);
  cmd.add_option(
         "--events", flags.files.events,
         "Write trace events to FILE (length-delimited IpuTraceEvent; implies --enable-ipu-events)")
      ->type_name("FILE")
      ->group(group);
}

Expected<engine::ReportConfig> ResolveReportConfig(const ReportFlags& flags) {
  engine::ReportConfig config;
  if (!flags.config_file.empty()) {
    TILEPROF_ASSIGN_OR_RETURN(std::string text, ReadFile(flags.config_file));
    Expected<engine::ReportConfig> parsed = engine::ParseReportConfig(text, config);
    if (!parsed) return parsed.error().Within(flags.config_file);
    config = std::move(*parsed);
  }
  config.profiling |= flags.profiling;
  config.enable_ipu_events |= flags.enable_ipu_events;
  config.use_poplar_text_report |= flags.use_poplar_text_report;
  config.use_poplar_cbor_report |= flags.use_poplar_cbor_report;
  config.enable_poplar_serialized_graph |= flags.enable_poplar_serialized_graph;
  if (!flags.profile_execution.empty())
    config.profile_execution =
        *engine::ParseExecutionProfile(flags.profile_execution);  // checked by CLI11
  if (!flags.report_every_nth_execution.empty()) {
    Expected<uint64_t> n = ParseByteCount(flags.report_every_nth_execution);
    if (!n || *n > INT64_MAX)
      return MakeError("--report-every-nth-execution: '{}' is not a non-negative integer",
                       flags.report_every_nth_execution);
    config.report_every_nth_execution = static_cast<int64_t>(*n);
  }
  if (!flags.max_report_size.empty()) {
    Expected<uint64_t> size = ParseByteCount(flags.max_report_size);
    if (!size) return size.error().Within("--max-report-size");
    config.max_report_size = *size;
  }
  if (!flags.report_directory.empty()) config.report_directory = flags.report_directory;
  auto take = [](std::string& into, const std::string& from) {
    if (!from.empty()) into = from;
  };
  take(config.files.text, flags.files.text);
  take(config.files.json, flags.files.json);
  take(config.files.cbor, flags.files.cbor);
  take(config.files.sqlite, flags.files.sqlite);
  take(config.files.tensor_map, flags.files.tensor_map);
  take(config.files.events, flags.files.events);
  // Asking for an event file asks for events.
  if (!config.files.events.empty()) config.enable_ipu_events = true;
  return config;
}

}  // namespace tileprof::cli
