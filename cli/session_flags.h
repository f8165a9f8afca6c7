// The options `tileprof compile` and `tileprof run` share — target, compile
// progress, executable cache, pre-compile mode and report outputs — and the
// session they make, so both commands read the environment and resolve
// their options the same way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "cli/report_flags.h"
#include "engine/session/report_output.h"
#include "engine/session/session.h"

namespace tileprof::cli {

struct TargetFlags {
  std::string target = "ipu2";
  uint32_t ipus = 1;
  uint32_t tiles_per_ipu = 0;  // 0: the preset's
};

struct SessionFlags {
  std::string model;
  std::string output;  // "": the config's text_report, else Trace_Event_Report.rep
  TargetFlags target;
  std::string progress;           // "": TF_POPLAR_FLAGS --show_progress_bar, else auto
  std::string cache_path;         // "": TF_POPLAR_FLAGS --executable_cache_path
  std::string device_connection;  // "": the --config file's, else always
  std::string ipu_version;
  bool show_liveness = false;  // --show-liveness
  ReportFlags report;
};

// --target, --ipus, --tiles-per-ipu.
void AddTargetFlags(CLI::App& cmd, TargetFlags& flags);
// MODEL, -o and everything in SessionFlags.
void AddSessionFlags(CLI::App& cmd, SessionFlags& flags);

// The session of the target flags and the environment.
engine::SessionOptions TargetSession(const TargetFlags& flags, const engine::Environment& env);

struct Session {
  engine::Environment env;
  engine::SessionOptions options;
  engine::ReportSettings settings;
  bool precompile = false;
};

// Reads the environment and resolves the flags. Returns the exit status
// when the command should stop here (TF_POPLAR_FLAGS=--help printed, or a
// usage error reported as `tileprof: <command>: ...`).
std::optional<int> PrepareSession(const SessionFlags& flags, std::string_view command,
                                  Session& session);

// Prints a compile or load error: parse errors already read
// "file:line:col: error: ..." with a caret, others get the command prefix.
int CompileFailure(std::string_view command, const std::string& model, const std::string& message);

}  // namespace tileprof::cli
