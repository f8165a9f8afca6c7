// Matrix-multiply partials:
//   poplin::MatMulPartial<In,Acc>   out[m x n] = in[m x k] . weights[k x n]
//     worker vertex on the vector unit; parameters m, k, n.
//   poplin::MatMulPartialTransposed<In,Acc,TIn,TWeights>   the same with in
//     stored [k x m] (TIn) and/or weights stored [n x k] (TWeights).
//   poplin::ConvPartial1x1Out<In,Acc,true,false>
//     out[p][co] += sum over ci of in[p][ci] * weights[co][ci]
//     supervisor vertex on the AMP unit; parameters inChans, outChans; the
//     pixel count is |in| / inChans. It accumulates into `out` (partial sums
//     over input-channel groups), as a 1x1 convolution is a matmul.
// All matrices are row-major. Each element read is converted to Acc (an
// integer widened by sign or zero extension, as XLA's convert does), then
// products and sums run in Acc's compute type: f32 for f16/bf16
// accumulators, which round once on store (half x half products are exact
// in f32); two's complement with wrap-around for integers. The pairs are
// kDotPairs (dot_kernels.h).
#include <algorithm>

#include "engine/codelets/codelets.h"
#include "engine/codelets/cost_model.h"
#include "engine/codelets/dot_kernels.h"
#include "engine/codelets/families.h"
#include "engine/codelets/numeric.h"
#include "engine/codelets/widen.h"

namespace tileprof::engine {
namespace {

using dot::DispatchPair;
using numeric::Get;
using numeric::Put;

class MatMulPartialCodelet final : public Codelet {
 public:
  // The transposed variants read `in` as [k x m] and/or `weights` as
  // [n x k], so that a dot contracting the other dimension of an operand
  // (x^T.g, g.W^T) reads it in place.
  MatMulPartialCodelet(ElementType in, ElementType acc, bool transpose_in, bool transpose_weights)
      : Codelet(transpose_in || transpose_weights
                    ? MatMulPartialTransposedCodeletName(in, acc, transpose_in, transpose_weights)
                    : MatMulPartialCodeletName(in, acc),
                ExecutionKind::kWorker, {In("in", in), In("weights", in), Out("out", acc)},
                {"m", "k", "n"}, cost::kMatMulCodeBytes),
        in_(in),
        acc_(acc),
        transpose_in_(transpose_in),
        transpose_weights_(transpose_weights) {}

  Status CheckShape(const VertexShape& shape) const override {
    const uint64_t m = shape.params[0], k = shape.params[1], n = shape.params[2];
    const uint64_t expected[] = {m * k, k * n, m * n};
    const char* formula[] = {"m*k", "k*n", "m*n"};
    for (size_t i = 0; i < 3; ++i) {
      if (shape.field_elements[i] != expected[i]) {
        return MakeError("field '{}' has {} elements, expected {} = {} (m={}, k={}, n={})",
                         fields()[i].name, shape.field_elements[i], formula[i], expected[i], m, k,
                         n);
      }
    }
    return {};
  }

  // kWorkerOverhead + m*n * (kDotPerOutputCycles
  //                          + ceil(k / width(In)) * (2 loads + 1 MAC)).
  // The figures are those of In's vector arithmetic, as for f32 and f16
  // (cost_model.h): the IPU has no bf16 or integer matmul, so bf16 is widened
  // to f32 one element at a time (width 1, plus kBf16ConvertCycles, as every
  // bf16 op) and an integer MAC is one ALU op per element (width 1, like
  // s32). bf16 is not costed as f16 on purpose: Target::VectorWidth and
  // AmpMacsPerCycle also feed the contraction planner, and giving bf16 f16's
  // figures there would change the plans of existing bf16 -> f32 dots.
  uint64_t EstimateCycles(const VertexShape& shape, const Target& target) const override {
    const uint64_t m = shape.params[0], k = shape.params[1], n = shape.params[2];
    const uint64_t per_output =
        cost::kDotPerOutputCycles + cost::CeilDiv(k, cost::Width(target, in_)) *
                                        cost::CyclesPerVector(cost::OpClass::kSimple, in_, 2, 0);
    return cost::kWorkerOverhead + m * n * per_output;
  }

 protected:
  // An untransposed operand may be given as rows (its rows in a larger
  // tensor, each row of the operand one run): the panel product reads them
  // in place.
  bool ReadsRows(size_t field) const override {
    return (field == 0 && !transpose_in_) || (field == 1 && !transpose_weights_);
  }

  Status Compute(const VertexIo& io) const override {
    const uint64_t m = io.params[0], k = io.params[1], n = io.params[2];
    return DispatchPair(in_, acc_, [&](auto in_tag, auto acc_tag) -> Status {
      constexpr ElementType kIn = decltype(in_tag)::value;
      constexpr ElementType kAcc = decltype(acc_tag)::value;
      using C = typename numeric::Traits<kAcc>::Compute;
      // weights as a [k x n] panel of C (in place when they are stored so),
      // then one panel product per row.
      // Operands stored as another type (f16 into f32) are converted a
      // field at a time (widen.h: F16C for f16), then read as C: converting
      // element by element was most of an f16 matmul's time.
      uint64_t panel_stride = n;
      const C* panel =
          transpose_weights_ ? nullptr : InPlaceRows<kIn, C>(io, 1, k, n, panel_stride);
      if (panel == nullptr) {
        const std::span<const std::byte> weights = DenseField(io, 1);
        const C* widened = numeric::WidenField<kIn, C, 3>(weights);
        if (widened == nullptr || transpose_weights_) {
          C* packed = numeric::Scratch<C, 0>(k * n);
          for (uint64_t t = 0; t < k; ++t)
            for (uint64_t col = 0; col < n; ++col)
              packed[t * n + col] = numeric::ElementAs<kIn>(
                  widened, weights, transpose_weights_ ? col * k + t : t * n + col);
          widened = packed;
        }
        panel = widened;
        panel_stride = n;
      }
      // in as rows of C (in place, or converted kRows rows at a time), kRows
      // rows a panel product.
      constexpr uint64_t kRows = 4;
      uint64_t in_stride = k;
      const C* in = transpose_in_ ? nullptr : InPlaceRows<kIn, C>(io, 0, m, k, in_stride);
      const std::span<const std::byte> dense_in = in ? io.fields[0] : DenseField(io, 0);
      const C* widened_in = in ? nullptr : numeric::WidenField<kIn, C, 4>(dense_in);
      if (widened_in && !transpose_in_) {
        in = widened_in;
        in_stride = k;
      }
      // The sums go straight into `out` when it is stored as C.
      const std::span<std::byte> out = io.fields[2];
      C* const direct = dot::InPlaceOut<kAcc, C>(out);
      C* a = numeric::Scratch<C, 1>(kRows * k);
      C* acc = direct ? direct : numeric::Scratch<C, 2>(kRows * n);
      for (uint64_t row = 0; row < m; row += kRows) {
        const uint64_t rows = std::min(kRows, m - row);
        if (in == nullptr) {
          for (uint64_t i = 0; i < rows; ++i)
            for (uint64_t t = 0; t < k; ++t)
              a[i * k + t] = numeric::ElementAs<kIn>(
                  widened_in, dense_in, transpose_in_ ? t * m + row + i : (row + i) * k + t);
        }
        C* const sums = direct ? direct + row * n : acc;
        std::fill(sums, sums + rows * n, C(0));
        dot::PanelDotRows<C>(in ? in + row * in_stride : a, in ? in_stride : k, rows, k, panel,
                             panel_stride, n, sums, n);
        if (direct) continue;
        for (uint64_t col = 0; col < rows * n; ++col) Put<kAcc>(out, row * n + col, acc[col]);
      }
      return {};
    });
  }

 private:
  // Field `field` as `rows` rows of `cols` elements of C read in place, row
  // r at the result + r * stride: a dense field (stride = cols) or one
  // given as rows of exactly a row each; nullptr when it must be converted
  // or gathered first.
  template <ElementType kIn, typename C>
  static const C* InPlaceRows(const VertexIo& io, size_t field, uint64_t rows, uint64_t cols,
                              uint64_t& stride) {
    const FieldRows* given = io.Rows(field);
    if (given == nullptr) {
      stride = cols;
      return dot::InPlace<kIn, C>(io.fields[field]);
    }
    if (given->rows != rows || !given->Fits(cols * sizeof(C), sizeof(C), false)) return nullptr;
    stride = given->stride / sizeof(C);
    return dot::InPlace<kIn, C>(io.fields[field]);
  }

  ElementType in_;
  ElementType acc_;
  bool transpose_in_;
  bool transpose_weights_;
};

class ConvPartial1x1OutCodelet final : public Codelet {
 public:
  ConvPartial1x1OutCodelet(ElementType in, ElementType acc)
      : Codelet(ConvPartial1x1OutCodeletName(in, acc), ExecutionKind::kSupervisor,
                {In("in", in, VectorLayout::kSpan), In("weights", in), InOut("out", acc)},
                {"inChans", "outChans"}, cost::kConvCodeBytes),
        in_(in),
        acc_(acc) {}

  Status CheckShape(const VertexShape& shape) const override {
    const uint64_t in_chans = shape.params[0], out_chans = shape.params[1];
    if (in_chans == 0 || out_chans == 0) {
      return MakeError("parameters inChans={} and outChans={} must be nonzero", in_chans,
                       out_chans);
    }
    if (shape.field_elements[0] % in_chans != 0) {
      return MakeError("field 'in' has {} elements, not a multiple of inChans={}",
                       shape.field_elements[0], in_chans);
    }
    const uint64_t pixels = shape.field_elements[0] / in_chans;
    if (shape.field_elements[1] != in_chans * out_chans) {
      return MakeError("field 'weights' has {} elements, expected outChans*inChans = {}",
                       shape.field_elements[1], in_chans * out_chans);
    }
    if (shape.field_elements[2] != pixels * out_chans) {
      return MakeError(
          "field 'out' has {} elements, expected pixels*outChans = {} "
          "({} pixels)",
          shape.field_elements[2], pixels * out_chans, pixels);
    }
    return {};
  }

  // kSupervisorOverhead + W * (kWorkerOverhead + ceil(P / W) * kConvPerPixelCycles)
  //   + ceil(P * inChans * outChans / AMP MACs per cycle)
  //   + ceil(weight bytes / 8)   (weights enter the AMP at 64 bits a cycle).
  uint64_t EstimateCycles(const VertexShape& shape, const Target& target) const override {
    const uint64_t in_chans = shape.params[0], out_chans = shape.params[1];
    const uint64_t pixels = in_chans == 0 ? 0 : shape.field_elements[0] / in_chans;
    const uint64_t workers = target.NumWorkerContexts();
    uint64_t macs_per_cycle = target.AmpMacsPerCycle(in_, acc_);
    if (macs_per_cycle == 0) macs_per_cycle = 1;
    return cost::kSupervisorOverhead +
           workers * (cost::kWorkerOverhead +
                      cost::CeilDiv(pixels, workers) * cost::kConvPerPixelCycles) +
           cost::CeilDiv(pixels * in_chans * out_chans, macs_per_cycle) +
           cost::CeilDiv(in_chans * out_chans * SizeOf(in_), 8);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const uint64_t in_chans = io.params[0], out_chans = io.params[1];
    const uint64_t pixels = Count(io, 0) / in_chans;
    return DispatchPair(in_, acc_, [&](auto in_tag, auto acc_tag) -> Status {
      constexpr ElementType kIn = decltype(in_tag)::value;
      constexpr ElementType kAcc = decltype(acc_tag)::value;
      using C = typename numeric::Traits<kAcc>::Compute;
      // weights [co][ci] as a [ci x co] panel, then one panel product per
      // pixel, starting from the partial sums already in `out`.
      C* panel = numeric::Scratch<C, 0>(in_chans * out_chans);
      for (uint64_t ci = 0; ci < in_chans; ++ci)
        for (uint64_t co = 0; co < out_chans; ++co)
          panel[ci * out_chans + co] = static_cast<C>(Get<kIn>(io.fields[1], co * in_chans + ci));
      C* a = numeric::Scratch<C, 1>(in_chans);
      C* acc = numeric::Scratch<C, 2>(out_chans);
      for (uint64_t p = 0; p < pixels; ++p) {
        for (uint64_t ci = 0; ci < in_chans; ++ci)
          a[ci] = static_cast<C>(Get<kIn>(io.fields[0], p * in_chans + ci));
        for (uint64_t co = 0; co < out_chans; ++co)
          acc[co] = Get<kAcc>(io.fields[2], p * out_chans + co);
        dot::PanelDot<C>(a, in_chans, panel, out_chans, out_chans, acc);
        for (uint64_t co = 0; co < out_chans; ++co)
          Put<kAcc>(io.fields[2], p * out_chans + co, acc[co]);
      }
      return {};
    });
  }

 private:
  ElementType in_;
  ElementType acc_;
};

}  // namespace

void AddDotCodelets(CodeletList& out) {
  using T = ElementType;
  // The vector-unit matmul: every pair of kDotPairs (dot_kernels.h).
  for (const auto& [in, acc] : dot::kDotPairs) {
    for (bool transpose_in : {false, true}) {
      for (bool transpose_weights : {false, true}) {
        out.push_back(
            std::make_unique<MatMulPartialCodelet>(in, acc, transpose_in, transpose_weights));
      }
    }
  }
  // The AMP pairs (Target::AmpMacsPerCycle is nonzero for exactly these).
  const std::pair<T, T> conv_types[] = {{T::kF32, T::kF32}, {T::kF16, T::kF32}, {T::kF16, T::kF16}};
  for (const auto& [in, acc] : conv_types) {
    out.push_back(std::make_unique<ConvPartial1x1OutCodelet>(in, acc));
  }
}

}  // namespace tileprof::engine
