#include "engine/session/session.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>

#include "common/file.h"
#include "engine/hlo/fingerprint.h"
#include "engine/hlo/parser.h"
#include "engine/session/event_sink.h"

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
        case hlo::Opcode::kTriangularSolve: ++count; break;
        default: break;
      }
    }
  }
  return count;
}

std::string OutOfMemoryMessage(const std::string& profile_path) {
  return "Out of memory: Cannot fit all variable data onto one or more tiles. Profile saved to: " +
         profile_path;
}

Expected<CompiledModule> CompileHloFile(const std::string& path, const SessionOptions& options, CompileLog& log) {
  auto start = std::chrono::steady_clock::now();
  TILEPROF_ASSIGN_OR_RETURN(Target target, ResolveTarget(options));
  TILEPROF_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  TILEPROF_ASSIGN_OR_RETURN(hlo::Module module, hlo::ParseModule(std::move(text), {.source_name = path}));
  uint64_t fingerprint = hlo::Fingerprint(module);
  std::string hash = hlo::FingerprintToString(fingerprint);
  if (options.events != nullptr) TILEPROF_RETURN_IF_ERROR(options.events->CompileBegin(module.name()));
  log.Verbose("poplar_compiler.cc", fmt::format("Begin XLA compilation: {}  (Hash: {}) for ordinal  0",
                                                module.name(), hash));

  ProgressMode mode = options.progress;
  std::FILE* bar_out =
      ShouldShowProgress(mode, options.progress_out, log.Enabled(LogLevel::kVerbose), ExpensiveInstructions(module))
          ? options.progress_out
          : nullptr;
  ProgressBar bar(bar_out, module.name());
  bar.SetStage(CompileStage::kGraphConstruction, 1);
  Expected<compiler::CompileResult> result = [&] {
    PhaseScope phase(log, "graphConstruction");
    log.Verbose("poplar_compiler.cc", "Begin Poplar graph construction.");
    auto compiled = compiler::CompileModule(module, target, options.compile);
    log.Verbose("poplar_compiler.cc", "End Poplar graph construction.");
    return compiled;
  }();
  bar.Tick();
  bar.Finish();
  if (!result) return result.error().Within(fmt::format("compiling {} for {}", module.name(), target.ArchString()));
  log.Verbose("poplar_compiler.cc", fmt::format("End XLA compilation: {} (Hash: {})", module.name(), hash));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return CompiledModule{std::move(module), fingerprint, target, std::move(*result), seconds};
}

}  // namespace tileprof::engine
