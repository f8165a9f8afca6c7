// The report options as command-line flags, shared by the commands that
// compile or run (compile, run): the create_ipu_config options of
// ../shared/spec/trace-events.md section 8 spelt as flags, tileprof's own
// output files, and --config FILE (the same options as a JSON object).
// The config file is applied first and flags on top of it, so a flag always
// wins; boolean flags only switch an option on.
//
//   auto flags = std::make_shared<ReportFlags>();
//   AddReportFlags(cmd, *flags);
//   ...
//   Expected<engine::ReportConfig> config = ResolveReportConfig(*flags);
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "common/expected.h"
#include "engine/session/options.h"

namespace tileprof::cli {

struct ReportFlags {
  std::string config_file;
  bool profiling = false;
  bool enable_ipu_events = false;
  bool use_poplar_text_report = false;
  bool use_poplar_cbor_report = false;
  bool enable_poplar_serialized_graph = false;
  std::string profile_execution;           // "" = the config's
  std::string report_every_nth_execution;  // "" = the config's
  std::string max_report_size;             // "" = the config's; decimal or 0x hex
  std::string report_directory;
  engine::ReportFiles files;  // "" members = the config's
};

// `text_output`: whether the command takes the text report path itself
// (compile's -o); otherwise --text-report is added.
void AddReportFlags(CLI::App& cmd, ReportFlags& flags, bool text_output);

// The config file (errors name it), then the flags (errors name the flag).
Expected<engine::ReportConfig> ResolveReportConfig(const ReportFlags& flags);

// "268435456" or "0x10000000" (the form create_ipu_config examples use).
Expected<uint64_t> ParseByteCount(std::string_view text);

}  // namespace tileprof::cli
