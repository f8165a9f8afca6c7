// Gather and scatter (engine/codelets/gather.h): one vertex per tile run of
// the linearly mapped result, reading the whole indices and the box of the
// operand (gather) or updates (scatter) its run can touch for any index
// value: a window dimension's box is the run's coordinates widened by the
// slack of the start (dimension minus window size); a dimension indexed
// without a window is whole. The scatter reads its own run of the operand. Unsupported forms (tuple
// operands, several scatter operands, an update computation other than assign or one binary op)
// stay opaque.
#include <algorithm>

#include <fmt/format.h>

#include "engine/codelets/gather.h"
#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"
#include "engine/hlo/attributes.h"

namespace tileprof::engine::compiler {
namespace {

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

bool Contains(std::span<const int64_t> list, int64_t v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

Expected<uint32_t> Param(uint64_t v, const hlo::Instruction& instruction) {
  if (v > UINT32_MAX)
    return MakeError("{}: {} does not fit a vertex parameter", Describe(instruction), v);
  return static_cast<uint32_t>(v);
}

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

std::optional<ScatterCombiner> CombinerOf(const hlo::Computation& computation) {
  const hlo::Instruction* root = computation.root();
  if (root == nullptr) return std::nullopt;
  if (root->opcode() == hlo::Opcode::kParameter) {
    return root->parameter_number() == 1 ? std::optional(ScatterCombiner::kAssign) : std::nullopt;
  }
  if (root->operand_count() != 2) return std::nullopt;
  // Commutative ops only, so the order of the parameters does not matter;
  // both must be used.
  const auto a = root->operands()[0], b = root->operands()[1];
  if (a->opcode() != hlo::Opcode::kParameter || b->opcode() != hlo::Opcode::kParameter ||
      a->parameter_number() + b->parameter_number() != 1) {
    return std::nullopt;
  }
  switch (root->opcode()) {
    case hlo::Opcode::kAdd:
      return ScatterCombiner::kAdd;
    case hlo::Opcode::kMultiply:
      return ScatterCombiner::kMul;
    case hlo::Opcode::kMaximum:
      return ScatterCombiner::kMax;
    case hlo::Opcode::kMinimum:
      return ScatterCombiner::kMin;
    case hlo::Opcode::kAnd:
      return ScatterCombiner::kAnd;
    case hlo::Opcode::kOr:
      return ScatterCombiner::kOr;
    default:
      return std::nullopt;
  }
}

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

// Sets a gather or scatter vertex's parameters in the codelets' order:
// `first` (low 32 bits), the op's shared `params`, the box's lows and
// sizes, the indices' box, and `firstHigh` last.
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

// The index vector's length: the indices' index_vector_dim, or 1 when that
// is past the indices' dimensions.
uint64_t IndexComponents(const Numbers& n, const Tensor& indices) {
  return n.ivd < indices.Rank() ? indices.shape()[n.ivd] : 1;
}

// The error when the slice sizes are not one per operand dimension, each
// at most the dimension.
Status CheckSliceSizes(const hlo::Instruction& instruction, const Tensor& operand,
                       std::span<const int64_t> slice_sizes) {
  if (slice_sizes.size() != operand.Rank()) {
    return MakeError("{}: {} slice sizes for an operand of rank {}", Describe(instruction),
                     slice_sizes.size(), operand.Rank());
  }
  for (size_t j = 0; j < slice_sizes.size(); ++j) {
    if (slice_sizes[j] < 0 || static_cast<uint64_t>(slice_sizes[j]) > operand.shape()[j]) {
      return MakeError("{}: slice size {} in a dimension of {}", Describe(instruction),
                       slice_sizes[j], operand.shape()[j]);
    }
  }
  return {};
}

// The error when a gather's result dimension is not the slice size or the
// indices' dimension it stands for.
Status CheckGatherResult(const hlo::Instruction& instruction, std::span<const uint64_t> dims,
                         const Numbers& n, const Tensor& operand, const Tensor& indices,
                         std::span<const int64_t> slice_sizes) {
  for (size_t r = 0; r < dims.size(); ++r) {
    const uint64_t expected = n.res_src[r] < operand.Rank()
                                  ? static_cast<uint64_t>(slice_sizes[n.res_src[r]])
                                  : indices.shape()[n.res_src[r] - operand.Rank()];
    if (dims[r] != expected) {
      return MakeError("{}: result dimension {} has {} elements, expected {}",
                       Describe(instruction), r, dims[r], expected);
    }
  }
  return {};
}

// A gather vertex's parameters after `first`, in the codelet's order
// (gather.h).
Expected<std::vector<uint32_t>> GatherParams(const hlo::Instruction& instruction,
                                             std::span<const uint64_t> dims, const Tensor& operand,
                                             const Tensor& indices, const Numbers& n,
                                             std::span<const int64_t> slice_sizes) {
  std::vector<uint32_t> params;
  for (uint64_t d : dims) params.push_back(static_cast<uint32_t>(d));
  for (uint64_t d : operand.shape()) {
    TILEPROF_ASSIGN_OR_RETURN(uint32_t v, Param(d, instruction));
    params.push_back(v);
  }
  for (uint64_t d : indices.shape()) {
    TILEPROF_ASSIGN_OR_RETURN(uint32_t v, Param(d, instruction));
    params.push_back(v);
  }
  params.push_back(n.ivd);
  params.insert(params.end(), n.res_src.begin(), n.res_src.end());
  params.insert(params.end(), n.start.begin(), n.start.end());
  for (int64_t s : slice_sizes) params.push_back(static_cast<uint32_t>(s));
  return params;
}

// The operand box a run of the gather's result (`run`, its FlatRunBox)
// reads, [lo, lo + size) per operand dimension: start slack plus the run's
// window coordinates.
void GatherReadBox(std::span<const std::pair<uint64_t, uint64_t>> run, const Numbers& n,
                   const Tensor& operand, std::span<const int64_t> slice_sizes,
                   std::vector<uint64_t>& lo, std::vector<uint64_t>& size) {
  for (size_t j = 0; j < operand.Rank(); ++j) {
    const uint64_t slack =
        n.start[j] == 0 ? 0 : operand.shape()[j] - static_cast<uint64_t>(slice_sizes[j]);
    uint64_t a = 0, b = 0;
    for (size_t r = 0; r < run.size(); ++r) {
      if (n.res_src[r] == j) a = run[r].first, b = run[r].second;
    }
    lo[j] = a;
    size[j] = b - a + slack + 1;
  }
}

}  // namespace

Expected<Value> Lowering::LowerGather(const hlo::Instruction& instruction,
                                      std::span<const Value> operands, program::Sequence& program) {
  const auto opaque = [&] { return LowerOpaque(instruction, operands, program); };
  if (operands.size() != 2 || !IsPlainArray(operands[0], instruction.operands()[0]->shape()) ||
      !IsPlainArray(operands[1], instruction.operands()[1]->shape()) ||
      !instruction.shape().IsArray()) {
    return opaque();
  }
  const Tensor& operand = operands[0].tensor;
  const Tensor& indices = operands[1].tensor;
  TILEPROF_ASSIGN_OR_RETURN(StorageType storage, StorageOf(instruction.shape().element_type));
  Expected<std::vector<uint64_t>> dims = StorageShape(instruction.shape());
  if (!dims || storage.type != operand.element_type() ||
      dims->size() != static_cast<size_t>(instruction.shape().rank()) || operand.Rank() == 0) {
    return opaque();
  }
  TILEPROF_ASSIGN_OR_RETURN(auto offset_dims, ListAttribute(instruction, "offset_dims"));
  TILEPROF_ASSIGN_OR_RETURN(auto collapsed, ListAttribute(instruction, "collapsed_slice_dims"));
  TILEPROF_ASSIGN_OR_RETURN(auto start_map, ListAttribute(instruction, "start_index_map"));
  TILEPROF_ASSIGN_OR_RETURN(auto slice_sizes, ListAttribute(instruction, "slice_sizes"));
  TILEPROF_ASSIGN_OR_RETURN(auto op_batch, ListAttribute(instruction, "operand_batching_dims"));
  TILEPROF_ASSIGN_OR_RETURN(auto idx_batch,
                            ListAttribute(instruction, "start_indices_batching_dims"));
  TILEPROF_ASSIGN_OR_RETURN(std::optional<int64_t> ivd,
                            IntAttribute(instruction, "index_vector_dim"));
  if (!ivd) return MakeError("{}: no index_vector_dim", Describe(instruction));
  TILEPROF_RETURN_IF_ERROR(CheckSliceSizes(instruction, operand, slice_sizes));
  TILEPROF_ASSIGN_OR_RETURN(
      Numbers n, Build(instruction, operand.Rank(), indices.Rank(), dims->size(), offset_dims,
                       collapsed, start_map, op_batch, idx_batch, *ivd));
  const uint64_t components = IndexComponents(n, indices);
  if (start_map.size() != components) {
    return MakeError("{}: start_index_map has {} entries, the index vector {}",
                     Describe(instruction), start_map.size(), components);
  }
  TILEPROF_RETURN_IF_ERROR(CheckGatherResult(instruction, *dims, n, operand, indices, slice_sizes));
  if (op_batch.empty()) {
    const LookupForm form{*dims, n.res_src, n.start, slice_sizes, components};
    TILEPROF_ASSIGN_OR_RETURN(std::optional<Value> planned,
                              components > 1
                                  ? LowerFlatLookup(instruction, operands, form, n.ivd, program)
                                  : LowerLookup(instruction, operand, indices, form, program));
    if (!planned && components == 1) {
      TILEPROF_ASSIGN_OR_RETURN(planned,
                                LowerColumnLookup(instruction, operands, form, n.ivd, program));
    }
    if (planned) return std::move(*planned);
  }
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, NewTensor(storage.type, *dims, instruction.name(), true));
  if (out.NumElements() == 0) return Value::Array(std::move(out));
  TILEPROF_ASSIGN_OR_RETURN(
      const Codelet* codelet,
      codelets_.Gather(storage.type, indices.element_type(), static_cast<uint32_t>(operand.Rank()),
                       static_cast<uint32_t>(indices.Rank()), static_cast<uint32_t>(dims->size())));
  TILEPROF_ASSIGN_OR_RETURN(std::vector<uint32_t> params,
                            GatherParams(instruction, *dims, operand, indices, n, slice_sizes));
  const ComputeSetId cs = AddComputeSet(instruction.name(), program);
  const Tensor flat_out = out.Flatten();
  const TensorIndex operand_index(operand), indices_index(indices);
  uint64_t position = 0;
  for (const MappedRegion& piece : graph_.MapRegions(flat_out)) {
    const uint64_t first = position, count = piece.region.size();
    position += count;
    if (!piece.tile) return MakeError("{} is not mapped", out.ShapeString());
    TILEPROF_ASSIGN_OR_RETURN(Tensor out_part, flat_out.Slice(first, first + count));
    const auto run = FlatRunBox(*dims, first, count);
    std::vector<uint64_t> lo(operand.Rank()), size(operand.Rank());
    GatherReadBox(run, n, operand, slice_sizes, lo, size);
    TILEPROF_ASSIGN_OR_RETURN(Tensor box, operand_index.Box(lo, size));
    std::vector<uint64_t> run_lo, run_hi;
    for (const auto& [a, b] : run) run_lo.push_back(a), run_hi.push_back(b + 1);
    const IndicesBox index_box = IndicesBoxOf(n, operand.Rank(), indices, run_lo, run_hi);
    TILEPROF_ASSIGN_OR_RETURN(Tensor index_part, indices_index.Box(index_box.lo, index_box.size));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(cs, *codelet, instruction.name()));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, *piece.tile));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["operand"], box));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["indices"], index_part));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["out"], out_part));
    TILEPROF_RETURN_IF_ERROR(
        SetParams(graph_, vertex, *codelet, first, params, lo, size, index_box));
  }
  return Value::Array(std::move(out));
}

namespace {

// The error when an update dimension does not fit the operand's window
// dimension or is not the indices' dimension it stands for.
Status CheckUpdateDims(const hlo::Instruction& instruction, const Numbers& n, const Tensor& operand,
                       const Tensor& indices, const Tensor& updates) {
  for (size_t u = 0; u < updates.Rank(); ++u) {
    const uint32_t src = n.res_src[u];
    const uint64_t limit =
        src < operand.Rank() ? operand.shape()[src] : indices.shape()[src - operand.Rank()];
    if (src < operand.Rank() ? updates.shape()[u] > limit : updates.shape()[u] != limit) {
      return MakeError("{}: update dimension {} has {} elements, does not fit {}",
                       Describe(instruction), u, updates.shape()[u], limit);
    }
  }
  return {};
}

// A scatter vertex's parameters after `first`, in the codelet's order
// (gather.h).
Expected<std::vector<uint32_t>> ScatterParams(const hlo::Instruction& instruction,
                                              const Tensor& operand, const Tensor& indices,
                                              const Tensor& updates, const Numbers& n) {
  std::vector<uint32_t> params;
  for (const Tensor* t : {&operand, &indices, &updates}) {
    for (uint64_t d : t->shape()) {
      TILEPROF_ASSIGN_OR_RETURN(uint32_t v, Param(d, instruction));
      params.push_back(v);
    }
  }
  params.push_back(n.ivd);
  params.insert(params.end(), n.res_src.begin(), n.res_src.end());
  params.insert(params.end(), n.start.begin(), n.start.end());
  return params;
}

// The updates box a run of the scatter's result (`run`, its FlatRunBox in
// the operand's shape) reads, [lo, lo + size) per update dimension: window
// coordinates w = c - s for the run's operand coordinates c and starts s
// in [0, slack]; scatter dimensions whole.
void ScatterReadBox(std::span<const std::pair<uint64_t, uint64_t>> run, const Numbers& n,
                    const Tensor& operand, const Tensor& updates, std::vector<uint64_t>& lo,
                    std::vector<uint64_t>& size) {
  for (size_t u = 0; u < updates.Rank(); ++u) {
    const uint32_t j = n.res_src[u];
    lo[u] = 0;
    size[u] = updates.shape()[u];
    if (j >= operand.Rank() || size[u] == 0) continue;
    const uint64_t slack = n.start[j] == 0 ? 0 : operand.shape()[j] - updates.shape()[u];
    const uint64_t a = run[j].first > slack ? run[j].first - slack : 0;
    const uint64_t b = std::min<uint64_t>(run[j].second, updates.shape()[u] - 1);
    // Empty (no update can land in the run): one element, filtered out.
    lo[u] = std::min(a, b);
    size[u] = a <= b ? b - a + 1 : 1;
  }
}

// Bytes a scatter vertex with an updates box of `size` receives: the box
// and the index vectors of its scatter coordinates.
uint64_t ScatterBoxBytes(std::span<const uint64_t> size, const Numbers& n, size_t op_rank,
                         const Tensor& updates, const Tensor& indices) {
  uint64_t elements = 1, vectors = 1;
  for (size_t u = 0; u < size.size(); ++u) {
    elements = SaturatingMul(elements, size[u]);
    if (n.res_src[u] >= op_rank) vectors = SaturatingMul(vectors, size[u]);
  }
  const uint64_t components = n.ivd < indices.Rank() ? indices.shape()[n.ivd] : 1;
  return SaturatingMul(elements, SizeOf(updates.element_type())) +
         SaturatingMul(SaturatingMul(vectors, components), SizeOf(indices.element_type()));
}

// A scatter whose runs can receive any update (data-dependent indices)
// gives every vertex the whole updates and indices: jax-md's neighbour-list
// scatter put 1.35 MB on each of 1,443 tiles. Such a scatter is streamed:
// `count` compute sets, each applying a share of the updates (a range of
// the outermost scatter dimension `dim`, the same in every run) to the
// previous step's result, so a tile receives at most about
// kMaxScatterStepBytes at a time. The dimension is the updates' outermost,
// so the steps apply the updates in their row-major order, as one pass
// does: duplicates combine in the same order.
struct ScatterSteps {
  uint64_t count = 1;
  size_t dim = 0;
};
constexpr uint64_t kMaxScatterStepBytes = 32 * 1024;
ScatterSteps StepsOf(const Numbers& n, size_t op_rank, const Tensor& updates,
                     uint64_t largest_box) {
  ScatterSteps steps;
  if (largest_box <= kMaxScatterStepBytes) return steps;
  // The outermost dimension of more than one element, when it is a
  // scatter dimension: ranges of it keep the updates' row-major order.
  for (size_t u = 0; u < updates.Rank(); ++u) {
    if (updates.shape()[u] < 2) continue;
    if (n.res_src[u] < op_rank) break;
    steps.dim = u;
    steps.count = std::min<uint64_t>(
        updates.shape()[u], (largest_box + kMaxScatterStepBytes - 1) / kMaxScatterStepBytes);
    break;
  }
  return steps;
}

}  // namespace

Expected<Value> Lowering::LowerScatter(const hlo::Instruction& instruction,
                                       std::span<const Value> operands,
                                       program::Sequence& program) {
  const auto opaque = [&] { return LowerOpaque(instruction, operands, program); };
  if (operands.size() != 3 || instruction.called_computations().size() != 1 ||
      !instruction.shape().IsArray()) {
    return opaque();
  }
  for (size_t i = 0; i < 3; ++i) {
    if (!IsPlainArray(operands[i], instruction.operands()[i]->shape())) return opaque();
  }
  const Tensor& operand = operands[0].tensor;
  const Tensor& indices = operands[1].tensor;
  const Tensor& updates = operands[2].tensor;
  const std::optional<ScatterCombiner> combiner = CombinerOf(*instruction.called_computations()[0]);
  if (!combiner || operand.Rank() == 0 || updates.element_type() != operand.element_type()) {
    return opaque();
  }
  TILEPROF_ASSIGN_OR_RETURN(auto window_dims, ListAttribute(instruction, "update_window_dims"));
  TILEPROF_ASSIGN_OR_RETURN(auto inserted, ListAttribute(instruction, "inserted_window_dims"));
  TILEPROF_ASSIGN_OR_RETURN(auto start_map,
                            ListAttribute(instruction, "scatter_dims_to_operand_dims"));
  TILEPROF_ASSIGN_OR_RETURN(auto op_batch, ListAttribute(instruction, "input_batching_dims"));
  TILEPROF_ASSIGN_OR_RETURN(auto idx_batch,
                            ListAttribute(instruction, "scatter_indices_batching_dims"));
  TILEPROF_ASSIGN_OR_RETURN(std::optional<int64_t> ivd,
                            IntAttribute(instruction, "index_vector_dim"));
  if (!ivd) return MakeError("{}: no index_vector_dim", Describe(instruction));
  TILEPROF_ASSIGN_OR_RETURN(
      Numbers n, Build(instruction, operand.Rank(), indices.Rank(), updates.Rank(), window_dims,
                       inserted, start_map, op_batch, idx_batch, *ivd));
  const uint64_t components = IndexComponents(n, indices);
  if (start_map.size() != components) {
    return MakeError("{}: scatter_dims_to_operand_dims has {} entries, the index vector {}",
                     Describe(instruction), start_map.size(), components);
  }
  TILEPROF_RETURN_IF_ERROR(CheckUpdateDims(instruction, n, operand, indices, updates));
  TILEPROF_ASSIGN_OR_RETURN(
      Tensor out, NewTensor(operand.element_type(), operand.shape(), instruction.name(), true));
  if (out.NumElements() == 0) return Value::Array(std::move(out));
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet,
                            codelets_.Scatter(operand.element_type(), indices.element_type(),
                                              *combiner, static_cast<uint32_t>(operand.Rank()),
                                              static_cast<uint32_t>(indices.Rank()),
                                              static_cast<uint32_t>(updates.Rank())));
  TILEPROF_ASSIGN_OR_RETURN(std::vector<uint32_t> params,
                            ScatterParams(instruction, operand, indices, updates, n));
  // Each tile run of the result, with the updates box it reads.
  struct Run {
    uint64_t first, count;
    uint32_t tile;
    std::vector<uint64_t> lo, size;
  };
  std::vector<Run> runs;
  const Tensor flat_out = out.Flatten(), flat_operand = operand.Flatten();
  uint64_t position = 0, largest_box = 0;
  for (const MappedRegion& piece : graph_.MapRegions(flat_out)) {
    const uint64_t first = position, count = piece.region.size();
    position += count;
    if (!piece.tile) return MakeError("{} is not mapped", out.ShapeString());
    Run run{first, count, *piece.tile, std::vector<uint64_t>(updates.Rank()),
            std::vector<uint64_t>(updates.Rank())};
    ScatterReadBox(FlatRunBox(operand.shape(), first, count), n, operand, updates, run.lo,
                   run.size);
    largest_box =
        std::max(largest_box, ScatterBoxBytes(run.size, n, operand.Rank(), updates, indices));
    runs.push_back(std::move(run));
  }
  const ScatterSteps steps = StepsOf(n, operand.Rank(), updates, largest_box);
  // Steps ping-pong between the result and a copy mapped like it, so that
  // the last step writes the result.
  Tensor spare;
  if (steps.count > 1) {
    TILEPROF_ASSIGN_OR_RETURN(spare, NewTensor(operand.element_type(), operand.shape(),
                                               fmt::format("{}/steps", instruction.name()), false));
    TILEPROF_RETURN_IF_ERROR(mapper_.MapLike(spare, out));
  }
  const Tensor flat_spare = steps.count > 1 ? spare.Flatten() : Tensor();
  const TensorIndex updates_index(updates), indices_index(indices);
  for (uint64_t step = 0; step < steps.count; ++step) {
    const ComputeSetId cs = AddComputeSet(
        steps.count > 1 ? fmt::format("{}/step{}", instruction.name(), step) : instruction.name(),
        program);
    const auto written = [&](uint64_t k) {
      return (steps.count - 1 - k) % 2 == 0 ? flat_out : flat_spare;
    };
    const Tensor& source = step == 0 ? flat_operand : written(step - 1);
    const Tensor& target = written(step);
    for (const Run& run : runs) {
      std::vector<uint64_t> lo = run.lo, size = run.size;
      if (steps.count > 1) {
        // This step's share of the split dimension (whole in every run).
        const uint64_t d = updates.shape()[steps.dim];
        lo[steps.dim] = d * step / steps.count;
        size[steps.dim] = d * (step + 1) / steps.count - lo[steps.dim];
      }
      TILEPROF_ASSIGN_OR_RETURN(Tensor out_part, target.Slice(run.first, run.first + run.count));
      TILEPROF_ASSIGN_OR_RETURN(Tensor operand_part,
                                source.Slice(run.first, run.first + run.count));
      TILEPROF_ASSIGN_OR_RETURN(Tensor box, updates_index.Box(lo, size));
      std::vector<uint64_t> hi(lo.size());
      for (size_t u = 0; u < lo.size(); ++u) hi[u] = lo[u] + size[u];
      const IndicesBox index_box = IndicesBoxOf(n, operand.Rank(), indices, lo, hi);
      TILEPROF_ASSIGN_OR_RETURN(Tensor index_part, indices_index.Box(index_box.lo, index_box.size));
      TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex,
                                graph_.AddVertex(cs, *codelet, instruction.name()));
      TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, run.tile));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["operand"], operand_part));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["indices"], index_part));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["updates"], box));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["out"], out_part));
      TILEPROF_RETURN_IF_ERROR(
          SetParams(graph_, vertex, *codelet, run.first, params, lo, size, index_box));
    }
  }
  return Value::Array(std::move(out));
}

}  // namespace tileprof::engine::compiler
