// Spread inputs of fused expressions: a broadcast of a vector along a block
// of the result's dimensions, read by each MapExpr vertex as the vector's
// elements under its run of the result (docs/memory-model.md, "Batch norms,
// and broadcasts of feature vectors").
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"

namespace tileprof::engine::compiler {

// A broadcast whose operand's dimensions are one block of the result's, in
// order, with both the block's elements and the elements after it (inner)
// under 2^32: a spread input of a fused expression.
std::optional<SpreadForm> SpreadFormOf(const hlo::Instruction& broadcast) {
  const hlo::Attribute* attribute = broadcast.FindAttribute("dimensions");
  if (attribute == nullptr || broadcast.operand_count() != 1) return std::nullopt;
  Expected<std::vector<int64_t>> mapped = hlo::ParseIntList(attribute->value());
  const hlo::Shape& shape = broadcast.shape();
  const hlo::Shape& in = broadcast.operand(0)->shape();
  if (!mapped || mapped->empty() || mapped->size() != static_cast<size_t>(in.rank()) ||
      !shape.IsArray() || !IsNative(shape))
    return std::nullopt;
  uint64_t size = 1, inner = 1;
  for (size_t j = 0; j < mapped->size(); ++j) {
    const int64_t d = (*mapped)[j];
    if (d != (*mapped)[0] + static_cast<int64_t>(j) || d >= shape.rank() ||
        shape.dimensions[static_cast<size_t>(d)] != in.dimensions[j] || in.dimensions[j] < 0)
      return std::nullopt;
    size *= static_cast<uint64_t>(in.dimensions[j]);
  }
  for (int64_t d = mapped->back() + 1; d < shape.rank(); ++d)
    inner *= static_cast<uint64_t>(std::max<int64_t>(shape.dimensions[static_cast<size_t>(d)], 0));
  if (size == 0 || inner == 0 || size > UINT32_MAX || inner > UINT32_MAX) return std::nullopt;
  return SpreadForm{inner, size};
}

Status Lowering::EmitSpreadRuns(ComputeSetId cs, const Codelet& codelet, const Tensor& out,
                                std::span<const MapInput> inputs, std::span<const Tensor> leaves,
                                std::span<const std::pair<uint32_t, SpreadForm>> spread_inputs,
                                std::string_view name) {
  // One vertex per run of the result: a spread input's element under output
  // e is found from e's position in the result.
  // Each full-size leaf is indexed once: a Slice per run of a fragmented
  // leaf would cost O(its regions) each.
  std::vector<std::unique_ptr<TensorIndex>> flat(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i)
    if (!inputs[i].scalar) flat[i] = std::make_unique<TensorIndex>(leaves[i].Flatten());
  const TensorIndex out_index(out.Flatten());
  TILEPROF_ASSIGN_OR_RETURN(std::vector<Run> runs, RunsOf(graph_, out_index.tensor()));
  // Fields by number, looked up once; one buffer for every field's runs and
  // one for the parameters (with a name, a Tensor and a vector per vertex
  // and field, this function was 6% of mobilenet_v2's compile samples; 3%
  // without).
  std::vector<size_t> field_of(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    TILEPROF_ASSIGN_OR_RETURN(field_of[i], codelet.FieldNumber(fmt::format("in{}", i)));
  }
  TILEPROF_ASSIGN_OR_RETURN(const size_t out_field, codelet.FieldNumber("out"));
  std::vector<TensorRegion> cut;
  std::vector<uint32_t> params;
  for (const Run& run : runs) {
    const uint64_t first = run.first, count = run.count;
    const auto connect = [&](VertexRef vertex, size_t field, const TensorIndex& index, uint64_t lo,
                             uint64_t size) -> Status {
      cut.clear();
      TILEPROF_RETURN_IF_ERROR(index.AppendBox({&lo, 1}, {&size, 1}, cut));
      return graph_.ConnectRegions(vertex, field, index.tensor().element_type(), {&size, 1}, cut);
    };
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(cs, codelet, name));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, run.tile));
    params.assign({static_cast<uint32_t>(first), static_cast<uint32_t>(first >> 32)});
    size_t next = 0;
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (inputs[i].scalar) {
        TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex, field_of[i], leaves[i]));
        continue;
      }
      if (!inputs[i].spread) {
        TILEPROF_RETURN_IF_ERROR(connect(vertex, field_of[i], *flat[i], first, count));
        continue;
      }
      const SpreadForm& form = spread_inputs[next++].second;
      // The vector's elements the run reads: those of its first to last
      // block, or all of them when the run wraps around the vector.
      const uint64_t from = first / form.inner, to = (first + count - 1) / form.inner;
      uint64_t lo = 0, hi = form.size;
      if (to - from + 1 < form.size && from % form.size <= to % form.size) {
        lo = from % form.size;
        hi = to % form.size + 1;
      }
      TILEPROF_RETURN_IF_ERROR(connect(vertex, field_of[i], *flat[i], lo, hi - lo));
      params.insert(params.end(), {static_cast<uint32_t>(form.inner),
                                   static_cast<uint32_t>(form.size), static_cast<uint32_t>(lo)});
    }
    TILEPROF_RETURN_IF_ERROR(connect(vertex, out_field, out_index, first, count));
    TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValues(vertex, params));
  }
  return {};
}

bool Lowering::Fragmented(const Tensor& tensor) const {
  // Runs a tile past which a copy of a broadcast mapped like the tensor
  // would cost more vertices than moving the tensor does.
  constexpr uint64_t kMaxRunsPerTile = 4;
  const uint64_t limit = kMaxRunsPerTile * uint64_t{graph_.target().NumTiles()};
  // Counted region by region, stopping past the limit: a list of every
  // piece of a fragmented tensor was a twentieth of a Llama-2 step's compile.
  uint64_t pieces = 0;
  for (const TensorRegion& region : tensor.regions()) {
    graph_.ForEachMappedRegion(std::span(&region, 1), [&](const MappedRegion&) { ++pieces; });
    if (pieces > limit) return true;
  }
  return false;
}

}  // namespace tileprof::engine::compiler
