// reduce: the reduction computation is recognised from its root (add,
// multiply, maximum, minimum, and, or of the two parameters) and lowered to
// popops::Reduce vertices; variadic reductions and other computations are
// opaque ops.
//
// One stage: the outputs are mapped linearly and each output tile reduces
// the F = |input| / |output| inputs of each of its outputs. When a tile's
// share of the input would exceed kMaxReduceInputBytes and tiles are left
// over (a few outputs of a large input), the reduction takes two stages:
// P1 groups (P1 divides F) each reduce F / P1 inputs per output on their own
// tiles into a partials tensor, and the output tiles reduce the P1 partials.
// As for dots, volumes are exact and locations proportional.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "engine/codelets/codelets.h"
#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"

namespace tileprof::engine::compiler {
namespace {

// A vertex reading more than this from one reduction spends its time on
// the exchange into one tile; 32 KiB is 5% of an ipu2 tile and 12.5% of an
// ipu1 tile, a share that leaves room for everything else on the tile.
constexpr uint64_t kMaxReduceInputBytes = 32 * 1024;

std::optional<ReduceOp> ReduceOpOf(const hlo::Computation& computation) {
  const hlo::Instruction* root = computation.root();
  if (root == nullptr || root->operand_count() != 2) return std::nullopt;
  for (const hlo::Instruction* operand : root->operands())
    if (operand->opcode() != hlo::Opcode::kParameter) return std::nullopt;
  switch (root->opcode()) {
    case hlo::Opcode::kAdd: return ReduceOp::kAdd;
    case hlo::Opcode::kMultiply: return ReduceOp::kMul;
    case hlo::Opcode::kMaximum: return ReduceOp::kMax;
    case hlo::Opcode::kMinimum: return ReduceOp::kMin;
    case hlo::Opcode::kAnd: return ReduceOp::kAnd;
    case hlo::Opcode::kOr: return ReduceOp::kOr;
    default: return std::nullopt;
  }
}

}  // namespace

Expected<Value> Lowering::LowerReduce(const hlo::Instruction& instruction,
                                      std::span<const Value> operands,
                                      program::Sequence& program) {
  const hlo::Shape& shape = instruction.shape();
  if (operands.size() != 2 || !shape.IsArray() || !IsNative(shape) || operands[0].is_tuple ||
      !operands[0].tensor.valid() || instruction.called_computations().size() != 1) {
    return LowerOpaque(instruction, operands, program);
  }
  const std::optional<ReduceOp> op = ReduceOpOf(*instruction.called_computations()[0]);
  const Tensor& in = operands[0].tensor;
  TILEPROF_ASSIGN_OR_RETURN(StorageType storage, StorageOf(shape.element_type));
  const auto out_n = static_cast<uint64_t>(shape.ElementCount().value_or(0));
  const uint64_t in_n = in.NumElements();
  if (!op || storage.type != in.element_type() || out_n == 0 || in_n == 0 || in_n % out_n != 0) {
    return LowerOpaque(instruction, operands, program);
  }
  Expected<const Codelet*> codelet = GetReduceCodelet(*op, storage.type, false);
  if (!codelet) return LowerOpaque(instruction, operands, program);
  const uint64_t factor = in_n / out_n;
  const uint64_t size = SizeOf(storage.type);
  const uint32_t tiles = graph_.target().NumTiles();
  const uint64_t chunk = mapper_.ChunkElements(out_n, storage.type);
  const uint64_t out_tiles = (out_n + chunk - 1) / chunk;
  uint64_t groups = 1;
  if (factor * chunk * size > kMaxReduceInputBytes && out_tiles < tiles) {
    const uint64_t want = std::min<uint64_t>(
        tiles / out_tiles, (factor * chunk * size + kMaxReduceInputBytes - 1) / kMaxReduceInputBytes);
    for (groups = std::min(want, factor); groups > 1 && factor % groups != 0;) --groups;
  }
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, NewTensor(shape, instruction.name(), false));
  if (groups == 1) {
    TILEPROF_RETURN_IF_ERROR(mapper_.Map(out));
    const ComputeSetId cs = AddComputeSet(instruction.name(), program);
    const FieldInput input{"partials", in, Access::kProportional};
    TILEPROF_RETURN_IF_ERROR(EmitPerTile(cs, **codelet, "out", out, {&input, 1}, instruction.name()));
    return Value::Array(out);
  }
  const uint32_t first = mapper_.TakeTiles(std::min<uint64_t>(out_tiles * groups, tiles));
  const Tensor flat_out = out.Flatten();
  TILEPROF_ASSIGN_OR_RETURN(Tensor partials, NewTensor(storage.type, {groups, out_n},
                                                       fmt::format("{}.partials", instruction.name()), false));
  const Tensor flat_partials = partials.Flatten();
  const Tensor flat_in = in.Flatten();
  const uint64_t per_group = factor / groups;
  const ComputeSetId stage1 = AddComputeSet(instruction.name(), program);
  const ComputeSetId stage2 = AddComputeSet(fmt::format("{}/reduce", instruction.name()), program);
  for (uint64_t j = 0; j < out_tiles; ++j) {
    const uint64_t begin = j * chunk;
    const uint64_t count = std::min(chunk, out_n - begin);
    const auto out_tile = static_cast<uint32_t>((first + j) % tiles);
    TILEPROF_ASSIGN_OR_RETURN(Tensor target, flat_out.Slice(begin, begin + count));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(target, out_tile));
    std::vector<Tensor> parts;
    for (uint64_t g = 0; g < groups; ++g) {
      const auto tile = static_cast<uint32_t>((first + j + g * out_tiles) % tiles);
      const uint64_t at = g * out_n + begin;
      TILEPROF_ASSIGN_OR_RETURN(Tensor part, flat_partials.Slice(at, at + count));
      TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(part, tile));
      TILEPROF_ASSIGN_OR_RETURN(Tensor inputs, flat_in.Slice(at * per_group, (at + count) * per_group));
      TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(stage1, **codelet, instruction.name()));
      TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, tile));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["partials"], inputs));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["out"], part));
      parts.push_back(std::move(part));
    }
    TILEPROF_ASSIGN_OR_RETURN(Tensor all, Tensor::Concat(parts));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(stage2, **codelet, instruction.name()));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, out_tile));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["partials"], all));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["out"], target));
  }
  return Value::Array(out);
}

}  // namespace tileprof::engine::compiler
