// Internal to engine/sim: what the simulator works out once, before the
// first run, for every step the program can reach: where each vertex field's
// bytes are, which fields can be used in place, how big the scratch arena
// must be, and what each step costs (a step's cost depends on the graph,
// never on the data, so it is computed once).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/expected.h"
#include "engine/graph/graph.h"
#include "engine/graph/program.h"
#include "engine/sim/cycle_model.h"
#include "engine/sim/storage.h"
#include "engine/sim/thread_pool.h"

namespace tileprof::engine::sim {

// Bytes [begin, end) of one variable's buffer.
struct ByteRun {
  VariableId variable = 0;
  uint64_t begin = 0;
  uint64_t end = 0;
};

// Runs of one variable, of one length, evenly spaced, or in evenly spaced
// blocks of evenly spaced runs: the field's rows; not strided() otherwise
// (fewer than two runs, overlapping rows, anything irregular).
FieldRows EvenRows(std::span<const ByteRun> runs);

// `runs` (in order) as strided runs of bytes (StridedRegion, region_list.h,
// in bytes rather than elements), into `rows`: how a field's runs are kept.
// A gathered field is mostly rows of a box at one distance (a
// convolution's input); a ByteRun per row was 12.8 million runs and over
// 1 GB of host memory for ResNet-50's inference graph.
void CompressRuns(std::span<const ByteRun> runs, std::vector<StridedRegion>& rows);

// A field's or a transfer's strided run resolved to the simulator's buffer of its variable
// (Simulator::Create does it once, when the buffers exist; they never move
// after), so that gathering a field is one pass over pointers, not a lookup
// of each run's variable.
struct HostRun {
  std::byte* at = nullptr;
  uint64_t bytes = 0;
  int64_t stride = 0;
  uint64_t count = 1;
};

struct FieldPlan {
  std::vector<StridedRegion> runs;  // bytes, in the field's order; freed once resolved
  std::vector<HostRun> host;        // the runs resolved (Simulator::Create)
  uint64_t bytes = 0;
  bool written = false;
  bool in_place = false;      // one run, or rows (VertexPlan::rows), used where it lies
  uint64_t arena_offset = 0;  // where it is gathered otherwise
};

struct VertexPlan {
  VertexId id = 0;
  const Codelet* codelet = nullptr;
  std::vector<FieldPlan> fields;
  std::vector<uint32_t> params;
  std::vector<FieldRows> rows;  // empty unless a field is given as rows (Codelet::ReadsRows)
  std::vector<std::span<std::byte>> spans;  // set by Simulator::Create: the buffers never move
};

// A field that is not used in place: its runs copied to its bytes of the
// arena before the tile's vertices run (and back after, when written).
struct ArenaCopy {
  std::byte* arena = nullptr;
  std::span<const HostRun> runs;
};

struct TilePlan {
  uint32_t tile = 0;
  std::vector<VertexPlan> vertices;    // in creation order
  std::vector<ArenaCopy> gathers;      // the fields not in place (Simulator::Create)
  std::vector<ArenaCopy> write_backs;  // those of them that are written
};

// What running a compute set reads, packed by Simulator::Create from its
// TilePlans (which are freed then): every vertex, field span, parameter,
// row layout and copy of the compute set in one array each, in tile order.
// A TilePlan is a tree of vectors, and with a few vertices on a tile (the
// MNIST sample's compute sets have about one a tile) each vertex cost
// several cache misses before its codelet ran; packed, a step reads its
// plan front to back.
struct PackedVertex {
  const Codelet* codelet = nullptr;
  std::span<const std::span<std::byte>> spans;
  std::span<const uint32_t> params;
  std::span<const FieldRows> rows;
  VertexId id = 0;
};

struct PackedTile {
  uint32_t tile = 0;
  std::span<const PackedVertex> vertices;
  std::span<const ArenaCopy> gathers;
  std::span<const ArenaCopy> write_backs;
};

struct PackedComputeSet {
  std::vector<PackedTile> tiles;
  std::vector<PackedVertex> vertices;
  std::vector<std::span<std::byte>> spans;
  std::vector<uint32_t> params;
  std::vector<FieldRows> rows;
  std::vector<ArenaCopy> copies;  // each tile's gathers, then its write-backs
  std::vector<HostRun> host;      // the copies' runs
};

// `tiles`, their spans, gathers and write-backs set, packed. The spans of
// the result point into its own vectors (moving it keeps them valid).
PackedComputeSet Pack(std::span<const TilePlan> tiles);

struct CodeletCount {
  uint32_t codelet = 0;  // index into Plans::codelets
  uint64_t instances = 0;
  uint64_t cycles = 0;  // per execution of the compute set, codelet units
};

struct ComputeSetPlan {
  ComputeSetId id = 0;
  std::vector<TilePlan> tiles;  // tiles with vertices, in tile order; freed once packed
  PackedComputeSet packed;      // Simulator::Create
  bool scatters = false;        // some written field was gathered
  uint64_t arena_bytes = 0;
  StepCost cost;
  std::vector<CodeletCount> codelets;
};

// Copy, CopyFromStream and CopyToStream. A device copy goes through a
// buffer, so a source and destination that share bytes copy correctly.
struct TransferPlan {
  std::vector<StridedRegion> source;       // bytes; empty when from the host
  std::vector<StridedRegion> destination;  // bytes; empty when to the host
  std::vector<HostRun> host_source;        // the runs resolved (Simulator::Create)
  std::vector<HostRun> host_destination;
  uint64_t bytes = 0;
  StreamId stream = 0;
  StepCost cost;
};

// A problem that stops the program from running, found while planning.
struct Refusal {
  std::string instruction;  // vertex debug name (the HLO instruction)
  std::string reason;
};

struct Plans {
  std::unordered_map<ComputeSetId, ComputeSetPlan> compute_sets;
  std::unordered_map<const void*, TransferPlan> transfers;  // by program node
  std::vector<const Codelet*> codelets;                     // every type planned
  uint64_t arena_bytes = 0;                                 // the largest compute set's
  std::vector<Refusal> refusals;
  StorageLayout storage;  // where the planned byte runs lie in each variable's buffer
};

// Plans every step `program` can reach. Errors are graph inconsistencies
// (an unmapped element); refusals are collected in Plans::refusals.
// `busy_tiles`: each step's StepCost::busy_tiles are listed (a tile-level
// profile); without, they stay empty and cost nothing. `ipu_model`: host
// transfers at the IPU Model's link rate (cycle_model.h). `pool`: the
// compute sets are planned on its threads (the plans do not depend on how
// many).
Expected<Plans> PlanProgram(const Graph& graph, const program::Program& program,
                            std::span<const VariableId> valueless_constants,
                            bool busy_tiles = false, bool ipu_model = false,
                            ThreadPool* pool = nullptr);

// The cost of evaluating a control-flow predicate of `bytes`: a sync and a
// broadcast of the value to every tile.
StepCost PredicateCost(const Target& target, uint64_t bytes);

}  // namespace tileprof::engine::sim
