// The dot/convolution plan shared by lower_dot.cc and lower_conv.cc. See
// dot_plan.h.
#include "engine/compiler/dot_plan.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "engine/codelets/codelets.h"

namespace tileprof::engine::compiler {

uint64_t Product(std::span<const uint64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), uint64_t{1},
                         [](uint64_t a, uint64_t b) { return a * b; });
}

std::vector<uint64_t> Strides(std::span<const uint64_t> dims) {
  std::vector<uint64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

Status EmitUnits(Lowering& lowering, const hlo::Instruction& instruction, const Tensor& out,
                 std::span<const Unit> units, uint64_t slots, uint64_t p_k,
                 program::Sequence& program, const EmitPartial& emit) {
  Graph& graph = lowering.graph();
  const uint32_t tiles = graph.target().NumTiles();
  const uint32_t first_tile = lowering.mapper().TakeTiles(std::min<uint64_t>(slots * p_k, tiles));
  auto tile_of = [&](uint64_t slot, uint64_t g) {
    return static_cast<uint32_t>((first_tile + slot + g * slots) % tiles);
  };
  const uint64_t out_n = out.NumElements();
  const Tensor flat_out = out.Flatten();
  for (const Unit& unit : units) {
    TILEPROF_ASSIGN_OR_RETURN(Tensor piece,
                              flat_out.Slice(unit.position, unit.position + unit.count));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(piece, tile_of(unit.slot, 0)));
  }
  Tensor partials;
  if (p_k > 1) {
    TILEPROF_ASSIGN_OR_RETURN(
        partials, lowering.NewTensor(out.element_type(), {p_k, out_n},
                                     fmt::format("{}.partials", instruction.name()), false));
  }
  const Tensor flat_partials = partials.Flatten();
  const ComputeSetId cs = lowering.AddComputeSet(instruction.name(), program);
  for (size_t j = 0; j < units.size(); ++j) {
    const Unit& unit = units[j];
    for (uint64_t g = 0; g < p_k; ++g) {
      const uint32_t tile = tile_of(unit.slot, g);
      Tensor target;
      if (p_k > 1) {
        TILEPROF_ASSIGN_OR_RETURN(
            target,
            flat_partials.Slice(g * out_n + unit.position, g * out_n + unit.position + unit.count));
        TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(target, tile));
      } else {
        TILEPROF_ASSIGN_OR_RETURN(target,
                                  flat_out.Slice(unit.position, unit.position + unit.count));
      }
      TILEPROF_RETURN_IF_ERROR(emit(cs, j, g, target, tile));
    }
  }
  if (p_k == 1) return {};
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* reduce,
                            GetReduceCodelet(ReduceOp::kAdd, out.element_type(), false));
  const ComputeSetId reduce_cs =
      lowering.AddComputeSet(fmt::format("{}/reduce", instruction.name()), program);
  for (const Unit& unit : units) {
    std::vector<Tensor> parts;
    for (uint64_t g = 0; g < p_k; ++g) {
      TILEPROF_ASSIGN_OR_RETURN(
          Tensor part,
          flat_partials.Slice(g * out_n + unit.position, g * out_n + unit.position + unit.count));
      parts.push_back(std::move(part));
    }
    TILEPROF_ASSIGN_OR_RETURN(Tensor all, Tensor::Concat(parts));
    TILEPROF_ASSIGN_OR_RETURN(Tensor target,
                              flat_out.Slice(unit.position, unit.position + unit.count));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex,
                              graph.AddVertex(reduce_cs, *reduce, instruction.name()));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(vertex, tile_of(unit.slot, 0)));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["partials"], std::move(all)));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["out"], target));
  }
  return {};
}

uint64_t SplitWays(uint32_t tiles, uint64_t slots, uint64_t chunk, uint64_t macs_per_output,
                   uint64_t k) {
  if (slots >= tiles || k <= 1) return 1;
  const uint64_t macs = chunk * macs_per_output;
  return std::max<uint64_t>(
      1,
      std::min<uint64_t>({tiles / slots, (macs + kMinMacsPerVertex - 1) / kMinMacsPerVertex, k}));
}

}  // namespace tileprof::engine::compiler
