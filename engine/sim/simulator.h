// The tile simulator: runs a compiled graph's control program with real
// numerics, tile by tile, and counts cycles with the model of
// cycle_model.h (docs/cycle-model.md). The engine's IPU Model.
//
//   auto sim = sim::Simulator::Create(compiled.result, {.threads = 4, .module = &module});
//   if (!sim) { /* e.g. "cannot run: gather.3 (gather) ..." */ }
//   sim::HostData inputs{{"a", bytes_of_a}, {"seed", seed_bytes}};
//   Expected<sim::RunResult> run = (*sim)->Run(inputs);   // run->outputs["out.0"]
//   report::ExecutionReport report = (*sim)->Report();     // all runs so far
//
// Memory. Each variable has one byte buffer holding its elements tile by
// tile, as the IPU keeps them (storage.h: a tile's elements of the variable
// in element order, the tiles in order), and the tile map says which tile
// each element lives on: a tile's memory is the set of elements mapped to
// it. Because an element lives on exactly one tile, this is the same state
// as one buffer per tile, without copying on every access; the tile map
// still decides which bytes are exchanged. Variables keep their contents
// from one Run to the next, as device memory does; constants start from
// their values. Host data (inputs, outputs, constants) is in element order,
// rearranged on the way in and out.
//
// A compute set runs in two phases over the tiles, each tile on one host
// thread at a time: (1) every vertex reads its fields (a field that is one
// run of one variable is used in place, others are gathered into a scratch
// arena) and runs its codelet; (2) written fields that were gathered are
// scattered back. A written field is used in place only when no other
// vertex of the compute set touches its elements, so every vertex sees the
// memory as it was before the compute set, whatever the thread count or
// order: results are deterministic.
//
// Host streams: a host-to-device stream's buffer (one per stream per Run)
// is what every copy from that stream reads; a device-to-host copy replaces
// the stream's output buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/expected.h"
#include "engine/compiler/compiler.h"
#include "engine/graph/graph.h"
#include "engine/graph/program.h"
#include "engine/hlo/module.h"
#include "reports/report.h"

namespace tileprof::engine::sim {

// Host data by stream name: the encoded elements (element_type.h encodings).
using HostData = std::map<std::string, std::vector<std::byte>, std::less<>>;
// A valueless constant's contents by variable (element_type.h encodings).
using FilledConstants = std::map<VariableId, std::vector<std::byte>>;

// The most per-tile step cycles a tile-level profile keeps (256 MiB).
inline constexpr uint64_t kMaxTileCycles = uint64_t{1} << 25;

struct SimOptions {
  uint32_t threads = 0;  // host threads; 0: all cores
  // Steps listed in the report's step table; later ones are summed into a
  // last "(N more steps)" row so a long loop cannot exhaust memory.
  size_t max_recorded_steps = 10000;
  // Each recorded step's busy cycles per tile (report::ExecutionStep::
  // cycles_by_tile: a tile-level profile, profile_execution "tile"); a
  // step costed for the whole chip gives every tile its whole duration.
  // Steps after the first kMaxTileCycles figures carry their totals only.
  bool tile_cycles = false;
  // Cost as Poplar's IPU Model does where it differs from the hardware: the
  // host link's rate (TF_POPLAR_FLAGS=--use_ipu_model; cycle_model.h).
  bool ipu_model = false;
  // A while loop that runs more iterations than this is an error (an HLO
  // loop whose condition never turns false would otherwise never end).
  uint64_t max_loop_iterations = 100'000'000;
  // When given, refusals name the HLO instruction with its opcode
  // ("gather.3 (gather)"); vertex debug names are instruction names.
  const hlo::Module* module = nullptr;
  // Contents the caller gives valueless constants (tileprof run
  // --elided-constants): these are not refused and start from these bytes,
  // exactly the variable's. Must outlive Create.
  const FilledConstants* filled_constants = nullptr;
};

struct RunResult {
  HostData outputs;     // every device-to-host stream the run wrote
  uint64_t cycles = 0;  // this run's total
};

class Simulator {
 public:
  // Prepares `program` on `graph` (which must outlive the simulator).
  // Refuses, before anything runs, a program that would run a vertex whose
  // codelet cannot execute, or read a constant whose values are unknown
  // (one of `valueless_constants` that options.filled_constants does not
  // fill); the message names every such instruction. A filled variable that
  // is not a valueless constant, or whose size is not the variable's, is an
  // error naming it.
  static Expected<std::unique_ptr<Simulator>> Create(
      const Graph& graph, const program::Program& program,
      std::span<const VariableId> valueless_constants, const SimOptions& options);
  static Expected<std::unique_ptr<Simulator>> Create(const compiler::CompileResult& compiled,
                                                     const SimOptions& options);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Runs the program once. `inputs` must hold exactly the bytes of every
  // host-to-device stream (errors name the stream and both sizes).
  Expected<RunResult> Run(const HostData& inputs);

  // The execution report over every Run so far.
  report::ExecutionReport Report() const;

  const Graph& graph() const;
  uint32_t threads() const;

  struct State;

 private:
  explicit Simulator(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace tileprof::engine::sim
