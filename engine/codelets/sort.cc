// Sort codelet. See sort.h.
#include "engine/codelets/sort.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "engine/codelets/cost_model.h"
#include "engine/codelets/families.h"
#include "engine/codelets/numeric.h"

namespace tileprof::engine {
namespace {

constexpr uint32_t kMaxRank = 16;
constexpr uint32_t kMaxOperands = 16;
constexpr std::string_view kOrderNames[] = {"lt",       "gt",         "lt_total",
                                            "gt_total", "lt_nanlast", "gt_nanlast"};

bool IsFloatKey(ElementType type) {
  return numeric::Dispatch(type, [](auto tag) {
    return numeric::kIsFloat<typename numeric::Traits<decltype(tag)::value>::Compute>;
  });
}

// A signed integer whose order is XLA's total order of the float.
int64_t TotalKey(double v) {
  int64_t bits = std::bit_cast<int64_t>(v);
  return bits < 0 ? bits ^ INT64_MAX : bits;
}

// The stable merge sort of perm by less(a, b); never reads out of range
// whatever less answers.
template <typename Less>
void MergeSort(std::vector<uint32_t>& perm, Less less) {
  std::vector<uint32_t> tmp(perm.size());
  for (size_t width = 1; width < perm.size(); width *= 2) {
    for (size_t lo = 0; lo < perm.size(); lo += 2 * width) {
      const size_t mid = std::min(lo + width, perm.size()),
                   hi = std::min(lo + 2 * width, perm.size());
      size_t a = lo, b = mid, o = lo;
      while (a < mid && b < hi) tmp[o++] = less(perm[b], perm[a]) ? perm[b++] : perm[a++];
      while (a < mid) tmp[o++] = perm[a++];
      while (b < hi) tmp[o++] = perm[b++];
    }
    perm.swap(tmp);
  }
}

// Keys [base, base + count * stride) of one array, `stride` apart.
struct KeyRun {
  std::span<const std::byte> data;
  uint64_t base = 0;
  uint64_t count = 0;
  uint64_t stride = 1;
};

// Reads the keys of `runs` one after the other (key i of the second run is
// number runs[0].count + i) as `order` compares them, and calls f(less),
// less(i, j) true when key i sorts before key j. Keys are read once: the
// comparisons of a sort or a merge then never convert an element again.
template <typename F>
void WithOrderedKeys(ElementType type, SortOrder order, std::span<const KeyRun> runs, F&& f) {
  numeric::Dispatch(type, [&](auto tag) {
    constexpr ElementType kType = decltype(tag)::value;
    using C = typename numeric::Traits<kType>::Compute;
    std::vector<C> v;
    size_t count = 0;
    for (const KeyRun& run : runs) count += run.count;
    v.reserve(count);
    for (const KeyRun& run : runs) {
      for (uint64_t i = 0; i < run.count; ++i)
        v.push_back(numeric::Get<kType>(run.data, run.base + i * run.stride));
    }
    if constexpr (numeric::kIsFloat<C>) {
      if (order != SortOrder::kLt && order != SortOrder::kGt) {
        std::vector<int64_t> t(v.size());
        for (size_t i = 0; i < v.size(); ++i) {
          double x = static_cast<double>(v[i]);
          if (order == SortOrder::kLtNanLast || order == SortOrder::kGtNanLast) {
            // jax: every NaN becomes the positive quiet NaN, -0 becomes +0.
            if (std::isnan(x))
              x = std::copysign(std::numeric_limits<double>::quiet_NaN(), 1.0);
            else if (x == 0)
              x = 0.0;
          }
          t[i] = TotalKey(x);
        }
        const bool lt = order == SortOrder::kLtTotal || order == SortOrder::kLtNanLast;
        f([&](uint32_t a, uint32_t b) { return lt ? t[a] < t[b] : t[a] > t[b]; });
        return;
      }
    }
    const bool lt =
        order == SortOrder::kLt || order == SortOrder::kLtTotal || order == SortOrder::kLtNanLast;
    f([&](uint32_t a, uint32_t b) { return lt ? v[a] < v[b] : v[a] > v[b]; });
  });
}

class SortCodelet final : public Codelet {
 public:
  SortCodelet(uint32_t rank, uint32_t key, SortOrder order, std::vector<ElementType> types)
      : Codelet(SortCodeletName(rank, key, order, types), ExecutionKind::kWorker, Fields(types),
                Params(rank), kSortCodeBytes),
        rank_(rank),
        key_(key),
        order_(order),
        types_(std::move(types)) {}

  Status CheckShape(const VertexShape& shape) const override {
    const auto dims = shape.params.subspan(1, rank_);
    const uint32_t dim = shape.params[1 + rank_];
    if (dim >= rank_) return MakeError("dim {} outside rank {}", dim, rank_);
    uint64_t total = 1, box = 1;
    for (uint32_t d : dims) total *= d;
    for (uint32_t d = 0; d < rank_; ++d) {
      const uint32_t lo = BoxLo(shape.params, d), size = BoxSize(shape.params, d);
      if (static_cast<uint64_t>(lo) + size > dims[d] || (d == dim && size != dims[d])) {
        return MakeError("box [{}, +{}) in dimension {} of {} (the sorted dimension is whole)", lo,
                         size, d, dims[d]);
      }
      box *= size;
    }
    const size_t n = types_.size();
    for (size_t k = 0; k < n; ++k) {
      if (shape.field_elements[k] != box) {
        return MakeError("field 'in{}' has {} elements, the box {}", k, shape.field_elements[k],
                         box);
      }
      TILEPROF_RETURN_IF_ERROR(CheckSameSize(*this, shape, n, n + k));
    }
    const uint64_t first = shape.params[0];
    if (first > total || shape.field_elements[n] > total - first) {
      return MakeError("field 'out0' has {} elements from element {}, beyond the {} of the result",
                       shape.field_elements[n], first, total);
    }
    return {};
  }

  uint64_t EstimateCycles(const VertexShape& shape, const Target&) const override {
    const auto dims = shape.params.subspan(1, rank_);
    const uint32_t dim = std::min(shape.params[1 + rank_], rank_ - 1);
    uint64_t total = 1, inner = 1;
    for (uint32_t d = 0; d < rank_; ++d) {
      total *= dims[d];
      if (d > dim) inner *= dims[d];
    }
    const uint64_t line = dims[dim];
    if (line == 0) return cost::WorkerLoop(0, 1, 1);
    const uint64_t lines = total / line;
    const uint64_t count = shape.field_elements[types_.size()];
    // Lines a run touches: consecutive elements share a line when dim is
    // the innermost; otherwise each is on its own (up to all lines).
    const uint64_t touched = std::min(lines, inner == 1 ? count / line + 2 : count);
    uint64_t log = 0;
    while ((uint64_t{1} << log) < line) ++log;
    return cost::WorkerLoop(1, 1,
                            touched * line * log * kSortCyclesPerComparison +
                                count * types_.size() * kSortCyclesPerElement);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const auto dims = io.params.subspan(1, rank_);
    const uint32_t dim = io.params[1 + rank_];
    std::vector<uint32_t> box(rank_);
    for (uint32_t d = 0; d < rank_; ++d) box[d] = BoxSize(io.params, d);
    uint64_t box_inner = 1;
    for (uint32_t d = dim + 1; d < rank_; ++d) box_inner *= box[d];
    const uint64_t line = dims[dim];
    const size_t n = types_.size();
    const uint64_t first = io.params[0], count = Count(io, n);
    // The permutation of each line touched, by the line's first box element.
    std::map<uint64_t, std::vector<uint32_t>> perms;
    std::vector<uint64_t> c(rank_);
    uint64_t rest = first;
    for (uint32_t d = rank_; d-- > 0;) {
      c[d] = dims[d] == 0 ? 0 : rest % dims[d];
      rest = dims[d] == 0 ? rest : rest / dims[d];
    }
    for (uint64_t q = 0; q < count; ++q) {
      // The line's first element in box coordinates (the sorted one at 0).
      uint64_t base = 0;
      for (uint32_t d = 0; d < rank_; ++d) {
        const uint64_t lo = BoxLo(io.params, d);
        const uint64_t x = d == dim ? 0 : c[d] - lo;
        if (d != dim && (c[d] < lo || x >= box[d])) {
          return MakeError("output element {} is outside the connected box in dimension {}",
                           first + q, d);
        }
        base = base * box[d] + x;
      }
      auto [it, added] = perms.try_emplace(base);
      if (added) it->second = SortLine(io.fields[key_], base, line, box_inner);
      const uint64_t from = base + it->second[c[dim]] * box_inner;
      for (size_t k = 0; k < n; ++k) {
        const size_t size = SizeOf(types_[k]);
        std::memcpy(io.fields[n + k].data() + q * size, io.fields[k].data() + from * size, size);
      }
      for (uint32_t d = rank_; d-- > 0;) {
        if (++c[d] < dims[d]) break;
        c[d] = 0;
      }
    }
    return {};
  }

 private:
  std::vector<uint32_t> SortLine(std::span<const std::byte> keys, uint64_t base, uint64_t line,
                                 uint64_t inner) const {
    std::vector<uint32_t> perm(line);
    for (uint32_t i = 0; i < line; ++i) perm[i] = i;
    const KeyRun run{keys, base, line, inner};
    WithOrderedKeys(types_[key_], order_, std::span(&run, 1),
                    [&](auto less) { MergeSort(perm, less); });
    return perm;
  }

  static std::vector<FieldSpec> Fields(const std::vector<ElementType>& types) {
    std::vector<FieldSpec> fields;
    for (size_t k = 0; k < types.size(); ++k)
      fields.push_back(In(fmt::format("in{}", k), types[k]));
    for (size_t k = 0; k < types.size(); ++k) {
      fields.push_back(Out(fmt::format("out{}", k), types[k], VectorLayout::kSpan));
    }
    return fields;
  }
  static std::vector<std::string> Params(uint32_t rank) {
    std::vector<std::string> params = {"first"};
    for (uint32_t d = 0; d < rank; ++d) params.push_back(fmt::format("size{}", d));
    params.push_back("dim");
    for (uint32_t d = 0; d < rank; ++d) params.push_back(fmt::format("boxLo{}", d));
    for (uint32_t d = 0; d < rank; ++d) params.push_back(fmt::format("boxSize{}", d));
    return params;
  }
  uint32_t BoxLo(std::span<const uint32_t> p, uint32_t d) const { return p[2 + rank_ + d]; }
  uint32_t BoxSize(std::span<const uint32_t> p, uint32_t d) const { return p[2 + 2 * rank_ + d]; }

  uint32_t rank_, key_;
  SortOrder order_;
  std::vector<ElementType> types_;
};

// Merge-split, one side of a step of a sort spread over tiles: the stable
// merge of two sorted blocks a (first) and b, keyed by operand `key`, of
// which the vertex writes the first |out| elements (upper = 0) or the last
// |out| (upper = 1) into every out<k>.
class SortMergeCodelet final : public Codelet {
 public:
  SortMergeCodelet(uint32_t key, SortOrder order, std::vector<ElementType> types)
      : Codelet(SortMergeCodeletName(key, order, types), ExecutionKind::kWorker, Fields(types),
                {"upper"}, kSortMergeCodeBytes),
        key_(key),
        order_(order),
        types_(std::move(types)) {}

  Status CheckShape(const VertexShape& shape) const override {
    const size_t n = types_.size();
    for (size_t k = 1; k < n; ++k) {
      TILEPROF_RETURN_IF_ERROR(CheckSameSize(*this, shape, 0, k));
      TILEPROF_RETURN_IF_ERROR(CheckSameSize(*this, shape, n, n + k));
      TILEPROF_RETURN_IF_ERROR(CheckSameSize(*this, shape, 2 * n, 2 * n + k));
    }
    const uint64_t a = shape.field_elements[0], b = shape.field_elements[n],
                   out = shape.field_elements[2 * n];
    if (out > a + b) {
      return MakeError("field 'out0' has {} elements, more than the {} + {} merged", out, a, b);
    }
    if (shape.params[0] > 1) return MakeError("upper is {} (0 or 1)", shape.params[0]);
    return {};
  }

  uint64_t EstimateCycles(const VertexShape& shape, const Target&) const override {
    const uint64_t out = shape.field_elements[2 * types_.size()];
    return cost::WorkerLoop(out, 1,
                            kSortCyclesPerComparison + types_.size() * kSortCyclesPerElement);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const size_t n = types_.size();
    const uint64_t na = Count(io, 0), nb = Count(io, n), count = Count(io, 2 * n);
    const bool upper = io.params[0] != 0;
    // Element q of the output comes from a[i] (from_b false) or b[j].
    const auto put = [&](uint64_t q, bool from_b, uint64_t at) {
      for (size_t k = 0; k < n; ++k) {
        const size_t size = SizeOf(types_[k]);
        std::memcpy(io.fields[2 * n + k].data() + q * size,
                    io.fields[(from_b ? n : 0) + k].data() + at * size, size);
      }
    };
    const std::array<KeyRun, 2> runs = {KeyRun{io.fields[key_], 0, na, 1},
                                        KeyRun{io.fields[n + key_], 0, nb, 1}};
    WithOrderedKeys(types_[key_], order_, runs, [&](auto less) {
      const auto b_key = [&](uint64_t j) { return static_cast<uint32_t>(na + j); };
      const auto a_key = [](uint64_t i) { return static_cast<uint32_t>(i); };
      if (!upper) {
        // From the front: b's element first only when it sorts strictly
        // before a's (a tie keeps a, which came first: stable).
        uint64_t i = 0, j = 0;
        for (uint64_t q = 0; q < count; ++q) {
          const bool from_b = j < nb && (i == na || less(b_key(j), a_key(i)));
          put(q, from_b, from_b ? j++ : i++);
        }
      } else {
        // From the back: a's element last only when b's sorts strictly
        // before it.
        uint64_t i = na, j = nb;
        for (uint64_t q = count; q-- > 0;) {
          const bool from_a = i > 0 && (j == 0 || less(b_key(j - 1), a_key(i - 1)));
          put(q, !from_a, from_a ? --i : --j);
        }
      }
    });
    return {};
  }

 private:
  static std::vector<FieldSpec> Fields(const std::vector<ElementType>& types) {
    std::vector<FieldSpec> fields;
    for (const char* side : {"a", "b"}) {
      for (size_t k = 0; k < types.size(); ++k)
        fields.push_back(In(fmt::format("{}{}", side, k), types[k]));
    }
    for (size_t k = 0; k < types.size(); ++k) {
      fields.push_back(Out(fmt::format("out{}", k), types[k], VectorLayout::kSpan));
    }
    return fields;
  }

  uint32_t key_;
  SortOrder order_;
  std::vector<ElementType> types_;
};

// The checks both sort codelets make of their kind of arguments.
Status CheckSortArguments(uint32_t key, SortOrder order, std::span<const ElementType> types) {
  if (types.empty() || types.size() > kMaxOperands) {
    return MakeError("sort of {} operands (1 to {})", types.size(), kMaxOperands);
  }
  if (key >= types.size()) return MakeError("sort key {} of {} operands", key, types.size());
  if (order != SortOrder::kLt && order != SortOrder::kGt && !IsFloatKey(types[key])) {
    return MakeError("sort order {} on a {} key", SortOrderName(order), HloName(types[key]));
  }
  return {};
}

}  // namespace

std::string_view SortOrderName(SortOrder order) { return kOrderNames[static_cast<size_t>(order)]; }

std::optional<SortOrder> ParseSortOrder(std::string_view name) {
  for (size_t i = 0; i < std::size(kOrderNames); ++i) {
    if (kOrderNames[i] == name) return static_cast<SortOrder>(i);
  }
  return std::nullopt;
}

std::string SortCodeletName(uint32_t rank, uint32_t key, SortOrder order,
                            std::span<const ElementType> types) {
  std::string name = fmt::format("tileprof::Sort<{},{},{}", rank, key, SortOrderName(order));
  for (ElementType type : types) name += fmt::format(",{}", PoplarName(type));
  return name + ">";
}

Expected<std::unique_ptr<Codelet>> MakeSortCodelet(uint32_t rank, uint32_t key, SortOrder order,
                                                   std::vector<ElementType> types) {
  if (rank < 1 || rank > kMaxRank) return MakeError("sort rank {} outside [1, {}]", rank, kMaxRank);
  TILEPROF_RETURN_IF_ERROR(CheckSortArguments(key, order, types));
  return std::unique_ptr<Codelet>(new SortCodelet(rank, key, order, std::move(types)));
}

std::string SortMergeCodeletName(uint32_t key, SortOrder order,
                                 std::span<const ElementType> types) {
  std::string name = fmt::format("tileprof::SortMerge<{},{}", key, SortOrderName(order));
  for (ElementType type : types) name += fmt::format(",{}", PoplarName(type));
  return name + ">";
}

Expected<std::unique_ptr<Codelet>> MakeSortMergeCodelet(uint32_t key, SortOrder order,
                                                        std::vector<ElementType> types) {
  TILEPROF_RETURN_IF_ERROR(CheckSortArguments(key, order, types));
  return std::unique_ptr<Codelet>(new SortMergeCodelet(key, order, std::move(types)));
}

}  // namespace tileprof::engine
