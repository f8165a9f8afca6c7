// Window codelets. See window.h.
#include "engine/codelets/window.h"

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "engine/codelets/cost_model.h"
#include "engine/codelets/families.h"
#include "engine/codelets/numeric.h"
#include "engine/codelets/window_checks.h"

namespace tileprof::engine {
namespace {

using window::CheckBoxField;
using window::CheckOutputRun;
using window::kMaxRank;
using window::Signed;

constexpr const char* kDimParams[] = {"srcExtent", "window", "stride", "padLo",
                                      "opLo",      "opSize", "srcLo",  "srcSize"};
enum DimParam : size_t { kSrcExtent, kWindow, kStride, kPadLo, kOpLo, kOpSize, kSrcLo, kSrcSize };
constexpr size_t kDimParamCount = std::size(kDimParams);

// Parameters: first, outSize<d>, select, then kDimParams per dimension.
class SelectAndScatterCodelet final : public Codelet {
 public:
  SelectAndScatterCodelet(ElementType type, uint32_t rank)
      : Codelet(SelectAndScatterCodeletName(type, rank), ExecutionKind::kWorker,
                {In("operand", type, VectorLayout::kSpan), In("source", type, VectorLayout::kSpan),
                 ScalarIn("init", type), Out("out", type, VectorLayout::kSpan)},
                Params(rank), kSelectAndScatterCodeBytes),
        type_(type),
        rank_(rank) {}

  Status CheckShape(const VertexShape& shape) const override {
    uint64_t total = 1, op_box = 1, src_box = 1;
    for (uint32_t d = 0; d < rank_; ++d) {
      const auto p = Dim(shape.params, d);
      const uint64_t extent = shape.params[1 + d];
      total *= extent;
      if (p[kWindow] == 0 || p[kStride] == 0) {
        return MakeError("dimension {}: window {} and stride {} must be nonzero", d, p[kWindow],
                         p[kStride]);
      }
      if (uint64_t{p[kOpLo]} + p[kOpSize] > extent ||
          uint64_t{p[kSrcLo]} + p[kSrcSize] > p[kSrcExtent]) {
        return MakeError("dimension {}: a box exceeds its array", d);
      }
      op_box *= p[kOpSize];
      src_box *= p[kSrcSize];
    }
    if (shape.params[1 + rank_] > 3) {
      return MakeError("select direction {} is not one of 0..3", shape.params[1 + rank_]);
    }
    TILEPROF_RETURN_IF_ERROR(CheckBoxField("operand", shape.field_elements[0], op_box));
    TILEPROF_RETURN_IF_ERROR(CheckBoxField("source", shape.field_elements[1], src_box));
    return CheckOutputRun(shape.params[0], shape.field_elements[3], total);
  }

  // Per output element: the windows that can contain it times the window's
  // elements, compared once each.
  uint64_t EstimateCycles(const VertexShape& shape, const Target&) const override {
    uint64_t compares = 1;
    for (uint32_t d = 0; d < rank_; ++d) {
      const auto p = Dim(shape.params, d);
      const uint64_t window = std::max<uint32_t>(p[kWindow], 1);
      const uint64_t stride = std::max<uint32_t>(p[kStride], 1);
      compares *= window * ((window + stride - 1) / stride);
    }
    return cost::WorkerLoop(shape.field_elements[3], 1,
                            kSelectCyclesPerElement + kSelectCyclesPerCompare * compares);
  }

 private:
  static std::vector<std::string> Params(uint32_t rank) {
    std::vector<std::string> params = {"first"};
    for (uint32_t d = 0; d < rank; ++d) params.push_back(fmt::format("outSize{}", d));
    params.push_back("select");
    for (uint32_t d = 0; d < rank; ++d)
      for (const char* name : kDimParams) params.push_back(fmt::format("{}{}", name, d));
    return params;
  }
  std::span<const uint32_t> Dim(std::span<const uint32_t> params, uint32_t d) const {
    return params.subspan(2 + rank_ + d * kDimParamCount, kDimParamCount);
  }

  // The flat index of coordinates c in the box whose per-dimension origin and
  // size are the `lo` and `size` parameters, or nullopt outside it.
  std::optional<uint64_t> BoxIndex(std::span<const uint32_t> params, std::span<const int64_t> c,
                                   uint32_t lo, uint32_t size) const {
    uint64_t index = 0;
    for (uint32_t d = 0; d < rank_; ++d) {
      const auto p = Dim(params, d);
      const int64_t local = c[d] - p[lo];
      if (local < 0 || local >= static_cast<int64_t>(p[size])) return std::nullopt;
      index = index * p[size] + static_cast<uint64_t>(local);
    }
    return index;
  }

  // The scatter's sum: two's complement for integers.
  template <typename C>
  static void Add(C& sum, C v) {
    if constexpr (numeric::kIsInt<C>)
      sum = numeric::WrapAdd(sum, v);
    else
      sum = sum + v;
  }
  // The next window s in [lo, hi] in lexicographic order; false after the last.
  template <typename Array>
  bool NextWindow(Array& s, const Array& lo, const Array& hi) const {
    uint32_t d = rank_;
    while (d-- > 0) {
      if (++s[d] <= hi[d]) return true;
      s[d] = lo[d];
    }
    return false;
  }

  // A dimension's constants, read from the parameters once per Run.
  struct DimConst {
    int64_t stride, pad_lo, window, extent, op_lo, op_size;
    int64_t op_step;    // of the operand box's flat index
    int64_t flat_step;  // of the flat index over `extent`
  };
  // A window's positions inside the operand, per dimension: their
  // contributions to the operand box's flat index and to the flat index over
  // the extent (lists[d] from first[d], count[d] of them).
  struct WindowLists {
    std::vector<int64_t> op, flat;
    std::vector<size_t> first, count, at;
  };

  std::vector<DimConst> DimConsts(std::span<const uint32_t> params) const {
    std::vector<DimConst> dims(rank_);
    int64_t op_step = 1, flat_step = 1;
    for (uint32_t d = rank_; d-- > 0;) {
      const auto p = Dim(params, d);
      dims[d] = {p[kStride], Signed(p[kPadLo]), p[kWindow], params[1 + d],
                 p[kOpLo],   p[kOpSize],        op_step,    flat_step};
      op_step *= p[kOpSize];
      flat_step *= params[1 + d];
    }
    return dims;
  }

  // Selects within window s (operand positions s*stride - padLo + w, in
  // lexicographic order of w): the flat index over `extent` of the position
  // the select function keeps, or -1 if every position of the window is
  // padding. A position inside the operand but outside the connected box is
  // an error, as it would be when its turn came: whether there is one does
  // not depend on the order.
  template <ElementType kType, typename Select>
  Expected<int64_t> SelectInWindow(const VertexIo& io, std::span<const int64_t> s,
                                   std::span<const DimConst> dims, const Select& select, uint64_t k,
                                   WindowLists& lists) const {
    using C = typename numeric::Traits<kType>::Compute;
    lists.op.clear();
    lists.flat.clear();
    bool outside_box = false;
    for (uint32_t d = 0; d < rank_; ++d) {
      const DimConst& c = dims[d];
      lists.first[d] = lists.op.size();
      bool any_inside = false;
      for (int64_t w = 0; w < c.window; ++w) {
        const int64_t pos = s[d] * c.stride - c.pad_lo + w;
        if (pos < 0 || pos >= c.extent) continue;  // padding
        any_inside = true;
        const int64_t local = pos - c.op_lo;
        if (local < 0 || local >= c.op_size) {
          outside_box = true;
          continue;
        }
        lists.op.push_back(local * c.op_step);
        lists.flat.push_back(pos * c.flat_step);
      }
      if (!any_inside) return -1;  // all padding in this dimension, so in the window
      lists.count[d] = lists.op.size() - lists.first[d];
    }
    if (outside_box) {
      return MakeError("{}: output element {} reads outside the connected operand box", name(),
                       io.params[0] + k);
    }
    bool have = false;
    C best{};
    int64_t chosen = -1;
    std::fill(lists.at.begin(), lists.at.end(), 0);
    while (true) {
      int64_t op_index = 0, flat = 0;
      for (uint32_t d = 0; d < rank_; ++d) {
        op_index += lists.op[lists.first[d] + lists.at[d]];
        flat += lists.flat[lists.first[d] + lists.at[d]];
      }
      const C value = numeric::Get<kType>(io.fields[0], static_cast<uint64_t>(op_index));
      if (!have || !select(best, value)) {
        best = value;
        chosen = flat;
        have = true;
      }
      uint32_t d = rank_;
      while (d-- > 0) {
        if (++lists.at[d] < lists.count[d]) break;
        lists.at[d] = 0;
      }
      if (d == static_cast<uint32_t>(-1)) return chosen;
    }
  }

  // The flat index over the extent of the position window s selects, -1 if
  // the window is all padding, or nullopt if it reads outside the operand
  // box (Run's walk then decides whether that is an error). Only the
  // dimensions where the window has more than one position are walked.
  template <ElementType kType, typename Select>
  std::optional<int64_t> Choose(const VertexIo& io, const int64_t* s,
                                std::span<const DimConst> dims, const Select& select) const {
    using C = typename numeric::Traits<kType>::Compute;
    // Not zeroed: only the first `active` entries are read (clearing the
    // four arrays, 512 bytes, took a third of this codelet's time).
    std::array<int64_t, kMaxRank> n, op_step, flat_step, at;
    uint32_t active = 0;
    int64_t op = 0, flat = 0;
    for (uint32_t d = 0; d < rank_; ++d) {
      const DimConst& c = dims[d];
      const int64_t start = s[d] * c.stride - c.pad_lo;
      const int64_t lo = std::max<int64_t>(start, 0), hi = std::min(start + c.window, c.extent);
      if (lo >= hi) return -1;
      if (lo < c.op_lo || hi > c.op_lo + c.op_size) return std::nullopt;
      op += (lo - c.op_lo) * c.op_step;
      flat += lo * c.flat_step;
      if (hi - lo > 1) {
        n[active] = hi - lo;
        op_step[active] = c.op_step;
        flat_step[active] = c.flat_step;
        at[active] = 0;
        ++active;
      }
    }
    C best = numeric::Get<kType>(io.fields[0], static_cast<uint64_t>(op));
    int64_t chosen = flat;
    while (true) {
      uint32_t d = active;
      while (d-- > 0) {
        if (++at[d] < n[d]) {
          op += op_step[d];
          flat += flat_step[d];
          break;
        }
        op -= (n[d] - 1) * op_step[d];
        flat -= (n[d] - 1) * flat_step[d];
        at[d] = 0;
      }
      if (d == static_cast<uint32_t>(-1)) return chosen;
      const C value = numeric::Get<kType>(io.fields[0], static_cast<uint64_t>(op));
      if (!select(best, value)) {
        best = value;
        chosen = flat;
      }
    }
  }

  // q moved to the start of the next row (its last coordinate 0).
  void NextRow(std::array<int64_t, kMaxRank>& q, std::span<const DimConst> dims) const {
    const uint32_t last = rank_ - 1;
    q[last] = 0;
    for (uint32_t d = last; d-- > 0;) {
      if (++q[d] < dims[d].extent) break;
      q[d] = 0;
    }
  }

  // Windows that do not overlap (stride >= window in every dimension) and
  // a last dimension whose window is one element at stride 1, unpadded (a
  // max pool over NHWC's H and W: the CNN sample's 2x2 stride 2): an output
  // lies in at most one window, found by division, and the outputs of a
  // row (its last coordinate) lie in windows that differ only in the last
  // coordinate. So a row is done as vectors along it: each output's window
  // is chosen over the window's positions (the first kept unless a later
  // one wins the select, as Choose does), and an output receives its
  // window's source value when the window chooses the output's own
  // position. RunByRows asked each window once per row it overlaps, by
  // index arithmetic over every dimension: a fifth of the CNN sample's
  // training step. An output has at most one contribution, added to init
  // in the compute type as RunByRows does: the same bits. Returns false,
  // having decided nothing, when not of that form or when a window reads
  // outside the operand or source box (Run's walk then decides).
  template <ElementType kType, typename Select>
  bool RunDisjointRows(const VertexIo& io, std::span<const DimConst> dims,
                       const Select& select) const {
    using C = typename numeric::Traits<kType>::Compute;
    const uint32_t last = rank_ - 1;
    for (uint32_t d = 0; d < rank_; ++d) {
      const DimConst& c = dims[d];
      if (c.stride < c.window || c.pad_lo < 0) return false;
    }
    if (dims[last].window != 1 || dims[last].stride != 1 || dims[last].pad_lo != 0) return false;
    const uint64_t count = Count(io, 3);
    const auto first = static_cast<int64_t>(io.params[0]);
    const C init = numeric::Get<kType>(io.fields[2], 0);
    // Copied out of `io`: element stores could alias it, and the loops
    // below would reload each span for every element.
    const std::span<const std::byte> operand = io.fields[0], source = io.fields[1];
    const std::span<std::byte> out = io.fields[3];
    C* acc = numeric::Scratch<C, 1>(count);
    C* best = numeric::Scratch<C, 2>(static_cast<uint64_t>(dims[last].extent));
    uint32_t* chosen = numeric::Scratch<uint32_t, 3>(static_cast<uint64_t>(dims[last].extent));
    std::array<int64_t, kMaxRank> q{}, src_lo{}, src_size{}, src_step{}, src_extent{};
    std::array<int64_t, kMaxRank> pos_lo{}, pos_n{}, at{};
    {
      int64_t step = 1;
      for (uint32_t d = rank_; d-- > 0;) {
        const auto p = Dim(io.params, d);
        src_lo[d] = p[kSrcLo];
        src_size[d] = p[kSrcSize];
        src_extent[d] = p[kSrcExtent];
        src_step[d] = step;
        step *= src_size[d];
      }
      auto flat = static_cast<uint64_t>(first);
      for (uint32_t d = rank_; d-- > 0;) {
        q[d] = static_cast<int64_t>(flat % static_cast<uint64_t>(dims[d].extent));
        flat /= static_cast<uint64_t>(dims[d].extent);
      }
    }
    const DimConst& lc = dims[last];
    for (uint64_t k = 0; k < count;) {
      const int64_t row = std::min<int64_t>(lc.extent - q[last], static_cast<int64_t>(count - k));
      std::fill(acc + k, acc + k + row, init);
      // The window holding the row in each outer dimension, if any.
      bool in_window = q[last] < src_extent[last];
      int64_t own = 0, src_index = 0, positions = 1;
      for (uint32_t d = 0; d < last && in_window; ++d) {
        const DimConst& c = dims[d];
        const int64_t t = q[d] + c.pad_lo, sd = t / c.stride;
        if (t % c.stride >= c.window || sd >= src_extent[d]) {
          in_window = false;
          break;
        }
        const int64_t start = sd * c.stride - c.pad_lo;
        const int64_t a = std::max<int64_t>(start, 0), b = std::min(start + c.window, c.extent);
        if (a < c.op_lo || b > c.op_lo + c.op_size || sd < src_lo[d] ||
            sd >= src_lo[d] + src_size[d])
          return false;
        pos_lo[d] = a;
        pos_n[d] = b - a;
        own = own * pos_n[d] + (q[d] - a);
        positions *= pos_n[d];
        src_index += (sd - src_lo[d]) * src_step[d];
      }
      if (in_window) {
        const int64_t c_end = std::min(q[last] + row, src_extent[last]);
        const int64_t n = c_end - q[last];
        if (q[last] < lc.op_lo || c_end > lc.op_lo + lc.op_size || q[last] < src_lo[last] ||
            c_end > src_lo[last] + src_size[last])
          return false;
        src_index += q[last] - src_lo[last];
        std::fill(at.begin(), at.begin() + last, 0);
        for (int64_t w = 0; w < positions; ++w) {
          int64_t op = q[last] - lc.op_lo;
          for (uint32_t d = 0; d < last; ++d)
            op += (pos_lo[d] + at[d] - dims[d].op_lo) * dims[d].op_step;
          // Branch-free, so that the row vectorises.
          if (w == 0) {
            for (int64_t j = 0; j < n; ++j) {
              best[j] = numeric::Get<kType>(operand, static_cast<uint64_t>(op + j));
              chosen[j] = 0;
            }
          } else {
            for (int64_t j = 0; j < n; ++j) {
              const C v = numeric::Get<kType>(operand, static_cast<uint64_t>(op + j));
              const bool take = !select(best[j], v);
              best[j] = take ? v : best[j];
              chosen[j] = take ? static_cast<uint32_t>(w) : chosen[j];
            }
          }
          for (uint32_t d = last; d-- > 0;) {
            if (++at[d] < pos_n[d]) break;
            at[d] = 0;
          }
        }
        // Branch-free too: which outputs their windows chose is data, and
        // a branch per output mispredicted (a fifth of this codelet's time).
        // Each output is written, init or init + its source value (the
        // row's outputs hold init here), so that the compiler cannot turn
        // the select back into a branch around the store. Every source
        // element of the row is inside the source box.
        C* to = acc + k;
        for (int64_t j = 0; j < n; ++j) {
          C sum = init;
          Add(sum, numeric::Get<kType>(source, static_cast<uint64_t>(src_index + j)));
          const C pick[2] = {init, sum};
          to[j] = pick[chosen[j] == static_cast<uint32_t>(own)];
        }
      }
      k += static_cast<uint64_t>(row);
      NextRow(q, dims);
    }
    for (uint64_t k = 0; k < count; ++k) numeric::Put<kType>(out, k, acc[k]);
    return true;
  }

  // Row by row of the run (a row: the outputs that differ only in the last
  // coordinate): each window overlapping a row is asked once per row which
  // output it selects (memoised per window), and its source value is added
  // when that output is in the row. Run's walk asked every output's windows
  // one by one, a quarter of the CNN sample's training step. An output's
  // contributions still arrive in the windows' lexicographic order and
  // accumulate in the compute type: the sums are the same bit for bit.
  // Returns false, having decided nothing, where Run's walk must decide
  // whether there is an error: a window overlapping a row lies outside the
  // source box, or one reads outside the operand box.
  template <ElementType kType, typename Select>
  bool RunByRows(const VertexIo& io, std::span<const DimConst> dims, const Select& select) const {
    using C = typename numeric::Traits<kType>::Compute;
    constexpr int64_t kUnknown = -2;
    const uint64_t count = Count(io, 3);
    const auto first = static_cast<int64_t>(io.params[0]);
    const uint32_t last = rank_ - 1;
    const uint64_t windows = Count(io, 1);
    int64_t* selected = numeric::Scratch<int64_t, 0>(windows);
    std::fill(selected, selected + windows, kUnknown);
    C* acc = numeric::Scratch<C, 1>(count);
    std::fill(acc, acc + count, numeric::Get<kType>(io.fields[2], 0));
    std::array<int64_t, kMaxRank> q{}, s{}, s_lo{}, s_hi{}, src_lo{}, src_step{};
    {
      auto flat = static_cast<uint64_t>(first);
      int64_t step = 1;
      for (uint32_t d = rank_; d-- > 0;) {
        q[d] = static_cast<int64_t>(flat % static_cast<uint64_t>(dims[d].extent));
        flat /= static_cast<uint64_t>(dims[d].extent);
        const auto p = Dim(io.params, d);
        src_lo[d] = p[kSrcLo];
        src_step[d] = step;
        step *= p[kSrcSize];
      }
    }
    for (uint64_t k = 0; k < count;) {
      const int64_t row =
          std::min<int64_t>(dims[last].extent - q[last], static_cast<int64_t>(count - k));
      bool none = false;
      for (uint32_t d = 0; d < rank_ && !none; ++d) {
        const DimConst& c = dims[d];
        const int64_t q_hi = d == last ? q[d] + row - 1 : q[d];
        const int64_t lo = q[d] + c.pad_lo - c.window + 1, hi = q_hi + c.pad_lo;
        const auto p = Dim(io.params, d);
        s_lo[d] = lo <= 0 ? 0 : (lo + c.stride - 1) / c.stride;
        s_hi[d] = std::min<int64_t>(int64_t{p[kSrcExtent]} - 1, hi < 0 ? -1 : hi / c.stride);
        none = s_lo[d] > s_hi[d];
        if (!none && (s_lo[d] < src_lo[d] || s_hi[d] >= src_lo[d] + int64_t{p[kSrcSize]}))
          return false;
        s[d] = s_lo[d];
      }
      const int64_t row_first = first + static_cast<int64_t>(k);
      while (!none) {
        int64_t index = 0;
        for (uint32_t d = 0; d < rank_; ++d) index += (s[d] - src_lo[d]) * src_step[d];
        int64_t& chosen = selected[index];
        if (chosen == kUnknown) {
          const std::optional<int64_t> choice = Choose<kType>(io, s.data(), dims, select);
          if (!choice) return false;
          chosen = *choice;
        }
        const int64_t j = chosen - row_first;
        if (chosen >= 0 && j >= 0 && j < row) {
          Add(acc[k + static_cast<uint64_t>(j)],
              numeric::Get<kType>(io.fields[1], static_cast<uint64_t>(index)));
        }
        if (!NextWindow(s, s_lo, s_hi)) break;
      }
      k += static_cast<uint64_t>(row);
      NextRow(q, dims);
    }
    for (uint64_t k = 0; k < count; ++k) numeric::Put<kType>(io.fields[3], k, acc[k]);
    return true;
  }

  template <ElementType kType>
  Status Run(const VertexIo& io) const {
    using C = typename numeric::Traits<kType>::Compute;
    const auto direction = static_cast<SelectDirection>(io.params[1 + rank_]);
    const auto select = [direction](C a, C b) {
      switch (direction) {
        case SelectDirection::kGe:
          return a >= b;
        case SelectDirection::kGt:
          return a > b;
        case SelectDirection::kLe:
          return a <= b;
        case SelectDirection::kLt:
          return a < b;
      }
      return false;
    };
    const C init = numeric::Get<kType>(io.fields[2], 0);
    const uint64_t count = Count(io, 3);
    const std::vector<DimConst> dims = DimConsts(io.params);
    // The direction fixed at compile time for the vectorised rows.
    const auto disjoint = [&](auto keeps) { return RunDisjointRows<kType>(io, dims, keeps); };
    bool done = false;
    switch (direction) {
      case SelectDirection::kGe:
        done = disjoint([](C a, C b) { return a >= b; });
        break;
      case SelectDirection::kGt:
        done = disjoint([](C a, C b) { return a > b; });
        break;
      case SelectDirection::kLe:
        done = disjoint([](C a, C b) { return a <= b; });
        break;
      case SelectDirection::kLt:
        done = disjoint([](C a, C b) { return a < b; });
        break;
    }
    if (done) return {};
    if (RunByRows<kType>(io, dims, select)) return {};
    std::vector<int64_t> q(rank_), s(rank_), s_lo(rank_), s_hi(rank_);
    WindowLists lists;
    lists.first.resize(rank_);
    lists.count.resize(rank_);
    lists.at.resize(rank_);
    std::vector<uint32_t> extent(io.params.begin() + 1, io.params.begin() + 1 + rank_);
    // Every output a window covers asks which position it selects: the
    // answer, per source element (one per window), as the selected
    // position's flat index in the operand, -1 for none, or kUnknown.
    constexpr int64_t kUnknown = -2;
    const uint64_t windows = Count(io, 1);
    int64_t* selected = numeric::Scratch<int64_t, 0>(windows);
    std::fill(selected, selected + windows, kUnknown);
    // q: the output coordinates, advanced as an odometer.
    {
      uint64_t flat = io.params[0];
      for (uint32_t d = rank_; d-- > 0;) {
        q[d] = static_cast<int64_t>(flat % extent[d]);
        flat /= extent[d];
      }
    }
    // A dimension's window range changes only when its coordinate does, and
    // the odometer moves the outer ones rarely: recomputed (two divisions)
    // only then.
    std::vector<int64_t> range_of(rank_, -1);
    for (uint64_t k = 0; k < count; ++k) {
      C acc = init;
      // The windows s (per dimension s*stride - padLo <= q < that + window).
      bool none = false;
      for (uint32_t d = 0; d < rank_; ++d) {
        if (range_of[d] != q[d]) {
          range_of[d] = q[d];
          const auto p = Dim(io.params, d);
          const int64_t stride = p[kStride], t = q[d] + Signed(p[kPadLo]);
          const int64_t lo = t - static_cast<int64_t>(p[kWindow]) + 1;
          // (Most dimensions of a pooling have stride 1: no division.)
          auto over = [stride](int64_t x) { return stride == 1 ? x : x / stride; };
          s_lo[d] = std::max<int64_t>(0, lo <= 0 ? 0 : over(lo + stride - 1));
          s_hi[d] =
              std::min<int64_t>(static_cast<int64_t>(p[kSrcExtent]) - 1, t < 0 ? -1 : over(t));
        }
        none = none || s_lo[d] > s_hi[d];
        s[d] = s_lo[d];
      }
      const auto q_flat = static_cast<int64_t>(io.params[0] + k);
      while (!none) {
        // A window outside the source box is not memoised: it is an error
        // only if it selects q.
        const std::optional<uint64_t> index = BoxIndex(io.params, s, kSrcLo, kSrcSize);
        int64_t chosen = index ? selected[*index] : kUnknown;
        if (chosen == kUnknown) {
          TILEPROF_ASSIGN_OR_RETURN(chosen, SelectInWindow<kType>(io, s, dims, select, k, lists));
          if (index) selected[*index] = chosen;
        }
        if (chosen == q_flat) {
          if (!index) {
            return MakeError("{}: output element {} reads outside the connected source box", name(),
                             io.params[0] + k);
          }
          Add(acc, numeric::Get<kType>(io.fields[1], *index));
        }
        if (!NextWindow(s, s_lo, s_hi)) break;
      }
      numeric::Put<kType>(io.fields[3], k, acc);
      for (uint32_t d = rank_; d-- > 0;) {
        if (++q[d] < static_cast<int64_t>(extent[d])) break;
        q[d] = 0;
      }
    }
    return {};
  }

  ElementType type_;
  uint32_t rank_;

  // After Run: clang 14 leaves a member template that a generic lambda calls
  // before its definition undefined (the fuzz build failed to link).
 protected:
  Status Compute(const VertexIo& io) const override {
    return numeric::Dispatch(type_, [&](auto tag) -> Status {
      constexpr ElementType kType = decltype(tag)::value;
      using C = typename numeric::Traits<kType>::Compute;
      if constexpr (numeric::kIsPred<C>) {
        return MakeError("{}: pred is not supported", name());
      } else {
        return Run<kType>(io);
      }
    });
  }
};

}  // namespace

std::string SelectAndScatterCodeletName(ElementType type, uint32_t rank) {
  return fmt::format("tileprof::SelectAndScatter<{},{}>", PoplarName(type), rank);
}

Expected<std::unique_ptr<Codelet>> MakeSelectAndScatterCodelet(ElementType type, uint32_t rank) {
  if (rank == 0 || rank > kMaxRank) {
    return MakeError("select-and-scatter rank {} outside [1, {}]", rank, kMaxRank);
  }
  if (type == ElementType::kPred) return MakeError("select-and-scatter of pred");
  return std::unique_ptr<Codelet>(new SelectAndScatterCodelet(type, rank));
}

}  // namespace tileprof::engine
