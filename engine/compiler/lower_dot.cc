// Dot, lowered to matmul vertices that compute exactly what XLA defines for
// any dimension numbers, or else to an opaque op (which the simulator
// refuses to run): never to numbers of the wrong elements. Convolution
// (lower_conv.cc) shares the entry point and the plan (dot_plan.h). Operand
// and result types follow XLA's rules (DotInputType): an operand whose type
// has no codelet pair with the result is converted to the result type first.
//
// The operands are viewed as lhs [B, M, K] and rhs [B, K, N] (batch
// dimensions in the order the attributes pair them, then the free and the
// contracting ones; the output of a dot is [B, M, N] in row-major order by
// definition). An operand stored with its two groups the other way round
// (x^T.g, g.W^T) is read in place by poplin::MatMulPartialTransposed. Any
// other order is a dimshuffled view, or, when that view would be split into
// more than kMaxViewRegions runs, a copy into a new tensor first (popops'
// rearrangement before a matmul). Each vertex computes a block of rows x
// columns of one batch entry over a slice of K.
#include <algorithm>
#include <array>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "engine/codelets/codelets.h"
#include "engine/compiler/dot_plan.h"
#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"
#include "engine/hlo/attributes.h"

namespace tileprof::engine::compiler {
namespace {

Status CheckDims(std::span<const int64_t> dims, size_t rank, std::string_view what,
                 std::vector<bool>& used) {
  for (int64_t d : dims) {
    if (d < 0 || static_cast<size_t>(d) >= rank) {
      return MakeError("{} dimension {} outside rank {}", what, d, rank);
    }
    if (used[static_cast<size_t>(d)]) return MakeError("{} dimension {} named twice", what, d);
    used[static_cast<size_t>(d)] = true;
  }
  return {};
}

// The view `view` copied into a new tensor of `shape3` (mapped linearly), by
// Copy vertices executed by `program`: popops' rearrangement before a
// matmul. The view's runs are handed out to the tiles in one pass (slicing a
// view of R runs costs O(R) each time, so slicing it per tile would not
// scale).
Expected<Tensor> CopyOfView(Lowering& lowering, const Tensor& view, std::vector<uint64_t> shape3,
                            std::string_view name, program::Sequence& program) {
  Graph& graph = lowering.graph();
  TILEPROF_ASSIGN_OR_RETURN(Tensor copy,
                            lowering.NewTensor(view.element_type(), shape3, name, true));
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet, GetCopyCodelet(view.element_type()));
  const ComputeSetId cs = lowering.AddComputeSet(name, program);
  const Tensor flat_copy = copy.Flatten();
  const std::vector<MappedRegion> pieces = graph.MapRegions(flat_copy);
  std::span<const TensorRegion> runs = view.regions();
  size_t run = 0;
  uint64_t used = 0;  // elements of runs[run] already handed out
  uint64_t position = 0;
  for (const MappedRegion& piece : pieces) {
    if (!piece.tile) return MakeError("{} is not mapped", copy.ShapeString());
    std::vector<Tensor> parts;
    for (uint64_t need = piece.region.size(); need > 0;) {
      const TensorRegion& r = runs[run];
      const uint64_t take = std::min(need, r.size() - used);
      const VariableInfo& variable = graph.variable(r.variable);
      TILEPROF_ASSIGN_OR_RETURN(
          Tensor part, Tensor::OfVariable(r.variable, variable.type, {variable.num_elements})
                           .Slice(r.begin + used, r.begin + used + take));
      parts.push_back(std::move(part));
      need -= take;
      used += take;
      if (used == r.size()) ++run, used = 0;
    }
    TILEPROF_ASSIGN_OR_RETURN(Tensor in, Tensor::Concat(parts));
    TILEPROF_ASSIGN_OR_RETURN(Tensor out,
                              flat_copy.Slice(position, position + piece.region.size()));
    position += piece.region.size();
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph.AddVertex(cs, *codelet, name));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(vertex, *piece.tile));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["in"], in));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["out"], out));
  }
  return copy;
}

bool IsIdentity(std::span<const size_t> order) {
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] != i) return false;
  return true;
}

// An operand of a dot as [batch, rows, contracted] (`order`), or, when its
// dimensions are stored as [batch, contracted, rows] (`transposed_order`),
// as that with *transposed set. Otherwise a dimshuffled view, or a copy when
// the view would be split into more than kMaxViewRegions runs.
Expected<Tensor> Operand3(Lowering& lowering, const Tensor& tensor, std::span<const size_t> order,
                          std::span<const size_t> transposed_order, uint64_t batch, uint64_t rows,
                          uint64_t contracted, std::string_view name, program::Sequence& program,
                          bool* transposed) {
  *transposed = false;
  if (IsIdentity(order)) return tensor.Reshape({batch, rows, contracted});
  if (IsIdentity(transposed_order)) {
    *transposed = true;
    return tensor.Reshape({batch, contracted, rows});
  }
  TILEPROF_ASSIGN_OR_RETURN(Tensor view, tensor.Dimshuffle(order));
  if (view.regions().size() <= kMaxViewRegions) return view.Reshape({batch, rows, contracted});
  return CopyOfView(lowering, view, {batch, rows, contracted}, name, program);
}

// A dot's operands as lhs [batch, free, contracting] and rhs [batch,
// contracting, free]: the permutations that give those views (`*_order`),
// the ones that put the other two groups the other way round (`*_t`), the
// result's dimensions and the sizes B, M, K and N.
struct DotForm {
  std::vector<size_t> lhs_order, rhs_order, lhs_t, rhs_t;
  std::vector<uint64_t> out_dims;
  uint64_t b = 1, m = 1, k = 1, n = 1;
};

// Dimension d of an operand as dimension perm[d] of the tensor read (a
// folded transpose's operand); identity when `perm` is null.
void MapDims(std::vector<int64_t>& dims, const std::vector<size_t>* perm) {
  if (perm == nullptr) return;
  for (int64_t& d : dims)
    if (d >= 0 && static_cast<size_t>(d) < perm->size()) d = static_cast<int64_t>((*perm)[d]);
}

// The free dimensions of an operand of `rank` dimensions (those not in
// `used`), in the order of the dot's operand: a folded transpose's
// operand lists them as the transpose's result does, which is the order of
// the dot's result.
std::vector<size_t> FreeDims(size_t rank, const std::vector<bool>& used,
                             const std::vector<size_t>* perm) {
  std::vector<size_t> free;
  for (size_t d = 0; d < rank; ++d) {
    const size_t read = perm != nullptr && d < perm->size() ? (*perm)[d] : d;
    if (read < used.size() && !used[read]) free.push_back(read);
  }
  return free;
}

// The form of the dot `instruction` of `lhs` and `rhs`, or an error when its
// dimension numbers do not fit them. `lhs_perm` and `rhs_perm` map the
// dimensions of a folded transpose (Lowering::FoldedTranspose) onto the
// tensor read.
Expected<DotForm> FormOf(const hlo::Instruction& instruction, const Tensor& lhs, const Tensor& rhs,
                         const std::vector<size_t>* lhs_perm, const std::vector<size_t>* rhs_perm) {
  TILEPROF_ASSIGN_OR_RETURN(hlo::DotDimensions dims, hlo::GetDotDimensions(instruction));
  if ((lhs_perm != nullptr && lhs_perm->size() != lhs.Rank()) ||
      (rhs_perm != nullptr && rhs_perm->size() != rhs.Rank())) {
    return MakeError("a folded transpose's permutation does not fit its operand");
  }
  MapDims(dims.lhs_batch, lhs_perm);
  MapDims(dims.lhs_contracting, lhs_perm);
  MapDims(dims.rhs_batch, rhs_perm);
  MapDims(dims.rhs_contracting, rhs_perm);
  std::vector<bool> lhs_used(lhs.Rank(), false), rhs_used(rhs.Rank(), false);
  TILEPROF_RETURN_IF_ERROR(CheckDims(dims.lhs_batch, lhs.Rank(), "lhs batch", lhs_used));
  TILEPROF_RETURN_IF_ERROR(
      CheckDims(dims.lhs_contracting, lhs.Rank(), "lhs contracting", lhs_used));
  TILEPROF_RETURN_IF_ERROR(CheckDims(dims.rhs_batch, rhs.Rank(), "rhs batch", rhs_used));
  TILEPROF_RETURN_IF_ERROR(
      CheckDims(dims.rhs_contracting, rhs.Rank(), "rhs contracting", rhs_used));
  if (dims.lhs_batch.size() != dims.rhs_batch.size() ||
      dims.lhs_contracting.size() != dims.rhs_contracting.size()) {
    return MakeError("lhs has {} batch and {} contracting dimensions, rhs {} and {}",
                     dims.lhs_batch.size(), dims.lhs_contracting.size(), dims.rhs_batch.size(),
                     dims.rhs_contracting.size());
  }
  auto size = [](const Tensor& t, int64_t d) { return t.shape()[static_cast<size_t>(d)]; };
  DotForm f;
  for (size_t i = 0; i < dims.lhs_batch.size(); ++i) {
    if (size(lhs, dims.lhs_batch[i]) != size(rhs, dims.rhs_batch[i])) {
      return MakeError("batch dimension {} of lhs has size {}, dimension {} of rhs {}",
                       dims.lhs_batch[i], size(lhs, dims.lhs_batch[i]), dims.rhs_batch[i],
                       size(rhs, dims.rhs_batch[i]));
    }
    f.lhs_order.push_back(static_cast<size_t>(dims.lhs_batch[i]));
    f.rhs_order.push_back(static_cast<size_t>(dims.rhs_batch[i]));
    f.lhs_t.push_back(static_cast<size_t>(dims.lhs_batch[i]));
    f.rhs_t.push_back(static_cast<size_t>(dims.rhs_batch[i]));
    f.out_dims.push_back(size(lhs, dims.lhs_batch[i]));
    f.b *= size(lhs, dims.lhs_batch[i]);
  }
  const std::vector<size_t> lhs_free = FreeDims(lhs.Rank(), lhs_used, lhs_perm);
  const std::vector<size_t> rhs_free = FreeDims(rhs.Rank(), rhs_used, rhs_perm);
  for (size_t d : lhs_free) {
    f.lhs_order.push_back(d);
    f.out_dims.push_back(lhs.shape()[d]);
    f.m *= lhs.shape()[d];
  }
  for (size_t i = 0; i < dims.lhs_contracting.size(); ++i) {
    if (size(lhs, dims.lhs_contracting[i]) != size(rhs, dims.rhs_contracting[i])) {
      return MakeError("contracting dimension {} of lhs has size {}, dimension {} of rhs {}",
                       dims.lhs_contracting[i], size(lhs, dims.lhs_contracting[i]),
                       dims.rhs_contracting[i], size(rhs, dims.rhs_contracting[i]));
    }
    f.lhs_order.push_back(static_cast<size_t>(dims.lhs_contracting[i]));
    f.rhs_order.push_back(static_cast<size_t>(dims.rhs_contracting[i]));
    f.lhs_t.push_back(static_cast<size_t>(dims.lhs_contracting[i]));
    f.k *= size(lhs, dims.lhs_contracting[i]);
  }
  f.lhs_t.insert(f.lhs_t.end(), lhs_free.begin(), lhs_free.end());
  for (size_t d : rhs_free) {
    f.rhs_order.push_back(d);
    f.out_dims.push_back(rhs.shape()[d]);
    f.n *= rhs.shape()[d];
  }
  f.rhs_t.insert(f.rhs_t.end(), rhs_free.begin(), rhs_free.end());
  for (int64_t d : dims.rhs_contracting) f.rhs_t.push_back(static_cast<size_t>(d));
  return f;
}

// The plan (conv_plan.h): the batch as groups, rows as the batch (they
// replicate the rhs), K as input channels, columns as output channels.
ContractionShape DotContraction(Lowering& lowering, const DotForm& f, const Tensor& lhs,
                                const Tensor& lhs3, const Tensor& rhs, bool lhs_transposed,
                                bool rhs_transposed, ElementType acc_type, const Codelet& matmul) {
  ContractionShape shape;
  shape.groups = f.b;
  shape.batch = f.m;
  shape.in_chans = f.k;
  shape.out_chans = f.n;
  shape.in_bytes = SizeOf(lhs.element_type());
  shape.channel_grain = ChannelGrain(lhs.element_type());
  shape.acc_bytes = SizeOf(SplitPartialsType(acc_type));
  shape.out_bytes = SizeOf(acc_type);
  shape.types = fmt::format("{}>{}", HloName(lhs.element_type()), HloName(acc_type));
  using D = PlanDim;
  shape.input_order = lhs_transposed ? std::vector{D::kGroup, D::kInChan, D::kBatch}
                                     : std::vector{D::kGroup, D::kBatch, D::kInChan};
  shape.weights_order = rhs_transposed ? std::vector{D::kGroup, D::kOutChan, D::kInChan}
                                       : std::vector{D::kGroup, D::kInChan, D::kOutChan};
  shape.output_order = {D::kGroup, D::kBatch, D::kOutChan};
  shape.cell_state_bytes = matmul.state_bytes() + kReduceVertexStateBytes;
  shape.input_placeable = lowering.IsUnread(lhs);
  shape.weights_placeable = lowering.IsUnread(rhs);
  if (!shape.input_placeable) {
    // lhs3 is [b, m, k], or [b, k, m] when transposed.
    const uint64_t inner = lhs_transposed ? f.m : f.k;
    const std::array<OperandDim, 3> dims = {
        OperandDim{D::kGroup, f.b, f.m * f.k},
        OperandDim{D::kBatch, f.m, lhs_transposed ? 1 : inner},
        OperandDim{D::kInChan, f.k, lhs_transposed ? inner : 1}};
    shape.input_tile_block = OperandTileBlocks(lowering.graph(), lhs3, dims);
  }
  return shape;
}

// The matmul vertices of a planned dot's cells (EmitCell), reading lhs3
// [B, M, K] and rhs3 [B, K, N] (each the other way round when transposed).
struct DotCells {
  Graph& graph;
  const hlo::Instruction& instruction;
  const Codelet& matmul;
  size_t in_field, weights_field, out_field;
  const TensorIndex& lhs_index;
  const TensorIndex& rhs_index;
  bool lhs_transposed, rhs_transposed;
  bool input_placeable, weights_placeable;
  ElementType acc_type;             // of the target: the result's, or the partial sums'
  std::vector<StridedRegion> runs;  // an operand's box
  std::vector<TensorRegion> out_runs;

  // Connects `field` to the [free, k] box of one batch entry (or [k,
  // free] when stored transposed), laying it out on `tile` when the plan
  // places the operand.
  Status Connect(VertexRef vertex, size_t field, const TensorIndex& index, bool transposed,
                 uint64_t batch, Range free, Range ks, uint32_t tile, bool place) {
    runs.clear();
    const std::array<uint64_t, 3> lo = transposed ? std::array{batch, ks.begin, free.begin}
                                                  : std::array{batch, free.begin, ks.begin};
    const std::array<uint64_t, 3> size = transposed
                                             ? std::array<uint64_t, 3>{1, ks.size, free.size}
                                             : std::array<uint64_t, 3>{1, free.size, ks.size};
    TILEPROF_RETURN_IF_ERROR(index.AppendBoxRuns(lo, size, runs));
    if (place) TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(runs, tile));
    const uint64_t count = free.size * ks.size;
    return graph.ConnectRuns(vertex, field, index.tensor().element_type(), {&count, 1}, runs);
  }

  Status Emit(ComputeSetId cs, const Cell& cell, std::span<const TensorRegion> target) {
    using D = PlanDim;
    const Range g = cell[D::kGroup], rows = cell[D::kBatch], ks = cell[D::kInChan],
                cols = cell[D::kOutChan];
    // One vertex per batch entry of the cell, each writing its [rows, cols]
    // part of the target (the box's batch-major order).
    const uint64_t per_batch = rows.size * cols.size;
    for (uint64_t i = 0; i < g.size; ++i) {
      const uint64_t batch = g.begin + i;
      TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph.AddVertex(cs, matmul, instruction.name()));
      TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(vertex, cell.tile));
      TILEPROF_RETURN_IF_ERROR(Connect(vertex, in_field, lhs_index, lhs_transposed, batch, rows, ks,
                                       cell.tile, input_placeable && cell.input_home));
      // rhs3 is [batch, K, columns] unless transposed: the other way round
      // from the lhs.
      TILEPROF_RETURN_IF_ERROR(Connect(vertex, weights_field, rhs_index, !rhs_transposed, batch,
                                       cols, ks, cell.tile,
                                       weights_placeable && cell.weights_home));
      out_runs.clear();
      SliceRuns(target, i * per_batch, per_batch, out_runs);
      TILEPROF_RETURN_IF_ERROR(
          graph.ConnectRegions(vertex, out_field, acc_type, {&per_batch, 1}, out_runs));
      TILEPROF_RETURN_IF_ERROR(
          graph.SetInitialValue(vertex["m"], static_cast<uint32_t>(rows.size)));
      TILEPROF_RETURN_IF_ERROR(graph.SetInitialValue(vertex["k"], static_cast<uint32_t>(ks.size)));
      TILEPROF_RETURN_IF_ERROR(
          graph.SetInitialValue(vertex["n"], static_cast<uint32_t>(cols.size)));
    }
    return {};
  }
};

// The operand type a dot or convolution with a `result` result runs in
// (XLA's rules, with their sources in docs/op-support.md): operands of one
// type T are read as they are when kDotPairs (dot_kernels.h) has (T,
// result) (the codelet converts each element as it reads it); otherwise
// each operand not of the result's type is converted to it first, as XLA's
// OperandUpcaster and HloEvaluator::HandleDotSlowPath do, and (result,
// result) runs. nullopt when neither pair exists.
std::optional<ElementType> DotInputType(ElementType lhs, ElementType rhs, ElementType result,
                                        bool is_conv) {
  auto has = [&](ElementType in) {
    return static_cast<bool>(is_conv ? GetConvPartialCodelet(in, result)
                                     : GetMatMulPartialCodelet(in, result));
  };
  if (lhs == rhs && has(lhs)) return lhs;
  if (has(result)) return result;
  return std::nullopt;
}

// `in` converted to `type` by Cast1D vertices mapped like it (XLA's convert
// semantics), or `in` itself when it has that type already.
Expected<Tensor> ConvertTo(Lowering& lowering, const Tensor& in, ElementType type,
                           std::string_view name, program::Sequence& program) {
  if (in.element_type() == type) return in;
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet, GetCastCodelet(in.element_type(), type));
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, lowering.NewTensor(type, in.shape(), name, false));
  TILEPROF_RETURN_IF_ERROR(lowering.mapper().MapLike(out, in));
  if (out.NumElements() == 0) return out;
  const ComputeSetId cs = lowering.AddComputeSet(name, program);
  const FieldInput input{"in", in, Access::kSame};
  TILEPROF_RETURN_IF_ERROR(lowering.EmitPerTile(cs, *codelet, "out", out, {&input, 1}, name));
  return out;
}

Expected<Value> LowerDot(Lowering& lowering, const hlo::Instruction& instruction,
                         std::span<const Value> operands, ElementType acc_type,
                         program::Sequence& program) {
  const Tensor& lhs = operands[0].tensor;
  const Tensor& rhs = operands[1].tensor;
  TILEPROF_ASSIGN_OR_RETURN(
      const DotForm form,
      FormOf(instruction, lhs, rhs, lowering.FoldedTranspose(*instruction.operand(0)),
             lowering.FoldedTranspose(*instruction.operand(1))));
  const uint64_t b = form.b, m = form.m, k = form.k, n = form.n;
  TILEPROF_ASSIGN_OR_RETURN(std::vector<uint64_t> result_dims, StorageShape(instruction.shape()));
  if (result_dims != form.out_dims) {
    return MakeError("result shape [{}] does not match the operands' [{}]",
                     fmt::join(result_dims, ","), fmt::join(form.out_dims, ","));
  }
  const uint64_t out_n = Product(form.out_dims);
  // A sum of no products is zeros, which the matmul vertex cannot give.
  if (out_n > 0 && k == 0) return lowering.LowerOpaque(instruction, operands, program);
  TILEPROF_ASSIGN_OR_RETURN(
      Tensor out, lowering.NewTensor(instruction.shape(), instruction.name(), out_n == 0));
  if (out_n == 0) return Value::Array(out);
  bool lhs_transposed = false, rhs_transposed = false;
  TILEPROF_ASSIGN_OR_RETURN(
      Tensor lhs3, Operand3(lowering, lhs, form.lhs_order, form.lhs_t, b, m, k,
                            fmt::format("{}/lhs", instruction.name()), program, &lhs_transposed));
  // The rhs is [batch, contracted, columns]: "transposed" when stored with
  // the columns first.
  TILEPROF_ASSIGN_OR_RETURN(
      Tensor rhs3, Operand3(lowering, rhs, form.rhs_t, form.rhs_order, b, n, k,
                            fmt::format("{}/rhs", instruction.name()), program, &rhs_transposed));
  rhs_transposed = !rhs_transposed;
  TILEPROF_ASSIGN_OR_RETURN(
      const Codelet* matmul,
      GetMatMulPartialCodelet(lhs.element_type(), acc_type, lhs_transposed, rhs_transposed));
  const ContractionShape shape = DotContraction(lowering, form, lhs, lhs3, rhs, lhs_transposed,
                                                rhs_transposed, acc_type, *matmul);
  const Partition partition =
      PlanContraction(lowering, instruction, shape, lhs.element_type(), acc_type);
  // A split K keeps f16/bf16 sums in f32 partials (dot_plan.h).
  const ElementType partials_type = PartialsType(acc_type, partition);
  if (partials_type != acc_type) {
    TILEPROF_ASSIGN_OR_RETURN(matmul, GetMatMulPartialCodelet(lhs.element_type(), partials_type,
                                                              lhs_transposed, rhs_transposed));
  }

  Graph& graph = lowering.graph();
  TILEPROF_ASSIGN_OR_RETURN(const Tensor out3, out.Reshape({b, m, n}));
  const TensorIndex lhs_index(lhs3), rhs_index(rhs3);
  using D = PlanDim;
  auto box = [&](const Cell& cell, std::vector<uint64_t>& lo, std::vector<uint64_t>& size) {
    lo = {cell[D::kGroup].begin, cell[D::kBatch].begin, cell[D::kOutChan].begin};
    size = {cell[D::kGroup].size, cell[D::kBatch].size, cell[D::kOutChan].size};
  };
  const std::optional<size_t> in_field = matmul->FindField("in"),
                              weights_field = matmul->FindField("weights"),
                              out_field = matmul->FindField("out");
  if (!in_field || !weights_field || !out_field)
    return MakeError("codelet {} lacks a matmul field (in, weights, out)", matmul->name());
  DotCells cells{.graph = graph,
                 .instruction = instruction,
                 .matmul = *matmul,
                 .in_field = *in_field,
                 .weights_field = *weights_field,
                 .out_field = *out_field,
                 .lhs_index = lhs_index,
                 .rhs_index = rhs_index,
                 .lhs_transposed = lhs_transposed,
                 .rhs_transposed = rhs_transposed,
                 .input_placeable = shape.input_placeable,
                 .weights_placeable = shape.weights_placeable,
                 .acc_type = partials_type,
                 .runs = {}};
  auto emit = [&](ComputeSetId cs, const Cell& cell, std::span<const TensorRegion> target) {
    return cells.Emit(cs, cell, target);
  };
  TILEPROF_RETURN_IF_ERROR(
      EmitPlanned(lowering, instruction, out3, shape, partition, program, box, emit));
  return Value::Array(out);
}

}  // namespace

Expected<Value> Lowering::LowerDotLike(const hlo::Instruction& instruction,
                                       std::span<const Value> operands,
                                       program::Sequence& program) {
  const hlo::Shape& shape = instruction.shape();
  const bool is_conv = instruction.opcode() == hlo::Opcode::kConvolution;
  bool ok = operands.size() == 2 && shape.IsArray() && IsNative(shape);
  for (size_t i = 0; ok && i < 2; ++i) {
    ok = !operands[i].is_tuple && operands[i].tensor.valid() &&
         IsNative(instruction.operand(i)->shape());
  }
  if (!ok) return LowerOpaque(instruction, operands, program);
  TILEPROF_ASSIGN_OR_RETURN(StorageType storage, StorageOf(shape.element_type));
  const std::optional<ElementType> in_type = DotInputType(
      operands[0].tensor.element_type(), operands[1].tensor.element_type(), storage.type, is_conv);
  // Types without a dot product (complex, pred results) keep their memory
  // and cycle costs but are refused by the simulator.
  if (!in_type) return LowerOpaque(instruction, operands, program);
  std::array<Value, 2> converted;
  for (size_t i = 0; i < 2; ++i) {
    Expected<Tensor> tensor = ConvertTo(
        *this, operands[i].tensor, *in_type,
        fmt::format("{}/{}.convert", instruction.name(), i == 0 ? "lhs" : "rhs"), program);
    if (!tensor) return LowerOpaque(instruction, operands, program);
    converted[i] = Value::Array(*tensor);
  }
  if (is_conv) {
    TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet,
                              GetConvPartialCodelet(*in_type, storage.type));
    return LowerConvolution(*this, instruction, converted, *codelet, program);
  }
  return LowerDot(*this, instruction, converted, storage.type, program);
}

}  // namespace tileprof::engine::compiler
