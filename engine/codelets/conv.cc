// The general convolution partial (semantics and parameters: codelets.h,
// ConvParam). One vertex computes a run of output elements of any
// convolution XLA prints: any dim_labels layout, stride, padding (negative
// too), lhs and rhs dilation, kernel reversal, feature or batch groups, and a
// slice of the input channels (for partial sums over channel groups).
//
// Poplin's vertices read a pre-arranged, padded input through worklists; this
// one reads the operands in their own layout through strides, which the
// lowering can then connect without rearranging. Its size and cycle figures
// are those of the arithmetic it does (AMP or vector-unit MACs per output).
#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "engine/codelets/codelets.h"
#include "engine/codelets/conv_geometry.h"
#include "engine/codelets/cost_model.h"
#include "engine/codelets/dot_kernels.h"
#include "engine/codelets/families.h"
#include "engine/codelets/numeric.h"
#include "engine/codelets/widen.h"

namespace tileprof::engine {
namespace {

using conv_internal::Geometry;
using conv_internal::kSpatial;
using conv_internal::OutputDigit;

class ConvPartialCodelet final : public Codelet {
 public:
  ConvPartialCodelet(ElementType in, ElementType acc)
      : Codelet(ConvPartialCodeletName(in, acc), ExecutionKind::kSupervisor,
                {In("in", in, VectorLayout::kSpan), In("weights", in, VectorLayout::kSpan),
                 Out("out", acc, VectorLayout::kSpan)},
                {ConvPartialParamNames().begin(), ConvPartialParamNames().end()},
                cost::kConvCodeBytes),
        in_(in),
        acc_(acc) {}

  Status CheckShape(const VertexShape& shape) const override {
    const Geometry g(shape.params);
    for (int64_t size :
         {g.out_size_b, g.out_size_f, g.in_chans_per_group, g.out_chans_per_group, g.in_chans}) {
      if (size < 1) return MakeError("a size, channel or group parameter is 0");
    }
    for (size_t d = 0; d < kSpatial; ++d) {
      if (g.out_size[d] < 1 || g.in_size[d] < 1 || g.k_size[d] < 1 || g.stride[d] < 1 ||
          g.lhs_dilation[d] < 1 || g.rhs_dilation[d] < 1) {
        return MakeError("spatial dimension {}: sizes, stride and dilations must be at least 1", d);
      }
      if (g.k_offset[d] + g.k_size[d] > g.k_full[d]) {
        return MakeError(
            "spatial dimension {}: kernel positions [{}, {}) outside the {} of the kernel", d,
            g.k_offset[d], g.k_offset[d] + g.k_size[d], g.k_full[d]);
      }
    }
    // (OutputDigit divides by the strides of dimensions of two or more.)
    const auto zero_stride = [](int64_t size, int64_t stride) { return size > 1 && stride < 1; };
    bool zero =
        zero_stride(g.out_size_b, g.out_stride_b) || zero_stride(g.out_size_f, g.out_stride_f);
    for (size_t d = 0; d < kSpatial; ++d)
      zero = zero || zero_stride(g.out_size[d], g.out_stride[d]);
    if (zero) return MakeError("an output stride is 0");
    if (g.in_chan_start + g.in_chans > g.in_chans_per_group) {
      return MakeError("input channels [{}, {}) outside the {} of a group", g.in_chan_start,
                       g.in_chan_start + g.in_chans, g.in_chans_per_group);
    }
    if (static_cast<uint64_t>(g.out_start) + shape.field_elements[2] > g.OutputElements()) {
      return MakeError("field 'out' has {} elements from {}, past the {} outputs",
                       shape.field_elements[2], g.out_start, g.OutputElements());
    }
    return {};
  }

  // AMP pairs: kSupervisorOverhead
  //   + W * (kWorkerOverhead + ceil(pixels * kernel positions / W) * kConvPerPixelCycles)
  //   + ceil(MACs / AMP MACs per cycle) + ceil(weight bytes / 8),
  // pixels = ceil(outputs / outChansPerGroup). Others, on the vector unit:
  //   kSupervisorOverhead + W * (kWorkerOverhead + ceil(outputs / W) * per output),
  //   per output = kDotPerOutputCycles
  //                + kernel positions * ceil(inChans / width) * (2 loads + 1 MAC).
  // bf16 and the integers are vector-unit pairs with In's own figures, as
  // in MatMulPartial (dot.cc says why bf16 is not costed as f16).
  uint64_t EstimateCycles(const VertexShape& shape, const Target& target) const override {
    const Geometry g(shape.params);
    const uint64_t outputs = shape.field_elements[2];
    const uint64_t positions = g.KernelPositions();
    const uint64_t chans = static_cast<uint64_t>(std::max<int64_t>(g.in_chans, 1));
    const uint64_t workers = target.NumWorkerContexts();
    const uint64_t amp = target.AmpMacsPerCycle(in_, acc_);
    if (amp > 0) {
      const uint64_t per_pixel = static_cast<uint64_t>(std::max<int64_t>(g.out_chans_per_group, 1));
      const uint64_t pixels = cost::CeilDiv(outputs, per_pixel);
      return cost::kSupervisorOverhead +
             workers * (cost::kWorkerOverhead +
                        cost::CeilDiv(pixels * positions, workers) * cost::kConvPerPixelCycles) +
             cost::CeilDiv(outputs * chans * positions, amp) +
             cost::CeilDiv(shape.field_elements[1] * SizeOf(in_), 8);
    }
    const uint64_t per_output =
        cost::kDotPerOutputCycles + positions * cost::CeilDiv(chans, cost::Width(target, in_)) *
                                        cost::CyclesPerVector(cost::OpClass::kSimple, in_, 2, 0);
    return cost::kSupervisorOverhead +
           workers * (cost::kWorkerOverhead + cost::CeilDiv(outputs, workers) * per_output);
  }

 protected:
  // The weights, a block of a larger kernel tensor, may be given as rows
  // (FieldRows): read in place when a row is one kernel position and input
  // channel's features, copied together first otherwise.
  bool ReadsRows(size_t field) const override { return field == 1; }

  Status Compute(const VertexIo& io) const override {
    const Geometry g(io.params);
    return dot::DispatchPair(in_, acc_, [&](auto in_tag, auto acc_tag) -> Status {
      constexpr ElementType kIn = decltype(in_tag)::value;
      constexpr ElementType kAcc = decltype(acc_tag)::value;
      return Run<kIn, kAcc>(g, io);
    });
  }

 private:
  // Runs of outputs that differ only in their feature: the feature is the
  // innermost dimension of the output (stride 1) and every other dimension
  // either has one element or a stride that is a multiple of the features,
  // so that flat indices [first, first + features) share all the others.
  static bool FeatureRuns(const Geometry& g) {
    if (g.out_stride_f != 1) return false;
    auto whole = [&](int64_t size, int64_t stride) {
      return size == 1 || stride % g.out_size_f == 0;
    };
    if (!whole(g.out_size_b, g.out_stride_b)) return false;
    for (size_t d = 0; d < kSpatial; ++d)
      if (!whole(g.out_size[d], g.out_stride[d])) return false;
    return true;
  }

  // One output, or a run of outputs of one pixel and one group. Each output
  // sums kernel positions in order and, within one, input channels in order
  // (dot_kernels.h: the panel product keeps that order).
  template <ElementType kIn, ElementType kAcc>
  Status Run(const Geometry& g, const VertexIo& io) const {
    using C = typename numeric::Traits<kAcc>::Compute;
    const int64_t n_in = static_cast<int64_t>(Count(io, 0));
    const int64_t n_w = static_cast<int64_t>(Count(io, 1));
    const uint64_t n_out = Count(io, 2);
    const uint64_t positions = g.KernelPositions();
    const auto chans = static_cast<uint64_t>(g.in_chans);
    // A strided run [first, first + (count-1) * step] inside a field.
    auto inside = [](int64_t first, int64_t step, int64_t count, int64_t size) {
      return first >= 0 && first + (count - 1) * step < size;
    };
    auto outside_error = [&](int64_t flat) {
      return MakeError(
          "output element {} reads outside the 'in' ({} elements) or "
          "'weights' ({} elements) field",
          flat, n_in, n_w);
    };
    // A lowering reads each weight at most once per output feature, so the
    // kernel positions x input channels never exceed the weights; checked
    // (the first test keeps the product from overflowing) before anything
    // is allocated for them, so that a malformed vertex cannot ask for
    // unbounded memory.
    const uint64_t limit = static_cast<uint64_t>(n_w) + (uint64_t{1} << 20);
    if (positions > limit || positions * chans > limit) {
      return MakeError("{} kernel positions x {} input channels read more than the {} weights",
                       positions, chans, n_w);
    }
    // Per kernel position: its coordinates and the offset of its weights.
    // (Per-thread scratch, like the panel: this runs once per vertex. Slots
    // from 10 never meet the panel's, whatever type C is.)
    auto* kernel = numeric::Scratch<std::array<int64_t, kSpatial>, 10>(positions);
    int64_t* w_offset = numeric::Scratch<int64_t, 10>(positions);
    // The positions in order, the last dimension fastest: counted, not
    // divided out of pos (a vertex of a few outputs spent more on those
    // divisions than on its products).
    std::array<int64_t, kSpatial> k_at{};
    for (uint64_t pos = 0; pos < positions; ++pos) {
      if (pos > 0) {
        for (size_t d = kSpatial; d-- > 0;) {
          if (++k_at[d] < g.k_size[d]) break;
          k_at[d] = 0;
        }
      }
      for (size_t d = 0; d < kSpatial; ++d) kernel[pos][d] = g.k_offset[d] + k_at[d];
      int64_t offset = 0;
      for (size_t d = 0; d < kSpatial; ++d) {
        const int64_t k = kernel[pos][d];
        offset += ((g.reversal >> d) & 1U ? g.k_full[d] - 1 - k : k) * g.w_stride[d];
      }
      w_offset[pos] = offset;
    }
    // The weights of a run, as a panel [position][channel][feature] of C;
    // bad[pos] is 1 + the first feature whose weights lie outside the field.
    // A panel wider than one feature is never larger than the weights field.
    bool runs = FeatureRuns(g);
    uint64_t max_width =
        runs ? static_cast<uint64_t>(std::min(g.out_size_f, g.out_chans_per_group)) : 1;
    if (positions * chans * max_width > static_cast<uint64_t>(n_w)) {
      runs = false;
      max_width = 1;
    }
    // Weights stored as C with adjacent features (HWIO) are read in place:
    // position pos, channel c is the row at w_first[pos] + c * w_stride_i.
    // Given as rows (FieldRows) of w_stride_i elements each, dense row r
    // lies at the rows' Offset(r), consecutive rows of a block w_row
    // elements apart, as long as a run's features stay in their row and its
    // channels in their block (pack checks; it falls back to a panel copied
    // from the rows gathered otherwise).
    const FieldRows* w_rows = io.Rows(1);
    int64_t w_row = g.w_stride_i;
    const C* weights = g.w_stride_o == 1 ? dot::InPlace<kIn, C>(io.fields[1]) : nullptr;
    if (w_rows != nullptr) {
      const bool rows_fit =
          g.w_stride_i > 0 &&
          w_rows->Fits(static_cast<uint64_t>(g.w_stride_i) * sizeof(C), sizeof(C), true);
      if (rows_fit) {
        w_row = static_cast<int64_t>(w_rows->stride / sizeof(C));
      } else {
        weights = nullptr;
      }
    }
    std::span<const std::byte> dense_w = weights ? io.fields[1] : DenseField(io, 1);
    const C* widened_w = numeric::WidenField<kIn, C, 15>(dense_w);
    if (widened_w && w_rows == nullptr && g.w_stride_o == 1) weights = widened_w;
    // Where dense weight index `at` (position, channel, feature) lies.
    auto weight_at = [&](int64_t at) {
      return w_rows == nullptr
                 ? weights + at
                 : weights + w_rows->Offset(static_cast<uint64_t>(at / g.w_stride_i)) / sizeof(C) +
                       at % g.w_stride_i;
    };
    const C* inputs = g.in_stride_f == 1 ? dot::InPlace<kIn, C>(io.fields[0]) : nullptr;
    // Inputs stored as another type (f16 into f32) are converted once, the
    // whole field, then read as C: in place when their channels are
    // adjacent. Converting each element for every output and kernel
    // position that reads it was most of an f16 convolution's time. The
    // same for the weights (or their dense copy) below.
    const C* widened_in = numeric::WidenField<kIn, C, 14>(io.fields[0]);
    if (widened_in && g.in_stride_f == 1) inputs = widened_in;
    auto panel_of = [&] { return numeric::Scratch<C, 0>(positions * chans * max_width); };
    C* panel = weights ? nullptr : panel_of();
    int64_t* w_first = numeric::Scratch<int64_t, 11>(positions);
    // Up to kGroup runs of consecutive pixels that share their features
    // (one panel) go through the four-row kernel together, each still
    // summing its own products in order. Their sums go straight into `out`
    // when it is stored as C.
    constexpr uint64_t kGroup = 4;
    C* a = numeric::Scratch<C, 1>(kGroup * chans);
    C* const direct = dot::InPlaceOut<kAcc, C>(io.fields[2]);
    C* acc = direct ? nullptr : numeric::Scratch<C, 2>(kGroup * max_width);
    uint64_t* bad = numeric::Scratch<uint64_t, 12>(positions);
    int64_t panel_f = -1;
    uint64_t panel_width = 0;
    auto pack = [&](int64_t f0, uint64_t width) {
      if (weights != nullptr && w_rows != nullptr) {
        for (uint64_t pos = 0; pos < positions && weights; ++pos) {
          const int64_t w_at =
              g.in_chan_start * g.w_stride_i + f0 * g.w_stride_o - g.w_start + w_offset[pos];
          const auto block = static_cast<int64_t>(w_rows->block_rows);
          const bool crosses =
              w_at >= 0 && (w_at % g.w_stride_i + static_cast<int64_t>(width) > g.w_stride_i ||
                            (block != 0 && w_at / g.w_stride_i % block + g.in_chans > block));
          if (crosses) {
            weights = nullptr;  // the run crosses rows: copy from here on
            panel = panel_of();
            dense_w = DenseField(io, 1);
          }
        }
      }
      for (uint64_t pos = 0; pos < positions; ++pos) {
        const int64_t w_at =
            g.in_chan_start * g.w_stride_i + f0 * g.w_stride_o - g.w_start + w_offset[pos];
        bad[pos] = 0;
        // The features' rows start w_stride_o >= 0 apart: when the first
        // and the last lie inside, so do those between.
        const bool all_inside = inside(w_at, g.w_stride_i, g.in_chans, n_w) &&
                                inside(w_at + static_cast<int64_t>(width - 1) * g.w_stride_o,
                                       g.w_stride_i, g.in_chans, n_w);
        for (uint64_t r = 0; r < width && bad[pos] == 0 && !all_inside; ++r) {
          if (!inside(w_at + static_cast<int64_t>(r) * g.w_stride_o, g.w_stride_i, g.in_chans, n_w))
            bad[pos] = r + 1;
        }
        w_first[pos] = w_at;
        if (bad[pos] != 0 || weights) continue;  // bad: an error if an output uses it
        // Row c of the panel is feature-contiguous; so are the weights in
        // the usual layouts (HWIO), which makes this a row copy.
        C* rows = panel + pos * chans * width;
        // Stored as C, or converted to it: a row is one copy.
        const C* as_c = widened_w ? widened_w : dot::InPlace<kIn, C>(dense_w);
        for (uint64_t c = 0; c < chans; ++c) {
          const int64_t first = w_at + static_cast<int64_t>(c) * g.w_stride_i;
          if (as_c != nullptr && g.w_stride_o == 1) {
            std::memcpy(rows + c * width, as_c + first, width * sizeof(C));
            continue;
          }
          for (uint64_t r = 0; r < width; ++r) {
            const auto at = static_cast<uint64_t>(first + static_cast<int64_t>(r) * g.w_stride_o);
            rows[c * width + r] = numeric::ElementAs<kIn>(widened_w, dense_w, at);
          }
        }
      }
      panel_f = f0;
      panel_width = width;
    };
    struct Member {
      int64_t flat;     // its first output
      int64_t in_base;  // its batch and first channel in `in`
      std::array<int64_t, kSpatial> o;
      // Every kernel position reads inside the input, at in_at + pos_off[pos]
      // (no padding, no input dilation, inside the field): worked out once,
      // not per position and dimension (most of a small convolution's time).
      bool interior;
      int64_t in_at;
    };
    // Kernel position pos's offset in `in` from a member's base; the
    // positions' first and last coordinates are the least and the most.
    int64_t* pos_off = numeric::Scratch<int64_t, 13>(positions);
    bool lhs_dilated = false;
    std::array<int64_t, kSpatial> k_lo{}, k_hi{};
    for (size_t d = 0; d < kSpatial; ++d) {
      lhs_dilated = lhs_dilated || g.lhs_dilation[d] != 1;
      k_lo[d] = kernel[0][d] * g.rhs_dilation[d];
      k_hi[d] = kernel[positions - 1][d] * g.rhs_dilation[d];
    }
    for (uint64_t pos = 0; pos < positions; ++pos) {
      pos_off[pos] = 0;
      for (size_t d = 0; d < kSpatial; ++d)
        pos_off[pos] += kernel[pos][d] * g.rhs_dilation[d] * g.in_stride[d];
    }
    std::array<Member, kGroup> group;
    std::array<const C*, kGroup> rows{};
    std::array<C*, kGroup> sums{};
    std::array<bool, kGroup> valid{};
    // The coordinates of output out_start + i, followed as i grows.
    OutputDigit digit_b(g.out_stride_b, g.out_size_b, g.out_start);
    OutputDigit digit_f(g.out_stride_f, g.out_size_f, g.out_start);
    std::array<OutputDigit, kSpatial> digits;
    for (size_t d = 0; d < kSpatial; ++d)
      digits[d] = OutputDigit(g.out_stride[d], g.out_size[d], g.out_start);
    for (uint64_t i = 0; i < n_out;) {
      uint64_t members = 0, width = 0;
      int64_t group_f = 0;
      while (members < kGroup && i < n_out) {
        const int64_t flat = g.out_start + static_cast<int64_t>(i);
        const int64_t b = g.out_offset_b + digit_b.value;
        const int64_t f_local = digit_f.value;
        const int64_t f = g.out_offset_f + f_local;
        uint64_t run = 1;
        if (runs) {
          run = std::min<uint64_t>(
              {static_cast<uint64_t>(g.out_size_f - f_local), n_out - i,
               static_cast<uint64_t>(g.out_chans_per_group - f % g.out_chans_per_group)});
        }
        if (members > 0 && (f != group_f || run != width)) break;
        group_f = f;
        width = run;
        Member& member = group[members];
        member.flat = flat;
        for (size_t d = 0; d < kSpatial; ++d) member.o[d] = g.out_offset[d] + digits[d].value;
        const int64_t group_index = f / g.out_chans_per_group;
        const int64_t in_b = g.groups_split_batch ? group_index * g.batch_per_group + b : b;
        const int64_t in_c0 =
            (g.groups_split_batch ? 0 : group_index * g.in_chans_per_group) + g.in_chan_start;
        member.in_base = in_b * g.in_stride_b + in_c0 * g.in_stride_f - g.in_start;
        member.interior = !lhs_dilated;
        member.in_at = member.in_base;
        for (size_t d = 0; d < kSpatial; ++d) {
          const int64_t x = member.o[d] * g.stride[d] - g.pad_low[d];
          member.interior = member.interior && x + k_lo[d] >= 0 && x + k_hi[d] < g.in_size[d];
          member.in_at += x * g.in_stride[d];
        }
        member.interior =
            member.interior && inside(member.in_at + pos_off[0], g.in_stride_f, g.in_chans, n_in) &&
            inside(member.in_at + pos_off[positions - 1], g.in_stride_f, g.in_chans, n_in);
        sums[members] = direct ? direct + i : acc + members * width;
        ++members;
        i += run;
        digit_b.Advance(static_cast<int64_t>(run));
        digit_f.Advance(static_cast<int64_t>(run));
        for (OutputDigit& digit : digits) digit.Advance(static_cast<int64_t>(run));
      }
      if (group_f != panel_f || width != panel_width) pack(group_f, width);
      for (uint64_t j = 0; j < members; ++j) std::fill(sums[j], sums[j] + width, C(0));
      for (uint64_t pos = 0; pos < positions; ++pos) {
        bool all = members == kGroup;
        for (uint64_t j = 0; j < members; ++j) {
          int64_t in_at = group[j].in_base;
          valid[j] = true;
          if (group[j].interior) in_at = group[j].in_at + pos_off[pos];
          for (size_t d = 0; d < kSpatial && !group[j].interior; ++d) {
            int64_t x =
                group[j].o[d] * g.stride[d] - g.pad_low[d] + kernel[pos][d] * g.rhs_dilation[d];
            if (x >= 0 && g.lhs_dilation[d] != 1) {  // (divisions cost more than the test)
              x = x % g.lhs_dilation[d] != 0 ? -1 : x / g.lhs_dilation[d];
            }
            if (x < 0 || x >= g.in_size[d]) {
              valid[j] = false;
              break;
            }
            in_at += x * g.in_stride[d];
          }
          all = all && valid[j];
          if (!valid[j]) continue;
          if (!group[j].interior && !inside(in_at, g.in_stride_f, g.in_chans, n_in))
            return outside_error(group[j].flat);
          if (bad[pos] != 0)
            return outside_error(group[j].flat + static_cast<int64_t>(bad[pos] - 1));
          if (inputs) {
            rows[j] = inputs + in_at;
            continue;
          }
          C* row = a + j * chans;
          for (uint64_t c = 0; c < chans; ++c) {
            const auto at = static_cast<uint64_t>(in_at + static_cast<int64_t>(c) * g.in_stride_f);
            row[c] = numeric::ElementAs<kIn>(widened_in, io.fields[0], at);
          }
          rows[j] = row;
        }
        const C* w = weights ? weight_at(w_first[pos]) : panel + pos * chans * width;
        const uint64_t w_stride = weights ? static_cast<uint64_t>(w_row) : width;
        if (all) {
          dot::PanelDot4<C>(rows.data(), chans, w, w_stride, width, sums.data());
          continue;
        }
        for (uint64_t j = 0; j < members; ++j)
          if (valid[j]) dot::PanelDot<C>(rows[j], chans, w, w_stride, width, sums[j]);
      }
      if (direct) continue;
      const uint64_t first = static_cast<uint64_t>(group[0].flat - g.out_start);
      for (uint64_t j = 0; j < members; ++j)
        for (uint64_t r = 0; r < width; ++r)
          numeric::Put<kAcc>(io.fields[2], first + j * width + r, sums[j][r]);
    }
    return {};
  }

  ElementType in_;
  ElementType acc_;
};

}  // namespace

void AddConvCodelets(CodeletList& out) {
  for (const auto& [in, acc] : dot::kDotPairs)
    out.push_back(std::make_unique<ConvPartialCodelet>(in, acc));
}

}  // namespace tileprof::engine
