// tileprof::ReduceWindow<T,R>: reduce-window read straight from a box of the
// operand. See window.h.
//
// Why not a patches tensor: materialising every output's window (window
// elements x outputs) and reducing it costs the window's size times the
// output in memory and exchange; a 3x3 stride-2 max pool at batch 16 held
// 115 MB of patches and 228 MB of receive buffers for a 13 MB result. A
// vertex that walks the window in the operand box needs only the box.
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "engine/codelets/cost_model.h"
#include "engine/codelets/families.h"
#include "engine/codelets/numeric.h"
#include "engine/codelets/reduce_combine.h"
#include "engine/codelets/window.h"
#include "engine/codelets/window_checks.h"

namespace tileprof::engine {
namespace {

using window::CheckBoxField;
using window::CheckOutputRun;
using window::kMaxRank;
using window::Signed;

constexpr const char* kDimParams[] = {"extent",  "window", "stride", "padLo",
                                      "baseDil", "winDil", "opLo",   "opSize"};
enum DimParam : size_t { kExtent, kWindow, kStride, kPadLo, kBaseDil, kWinDil, kOpLo, kOpSize };
constexpr size_t kDimParamCount = std::size(kDimParams);
// Leading parameters: first, firstHi, op, then outSize<d>.
constexpr size_t kLead = 3;
// Coordinates stay below 2^61 so that their sums and products with 32-bit
// parameters cannot overflow int64.
constexpr uint64_t kCoordinateLimit = uint64_t{1} << 61;

bool ProductFits(uint64_t a, uint64_t b) { return b == 0 || a <= kCoordinateLimit / b; }

class ReduceWindowCodelet final : public Codelet {
 public:
  ReduceWindowCodelet(ElementType type, uint32_t rank)
      : Codelet(ReduceWindowCodeletName(type, rank), ExecutionKind::kWorker,
                {In("operand", type, VectorLayout::kSpan), ScalarIn("init", type),
                 Out("out", type, VectorLayout::kSpan)},
                Params(rank), kReduceWindowCodeBytes),
        type_(type),
        rank_(rank) {}

  Status CheckShape(const VertexShape& shape) const override {
    const auto op = shape.params[2];
    if (op > static_cast<uint32_t>(ReduceOp::kOr) || !Supports(static_cast<ReduceOp>(op), type_)) {
      return MakeError("reduction {} is not one this element type supports", op);
    }
    uint64_t total = 1, box = 1;
    for (uint32_t d = 0; d < rank_; ++d) {
      const auto p = Dim(shape.params, d);
      const uint64_t out_size = shape.params[kLead + d];
      total *= out_size;
      if (p[kWindow] == 0 || p[kStride] == 0 || p[kBaseDil] == 0 || p[kWinDil] == 0) {
        return MakeError("dimension {}: window, stride and dilations must be nonzero", d);
      }
      if (p[kExtent] == 0 || uint64_t{p[kOpLo]} + p[kOpSize] > p[kExtent] || p[kOpSize] == 0) {
        return MakeError("dimension {}: the operand box [{}, +{}) is not inside its {} elements", d,
                         p[kOpLo], p[kOpSize], p[kExtent]);
      }
      if (!ProductFits(out_size, p[kStride]) || !ProductFits(p[kWindow], p[kWinDil]) ||
          !ProductFits(p[kExtent], p[kBaseDil])) {
        return MakeError("dimension {}: window coordinates beyond 2^61", d);
      }
      box *= p[kOpSize];
    }
    TILEPROF_RETURN_IF_ERROR(CheckBoxField("operand", shape.field_elements[0], box));
    return CheckOutputRun(First(shape.params), shape.field_elements[2], total);
  }

  uint64_t EstimateCycles(const VertexShape& shape, const Target&) const override {
    uint64_t window = 1;
    for (uint32_t d = 0; d < rank_; ++d)
      window *= std::max<uint32_t>(Dim(shape.params, d)[kWindow], 1);
    return cost::WorkerLoop(
        shape.field_elements[2], 1,
        kReduceWindowCyclesPerElement + kReduceWindowCyclesPerWindowElement * window);
  }

 private:
  static std::vector<std::string> Params(uint32_t rank) {
    std::vector<std::string> params = {"first", "firstHi", "op"};
    for (uint32_t d = 0; d < rank; ++d) params.push_back(fmt::format("outSize{}", d));
    for (uint32_t d = 0; d < rank; ++d)
      for (const char* name : kDimParams) params.push_back(fmt::format("{}{}", name, d));
    return params;
  }
  static uint64_t First(std::span<const uint32_t> params) {
    return params[0] | uint64_t{params[1]} << 32;
  }
  std::span<const uint32_t> Dim(std::span<const uint32_t> params, uint32_t d) const {
    return params.subspan(kLead + rank_ + d * kDimParamCount, kDimParamCount);
  }

  // Per dimension, the window positions of output coordinate q: their
  // offsets in the operand box's flat index, -1 for padding or a hole.
  // Recomputed only when q changes (the odometer moves outer ones rarely).
  struct DimWindow {
    int64_t stride, pad_lo, base_dil, win_dil, dilated_last, op_lo, op_size, op_step;
    int64_t q = -1;
    std::vector<int64_t> offsets;
  };

  // False (the error) when a position inside the operand lies outside the box.
  static bool Offsets(DimWindow& w, int64_t q) {
    w.q = q;
    bool inside_box = true;
    for (size_t k = 0; k < w.offsets.size(); ++k) {
      const int64_t p = q * w.stride - w.pad_lo + static_cast<int64_t>(k) * w.win_dil;
      if (p < 0 || p > w.dilated_last || (w.base_dil != 1 && p % w.base_dil != 0)) {
        w.offsets[k] = -1;
        continue;
      }
      const int64_t local = (w.base_dil == 1 ? p : p / w.base_dil) - w.op_lo;
      inside_box = inside_box && local >= 0 && local < w.op_size;
      w.offsets[k] = local * w.op_step;
    }
    return inside_box;
  }

  // Dimensions [0, upto) at output coordinates q: their window offsets
  // brought up to date, the one-position ones' offsets summed into `base`,
  // `all_padding` set when one of those is padding. False (the error) when
  // a position lies outside the operand box.
  static bool FixedOffsets(std::vector<DimWindow>& dims, const std::vector<int64_t>& q,
                           uint32_t upto, int64_t& base, bool& all_padding) {
    for (uint32_t d = 0; d < upto; ++d) {
      DimWindow& w = dims[d];
      if (w.q != q[d] && !Offsets(w, q[d])) return false;
      if (w.offsets.size() == 1) {
        if (w.offsets[0] < 0) all_padding = true;
        base += w.offsets[0];
      }
    }
    return true;
  }

  template <ElementType kType, ReduceOp kOp>
  Status Run(const VertexIo& io) const {
    using C = typename numeric::Traits<kType>::Compute;
    const C init = numeric::Get<kType>(io.fields[1], 0);
    const uint64_t count = Count(io, 2);
    std::vector<DimWindow> dims(rank_);
    std::vector<int64_t> q(rank_), extent(rank_);
    int64_t op_step = 1;
    for (uint32_t d = rank_; d-- > 0;) {
      const auto p = Dim(io.params, d);
      DimWindow& w = dims[d];
      w.stride = p[kStride];
      w.pad_lo = Signed(p[kPadLo]);
      w.base_dil = p[kBaseDil];
      w.win_dil = p[kWinDil];
      w.dilated_last = (static_cast<int64_t>(p[kExtent]) - 1) * w.base_dil;
      w.op_lo = p[kOpLo];
      w.op_size = p[kOpSize];
      w.op_step = op_step;
      w.offsets.resize(p[kWindow]);
      op_step *= p[kOpSize];
      extent[d] = io.params[kLead + d];
    }
    uint64_t flat = First(io.params);
    for (uint32_t d = rank_; d-- > 0;) {
      q[d] = static_cast<int64_t>(flat % static_cast<uint64_t>(extent[d]));
      flat /= static_cast<uint64_t>(extent[d]);
    }
    // The dimensions whose window has more than one position, walked as an
    // odometer; the others add a constant offset (or make the whole window
    // padding).
    std::vector<uint32_t> walked;
    for (uint32_t d = 0; d < rank_; ++d)
      if (dims[d].offsets.size() > 1) walked.push_back(d);
    std::vector<size_t> at(walked.size());
    const DimWindow& lw = dims[rank_ - 1];
    if constexpr (!std::is_same_v<C, bool>) {
      if (lw.offsets.size() == 1 && lw.stride == 1 && lw.pad_lo == 0 && lw.base_dil == 1)
        return RunRows<kType, kOp>(io, init, count, dims, q, extent, walked);
    }
    for (uint64_t k = 0; k < count; ++k) {
      int64_t base = 0;
      bool all_padding = false;
      if (!FixedOffsets(dims, q, rank_, base, all_padding)) {
        return MakeError("{}: output element {} reads outside the connected operand box", name(),
                         First(io.params) + k);
      }
      C acc = init;
      if (all_padding) {
        uint64_t positions = 1;
        for (uint32_t d : walked) positions *= dims[d].offsets.size();
        for (uint64_t i = 0; i < positions; ++i) acc = ReduceCombine(kOp, acc, init);
      } else {
        std::fill(at.begin(), at.end(), 0);
        while (true) {
          int64_t index = base;
          bool padding = false;
          for (size_t i = 0; i < walked.size(); ++i) {
            const int64_t offset = dims[walked[i]].offsets[at[i]];
            padding = padding || offset < 0;
            index += offset;
          }
          const C v =
              padding ? init : numeric::Get<kType>(io.fields[0], static_cast<uint64_t>(index));
          acc = ReduceCombine(kOp, acc, v);
          size_t i = walked.size();
          while (i-- > 0) {
            if (++at[i] < dims[walked[i]].offsets.size()) break;
            at[i] = 0;
          }
          if (i == static_cast<size_t>(-1)) break;
        }
      }
      numeric::Put<kType>(io.fields[2], k, acc);
      for (uint32_t d = rank_; d-- > 0;) {
        if (++q[d] < extent[d]) break;
        q[d] = 0;
      }
    }
    return {};
  }

  // A last dimension whose window is one element at stride 1, unpadded
  // (pooling over NHWC's H and W): the outputs of a row (its last
  // coordinate) read the same window positions shifted along the row, so
  // each position is combined into the whole row at once, a vector, in the
  // order Run's odometer takes them: the same bits, a fraction of the time
  // (the CNN sample's max pool was a tenth of its training step).
  template <ElementType kType, ReduceOp kOp>
  Status RunRows(const VertexIo& io, typename numeric::Traits<kType>::Compute init, uint64_t count,
                 std::vector<DimWindow>& dims, std::vector<int64_t>& q,
                 const std::vector<int64_t>& extent, const std::vector<uint32_t>& walked) const {
    using C = typename numeric::Traits<kType>::Compute;
    const uint32_t last = rank_ - 1;
    const DimWindow& lw = dims[last];
    C* acc = numeric::Scratch<C, 0>(static_cast<uint64_t>(extent[last]));
    std::vector<size_t> at(walked.size());
    for (uint64_t k = 0; k < count;) {
      const int64_t row =
          std::min<int64_t>(extent[last] - q[last], static_cast<int64_t>(count - k));
      int64_t base = 0;
      bool all_padding = false;
      if (!FixedOffsets(dims, q, last, base, all_padding)) {
        return MakeError("{}: output element {} reads outside the connected operand box", name(),
                         First(io.params) + k);
      }
      // The row's operand positions q..q+row-1 of the last dimension: those
      // past its end are padding, the others must lie in the box.
      const int64_t valid = std::clamp<int64_t>(lw.dilated_last + 1 - q[last], 0, row);
      if (valid > 0 && (q[last] < lw.op_lo || q[last] + valid > lw.op_lo + lw.op_size)) {
        return MakeError("{}: output element {} reads outside the connected operand box", name(),
                         First(io.params) + k);
      }
      base += q[last] - lw.op_lo;
      std::fill(acc, acc + row, init);
      std::fill(at.begin(), at.end(), 0);
      while (true) {
        int64_t index = base;
        bool padding = all_padding;
        for (size_t i = 0; i < walked.size(); ++i) {
          const int64_t offset = dims[walked[i]].offsets[at[i]];
          padding = padding || offset < 0;
          index += offset;
        }
        const int64_t read = padding ? 0 : valid;
        for (int64_t j = 0; j < read; ++j) {
          acc[j] = ReduceCombine(
              kOp, acc[j], numeric::Get<kType>(io.fields[0], static_cast<uint64_t>(index + j)));
        }
        for (int64_t j = read; j < row; ++j) acc[j] = ReduceCombine(kOp, acc[j], init);
        size_t i = walked.size();
        while (i-- > 0) {
          if (++at[i] < dims[walked[i]].offsets.size()) break;
          at[i] = 0;
        }
        if (i == static_cast<size_t>(-1)) break;
      }
      for (int64_t j = 0; j < row; ++j)
        numeric::Put<kType>(io.fields[2], k + static_cast<uint64_t>(j), acc[j]);
      k += static_cast<uint64_t>(row);
      q[last] = 0;
      for (uint32_t d = last; d-- > 0;) {
        if (++q[d] < extent[d]) break;
        q[d] = 0;
      }
    }
    return {};
  }

  template <ElementType kType>
  Status RunOp(const VertexIo& io) const {
    switch (static_cast<ReduceOp>(io.params[2])) {
      case ReduceOp::kAdd:
        return Run<kType, ReduceOp::kAdd>(io);
      case ReduceOp::kMul:
        return Run<kType, ReduceOp::kMul>(io);
      case ReduceOp::kMax:
        return Run<kType, ReduceOp::kMax>(io);
      case ReduceOp::kMin:
        return Run<kType, ReduceOp::kMin>(io);
      case ReduceOp::kAnd:
        return Run<kType, ReduceOp::kAnd>(io);
      case ReduceOp::kOr:
        return Run<kType, ReduceOp::kOr>(io);
    }
    return MakeError("{}: reduction {} unknown", name(), io.params[2]);
  }

  ElementType type_;
  uint32_t rank_;

  // After Run: see window.cc (clang 14 and member templates called from a
  // generic lambda).
 protected:
  Status Compute(const VertexIo& io) const override {
    return numeric::Dispatch(type_,
                             [&](auto tag) -> Status { return RunOp<decltype(tag)::value>(io); });
  }
};

}  // namespace

std::string ReduceWindowCodeletName(ElementType type, uint32_t rank) {
  return fmt::format("tileprof::ReduceWindow<{},{}>", PoplarName(type), rank);
}

Expected<std::unique_ptr<Codelet>> MakeReduceWindowCodelet(ElementType type, uint32_t rank) {
  if (rank == 0 || rank > kMaxRank) {
    return MakeError("reduce-window rank {} outside [1, {}]", rank, kMaxRank);
  }
  return std::unique_ptr<Codelet>(new ReduceWindowCodelet(type, rank));
}

}  // namespace tileprof::engine
