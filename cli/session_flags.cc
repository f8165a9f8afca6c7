#include "cli/session_flags.h"

#include <iostream>

#include "cli/command.h"
#include "engine/session/precompile.h"

namespace tileprof::cli {

namespace {
constexpr const char* kDefaultTextReport = "Trace_Event_Report.rep";
}  // namespace

void AddTargetFlags(CLI::App& cmd, TargetFlags& flags) {
  cmd.add_option("--target", flags.target, "Target preset: ipu1, ipu2, ipu21")
      ->check(CLI::IsMember({"ipu1", "ipu2", "ipu21"}))
      ->capture_default_str();
  cmd.add_option("--ipus", flags.ipus, "Number of IPUs")
      ->check(CLI::Range(1u, engine::kMaxIpus))
      ->capture_default_str();
  cmd.add_option("--tiles-per-ipu", flags.tiles_per_ipu,
                 "Tiles per IPU, fewer than the preset's (TF_POPLAR_FLAGS --ipu_model_tiles)")
      ->check(CLI::PositiveNumber);
}

void AddSessionFlags(CLI::App& cmd, SessionFlags& flags) {
  cmd.add_option("MODEL", flags.model, "HLO text file (one module)")->required();
  cmd.add_option("-o,--output", flags.output,
                 "Where to write the text report (default Trace_Event_Report.rep)");
  AddTargetFlags(cmd, flags.target);
  cmd.add_option(
      "--progress", flags.progress,
      "Compile progress bar: auto (a terminal and at least 5 expensive ops), true, false");
  cmd.add_option("--executable-cache-path", flags.cache_path,
                 "Load the compiled executable from DIR, or compile and save it there "
                 "(TF_POPLAR_FLAGS --executable_cache_path)");
  cmd.add_option("--device-connection", flags.device_connection,
                 "always, or pre-compile: no device; compile and save to the executable cache for "
                 "a later run")
      ->check(CLI::IsMember({"always", "pre-compile"}));
  cmd.add_option("--ipu-version", flags.ipu_version,
                 "Target of pre-compile mode: ipu1, ipu2, ipu21")
      ->check(CLI::IsMember({"ipu1", "ipu2", "ipu21"}));
  cmd.add_flag("--show-liveness", flags.show_liveness,
               "Add a Liveness section to the text report: the peak not-always-live step, its "
               "fullest tile and the largest variables live then (tileprof's own; Poplar prints "
               "none)");
  AddReportFlags(cmd, flags.report, /*text_output=*/true);
}

engine::SessionOptions TargetSession(const TargetFlags& flags, const engine::Environment& env) {
  engine::SessionOptions session;
  session.target.preset = flags.target;
  session.target.num_ipus = flags.ipus;
  if (flags.tiles_per_ipu > 0) session.target.tiles_per_ipu = flags.tiles_per_ipu;
  session.flags = env.flags;
  session.engine = env.engine;
  return session;
}

std::optional<int> PrepareSession(const SessionFlags& flags, std::string_view command,
                                  Session& session) {
  auto usage = [&](std::string_view message) {
    PrintDiagnostic(command, message);
    return kExitUsage;
  };
  auto env = engine::ReadEnvironment();
  if (!env) return usage(env.error().message());
  if (env->flags.help) {
    std::cout << engine::PoplarFlagsUsage();
    return kExitOk;
  }
  session.env = *env;
  session.options = TargetSession(flags.target, *env);
  engine::SessionOptions& options = session.options;
  std::string progress = flags.progress.empty() ? env->flags.show_progress_bar : flags.progress;
  if (!engine::ParseProgressMode(progress, &options.progress))
    return usage("--progress: '" + progress + "' is not auto, true or false");
  if (!flags.cache_path.empty()) options.flags.executable_cache_path = flags.cache_path;
  session.settings = engine::ReportSettings{.flags = env->flags, .engine = env->engine};
  auto config = ResolveReportConfig(flags.report);
  if (!config) return usage(config.error().message());
  engine::ReportConfig& resolved = session.settings.config = std::move(*config);
  if (!flags.device_connection.empty()) resolved.device_connection = flags.device_connection;
  if (!flags.ipu_version.empty()) resolved.ipu_version = flags.ipu_version;
  auto precompile = engine::ApplyDeviceConnection(resolved, options);
  if (!precompile) return usage(precompile.error().message());
  session.precompile = *precompile;
  std::string& text_report = resolved.files.text;
  if (!flags.output.empty()) text_report = flags.output;
  if (text_report.empty()) text_report = kDefaultTextReport;
  session.settings.text_liveness = flags.show_liveness;
  options.compile.record_tensor_map = session.settings.NeedsTensorMap();
  return std::nullopt;
}

int CompileFailure(std::string_view command, const std::string& model, const std::string& message) {
  if (message.starts_with(model + ":")) {
    std::cerr << message << (message.ends_with('\n') ? "" : "\n");
  } else {
    PrintDiagnostic(command, message);
  }
  return kExitError;
}

}  // namespace tileprof::cli
