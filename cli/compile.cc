// `tileprof compile MODEL.hlo`: compile onto the tiles of a target and write
// the text memory report (Trace_Event_Report.rep).
#include <fmt/format.h>

#include <iostream>

#include "analyzer/tile_archives.h"
#include "cli/command.h"
#include "cli/session_flags.h"
#include "common/format.h"
#include "engine/hlo/peak_live.h"
#include "engine/session/event_sink.h"
#include "engine/session/precompile.h"
#include "engine/session/report_output.h"
#include "engine/session/session.h"
#include "reports/histogram.h"

namespace tileprof::cli {
namespace {

struct Options {
  SessionFlags session;
  bool allow_out_of_memory = false;
  std::string save_archive;  // "": target.saveArchive of POPLAR_ENGINE_OPTIONS, if any
};

void PrintSummary(const engine::CompiledModule& compiled, const engine::WrittenReports& written) {
  const report::CompilationReport& report = compiled.result.report;
  std::optional<report::MemoryUsage> total = report::ResolveTotal(report);
  std::optional<report::ByTileSummary> by_tile = report::ResolveByTile(report);
  if (compiled.cache.outcome == engine::CacheOutcome::kHit)
    std::cout << fmt::format("Loaded {} for {} from {} in {:.2f} s\n", compiled.module.name(),
                             compiled.target.Describe(), compiled.cache.path, compiled.seconds);
  else
    std::cout << fmt::format("Compiled {} for {} in {:.2f} s\n", compiled.module.name(),
                             compiled.target.Describe(), compiled.seconds);
  if (compiled.cache.outcome != engine::CacheOutcome::kDisabled &&
      compiled.cache.outcome != engine::CacheOutcome::kHit)
    std::cout << fmt::format("  Cache:    {} ({})\n",
                             engine::CacheOutcomeName(compiled.cache.outcome), compiled.cache.path);
  if (total) {
    uint64_t capacity = compiled.target.TotalMemory();
    std::cout << fmt::format("  Memory:   {} B of {} B ({:.2f}%), {} B including gaps\n",
                             WithThousands(total->ExcludingGaps()), WithThousands(capacity),
                             capacity ? 100.0 * static_cast<double>(total->ExcludingGaps()) /
                                            static_cast<double>(capacity)
                                      : 0.0,
                             WithThousands(total->including_gaps));
    // The model's own memory (docs/memory-model.md): how much of the total
    // is the model, and how much the compiler's layout, code and exchange.
    const hlo::PeakLive bound = hlo::ComputePeakLive(compiled.module);
    if (bound.bytes > 0)
      std::cout << fmt::format(
          "  Peak live: {} B, the module's own bound (report total {:.2f}x)\n",
          WithThousands(bound.bytes),
          static_cast<double>(total->ExcludingGaps()) / static_cast<double>(bound.bytes));
  }
  if (by_tile && by_tile->max_including_gaps)
    std::cout << fmt::format("  Max tile: {} B on tile {} (of {} B per tile)\n",
                             WithThousands(by_tile->max_including_gaps->bytes),
                             by_tile->max_including_gaps->tile,
                             WithThousands(compiled.target.BytesPerTile()));
  std::cout << fmt::format("  Tiles out of memory: {}\n", compiled.result.tiles_out_of_memory);
  if (!compiled.result.lowering.opaque_opcodes.empty()) {
    std::string opcodes;
    for (const std::string& op : compiled.result.lowering.opaque_opcodes)
      opcodes += (opcodes.empty() ? "" : ", ") + op;
    std::cout << fmt::format("  Opaque ops (memory accounted, not executable): {}\n", opcodes);
  }
  for (const std::string& file : written.files) std::cout << fmt::format("  Wrote:    {}\n", file);
  for (const std::string& note : written.notes)
    std::cout << "  Note:     " << note.substr(0, note.find('.') + 1) << '\n';
}

int Run(const Options& options) {
  Session prepared;
  if (auto stop = PrepareSession(options.session, "compile", prepared)) return *stop;
  engine::SessionOptions& session = prepared.options;
  const engine::ReportSettings& settings = prepared.settings;
  const bool precompile = prepared.precompile;
  engine::CompileLog log(stderr, prepared.env.log_level);
  auto events = engine::EventSink::Open(settings, {.path = settings.config.files.events}, &log);
  if (!events) {
    PrintDiagnostic("compile", events.error().message());
    return kExitError;
  }
  session.events = &*events;
  // A cache hit needs only the report.
  const auto parts = engine::exec::LoadParts::kReport;
  const std::string& model = options.session.model;
  auto compiled = precompile ? engine::PrecompileHloFile(model, session, log, parts)
                             : engine::LoadOrCompile(model, session, log, parts);
  if (!compiled) return CompileFailure("compile", model, compiled.error().message());
  auto written = engine::WriteCompileOutputs(*compiled, settings, *events, log);
  Status closed = events->Close();
  if (!written || !closed) {
    PrintDiagnostic("compile", (!written ? written.error() : closed.error()).message());
    return kExitError;
  }
  // The per-tile archive, also (especially) when tiles are out of memory.
  std::string archive =
      options.save_archive.empty() ? session.engine.SaveArchive() : options.save_archive;
  if (!archive.empty()) {
    if (Status saved = analyzer::WriteReportArchive(archive, compiled->result.report, model);
        !saved) {
      PrintDiagnostic("compile", saved.error().message());
      return kExitError;
    }
  }
  PrintSummary(*compiled, *written);
  if (precompile) std::cout << engine::PrecompiledSavedMessage(compiled->cache.path) << "\n";
  if (compiled->result.tiles_out_of_memory > 0) {
    // Unlike Poplar since SDK 2.1, an out-of-memory compile fails unless
    // asked not to: a user running one command wants to hear about it.
    auto from_options = session.engine.GetBool("debug.allowOutOfMemory", false);
    bool allowed = options.allow_out_of_memory || (from_options && *from_options);
    if (!allowed) {
      PrintDiagnostic("compile", engine::OutOfMemoryMessage(written->profile));
      return ExitWithoutTeardown(kExitError);
    }
  }
  return ExitWithoutTeardown(kExitOk);
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
      "Report options (also as a --config JSON object, flags win): --json-report, --cbor-report "
      "and\n"
      "--profile-db write the report in other formats; --tensor-map FILE and TF_POPLAR_FLAGS\n"
      "--tensor_map_file_path=DIR (DIR/<module>.tensor_map.json) the tensor map; --events FILE\n"
      "COMPILE_BEGIN/COMPILE_END trace events (with --profiling, the report inside, in the\n"
      "--use-poplar-*-report format, dropped above --max-report-size); --report-directory DIR\n"
      "DIR/<module>/{graph.<ext>,tensor_map.json,framework.json}. POPLAR_ENGINE_OPTIONS\n"
      "autoReport.all / outputGraphProfile write <autoReport.directory>/profile.db.\n"
      "With --executable-cache-path DIR (or TF_POPLAR_FLAGS=--executable_cache_path=DIR) the\n"
      "compiled executable is saved to DIR/<key>.poplar_exec and later compiles of the same "
      "module,\n"
      "target and program options load it instead (report and profiling options do not change\n"
      "the key); see `tileprof cache`. --device-connection=pre-compile --ipu-version=ipu2 only\n"
      "compiles into the cache, for a later run.");
  AddSessionFlags(cmd, options->session);
  cmd.add_flag("--allow-out-of-memory", options->allow_out_of_memory,
               "Exit 0 even when tiles are out of memory (debug.allowOutOfMemory)");
  cmd.add_option(
      "--save-archive", options->save_archive,
      "Also write the per-tile ELF archive (target.saveArchive): member i is tile i, its .text "
      "the tile's memory");
  return [options] { return Run(*options); };
}

const Registration kCompile{
    "compile", "Compile an HLO module onto the tiles of a target and write the memory report",
    Setup};

}  // namespace
}  // namespace tileprof::cli
