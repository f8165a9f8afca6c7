// `tileprof compile MODEL.hlo`: compile onto the tiles of a target and write
// the text memory report (Trace_Event_Report.rep).
#include <fmt/format.h>

#include <iostream>

#include "cli/command.h"
#include "common/file.h"
#include "common/format.h"
#include "engine/session/precompile.h"
#include "engine/session/session.h"
#include "reports/histogram.h"
#include "reports/text_writer.h"

namespace tileprof::cli {
namespace {

struct Options {
  std::string model;
  std::string output = "Trace_Event_Report.rep";
  std::string target = "ipu2";
  uint32_t ipus = 1;
  uint32_t tiles_per_ipu = 0;  // 0: the preset's
  bool allow_out_of_memory = false;
  std::string progress;  // "": TF_POPLAR_FLAGS --show_progress_bar, else auto
  // Executable cache and pre-compile mode (issue 8).
  std::string cache_path;  // "": TF_POPLAR_FLAGS --executable_cache_path
  std::string device_connection = "always";
  std::string ipu_version;
};

void PrintSummary(const engine::CompiledModule& compiled, const std::string& output) {
  const report::CompilationReport& report = compiled.result.report;
  std::optional<report::MemoryUsage> total = report::ResolveTotal(report);
  std::optional<report::ByTileSummary> by_tile = report::ResolveByTile(report);
  if (compiled.cache.outcome == engine::CacheOutcome::kHit)
    std::cout << fmt::format("Loaded {} for {} from {} in {:.2f} s\n", compiled.module.name(),
                             compiled.target.Describe(), compiled.cache.path, compiled.seconds);
  else
    std::cout << fmt::format("Compiled {} for {} in {:.2f} s\n", compiled.module.name(), compiled.target.Describe(),
                             compiled.seconds);
  if (compiled.cache.outcome != engine::CacheOutcome::kDisabled && compiled.cache.outcome != engine::CacheOutcome::kHit)
    std::cout << fmt::format("  Cache:    {} ({})\n", engine::CacheOutcomeName(compiled.cache.outcome),
                             compiled.cache.path);
  if (total) {
    uint64_t capacity = compiled.target.TotalMemory();
    std::cout << fmt::format("  Memory:   {} B of {} B ({:.2f}%), {} B including gaps\n",
                             WithThousands(total->ExcludingGaps()), WithThousands(capacity),
                             capacity ? 100.0 * static_cast<double>(total->ExcludingGaps()) / static_cast<double>(capacity) : 0.0,
                             WithThousands(total->including_gaps));
  }
  if (by_tile && by_tile->max_including_gaps)
    std::cout << fmt::format("  Max tile: {} B on tile {} (of {} B per tile)\n",
                             WithThousands(by_tile->max_including_gaps->bytes), by_tile->max_including_gaps->tile,
                             WithThousands(compiled.target.BytesPerTile()));
  std::cout << fmt::format("  Tiles out of memory: {}\n", compiled.result.tiles_out_of_memory);
  if (!compiled.result.lowering.opaque_opcodes.empty()) {
    std::string opcodes;
    for (const std::string& op : compiled.result.lowering.opaque_opcodes) opcodes += (opcodes.empty() ? "" : ", ") + op;
    std::cout << fmt::format("  Opaque ops (memory accounted, not executable): {}\n", opcodes);
  }
  std::cout << fmt::format("  Report:   {}\n", output);
}

int Run(const Options& options) {
  auto env = engine::ReadEnvironment();
  if (!env) {
    PrintDiagnostic("compile", env.error().message());
    return kExitUsage;
  }
  if (env->flags.help) {
    std::cout << engine::PoplarFlagsUsage();
    return kExitOk;
  }
  engine::SessionOptions session;
  session.target.preset = options.target;
  session.target.num_ipus = options.ipus;
  if (options.tiles_per_ipu > 0) session.target.tiles_per_ipu = options.tiles_per_ipu;
  session.flags = env->flags;
  session.engine = env->engine;
  std::string progress = options.progress.empty() ? env->flags.show_progress_bar : options.progress;
  if (!engine::ParseProgressMode(progress, &session.progress)) {
    PrintDiagnostic("compile", "--progress: '" + progress + "' is not auto, true or false");
    return kExitUsage;
  }
  if (!options.cache_path.empty()) session.flags.executable_cache_path = options.cache_path;
  engine::ReportConfig connection;
  connection.device_connection = options.device_connection;
  connection.ipu_version = options.ipu_version;
  auto precompile_mode = engine::ApplyDeviceConnection(connection, session);
  if (!precompile_mode) {
    PrintDiagnostic("compile", precompile_mode.error().message());
    return kExitUsage;
  }
  const bool precompile = *precompile_mode;
  engine::CompileLog log(stderr, env->log_level);
  // The report is all this command writes, so a cache hit skips the graph.
  const auto parts = engine::exec::LoadParts::kReport;
  auto compiled = precompile ? engine::PrecompileHloFile(options.model, session, log, parts)
                             : engine::LoadOrCompile(options.model, session, log, parts);
  if (!compiled) {
    const std::string& message = compiled.error().message();
    // Parse errors already read "file:line:col: error: ..." with a caret.
    if (message.starts_with(options.model + ":")) std::cerr << message << (message.ends_with('\n') ? "" : "\n");
    else PrintDiagnostic("compile", message);
    return kExitError;
  }
  std::string text = report::WriteTextReport(compiled->result.report, nullptr, {});
  if (Status written = WriteFileAtomic(options.output, text); !written) {
    PrintDiagnostic("compile", written.error().message());
    return kExitError;
  }
  PrintSummary(*compiled, options.output);
  if (precompile) std::cout << engine::PrecompiledSavedMessage(compiled->cache.path) << "\n";
  if (compiled->result.tiles_out_of_memory > 0) {
    // Unlike Poplar since SDK 2.1, an out-of-memory compile fails unless
    // asked not to: a user running one command wants to hear about it.
    auto from_options = session.engine.GetBool("debug.allowOutOfMemory", false);
    bool allowed = options.allow_out_of_memory || (from_options && *from_options);
    if (!allowed) {
      PrintDiagnostic("compile", engine::OutOfMemoryMessage(options.output));
      return kExitError;
    }
  }
  return kExitOk;
}

RunFn Setup(CLI::App& cmd) {
  auto options = std::make_shared<Options>();
  cmd.footer(
      "Lowers the module onto the tiles of the target, lays out every tile's memory and writes\n"
      "the text report (Target, Graph, Memory Usage, By Tile histogram, the most-used tiles when\n"
      "memory is imbalanced). An out-of-memory graph still gets its report; the exit status is\n"
      "then 1 with Poplar's 'Out of memory: ... Profile saved to: <path>' message, unless\n"
      "--allow-out-of-memory or POPLAR_ENGINE_OPTIONS='{\"debug.allowOutOfMemory\":\"true\"}'.\n"
      "Environment: TF_POPLAR_FLAGS (--ipu_model_tiles, --show_progress_bar, --help, ...),\n"
      "POPLAR_ENGINE_OPTIONS, POPLAR_LOG_LEVEL=INFO (phase lines), TF_POPLAR_VLOG_LEVEL=1\n"
      "(Begin/End XLA compilation lines). Log lines go to stderr, the progress bar to stdout.\n"
      "With --executable-cache-path DIR (or TF_POPLAR_FLAGS=--executable_cache_path=DIR) the\n"
      "compiled executable is saved to DIR/<key>.poplar_exec and later compiles of the same module,\n"
      "target and program options load it instead (report and profiling options do not change\n"
      "the key); see `tileprof cache`. --device-connection=pre-compile --ipu-version=ipu2 only\n"
      "compiles into the cache, for a later run.");
  cmd.add_option("MODEL", options->model, "HLO text file (one module)")->required();
  cmd.add_option("-o,--output", options->output, "Where to write the text report")->capture_default_str();
  cmd.add_option("--target", options->target, "Target preset: ipu1, ipu2, ipu21")
      ->check(CLI::IsMember({"ipu1", "ipu2", "ipu21"}))
      ->capture_default_str();
  cmd.add_option("--ipus", options->ipus, "Number of IPUs")->check(CLI::Range(1u, engine::kMaxIpus))->capture_default_str();
  cmd.add_option("--tiles-per-ipu", options->tiles_per_ipu,
                 "Tiles per IPU, fewer than the preset's (TF_POPLAR_FLAGS --ipu_model_tiles)")
      ->check(CLI::PositiveNumber);
  cmd.add_flag("--allow-out-of-memory", options->allow_out_of_memory,
               "Exit 0 even when tiles are out of memory (debug.allowOutOfMemory)");
  cmd.add_option("--progress", options->progress,
                 "Compile progress bar: auto (a terminal and at least 5 expensive ops), true, false");
  cmd.add_option("--executable-cache-path", options->cache_path,
                 "Load the compiled executable from DIR, or compile and save it there "
                 "(TF_POPLAR_FLAGS --executable_cache_path)");
  cmd.add_option("--device-connection", options->device_connection,
                 "always, or pre-compile: compile and save to the executable cache for a later run")
      ->check(CLI::IsMember({"always", "pre-compile"}))
      ->capture_default_str();
  cmd.add_option("--ipu-version", options->ipu_version, "Target of pre-compile mode: ipu1, ipu2, ipu21")
      ->check(CLI::IsMember({"ipu1", "ipu2", "ipu21"}));
  return [options] { return Run(*options); };
}

const Registration kCompile{"compile", "Compile an HLO module onto the tiles of a target and write the memory report",
                            Setup};

}  // namespace
}  // namespace tileprof::cli
