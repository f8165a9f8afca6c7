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
#include "engine/hlo/module.h"
#include "engine/session/options.h"
#include "engine/target/target.h"

namespace tileprof::engine {

class EventSink;

// The environment variables users set, parsed. Errors name the variable.
struct Environment {
  PoplarFlags flags;      // TF_POPLAR_FLAGS
  EngineOptions engine;   // POPLAR_ENGINE_OPTIONS
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

struct CompiledModule {
  hlo::Module module;
  uint64_t fingerprint = 0;  // hlo::Fingerprint: the "Hash: 0x..." of the log lines
  Target target;
  compiler::CompileResult result;
  double seconds = 0;  // parse + compile wall time
};

// Parses and compiles the file's module. A parse error carries the
// file:line:col message; a compile error names the instruction.
Expected<CompiledModule> CompileHloFile(const std::string& path, const SessionOptions& options, CompileLog& log);

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
