// Internal to engine/compiler: what is live at each step of the schedule,
// from the not-always-live pieces of every tile (memory_pool.h) as the
// memory model (memory_model.cc) gathers them: the bytes over all tiles, the
// fullest tile, and each variable and step's receive buffers with the steps
// it is live. The report's program tree (report_programs.h) records them.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/compiler/memory_pool.h"
#include "engine/graph/graph.h"
#include "engine/graph/program.h"
#include "reports/report.h"

namespace tileprof::engine::compiler {

// One step of the schedule and the not-always-live bytes (variables and
// receive buffers) live during it: summed over the tiles, and on the tile
// holding the most then.
struct StepLiveness {
  program::Program program;
  uint64_t not_always_live = 0;
  report::StepTile fullest;
  uint64_t receive_bytes = 0;    // of the step's exchange receive buffers, all tiles
  std::vector<uint64_t> by_ipu;  // each IPU's share of not_always_live; empty for one IPU
};

// Each tile's not-always-live pieces, indexed by tile.
using TilePieces = std::vector<std::span<const Piece>>;

// The bytes live during each of `steps` steps over all tiles.
std::vector<uint64_t> LiveBytesPerStep(const TilePieces& tiles, size_t steps);

// The bytes of each step's exchange receive buffers (pieces of no
// variable), over all tiles, by their first step.
std::vector<uint64_t> ReceiveBytesPerStep(const TilePieces& tiles, size_t steps);

// The tile with the most bytes live during each step (the lowest-numbered
// of equals; tile 0 with 0 bytes when nothing is live).
std::vector<report::StepTile> FullestTilePerStep(const TilePieces& tiles, size_t steps);

// Every not-always-live allocation over all tiles with the steps it is live:
// each variable once, each step's receive buffers once (named by
// `buffer_name(first step)`), largest first. Those live during a step sum to
// its LiveBytesPerStep.
std::vector<report::LiveVariable> NotAlwaysLiveVariables(
    const Graph& graph, const TilePieces& tiles, size_t steps,
    const std::function<std::string(uint64_t)>& buffer_name);

}  // namespace tileprof::engine::compiler
