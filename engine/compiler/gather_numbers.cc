// The parts the gather and scatter lowerings share (gather_numbers.h).
#include "engine/compiler/gather_numbers.h"

#include <algorithm>

#include "engine/codelets/gather.h"
#include "engine/hlo/attributes.h"

namespace tileprof::engine::compiler::gather_internal {
namespace {

bool Contains(std::span<const int64_t> list, int64_t v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

}  // namespace

bool IsPlainArray(const Value& value, const hlo::Shape& shape) {
  return !value.is_tuple && value.tensor.valid() && shape.IsArray() &&
         value.tensor.Rank() == static_cast<size_t>(shape.rank());
}

Expected<std::vector<int64_t>> ListAttribute(const hlo::Instruction& instruction,
                                             std::string_view name) {
  const hlo::Attribute* attribute = instruction.FindAttribute(name);
  if (attribute == nullptr) return std::vector<int64_t>{};
  Expected<std::vector<int64_t>> list = hlo::ParseIntList(attribute->value());
  if (!list) return MakeError("{}: bad {}={}", Describe(instruction), name, attribute->value());
  return list;
}

Expected<uint32_t> Param(uint64_t v, const hlo::Instruction& instruction) {
  if (v > UINT32_MAX)
    return MakeError("{}: {} does not fit a vertex parameter", Describe(instruction), v);
  return static_cast<uint32_t>(v);
}

// `window_dims`: result dimensions that are windows (offset_dims /
// update_window_dims); `removed`: operand dimensions without a window
// dimension (collapsed / inserted, plus batching); `start_map`: index
// vector component -> operand dimension.
Expected<Numbers> Build(const hlo::Instruction& instruction, size_t op_rank, size_t idx_rank,
                        size_t res_rank, std::span<const int64_t> window_dims,
                        std::span<const int64_t> removed, std::span<const int64_t> start_map,
                        std::span<const int64_t> op_batch, std::span<const int64_t> idx_batch,
                        int64_t ivd) {
  const auto bad = [&](std::string_view what) {
    return MakeError("{}: {}", Describe(instruction), what);
  };
  if (ivd < 0 || static_cast<size_t>(ivd) > idx_rank)
    return bad("index_vector_dim outside the indices' rank");
  if (op_batch.size() != idx_batch.size()) return bad("batching dimension lists differ in length");
  Numbers n;
  n.ivd = static_cast<uint32_t>(ivd);
  std::vector<uint32_t> operand_windows, batch_dims;
  for (size_t j = 0; j < op_rank; ++j) {
    if (!Contains(removed, static_cast<int64_t>(j)) &&
        !Contains(op_batch, static_cast<int64_t>(j))) {
      operand_windows.push_back(static_cast<uint32_t>(j));
    }
  }
  for (size_t k = 0; k < idx_rank; ++k) {
    if (k != static_cast<size_t>(ivd)) batch_dims.push_back(static_cast<uint32_t>(k));
  }
  if (operand_windows.size() != window_dims.size() ||
      batch_dims.size() + window_dims.size() != res_rank) {
    return bad("dimension numbers do not match the ranks of the operands and result");
  }
  n.res_src.assign(res_rank, 0);
  size_t w = 0, b = 0;
  for (size_t r = 0; r < res_rank; ++r) {
    const bool window = Contains(window_dims, static_cast<int64_t>(r));
    if (window ? w >= operand_windows.size() : b >= batch_dims.size()) {
      return bad("window dimensions outside the result's rank, or repeated");
    }
    if (window)
      n.res_src[r] = operand_windows[w++];
    else
      n.res_src[r] = static_cast<uint32_t>(op_rank) + batch_dims[b++];
  }
  if (w != window_dims.size()) return bad("window dimensions outside the result's rank");
  n.start.assign(op_rank, 0);
  for (size_t k = 0; k < start_map.size(); ++k) {
    if (start_map[k] < 0 || static_cast<size_t>(start_map[k]) >= op_rank)
      return bad("start map outside the operand's rank");
    n.start[static_cast<size_t>(start_map[k])] = static_cast<uint32_t>(k + 1);
  }
  for (size_t i = 0; i < op_batch.size(); ++i) {
    if (op_batch[i] < 0 || static_cast<size_t>(op_batch[i]) >= op_rank || idx_batch[i] < 0 ||
        static_cast<size_t>(idx_batch[i]) >= idx_rank || idx_batch[i] == ivd) {
      return bad("batching dimension outside the ranks");
    }
    n.start[static_cast<size_t>(op_batch[i])] =
        kStartFromBatch + static_cast<uint32_t>(idx_batch[i]);
  }
  return n;
}

// See gather_numbers.h.
IndicesBox IndicesBoxOf(const Numbers& n, size_t op_rank, const Tensor& indices,
                        std::span<const uint64_t> box_lo, std::span<const uint64_t> box_hi) {
  IndicesBox box{std::vector<uint64_t>(indices.Rank(), 0), indices.shape()};
  for (size_t r = 0; r < n.res_src.size(); ++r) {
    if (n.res_src[r] < op_rank) continue;
    const size_t k = n.res_src[r] - op_rank;
    if (k >= indices.Rank() || k == n.ivd) continue;
    box.lo[k] = box_lo[r];
    box.size[k] = box_hi[r] - box_lo[r];
  }
  return box;
}

Status SetParams(Graph& graph, VertexRef vertex, const Codelet& codelet, uint64_t first,
                 std::span<const uint32_t> params, std::span<const uint64_t> lo,
                 std::span<const uint64_t> size, const IndicesBox& indices) {
  std::vector<uint32_t> values = {static_cast<uint32_t>(first)};
  values.insert(values.end(), params.begin(), params.end());
  for (uint64_t v : lo) values.push_back(static_cast<uint32_t>(v));
  for (uint64_t v : size) values.push_back(static_cast<uint32_t>(v));
  for (uint64_t v : indices.lo) values.push_back(static_cast<uint32_t>(v));
  for (uint64_t v : indices.size) values.push_back(static_cast<uint32_t>(v));
  values.push_back(static_cast<uint32_t>(first >> 32));
  const auto names = codelet.params();
  if (names.size() != values.size()) {
    return MakeError("{}: {} parameter values for {} parameters", codelet.name(), values.size(),
                     names.size());
  }
  for (size_t i = 0; i < names.size(); ++i) {
    TILEPROF_RETURN_IF_ERROR(graph.SetInitialValue(vertex[names[i]], values[i]));
  }
  return {};
}

uint64_t IndexComponents(const Numbers& n, const Tensor& indices) {
  return n.ivd < indices.Rank() ? indices.shape()[n.ivd] : 1;
}

}  // namespace tileprof::engine::compiler::gather_internal
