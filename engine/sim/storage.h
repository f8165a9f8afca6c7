// Internal to engine/sim: where the simulator keeps each variable's
// elements in the variable's host buffer. As on the IPU, a tile's elements
// of a variable are one block, in element order, and the blocks follow in
// tile order (docs/memory-model.md); elements mapped to no tile follow them,
// in element order. A variable spread over tiles in short runs (a
// convolution's output cut into rows of channels) then keeps each tile's
// share together: a vertex that reads or writes its tile's share finds it in
// one run, used in place, where in element order it lay in a run per row
// and was gathered into scratch and written back at every execution (a
// fifth of the CNN sample's training step).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/graph/graph.h"

namespace tileprof::engine::sim {

class StorageLayout {
 public:
  StorageLayout() = default;
  explicit StorageLayout(const Graph& graph);

  // Where element `element` of `run`, the tile run `index` of the
  // variable's (graph.TileMapping), is kept, in elements from the start.
  uint64_t InRun(VariableId variable, size_t index, const TileRun& run, uint64_t element) const {
    if (InElementOrder(variable)) return element;
    return start_[variable][index] + (element - run.begin);
  }
  // The same for any element, mapped or not.
  uint64_t Of(const Graph& graph, VariableId variable, uint64_t element) const;
  // A variable's values in element order put in storage order into `out`,
  // which is as long.
  void ToStorage(const Graph& graph, VariableId variable, std::span<const std::byte> values,
                 std::span<std::byte> out) const;
  // Whether the variable is kept in element order (its values need no
  // rearranging).
  bool InElementOrder(VariableId variable) const {
    return variable >= start_.size() || start_[variable].empty();
  }

 private:
  // By variable, by tile run: where the run starts. Empty when the
  // variable is kept in element order (its runs cover it in tile order).
  std::vector<std::vector<uint64_t>> start_;
};

}  // namespace tileprof::engine::sim
