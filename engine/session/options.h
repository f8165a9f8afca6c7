// The options users set, in the forms they already use
// (../shared/spec/executable-cache.md section 7, trace-events.md section 8):
//
//   TF_POPLAR_FLAGS='--executable_cache_path=/tmp/c --use_ipu_model'
//   POPLAR_ENGINE_OPTIONS='{"autoReport.all":"true","autoReport.directory":"./report"}'
//   tileprof run --config cfg.json    {"profiling": true, "report_directory": "r", ...}
//
// Each parser rejects what it does not know, naming the bad flag or key and
// listing the valid ones: a typo must not silently turn profiling off.
//
// CompileKeyText() is the part of the options that changes the compiled
// program, and only that part enters the executable-cache key. Report,
// profiling, logging and progress options never do (spec 2.6): turning
// profiling on must not recompile. The instrumentation switches
// (debug.instrument*) stay out too, because tileprof's simulator counts cycles
// without inserting anything into the program.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/expected.h"

namespace tileprof::engine {

// TF_POPLAR_FLAGS, with the original's names and defaults (TF-HEAD).
struct PoplarFlags {
  bool help = false;
  bool use_synthetic_data = false;
  std::string synthetic_data_categories;
  std::string synthetic_data_initializer;
  bool use_ipu_model = false;
  int64_t ipu_model_tiles = -1;
  int64_t log_cycle_count = -1;
  int64_t while_loop_brute_force_max_trip_count = 128;
  int64_t max_compilation_threads = -1;
  int64_t max_infeed_threads = -1;
  std::string executable_cache_path;
  bool dump_schedule_as_dot = false;
  std::string tensor_map_file_path;
  bool fallback_scheduler = false;
  bool allow_nans = false;
  bool null_data_feed = false;
  std::string show_progress_bar = "auto";
  bool use_on_demand = false;
  int64_t on_demand_device_poll_time = 1000;
  int64_t on_demand_device_timeout = 3600000;
  bool sync_replica_start = false;
  bool enable_hlo_verifier = false;
  bool disable_poplar_version_check = false;
  std::string save_vertex_graph;
  std::string save_interval_report;
  bool dump_text_reports_to_stdio = false;
};

// Parses "--name=value --flag ..." (whitespace separated; a bare --flag is
// true for booleans). Errors: an unknown flag (listing the valid ones), a
// value of the wrong type, the value checks of the original (progress bar
// mode, synthetic data categories and initializer).
Expected<PoplarFlags> ParsePoplarFlags(std::string_view text);

// "Usage for TF_POPLAR_FLAGS is:" and one "\t--<name>: <help>" line per flag.
std::string PoplarFlagsUsage();

// POPLAR_ENGINE_OPTIONS: a JSON object of string values ("true", "./dir").
// Booleans and numbers are accepted and kept as their JSON text.
struct EngineOptions {
  std::map<std::string, std::string> values;

  std::optional<std::string> Get(std::string_view key) const;
  // "true"/"false" (any case), "1"/"0"; `fallback` when unset.
  Expected<bool> GetBool(std::string_view key, bool fallback) const;

  // The typed view of the keys tileprof acts on.
  bool AutoReportAll() const;
  std::string AutoReportDirectory() const;  // "" when unset
  bool OutputGraphProfile() const;          // autoReport.all or .outputGraphProfile
  bool OutputExecutionProfile() const;      // autoReport.all or .outputExecutionProfile
  bool AllowOutOfMemory() const;            // default true, as since Poplar SDK 2.1
  std::string SaveArchive() const;          // target.saveArchive, "" when unset
};

// Unknown keys are errors naming the valid ones; values are checked for the
// keys that have a fixed set (booleans, instrumentation levels).
Expected<EngineOptions> ParseEngineOptions(std::string_view json);

enum class ExecutionProfile : uint8_t { kNone, kDevice, kIpu, kTile };

// tileprof's own outputs, which create_ipu_config has no equivalent of: the
// files a command writes the report, tensor map and events to ("" = not
// written). --config keys text_report, json_report, cbor_report,
// profile_db, tensor_map, events.
struct ReportFiles {
  std::string text;        // text report (Trace_Event_Report.rep layout)
  std::string json;        // JSON report (docs/report-schema.md)
  std::string cbor;        // CBOR report
  std::string sqlite;      // SQLite profile database
  std::string tensor_map;  // tensor map JSON (spec tensor-map.md)
  std::string events;      // trace-event file (length-delimited IpuTraceEvent)
};

// The report options of create_ipu_config / IpuOptions.Profiling, as CLI
// flags and in a --config JSON file.
struct ReportConfig {
  bool profiling = false;
  bool enable_ipu_events = false;
  bool use_poplar_text_report = false;
  bool use_poplar_cbor_report = false;
  ExecutionProfile profile_execution = ExecutionProfile::kNone;
  bool enable_poplar_serialized_graph = false;
  int64_t report_every_nth_execution = 0;  // 0: the first execution only
  uint64_t max_report_size = 0x10000000;
  std::string report_directory;
  // Device connection (issue 8): "always" (default) or "pre-compile".
  std::string device_connection = "always";
  std::string ipu_version;  // "ipu1", "ipu2", "ipu21"; "" = the default target
  ReportFiles files;

  // The events the spec's gates allow (trace-events.md section 3).
  bool CompileEvents() const { return profiling || enable_ipu_events; }
  bool IoEvents() const { return profiling; }
  bool ExecuteEvents() const {
    return CompileEvents() && profile_execution != ExecutionProfile::kNone;
  }
  // "txt", "cbor" or "json", as ReportFileExtension() decides.
  std::string_view ReportExtension() const;
};

// Applies a --config JSON object on top of `base`. profile_execution takes
// true/false or "device"/"ipu"/"tile" (and the DEVICE_PROFILE names).
Expected<ReportConfig> ParseReportConfig(std::string_view json, ReportConfig base = {});

// "profile_execution": "device" -> kDevice, ...; nullopt when unknown.
std::optional<ExecutionProfile> ParseExecutionProfile(std::string_view text);

// The canonical text of everything that changes the compiled program: the
// flags of spec 2.4, in a fixed order. Equal texts mean the same program.
std::string CompileKeyText(const PoplarFlags& flags, const EngineOptions& engine);

}  // namespace tileprof::engine
