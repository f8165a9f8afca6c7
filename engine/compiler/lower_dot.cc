// Dot and convolution: both are planned as a matrix product of
// rows x K times K x N, where rows are the output's non-feature positions
// (batch x M for a dot; batch x output pixels for a convolution), N the
// output features and K the contracted elements per output (input features
// per group x kernel window for a convolution).
//
// Plan: the flattened output is cut into blocks of whole rows (or pieces of
// one row when a row is larger than a tile's share), one block per tile,
// consecutive tiles. When tiles are left over and a block has enough work,
// K is split too: each of P_k tiles computes partial sums over K/P_k into a
// partials tensor, and a reduction (popops::Reduce, ReduceAdd) on the
// block's tile adds them up: poplin's "partials + reduction" structure.
//
// Volumes are exact (a block of r rows and c columns over a K slice of ks
// reads r x ks input and ks x c weight elements); which elements those are
// is approximated by the same fraction of each operand (Access
// kProportional), as the layout of the operands' dimensions is not
// rearranged. Convolutions whose output feature dimension is not innermost
// are blocked on the flattened output all the same.
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

struct Block {
  uint64_t row0 = 0;
  uint64_t rows = 0;
  uint64_t col0 = 0;
  uint64_t cols = 0;
};

Expected<Tensor> Range(const Tensor& tensor, uint64_t start, uint64_t count) {
  const uint64_t n = tensor.NumElements();
  count = std::min(count, n);
  start = std::min(start, n - count);
  return tensor.Flatten().Slice(start, start + count);
}

Expected<uint32_t> U32(uint64_t value, std::string_view what) {
  if (value > UINT32_MAX) return MakeError("{} {} does not fit a vertex parameter", what, value);
  return static_cast<uint32_t>(value);
}

}  // namespace

Expected<Value> Lowering::LowerDotLike(const hlo::Instruction& instruction,
                                       std::span<const Value> operands,
                                       program::Sequence& program) {
  const hlo::Shape& shape = instruction.shape();
  const bool is_conv = instruction.opcode() == hlo::Opcode::kConvolution;
  bool ok = shape.IsArray() && IsNative(shape);
  for (size_t i = 0; i < 2; ++i) {
    ok = ok && !operands[i].is_tuple && operands[i].tensor.valid() &&
         IsNative(instruction.operand(i)->shape());
  }
  if (!ok) return LowerOpaque(instruction, operands, program);
  const Tensor& lhs = operands[0].tensor;
  const Tensor& rhs = operands[1].tensor;
  const auto out_n = static_cast<uint64_t>(shape.ElementCount().value_or(0));
  uint64_t batch = 1;
  uint64_t k = 1;
  uint64_t n = 1;
  if (is_conv) {
    const hlo::Attribute* labels = instruction.FindAttribute("dim_labels");
    if (labels == nullptr) return LowerOpaque(instruction, operands, program);
    TILEPROF_ASSIGN_OR_RETURN(hlo::ConvolutionDimensions dims, hlo::ParseDimLabels(labels->value()));
    if (dims.output_feature < 0 || dims.output_feature >= shape.rank()) {
      return MakeError("dim_labels output feature {} outside rank {}", dims.output_feature, shape.rank());
    }
    n = static_cast<uint64_t>(shape.dimensions[static_cast<size_t>(dims.output_feature)]);
    k = n == 0 ? 0 : rhs.NumElements() / n;
  } else {
    TILEPROF_ASSIGN_OR_RETURN(hlo::DotDimensions dims, hlo::GetDotDimensions(instruction));
    const hlo::Shape& lhs_shape = instruction.operand(0)->shape();
    for (int64_t d : dims.lhs_batch) {
      if (d < 0 || d >= lhs_shape.rank()) return MakeError("lhs batch dimension {} out of range", d);
      batch *= static_cast<uint64_t>(lhs_shape.dimensions[static_cast<size_t>(d)]);
    }
    for (int64_t d : dims.lhs_contracting) {
      if (d < 0 || d >= lhs_shape.rank()) return MakeError("lhs contracting dimension {} out of range", d);
      k *= static_cast<uint64_t>(lhs_shape.dimensions[static_cast<size_t>(d)]);
    }
    n = batch * k == 0 ? 0 : rhs.NumElements() / (batch * k);
  }
  TILEPROF_ASSIGN_OR_RETURN(Tensor out, NewTensor(shape, instruction.name(), false));
  if (out_n == 0 || k == 0 || n == 0 || lhs.NumElements() == 0 || out_n % n != 0 ||
      lhs.element_type() != rhs.element_type()) {
    TILEPROF_RETURN_IF_ERROR(mapper_.Map(out));
    if (out_n == 0) return Value::Array(out);
    return LowerOpaque(instruction, operands, program);
  }
  const uint64_t rows = out_n / n;
  const uint64_t rows_per_batch = std::max<uint64_t>(1, rows / batch);
  const ElementType in_type = lhs.element_type();
  const ElementType acc_type = out.element_type();
  Expected<const Codelet*> conv = is_conv ? GetConvPartial1x1OutCodelet(in_type, acc_type)
                                          : Expected<const Codelet*>(Error("dot"));
  Expected<const Codelet*> matmul = GetMatMulPartialCodelet(in_type, acc_type);
  if (!conv && !matmul) {
    TILEPROF_RETURN_IF_ERROR(mapper_.Map(out));
    return LowerOpaque(instruction, operands, program);
  }
  const bool use_conv = conv.has_value();
  const Codelet& partial_codelet = use_conv ? **conv : **matmul;

  // Blocks of the [rows, n] output.
  const uint64_t chunk = mapper_.ChunkElements(out_n, out.element_type());
  std::vector<Block> blocks;
  if (chunk >= n) {
    const uint64_t rows_per_block = chunk / n;
    for (uint64_t r = 0; r < rows; r += rows_per_block)
      blocks.push_back({r, std::min(rows_per_block, rows - r), 0, n});
  } else {
    for (uint64_t r = 0; r < rows; ++r)
      for (uint64_t c = 0; c < n; c += chunk) blocks.push_back({r, 1, c, std::min(chunk, n - c)});
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
  const Tensor flat_out = out.Flatten();
  for (size_t j = 0; j < blocks.size(); ++j) {
    const Block& b = blocks[j];
    TILEPROF_ASSIGN_OR_RETURN(Tensor piece, flat_out.Slice(b.row0 * n + b.col0,
                                                           b.row0 * n + b.col0 + b.rows * b.cols));
    TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(piece, block_tile(j)));
  }
  Tensor partials;
  if (p_k > 1) {
    TILEPROF_ASSIGN_OR_RETURN(partials, NewTensor(acc_type, {p_k, out_n},
                                                  fmt::format("{}.partials", instruction.name()), false));
  }
  const ComputeSetId cs = AddComputeSet(instruction.name(), program);
  for (size_t j = 0; j < blocks.size(); ++j) {
    const Block& b = blocks[j];
    const uint64_t position = b.row0 * n + b.col0;
    const uint64_t count = b.rows * b.cols;
    const uint64_t batch_index = b.row0 / rows_per_batch;
    for (uint64_t g = 0; g < p_k; ++g) {
      const uint64_t k0 = g * k / p_k;
      const uint64_t ks = (g + 1) * k / p_k - k0;
      if (ks == 0) continue;
      const uint32_t tile = static_cast<uint32_t>((block_tile(j) + g * blocks.size()) % tiles);
      Tensor target;
      if (p_k > 1) {
        TILEPROF_ASSIGN_OR_RETURN(target, partials.Flatten().Slice(g * out_n + position,
                                                                    g * out_n + position + count));
        TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(target, tile));
      } else {
        TILEPROF_ASSIGN_OR_RETURN(target, flat_out.Slice(position, position + count));
      }
      TILEPROF_ASSIGN_OR_RETURN(Tensor in, Range(lhs, b.row0 * k + k0, b.rows * ks));
      TILEPROF_ASSIGN_OR_RETURN(
          Tensor weights, Range(rhs, batch_index * k * n + k0 * n + b.col0 * ks, ks * b.cols));
      TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(cs, partial_codelet, instruction.name()));
      TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, tile));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["in"], in));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["weights"], weights));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["out"], target));
      TILEPROF_ASSIGN_OR_RETURN(uint32_t ks32, U32(ks, "contracted size"));
      TILEPROF_ASSIGN_OR_RETURN(uint32_t cols32, U32(b.cols, "columns"));
      if (use_conv) {
        TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValue(vertex["inChans"], ks32));
        TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValue(vertex["outChans"], cols32));
      } else {
        TILEPROF_ASSIGN_OR_RETURN(uint32_t rows32, U32(b.rows, "rows"));
        TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValue(vertex["m"], rows32));
        TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValue(vertex["k"], ks32));
        TILEPROF_RETURN_IF_ERROR(graph_.SetInitialValue(vertex["n"], cols32));
      }
    }
  }
  if (p_k > 1) {
    TILEPROF_ASSIGN_OR_RETURN(const Codelet* reduce, GetReduceCodelet(ReduceOp::kAdd, acc_type, false));
    const ComputeSetId reduce_cs = AddComputeSet(fmt::format("{}/reduce", instruction.name()), program);
    const Tensor flat_partials = partials.Flatten();
    for (size_t j = 0; j < blocks.size(); ++j) {
      const Block& b = blocks[j];
      const uint64_t position = b.row0 * n + b.col0;
      const uint64_t count = b.rows * b.cols;
      std::vector<Tensor> parts;
      for (uint64_t g = 0; g < p_k; ++g) {
        TILEPROF_ASSIGN_OR_RETURN(Tensor part, flat_partials.Slice(g * out_n + position,
                                                                   g * out_n + position + count));
        parts.push_back(std::move(part));
      }
      TILEPROF_ASSIGN_OR_RETURN(Tensor all, Tensor::Concat(parts));
      TILEPROF_ASSIGN_OR_RETURN(Tensor target, flat_out.Slice(position, position + count));
      TILEPROF_ASSIGN_OR_RETURN(VertexRef vertex, graph_.AddVertex(reduce_cs, *reduce, instruction.name()));
      TILEPROF_RETURN_IF_ERROR(graph_.SetTileMapping(vertex, block_tile(j)));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["partials"], all));
      TILEPROF_RETURN_IF_ERROR(graph_.Connect(vertex["out"], target));
    }
  }
  return Value::Array(out);
}

}  // namespace tileprof::engine::compiler
