// Gather (engine/codelets/gather.h): one vertex per tile run of the
// linearly mapped result, reading the index vectors of its run and the box
// of the operand its run can touch for any index value: a window
// dimension's box is the run's coordinates widened by the slack of the
// start (dimension minus window size); a dimension indexed without a window
// is whole. Gathers of whole table rows are planned first (lower_lookup.cc,
// lower_lookup_views.cc). Unsupported forms (tuple operands) stay opaque.
#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "engine/codelets/gather.h"
#include "engine/compiler/gather_numbers.h"
#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"

namespace tileprof::engine::compiler {
namespace {

using namespace gather_internal;

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
// window coordinates; a batching dimension's, the run's batch coordinates.
void GatherReadBox(std::span<const std::pair<uint64_t, uint64_t>> run, const Numbers& n,
                   const Tensor& operand, std::span<const int64_t> slice_sizes,
                   std::vector<uint64_t>& lo, std::vector<uint64_t>& size) {
  for (size_t j = 0; j < operand.Rank(); ++j) {
    // A batching dimension's coordinate is the result's batch coordinate.
    const uint32_t from = n.start[j] >= kStartFromBatch
                              ? static_cast<uint32_t>(operand.Rank()) + n.start[j] - kStartFromBatch
                              : static_cast<uint32_t>(j);
    const uint64_t slack = n.start[j] == 0 || from != j
                               ? 0
                               : operand.shape()[j] - static_cast<uint64_t>(slice_sizes[j]);
    uint64_t a = 0, b = 0;
    for (size_t r = 0; r < run.size(); ++r) {
      if (n.res_src[r] == from) a = run[r].first, b = run[r].second;
    }
    lo[j] = a;
    size[j] = b - a + slack + 1;
  }
}

// The elements one output reads: per operand dimension the slack of its
// start (one batch coordinate for a batching dimension).
uint64_t PerOutputElements(std::span<const uint64_t> dims, const Numbers& n, const Tensor& operand,
                           std::span<const int64_t> slice_sizes) {
  std::vector<uint64_t> lo(operand.Rank()), size(operand.Rank());
  GatherReadBox(FlatRunBox(dims, 0, 1), n, operand, slice_sizes, lo, size);
  uint64_t elements = 1;
  for (uint64_t v : size) elements = SaturatingMul(elements, v);
  return elements;
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
  IndexDims index_dims{std::move(collapsed), std::move(start_map), std::move(op_batch),
                       std::move(idx_batch)};
  Tensor indices = operands[1].tensor;
  TILEPROF_ASSIGN_OR_RETURN(
      Numbers n, Build(instruction, operand.Rank(), indices.Rank(), dims->size(), offset_dims,
                       index_dims.removed, index_dims.start_map, index_dims.op_batch,
                       index_dims.idx_batch, *ivd));
  const uint64_t components = IndexComponents(n, indices);
  if (index_dims.start_map.size() != components) {
    return MakeError("{}: start_index_map has {} entries, the index vector {}",
                     Describe(instruction), index_dims.start_map.size(), components);
  }
  TILEPROF_RETURN_IF_ERROR(CheckGatherResult(instruction, *dims, n, operand, indices, slice_sizes));
  if (index_dims.op_batch.empty()) {
    TILEPROF_ASSIGN_OR_RETURN(std::optional<Value> sliced,
                              LowerSliceGather(instruction, operands, index_dims.start_map,
                                               slice_sizes, static_cast<uint32_t>(*ivd), program));
    if (sliced) return std::move(*sliced);
  }
  // Lookups along the minor dimension of a [w, r] table, every row whole
  // (offset dimension 0): a partial per block of a row, summed row by row.
  if (operand.Rank() == 2 && components == 1 && index_dims.op_batch.empty() &&
      index_dims.start_map == std::vector<int64_t>{1} &&
      index_dims.removed == std::vector<int64_t>{1} && offset_dims == std::vector<int64_t>{0} &&
      static_cast<uint64_t>(slice_sizes[0]) == operand.shape()[0] && slice_sizes[1] == 1) {
    TILEPROF_ASSIGN_OR_RETURN(std::optional<Value> minor,
                              LowerMinorLookup(instruction, operand, operands[1].tensor, program));
    if (minor) return std::move(*minor);
  }
  // Index components that are the rows' own coordinates, as batching
  // dimensions: a tile run then reads its own rows (gather_batching.cc).
  IndexDims batched = index_dims;
  TILEPROF_ASSIGN_OR_RETURN(const Tensor batched_indices,
                            IotaComponentsAsBatching(instruction, operand, indices, *ivd, batched));
  const bool rewritten = batched.op_batch.size() != index_dims.op_batch.size();
  // The result's elements: also what a lookup plan's block holds, a
  // partial of every lookup.
  const uint64_t outputs =
      std::accumulate(dims->begin(), dims->end(), uint64_t{1},
                      [](uint64_t a, uint64_t d) { return SaturatingMul(a, d); });
  Numbers batched_n;
  uint64_t batched_elements = UINT64_MAX;  // a tile's read, at most, batched
  if (rewritten && outputs > 0) {
    TILEPROF_ASSIGN_OR_RETURN(
        batched_n,
        Build(instruction, operand.Rank(), batched_indices.Rank(), dims->size(), offset_dims,
              batched.removed, batched.start_map, batched.op_batch, batched.idx_batch, *ivd));
    batched_elements = SaturatingMul(mapper_.ChunkElements(outputs, storage.type),
                                     PerOutputElements(*dims, batched_n, operand, slice_sizes));
  }
  // When a tile of the batched gather reads less than a lookup block's
  // partial, no lookup plan can win.
  if (index_dims.op_batch.empty() && !(rewritten && batched_elements < outputs)) {
    // The lookup plans, when they need less than the gather batched too.
    LookupForm form{*dims, n.res_src, n.start, slice_sizes, components};
    const uint64_t column =
        components == 1 ? ColumnLookupElements(instruction, operands, form).value_or(UINT64_MAX)
                        : UINT64_MAX;
    form.rival = std::min(column, batched_elements);
    TILEPROF_ASSIGN_OR_RETURN(std::optional<Value> planned,
                              components > 1
                                  ? LowerFlatLookup(instruction, operands, form, n.ivd, program)
                                  : LowerLookup(instruction, operand, indices, form, program));
    if (!planned && components == 1 && column < batched_elements) {
      form.rival = column;
      TILEPROF_ASSIGN_OR_RETURN(planned,
                                LowerColumnLookup(instruction, operands, form, n.ivd, program));
    }
    if (planned) return std::move(*planned);
  }
  if (rewritten && outputs > 0) {
    index_dims = std::move(batched);
    indices = batched_indices;
    n = std::move(batched_n);
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
  const uint64_t per_output = PerOutputElements(*dims, n, operand, slice_sizes);
  TILEPROF_ASSIGN_OR_RETURN(std::vector<Run> runs, RunsOf(graph_, flat_out));
  for (size_t r = 0; r < runs.size(); ++r) {
    const uint64_t first = runs[r].first, count = runs[r].count;
    const auto run = FlatRunBox(*dims, first, count);
    std::vector<uint64_t> lo(operand.Rank()), size(operand.Rank());
    GatherReadBox(run, n, operand, slice_sizes, lo, size);
    // With batching dimensions, a run spanning rows of an outer batch
    // dimension reads the inner ones whole: split it there.
    if (!index_dims.op_batch.empty()) {
      uint64_t volume = 1;
      for (uint64_t v : size) volume = SaturatingMul(volume, v);
      if (SplitWideRun(*dims, run, volume, SaturatingMul(count, per_output), runs[r], runs)) {
        continue;
      }
    }
    TILEPROF_ASSIGN_OR_RETURN(Tensor out_part, flat_out.Slice(first, first + count));
    TILEPROF_ASSIGN_OR_RETURN(Tensor box, operand_index.Box(lo, size));
    std::vector<uint64_t> run_lo, run_hi;
    for (const auto& [a, b] : run) run_lo.push_back(a), run_hi.push_back(b + 1);
    const IndicesBox index_box = IndicesBoxOf(n, operand.Rank(), indices, run_lo, run_hi);
    TILEPROF_ASSIGN_OR_RETURN(Tensor index_part, indices_index.Box(index_box.lo, index_box.size));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(cs, *codelet, instruction.name()));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, runs[r].tile));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["operand"], box));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["indices"], index_part));
    TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["out"], out_part));
    TILEPROF_RETURN_IF_ERROR(
        SetParams(graph_, vertex, *codelet, first, params, lo, size, index_box));
  }
  return Value::Array(std::move(out));
}

}  // namespace tileprof::engine::compiler
