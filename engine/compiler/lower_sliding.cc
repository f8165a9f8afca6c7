// reduce-window with a long window along one dimension, as a sliding
// reduction by doubling rather than a patches tensor.
//
// A cumulative sum or product in JAX (jnp.cumsum, lax.associative_scan on
// CPU/GPU) is a reduce-window of size n over n elements padded by n - 1:
// its patches tensor holds n^2 elements (46,592 wide: 8.7 GB for 186 KB of
// input). Here, with the padded operand e (the padding is the init value)
// and W_k[i] = e[i] op ... op e[i + k - 1]:
//   W_2k[i] = W_k[i] op W_k[i + k]            (one elementwise op a level)
// and the window of size s = sum of its bits 2^b is the combination of the
// W_2^b at the offsets the lower bits already cover. That is
// floor(log2 s) doublings and popcount(s) - 1 combinations, each a
// popops binary op over at most |e| elements reading a shifted view of a
// tensor mapped linearly (the shift crosses few tiles), every temporary
// dead after the next level. The reduction order differs from a patches
// reduce's only by associativity, as XLA leaves it unspecified.
//
// Taken when the window slides along exactly one dimension (stride 1, no
// dilation, no reversal, non-negative padding; the other dimensions of
// size 1 without padding) and the ops' elements, (ops + 1) x |e|, are fewer
// than the patches' s x |output|. As in the patches plan, an init that is
// not the operation's identity is combined once more into every output.
#include <bit>
#include <optional>

#include <fmt/format.h>

#include "engine/compiler/lower.h"
#include "engine/compiler/types.h"

namespace tileprof::engine::compiler {
namespace {

// The dimension the window slides along, when the window is of the form
// above.
std::optional<size_t> SlidingDimension(std::span<const hlo::WindowDimension> window) {
  std::optional<size_t> found;
  for (size_t j = 0; j < window.size(); ++j) {
    const hlo::WindowDimension& w = window[j];
    if (w.stride != 1 || w.base_dilation != 1 || w.window_dilation != 1 || w.window_reversal ||
        w.padding_low < 0 || w.padding_high < 0) {
      return std::nullopt;
    }
    if (w.size == 1) {
      if (w.padding_low != 0 || w.padding_high != 0) return std::nullopt;
      continue;
    }
    if (found || w.size < 1) return std::nullopt;
    found = j;
  }
  return found;
}

BinaryOp CombinerOf(ReduceOp op) {
  switch (op) {
    case ReduceOp::kAdd:
      return BinaryOp::kAdd;
    case ReduceOp::kMul:
      return BinaryOp::kMultiply;
    case ReduceOp::kMax:
      return BinaryOp::kMaximum;
    case ReduceOp::kMin:
      return BinaryOp::kMinimum;
    case ReduceOp::kAnd:
      return BinaryOp::kBitwiseAnd;
    case ReduceOp::kOr:
      return BinaryOp::kBitwiseOr;
  }
  return BinaryOp::kAdd;
}

// Whether the ops' elements, (ops + 1) x |padded|, are fewer than the
// patches' size x |output| (false for an empty output).
bool SlidingIsCheaper(std::span<const uint64_t> padded, std::span<const uint64_t> out_dims, int ops,
                      uint64_t size) {
  double padded_n = 1, out_n = 1;
  for (size_t j = 0; j < padded.size(); ++j) {
    padded_n *= static_cast<double>(padded[j]);
    out_n *= static_cast<double>(out_dims[j]);
  }
  return !(out_n == 0 || (ops + 1) * padded_n >= static_cast<double>(size) * out_n);
}

// The operand `in` padded to `padded` along d, pad_low before, by the init
// value (a Rearrange); `in` itself when nothing is padded.
Expected<Tensor> PaddedOperand(Lowering& lowering, const hlo::Instruction& instruction,
                               const Tensor& in, const Tensor& init,
                               const std::vector<uint64_t>& padded, size_t d, uint64_t pad_low,
                               program::Sequence& program) {
  if (padded == in.shape()) return in;
  std::vector<SourceDim> map(padded.size());
  for (size_t j = 0; j < padded.size(); ++j) {
    map[j] = SourceDim{static_cast<uint32_t>(j),
                       static_cast<uint32_t>(j),
                       1,
                       0,
                       j == d ? -static_cast<int64_t>(pad_low) : 0,
                       1};
  }
  return lowering.EmitRearrange(in, map, &init, padded,
                                fmt::format("{}/padded", instruction.name()), program);
}

// The plan's elementwise ops, made in order: the `ops`-th is the
// instruction's result.
class SlidingOps {
 public:
  SlidingOps(Lowering& lowering, const hlo::Instruction& instruction, const Codelet& codelet,
             ElementType type, const std::vector<uint64_t>& padded, size_t d, int ops,
             program::Sequence& program)
      : lowering_(lowering),
        instruction_(instruction),
        codelet_(codelet),
        type_(type),
        padded_(padded),
        d_(d),
        ops_(ops),
        program_(program) {}

  // out[i] = a[a_at + i] op b[b_at + i] along d, for `length` positions; the
  // last op is the instruction's result.
  Expected<Tensor> Combine(const Tensor& a, uint64_t a_at, const Tensor& b, uint64_t b_at,
                           uint64_t length, std::string_view what) {
    std::vector<uint64_t> shape = padded_;
    shape[d_] = length;
    const bool last = ++done_ == ops_;
    const std::string name =
        last ? std::string(instruction_.name()) : fmt::format("{}/{}", instruction_.name(), what);
    TILEPROF_ASSIGN_OR_RETURN(Tensor out, lowering_.NewTensor(type_, shape, name, true));
    TILEPROF_ASSIGN_OR_RETURN(const Tensor x, a.Slice(a_at, a_at + length, d_));
    TILEPROF_ASSIGN_OR_RETURN(const Tensor y, b.Slice(b_at, b_at + length, d_));
    const ComputeSetId cs = lowering_.AddComputeSet(name, program_);
    const FieldInput inputs[] = {{"in1", x, Access::kSame}, {"in2", y, Access::kSame}};
    TILEPROF_RETURN_IF_ERROR(
        lowering_.EmitPerTile(cs, codelet_, "out", out, inputs, instruction_.name()));
    return out;
  }

  // The window of `size` (`levels` = floor(log2 size) doublings) over `e`,
  // the padded operand: W_size[i] for every i it fits.
  Expected<Tensor> Window(const Tensor& e, uint64_t size, int levels) {
    // cur[i] covers e[i, i + width); acc[i] covers e[i, i + covered).
    Tensor cur = e;
    uint64_t width = 1;
    std::optional<Tensor> acc;
    uint64_t covered = 0;
    for (int bit = 0; bit <= levels; ++bit) {
      if ((size >> bit) & 1) {
        if (!acc) {
          acc = cur;
        } else {
          TILEPROF_ASSIGN_OR_RETURN(
              acc, Combine(*acc, 0, cur, covered, padded_[d_] - covered - width + 1,
                           fmt::format("window{}", covered + width)));
        }
        covered += width;
      }
      if (bit < levels) {
        TILEPROF_ASSIGN_OR_RETURN(cur, Combine(cur, 0, cur, width, padded_[d_] - 2 * width + 1,
                                               fmt::format("doubled{}", 2 * width)));
        width *= 2;
      }
    }
    return *acc;
  }

 private:
  Lowering& lowering_;
  const hlo::Instruction& instruction_;
  const Codelet& codelet_;
  const ElementType type_;
  const std::vector<uint64_t>& padded_;  // the padded operand's dimensions
  const size_t d_;                       // the dimension the window slides along
  const int ops_;
  program::Sequence& program_;
  int done_ = 0;
};

}  // namespace

Expected<std::optional<Value>> Lowering::LowerSlidingWindow(
    const hlo::Instruction& instruction, std::span<const Value> operands,
    std::span<const hlo::WindowDimension> window, std::span<const uint64_t> out_dims,
    program::Sequence& program) {
  const std::optional<size_t> found = SlidingDimension(window);
  const std::optional<ReduceOp> reduce = ReduceOpOf(*instruction.called_computations()[0]);
  const Tensor& in = operands[0].tensor;
  if (!found || !reduce || !Supports(CombinerOf(*reduce), in.element_type()))
    return std::optional<Value>();
  const size_t d = *found;
  const auto size = static_cast<uint64_t>(window[d].size);
  const auto pad_low = static_cast<uint64_t>(window[d].padding_low);
  std::vector<uint64_t> padded = in.shape();
  padded[d] += pad_low + static_cast<uint64_t>(window[d].padding_high);
  if (padded[d] < size || padded[d] - size + 1 != out_dims[d]) {
    return MakeError("window of {} over {} padded elements gives {}, the result has {}", size,
                     padded[d], padded[d] < size ? 0 : padded[d] - size + 1, out_dims[d]);
  }
  const bool identity = IsReduceIdentity(*instruction.operand(1), *reduce);
  const int levels = std::bit_width(size) - 1;
  const int ops = levels + std::popcount(size) - 1 + (identity ? 0 : 1);
  if (!SlidingIsCheaper(padded, out_dims, ops, size)) return std::optional<Value>();

  TILEPROF_ASSIGN_OR_RETURN(const Codelet* codelet,
                            GetBinaryOpCodelet(CombinerOf(*reduce), in.element_type()));
  TILEPROF_ASSIGN_OR_RETURN(
      const Tensor e,
      PaddedOperand(*this, instruction, in, operands[1].tensor, padded, d, pad_low, program));
  SlidingOps plan(*this, instruction, *codelet, in.element_type(), padded, d, ops, program);
  TILEPROF_ASSIGN_OR_RETURN(Tensor acc, plan.Window(e, size, levels));
  if (!identity) {
    const hlo::Shape shape = ComputedShape(instruction);
    TILEPROF_ASSIGN_OR_RETURN(
        const Tensor init,
        Fill(operands[1].tensor, shape, fmt::format("{}/init", instruction.name()), program));
    TILEPROF_ASSIGN_OR_RETURN(acc, plan.Combine(acc, 0, init, 0, out_dims[d], "init"));
  }
  return std::optional<Value>(Value::Array(acc));
}

}  // namespace tileprof::engine::compiler
