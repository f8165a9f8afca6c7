// Internal to engine/compiler: the per-tile memory model of
// docs/memory-model.md. Walks the control program in order (the schedule),
// derives the exchanges the graph implies (a vertex reading data held by
// another tile, a copy between tiles, host stream copies), computes variable
// liveness over the schedule, lays out each tile's memory (code, vertex
// state, stack, constants, then the not-always-live pool with first-fit
// reuse) and fills one report::TileMemory per tile.
//
// Every constant below is explained in docs/memory-model.md; the ones
// calibrated on seed 004 (the adder graph on a Mk1) say so.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/expected.h"
#include "engine/compiler/schedule_walk.h"
#include "engine/compiler/step_liveness.h"
#include "engine/graph/graph.h"
#include "engine/graph/program.h"
#include "reports/report.h"

namespace tileprof::engine::compiler {

namespace memory {
// Stack per tile: both published per-tile figures show 3,168 B (seed 004:
// 3,852,288 B over 1,216 tiles, and the OOM sample's tile 0).
inline constexpr uint64_t kStackBytes = 3168;
// Instrumentation: 4 B (a 32-bit cycle count) per vertex; seed 004 has
// 4,876 B for 1,219 vertices.
inline constexpr uint64_t kInstrumentationBytesPerVertex = 4;
// Control code: every tile runs every step of the control program (it must
// take part in each sync). A step that runs work on the tile costs a call
// into the step's code plus the sync: 8 instructions, 32 B. A step the tile
// sits out costs the sync and a branch past it: 2 instructions, 8 B.
// Adjacent stream copies merged into one host exchange (below) are one step:
// one call of the exchange's program (a model's 268 parameters streamed in
// had cost every tile 268 steps). The base is the program's entry, the host
// command loop and the exit path; it is the residual that makes seed 004's
// adder graph land on its published 851,272 B (700 B per tile).
inline constexpr uint64_t kControlCodeBaseBytes = 620;
inline constexpr uint64_t kControlCodePerActiveStep = 32;
inline constexpr uint64_t kControlCodePerIdleStep = 8;
// Internal exchange code per exchange step a tile takes part in (configure
// the exchange, sync, wait: 10 instructions) and per contiguous region it
// sends or receives (address and length, then the send/receive: 2
// instructions). Seed 004: 60,792 B over 1,216 tiles, about 50 B each, is
// one exchange of one region (the seed) per tile: 40 + 8 = 48 B.
inline constexpr uint64_t kExchangeCodePerStep = 40;
inline constexpr uint64_t kExchangeCodePerRegion = 8;
// Host exchange code: host transfers are a global phase, so every tile runs
// the host sync and the exchange program's prologue and epilogue for every
// host exchange (24 instructions, 96 B), and the tiles that send or receive
// add the transfer setup (16 instructions, 64 B) plus 8 B per region.
// Adjacent stream copies with no compute between them are one host
// exchange, as Poplar merges them (and TensorFlow's IPU backend merges its
// infeed copies). Seed 004: 351,328 B over 1,216 tiles is 289 B per tile for
// its 3 host exchanges (the seed; a, b and c; the result).
inline constexpr uint64_t kHostExchangeCodePerStep = 96;
inline constexpr uint64_t kHostExchangeCodePerActiveStep = 64;
inline constexpr uint64_t kHostExchangeCodePerRegion = 8;
// A host packet header per region a tile sends or receives (destination
// address and length in one 64-bit word).
inline constexpr uint64_t kHostPacketHeaderBytes = 8;
// Every tile takes part in every host exchange (the code model above charges
// each tile the host sync and the exchange program of every stream copy), so
// every tile keeps one packet header of its own for the host-exchange
// handshake, whether or not it moves data: seed 004 publishes 10,512 B of
// headers for a graph whose streamed data sits on one tile, which is about
// one 8-byte header per tile (1,216 x 8 = 9,728) plus the data's headers.
inline constexpr uint64_t kHostSyncPacketHeaderBytes = 8;
// Runtime variables Poplar keeps on every tile that takes part in host
// exchange: per host stream, the position in the stream's host buffer the
// tile's exchange program reads from or writes to (one 32-bit word the host
// advances between runs). Always live. With the seed copy every tile
// receives, this is what brings the adder's Variables from 8 B to 28 B per
// tile (seed 004: 39,108 B over 1,216 tiles, 32 B each).
inline constexpr uint64_t kStreamPositionBytes = 4;
// An on-tile copy region is done by the supervisor's copy program from a
// descriptor: source, destination and length, 8 B.
inline constexpr uint64_t kCopyDescriptorBytes = 8;
// Data is aligned for 64-bit loads and stores; code and vertex state are
// word-aligned.
inline constexpr uint64_t kDataAlignment = 8;
inline constexpr uint64_t kWordAlignment = 4;
}  // namespace memory

struct MemoryLayout {
  std::vector<report::VertexType> vertex_types;
  std::vector<report::TileMemory> tiles;  // one per tile of the target
  // The largest allocations of each tile (memory_pool.h), in tile order.
  std::vector<report::Variable> variables;
  uint64_t exchanges = 0;              // (step, tile) pairs that receive data from another tile
  uint64_t program_steps = 0;          // steps of the schedule
  std::vector<StepLiveness> liveness;  // one per step of the schedule, in order
  // Every always-live variable (constants), bytes over all tiles, largest first.
  std::vector<report::NamedBytes> always_live_variables;
  // Every not-always-live variable and step's receive buffers over all
  // tiles, with the steps they are live (indexes of `liveness`).
  std::vector<report::LiveVariable> not_always_live_variables;
};

struct MemoryOptions {
  bool instrument_vertices = true;
  // Threads walking the control program, each a consecutive range of steps;
  // 0: one per core, at most 4. The layout does not depend on it.
  uint32_t walkers = 0;
  // Poplar's compileGraph progress callback: (done, total) as the layout
  // goes, from the threads doing it.
  ProgressCallback progress;
};

// Lays out every tile. `valueless_constants` are variables that stand for
// constants (always live, category Constants).
Expected<MemoryLayout> LayOutMemory(const Graph& graph, const program::Program& program,
                                    std::span<const VariableId> valueless_constants,
                                    const MemoryOptions& options);

}  // namespace tileprof::engine::compiler
