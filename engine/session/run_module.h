// What `tileprof run` does with a module (../shared/DESIGN.md, "Data flow of
// tileprof run"): compile or load it, write its compile outputs, feed the
// first execution's parameters (.npy files, zeros or seeded random values,
// the seed stream), execute it `iterations` times on the tile simulator with
// the trace events of each execution, carry input_output_alias results into
// the next execution, and write the reports and result files afterwards.
// The command line only turns flags into RunOptions and prints the outcome,
// so the Python API or a viewer can run a module the same way.
//
//   CompileLog log(stderr, env.log_level);
//   auto events = EventSink::Open(settings, {.path = settings.config.files.events}, &log);
//   options.events = &*events;
//   auto compiled = CompileForRun("model.hlo", options, /*precompile=*/false, log);
//   auto ran = RunCompiled(*compiled, {.iterations = 5}, settings, false, *events, log, {});
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/expected.h"
#include "engine/compiler/compile_log.h"
#include "engine/session/elided_fill.h"
#include "engine/session/event_sink.h"
#include "engine/session/report_output.h"
#include "engine/session/session.h"
#include "engine/sim/simulator.h"

namespace tileprof::engine {

struct RunOptions {
  uint64_t iterations = 1;
  // Parameters no input file names: zeros, or seeded random values
  // (RandomInput).
  bool random_inputs = false;
  uint64_t seed = 0;                     // of random inputs and of the device's seed stream
  std::vector<std::string> input_files;  // "NAME_OR_INDEX=FILE.npy" each
  std::string outputs_dir;               // "": no out.<i>.npy files
  uint32_t threads = 0;                  // host threads of the simulator; 0: all cores
  bool ipu_model = false;                // cost as the IPU Model (TF_POPLAR_FLAGS=--use_ipu_model)
  // Constants the HLO text elides: refused (kError), or filled with zeros or
  // seeded random values, a warning logged for each (elided_fill.h).
  ElidedConstants elided_constants = ElidedConstants::kError;
};

// One scalar result leaf of an execution: the number a training step prints.
struct ScalarResult {
  std::string stream;  // "out.4"
  std::string label;   // the instruction that produced it: "divide.97"
  std::string value;   // FormatElement: "2.31997"
};

struct RunCallbacks {
  // After each execution, with its scalar results in result order.
  std::function<void(uint64_t execution, const std::vector<ScalarResult>& scalars)> executed;
  // Pre-compile mode: the executable is saved (and zero results written)
  // and the event file is about to be closed.
  std::function<void()> precompiled;
};

struct RunOutcome {
  bool ran = false;    // false: pre-compile mode, nothing executed
  double seconds = 0;  // wall time of the executions
  uint64_t total_cycles = 0;
  uint32_t threads = 0;  // host threads the simulator used
  // Every report file written, compile step first, and the compile step's
  // notes for the user (already logged).
  std::vector<std::string> files;
  std::vector<std::string> notes;
  // Kept rather than destroyed on return: a caller that is done ends the
  // process without tearing it down (cli's ExitWithoutTeardown).
  std::unique_ptr<sim::Simulator> simulator;
};

// The compile step of a run: pre-compile mode attaches no device and
// compiles (or loads) everything through PrecompileHloFile; otherwise logs
// the original's device line and loads what the simulator needs through
// LoadOrCompile. Errors are those of the compile (a parse error reads
// "file:line:col: error: ...").
Expected<CompiledModule> CompileForRun(const std::string& model, const SessionOptions& options,
                                       bool precompile, CompileLog& log);

// Runs `compiled` as `tileprof run` does, sending its trace events to
// `events` and closing it. The compile report goes to the report files
// before the run only for a graph that will not run (out of memory,
// pre-compile); after the run they get both reports. Errors (each message
// says what failed; an execution's is prefixed "execution N: "):
// out-of-memory tiles (OutOfMemoryMessage, once the report is written),
// bad --input specifications or files, a program the simulator refuses
// (with a hint at --elided-constants when the module has elided constants
// and they are not filled), a failed execution, a file that cannot be
// written.
Expected<RunOutcome> RunCompiled(const CompiledModule& compiled, const RunOptions& options,
                                 const ReportSettings& settings, bool precompile, EventSink& events,
                                 CompileLog& log, const RunCallbacks& callbacks);

}  // namespace tileprof::engine
