// Index vector components that are batch coordinates, made batching
// dimensions (gather_numbers.h, `IotaComponentsAsBatching`). A loss that
// picks each row's label (`logits[arange(n), labels]`: PyTorch/XLA's
// aten::index, take_along_axis written with an iota) gathers with index
// vectors (i, labels[i]); read as data, the first component could name any
// row, so every vertex read every row in its columns: GraphHelper's public
// Llama-2 step put its 537 GB of logits on one tile. As a batching
// dimension, a run of the result reads its own rows.
#include <algorithm>
#include <optional>

#include "engine/compiler/gather_numbers.h"

namespace tileprof::engine::compiler::gather_internal {
namespace {

// Whether `v` holds every coordinate below `extent` exactly.
bool HoldsCoordinates(hlo::PrimitiveType type, int64_t extent) {
  const int bits = hlo::BitWidth(type);
  if (hlo::IsSignedIntegerType(type)) return bits >= 64 || extent <= (int64_t{1} << (bits - 1));
  if (hlo::IsUnsignedIntegerType(type)) return bits >= 63 || extent <= (int64_t{1} << bits);
  return false;
}

// The dimension of `inst`'s value along which every element equals its
// coordinate: an iota, seen through integer converts and copies, reshapes
// that only add or drop unit dimensions, and broadcasts. nullopt if not.
std::optional<size_t> CoordinateDim(const hlo::Instruction& inst, int depth = 0) {
  const hlo::Shape& shape = inst.shape();
  if (depth > 8 || !shape.IsArray() || !HoldsCoordinates(shape.element_type, 0)) {
    return std::nullopt;
  }
  std::optional<size_t> d;
  switch (inst.opcode()) {
    case hlo::Opcode::kIota: {
      Expected<std::optional<int64_t>> which = IntAttribute(inst, "iota_dimension");
      if (which && *which && **which >= 0 && **which < shape.rank()) {
        d = static_cast<size_t>(**which);
      }
      break;
    }
    case hlo::Opcode::kConvert:
    case hlo::Opcode::kCopy:
      if (inst.operands().size() == 1) d = CoordinateDim(*inst.operand(0), depth + 1);
      break;
    case hlo::Opcode::kReshape: {
      if (inst.operands().size() != 1) break;
      const hlo::Instruction& from = *inst.operand(0);
      const std::optional<size_t> e = CoordinateDim(from, depth + 1);
      if (!e) break;
      // The non-unit dimensions must be the same list; the coordinate
      // dimension is the same among them.
      std::vector<int64_t> a, b;
      size_t rank_of_e = 0;
      for (size_t i = 0; i < from.shape().dimensions.size(); ++i) {
        if (from.shape().dimensions[i] == 1) continue;
        if (i == *e) rank_of_e = a.size();
        a.push_back(from.shape().dimensions[i]);
      }
      if (from.shape().dimensions[*e] == 1) break;
      for (size_t i = 0; i < shape.dimensions.size(); ++i) {
        if (shape.dimensions[i] == 1) continue;
        if (b.size() == rank_of_e) d = i;
        b.push_back(shape.dimensions[i]);
      }
      if (a != b) d.reset();
      break;
    }
    case hlo::Opcode::kBroadcast: {
      if (inst.operands().size() != 1) break;
      Expected<std::vector<int64_t>> dims = ListAttribute(inst, "dimensions");
      const std::optional<size_t> e = CoordinateDim(*inst.operand(0), depth + 1);
      if (dims && e && *e < dims->size() && (*dims)[*e] >= 0 && (*dims)[*e] < shape.rank()) {
        d = static_cast<size_t>((*dims)[*e]);
      }
      break;
    }
    default:
      break;
  }
  if (d && (*d >= shape.dimensions.size() ||
            !HoldsCoordinates(shape.element_type, shape.dimensions[*d]))) {
    d.reset();
  }
  return d;
}

// For each component of the index vectors (of `count`): the indices
// dimension its values are the coordinates of, when the indices are a
// concatenation along the index vector dimension of parts of which that
// component's is such a value.
std::vector<std::optional<size_t>> ComponentCoordinates(const hlo::Instruction& indices, size_t ivd,
                                                        uint64_t count) {
  std::vector<std::optional<size_t>> found(count);
  std::vector<const hlo::Instruction*> parts = {&indices};
  if (indices.opcode() == hlo::Opcode::kConcatenate) {
    Expected<std::vector<int64_t>> dims = ListAttribute(indices, "dimensions");
    if (!dims || dims->size() != 1 || (*dims)[0] != static_cast<int64_t>(ivd)) return found;
    parts.assign(indices.operands().begin(), indices.operands().end());
  }
  uint64_t at = 0;
  for (const hlo::Instruction* part : parts) {
    const hlo::Shape& shape = part->shape();
    if (!shape.IsArray() || ivd >= shape.dimensions.size()) return found;
    const auto width = static_cast<uint64_t>(shape.dimensions[ivd]);
    const std::optional<size_t> d = CoordinateDim(*part);
    for (uint64_t c = at; c < at + width && c < count; ++c) {
      if (d && *d != ivd) found[c] = d;
    }
    at += width;
  }
  if (at != count) std::fill(found.begin(), found.end(), std::nullopt);
  return found;
}

void Erase(std::vector<int64_t>& list, int64_t v) {
  list.erase(std::remove(list.begin(), list.end(), v), list.end());
}

}  // namespace

Expected<Tensor> IotaComponentsAsBatching(const hlo::Instruction& instruction,
                                          const Tensor& operand, const Tensor& indices, int64_t ivd,
                                          IndexDims& dims) {
  const hlo::Instruction* producer = instruction.operand(1);
  if (producer == nullptr || ivd < 0 || static_cast<size_t>(ivd) >= indices.Rank()) {
    return indices;
  }
  const auto v = static_cast<size_t>(ivd);
  const uint64_t count = indices.shape()[v];
  if (count < 2 || dims.start_map.size() != count) return indices;
  const std::vector<std::optional<size_t>> coords = ComponentCoordinates(*producer, v, count);
  std::vector<bool> drop(count, false);
  uint64_t kept = count;
  for (uint64_t c = 0; c < count && kept > 1; ++c) {
    const std::optional<size_t> b = coords[c];
    const int64_t j = dims.start_map[c];
    // The component is operand dimension j's start, j has no window (slice
    // of 1), as many positions as the indices dimension b: the start is
    // then never clamped and equals the batch coordinate.
    if (!b || *b >= indices.Rank() || j < 0 || static_cast<size_t>(j) >= operand.Rank() ||
        std::find(dims.removed.begin(), dims.removed.end(), j) == dims.removed.end() ||
        operand.shape()[static_cast<size_t>(j)] != indices.shape()[*b] ||
        std::find(dims.idx_batch.begin(), dims.idx_batch.end(), static_cast<int64_t>(*b)) !=
            dims.idx_batch.end()) {
      continue;
    }
    drop[c] = true;
    --kept;
    Erase(dims.removed, j);
    dims.op_batch.push_back(j);
    dims.idx_batch.push_back(static_cast<int64_t>(*b));
  }
  if (kept == count) return indices;
  std::vector<int64_t> start_map;
  std::vector<Tensor> parts;
  for (uint64_t c = 0; c < count; ++c) {
    if (drop[c]) continue;
    start_map.push_back(dims.start_map[c]);
    TILEPROF_ASSIGN_OR_RETURN(Tensor part, indices.Slice(c, c + 1, v));
    parts.push_back(std::move(part));
  }
  dims.start_map = std::move(start_map);
  return Tensor::Concat(parts, v);
}

}  // namespace tileprof::engine::compiler::gather_internal
