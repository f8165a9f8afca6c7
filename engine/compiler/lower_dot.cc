// Dot and convolution, both as batched matrix products
// out[b] = lhs[b] . rhs[b] with lhs [B, M, K], rhs [B, K, N], out [B, M, N]
// (EmitMatMul).
//
// Dot: the operands are viewed in that layout (batch, free, contracting
// dimensions for lhs; batch, contracting, free for rhs), which is HLO's
// output layout. Convolution: the input's patches are rearranged into a
// new tensor [G, batch x output positions, window x input features / G]
// (tileprof::RearrangePadded: strides, padding, base and window dilation and
// window reversal are index arithmetic, padding reads a zero constant; a 1x1
// window without strides, padding or dilation is a view instead), the
// kernel is viewed as [G, window x input features / G, output features / G]
// and the result [G, batch x positions, output features / G] is viewed in
// the HLO output layout. batch_group_count > 1 stays opaque.
// A view too fragmented to connect (more than kMaxViewRegions runs) is
// rearranged into a new tensor first, as Poplar rearranges matmul operands.
//
// Plan: per batch, the [M, N] output is cut into blocks of whole rows (or
// pieces of one row when a row is larger than a tile's share), one block
// per tile, consecutive tiles. When tiles are left over and a block has
// enough work, K is split too: each of P_k tiles computes partial sums over
// K/P_k into a partials tensor, and a reduction (popops::Reduce, ReduceAdd)
// on the block's tile adds them up: poplin's "partials + reduction"
// structure. Every vertex reads exactly its block's rows and columns.
#include <algorithm>

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
// As lower_data.cc's kMaxViewRegions.
constexpr uint64_t kMaxOperandRegions = 4096;
// 16 Mi elements (64 MiB of f32): about 40 KiB of patches per ipu2 tile,
// a few times what a tile's share of a convolution's operands is.
constexpr uint64_t kMaxPatchElements = uint64_t{1} << 24;

struct Block {
  uint64_t batch = 0;
  uint64_t row0 = 0;
  uint64_t rows = 0;
  uint64_t col0 = 0;
  uint64_t cols = 0;
};

Expected<uint32_t> U32(uint64_t value, std::string_view what) {
  if (value > UINT32_MAX) return MakeError("{} {} does not fit a vertex parameter", what, value);
  return static_cast<uint32_t>(value);
}

// tensor[b][r0 : r0 + rows, c0 : c0 + cols] of a rank-3 tensor.
Expected<Tensor> Block3(const Tensor& t, uint64_t b, uint64_t r0, uint64_t rows, uint64_t c0,
                        uint64_t cols) {
  TILEPROF_ASSIGN_OR_RETURN(Tensor m, t.Index(b));
  TILEPROF_ASSIGN_OR_RETURN(Tensor r, m.Slice(r0, r0 + rows, 0));
  return r.Slice(c0, c0 + cols, 1);
}

int64_t Get(const std::vector<int64_t>& v, size_t i) { return v[i]; }

}  // namespace

Expected<Tensor> Lowering::Canonical(const Tensor& tensor, std::span<const size_t> order,
                                     std::vector<uint64_t> shape, std::string_view name,
                                     program::Sequence& program) {
  if (EstimatedRuns(tensor.shape(), order) * std::max<size_t>(tensor.regions().size(), 1) >
      kMaxOperandRegions) {
    std::vector<SourceDim> map(tensor.Rank());
    std::vector<uint64_t> dims(order.size());
    for (size_t i = 0; i < order.size(); ++i) {
      map[order[i]].src = map[order[i]].src2 = static_cast<uint32_t>(i);
      dims[i] = tensor.shape()[order[i]];
    }
    TILEPROF_ASSIGN_OR_RETURN(Tensor copy, EmitRearrange(tensor, map, nullptr, dims, name, program));
    return copy.Reshape(std::move(shape));
  }
  TILEPROF_ASSIGN_OR_RETURN(Tensor view, tensor.Dimshuffle(order));
  return view.Reshape(std::move(shape));
}

Status Lowering::EmitMatMul(const Tensor& lhs, const Tensor& rhs, const Tensor& out,
                            std::string_view name, program::Sequence& program) {
  const uint64_t batches = out.shape()[0], m = out.shape()[1], n = out.shape()[2];
  const uint64_t k = lhs.shape()[2];
  const ElementType acc_type = out.element_type();
  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet,
                            GetMatMulPartialCodelet(lhs.element_type(), acc_type));
  const uint64_t out_n = out.NumElements();
  const uint64_t chunk = mapper_.ChunkElements(out_n, acc_type);
  std::vector<Block> blocks;
  for (uint64_t b = 0; b < batches; ++b) {
    if (chunk >= n) {
      const uint64_t rows_per_block = std::max<uint64_t>(1, chunk / n);
      for (uint64_t r = 0; r < m; r += rows_per_block)
        blocks.push_back({b, r, std::min(rows_per_block, m - r), 0, n});
    } else {
      for (uint64_t r = 0; r < m; ++r)
        for (uint64_t c = 0; c < n; c += chunk) blocks.push_back({b, r, 1, c, std::min(chunk, n - c)});
    }
  }
  const uint32_t tiles = graph_.target().NumTiles();
  uint64_t p_k = 1;
  if (blocks.size() < tiles) {
    const uint64_t macs = blocks[0].rows * blocks[0].cols * k;
    p_k = std::min<uint64_t>({tiles / blocks.size(), (macs + kMinMacsPerVertex - 1) / kMinMacsPerVertex, k});
    p_k = std::max<uint64_t>(p_k, 1);
  }
  const uint32_t first_tile = mapper_.TakeTiles(std::min<uint64_t>(blocks.size() * p_k, tiles));
  auto block_tile = [&](size_t j) { return static_cast<uint32_t>((first_tile + j) % tiles); };
  for (size_t j = 0; j < blocks.size(); ++j) {
    const Block& b = blocks[j];
    TILEPROF_ASSIGN_OR_RETURN(Tensor piece, Block3(out, b.batch, b.row0, b.rows, b.col0, b.cols));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(piece, block_tile(j)));
  }
  Tensor partials;
  if (p_k > 1) {
    TILEPROF_ASSIGN_OR_RETURN(partials, NewTensor(acc_type, {p_k * batches, m, n},
                                                  fmt::format("{}.partials", name), false));
  }
  const ComputeSetId cs = AddComputeSet(name, program);
  for (size_t j = 0; j < blocks.size(); ++j) {
    const Block& b = blocks[j];
    for (uint64_t g = 0; g < p_k; ++g) {
      const uint64_t k0 = g * k / p_k;
      const uint64_t ks = (g + 1) * k / p_k - k0;
      if (ks == 0) continue;
      const uint32_t tile = static_cast<uint32_t>((block_tile(j) + g * blocks.size()) % tiles);
      Tensor target;
      if (p_k > 1) {
        TILEPROF_ASSIGN_OR_RETURN(target, Block3(partials, g * batches + b.batch, b.row0, b.rows,
                                                 b.col0, b.cols));
        TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(target, tile));
      } else {
        TILEPROF_ASSIGN_OR_RETURN(target, Block3(out, b.batch, b.row0, b.rows, b.col0, b.cols));
      }
      TILEPROF_ASSIGN_OR_RETURN(Tensor in, Block3(lhs, b.batch, b.row0, b.rows, k0, ks));
      TILEPROF_ASSIGN_OR_RETURN(Tensor weights, Block3(rhs, b.batch, k0, ks, b.col0, b.cols));
      TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(cs, *codelet, name));
      TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, tile));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["in"], in));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["weights"], weights));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["out"], target));
      TILEPROF_ASSIGN_OR_RETURN(uint32_t rows32, U32(b.rows, "rows"));
      TILEPROF_ASSIGN_OR_RETURN(uint32_t ks32, U32(ks, "contracted size"));
      TILEPROF_ASSIGN_OR_RETURN(uint32_t cols32, U32(b.cols, "columns"));
      TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValue(vertex["m"], rows32));
      TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValue(vertex["k"], ks32));
      TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValue(vertex["n"], cols32));
    }
  }
  if (p_k > 1) {
    TILEPROF_ASSIGN_OR_RETURN(const Codelet* reduce, GetReduceCodelet(ReduceOp::kAdd, acc_type, false));
    const ComputeSetId reduce_cs = AddComputeSet(fmt::format("{}/reduce", name), program);
    for (size_t j = 0; j < blocks.size(); ++j) {
      const Block& b = blocks[j];
      std::vector<Tensor> parts;
      for (uint64_t g = 0; g < p_k; ++g) {
        if ((g + 1) * k / p_k == g * k / p_k) continue;  // no partial computed
        TILEPROF_ASSIGN_OR_RETURN(Tensor part, Block3(partials, g * batches + b.batch, b.row0,
                                                      b.rows, b.col0, b.cols));
        parts.push_back(part.Flatten());
      }
      TILEPROF_ASSIGN_OR_RETURN(Tensor all, Tensor::Concat(parts));
      TILEPROF_ASSIGN_OR_RETURN(Tensor target, Block3(out, b.batch, b.row0, b.rows, b.col0, b.cols));
      TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(reduce_cs, *reduce, name));
      TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, block_tile(j)));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["partials"], all));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["out"], target.Flatten()));
    }
  }
  return {};
}

Expected<Value> Lowering::LowerDotLike(const hlo::Instruction& instruction,
                                       std::span<const Value> operands,
                                       program::Sequence& program) {
  const hlo::Shape& shape = instruction.shape();
  const bool is_conv = instruction.opcode() == hlo::Opcode::kConvolution;
  bool ok = shape.IsArray() && IsNative(shape);
  for (size_t i = 0; i < 2; ++i) {
    ok = ok && !operands[i].is_tuple && operands[i].tensor.valid() &&
         IsNative(instruction.operand(i)->shape()) &&
         operands[i].tensor.Rank() == static_cast<size_t>(instruction.operand(i)->shape().rank());
  }
  if (!ok) return LowerOpaque(instruction, operands, program);
  const Tensor& lhs = operands[0].tensor;
  const Tensor& rhs = operands[1].tensor;
  TILEPROF_ASSIGN_OR_RETURN(StorageType storage, StorageOf(shape.element_type));
  TILEPROF_ASSIGN_OR_RETURN(std::vector<uint64_t> out_dims, StorageShape(shape));
  uint64_t out_elements = 1;
  for (uint64_t d : out_dims) out_elements *= d;
  if (is_conv && out_elements > 0 && lhs.NumElements() > 0 && rhs.NumElements() > 0 &&
      lhs.element_type() == rhs.element_type() &&
      GetMatMulPartialCodelet(lhs.element_type(), storage.type).has_value()) {
    return LowerConvolution(instruction, operands, storage.type, out_dims, program);
  }
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, NewTensor(shape, instruction.name(), false));
  const bool typed = lhs.element_type() == rhs.element_type() &&
                     GetMatMulPartialCodelet(lhs.element_type(), out.element_type()).has_value();
  if (out.NumElements() == 0 || lhs.NumElements() == 0 || rhs.NumElements() == 0 || !typed) {
    TILEPROF_RETURN_IF_ERROR(mapper_.Map(out));
    if (out.NumElements() == 0) return Value::Array(out);
    if (!typed) return LowerOpaque(instruction, operands, program);
    // An empty contraction: zeros.
    TILEPROF_ASSIGN_OR_RETURN(Tensor zero, graph_.AddConstantFromDoubles(out.element_type(), {}, std::vector<double>{0.0},
                                                                        fmt::format("{}.zero", instruction.name())));
    TILEPROF_RETURN_IF_ERROR(mapper_.Map(zero));
    TILEPROF_ASSIGN_OR_RETURN(Tensor filled, Fill(zero, shape, instruction.name(), program));
    return Value::Array(filled);
  }
  if (is_conv) return LowerOpaque(instruction, operands, program);

  TILEPROF_ASSIGN_OR_RETURN(hlo::DotDimensions dims, hlo::GetDotDimensions(instruction));
  auto check = [](const std::vector<int64_t>& list, size_t rank, std::vector<bool>& used) -> Status {
    for (int64_t d : list) {
      if (d < 0 || static_cast<size_t>(d) >= rank || used[static_cast<size_t>(d)]) {
        return MakeError("dot dimension {} invalid for rank {}", d, rank);
      }
      used[static_cast<size_t>(d)] = true;
    }
    return {};
  };
  std::vector<bool> lhs_used(lhs.Rank()), rhs_used(rhs.Rank());
  TILEPROF_RETURN_IF_ERROR(check(dims.lhs_batch, lhs.Rank(), lhs_used));
  TILEPROF_RETURN_IF_ERROR(check(dims.lhs_contracting, lhs.Rank(), lhs_used));
  TILEPROF_RETURN_IF_ERROR(check(dims.rhs_batch, rhs.Rank(), rhs_used));
  TILEPROF_RETURN_IF_ERROR(check(dims.rhs_contracting, rhs.Rank(), rhs_used));
  if (dims.lhs_batch.size() != dims.rhs_batch.size() ||
      dims.lhs_contracting.size() != dims.rhs_contracting.size()) {
    return MakeError("dot dimension lists differ in length");
  }
  uint64_t batch = 1, k = 1, m = 1, n = 1;
  std::vector<size_t> lhs_order, rhs_order;
  for (size_t i = 0; i < dims.lhs_batch.size(); ++i) {
    const auto l = static_cast<size_t>(Get(dims.lhs_batch, i));
    const auto r = static_cast<size_t>(Get(dims.rhs_batch, i));
    if (lhs.shape()[l] != rhs.shape()[r]) return MakeError("dot batch dimensions differ in size");
    batch *= lhs.shape()[l];
    lhs_order.push_back(l);
    rhs_order.push_back(r);
  }
  for (size_t d = 0; d < lhs.Rank(); ++d) {
    if (!lhs_used[d]) {
      lhs_order.push_back(d);
      m *= lhs.shape()[d];
    }
  }
  for (size_t i = 0; i < dims.lhs_contracting.size(); ++i) {
    const auto l = static_cast<size_t>(Get(dims.lhs_contracting, i));
    const auto r = static_cast<size_t>(Get(dims.rhs_contracting, i));
    if (lhs.shape()[l] != rhs.shape()[r]) return MakeError("dot contracting dimensions differ in size");
    k *= lhs.shape()[l];
    lhs_order.push_back(l);
    rhs_order.push_back(r);
  }
  for (size_t d = 0; d < rhs.Rank(); ++d) {
    if (!rhs_used[d]) {
      rhs_order.push_back(d);
      n *= rhs.shape()[d];
    }
  }
  if (batch * m * n != out.NumElements()) return MakeError("dot output has the wrong size");
  TILEPROF_ASSIGN_OR_RETURN(Tensor lhs3, Canonical(lhs, lhs_order, {batch, m, k},
                                                   fmt::format("{}/lhs", instruction.name()), program));
  TILEPROF_ASSIGN_OR_RETURN(Tensor rhs3, Canonical(rhs, rhs_order, {batch, k, n},
                                                   fmt::format("{}/rhs", instruction.name()), program));
  TILEPROF_ASSIGN_OR_RETURN(Tensor out3, out.Reshape({batch, m, n}));
  TILEPROF_RETURN_IF_ERROR(EmitMatMul(lhs3, rhs3, out3, instruction.name(), program));
  return Value::Array(out);
}

Expected<Value> Lowering::LowerConvolution(const hlo::Instruction& instruction,
                                           std::span<const Value> operands,
                                           ElementType out_type,
                                           const std::vector<uint64_t>& out_dims,
                                           program::Sequence& program) {
  const Tensor& input = operands[0].tensor;
  // Only the dimensions of the result are read here; the result itself is
  // the matmul output below.
  const Tensor out = Tensor::OfVariable(0, out_type, out_dims);
  const Tensor& kernel = operands[1].tensor;
  const hlo::Attribute* labels = instruction.FindAttribute("dim_labels");
  if (labels == nullptr) return MakeError("convolution without dim_labels");
  TILEPROF_ASSIGN_OR_RETURN(hlo::ConvolutionDimensions cd, hlo::ParseDimLabels(labels->value()));
  TILEPROF_ASSIGN_OR_RETURN(std::optional<int64_t> groups_attr,
                            IntAttribute(instruction, "feature_group_count"));
  TILEPROF_ASSIGN_OR_RETURN(std::optional<int64_t> batch_groups_attr,
                            IntAttribute(instruction, "batch_group_count"));
  const int64_t groups = groups_attr.value_or(1), batch_groups = batch_groups_attr.value_or(1);
  const size_t spatial = cd.input_spatial.size();
  std::vector<hlo::WindowDimension> window(spatial);
  if (const hlo::Attribute* a = instruction.FindAttribute("window")) {
    TILEPROF_ASSIGN_OR_RETURN(window, hlo::ParseWindow(a->value()));
  }
  const size_t rank = spatial + 2;
  auto in_range = [&](int64_t d) { return d >= 0 && static_cast<size_t>(d) < rank; };
  bool ok = batch_groups == 1 && groups >= 1 && window.size() == spatial && input.Rank() == rank &&
            kernel.Rank() == rank && out.Rank() == rank && in_range(cd.input_batch) &&
            in_range(cd.input_feature) && in_range(cd.kernel_input_feature) &&
            in_range(cd.kernel_output_feature) && in_range(cd.output_batch) &&
            in_range(cd.output_feature);
  for (size_t s = 0; ok && s < spatial; ++s) {
    ok = in_range(cd.input_spatial[s]) && in_range(cd.kernel_spatial[s]) &&
         in_range(cd.output_spatial[s]) && window[s].stride >= 1 && window[s].base_dilation >= 1 &&
         window[s].window_dilation >= 1;
  }
  // Only the TensorFlow/JAX default layouts (b01f, 01io, b01f) for now:
  // other layouts need per-element views of huge tensors to be built first
  // (mobilenet's NCHW convolutions took gigabytes), which is future work.
  ok = ok && cd.input_batch == 0 && cd.input_feature == static_cast<int64_t>(rank - 1) &&
       cd.output_batch == 0 && cd.output_feature == static_cast<int64_t>(rank - 1) &&
       cd.kernel_input_feature == static_cast<int64_t>(rank - 2) &&
       cd.kernel_output_feature == static_cast<int64_t>(rank - 1);
  for (size_t s = 0; ok && s < spatial; ++s) {
    ok = cd.input_spatial[s] == static_cast<int64_t>(1 + s) &&
         cd.output_spatial[s] == static_cast<int64_t>(1 + s) &&
         cd.kernel_spatial[s] == static_cast<int64_t>(s);
  }
  if (!ok) return LowerOpaque(instruction, operands, program);
  auto dim = [](const Tensor& t, int64_t d) { return t.shape()[static_cast<size_t>(d)]; };
  const uint64_t g = static_cast<uint64_t>(groups);
  const uint64_t batch = dim(input, cd.input_batch);
  const uint64_t cin = dim(input, cd.input_feature);
  const uint64_t cout = dim(kernel, cd.kernel_output_feature);
  if (cin % g != 0 || cout % g != 0 || dim(kernel, cd.kernel_input_feature) * g != cin ||
      dim(out, cd.output_feature) != cout || dim(out, cd.output_batch) != batch) {
    return MakeError("convolution feature sizes do not agree with feature_group_count={}", g);
  }
  uint64_t positions = 1, taps = 1;
  std::vector<uint64_t> out_spatial(spatial), win(spatial);
  bool trivial = true;
  for (size_t s = 0; s < spatial; ++s) {
    out_spatial[s] = dim(out, cd.output_spatial[s]);
    win[s] = dim(kernel, cd.kernel_spatial[s]);
    positions *= out_spatial[s];
    taps *= win[s];
    const hlo::WindowDimension& w = window[s];
    trivial = trivial && win[s] == 1 && w.stride == 1 && w.padding_low == 0 &&
              w.padding_high == 0 && w.base_dilation == 1 && w.window_dilation == 1 &&
              out_spatial[s] == dim(input, cd.input_spatial[s]);
  }
  const uint64_t cg = cin / g, ng = cout / g, rows = batch * positions, kg = taps * cg;
  const std::string name(instruction.name());
  // Patches [G, batch, out positions..., window..., cg].
  std::vector<uint64_t> patch_dims = {g, batch};
  patch_dims.insert(patch_dims.end(), out_spatial.begin(), out_spatial.end());
  patch_dims.insert(patch_dims.end(), win.begin(), win.end());
  patch_dims.push_back(cg);
  uint64_t patch_elements = 1;
  for (uint64_t d : patch_dims) patch_elements *= d;
  // Patches beyond this are more memory than a real convolution would ever
  // take (Poplar never materialises them): such convolutions stay opaque.
  // Grouped convolutions (depthwise ones have G = C) are exact in this
  // scheme but need a view of G-interleaved results per element, which on
  // real models (mobilenet) costs gigabytes of host memory to build: opaque
  // until a grouped convolution codelet exists.
  if (g > 1 || (!trivial && patch_elements > kMaxPatchElements)) {
    return LowerOpaque(instruction, operands, program);
  }
  Tensor lhs3;
  if (trivial && g == 1) {
    std::vector<size_t> order = {static_cast<size_t>(cd.input_batch)};
    for (size_t s = 0; s < spatial; ++s) order.push_back(static_cast<size_t>(cd.input_spatial[s]));
    order.push_back(static_cast<size_t>(cd.input_feature));
    TILEPROF_ASSIGN_OR_RETURN(lhs3, Canonical(input, order, {1, rows, kg}, name + "/patches", program));
  } else {
    std::vector<SourceDim> map(rank);
    const uint32_t feature_dim = static_cast<uint32_t>(patch_dims.size() - 1);
    map[static_cast<size_t>(cd.input_batch)].src = map[static_cast<size_t>(cd.input_batch)].src2 = 1;
    SourceDim& f = map[static_cast<size_t>(cd.input_feature)];
    f.src = 0;
    f.mul = static_cast<int64_t>(cg);
    f.src2 = feature_dim;
    f.mul2 = 1;
    for (size_t s = 0; s < spatial; ++s) {
      const hlo::WindowDimension& w = window[s];
      SourceDim& d = map[static_cast<size_t>(cd.input_spatial[s])];
      d.src = static_cast<uint32_t>(2 + s);
      d.mul = w.stride;
      d.src2 = static_cast<uint32_t>(2 + spatial + s);
      d.mul2 = w.window_reversal ? -w.window_dilation : w.window_dilation;
      d.add = -w.padding_low +
              (w.window_reversal ? static_cast<int64_t>(win[s] - 1) * w.window_dilation : 0);
      d.div = static_cast<uint64_t>(w.base_dilation);
    }
    TILEPROF_ASSIGN_OR_RETURN(Tensor zero, graph_.AddConstantFromDoubles(input.element_type(), {}, std::vector<double>{0.0},
                                                                        name + ".zero"));
    TILEPROF_RETURN_IF_ERROR(mapper_.Map(zero));
    TILEPROF_ASSIGN_OR_RETURN(Tensor patches, EmitRearrange(input, map, &zero, patch_dims,
                                                            name + "/patches", program));
    TILEPROF_ASSIGN_OR_RETURN(lhs3, patches.Reshape({g, rows, kg}));
  }
  // Kernel [G, window x cg, ng]: kernel output feature o = gi * ng + j.
  std::vector<size_t> korder;
  for (size_t s = 0; s < spatial; ++s) korder.push_back(static_cast<size_t>(cd.kernel_spatial[s]));
  korder.push_back(static_cast<size_t>(cd.kernel_input_feature));
  korder.push_back(static_cast<size_t>(cd.kernel_output_feature));
  TILEPROF_ASSIGN_OR_RETURN(Tensor kview, kernel.Dimshuffle(korder));
  TILEPROF_ASSIGN_OR_RETURN(kview, kview.Reshape({kg, g, ng}));
  const size_t kperm[] = {1, 0, 2};
  TILEPROF_ASSIGN_OR_RETURN(Tensor rhs3, kview.Dimshuffle(kperm));
  if (rhs3.regions().size() > kMaxOperandRegions) {
    std::vector<SourceDim> map(3);
    map[0].src = map[0].src2 = 1;
    map[1].src = map[1].src2 = 0;
    map[2].src = map[2].src2 = 2;
    TILEPROF_ASSIGN_OR_RETURN(rhs3, EmitRearrange(kview, map, nullptr, {g, kg, ng},
                                                  name + "/weights", program));
  }
  // Result [G, rows, ng], viewed as the HLO output.
  TILEPROF_ASSIGN_OR_RETURN(Tensor result, NewTensor(out.element_type(), {g, rows, ng}, name, false));
  TILEPROF_RETURN_IF_ERROR(EmitMatMul(lhs3, rhs3, result, name, program));
  // [G, batch, positions..., ng] -> [batch, positions..., G, ng] -> [batch, positions..., cout]
  std::vector<uint64_t> grouped = {g, batch};
  grouped.insert(grouped.end(), out_spatial.begin(), out_spatial.end());
  grouped.push_back(ng);
  TILEPROF_ASSIGN_OR_RETURN(Tensor view, result.Reshape(grouped));
  std::vector<size_t> to_canonical = {1};
  for (size_t s = 0; s < spatial; ++s) to_canonical.push_back(2 + s);
  to_canonical.push_back(0);
  to_canonical.push_back(2 + spatial);
  TILEPROF_ASSIGN_OR_RETURN(view, view.Dimshuffle(to_canonical));
  std::vector<uint64_t> canonical_dims = {batch};
  canonical_dims.insert(canonical_dims.end(), out_spatial.begin(), out_spatial.end());
  canonical_dims.push_back(cout);
  TILEPROF_ASSIGN_OR_RETURN(view, view.Reshape(canonical_dims));
  // Canonical dimension of each output dimension.
  std::vector<size_t> to_output(rank);
  to_output[static_cast<size_t>(cd.output_batch)] = 0;
  for (size_t s = 0; s < spatial; ++s) to_output[static_cast<size_t>(cd.output_spatial[s])] = 1 + s;
  to_output[static_cast<size_t>(cd.output_feature)] = rank - 1;
  if (EstimatedRuns(view.shape(), to_output) > kMaxOperandRegions) {
    // Rearranged without building the (per-element) view first.
    std::vector<SourceDim> map(rank);
    std::vector<uint64_t> final_dims(rank);
    for (size_t i = 0; i < rank; ++i) {
      map[to_output[i]].src = map[to_output[i]].src2 = static_cast<uint32_t>(i);
      final_dims[i] = view.shape()[to_output[i]];
    }
    TILEPROF_ASSIGN_OR_RETURN(Tensor copy, EmitRearrange(view, map, nullptr, final_dims,
                                                         name + "/result", program));
    return Value::Array(copy);
  }
  TILEPROF_ASSIGN_OR_RETURN(Tensor final_view, view.Dimshuffle(to_output));
  return Value::Array(final_view);
}

}  // namespace tileprof::engine::compiler
