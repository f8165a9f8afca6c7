// reduce: the reduction computation is recognised from its root (add,
// multiply, maximum, minimum, and, or of the two parameters) and lowered to
// popops::Reduce vertices; variadic reductions and other computations are
// opaque ops. The input is viewed as [F, outputs] (reduced dimensions
// first, kept ones after, the layout the Reduce vertices' partials take),
// so each vertex reads exactly its outputs' inputs; a view too fragmented
// for that (more than kMaxViewRegions runs) is first rearranged into a new
// tensor. An init value other than the operation's identity fills the
// output first and the vertices combine into it (isUpdate).
//
// One stage: the outputs are mapped linearly and each output tile reduces
// the F = |input| / |output| inputs of each of its outputs. When a tile's
// share of the input would exceed kMaxReduceInputBytes and tiles are left
// over (a few outputs of a large input), the reduction takes two stages:
// P1 groups (P1 divides F) each reduce F / P1 inputs per output on their own
// tiles into a partials tensor, and the output tiles reduce the P1 partials.
// Volumes and locations are exact.
#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "engine/codelets/codelets.h"
#include "engine/compiler/lower.h"
#include "engine/compiler/runs.h"
#include "engine/compiler/types.h"
#include "engine/hlo/literal.h"

namespace tileprof::engine::compiler {
namespace {

// Each element of `out` on the tile holding the first element of its row
// of `in` (in.NumElements() / out.NumElements() consecutive elements): the
// rows are reduced where they lie, and only a row that straddles two tiles
// sends its tail. Mapped linearly instead, the few kilobytes of outputs sat
// on a few tiles that received every row: 1.6 MB onto one tile for a batch
// norm's sum over [96,32,112,112].
Status MapRowsWhereHeld(Graph& graph, const Tensor& in, const Tensor& out) {
  const uint64_t outputs = out.NumElements();
  if (outputs == 0) return {};
  const uint64_t width = in.NumElements() / outputs;
  if (width == 0)
    return MakeError("{} has fewer rows than {}", in.ShapeString(), out.ShapeString());
  const std::vector<RowBlock> blocks = RowBlocks(graph, in.Flatten(), width);
  uint64_t rows = 0;
  for (const RowBlock& b : blocks) rows += b.end_row - b.first_row;
  if (rows != outputs) return MakeError("{} is not mapped", in.ShapeString());
  const Tensor flat_out = out.Flatten();
  for (const RowBlock& b : blocks) {
    TILEPROF_ASSIGN_OR_RETURN(Tensor part, flat_out.Slice(b.first_row, b.end_row));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(part, b.tile));
  }
  return {};
}

// A vertex reading more than this from one reduction spends its time on
// the exchange into one tile; 32 KiB is 5% of an ipu2 tile and 12.5% of an
// ipu1 tile, a share that leaves room for everything else on the tile.
constexpr uint64_t kMaxReduceInputBytes = 32 * 1024;

// A vertex per output costs ~16 B of state and a worker start; past 64 per
// tile, rearranging the input (one pass) is the cheaper plan.
constexpr uint64_t kMaxVerticesPerTile = 64;

}  // namespace

std::optional<ReduceOp> ReduceOpOf(const hlo::Computation& computation) {
  const hlo::Instruction* root = computation.root();
  if (root == nullptr || root->operand_count() != 2) return std::nullopt;
  for (const hlo::Instruction* operand : root->operands())
    if (operand->opcode() != hlo::Opcode::kParameter) return std::nullopt;
  switch (root->opcode()) {
    case hlo::Opcode::kAdd:
      return ReduceOp::kAdd;
    case hlo::Opcode::kMultiply:
      return ReduceOp::kMul;
    case hlo::Opcode::kMaximum:
      return ReduceOp::kMax;
    case hlo::Opcode::kMinimum:
      return ReduceOp::kMin;
    case hlo::Opcode::kAnd:
      return ReduceOp::kAnd;
    case hlo::Opcode::kOr:
      return ReduceOp::kOr;
    default:
      return std::nullopt;
  }
}

// True when `init` is a constant equal to the identity of `op`.
bool IsReduceIdentity(const hlo::Instruction& init, ReduceOp op) {
  if (init.opcode() != hlo::Opcode::kConstant || !init.shape().IsArray()) return false;
  Expected<hlo::Literal> literal = hlo::ParseLiteral(init.literal(), init.shape());
  if (!literal || literal->kind != hlo::Literal::Kind::kArray) return false;
  double value = 0;
  if (literal->reals.size() == 1)
    value = literal->reals[0];
  else if (literal->integers.size() == 1)
    value = static_cast<double>(literal->integers[0]);
  else if (literal->unsigneds.size() == 1)
    value = static_cast<double>(literal->unsigneds[0]);
  else
    return false;
  const bool is_float = literal->reals.size() == 1;
  switch (op) {
    case ReduceOp::kAdd:
    case ReduceOp::kOr:
      return value == 0;
    case ReduceOp::kMul:
    case ReduceOp::kAnd:
      return value == 1;
    // Integers: the type's lowest value; checking it needs the type, so
    // only the float identities are recognised there.
    case ReduceOp::kMax:
      return is_float && std::isinf(value) && value < 0;
    case ReduceOp::kMin:
      return is_float && std::isinf(value) && value > 0;
  }
  return false;
}

bool IsSimpleReducer(const hlo::Computation& computation) {
  return ReduceOpOf(computation).has_value();
}

Expected<Value> Lowering::LowerReduce(const hlo::Instruction& instruction,
                                      std::span<const Value> operands, program::Sequence& program) {
  if (operands.size() != 2 || instruction.called_computations().size() != 1 ||
      !IsSimpleReducer(*instruction.called_computations()[0])) {
    return LowerReduceExpr(instruction, operands, program);
  }
  if (operands[0].is_tuple || !operands[0].tensor.valid()) {
    return LowerOpaque(instruction, operands, program);
  }
  const hlo::Attribute* dims_attribute = instruction.FindAttribute("dimensions");
  if (dims_attribute == nullptr) return LowerOpaque(instruction, operands, program);
  TILEPROF_ASSIGN_OR_RETURN(std::vector<int64_t> reduced,
                            hlo::ParseIntList(dims_attribute->value()));
  return ReduceArray(instruction, operands, operands[0].tensor, reduced, program);
}

namespace {

// A reduction that popops::Reduce vertices compute (ReduceArray): one binary
// op of the storage type `type` into `out_n` outputs of the instruction's
// shape.
struct SimpleReduce {
  const hlo::Instruction& instruction;
  ReduceOp op;
  ElementType type;
  // The init is not the op's identity: it fills the output first and the
  // vertices combine into it (isUpdate).
  bool update;
  const Tensor& init;      // one element
  const Codelet& codelet;  // Reduce, with isUpdate when `update`
  uint64_t out_n;
};

// The reduction of `in` that `instruction` is, or nullopt when it is lowered
// as an opaque op.
Expected<std::optional<SimpleReduce>> SimpleReduceOf(const hlo::Instruction& instruction,
                                                     std::span<const Value> operands,
                                                     const Tensor& in) {
  const auto opaque = [] { return std::optional<SimpleReduce>(); };
  const hlo::Shape& shape = instruction.shape();
  if (operands.size() != 2 || !shape.IsArray() || !IsNative(shape) ||
      instruction.called_computations().size() != 1) {
    return opaque();
  }
  const std::optional<ReduceOp> op = ReduceOpOf(*instruction.called_computations()[0]);
  TILEPROF_ASSIGN_OR_RETURN(StorageType storage, StorageOf(shape.element_type));
  const auto out_n = static_cast<uint64_t>(shape.ElementCount().value_or(0));
  const uint64_t in_n = in.NumElements();
  if (!op || storage.type != in.element_type() || out_n == 0 || in_n == 0 || in_n % out_n != 0) {
    return opaque();
  }
  const hlo::Instruction& init = *instruction.operand(1);
  const bool update = !IsReduceIdentity(init, *op);
  const Tensor& init_tensor = operands[1].tensor;
  if (operands[1].is_tuple || !init_tensor.valid() || init_tensor.NumElements() != 1 ||
      init_tensor.element_type() != storage.type || storage.per_element != 1) {
    return opaque();
  }
  Expected<const Codelet*> codelet = GetReduceCodelet(*op, storage.type, update);
  if (!codelet) return opaque();
  return std::optional<SimpleReduce>(
      SimpleReduce{instruction, *op, storage.type, update, init_tensor, **codelet, out_n});
}

// Fills `target` with the init when that is not the op's identity.
Status FillInit(Lowering& lowering, const SimpleReduce& r, const Tensor& target,
                program::Sequence& program) {
  if (!r.update) return {};
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* fill, GetFillCodelet(r.type));
  const ComputeSetId cs =
      lowering.AddComputeSet(fmt::format("{}/init", r.instruction.name()), program);
  const FieldInput in_field{"in", r.init, Access::kWhole};
  return lowering.EmitPerTile(cs, *fill, "out", target, {&in_field, 1}, r.instruction.name());
}

// Each output's inputs one run of `in`: a vertex per output reads it as P
// partials of M = 1 output.
Expected<Value> ReducePerOutput(Lowering& lowering, const SimpleReduce& r, const Tensor& in,
                                program::Sequence& program) {
  const hlo::Instruction& instruction = r.instruction;
  Graph& graph = lowering.graph();
  const uint64_t out_n = r.out_n;
  TILEPROF_ASSIGN_OR_RETURN(Tensor out,
                            lowering.NewTensor(instruction.shape(), instruction.name(), true));
  TILEPROF_ASSIGN_OR_RETURN(const Tensor rows, in.Reshape({out_n, in.NumElements() / out_n}));
  TILEPROF_RETURN_IF_ERROR(FillInit(lowering, r, out, program));
  const ComputeSetId cs = lowering.AddComputeSet(instruction.name(), program);
  const Tensor flat_out = out.Flatten();
  uint64_t position = 0;
  for (const MappedRegion& piece : graph.MapRegions(flat_out)) {
    if (!piece.tile) return MakeError("{} is not mapped", out.ShapeString());
    for (uint64_t j = position; j < position + piece.region.size(); ++j) {
      TILEPROF_ASSIGN_OR_RETURN(Tensor partials, rows.Index(j));
      TILEPROF_ASSIGN_OR_RETURN(Tensor target, flat_out.Slice(j, j + 1));
      TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex,
                                graph.AddVertex(cs, r.codelet, instruction.name()));
      TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(vertex, *piece.tile));
      TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["partials"], partials));
      TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["out"], target));
    }
    position += piece.region.size();
  }
  return Value::Array(out);
}

// How the [F, outputs] view is reduced: `chunk` outputs on each of
// `out_tiles` output tiles, the F = `factor` inputs of each output in
// `groups` (P1) groups, one stage when 1.
struct ReduceSplit {
  uint64_t factor = 1, chunk = 1, out_tiles = 1, groups = 1;
};

// Two stages when a tile's share of the input would exceed
// kMaxReduceInputBytes and tiles are left over (P1 divides F).
ReduceSplit SplitOf(Lowering& lowering, const SimpleReduce& r, uint64_t factor) {
  ReduceSplit s;
  s.factor = factor;
  const uint64_t size = SizeOf(r.type);
  const uint32_t tiles = lowering.graph().target().NumTiles();
  s.chunk = lowering.mapper().ChunkElements(r.out_n, r.type);
  s.out_tiles = (r.out_n + s.chunk - 1) / s.chunk;
  if (factor * s.chunk * size > kMaxReduceInputBytes && s.out_tiles < tiles) {
    const uint64_t want = std::min<uint64_t>(
        tiles / s.out_tiles,
        (factor * s.chunk * size + kMaxReduceInputBytes - 1) / kMaxReduceInputBytes);
    for (s.groups = std::min(want, factor); s.groups > 1 && factor % s.groups != 0;) --s.groups;
  }
  return s;
}

// One stage: each output tile reduces the F inputs of each of its outputs
// (`view`, [F, outputs]) into the new, unmapped `out`.
Expected<Value> ReduceOneStage(Lowering& lowering, const SimpleReduce& r, const Tensor& view,
                               const Tensor& out, program::Sequence& program) {
  const hlo::Instruction& instruction = r.instruction;
  Graph& graph = lowering.graph();
  TILEPROF_RETURN_IF_ERROR(lowering.mapper().Map(out));
  TILEPROF_RETURN_IF_ERROR(FillInit(lowering, r, out, program));
  const ComputeSetId cs = lowering.AddComputeSet(instruction.name(), program);
  const Tensor flat_out = out.Flatten();
  uint64_t position = 0;
  for (const MappedRegion& piece : graph.MapRegions(flat_out)) {
    const uint64_t begin = position;
    position += piece.region.size();
    if (!piece.tile) return MakeError("{} is not mapped", out.ShapeString());
    TILEPROF_ASSIGN_OR_RETURN(Tensor partials, view.Slice(begin, position, 1));
    TILEPROF_ASSIGN_OR_RETURN(Tensor target, flat_out.Slice(begin, position));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph.AddVertex(cs, r.codelet, instruction.name()));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(vertex, *piece.tile));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["partials"], partials));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["out"], target));
  }
  return Value::Array(out);
}

// Two stages: P1 groups each reduce F / P1 inputs per output on their own
// tiles into a partials tensor, and the output tiles reduce the P1
// partials into the new, unmapped `out`.
Expected<Value> ReduceTwoStages(Lowering& lowering, const SimpleReduce& r, const Tensor& view,
                                const Tensor& out, const ReduceSplit& s,
                                program::Sequence& program) {
  const hlo::Instruction& instruction = r.instruction;
  Graph& graph = lowering.graph();
  const uint64_t out_n = r.out_n, chunk = s.chunk, out_tiles = s.out_tiles, groups = s.groups;
  const uint32_t tiles = graph.target().NumTiles();
  const uint32_t first = lowering.mapper().TakeTiles(std::min<uint64_t>(out_tiles * groups, tiles));
  const Tensor flat_out = out.Flatten();
  TILEPROF_ASSIGN_OR_RETURN(
      Tensor partials, lowering.NewTensor(r.type, {groups, out_n},
                                          fmt::format("{}.partials", instruction.name()), false));
  const Tensor flat_partials = partials.Flatten();
  const uint64_t per_group = s.factor / groups;
  Expected<const Codelet*> stage1_codelet = GetReduceCodelet(r.op, r.type, false);
  if (!stage1_codelet) return stage1_codelet.error();
  if (r.update) {
    for (uint64_t j = 0; j < out_tiles; ++j) {
      const uint64_t begin = j * chunk;
      TILEPROF_ASSIGN_OR_RETURN(Tensor target,
                                flat_out.Slice(begin, begin + std::min(chunk, out_n - begin)));
      TILEPROF_RETURN_IF_ERROR(
          graph.SetTileMapping(target, static_cast<uint32_t>((first + j) % tiles)));
    }
    TILEPROF_RETURN_IF_ERROR(FillInit(lowering, r, out, program));
  }
  const ComputeSetId stage1 = lowering.AddComputeSet(instruction.name(), program);
  const ComputeSetId stage2 =
      lowering.AddComputeSet(fmt::format("{}/reduce", instruction.name()), program);
  for (uint64_t j = 0; j < out_tiles; ++j) {
    const uint64_t begin = j * chunk;
    const uint64_t count = std::min(chunk, out_n - begin);
    const auto out_tile = static_cast<uint32_t>((first + j) % tiles);
    TILEPROF_ASSIGN_OR_RETURN(Tensor target, flat_out.Slice(begin, begin + count));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(target, out_tile));
    std::vector<Tensor> parts;
    for (uint64_t g = 0; g < groups; ++g) {
      const auto tile = static_cast<uint32_t>((first + j + g * out_tiles) % tiles);
      const uint64_t at = g * out_n + begin;
      TILEPROF_ASSIGN_OR_RETURN(Tensor part, flat_partials.Slice(at, at + count));
      TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(part, tile));
      TILEPROF_ASSIGN_OR_RETURN(Tensor rows, view.Slice(g * per_group, (g + 1) * per_group, 0));
      TILEPROF_ASSIGN_OR_RETURN(Tensor inputs, rows.Slice(begin, begin + count, 1));
      TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex,
                                graph.AddVertex(stage1, **stage1_codelet, instruction.name()));
      TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(vertex, tile));
      TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["partials"], inputs));
      TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["out"], part));
      parts.push_back(std::move(part));
    }
    TILEPROF_ASSIGN_OR_RETURN(Tensor all, Tensor::Concat(parts));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex,
                              graph.AddVertex(stage2, r.codelet, instruction.name()));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(vertex, out_tile));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["partials"], all));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["out"], target));
  }
  return Value::Array(out);
}

// The input viewed as [F, outputs] (`order`: the reduced dimensions first),
// rearranged first when that view would be too `fragmented`, and reduced in
// one stage or two.
Expected<Value> ReduceAsPartials(Lowering& lowering, const SimpleReduce& r, const Tensor& in,
                                 std::span<const size_t> order, bool fragmented,
                                 program::Sequence& program) {
  const hlo::Instruction& instruction = r.instruction;
  // The [F, outputs] view of the input.
  Tensor shuffled;
  if (fragmented) {
    std::vector<SourceDim> map(in.Rank());
    std::vector<uint64_t> dims(order.size());
    for (size_t i = 0; i < order.size(); ++i) {
      map[order[i]].src = map[order[i]].src2 = static_cast<uint32_t>(i);
      dims[i] = in.shape()[order[i]];
    }
    TILEPROF_ASSIGN_OR_RETURN(
        shuffled, lowering.EmitRearrange(in, map, nullptr, dims,
                                         fmt::format("{}/rearrange", instruction.name()), program));
  } else {
    TILEPROF_ASSIGN_OR_RETURN(shuffled, in.Dimshuffle(order));
  }
  const ReduceSplit split = SplitOf(lowering, r, in.NumElements() / r.out_n);
  TILEPROF_ASSIGN_OR_RETURN(const Tensor view, shuffled.Reshape({split.factor, r.out_n}));
  TILEPROF_ASSIGN_OR_RETURN(Tensor out,
                            lowering.NewTensor(instruction.shape(), instruction.name(), false));
  if (split.groups == 1) return ReduceOneStage(lowering, r, view, out, program);
  return ReduceTwoStages(lowering, r, view, out, split, program);
}

}  // namespace

Expected<Value> Lowering::ReduceArray(const hlo::Instruction& instruction,
                                      std::span<const Value> operands, const Tensor& in,
                                      std::span<const int64_t> reduced,
                                      program::Sequence& program) {
  TILEPROF_ASSIGN_OR_RETURN(const std::optional<SimpleReduce> r,
                            SimpleReduceOf(instruction, operands, in));
  if (!r) return LowerOpaque(instruction, operands, program);
  const hlo::Shape& shape = instruction.shape();
  const uint64_t out_n = r->out_n;
  std::vector<bool> is_reduced(in.Rank(), false);
  for (int64_t d : reduced) {
    if (d < 0 || static_cast<size_t>(d) >= in.Rank() || is_reduced[static_cast<size_t>(d)]) {
      return MakeError("reduce dimension {} invalid for rank {}", d, in.Rank());
    }
    is_reduced[static_cast<size_t>(d)] = true;
  }
  // A reduced dimension of one element reduces nothing: dropped (a view),
  // so that [1, 128, 30522] over {0, 2}, PyTorch/XLA's cross-entropy
  // maximum, is the row reduction it is.
  const auto of_one = [&](int64_t d) { return in.shape()[static_cast<size_t>(d)] == 1; };
  if (std::any_of(reduced.begin(), reduced.end(), of_one) &&
      !std::all_of(reduced.begin(), reduced.end(), of_one)) {
    std::vector<uint64_t> dims;
    std::vector<int64_t> kept;
    for (size_t d = 0; d < in.Rank(); ++d) {
      if (is_reduced[d] && in.shape()[d] == 1) continue;
      if (is_reduced[d]) kept.push_back(static_cast<int64_t>(dims.size()));
      dims.push_back(in.shape()[d]);
    }
    TILEPROF_ASSIGN_OR_RETURN(const Tensor squeezed, in.Reshape(std::move(dims)));
    return ReduceArray(instruction, operands, squeezed, kept, program);
  }
  std::vector<size_t> order;
  for (size_t d = 0; d < in.Rank(); ++d)
    if (is_reduced[d]) order.push_back(d);
  for (size_t d = 0; d < in.Rank(); ++d)
    if (!is_reduced[d]) order.push_back(d);
  auto fill_init = [&](const Tensor& target) { return FillInit(*this, *r, target, program); };
  // Reduced dimensions innermost: each output's inputs are one run, and a
  // vertex per output reads it as P partials of M = 1 output; past
  // kMaxVerticesPerTile outputs a tile, one ContinuousReduce per tile reads
  // all its outputs' runs.
  const size_t rank = in.Rank();
  size_t suffix = 0;
  while (suffix < rank && is_reduced[rank - 1 - suffix]) ++suffix;
  // Runs of the input, each reduced to one output.
  const bool row_reduction = suffix == reduced.size() && reduced.size() < rank && out_n > 1;
  if (row_reduction && out_n <= kMaxVerticesPerTile * graph_.target().NumTiles()) {
    // Rows longer than an output tile should receive (a softmax's sum over
    // a 30,522-word vocabulary for 128 tokens: 32 rows, 3.9 MB, onto each
    // of 4 tiles) are reduced where they lie, in pieces summed per output.
    const uint64_t row = in.NumElements() / out_n;
    const uint64_t read =
        SaturatingMul(SaturatingMul(mapper_.ChunkElements(out_n, r->type), row), SizeOf(r->type));
    if (read > kMaxReduceInputBytes) {
      TILEPROF_ASSIGN_OR_RETURN(std::optional<Value> held,
                                ReduceWhereHeld(instruction, in, is_reduced, r->op, shape,
                                                r->update ? FillFn(fill_init) : FillFn(), program));
      if (held) return std::move(*held);
    }
    return ReducePerOutput(*this, *r, in, program);
  }
  if (row_reduction) {
    TILEPROF_ASSIGN_OR_RETURN(Tensor out, NewTensor(shape, instruction.name(), true));
    TILEPROF_RETURN_IF_ERROR(fill_init(out));
    TILEPROF_ASSIGN_OR_RETURN(const Codelet* continuous,
                              GetContinuousReduceCodelet(r->op, r->type, r->update));
    TILEPROF_RETURN_IF_ERROR(
        EmitContinuousReduce(in, out, *continuous, instruction.name(), program));
    return Value::Array(out);
  }
  if (!row_reduction) {
    TILEPROF_ASSIGN_OR_RETURN(std::optional<Value> held,
                              ReduceWhereHeld(instruction, in, is_reduced, r->op, shape,
                                              r->update ? FillFn(fill_init) : FillFn(), program));
    if (held) return std::move(*held);
  }
  // Otherwise the input is viewed as [F, outputs], rearranged first when
  // that view would be too fragmented.
  const bool fragmented =
      EstimatedRuns(in.shape(), order) * std::max<size_t>(in.regions().size(), 1) > kMaxViewRegions;
  if (fragmented && suffix > 0) {
    // Reduce the innermost reduced dimensions in place first, so that only
    // a tensor that many times smaller is rearranged for the outer ones
    // (a rearrangement reading a box per tile whose rows are single
    // elements costs a region per element).
    std::vector<uint64_t> dims(in.shape().begin(),
                               in.shape().end() - static_cast<ptrdiff_t>(suffix));
    TILEPROF_ASSIGN_OR_RETURN(
        Tensor inner, NewTensor(r->type, dims, fmt::format("{}/inner", instruction.name()), false));
    TILEPROF_RETURN_IF_ERROR(MapRowsWhereHeld(graph_, in, inner));
    TILEPROF_ASSIGN_OR_RETURN(const Codelet* continuous,
                              GetContinuousReduceCodelet(r->op, r->type, false));
    TILEPROF_RETURN_IF_ERROR(EmitContinuousReduce(
        in, inner, *continuous, fmt::format("{}/inner", instruction.name()), program));
    std::vector<int64_t> outer;
    for (int64_t d : reduced)
      if (static_cast<size_t>(d) < rank - suffix) outer.push_back(d);
    return ReduceArray(instruction, operands, inner, outer, program);
  }
  return ReduceAsPartials(*this, *r, in, order, fragmented, program);
}

Status Lowering::EmitContinuousReduce(const Tensor& in, const Tensor& out, const Codelet& codelet,
                                      std::string_view name, program::Sequence& program) {
  const uint64_t outputs = out.NumElements();
  const uint64_t factor = in.NumElements() / outputs;
  TILEPROF_ASSIGN_OR_RETURN(Tensor rows, in.Reshape({outputs, factor}));
  const TensorIndex index(std::move(rows));
  const Tensor flat_out = out.Flatten();
  const ComputeSetId cs = AddComputeSet(name, program);
  uint64_t position = 0;
  for (const MappedRegion& piece : graph_.MapRegions(flat_out)) {
    if (!piece.tile) return MakeError("{} is not mapped", out.ShapeString());
    const uint64_t begin = position;
    position += piece.region.size();
    const uint64_t lo[] = {begin, 0}, size[] = {position - begin, factor};
    TILEPROF_ASSIGN_OR_RETURN(Tensor partials, index.Box(lo, size));
    TILEPROF_ASSIGN_OR_RETURN(Tensor target, flat_out.Slice(begin, position));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(cs, codelet, name));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, *piece.tile));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["partials"], partials.Flatten()));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["out"], target));
  }
  return {};
}

}  // namespace tileprof::engine::compiler
