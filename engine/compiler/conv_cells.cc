// The cells of a planned convolution as conv partial vertices: see
// lower_conv.cc for the whole lowering, conv_cells.h for the split.
#include "engine/compiler/conv_cells.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "engine/compiler/memory_model.h"
#include "engine/graph/region_list.h"

namespace tileprof::engine::compiler {
namespace {

// A box of an operand: its elements as strided runs (the vertex field,
// flat), and, per logical dimension, its stride within the box; `start` is
// the box's first element in those terms.
struct Box {
  std::vector<StridedRegion> runs;
  uint64_t elements = 0;
  LogicalSizes strides{};
  uint64_t start = 0;
};

// A box that covers nearly all of its innermost dimensions is widened to
// cover them whole: a 3x3 window's box of 111 of 112 columns is otherwise a
// region per row (a depthwise weight gradient gave each vertex thousands),
// where the whole plane is one. The vertex reads the few extra elements
// and ignores them (it addresses the box through its strides and start),
// as an exchange of one contiguous block is what Poplar would do too. A
// dimension is widened, every dimension inside it being already whole, when
// at most 1/kWidenFraction of it is added, or when the bytes added cost less
// than the regions saved: a region sent and received costs exchange code at
// both ends (memory::kExchangeCodePerRegion each), so the 6 of 7 columns a
// padded 3x3 window reads of a 7x7 plane are widened (4 B more per row
// saves a row's 16 B).
constexpr uint64_t kWidenFraction = 8;
constexpr uint64_t kRegionCostBytes = 2 * memory::kExchangeCodePerRegion;

// The elements of the indexed tensor in `ranges` (inclusive, per logical
// dimension; `which` gives each one's dimension of the tensor), widened as
// above.
Expected<Box> CutBox(const TensorIndex& index, std::span<const int64_t> which,
                     std::span<const std::pair<uint64_t, uint64_t>> asked) {
  const Tensor& tensor = index.tensor();
  std::vector<std::pair<uint64_t, uint64_t>> ranges(asked.begin(), asked.end());
  std::vector<size_t> by_dim(which.size());
  std::iota(by_dim.begin(), by_dim.end(), size_t{0});
  std::sort(by_dim.begin(), by_dim.end(), [&](size_t a, size_t b) { return which[a] < which[b]; });
  uint64_t inner_bytes = SizeOf(tensor.element_type());  // of one index of the dimension
  for (size_t k = by_dim.size(); k-- > 0;) {
    auto& [lo, hi] = ranges[by_dim[k]];
    const uint64_t extent = tensor.shape()[static_cast<size_t>(which[by_dim[k]])];
    const uint64_t size = hi + 1 - lo;
    if (size != extent) {
      // Whole, this dimension joins the rows of the next outer one into one
      // region: `rows` of them become 1 for (extent - size) more per row.
      const uint64_t rows =
          k == 0 ? 1 : ranges[by_dim[k - 1]].second + 1 - ranges[by_dim[k - 1]].first;
      const bool small = (extent - size) * kWidenFraction <= extent;
      const bool pays = (extent - size) * inner_bytes * rows <= (rows - 1) * kRegionCostBytes;
      if (!small && !pays) break;
      lo = 0;
      hi = extent - 1;
    }
    inner_bytes *= extent;
  }
  std::vector<uint64_t> lo(tensor.shape().size(), 0);
  std::vector<uint64_t> size = tensor.shape();
  for (size_t i = 0; i < which.size(); ++i) {
    const auto d = static_cast<size_t>(which[i]);
    lo[d] = ranges[i].first;
    size[d] = ranges[i].second + 1 - ranges[i].first;
  }
  Box box;
  TILEPROF_RETURN_IF_ERROR(index.AppendBoxRuns(lo, size, box.runs));
  box.elements = Product(size);
  const std::vector<uint64_t> strides = Strides(size);
  box.strides.fill(1);
  for (size_t i = 0; i < which.size(); ++i) {
    box.strides[i] = strides[static_cast<size_t>(which[i])];
    box.start += ranges[i].first * box.strides[i];
  }
  return box;
}

// What a cell reads: input elements per logical dimension, [first, last]
// (none when `empty`: the window sees only padding), and per spatial
// dimension its kernel positions: the first, how many, and the first as
// stored.
struct CellReads {
  LogicalRanges in{};
  bool empty = false;
  std::array<uint64_t, kConvMaxSpatialDims> k_lo{}, k_size{}, k_stored{};
};

// The reads of `cell`, whose output ranges (begin, size) are `o`.
CellReads ReadsOf(const ConvPlan& plan, const Cell& cell, const LogicalRanges& o) {
  const size_t nsp = plan.window.size();
  const Range g = cell[PlanDim::kGroup], ci = cell[PlanDim::kInChan];
  CellReads r;
  LogicalRanges& in = r.in;
  const uint64_t out_batch = plan.out_size[0];
  const uint64_t g_last = g.begin + g.size - 1;
  in[0] = plan.batch_groups > 1 ? std::pair{g.begin * out_batch + o[0].first,
                                            g_last * out_batch + o[0].first + o[0].second - 1}
                                : std::pair{o[0].first, o[0].first + o[0].second - 1};
  in[1] = plan.feature_groups > 1
              ? std::pair{g.begin * plan.ci + ci.begin, g_last * plan.ci + ci.begin + ci.size - 1}
              : std::pair{ci.begin, ci.begin + ci.size - 1};
  for (size_t s = 0; s < nsp; ++s) {
    const hlo::WindowDimension& w = plan.window[s];
    const Range k = cell[KernelDim(s)];
    r.k_lo[s] = k.begin;
    r.k_size[s] = k.size;
    // With the kernel reversed, logical positions [b, b+n) are stored
    // at [size-b-n, size-b).
    r.k_stored[s] = w.window_reversal ? plan.w_size[2 + s] - k.begin - k.size : k.begin;
    const int64_t lo_pos = static_cast<int64_t>(o[2 + s].first) * w.stride - w.padding_low +
                           static_cast<int64_t>(k.begin) * w.window_dilation;
    const int64_t hi_pos = static_cast<int64_t>(o[2 + s].first + o[2 + s].second - 1) * w.stride -
                           w.padding_low +
                           static_cast<int64_t>(k.begin + k.size - 1) * w.window_dilation;
    const int64_t first = lo_pos <= 0 ? 0 : (lo_pos + w.base_dilation - 1) / w.base_dilation;
    const int64_t last = std::min<int64_t>(hi_pos < 0 ? -1 : hi_pos / w.base_dilation,
                                           static_cast<int64_t>(plan.in_size[2 + s]) - 1);
    if (first > last)
      r.empty = true;
    else
      in[2 + s] = {static_cast<uint64_t>(first), static_cast<uint64_t>(last)};
  }
  return r;
}

using ConvParamValues = std::array<uint64_t, static_cast<size_t>(ConvParam::kCount)>;

// The conv partial's parameters for `cell`: its output ranges `o` within
// the block (`block_strides`: the block's row-major strides in the output
// tensor's dimensions), its reads, and the boxes it reads them from.
ConvParamValues ParamsOf(const ConvPlan& plan, const Cell& cell, const LogicalRanges& o,
                         const CellReads& reads, const Box& in_box, const Box& w_box,
                         std::span<const uint64_t> block_strides) {
  const size_t nsp = plan.window.size();
  const Range ci = cell[PlanDim::kInChan];
  ConvParamValues p{};
  auto set = [&](ConvParam param, uint64_t value) { p[static_cast<size_t>(param)] = value; };
  auto set_at = [&](ConvParam first, size_t s, size_t step, uint64_t value) {
    p[static_cast<size_t>(first) + s * step] = value;
  };
  auto block_stride = [&](size_t logical) {
    return block_strides[static_cast<size_t>(plan.out_dims[logical])];
  };
  set(ConvParam::kOutStart, 0);
  set(ConvParam::kOutSizeB, o[0].second);
  set(ConvParam::kOutStrideB, block_stride(0));
  set(ConvParam::kOutSizeF, o[1].second);
  set(ConvParam::kOutStrideF, block_stride(1));
  set(ConvParam::kOutOffsetB, o[0].first);
  set(ConvParam::kOutOffsetF, o[1].first);
  set(ConvParam::kInStart, in_box.start);
  set(ConvParam::kInStrideB, in_box.strides[0]);
  set(ConvParam::kInStrideF, in_box.strides[1]);
  set(ConvParam::kWeightsStart, w_box.start);
  set(ConvParam::kWeightsStrideI, w_box.strides[0]);
  set(ConvParam::kWeightsStrideO, w_box.strides[1]);
  uint64_t reversal = 0;
  for (size_t s = 0; s < kConvMaxSpatialDims; ++s) {
    const bool used = s < nsp;
    const hlo::WindowDimension win = used ? plan.window[s] : hlo::WindowDimension{};
    set_at(ConvParam::kOutSize0, s, 2, used ? o[2 + s].second : 1);
    set_at(ConvParam::kOutStride0, s, 2, used ? block_stride(2 + s) : 1);
    set_at(ConvParam::kOutOffset0, s, 1, used ? o[2 + s].first : 0);
    set_at(ConvParam::kInSize0, s, 2, plan.in_size[2 + s]);
    set_at(ConvParam::kInStride0, s, 2, in_box.strides[2 + s]);
    set_at(ConvParam::kKernelSize0, s, 2, used ? reads.k_size[s] : 1);
    set_at(ConvParam::kKernelOffset0, s, 1, used ? reads.k_lo[s] : 0);
    set_at(ConvParam::kKernelFull0, s, 1, plan.w_size[2 + s]);
    set_at(ConvParam::kWeightsStride0, s, 2, w_box.strides[2 + s]);
    set_at(ConvParam::kStride0, s, 1, static_cast<uint64_t>(win.stride));
    set_at(ConvParam::kPadLow0, s, 1, static_cast<uint32_t>(static_cast<int32_t>(win.padding_low)));
    set_at(ConvParam::kLhsDilation0, s, 1, static_cast<uint64_t>(win.base_dilation));
    set_at(ConvParam::kRhsDilation0, s, 1, static_cast<uint64_t>(win.window_dilation));
    if (win.window_reversal) reversal |= uint64_t{1} << s;
  }
  set(ConvParam::kReversal, reversal);
  set(ConvParam::kInChansPerGroup, plan.ci);
  set(ConvParam::kOutChansPerGroup, plan.co_per_group);
  set(ConvParam::kGroupsSplitBatch, plan.batch_groups > 1 ? 1 : 0);
  set(ConvParam::kInChanStart, ci.begin);
  set(ConvParam::kInChans, ci.size);
  set(ConvParam::kBatchPerGroup, plan.out_size[0]);
  return p;
}

}  // namespace

// The ranges of the output's logical dimensions (batch, feature,
// spatial...) a cell covers. A cell of several groups has every channel
// of them (conv_search.cc), so its features are one range.
LogicalRanges ConvCells::OutputRanges(const Cell& cell) const {
  const size_t nsp = plan.window.size();
  const uint64_t co_group = plan.co_per_group;
  LogicalRanges o{};
  const Range g = cell[PlanDim::kGroup], co = cell[PlanDim::kOutChan];
  o[0] = {cell[PlanDim::kBatch].begin, cell[PlanDim::kBatch].size};
  o[1] = {g.begin * co_group + co.begin, g.size == 1 ? co.size : g.size * co_group};
  for (size_t s = 0; s < nsp; ++s) o[2 + s] = {cell[FieldDim(s)].begin, cell[FieldDim(s)].size};
  return o;
}

// The cell's output block as a box of the output tensor (OutputBox).
void ConvCells::OutputBox(const Cell& cell, std::vector<uint64_t>& box_lo,
                          std::vector<uint64_t>& box_size) const {
  const LogicalRanges o = OutputRanges(cell);
  box_lo.assign(out.Rank(), 0);
  box_size.assign(out.Rank(), 1);
  for (size_t i = 0; i < plan.window.size() + 2; ++i) {
    box_lo[static_cast<size_t>(plan.out_dims[i])] = o[i].first;
    box_size[static_cast<size_t>(plan.out_dims[i])] = o[i].second;
  }
}

Status ConvCells::Emit(ComputeSetId cs, const Cell& cell, std::span<const TensorRegion> target) {
  const size_t nsp = plan.window.size();
  const LogicalRanges o = OutputRanges(cell);
  const Range ci = cell[PlanDim::kInChan];
  // The block's sizes in the output tensor's dimensions, row-major: the
  // vertex's out field and its strides.
  OutputBox(cell, lo, extent);
  const std::vector<uint64_t> block_strides = Strides(extent);
  // Input elements read, per logical dimension: [first, last].
  const CellReads reads = ReadsOf(plan, cell, o);
  // The fields are the boxes of those ranges, cut out of each operand in
  // its own layout: the vertex addresses them with the box's strides and
  // the box's first element as the start.
  Box in_box, w_box;
  if (!reads.empty) {
    TILEPROF_ASSIGN_OR_RETURN(in_box,
                              CutBox(input_index, plan.in_dims, {reads.in.data(), nsp + 2}));
  } else {
    // All padding: the vertex reads none of the input; it still needs a field.
    // Its first element, a box of one.
    const std::vector<uint64_t> origin(input.Rank(), 0), one(input.Rank(), 1);
    TILEPROF_RETURN_IF_ERROR(input_index.AppendBoxRuns(origin, one, in_box.runs));
    in_box.elements = 1;
    in_box.strides = plan.in_stride;
  }
  // Kernel elements read: the channel slice, the cell's output features,
  // its kernel positions.
  LogicalRanges w{};
  w[0] = {ci.begin, ci.begin + ci.size - 1};
  w[1] = {o[1].first, o[1].first + o[1].second - 1};
  for (size_t s = 0; s < nsp; ++s)
    w[2 + s] = {reads.k_stored[s], reads.k_stored[s] + reads.k_size[s] - 1};
  TILEPROF_ASSIGN_OR_RETURN(w_box, CutBox(kernel_index, plan.w_dims, {w.data(), nsp + 2}));
  // An operand nothing read before is laid out for the plan: each slice
  // on the tile of the first cell reading it.
  if (weights_placeable && cell.weights_home)
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(w_box.runs, cell.tile));
  if (input_placeable && cell.input_home && !reads.empty)
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(in_box.runs, cell.tile));

  const ConvParamValues p = ParamsOf(plan, cell, o, reads, in_box, w_box, block_strides);
  TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph.AddVertex(cs, codelet, instruction.name()));
  TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(vertex, cell.tile));
  // The boxes flat, as the runs they were cut in.
  TILEPROF_RETURN_IF_ERROR(graph.ConnectRuns(vertex, in_field, input.element_type(),
                                             {&in_box.elements, 1}, in_box.runs));
  TILEPROF_RETURN_IF_ERROR(graph.ConnectRuns(vertex, weights_field, kernel.element_type(),
                                             {&w_box.elements, 1}, w_box.runs));
  const uint64_t out_elements = Product(extent);
  TILEPROF_RETURN_IF_ERROR(
      graph.ConnectRegions(vertex, out_field, target_type, {&out_elements, 1}, target));
  std::array<uint32_t, static_cast<size_t>(ConvParam::kCount)> values{};
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] > UINT32_MAX)
      return MakeError("conv parameter {}={} does not fit 32 bits", param_names[i], p[i]);
    values[i] = static_cast<uint32_t>(p[i]);
  }
  return graph.SetInitialValues(vertex, values);
}

}  // namespace tileprof::engine::compiler
