// Internal to engine/compiler: default tile mapping of new tensors.
#pragma once

#include <cstdint>

#include "common/expected.h"
#include "engine/graph/graph.h"

namespace tileprof::engine::compiler {

struct CompileOptions;

// Maps tensors linearly: consecutive elements fill a tile in chunks that are
// a multiple of the grain, then move to the next tile, wrapping around the
// target. With rotation each tensor starts on the tile after the last one
// the previous tensor used.
class LinearMapper {
 public:
  LinearMapper(Graph& graph, const CompileOptions& options);

  // Elements per tile for `elements` elements of `type`.
  uint64_t ChunkElements(uint64_t elements, ElementType type) const;
  // Maps every element of the whole-variable tensor `tensor`.
  Status Map(const Tensor& tensor);
  // Maps the tensor on tile `tile` only.
  Status MapToTile(const Tensor& tensor, uint32_t tile);
  // Reserves `count` consecutive tiles (wrapping) for a planned op and
  // returns the first; the next tensor starts after them.
  uint32_t TakeTiles(uint64_t count);
  // Maps `out` like `like` (same element count): element i of out goes where
  // element i of like lives. Falls back to Map when `like` is unmapped in
  // places or split into runs smaller than the grain.
  Status MapLike(const Tensor& out, const Tensor& like);

 private:
  Graph& graph_;
  const CompileOptions& options_;
  uint32_t next_tile_ = 0;
};

}  // namespace tileprof::engine::compiler
