// The session: what `tileprof compile` (and later `run`) does between the
// command line and the engine stages: read the options users set in the
// environment, parse the HLO, log the original's compile lines, show the
// progress bar, compile, and say what happened (../shared/DESIGN.md, "Data
// flow of tileprof run").
//
//   auto env = ReadEnvironment();                        // TF_POPLAR_FLAGS, ...
//   SessionOptions options{.target = {"ipu2"}, .flags = env->flags, .engine = env->engine};
//   CompileLog log(stderr, env->log_level);
//   auto compiled = CompileHloFile("model.hlo", options, log);
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "common/expected.h"
#include "engine/compiler/compile_log.h"
#include "engine/compiler/compiler.h"
#include "engine/compiler/progress_bar.h"
#include "engine/exec/executable.h"
#include "engine/hlo/module.h"
#include "engine/session/options.h"
#include "engine/target/target.h"

namespace tileprof::engine {

class EventSink;

// The environment variables users set, parsed. Errors name the variable.
struct Environment {
  PoplarFlags flags;     // TF_POPLAR_FLAGS
  EngineOptions engine;  // POPLAR_ENGINE_OPTIONS
  // TF_POPLAR_VLOG_LEVEL / TF_CPP_MIN_VLOG_LEVEL >= 1: verbose;
  // POPLAR_LOG_LEVEL=INFO or DEBUG: info; otherwise warnings only.
  LogLevel log_level = LogLevel::kWarning;
};
Expected<Environment> ReadEnvironment();

struct SessionOptions {
  TargetOptions target;
  PoplarFlags flags;
  EngineOptions engine;
  ProgressMode progress = ProgressMode::kAuto;
  std::FILE* progress_out = stdout;  // where the bar goes (the original: stdout)
  compiler::CompileOptions compile;
  // Gets COMPILE_BEGIN once the module is parsed, before graph
  // construction (the caller sends COMPILE_END when its reports are
  // serialised: the original's duration covers that). May be null.
  EventSink* events = nullptr;
};

// What the executable cache did for one module.
enum class CacheOutcome : uint8_t {
  kDisabled,      // no cache path
  kHit,           // loaded, not compiled
  kMiss,          // compiled and saved
  kReplaced,      // the cached file was corrupt: compiled and saved over it
  kNotCacheable,  // custom user operations not marked hashable: compiled, not saved
  kNotSaved,      // compiled, but the directory could not be written
};
std::string_view CacheOutcomeName(CacheOutcome outcome);  // "hit", "miss", ...

struct CacheStatus {
  CacheOutcome outcome = CacheOutcome::kDisabled;
  uint64_t key = 0;
  std::string path;     // the executable's path in the cache
  std::string problem;  // kReplaced, kNotSaved: what was wrong
};

struct CompiledModule {
  hlo::Module module;
  uint64_t fingerprint = 0;  // hlo::Fingerprint: the "Hash: 0x..." of the log lines
  Target target;
  compiler::CompileResult result;
  double seconds = 0;  // parse + compile (or load) wall time
  CacheStatus cache;
  // The original's "Skip engine compilation - <reason>." (the module would
  // run on the host there): compiled here all the same, but without compile
  // events. "" when not skipped.
  std::string skipped_engine_compilation;
};

// What an executable of `compiled` says about itself: the writer, module,
// fingerprint and target (the cache adds its key and key text).
exec::ExecutableInfo ExecutableInfoOf(const CompiledModule& compiled);

// The original's reason to skip engine compilation of `module`, as its VLOG
// line says it ("Skip engine compilation - output is constant."), or "":
// the entry's outputs are all constants, all parameters, or every
// instruction is scalar and elementwise.
std::string SkipEngineCompilationLine(const hlo::Module& module);

// Parses and compiles the file's module. A parse error carries the
// file:line:col message; a compile error names the instruction.
Expected<CompiledModule> CompileHloFile(const std::string& path, const SessionOptions& options,
                                        CompileLog& log);

// CompileHloFile through the executable cache when
// options.flags.executable_cache_path is set (spec sections 1-5): a hit logs
// "Loaded <module> from <file>" (verbose) and returns without compiling (no
// progress bar, no compile phases); a miss logs "Couldn't find <file> in
// executable cache", compiles and saves. A corrupt cached file is reported
// as a warning naming it, then recompiled and replaced. `tileprof compile`
// and `tileprof run` both come through here. With exec::LoadParts::kReport a
// hit loads only what a report needs (result.graph is then null, see
// executable.h); a compile always gives everything.
Expected<CompiledModule> LoadOrCompile(const std::string& path, const SessionOptions& options,
                                       CompileLog& log,
                                       exec::LoadParts parts = exec::LoadParts::kAll);

// The cache key of `module` compiled with `options` for `target`: the
// module's canonical fingerprint, the target and CacheOptionsText.
uint64_t ExecutableCacheKey(const hlo::Module& module, const Target& target,
                            const SessionOptions& options);
// The program-changing options: CompileKeyText of the flags and engine
// options, plus the compiler's own options. Report, profiling, logging and
// progress options are not in it.
std::string CacheOptionsText(const SessionOptions& options);

// Pre-compile mode (spec section 6): checks that a cache path is set and
// the module can be pre-compiled (the original's messages), then
// LoadOrCompile; logs (INFO) "A pre-compiled Poplar program has been saved
// to <file>" once the executable is in the cache.
Expected<CompiledModule> PrecompileHloFile(const std::string& path, const SessionOptions& options,
                                           CompileLog& log,
                                           exec::LoadParts parts = exec::LoadParts::kAll);

// The device connection of a --config / command line (ReportConfig): true
// for pre-compile mode, whose target is then `ipu_version` (the original's
// error when it is unset). `tileprof run` calls this, then
// PrecompileHloFile or LoadOrCompile.
Expected<bool> ApplyDeviceConnection(const ReportConfig& config, SessionOptions& options);

// The target the options ask for: --ipu_model_tiles in TF_POPLAR_FLAGS sets
// the tiles per IPU unless the command line did.
Expected<Target> ResolveTarget(const SessionOptions& options);

// Opcodes whose presence makes the original show its progress bar
// (AllReduce, Cholesky, Convolution, CustomCall, Dot, Infeed, Outfeed,
// TriangularSolve), counted over the module.
int64_t ExpensiveInstructions(const hlo::Module& module);

// "Out of memory: Cannot fit all variable data onto one or more tiles.
// Profile saved to: <path>" — Poplar's graph_memory_allocation_error text.
std::string OutOfMemoryMessage(const std::string& profile_path);

}  // namespace tileprof::engine
