// Internal to engine/compiler: what the gather and scatter lowerings
// (lower_gather.cc, lower_scatter.cc) share: their dimension numbers as
// vertex parameters (engine/codelets/gather.h) and the boxes a vertex reads.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "engine/compiler/lower.h"

namespace tileprof::engine::compiler::gather_internal {

// An array value whose tensor has the shape's rank.
bool IsPlainArray(const Value& value, const hlo::Shape& shape);
// The integer list attribute `name` (empty when absent).
Expected<std::vector<int64_t>> ListAttribute(const hlo::Instruction& instruction,
                                             std::string_view name);
// `v` as a vertex parameter, or an error naming the instruction.
Expected<uint32_t> Param(uint64_t v, const hlo::Instruction& instruction);

// The dimension numbers common to gather and scatter, as vertex parameters.
struct Numbers {
  std::vector<uint32_t> res_src;  // per result (gather) / update (scatter) dimension
  std::vector<uint32_t> start;    // per operand dimension
  uint32_t ivd = 0;
};

// `window_dims`: result dimensions that are windows (offset_dims /
// update_window_dims); `removed`: operand dimensions without a window
// dimension (collapsed / inserted, plus batching); `start_map`: index
// vector component -> operand dimension.
Expected<Numbers> Build(const hlo::Instruction& instruction, size_t op_rank, size_t idx_rank,
                        size_t res_rank, std::span<const int64_t> window_dims,
                        std::span<const int64_t> removed, std::span<const int64_t> start_map,
                        std::span<const int64_t> op_batch, std::span<const int64_t> idx_batch,
                        int64_t ivd);

// The dimension lists of a gather or scatter that name operand and
// indices dimensions.
struct IndexDims {
  std::vector<int64_t> removed;    // collapsed_slice_dims / inserted_window_dims
  std::vector<int64_t> start_map;  // start_index_map / scatter_dims_to_operand_dims
  std::vector<int64_t> op_batch;   // operand_batching_dims / input_batching_dims
  std::vector<int64_t> idx_batch;  // start_indices_ / scatter_indices_batching_dims
};

// gather_batching.cc: components of the index vectors (dimension `ivd` of
// `indices`, the value of the instruction's operand 1) whose values are the
// coordinates of an indices dimension b (an iota, concatenated with the
// other components along `ivd`) and that start an operand dimension j
// without a window and of as many positions as b, made batching dimensions
// (j, b): `dims` updated and the indices returned without those components.
// The same value and dimension numbers when there is none, and at least
// one component is always left.
Expected<Tensor> IotaComponentsAsBatching(const hlo::Instruction& instruction,
                                          const Tensor& operand, const Tensor& indices, int64_t ivd,
                                          IndexDims& dims);

// The box of the indices a vertex reads, [lo, lo + size) per indices
// dimension: the whole index vector, and in each batch (scatter) dimension
// the range [box_lo, box_hi) of the result (update) dimension it feeds.
// Each tile then receives the index vectors of its own run, not every
// index (jax-md's neighbour-list gather read 450 KB of indices on each of
// 1,462 tiles).
struct IndicesBox {
  std::vector<uint64_t> lo, size;
};
IndicesBox IndicesBoxOf(const Numbers& n, size_t op_rank, const Tensor& indices,
                        std::span<const uint64_t> box_lo, std::span<const uint64_t> box_hi);

// Sets a gather or scatter vertex's parameters in the codelets' order:
// `first` (low 32 bits), the op's shared `params`, the box's lows and
// sizes, the indices' box, and `firstHigh` last.
Status SetParams(Graph& graph, VertexRef vertex, const Codelet& codelet, uint64_t first,
                 std::span<const uint32_t> params, std::span<const uint64_t> lo,
                 std::span<const uint64_t> size, const IndicesBox& indices);

// The index vector's length: the indices' index_vector_dim, or 1 when that
// is past the indices' dimensions.
uint64_t IndexComponents(const Numbers& n, const Tensor& indices);

}  // namespace tileprof::engine::compiler::gather_internal
