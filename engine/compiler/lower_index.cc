// Index-mapped data movement (engine/codelets/indexed.h): transpose,
// reverse, pad, broadcast and strided slice as tileprof::Rearrange vertices;
// dynamic-slice, dynamic-update-slice and iota. Each vertex computes one
// contiguous run of the (linearly mapped) result on the tile that holds it
// and reads exactly the box of the source its run can touch, so exchange
// volumes are those of the real data movement.
#include <algorithm>

#include <fmt/format.h>

#include "engine/codelets/codelets.h"
#include "engine/codelets/indexed.h"
#include "engine/compiler/dynamic_slice.h"
#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"
#include "engine/hlo/attributes.h"

namespace tileprof::engine::compiler {
namespace {

// A signed coordinate range [lo, hi], for the index arithmetic.
struct Interval {
  int64_t lo = 0;
  int64_t hi = 0;
};

bool FitsS32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

Expected<uint32_t> U32(uint64_t v, std::string_view what) {
  if (v > UINT32_MAX) return MakeError("{} {} does not fit a vertex parameter", what, v);
  return static_cast<uint32_t>(v);
}

// A vertex's first element, in parameters `first` and `firstHigh`.
Status SetFirst(Graph& graph, VertexRef vertex, uint64_t first) {
  TILEPROF_RETURN_IF_ERROR(graph.SetInitialValue(vertex["first"], static_cast<uint32_t>(first)));
  return graph.SetInitialValue(vertex["firstHigh"], static_cast<uint32_t>(first >> 32));
}

// The storage dimensions of an array shape when they are the HLO dimensions
// (no extra storage dimension).
std::optional<std::vector<uint64_t>> PlainDims(const hlo::Shape& shape) {
  if (!shape.IsArray()) return std::nullopt;
  auto dims = StorageShape(shape);
  if (!dims || dims->size() != static_cast<size_t>(shape.rank())) return std::nullopt;
  return std::move(*dims);
}

// The error when a source dimension of `map` reads an output dimension
// outside `out_rank` or has a factor that does not fit the vertex parameters.
Status CheckRearrangeMap(const Tensor& source, std::span<const SourceDim> map, size_t out_rank) {
  for (const SourceDim& dim : map) {
    if (dim.src >= out_rank || dim.src2 >= out_rank || dim.div == 0 || !FitsS32(dim.mul) ||
        !FitsS32(dim.mul2) || !FitsS32(dim.add) || dim.div > UINT32_MAX) {
      return MakeError("rearrangement map of {} does not fit the vertex parameters",
                       source.ShapeString());
    }
  }
  return {};
}

// The box of `source`, [lo, lo + size) per dimension, that the outputs in
// `out_box` read through `map`; true when every output of the box is
// padding (the box is then one element).
bool RearrangeReadBox(const Tensor& source, std::span<const SourceDim> map,
                      std::span<const std::pair<uint64_t, uint64_t>> out_box,
                      std::vector<uint64_t>& lo, std::vector<uint64_t>& size) {
  bool empty = false;
  for (size_t j = 0; j < map.size(); ++j) {
    const SourceDim& m = map[j];
    // The range of c = add + mul * o[src] + mul2 * o[src2] over the box.
    auto term = [&](int64_t mul, uint32_t d) -> Interval {
      const auto lo = static_cast<int64_t>(out_box[d].first);
      const auto hi = static_cast<int64_t>(out_box[d].second);
      return mul >= 0 ? Interval{mul * lo, mul * hi} : Interval{mul * hi, mul * lo};
    };
    Interval c;
    if (m.src == m.src2) {
      const Interval t = term(m.mul + m.mul2, m.src);
      c = {m.add + t.lo, m.add + t.hi};
    } else {
      const Interval t1 = term(m.mul, m.src), t2 = term(m.mul2, m.src2);
      c = {m.add + t1.lo + t2.lo, m.add + t1.hi + t2.hi};
    }
    const auto extent = static_cast<int64_t>(source.shape()[j]);
    const auto div = static_cast<int64_t>(m.div);
    c.lo = std::max<int64_t>(c.lo, 0);
    c.hi = std::min<int64_t>(c.hi, (extent - 1) * div);
    const int64_t first_coordinate = (c.lo + div - 1) / div;
    const int64_t last_coordinate = c.hi < 0 ? -1 : c.hi / div;
    if (first_coordinate > last_coordinate) {
      empty = true;  // every output of the run is padding
      lo[j] = 0;
      size[j] = 1;
    } else {
      lo[j] = static_cast<uint64_t>(first_coordinate);
      size[j] = static_cast<uint64_t>(last_coordinate - first_coordinate + 1);
    }
  }
  return empty;
}

// The codelet's parameters in order (engine/codelets/indexed.h): first
// (low 32 bits), outSize<d>, then src, mul, src2, mul2, add, div, extent,
// boxLo, boxSize of each source dimension, and firstHigh.
Expected<std::vector<uint32_t>> RearrangeParams(const Tensor& source,
                                                std::span<const SourceDim> map,
                                                std::span<const uint64_t> out_dims, uint64_t first,
                                                std::span<const uint64_t> lo,
                                                std::span<const uint64_t> size) {
  std::vector<uint32_t> values;
  values.reserve(2 + out_dims.size() + 9 * map.size());
  values.push_back(static_cast<uint32_t>(first));
  for (size_t d = 0; d < out_dims.size(); ++d) {
    TILEPROF_ASSIGN_OR_RETURN(uint32_t v, U32(out_dims[d], "dimension"));
    values.push_back(v);
  }
  for (size_t j = 0; j < map.size(); ++j) {
    const SourceDim& m = map[j];
    TILEPROF_ASSIGN_OR_RETURN(uint32_t extent, U32(source.shape()[j], "dimension"));
    values.insert(values.end(),
                  {m.src, static_cast<uint32_t>(static_cast<int32_t>(m.mul)), m.src2,
                   static_cast<uint32_t>(static_cast<int32_t>(m.mul2)),
                   static_cast<uint32_t>(static_cast<int32_t>(m.add)), static_cast<uint32_t>(m.div),
                   extent, static_cast<uint32_t>(lo[j]), static_cast<uint32_t>(size[j])});
  }
  values.push_back(static_cast<uint32_t>(first >> 32));
  return values;
}

}  // namespace

Expected<Tensor> Lowering::EmitRearrange(const Tensor& source, std::span<const SourceDim> map,
                                         const Tensor* padding, std::vector<uint64_t> out_dims,
                                         std::string_view name, program::Sequence& program,
                                         const Tensor* like) {
  if (map.size() != source.Rank()) {
    return MakeError("rearrangement of {} given {} source dimensions", source.ShapeString(),
                     map.size());
  }
  const ElementType type = source.element_type();
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, NewTensor(type, out_dims, name, like == nullptr));
  if (like != nullptr) {
    if (like->NumElements() != out.NumElements()) {
      return MakeError("rearrangement into {} mapped like {}", out.ShapeString(),
                       like->ShapeString());
    }
    TILEPROF_RETURN_IF_ERROR(mapper_.MapLike(out, *like));
  }
  if (out.NumElements() == 0) return out;
  if (source.NumElements() == 0) {
    if (padding == nullptr) return MakeError("rearrangement of the empty {}", source.ShapeString());
    TILEPROF_ASSIGN_OR_RETURN(const Codelet* fill, GetFillCodelet(type));
    const ComputeSetId cs = AddComputeSet(name, program);
    const FieldInput in{"in", *padding, Access::kWhole};
    TILEPROF_RETURN_IF_ERROR(EmitPerTile(cs, *fill, "out", out, {&in, 1}, name));
    return out;
  }
  TILEPROF_RETURN_IF_ERROR(CheckRearrangeMap(source, map, out_dims.size()));
  TILEPROF_ASSIGN_OR_RETURN(
      const Codelet* codelet,
      codelets_.Rearrange(type, static_cast<uint32_t>(source.Rank()),
                          static_cast<uint32_t>(out_dims.size()), padding != nullptr));
  const ComputeSetId cs = AddComputeSet(name, program);
  const Tensor flat_out = out.Flatten();
  const TensorIndex source_index(source);
  TILEPROF_ASSIGN_OR_RETURN(std::vector<Run> runs, RunsOf(graph_, flat_out));
  for (size_t r = 0; r < runs.size(); ++r) {
    const uint64_t first = runs[r].first;
    const uint64_t count = runs[r].count;
    const uint32_t tile = runs[r].tile;
    const auto out_box = FlatRunBox(out_dims, first, count);
    std::vector<uint64_t> lo(map.size()), size(map.size());
    const bool empty = RearrangeReadBox(source, map, out_box, lo, size);
    uint64_t volume = 1;
    for (uint64_t v : size) volume *= v;
    if (SplitWideRun(out_dims, out_box, volume, count, runs[r], runs)) continue;
    if (empty && padding == nullptr) {
      return MakeError("rearrangement of {} reads nothing for elements [{}, {})",
                       source.ShapeString(), first, first + count);
    }
    TILEPROF_ASSIGN_OR_RETURN(Tensor in, source_index.Box(lo, size));
    TILEPROF_ASSIGN_OR_RETURN(Tensor out_part, flat_out.Slice(first, first + count));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(cs, *codelet, name));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, tile));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["in"], std::move(in)));
    if (padding != nullptr) TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["padding"], *padding));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["out"], out_part));
    TILEPROF_ASSIGN_OR_RETURN(std::vector<uint32_t> values,
                              RearrangeParams(source, map, out_dims, first, lo, size));
    TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValues(vertex, values));
  }
  return out;
}

Expected<Value> Lowering::LowerMapped(const hlo::Instruction& instruction, const Value& operand,
                                      std::span<const SourceDim> map, const Tensor* padding,
                                      program::Sequence& program, const Tensor* like) {
  const std::optional<std::vector<uint64_t>> dims = PlainDims(instruction.shape());
  if (!dims || !operand.IsArray()) return LowerOpaque(instruction, {&operand, 1}, program);
  TILEPROF_ASSIGN_OR_RETURN(StorageType storage, StorageOf(instruction.shape().element_type));
  if (storage.type != operand.tensor.element_type()) {
    return LowerOpaque(instruction, {&operand, 1}, program);
  }
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, EmitRearrange(operand.tensor, map, padding, *dims,
                                                      instruction.name(), program, like));
  return Value::Array(std::move(out));
}

static std::vector<SourceDim> IdentityMap(size_t rank) {
  std::vector<SourceDim> map(rank);
  for (size_t j = 0; j < rank; ++j) map[j].src = map[j].src2 = static_cast<uint32_t>(j);
  return map;
}

Expected<Value> Lowering::LowerPad(const hlo::Instruction& instruction,
                                   std::span<const Value> operands, program::Sequence& program) {
  const hlo::Attribute* attribute = instruction.FindAttribute("padding");
  if (attribute == nullptr || operands.size() != 2 || !operands[0].IsArray() ||
      !operands[1].IsArray() || operands[1].tensor.NumElements() != 1 ||
      operands[1].tensor.element_type() != operands[0].tensor.element_type()) {
    return LowerOpaque(instruction, operands, program);
  }
  TILEPROF_ASSIGN_OR_RETURN(std::vector<hlo::PaddingDimension> padding,
                            hlo::ParsePadding(attribute->value()));
  const Tensor& in = operands[0].tensor;
  if (padding.size() != in.Rank()) {
    return MakeError("padding has {} dimensions, the operand {}", padding.size(), in.Rank());
  }
  std::vector<SourceDim> map = IdentityMap(in.Rank());
  for (size_t j = 0; j < map.size(); ++j) {
    if (padding[j].interior < 0) return MakeError("negative interior padding in dimension {}", j);
    map[j].add = -padding[j].low;
    map[j].div = static_cast<uint64_t>(padding[j].interior) + 1;
  }
  return LowerMapped(instruction, operands[0], map, &operands[1].tensor, program);
}

Expected<Value> Lowering::LowerTransposeRearrange(const hlo::Instruction& instruction,
                                                  const Value& operand,
                                                  std::span<const size_t> permutation,
                                                  program::Sequence& program) {
  const std::optional<std::vector<uint64_t>> dims = PlainDims(instruction.shape());
  if (dims && operand.IsArray() && permutation.size() == operand.tensor.Rank() &&
      dims->size() == permutation.size()) {
    TILEPROF_ASSIGN_OR_RETURN(StorageType storage, StorageOf(instruction.shape().element_type));
    bool same_dims = true;
    for (size_t i = 0; i < permutation.size(); ++i) {
      same_dims = same_dims && permutation[i] < permutation.size() &&
                  (*dims)[i] == operand.tensor.shape()[permutation[i]];
    }
    if (storage.type == operand.tensor.element_type() && same_dims) {
      TILEPROF_ASSIGN_OR_RETURN(
          std::optional<Tensor> blocked,
          EmitBlockedTranspose(operand.tensor, permutation, instruction.name(), program));
      if (blocked) return Value::Array(std::move(*blocked));
    }
  }
  std::vector<SourceDim> map = IdentityMap(operand.tensor.Rank());
  for (size_t i = 0; i < permutation.size() && i < map.size(); ++i) {
    if (permutation[i] >= map.size()) return MakeError("bad permutation");
    map[permutation[i]].src = map[permutation[i]].src2 = static_cast<uint32_t>(i);
  }
  return LowerMapped(instruction, operand, map, nullptr, program);
}

Expected<Value> Lowering::LowerBroadcastRearrange(const hlo::Instruction& instruction,
                                                  const Value& operand, program::Sequence& program,
                                                  const Tensor* like) {
  const hlo::Attribute* attribute = instruction.FindAttribute("dimensions");
  if (attribute == nullptr || !operand.IsArray()) {
    return LowerOpaque(instruction, {&operand, 1}, program);
  }
  TILEPROF_ASSIGN_OR_RETURN(std::vector<int64_t> dims, hlo::ParseIntList(attribute->value()));
  if (dims.size() != operand.tensor.Rank()) return LowerOpaque(instruction, {&operand, 1}, program);
  std::vector<SourceDim> map = IdentityMap(dims.size());
  for (size_t j = 0; j < dims.size(); ++j) {
    if (dims[j] < 0 || dims[j] >= instruction.shape().rank()) {
      return MakeError("broadcast dimension {} outside rank {}", dims[j],
                       instruction.shape().rank());
    }
    map[j].src = map[j].src2 = static_cast<uint32_t>(dims[j]);
  }
  return LowerMapped(instruction, operand, map, nullptr, program, like);
}

Expected<Value> Lowering::LowerSliceRearrange(const hlo::Instruction& instruction,
                                              const Value& operand,
                                              std::span<const hlo::SliceDimension> slice,
                                              program::Sequence& program) {
  if (slice.size() != operand.tensor.Rank())
    return LowerOpaque(instruction, {&operand, 1}, program);
  std::vector<SourceDim> map = IdentityMap(slice.size());
  for (size_t j = 0; j < slice.size(); ++j) {
    if (slice[j].stride <= 0)
      return MakeError("slice stride {} in dimension {}", slice[j].stride, j);
    map[j].mul = slice[j].stride;
    map[j].add = slice[j].start;
  }
  return LowerMapped(instruction, operand, map, nullptr, program);
}

Expected<Value> Lowering::LowerIota(const hlo::Instruction& instruction,
                                    program::Sequence& program) {
  TILEPROF_ASSIGN_OR_RETURN(std::optional<int64_t> which,
                            IntAttribute(instruction, "iota_dimension"));
  const std::optional<std::vector<uint64_t>> dims = PlainDims(instruction.shape());
  if (!which || !dims || !IsNative(instruction.shape())) {
    return LowerOpaque(instruction, {}, program);
  }
  if (*which < 0 || static_cast<size_t>(*which) >= dims->size()) {
    return MakeError("iota_dimension={} outside rank {}", *which, dims->size());
  }
  TILEPROF_ASSIGN_OR_RETURN(StorageType storage, StorageOf(instruction.shape().element_type));
  Expected<const Codelet*> codelet = codelets_.Iota(storage.type);
  if (!codelet) return LowerOpaque(instruction, {}, program);
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, NewTensor(storage.type, *dims, instruction.name(), true));
  if (out.NumElements() == 0) return Value::Array(out);
  const auto d = static_cast<size_t>(*which);
  uint64_t inner = 1;
  for (size_t i = d + 1; i < dims->size(); ++i) inner *= (*dims)[i];
  TILEPROF_ASSIGN_OR_RETURN(uint32_t dim32, U32((*dims)[d], "iota dimension"));
  TILEPROF_ASSIGN_OR_RETURN(uint32_t inner32, U32(inner, "iota inner size"));
  const ComputeSetId cs = AddComputeSet(instruction.name(), program);
  const Tensor flat_out = out.Flatten();
  uint64_t position = 0;
  for (const MappedRegion& piece : graph_.MapRegions(flat_out)) {
    const uint64_t first = position;
    position += piece.region.size();
    if (!piece.tile) return MakeError("{} is not mapped", out.ShapeString());
    TILEPROF_ASSIGN_OR_RETURN(Tensor part, flat_out.Slice(first, position));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex,
                              graph_.AddVertex(cs, **codelet, instruction.name()));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, *piece.tile));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["out"], part));
    TILEPROF_RETURN_IF_ERROR(SetFirst(graph_, vertex, first));
    TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValue(vertex["dimSize"], dim32));
    TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValue(vertex["inner"], inner32));
  }
  return Value::Array(std::move(out));
}

namespace {

// What a dynamic-slice or dynamic-update-slice the codelets run is given.
struct DynamicSliceForm {
  bool update = false;
  // Start indices: one scalar per dimension.
  std::vector<Tensor> starts;
  // A dynamic-update-slice's update (operand 1), else null.
  const Tensor* update_tensor = nullptr;
};

// The form of a dynamic-slice or dynamic-update-slice (result `dims`), or
// nullopt when it is not one the codelets run (lowered opaque).
Expected<std::optional<DynamicSliceForm>> DynamicSliceFormOf(
    const hlo::Instruction& instruction, std::span<const Value> operands,
    const std::optional<std::vector<uint64_t>>& dims) {
  const bool update = instruction.opcode() == hlo::Opcode::kDynamicUpdateSlice;
  const size_t first_index = update ? 2 : 1;
  bool ok = dims.has_value() && operands.size() > first_index;
  for (const Value& operand : operands) ok = ok && operand.IsArray();
  if (!ok) return std::optional<DynamicSliceForm>();
  const Tensor& base = operands[0].tensor;
  const size_t rank = base.Rank();
  // Start indices: one scalar per dimension, or (the old form) one vector.
  std::vector<Tensor> starts;
  if (operands.size() == first_index + rank) {
    for (size_t i = first_index; i < operands.size(); ++i) starts.push_back(operands[i].tensor);
  } else if (operands.size() == first_index + 1 &&
             operands[first_index].tensor.NumElements() == rank) {
    const Tensor flat = operands[first_index].tensor.Flatten();
    for (size_t i = 0; i < rank; ++i) {
      TILEPROF_ASSIGN_OR_RETURN(Tensor one, flat.Slice(i, i + 1));
      starts.push_back(std::move(one));
    }
  }
  bool starts_ok = starts.size() == rank && rank > 0;
  for (const Tensor& s : starts) {
    starts_ok = starts_ok && s.NumElements() == 1 && s.element_type() == starts[0].element_type();
  }
  const Tensor* update_tensor = update ? &operands[1].tensor : nullptr;
  if (!starts_ok || dims->size() != rank ||
      (update &&
       (update_tensor->Rank() != rank || update_tensor->element_type() != base.element_type()))) {
    return std::optional<DynamicSliceForm>();
  }
  return std::optional(DynamicSliceForm{update, std::move(starts), update_tensor});
}

// The box, [lo, lo + size) per dimension, of what the run `box` of the
// result reads for any start: of `base` for a dynamic-slice, of the update
// (`sliced`, the smaller side) for a dynamic-update-slice.
void DynamicSliceReadBox(std::span<const std::pair<uint64_t, uint64_t>> box, const Tensor& base,
                         std::span<const uint64_t> sliced, bool update, std::vector<uint64_t>& lo,
                         std::vector<uint64_t>& size) {
  for (size_t d = 0; d < base.Rank(); ++d) {
    const auto slack = static_cast<int64_t>(base.shape()[d] - sliced[d]);
    if (update) {
      // Update coordinates o - s for s in [0, slack].
      const int64_t a = std::max<int64_t>(static_cast<int64_t>(box[d].first) - slack, 0);
      const int64_t b = std::min<int64_t>(static_cast<int64_t>(box[d].second),
                                          static_cast<int64_t>(sliced[d]) - 1);
      lo[d] = static_cast<uint64_t>(std::min(a, b));
      size[d] = static_cast<uint64_t>(std::max<int64_t>(b - a, 0) + 1);
    } else {
      // Source coordinates o + s for s in [0, slack].
      lo[d] = box[d].first;
      size[d] = box[d].second - box[d].first + static_cast<uint64_t>(slack) + 1;
    }
  }
}

// A dynamic-slice vertex's parameters: its first element, and per
// dimension the result's size, the size of what it reads (`read_dims`: the
// update's or the operand's), and the box it reads.
Status SetDynamicSliceParams(Graph& graph, VertexRef vertex, uint64_t first, bool update,
                             std::span<const uint64_t> dims, std::span<const uint64_t> read_dims,
                             std::span<const uint64_t> lo, std::span<const uint64_t> size) {
  TILEPROF_RETURN_IF_ERROR(SetFirst(graph, vertex, first));
  for (size_t d = 0; d < dims.size(); ++d) {
    TILEPROF_ASSIGN_OR_RETURN(uint32_t out_size, U32(dims[d], "dimension"));
    TILEPROF_ASSIGN_OR_RETURN(uint32_t other, U32(read_dims[d], "dimension"));
    TILEPROF_RETURN_IF_ERROR(graph.SetInitialValue(vertex[fmt::format("outSize{}", d)], out_size));
    TILEPROF_RETURN_IF_ERROR(
        graph.SetInitialValue(vertex[(update ? "updSize" : "inSize") + std::to_string(d)], other));
    TILEPROF_RETURN_IF_ERROR(
        graph.SetInitialValue(vertex[fmt::format("boxLo{}", d)], static_cast<uint32_t>(lo[d])));
    TILEPROF_RETURN_IF_ERROR(
        graph.SetInitialValue(vertex[fmt::format("boxSize{}", d)], static_cast<uint32_t>(size[d])));
  }
  return {};
}

}  // namespace

Status AddDynamicSliceVertices(Graph& graph, ComputeSetId cs, const Codelet& codelet,
                               std::string_view name, const SliceProblem& problem,
                               const Tensor& flat_out, std::vector<Run> runs) {
  const Tensor& base = *problem.base;
  const bool update = problem.update != nullptr;
  const std::span<const uint64_t> dims = problem.dims;
  const std::span<const uint64_t> sliced = update ? problem.update->shape() : dims;
  const size_t rank = base.Rank();
  const TensorIndex read_index(update ? *problem.update : base);
  const Tensor flat_base = base.Flatten();
  for (size_t r = 0; r < runs.size(); ++r) {
    const uint64_t first = runs[r].first;
    const uint64_t count = runs[r].count;
    const uint32_t tile = runs[r].tile;
    const auto box = FlatRunBox(dims, first, count);
    std::vector<uint64_t> lo(rank), size(rank);
    DynamicSliceReadBox(box, base, sliced, update, lo, size);
    // The box grows to whole inner dimensions (the whole update) when the
    // run spans rows of an outer dimension: split such runs.
    uint64_t volume = 1, needed = count;
    for (size_t d = 0; d < rank; ++d) {
      volume = SaturatingMul(volume, size[d]);
      if (!update) needed = SaturatingMul(needed, base.shape()[d] - sliced[d] + 1);
    }
    if (SplitWideRun(dims, box, volume, needed, runs[r], runs)) continue;
    TILEPROF_ASSIGN_OR_RETURN(Tensor in, read_index.Box(lo, size));
    TILEPROF_ASSIGN_OR_RETURN(Tensor out_part, flat_out.Slice(first, first + count));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph.AddVertex(cs, codelet, name));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(vertex, tile));
    if (update) {
      TILEPROF_ASSIGN_OR_RETURN(Tensor operand_part, flat_base.Slice(first, first + count));
      TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["operand"], operand_part));
      TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["update"], in));
    } else {
      TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["in"], in));
    }
    for (size_t d = 0; d < rank; ++d) {
      TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex[fmt::format("start{}", d)], problem.starts[d]));
    }
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["out"], out_part));
    TILEPROF_RETURN_IF_ERROR(SetDynamicSliceParams(graph, vertex, first, update, dims,
                                                   update ? problem.update->shape() : base.shape(),
                                                   lo, size));
  }
  return {};
}

Expected<Value> Lowering::LowerDynamicSlice(const hlo::Instruction& instruction,
                                            std::span<const Value> operands,
                                            program::Sequence& program) {
  const std::optional<std::vector<uint64_t>> dims = PlainDims(instruction.shape());
  TILEPROF_ASSIGN_OR_RETURN(std::optional<DynamicSliceForm> form,
                            DynamicSliceFormOf(instruction, operands, dims));
  if (!form) return LowerOpaque(instruction, operands, program);
  const bool update = form->update;
  if (!update) {
    TILEPROF_ASSIGN_OR_RETURN(std::optional<Value> looked_up,
                              LowerDynamicLookup(instruction, operands, program));
    if (looked_up) return std::move(*looked_up);
  }
  const std::vector<Tensor>& starts = form->starts;
  const Tensor* update_tensor = form->update_tensor;
  const Tensor& base = operands[0].tensor;
  const size_t rank = base.Rank();
  Expected<const Codelet*> codelet = codelets_.DynamicSlice(
      base.element_type(), starts[0].element_type(), static_cast<uint32_t>(rank), update);
  if (!codelet) return LowerOpaque(instruction, operands, program);
  // The result: a slice of `base` (mapped below), or `base` updated (mapped
  // like it, so the operand field reads local elements).
  TILEPROF_ASSIGN_OR_RETURN(Tensor out,
                            NewTensor(base.element_type(), *dims, instruction.name(), false));
  const std::span<const uint64_t> sliced = update ? update_tensor->shape() : *dims;
  for (size_t d = 0; d < rank; ++d) {
    if (sliced[d] > base.shape()[d]) {
      return MakeError("dimension {}: slice of {} from {}", d, sliced[d], base.shape()[d]);
    }
  }
  if (out.NumElements() == 0) return Value::Array(out);
  if (update) {
    TILEPROF_RETURN_IF_ERROR(mapper_.MapLike(out, base));
    if (update_tensor->NumElements() == 0) {
      program.Add(program::Copy(base, out));
      return Value::Array(out);
    }
  }
  const ComputeSetId cs = AddComputeSet(instruction.name(), program);
  if (!update) {
    TILEPROF_ASSIGN_OR_RETURN(bool blocked,
                              EmitDynamicSliceBlocks(out, base, starts, instruction.name(), cs));
    if (blocked) return Value::Array(std::move(out));
    TILEPROF_RETURN_IF_ERROR(mapper_.Map(out));
  }
  const Tensor flat_out = out.Flatten();
  TILEPROF_ASSIGN_OR_RETURN(std::vector<Run> runs, RunsOf(graph_, flat_out));
  TILEPROF_RETURN_IF_ERROR(AddDynamicSliceVertices(
      graph_, cs, **codelet, instruction.name(), SliceProblem{*dims, &base, update_tensor, starts},
      flat_out, std::move(runs)));
  return Value::Array(std::move(out));
}

}  // namespace tileprof::engine::compiler
