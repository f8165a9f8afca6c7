// Internal to engine/sim: a tensor's or a vertex field's bytes split where
// the tile holding them changes, what the planner (plan.cc) turns into
// gathers, exchanges and in-place fields.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "common/expected.h"
#include "engine/graph/graph.h"
#include "engine/sim/plan.h"
#include "engine/sim/storage.h"

namespace tileprof::engine::sim {

// A tensor's bytes on one tile, in its variable's storage (StorageLayout).
struct Piece {
  ByteRun run;
  uint32_t tile = 0;
};

// A tensor's pieces in element order; an error names unmapped elements.
Expected<std::vector<Piece>> Pieces(const Graph& graph, const StorageLayout& storage,
                                    const Tensor& tensor);

// The same for a vertex field, into `pieces` (cleared first: one vector
// reused for every field), walking its strided runs: each row is looked for
// first in the tile run the row before ended in, where a search per region
// was a sixth of preparing ResNet-50 to run.
Status FieldPieces(const Graph& graph, const StorageLayout& storage, const FieldView& field,
                   std::vector<Piece>& pieces);

// Pieces adjacent in one variable's storage joined (the tile no longer
// matters).
std::vector<ByteRun> Runs(std::span<const Piece> pieces);
// The same into `runs` (cleared first).
void Runs(std::span<const Piece> pieces, std::vector<ByteRun>& runs);

}  // namespace tileprof::engine::sim
