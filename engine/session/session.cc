#include "engine/session/session.h"

#include <algorithm>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "common/file.h"
#include "engine/exec/cache.h"
#include "engine/hlo/canonical.h"
#include "engine/hlo/fingerprint.h"
#include "engine/hlo/parser.h"
#include "engine/hlo/printer.h"
#include "engine/session/event_sink.h"
#include "engine/session/precompile.h"
#include "version.h"

namespace tileprof::engine {
namespace {

std::string_view Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string_view() : std::string_view(value);
}

bool VlogOn(std::string_view value) { return !value.empty() && value != "0"; }

}  // namespace

Expected<Environment> ReadEnvironment() {
  Environment env;
  if (auto flags = Env("TF_POPLAR_FLAGS"); !flags.empty()) {
    TILEPROF_ASSIGN_OR_RETURN(env.flags, ParsePoplarFlags(flags));
  }
  if (auto options = Env("POPLAR_ENGINE_OPTIONS"); !options.empty()) {
    TILEPROF_ASSIGN_OR_RETURN(env.engine, ParseEngineOptions(options));
  }
  std::string_view poplar = Env("POPLAR_LOG_LEVEL");
  if (poplar == "INFO" || poplar == "DEBUG" || poplar == "TRACE") env.log_level = LogLevel::kInfo;
  if (VlogOn(Env("TF_POPLAR_VLOG_LEVEL")) || VlogOn(Env("TF_CPP_MIN_VLOG_LEVEL")))
    env.log_level = LogLevel::kVerbose;
  return env;
}

Expected<Target> ResolveTarget(const SessionOptions& options) {
  TargetOptions target = options.target;
  if (!target.tiles_per_ipu && options.flags.ipu_model_tiles > 0)
    target.tiles_per_ipu = static_cast<uint32_t>(options.flags.ipu_model_tiles);
  return Target::Create(target);
}

int64_t ExpensiveInstructions(const hlo::Module& module) {
  int64_t count = 0;
  for (const hlo::Computation* computation : module.computations()) {
    for (const hlo::Instruction* instruction : computation->instructions()) {
      switch (instruction->opcode()) {
        case hlo::Opcode::kAllReduce:
        case hlo::Opcode::kCholesky:
        case hlo::Opcode::kConvolution:
        case hlo::Opcode::kCustomCall:
        case hlo::Opcode::kDot:
        case hlo::Opcode::kInfeed:
        case hlo::Opcode::kOutfeed:
        case hlo::Opcode::kTriangularSolve:
          ++count;
          break;
        default:
          break;
      }
    }
  }
  return count;
}

std::string OutOfMemoryMessage(const std::string& profile_path) {
  return "Out of memory: Cannot fit all variable data onto one or more tiles. Profile saved to: " +
         profile_path;
}

namespace {

struct Parsed {
  hlo::Module module;
  uint64_t fingerprint = 0;
  Target target;
};

Expected<Parsed> ParseHloFile(const std::string& path, const SessionOptions& options,
                              CompileLog& log) {
  TILEPROF_ASSIGN_OR_RETURN(Target target, ResolveTarget(options));
  TILEPROF_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  TILEPROF_ASSIGN_OR_RETURN(hlo::Module module,
                            hlo::ParseModule(std::move(text), {.source_name = path}));
  uint64_t fingerprint = hlo::Fingerprint(module);
  log.Verbose("poplar_compiler.cc",
              fmt::format("Begin XLA compilation: {}  (Hash: {}) for ordinal  0", module.name(),
                          hlo::FingerprintToString(fingerprint)));
  return Parsed{std::move(module), fingerprint, std::move(target)};
}

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Expected<CompiledModule> CompileParsed(Parsed parsed, const SessionOptions& options,
                                       CompileLog& log, Clock::time_point start) {
  const hlo::Module& module = parsed.module;
  const Target& target = parsed.target;
  // Only a real compile has compile events: a cache hit has none, nor does
  // a module the original would not have compiled for the device.
  std::string skipped = SkipEngineCompilationLine(module);
  if (!skipped.empty()) log.Verbose("poplar_compiler.cc", skipped);
  if (options.events != nullptr && skipped.empty())
    TILEPROF_RETURN_IF_ERROR(options.events->CompileBegin(module.name()));
  ProgressMode mode = options.progress;
  std::FILE* bar_out =
      ShouldShowProgress(mode, options.progress_out, log.Enabled(LogLevel::kVerbose),
                         ExpensiveInstructions(module))
          ? options.progress_out
          : nullptr;
  ProgressBar bar(bar_out, module.name());
  // The VLOG twin of the bar: a line per percent of compileGraph progress.
  std::mutex twin_mutex;
  uint64_t twin_percent = 0;
  const bool twin = log.Enabled(LogLevel::kVerbose);
  compiler::CompileMonitor monitor{
      .log = &log, .progress = [&](CompileStage stage, uint64_t done, uint64_t total) {
        bar.Set(stage, done, total);
        if (!twin || stage != CompileStage::kGraphCompilation || total == 0) return;
        const uint64_t percent = std::min(done, total) * 100 / total;
        std::lock_guard lock(twin_mutex);
        if (percent <= twin_percent) return;
        twin_percent = percent;
        log.Verbose("poplar_compiler.cc", fmt::format("Poplar compilation {}% complete", percent));
      }};
  Expected<compiler::CompileResult> result =
      compiler::CompileModule(module, target, options.compile, monitor);
  bar.Finish();
  if (!result)
    return result.error().Within(
        fmt::format("compiling {} for {}", module.name(), target.ArchString()));
  log.Verbose("poplar_compiler.cc", fmt::format("End XLA compilation: {} (Hash: {})", module.name(),
                                                hlo::FingerprintToString(parsed.fingerprint)));
  return CompiledModule{std::move(parsed.module), parsed.fingerprint,  std::move(parsed.target),
                        std::move(*result),       SecondsSince(start), {},
                        std::move(skipped)};
}

}  // namespace

exec::ExecutableInfo ExecutableInfoOf(const CompiledModule& compiled) {
  exec::ExecutableInfo info;
  info.tool_version = TILEPROF_VERSION;
  info.module_name = std::string(compiled.module.name());
  info.fingerprint = compiled.fingerprint;
  info.target = {std::string(compiled.target.ArchString()), compiled.target.NumIpus(),
                 compiled.target.TilesPerIpu()};
  return info;
}

std::string SkipEngineCompilationLine(const hlo::Module& module) {
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr || entry->root() == nullptr) return "";
  // The leaves of the root, looking through tuples.
  std::vector<const hlo::Instruction*> outputs;
  std::vector<const hlo::Instruction*> pending{entry->root()};
  while (!pending.empty()) {
    const hlo::Instruction* at = pending.back();
    pending.pop_back();
    if (hlo::OpcodeName(at->opcode()) == "tuple") {
      for (const hlo::Instruction* operand : at->operands()) pending.push_back(operand);
    } else {
      outputs.push_back(at);
    }
  }
  auto all_outputs = [&](std::string_view opcode) {
    return !outputs.empty() &&
           std::all_of(outputs.begin(), outputs.end(), [&](const hlo::Instruction* out) {
             return hlo::OpcodeName(out->opcode()) == opcode;
           });
  };
  if (all_outputs("constant")) return "Skip engine compilation - output is constant.";
  if (all_outputs("parameter")) return "Skip engine compilation - all outputs are inputs.";
  static constexpr std::string_view kScalarOk[] = {
      "parameter",   "constant",  "tuple",    "get-tuple-element",
      "add",         "subtract",  "multiply", "divide",
      "maximum",     "minimum",   "negate",   "abs",
      "exponential", "log",       "sqrt",     "rsqrt",
      "tanh",        "compare",   "select",   "convert",
      "and",         "or",        "not",      "xor",
      "power",       "remainder", "sign",     "floor",
      "ceil"};
  for (const hlo::Instruction* instruction : entry->instructions()) {
    const std::string_view opcode = hlo::OpcodeName(instruction->opcode());
    if (std::find(std::begin(kScalarOk), std::end(kScalarOk), opcode) == std::end(kScalarOk))
      return "";
    const hlo::Shape& shape = instruction->shape();
    if (shape.IsArray() && shape.rank() != 0) return "";
  }
  return "Skip engine compilation - scalar elementwise graph.";
}

Expected<CompiledModule> CompileHloFile(const std::string& path, const SessionOptions& options,
                                        CompileLog& log) {
  auto start = Clock::now();
  TILEPROF_ASSIGN_OR_RETURN(Parsed parsed, ParseHloFile(path, options, log));
  return CompileParsed(std::move(parsed), options, log, start);
}

std::string_view CacheOutcomeName(CacheOutcome outcome) {
  switch (outcome) {
    case CacheOutcome::kDisabled:
      return "disabled";
    case CacheOutcome::kHit:
      return "hit";
    case CacheOutcome::kMiss:
      return "miss";
    case CacheOutcome::kReplaced:
      return "replaced";
    case CacheOutcome::kNotCacheable:
      return "not cacheable";
    case CacheOutcome::kNotSaved:
      return "not saved";
  }
  return "?";
}

std::string CacheOptionsText(const SessionOptions& options) {
  const compiler::CompileOptions& c = options.compile;
  return CompileKeyText(options.flags, options.engine) +
         fmt::format(
             "compile.grain_bytes={}\ncompile.min_bytes_per_tile={}\ncompile.rotate_start_tile={}\n"
             "compile.set_seed_on_every_tile={}\ncompile.instrument_vertices={}\n",
             c.grain_bytes, c.min_bytes_per_tile, c.rotate_start_tile, c.set_seed_on_every_tile,
             c.instrument_vertices);
}

uint64_t ExecutableCacheKey(const hlo::Module& module, const Target& target,
                            const SessionOptions& options) {
  return exec::ComputeCacheKey({.fingerprint = hlo::Fingerprint(module),
                                .target = exec::TargetKeyText(target),
                                .options_text = CacheOptionsText(options)});
}

namespace {

// The cached executable for `status.key` when its file is there and is
// what the key stands for; else nullopt, with why in status.problem (empty
// when there is no file), warning once per new problem.
std::optional<exec::Executable> TryLoad(exec::ExecutableCache& cache, const Parsed& parsed,
                                        const SessionOptions& options, exec::LoadParts parts,
                                        CompileLog& log, CacheStatus& status) {
  std::error_code error;
  if (!std::filesystem::exists(status.path, error)) {
    status.problem.clear();
    return std::nullopt;
  }
  PhaseScope phase(log, "Loading executable");
  exec::ExecutableCache::Lookup lookup = cache.Load(status.key, parts);
  if (lookup.kind == exec::ExecutableCache::LookupKind::kLoaded) {
    // Equal keys from different inputs would be a hash collision (or a
    // file copied under another name): check what the key stands for.
    const exec::ExecutableInfo& info = lookup.executable->info;
    if (info.fingerprint == parsed.fingerprint && info.key_text == CacheOptionsText(options) &&
        lookup.executable->target.ArchString() == parsed.target.ArchString() &&
        lookup.executable->target.NumIpus() == parsed.target.NumIpus() &&
        lookup.executable->target.TilesPerIpu() == parsed.target.TilesPerIpu())
      return std::move(*lookup.executable);
    lookup.kind = exec::ExecutableCache::LookupKind::kCorrupt;
    lookup.problem = fmt::format(
        "{}: holds module {} (fingerprint {}) for other inputs than {} (fingerprint {})",
        status.path, info.module_name, hlo::FingerprintToString(info.fingerprint),
        parsed.module.name(), hlo::FingerprintToString(parsed.fingerprint));
  }
  if (lookup.kind == exec::ExecutableCache::LookupKind::kCorrupt &&
      lookup.problem != status.problem)
    log.Warning("poplar_executor.cc", fmt::format("{}; compiling again", lookup.problem));
  status.problem = lookup.problem;
  return std::nullopt;
}

}  // namespace

Expected<CompiledModule> LoadOrCompile(const std::string& path, const SessionOptions& options,
                                       CompileLog& log, exec::LoadParts parts) {
  auto start = Clock::now();
  TILEPROF_ASSIGN_OR_RETURN(Parsed parsed, ParseHloFile(path, options, log));
  const std::string& directory = options.flags.executable_cache_path;
  if (directory.empty()) return CompileParsed(std::move(parsed), options, log, start);

  exec::ExecutableCache cache(directory);
  CacheStatus status;
  status.key = exec::ComputeCacheKey({.fingerprint = parsed.fingerprint,
                                      .target = exec::TargetKeyText(parsed.target),
                                      .options_text = CacheOptionsText(options)});
  status.path = cache.ExecutablePath(status.key);
  const std::string module_name(parsed.module.name());
  if (!NonHashableUserOps(parsed.module).empty()) {
    log.Info("poplar_compiler.cc", kNotCacheableMessage);
    TILEPROF_ASSIGN_OR_RETURN(CompiledModule compiled,
                              CompileParsed(std::move(parsed), options, log, start));
    status.outcome = CacheOutcome::kNotCacheable;
    compiled.cache = std::move(status);
    return compiled;
  }
  TILEPROF_RETURN_IF_ERROR(cache.EnsureDirectory());

  // A hit returns before any compile phase or progress bar, as the original.
  const auto loaded = [&](exec::Executable executable) {
    log.Verbose("poplar_compiler.cc", fmt::format("Loaded {} from {}", module_name, status.path));
    status.outcome = CacheOutcome::kHit;
    return CompiledModule{std::move(parsed.module),     parsed.fingerprint,
                          std::move(executable.target), std::move(executable.result),
                          SecondsSince(start),          std::move(status)};
  };
  if (auto executable = TryLoad(cache, parsed, options, parts, log, status))
    return loaded(std::move(*executable));
  if (status.problem.empty())
    log.Verbose("poplar_compiler.cc",
                fmt::format("Couldn't find {} in executable cache", status.path));

  // Compile once across processes: whoever waited for the lock finds the
  // executable the holder saved.
  exec::FileLock compile_lock(cache.CompileLockPath(status.key), exec::FileLock::Mode::kExclusive);
  if (auto executable = TryLoad(cache, parsed, options, parts, log, status))
    return loaded(std::move(*executable));
  std::string module_text = hlo::PrintModule(
      parsed.module, {.style = hlo::PrintStyle::kShort, .level = hlo::kLevelCosmetic});
  TILEPROF_ASSIGN_OR_RETURN(CompiledModule compiled,
                            CompileParsed(std::move(parsed), options, log, start));
  exec::ExecutableInfo info = ExecutableInfoOf(compiled);
  info.key = status.key;
  info.key_text = CacheOptionsText(options);
  std::string bytes = exec::SerializeExecutable(info, compiled.result);
  if (Status stored = cache.Store(status.key, bytes, module_text); !stored) {
    log.Warning("poplar_executor.cc", fmt::format("could not save the executable to the cache: {}",
                                                  stored.error().message()));
    status.outcome = CacheOutcome::kNotSaved;
    status.problem = stored.error().message();
  } else {
    status.outcome = status.problem.empty() ? CacheOutcome::kMiss : CacheOutcome::kReplaced;
  }
  compiled.cache = std::move(status);
  return compiled;
}

Expected<bool> ApplyDeviceConnection(const ReportConfig& config, SessionOptions& options) {
  if (config.device_connection != "pre-compile") return false;
  if (config.ipu_version.empty()) return Error(std::string(kPrecompileNeedsIpuVersionMessage));
  options.target.preset = config.ipu_version;
  return true;
}

Expected<CompiledModule> PrecompileHloFile(const std::string& path, const SessionOptions& options,
                                           CompileLog& log, exec::LoadParts parts) {
  TILEPROF_RETURN_IF_ERROR(CheckPrecompileCachePath(options.flags.executable_cache_path));
  {
    // Checked before compiling, on a module parsed without logging.
    TILEPROF_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    TILEPROF_ASSIGN_OR_RETURN(hlo::Module module,
                              hlo::ParseModule(std::move(text), {.source_name = path}));
    TILEPROF_RETURN_IF_ERROR(CheckPrecompilable(module));
  }
  TILEPROF_ASSIGN_OR_RETURN(CompiledModule compiled, LoadOrCompile(path, options, log, parts));
  if (compiled.cache.outcome == CacheOutcome::kNotSaved) return Error(compiled.cache.problem);
  log.Info("poplar_compiler.cc", PrecompiledSavedMessage(compiled.cache.path));
  return compiled;
}

}  // namespace tileprof::engine
