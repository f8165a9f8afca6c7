// The linear-algebra custom calls and XLA's triangular-solve and cholesky
// (linalg_call.h reads them; the codelets are engine/codelets/linalg.h).
// The matrices are small and independent: the batch elements are cut into
// groups of consecutive ones, a group per tile over consecutive tiles; each
// group's results are mapped to its tile and its matrices shared among the
// tile's worker contexts, a vertex each. A vertex reads its own matrices
// wherever the operands live (an entry parameter not read yet is mapped like
// the results instead), never a whole operand. Workspace results are
// allocated and never written, as the library's scratch. A matrix too large
// for one tile stays opaque, but for one Cholesky factorisation, which is
// blocked over tiles (lower_cholesky_blocked.cc).
#include <algorithm>

#include <fmt/format.h>

#include "engine/codelets/linalg.h"
#include "engine/compiler/linalg_call.h"
#include "engine/compiler/lower.h"

namespace tileprof::engine::compiler {
namespace {

// Batch elements [first, first + count) on `tile`.
struct Group {
  uint64_t first = 0;
  uint64_t count = 0;
  uint32_t tile = 0;
};

// An array read or written per batch element: `per` consecutive elements
// of `flat` each.
struct Slab {
  Tensor flat;
  uint64_t per = 0;
};

Expected<const Codelet*> CodeletOf(CompilerCodelets& codelets, const LinalgCall& call) {
  switch (call.op) {
    case LinalgOp::kGetrf:
      return codelets.Getrf(call.type);
    case LinalgOp::kPotrf:
      return codelets.Potrf(call.type);
    case LinalgOp::kTrsm:
      return codelets.Trsm(call.type);
    case LinalgOp::kLuPivots:
      return codelets.LuPivotsToPermutation();
    case LinalgOp::kGeqrf:
      return codelets.Geqrf(call.type);
    case LinalgOp::kOrgqr:
      return codelets.Orgqr(call.type);
  }
  return MakeError("unknown linear-algebra op");
}

// The groups: the batch spread over the tiles, at least as many matrices
// per tile as make the mapper's minimum chunk of the results, counted in
// `per_elements` (the largest result per matrix), so that tiny matrices do
// not each cost a tile's vertex, exchange and control.
std::vector<Group> PlanGroups(LinearMapper& mapper, const Target& target, uint64_t batch,
                              uint64_t per_elements, ElementType type) {
  const uint64_t tiles = target.NumTiles();
  const uint64_t chunk = mapper.ChunkElements(batch * per_elements, type);
  const uint64_t per_tile =
      std::max<uint64_t>((batch + tiles - 1) / tiles, (chunk + per_elements - 1) / per_elements);
  const uint64_t used = (batch + per_tile - 1) / per_tile;
  const uint32_t first_tile = mapper.TakeTiles(used);
  std::vector<Group> groups;
  for (uint64_t i = 0; i < used; ++i) {
    const uint64_t first = i * per_tile;
    groups.push_back({first, std::min(batch, first + per_tile) - first,
                      static_cast<uint32_t>((first_tile + i) % tiles)});
  }
  return groups;
}

Status MapSlab(Graph& graph, const Slab& slab, const Group& group) {
  if (slab.per == 0) return {};
  TILEPROF_ASSIGN_OR_RETURN(
      Tensor part, slab.flat.Slice(group.first * slab.per, (group.first + group.count) * slab.per));
  return graph.SetTileMapping(part, group.tile);
}

// A call's arrays, per batch element, in the codelet's field order.
struct Fields {
  std::vector<Slab> inputs;
  Tensor alpha;  // trsm's
  std::vector<Slab> outputs;
};

Expected<Fields> FieldsOf(const LinalgCall& linalg, std::span<const Value> operands,
                          const std::vector<Tensor>& leaves, std::string_view where) {
  const auto slab = [&](const Tensor& t) {
    return Slab{t.Flatten(), t.NumElements() / linalg.batch};
  };
  Fields fields;
  for (size_t i : linalg.inputs) {
    if (operands[i].is_tuple || !operands[i].tensor.valid()) {
      return MakeError("{}: operand {} is not an array", where, i);
    }
    fields.inputs.push_back(slab(operands[i].tensor));
  }
  if (linalg.alpha) fields.alpha = operands[*linalg.alpha].tensor;
  for (size_t i : linalg.outputs) fields.outputs.push_back(slab(leaves[i]));
  return fields;
}

// Maps the results the codelet writes (and the matrices of an entry
// parameter no one has read yet) group by group; workspace linearly.
Status MapArrays(Lowering& lowering, const LinalgCall& linalg, const Fields& fields,
                 std::span<const Value> operands, const std::vector<Tensor>& leaves,
                 std::span<const Group> groups) {
  Graph& graph = lowering.graph();
  for (const Group& group : groups) {
    for (const Slab& s : fields.outputs) TILEPROF_RETURN_IF_ERROR(MapSlab(graph, s, group));
    for (size_t k = 0; k < fields.inputs.size(); ++k) {
      if (lowering.IsUnread(operands[linalg.inputs[k]].tensor)) {
        TILEPROF_RETURN_IF_ERROR(MapSlab(graph, fields.inputs[k], group));
      }
    }
  }
  for (size_t i = 0; i < leaves.size(); ++i) {
    const auto& written = linalg.outputs;
    if (std::find(written.begin(), written.end(), i) == written.end() &&
        leaves[i].NumElements() > 0) {
      TILEPROF_RETURN_IF_ERROR(lowering.mapper().Map(leaves[i]));
    }
  }
  return {};
}

// One vertex for batch elements [first, first + count) of `group`'s tile.
Status EmitVertex(Graph& graph, ComputeSetId cs, const Codelet& codelet, const Fields& fields,
                  std::span<const uint32_t> params, const Group& group, uint64_t first,
                  uint64_t count, std::string_view name) {
  TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph.AddVertex(cs, codelet, name));
  TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(vertex, group.tile));
  size_t field = 0;
  const auto connect = [&](const Slab& slab) -> Status {
    TILEPROF_ASSIGN_OR_RETURN(Tensor part,
                              slab.flat.Slice(first * slab.per, (first + count) * slab.per));
    return graph.Connect(vertex, field++, part);
  };
  for (const Slab& slab : fields.inputs) TILEPROF_RETURN_IF_ERROR(connect(slab));
  if (fields.alpha.valid()) TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex, field++, fields.alpha));
  for (const Slab& slab : fields.outputs) TILEPROF_RETURN_IF_ERROR(connect(slab));
  return graph.SetInitialValues(vertex, params);
}

// Each group's matrices shared among its tile's worker contexts, which run
// their vertices at once.
Status EmitGroups(Lowering& lowering, const Codelet& codelet, const Fields& fields,
                  std::span<const uint32_t> params, std::span<const Group> groups,
                  std::string_view name, program::Sequence& program) {
  Graph& graph = lowering.graph();
  const ComputeSetId cs = lowering.AddComputeSet(name, program);
  const uint64_t workers = graph.target().NumWorkerContexts();
  for (const Group& group : groups) {
    const uint64_t vertices = std::min(workers, group.count);
    for (uint64_t v = 0; v < vertices; ++v) {
      const uint64_t begin = group.first + group.count * v / vertices;
      const uint64_t end = group.first + group.count * (v + 1) / vertices;
      TILEPROF_RETURN_IF_ERROR(
          EmitVertex(graph, cs, codelet, fields, params, group, begin, end - begin, name));
    }
  }
  return {};
}

// Whether one matrix of the call, with its results, takes at most half a
// tile's memory (the library's workspace, not per matrix, left out). A
// vertex factors a whole matrix on one tile; a larger one would need a
// blocked factorisation spread over tiles, which is not done.
bool FitsATile(const hlo::Instruction& instruction, const LinalgCall& linalg,
               const Target& target) {
  const auto bytes = [](const hlo::Shape& shape) {
    return static_cast<uint64_t>(shape.ByteSize().value_or(INT64_MAX));
  };
  const hlo::Shape& result = instruction.shape();
  uint64_t total = 0;
  for (size_t i : linalg.inputs) total += bytes(instruction.operands()[i]->shape());
  for (size_t i : linalg.outputs)
    total += bytes(result.IsTuple() ? result.tuple_shapes[i] : result);
  return total / std::max<uint64_t>(linalg.batch, 1) <= target.BytesPerTile() / 2;
}

// The call's result: its arrays mapped group by group and the vertices
// that compute them.
Expected<Value> EmitLinalg(Lowering& lowering, const hlo::Instruction& instruction,
                           const LinalgCall& linalg, std::span<const Value> operands,
                           program::Sequence& program) {
  if (linalg.batch == 0) return lowering.NewValue(instruction.shape(), instruction.name(), true);
  TILEPROF_ASSIGN_OR_RETURN(Value result,
                            lowering.NewValue(instruction.shape(), instruction.name(), false));
  const std::vector<Tensor> leaves = result.Leaves();
  TILEPROF_ASSIGN_OR_RETURN(
      Fields fields, FieldsOf(linalg, operands, leaves, hlo::OpcodeName(instruction.opcode())));
  if (linalg.scratch_info) {
    TILEPROF_ASSIGN_OR_RETURN(
        Tensor info, lowering.NewTensor(ElementType::kS32, {linalg.batch},
                                        fmt::format("{}.info", instruction.name()), false));
    fields.outputs.push_back(Slab{info, 1});
  }
  uint64_t largest = 1;
  for (const Slab& s : fields.outputs) largest = std::max(largest, s.per);
  Graph& graph = lowering.graph();
  const std::vector<Group> groups = PlanGroups(lowering.mapper(), graph.target(), linalg.batch,
                                               largest, fields.outputs.front().flat.element_type());
  TILEPROF_RETURN_IF_ERROR(MapArrays(lowering, linalg, fields, operands, leaves, groups));
  if (linalg.op == LinalgOp::kTrsm && !fields.alpha.valid()) {  // cuBLAS's kernel and XLA: 1
    const double one = 1;
    TILEPROF_ASSIGN_OR_RETURN(
        fields.alpha, graph.AddConstantFromDoubles(linalg.type, {}, {&one, 1},
                                                   fmt::format("{}.alpha", instruction.name())));
    TILEPROF_RETURN_IF_ERROR(lowering.mapper().MapToTile(fields.alpha, groups.front().tile));
  }
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet, CodeletOf(lowering.codelets(), linalg));
  TILEPROF_RETURN_IF_ERROR(
      EmitGroups(lowering, *codelet, fields, linalg.params, groups, instruction.name(), program));
  return result;
}

}  // namespace

Expected<Value> Lowering::LowerLinalgCall(const hlo::Instruction& instruction,
                                          const std::optional<LinalgCall>& linalg,
                                          std::span<const Value> operands,
                                          program::Sequence& program) {
  if (!linalg) return LowerOpaque(instruction, operands, program);
  if (FitsATile(instruction, *linalg, graph_.target())) {
    return EmitLinalg(*this, instruction, *linalg, operands, program);
  }
  // One Cholesky too large for a tile is blocked over tiles.
  if (linalg->op == LinalgOp::kPotrf && linalg->batch == 1) {
    TILEPROF_ASSIGN_OR_RETURN(
        std::optional<Value> blocked,
        LowerBlockedCholesky(instruction, operands[linalg->inputs[0]], linalg->params[0],
                             linalg->params[1] != 0, program));
    if (blocked) return std::move(*blocked);
  }
  return LowerOpaque(instruction, operands, program);
}

Expected<Value> Lowering::LowerLinalg(const hlo::Instruction& instruction,
                                      const hlo::CustomCall& call, std::span<const Value> operands,
                                      program::Sequence& program) {
  TILEPROF_ASSIGN_OR_RETURN(std::optional<LinalgCall> linalg, ReadLinalgCall(instruction, call));
  return LowerLinalgCall(instruction, linalg, operands, program);
}

Expected<Value> Lowering::LowerLinalgOp(const hlo::Instruction& instruction,
                                        std::span<const Value> operands,
                                        program::Sequence& program) {
  TILEPROF_ASSIGN_OR_RETURN(std::optional<LinalgCall> linalg, ReadLinalgOp(instruction));
  return LowerLinalgCall(instruction, linalg, operands, program);
}

}  // namespace tileprof::engine::compiler
