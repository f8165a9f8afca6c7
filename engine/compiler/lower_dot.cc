// Dot and convolution, lowered to vertices that compute exactly what XLA
// defines for any dimension numbers, or else to an opaque op (which the
// simulator refuses to run): never to numbers of the wrong elements.
//
// Dot: the operands are viewed as lhs [B, M, K] and rhs [B, K, N] (batch
// dimensions in the order the attributes pair them, then the free and the
// contracting ones; the output of a dot is [B, M, N] in row-major order by
// definition). When an operand's dimensions are not already in that order
// the view is a dimshuffle; a view split into more than kMaxViewRegions runs
// is first copied into a new tensor (popops' transpose before a matmul),
// so that matmul vertices connect to few runs. poplin::MatMulPartial
// vertices then each compute a block of rows x columns of one batch entry.
//
// Convolution: the general conv partial (codelets.h, ConvParam) reads input
// and kernel in their own layouts through strides, so the lowering needs no
// rearrangement; each vertex gets a run of the output (in its layout) and
// the smallest flat ranges of input and kernel holding every element the
// run reads.
//
// Both: the output is cut into chunks of the linear mapping, one tile each
// (several dot blocks may share a chunk). When tiles are left over and a
// chunk has enough work, the contraction is split too (K for a dot, the
// input channels of a group for a convolution): each of P_k tiles computes
// partial sums into a partials tensor, and a reduction (popops::Reduce,
// ReduceAdd) on the chunk's tile adds them up: poplin's "partials +
// reduction" structure.
#include <algorithm>
#include <array>
#include <functional>
#include <numeric>

#include <fmt/format.h>

#include "engine/codelets/codelets.h"
#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"
#include "engine/hlo/attributes.h"

namespace tileprof::engine::compiler {
namespace {

// Below this many multiply-accumulates per vertex, splitting K costs more in
// exchange, partials memory and the reduction than it saves: a 1,024-MAC
// vertex runs in a few hundred cycles, about the cost of one exchange and
// one reduction step.
constexpr uint64_t kMinMacsPerVertex = 4096;
// As in lower_data.cc: a view of more runs than this would make every vertex
// reading it carry a long region list; the data is rearranged instead.
constexpr uint64_t kMaxViewRegions = 4096;
// Vertex parameters are 32-bit: operands with more elements than this are
// left opaque (no IPU tile holds a share of such a tensor anyway).
constexpr uint64_t kMaxElements = uint64_t{1} << 31;

uint64_t Product(std::span<const uint64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), uint64_t{1},
                         [](uint64_t a, uint64_t b) { return a * b; });
}

// Row-major strides of `dims`.
std::vector<uint64_t> Strides(std::span<const uint64_t> dims) {
  std::vector<uint64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

// A run of output elements [position, position + count) computed as one
// unit, on the tile of chunk `slot`.
struct Unit {
  uint64_t position = 0;
  uint64_t count = 0;
  uint64_t slot = 0;
};

// Emits one partial vertex: unit `unit`, contraction slice `g` of `p_k`,
// writing `target` on `tile`.
using EmitPartial =
    std::function<Status(ComputeSetId cs, size_t unit, uint64_t g, const Tensor& target, uint32_t tile)>;

// Maps the output of the units, creates the partials when p_k > 1, calls
// `emit` for each unit and slice, and adds the reduction.
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
    TILEPROF_ASSIGN_OR_RETURN(Tensor piece, flat_out.Slice(unit.position, unit.position + unit.count));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(piece, tile_of(unit.slot, 0)));
  }
  Tensor partials;
  if (p_k > 1) {
    TILEPROF_ASSIGN_OR_RETURN(partials, lowering.NewTensor(out.element_type(), {p_k, out_n},
                                                           fmt::format("{}.partials", instruction.name()),
                                                           false));
  }
  const Tensor flat_partials = partials.Flatten();
  const ComputeSetId cs = lowering.AddComputeSet(instruction.name(), program);
  for (size_t j = 0; j < units.size(); ++j) {
    const Unit& unit = units[j];
    for (uint64_t g = 0; g < p_k; ++g) {
      const uint32_t tile = tile_of(unit.slot, g);
      Tensor target;
      if (p_k > 1) {
        TILEPROF_ASSIGN_OR_RETURN(target, flat_partials.Slice(g * out_n + unit.position,
                                                              g * out_n + unit.position + unit.count));
        TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(target, tile));
      } else {
        TILEPROF_ASSIGN_OR_RETURN(target, flat_out.Slice(unit.position, unit.position + unit.count));
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
      TILEPROF_ASSIGN_OR_RETURN(Tensor part, flat_partials.Slice(g * out_n + unit.position,
                                                                 g * out_n + unit.position + unit.count));
      parts.push_back(std::move(part));
    }
    TILEPROF_ASSIGN_OR_RETURN(Tensor all, Tensor::Concat(parts));
    TILEPROF_ASSIGN_OR_RETURN(Tensor target, flat_out.Slice(unit.position, unit.position + unit.count));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph.AddVertex(reduce_cs, *reduce, instruction.name()));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(vertex, tile_of(unit.slot, 0)));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["partials"], all));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["out"], target));
  }
  return {};
}

// How many ways to split a contraction of `k` for chunks of `chunk` outputs
// over `slots` tiles.
uint64_t SplitWays(uint32_t tiles, uint64_t slots, uint64_t chunk, uint64_t macs_per_output,
                   uint64_t k) {
  if (slots >= tiles || k <= 1) return 1;
  const uint64_t macs = chunk * macs_per_output;
  return std::max<uint64_t>(
      1, std::min<uint64_t>({tiles / slots, (macs + kMinMacsPerVertex - 1) / kMinMacsPerVertex, k}));
}

// ---- Dot ---------------------------------------------------------------

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
  TILEPROF_ASSIGN_OR_RETURN(Tensor copy, lowering.NewTensor(view.element_type(), shape3, name, true));
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
    TILEPROF_ASSIGN_OR_RETURN(Tensor out, flat_copy.Slice(position, position + piece.region.size()));
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

Expected<Value> LowerDot(Lowering& lowering, const hlo::Instruction& instruction,
                         std::span<const Value> operands, ElementType acc_type,
                         program::Sequence& program) {
  const Tensor& lhs = operands[0].tensor;
  const Tensor& rhs = operands[1].tensor;
  TILEPROF_ASSIGN_OR_RETURN(hlo::DotDimensions dims, hlo::GetDotDimensions(instruction));
  std::vector<bool> lhs_used(lhs.Rank(), false), rhs_used(rhs.Rank(), false);
  TILEPROF_RETURN_IF_ERROR(CheckDims(dims.lhs_batch, lhs.Rank(), "lhs batch", lhs_used));
  TILEPROF_RETURN_IF_ERROR(CheckDims(dims.lhs_contracting, lhs.Rank(), "lhs contracting", lhs_used));
  TILEPROF_RETURN_IF_ERROR(CheckDims(dims.rhs_batch, rhs.Rank(), "rhs batch", rhs_used));
  TILEPROF_RETURN_IF_ERROR(CheckDims(dims.rhs_contracting, rhs.Rank(), "rhs contracting", rhs_used));
  if (dims.lhs_batch.size() != dims.rhs_batch.size() ||
      dims.lhs_contracting.size() != dims.rhs_contracting.size()) {
    return MakeError("lhs has {} batch and {} contracting dimensions, rhs {} and {}",
                     dims.lhs_batch.size(), dims.lhs_contracting.size(), dims.rhs_batch.size(),
                     dims.rhs_contracting.size());
  }
  auto size = [](const Tensor& t, int64_t d) { return t.shape()[static_cast<size_t>(d)]; };
  // lhs as [batch, free, contracting], rhs as [batch, contracting, free];
  // the *_t orders put the other two groups the other way round.
  std::vector<size_t> lhs_order, rhs_order, lhs_t, rhs_t;
  std::vector<uint64_t> out_dims;
  uint64_t b = 1, m = 1, k = 1, n = 1;
  for (size_t i = 0; i < dims.lhs_batch.size(); ++i) {
    if (size(lhs, dims.lhs_batch[i]) != size(rhs, dims.rhs_batch[i])) {
      return MakeError("batch dimension {} of lhs has size {}, dimension {} of rhs {}",
                       dims.lhs_batch[i], size(lhs, dims.lhs_batch[i]), dims.rhs_batch[i],
                       size(rhs, dims.rhs_batch[i]));
    }
    lhs_order.push_back(static_cast<size_t>(dims.lhs_batch[i]));
    rhs_order.push_back(static_cast<size_t>(dims.rhs_batch[i]));
    lhs_t.push_back(static_cast<size_t>(dims.lhs_batch[i]));
    rhs_t.push_back(static_cast<size_t>(dims.rhs_batch[i]));
    out_dims.push_back(size(lhs, dims.lhs_batch[i]));
    b *= size(lhs, dims.lhs_batch[i]);
  }
  std::vector<size_t> lhs_free, rhs_free;
  for (size_t d = 0; d < lhs.Rank(); ++d) {
    if (lhs_used[d]) continue;
    lhs_order.push_back(d);
    lhs_free.push_back(d);
    out_dims.push_back(lhs.shape()[d]);
    m *= lhs.shape()[d];
  }
  for (size_t i = 0; i < dims.lhs_contracting.size(); ++i) {
    if (size(lhs, dims.lhs_contracting[i]) != size(rhs, dims.rhs_contracting[i])) {
      return MakeError("contracting dimension {} of lhs has size {}, dimension {} of rhs {}",
                       dims.lhs_contracting[i], size(lhs, dims.lhs_contracting[i]),
                       dims.rhs_contracting[i], size(rhs, dims.rhs_contracting[i]));
    }
    lhs_order.push_back(static_cast<size_t>(dims.lhs_contracting[i]));
    rhs_order.push_back(static_cast<size_t>(dims.rhs_contracting[i]));
    lhs_t.push_back(static_cast<size_t>(dims.lhs_contracting[i]));
    k *= size(lhs, dims.lhs_contracting[i]);
  }
  lhs_t.insert(lhs_t.end(), lhs_free.begin(), lhs_free.end());
  for (size_t d = 0; d < rhs.Rank(); ++d) {
    if (rhs_used[d]) continue;
    rhs_order.push_back(d);
    rhs_free.push_back(d);
    out_dims.push_back(rhs.shape()[d]);
    n *= rhs.shape()[d];
  }
  rhs_t.insert(rhs_t.end(), rhs_free.begin(), rhs_free.end());
  for (int64_t d : dims.rhs_contracting) rhs_t.push_back(static_cast<size_t>(d));
  TILEPROF_ASSIGN_OR_RETURN(std::vector<uint64_t> result_dims, StorageShape(instruction.shape()));
  if (result_dims != out_dims) {
    return MakeError("result shape [{}] does not match the operands' [{}]", fmt::join(result_dims, ","),
                     fmt::join(out_dims, ","));
  }
  const uint64_t out_n = Product(out_dims);
  // A sum of no products is zeros, which the matmul vertex cannot give.
  if (out_n > 0 && k == 0) return lowering.LowerOpaque(instruction, operands, program);
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, lowering.NewTensor(instruction.shape(), instruction.name(), out_n == 0));
  if (out_n == 0) return Value::Array(out);
  bool lhs_transposed = false, rhs_transposed = false;
  TILEPROF_ASSIGN_OR_RETURN(Tensor lhs3, Operand3(lowering, lhs, lhs_order, lhs_t, b, m, k,
                                                  fmt::format("{}/lhs", instruction.name()), program,
                                                  &lhs_transposed));
  // The rhs is [batch, contracted, columns]: "transposed" when stored with
  // the columns first.
  TILEPROF_ASSIGN_OR_RETURN(Tensor rhs3, Operand3(lowering, rhs, rhs_t, rhs_order, b, n, k,
                                                  fmt::format("{}/rhs", instruction.name()), program,
                                                  &rhs_transposed));
  rhs_transposed = !rhs_transposed;
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* matmul,
                            GetMatMulPartialCodelet(lhs.element_type(), acc_type, lhs_transposed,
                                                    rhs_transposed));

  // Blocks of one batch entry: whole rows when a chunk holds one, else
  // pieces of a row.
  struct Block {
    uint64_t batch, row0, rows, col0, cols;
  };
  const uint64_t chunk = lowering.mapper().ChunkElements(out_n, out.element_type());
  const uint64_t slots = (out_n + chunk - 1) / chunk;
  std::vector<Block> blocks;
  std::vector<Unit> units;
  auto add = [&](Block block) {
    const uint64_t position = (block.batch * m + block.row0) * n + block.col0;
    blocks.push_back(block);
    units.push_back({position, block.rows * block.cols, position / chunk});
  };
  for (uint64_t batch = 0; batch < b; ++batch) {
    if (chunk >= n) {
      const uint64_t rows_per_block = chunk / n;
      for (uint64_t r = 0; r < m; r += rows_per_block) add({batch, r, std::min(rows_per_block, m - r), 0, n});
    } else {
      for (uint64_t r = 0; r < m; ++r)
        for (uint64_t c = 0; c < n; c += chunk) add({batch, r, 1, c, std::min(chunk, n - c)});
    }
  }
  const uint64_t p_k = SplitWays(lowering.graph().target().NumTiles(), slots, std::min(chunk, out_n), k, k);
  Graph& graph = lowering.graph();
  auto emit = [&](ComputeSetId cs, size_t j, uint64_t g, const Tensor& target, uint32_t tile) -> Status {
    const Block& block = blocks[j];
    const uint64_t k0 = g * k / p_k;
    const uint64_t ks = (g + 1) * k / p_k - k0;
    TILEPROF_ASSIGN_OR_RETURN(Tensor lhs2, lhs3.Index(block.batch));
    TILEPROF_ASSIGN_OR_RETURN(Tensor rhs2, rhs3.Index(block.batch));
    // [rows, k] or [k, rows]; [k, cols] or [cols, k].
    const size_t in_rows = lhs_transposed ? 1 : 0, w_cols = rhs_transposed ? 0 : 1;
    TILEPROF_ASSIGN_OR_RETURN(Tensor in, lhs2.Slice(block.row0, block.row0 + block.rows, in_rows));
    TILEPROF_ASSIGN_OR_RETURN(in, in.Slice(k0, k0 + ks, 1 - in_rows));
    TILEPROF_ASSIGN_OR_RETURN(Tensor weights, rhs2.Slice(k0, k0 + ks, 1 - w_cols));
    TILEPROF_ASSIGN_OR_RETURN(weights, weights.Slice(block.col0, block.col0 + block.cols, w_cols));
    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph.AddVertex(cs, *matmul, instruction.name()));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(vertex, tile));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["in"], in.Flatten()));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["weights"], weights.Flatten()));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["out"], target));
    TILEPROF_RETURN_IF_ERROR(graph.SetInitialValue(vertex["m"], static_cast<uint32_t>(block.rows)));
    TILEPROF_RETURN_IF_ERROR(graph.SetInitialValue(vertex["k"], static_cast<uint32_t>(ks)));
    return graph.SetInitialValue(vertex["n"], static_cast<uint32_t>(block.cols));
  };
  // Every split gets at least one element of K (p_k <= k), so no vertex is empty.
  TILEPROF_RETURN_IF_ERROR(EmitUnits(lowering, instruction, out, units, slots, p_k, program, emit));
  return Value::Array(out);
}

// ---- Convolution -------------------------------------------------------

struct ConvPlan {
  // Per logical dimension (batch/input feature, feature/output feature,
  // spatial...) of each operand: size and row-major stride.
  std::array<uint64_t, 2 + kConvMaxSpatialDims> in_size{}, in_stride{}, w_size{}, w_stride{},
      out_size{}, out_stride{};
  std::vector<hlo::WindowDimension> window;
  uint64_t ci = 1, co_per_group = 1, batch_groups = 1, feature_groups = 1;
};

// The range [lo, hi] of each dimension over the row-major positions
// [first, last] of a tensor of `dims`: exact for the leading dimensions where
// both ends agree, then the range of the first that differs, then whole.
std::vector<std::pair<uint64_t, uint64_t>> RangeBox(std::span<const uint64_t> dims, uint64_t first,
                                               uint64_t last) {
  const std::vector<uint64_t> strides = Strides(dims);
  std::vector<std::pair<uint64_t, uint64_t>> box(dims.size());
  bool differ = false;
  for (size_t d = 0; d < dims.size(); ++d) {
    const uint64_t a = first / strides[d] % dims[d], z = last / strides[d] % dims[d];
    box[d] = differ ? std::pair<uint64_t, uint64_t>{0, dims[d] - 1} : std::pair{a, z};
    differ = differ || a != z;
  }
  return box;
}

// A box of an operand: the view, and, per logical dimension, its stride
// within the box; `start` is the box's first element in those terms.
struct Box {
  Tensor field;
  std::array<uint64_t, 2 + kConvMaxSpatialDims> strides{};
  uint64_t start = 0;
};

// The elements of `tensor` in `ranges` (inclusive, per logical dimension;
// `which` gives each one's dimension of the tensor).
Expected<Box> CutBox(const Tensor& tensor, std::span<const int64_t> which,
                     std::span<const std::pair<uint64_t, uint64_t>> ranges) {
  Box box;
  box.field = tensor;
  // Outermost dimension first, whole ranges skipped: slicing an inner
  // dimension walks every index of the outer ones, so they are cut first.
  std::vector<size_t> by_dim(which.size());
  std::iota(by_dim.begin(), by_dim.end(), size_t{0});
  std::sort(by_dim.begin(), by_dim.end(), [&](size_t a, size_t b) { return which[a] < which[b]; });
  for (size_t i : by_dim) {
    const auto d = static_cast<size_t>(which[i]);
    if (ranges[i].first == 0 && ranges[i].second + 1 == tensor.shape()[d]) continue;
    TILEPROF_ASSIGN_OR_RETURN(box.field, box.field.Slice(ranges[i].first, ranges[i].second + 1, d));
  }
  const std::vector<uint64_t> strides = Strides(box.field.shape());
  box.strides.fill(1);
  for (size_t i = 0; i < which.size(); ++i) {
    box.strides[i] = strides[static_cast<size_t>(which[i])];
    box.start += ranges[i].first * box.strides[i];
  }
  return box;
}

Expected<Value> LowerConvolution(Lowering& lowering, const hlo::Instruction& instruction,
                                 std::span<const Value> operands, const Codelet& codelet,
                                 program::Sequence& program) {
  const Tensor& input = operands[0].tensor;
  const Tensor& kernel = operands[1].tensor;
  const hlo::Attribute* labels = instruction.FindAttribute("dim_labels");
  if (labels == nullptr) return MakeError("convolution without dim_labels");
  TILEPROF_ASSIGN_OR_RETURN(hlo::ConvolutionDimensions dims, hlo::ParseDimLabels(labels->value()));
  const size_t nsp = dims.input_spatial.size();
  TILEPROF_ASSIGN_OR_RETURN(std::vector<uint64_t> result_dims, StorageShape(instruction.shape()));
  // Only the shape for now: the variable is made once the op is known to lower.
  TILEPROF_ASSIGN_OR_RETURN(StorageType storage, StorageOf(instruction.shape().element_type));
  const Tensor out = Tensor::OfVariable(0, storage.type, result_dims);
  if (input.Rank() != nsp + 2 || kernel.Rank() != nsp + 2 || out.Rank() != nsp + 2 ||
      dims.kernel_spatial.size() != nsp || dims.output_spatial.size() != nsp) {
    return MakeError("dim_labels {} do not fit input {}, kernel {} and result {}", labels->value(),
                     input.ShapeString(), kernel.ShapeString(), out.ShapeString());
  }
  ConvPlan plan;
  if (const hlo::Attribute* window = instruction.FindAttribute("window")) {
    TILEPROF_ASSIGN_OR_RETURN(plan.window, hlo::ParseWindow(window->value()));
  }
  if (plan.window.size() != nsp) {
    return MakeError("window has {} dimensions, dim_labels {} spatial ones", plan.window.size(), nsp);
  }
  auto count_attr = [&](std::string_view name) -> Expected<uint64_t> {
    const hlo::Attribute* attr = instruction.FindAttribute(name);
    if (attr == nullptr) return uint64_t{1};
    uint64_t value = 0;
    const std::string_view text = attr->value();
    for (char c : text) {
      if (c < '0' || c > '9' || value > UINT32_MAX) return MakeError("{}={} is not a count", name, text);
      value = value * 10 + static_cast<uint64_t>(c - '0');
    }
    if (text.empty() || value == 0) return MakeError("{}={} is not a count", name, text);
    return value;
  };
  TILEPROF_ASSIGN_OR_RETURN(plan.feature_groups, count_attr("feature_group_count"));
  TILEPROF_ASSIGN_OR_RETURN(plan.batch_groups, count_attr("batch_group_count"));

  // Logical order of each operand's dimensions: batch (input feature for the
  // kernel), feature (output feature), spatial...
  std::vector<int64_t> in_dims = {dims.input_batch, dims.input_feature};
  std::vector<int64_t> w_dims = {dims.kernel_input_feature, dims.kernel_output_feature};
  std::vector<int64_t> out_dims = {dims.output_batch, dims.output_feature};
  for (size_t s = 0; s < nsp; ++s) {
    in_dims.push_back(dims.input_spatial[s]);
    w_dims.push_back(dims.kernel_spatial[s]);
    out_dims.push_back(dims.output_spatial[s]);
  }
  auto locate = [&](const Tensor& t, std::span<const int64_t> which, auto& sizes, auto& strides) -> Status {
    const std::vector<uint64_t> all = Strides(t.shape());
    std::vector<bool> seen(t.Rank(), false);
    sizes.fill(1);
    strides.fill(1);
    for (size_t i = 0; i < which.size(); ++i) {
      const int64_t d = which[i];
      if (d < 0 || static_cast<size_t>(d) >= t.Rank() || seen[static_cast<size_t>(d)]) {
        return MakeError("dim_labels {} do not name each dimension of {} once", labels->value(),
                         t.ShapeString());
      }
      seen[static_cast<size_t>(d)] = true;
      sizes[i] = t.shape()[static_cast<size_t>(d)];
      strides[i] = all[static_cast<size_t>(d)];
    }
    return {};
  };
  TILEPROF_RETURN_IF_ERROR(locate(input, in_dims, plan.in_size, plan.in_stride));
  TILEPROF_RETURN_IF_ERROR(locate(kernel, w_dims, plan.w_size, plan.w_stride));
  TILEPROF_RETURN_IF_ERROR(locate(out, out_dims, plan.out_size, plan.out_stride));

  // The shapes XLA requires.
  const uint64_t batch = plan.in_size[0], features = plan.in_size[1];
  plan.ci = plan.w_size[0];
  const uint64_t co = plan.w_size[1];
  const uint64_t groups = plan.feature_groups * plan.batch_groups;
  if (plan.feature_groups > 1 && plan.batch_groups > 1) {
    return MakeError("feature_group_count and batch_group_count are both above 1");
  }
  if (features != plan.ci * plan.feature_groups || co % groups != 0 || batch % plan.batch_groups != 0) {
    return MakeError("input {} (features {}, batch {}) and kernel {} (input features {}, output "
                     "features {}) do not fit feature_group_count={} batch_group_count={}",
                     input.ShapeString(), features, batch, kernel.ShapeString(), plan.ci, co,
                     plan.feature_groups, plan.batch_groups);
  }
  plan.co_per_group = co / groups;
  std::vector<uint64_t> expected = {batch / plan.batch_groups, co};
  for (size_t s = 0; s < nsp; ++s) {
    const hlo::WindowDimension& w = plan.window[s];
    if (w.size < 1 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1 ||
        static_cast<uint64_t>(w.size) != plan.w_size[2 + s] || w.padding_low < INT32_MIN ||
        w.padding_low > INT32_MAX || w.padding_high < INT32_MIN || w.padding_high > INT32_MAX) {
      return MakeError("window dimension {} (size {}, stride {}, padding {}_{}, dilations {}/{}) does "
                       "not fit kernel {}", s, w.size, w.stride, w.padding_low, w.padding_high,
                       w.base_dilation, w.window_dilation, kernel.ShapeString());
    }
    const int64_t in = static_cast<int64_t>(plan.in_size[2 + s]);
    const int64_t padded = in == 0 ? 0 : (in - 1) * w.base_dilation + 1 + w.padding_low + w.padding_high;
    const int64_t span = (w.size - 1) * w.window_dilation + 1;
    expected.push_back(padded >= span ? static_cast<uint64_t>((padded - span) / w.stride + 1) : 0);
  }
  std::vector<uint64_t> got(plan.out_size.begin(), plan.out_size.begin() + static_cast<int64_t>(nsp + 2));
  if (got != expected) {
    return MakeError("result {} should have batch, feature and spatial sizes [{}]", out.ShapeString(),
                     fmt::join(expected, ","));
  }
  const uint64_t out_n = out.NumElements();
  if (out_n > 0 && (plan.ci == 0 || input.NumElements() == 0 || input.NumElements() >= kMaxElements ||
                    kernel.NumElements() >= kMaxElements || out_n >= kMaxElements)) {
    // Sums of no products (zeros), or sizes past the vertex parameters.
    return lowering.LowerOpaque(instruction, operands, program);
  }
  TILEPROF_ASSIGN_OR_RETURN(Tensor result, lowering.NewTensor(instruction.shape(), instruction.name(), out_n == 0));
  if (out_n == 0) return Value::Array(result);

  uint64_t positions = 1;
  for (size_t s = 0; s < nsp; ++s) positions *= plan.w_size[2 + s];
  const uint64_t chunk = lowering.mapper().ChunkElements(out_n, out.element_type());
  const uint64_t slots = (out_n + chunk - 1) / chunk;
  std::vector<Unit> units;
  for (uint64_t p = 0; p < out_n; p += chunk) units.push_back({p, std::min(chunk, out_n - p), p / chunk});
  const uint64_t p_k = SplitWays(lowering.graph().target().NumTiles(), slots, std::min(chunk, out_n),
                                 plan.ci * positions, plan.ci);
  const std::vector<std::string> param_names(ConvPartialParamNames().begin(), ConvPartialParamNames().end());
  Graph& graph = lowering.graph();
  auto emit = [&](ComputeSetId cs, size_t j, uint64_t g, const Tensor& target, uint32_t tile) -> Status {
    const Unit& unit = units[j];
    const uint64_t c0 = g * plan.ci / p_k;
    const uint64_t cs_count = (g + 1) * plan.ci / p_k - c0;
    // Ranges of the logical output dimensions the unit covers.
    const auto box = RangeBox(out.shape(), unit.position, unit.position + unit.count - 1);
    std::array<std::pair<uint64_t, uint64_t>, 2 + kConvMaxSpatialDims> o{};
    for (size_t i = 0; i < nsp + 2; ++i) o[i] = box[static_cast<size_t>(out_dims[i])];
    const uint64_t g_lo = o[1].first / plan.co_per_group, g_hi = o[1].second / plan.co_per_group;
    // Input elements read: bounding box, per logical dimension.
    std::array<std::pair<uint64_t, uint64_t>, 2 + kConvMaxSpatialDims> in{};
    const uint64_t out_batch = plan.out_size[0];
    in[0] = plan.batch_groups > 1 ? std::pair{g_lo * out_batch + o[0].first, g_hi * out_batch + o[0].second}
                                  : o[0];
    in[1] = plan.feature_groups > 1
                ? std::pair{g_lo * plan.ci + c0, g_hi * plan.ci + c0 + cs_count - 1}
                : std::pair{c0, c0 + cs_count - 1};
    bool empty = false;
    for (size_t s = 0; s < nsp; ++s) {
      const hlo::WindowDimension& w = plan.window[s];
      const int64_t lo = static_cast<int64_t>(o[2 + s].first) * w.stride - w.padding_low;
      const int64_t hi = static_cast<int64_t>(o[2 + s].second) * w.stride - w.padding_low +
                         (w.size - 1) * w.window_dilation;
      const int64_t first = lo <= 0 ? 0 : (lo + w.base_dilation - 1) / w.base_dilation;
      const int64_t last = std::min<int64_t>(hi < 0 ? -1 : hi / w.base_dilation,
                                             static_cast<int64_t>(plan.in_size[2 + s]) - 1);
      if (first > last) empty = true;
      else in[2 + s] = {static_cast<uint64_t>(first), static_cast<uint64_t>(last)};
    }
    // The fields are the boxes of those ranges, cut out of each operand in
    // its own layout: the vertex addresses them with the box's strides and
    // the box's first element as the start.
    Box in_box, w_box;
    if (!empty) {
      TILEPROF_ASSIGN_OR_RETURN(in_box, CutBox(input, in_dims, {in.data(), nsp + 2}));
    } else {
      // All padding: the vertex reads none of the input; it still needs a field.
      TILEPROF_ASSIGN_OR_RETURN(in_box.field, input.Flatten().Slice(0, 1));
      in_box.strides = plan.in_stride;
    }
    // Kernel elements read: the channel slice, the unit's output features,
    // every position.
    std::array<std::pair<uint64_t, uint64_t>, 2 + kConvMaxSpatialDims> w{};
    w[0] = {c0, c0 + cs_count - 1};
    w[1] = o[1];
    for (size_t s = 0; s < nsp; ++s) w[2 + s] = {0, plan.w_size[2 + s] - 1};
    TILEPROF_ASSIGN_OR_RETURN(w_box, CutBox(kernel, w_dims, {w.data(), nsp + 2}));

    std::array<uint64_t, static_cast<size_t>(ConvParam::kCount)> p{};
    auto set = [&](ConvParam param, uint64_t value) { p[static_cast<size_t>(param)] = value; };
    auto set_at = [&](ConvParam first, size_t s, size_t step, uint64_t value) {
      p[static_cast<size_t>(first) + s * step] = value;
    };
    set(ConvParam::kOutStart, unit.position);
    set(ConvParam::kOutSizeB, plan.out_size[0]);
    set(ConvParam::kOutStrideB, plan.out_stride[0]);
    set(ConvParam::kOutSizeF, plan.out_size[1]);
    set(ConvParam::kOutStrideF, plan.out_stride[1]);
    set(ConvParam::kInStart, in_box.start);
    set(ConvParam::kInStrideB, in_box.strides[0]);
    set(ConvParam::kInStrideF, in_box.strides[1]);
    set(ConvParam::kWeightsStart, w_box.start);
    set(ConvParam::kWeightsStrideI, w_box.strides[0]);
    set(ConvParam::kWeightsStrideO, w_box.strides[1]);
    uint64_t reversal = 0;
    for (size_t s = 0; s < kConvMaxSpatialDims; ++s) {
      const bool used = s < nsp;
      const hlo::WindowDimension w = used ? plan.window[s] : hlo::WindowDimension{};
      set_at(ConvParam::kOutSize0, s, 2, plan.out_size[2 + s]);
      set_at(ConvParam::kOutStride0, s, 2, plan.out_stride[2 + s]);
      set_at(ConvParam::kInSize0, s, 2, plan.in_size[2 + s]);
      set_at(ConvParam::kInStride0, s, 2, in_box.strides[2 + s]);
      set_at(ConvParam::kKernelSize0, s, 2, plan.w_size[2 + s]);
      set_at(ConvParam::kWeightsStride0, s, 2, w_box.strides[2 + s]);
      set_at(ConvParam::kStride0, s, 1, static_cast<uint64_t>(w.stride));
      set_at(ConvParam::kPadLow0, s, 1, static_cast<uint32_t>(static_cast<int32_t>(w.padding_low)));
      set_at(ConvParam::kLhsDilation0, s, 1, static_cast<uint64_t>(w.base_dilation));
      set_at(ConvParam::kRhsDilation0, s, 1, static_cast<uint64_t>(w.window_dilation));
      if (w.window_reversal) reversal |= uint64_t{1} << s;
    }
    set(ConvParam::kReversal, reversal);
    set(ConvParam::kInChansPerGroup, plan.ci);
    set(ConvParam::kOutChansPerGroup, plan.co_per_group);
    set(ConvParam::kGroupsSplitBatch, plan.batch_groups > 1 ? 1 : 0);
    set(ConvParam::kInChanStart, c0);
    set(ConvParam::kInChans, cs_count);

    TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph.AddVertex(cs, codelet, instruction.name()));
    TILEPROF_RETURN_IF_ERROR(graph.SetTileMapping(vertex, tile));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["in"], in_box.field.Flatten()));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["weights"], w_box.field.Flatten()));
    TILEPROF_RETURN_IF_ERROR(graph.Connect(vertex["out"], target));
    for (size_t i = 0; i < p.size(); ++i) {
      if (p[i] > UINT32_MAX) return MakeError("conv parameter {}={} does not fit 32 bits", param_names[i], p[i]);
      TILEPROF_RETURN_IF_ERROR(graph.SetInitialValue(vertex[param_names[i]], static_cast<uint32_t>(p[i])));
    }
    return {};
  };
  TILEPROF_RETURN_IF_ERROR(EmitUnits(lowering, instruction, result, units, slots, p_k, program, emit));
  return Value::Array(result);
}

}  // namespace

Expected<Value> Lowering::LowerDotLike(const hlo::Instruction& instruction,
                                       std::span<const Value> operands,
                                       program::Sequence& program) {
  const hlo::Shape& shape = instruction.shape();
  const bool is_conv = instruction.opcode() == hlo::Opcode::kConvolution;
  bool ok = operands.size() == 2 && shape.IsArray() && IsNative(shape);
  for (size_t i = 0; ok && i < 2; ++i) {
    ok = !operands[i].is_tuple && operands[i].tensor.valid() && IsNative(instruction.operand(i)->shape());
  }
  if (!ok) return LowerOpaque(instruction, operands, program);
  const ElementType in_type = operands[0].tensor.element_type();
  if (operands[1].tensor.element_type() != in_type) return LowerOpaque(instruction, operands, program);
  TILEPROF_ASSIGN_OR_RETURN(StorageType storage, StorageOf(shape.element_type));
  Expected<const Codelet*> codelet = is_conv ? GetConvPartialCodelet(in_type, storage.type)
                                             : GetMatMulPartialCodelet(in_type, storage.type);
  // Types without a dot product (integers of other widths, complex, pred)
  // keep their memory and cycle costs but are refused by the simulator.
  if (!codelet) return LowerOpaque(instruction, operands, program);
  return is_conv ? LowerConvolution(*this, instruction, operands, **codelet, program)
                 : LowerDot(*this, instruction, operands, storage.type, program);
}

}  // namespace tileprof::engine::compiler
