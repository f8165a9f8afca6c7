// Internal to engine/compiler: the not-always-live pool of one tile
// (memory_model.cc). Pieces are placed first-fit by liveness; the Variables
// category is the peak of live bytes; the largest allocations are named for
// the report's `variables` list.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "reports/report.h"

namespace tileprof::engine::compiler {

inline constexpr VariableId kNoVariable = UINT32_MAX;

// A not-always-live allocation on one tile: a run of a variable, or an
// exchange receive buffer (variable kNoVariable).
struct Piece {
  uint64_t bytes = 0;
  uint64_t first = 0;  // steps, inclusive
  uint64_t last = 0;
  VariableId variable = kNoVariable;
  uint64_t offset = 0;  // within the pool, set by FirstFitExtent
};

struct PoolExtent {
  uint64_t extent = 0;  // the end of the highest piece
  uint64_t peak = 0;    // the most bytes live at once
};

// First-fit placement of the pieces by liveness: sorts them by first step
// (largest first within a step) and sets each offset. A piece is live from
// its first step to its last, inclusive.
PoolExtent FirstFitExtent(std::vector<Piece>& pieces);

// An always-live constant on the tile, at `offset` from the tile's start.
struct PlacedConstant {
  VariableId variable = kNoVariable;
  uint64_t bytes = 0;
  uint64_t offset = 0;
};

// How many allocations per tile the report names: enough for `tileprof oom`
// to list the largest on the worst tiles, bounded so that a report of a
// million-vertex graph stays small (every variable on every tile would be
// millions of rows).
inline constexpr size_t kVariablesPerTile = 32;

// The largest allocations on tile `tile`, largest first, at most
// kVariablesPerTile: variables (runs of one variable merged), constants, and
// exchange receive buffers, named by `buffer_name(step)` (an overflowing
// tile is often one whose vertices read a large operand from elsewhere).
// Pieces sit at pool_start + offset.
std::vector<report::Variable> LargestVariables(
    const Graph& graph, uint32_t tile, std::span<const Piece> pieces, uint64_t pool_start,
    std::span<const PlacedConstant> constants,
    const std::function<std::string(uint64_t step)>& buffer_name);

}  // namespace tileprof::engine::compiler
