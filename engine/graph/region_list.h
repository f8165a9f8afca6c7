// How a graph keeps the regions of a vertex field: runs of equally long
// regions at a fixed stride, expanded back to TensorRegions when read.
// A field cut from a transposed or sliced tensor lists one region per row
// (RoPE's x[..., :-1] of [2,8192,32,128]: 524,288 of them); kept one by one
// at 24 bytes each, the fields of Llama-3.1 8B's training step needed 1.3 G
// regions (31 GB), more host memory than the machine had. Rows of such a view
// are at a constant distance from one another, so a run of them is stored
// in 32 bytes, whatever its length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <vector>

#include "engine/graph/tensor.h"

namespace tileprof::engine {

// `count` regions of `length` elements of `variable`, the k-th starting at
// begin + k * stride (stride may be zero or negative: broadcasts and
// reversed views repeat or step back).
struct StridedRegion {
  uint64_t begin = 0;
  uint64_t length = 0;
  int64_t stride = 0;
  VariableId variable = 0;
  uint32_t count = 0;

  TensorRegion At(uint32_t k) const {
    // Unsigned: a negative stride wraps to the right element.
    const uint64_t start = begin + static_cast<uint64_t>(stride) * k;
    return {variable, start, start + length};
  }
  // The lowest and highest element any of the regions covers, as a region.
  TensorRegion Hull() const {
    const TensorRegion first = At(0), last = At(count - 1);
    return stride >= 0 ? TensorRegion{variable, first.begin, last.end}
                       : TensorRegion{variable, last.begin, first.end};
  }
  bool operator==(const StridedRegion&) const = default;
};

// Appends `region` to `runs`, extending the last run when the region
// continues its stride.
inline void AppendStrided(StridedRegion* runs, size_t& used, const TensorRegion& region) {
  if (used > 0) {
    StridedRegion& last = runs[used - 1];
    const uint64_t length = region.end - region.begin;
    if (last.variable == region.variable && last.length == length && last.count < UINT32_MAX) {
      const TensorRegion tail = last.At(last.count - 1);
      const auto step = static_cast<int64_t>(region.begin - tail.begin);
      if (last.count == 1 || step == last.stride) {
        last.stride = step;
        ++last.count;
        return;
      }
    }
  }
  runs[used++] = StridedRegion{region.begin, region.end - region.begin, 0, region.variable, 1};
}

// The number of runs AppendStrided makes of `regions` (to size storage).
size_t CountStridedRuns(std::span<const TensorRegion> regions);

// Appends the regions of `rows` to `runs` exactly as AppendStrided would
// one by one, in a few steps rather than one per row: a box of a tensor cut
// row by row made tens of millions of regions that were only folded back
// into runs (mobilenet_v2's convolutions).
void AppendStridedRows(std::vector<StridedRegion>& runs, const StridedRegion& rows);

// Whether two of the regions the runs hold share an element, without
// listing the regions unless runs interleave (their hulls overlap); those
// are merged region by region, at most kMaxInterleavedRegions of them (a
// crafted file could otherwise make billions: kTooManyToCheck). The runs
// must lie in their variables (Graph::CheckRuns), so no address wraps.
enum class Overlap : uint8_t { kNone, kRepeats, kTooManyToCheck };
inline constexpr uint64_t kMaxInterleavedRegions = uint64_t{1} << 26;
Overlap RunsHaveAliases(std::span<const StridedRegion> runs);

// A field's regions as a read-only sequence of TensorRegions (by value).
class RegionRange {
 public:
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = TensorRegion;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = TensorRegion;

    Iterator() = default;
    Iterator(const StridedRegion* run, uint32_t k) : run_(run), k_(k) {}
    TensorRegion operator*() const { return run_->At(k_); }
    Iterator& operator++() {
      if (++k_ == run_->count) {
        ++run_;
        k_ = 0;
      }
      return *this;
    }
    Iterator operator++(int) {
      Iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const Iterator&) const = default;

   private:
    const StridedRegion* run_ = nullptr;
    uint32_t k_ = 0;
  };

  using value_type = TensorRegion;
  using iterator = Iterator;
  using const_iterator = Iterator;

  RegionRange() = default;
  RegionRange(std::span<const StridedRegion> runs, uint64_t size) : runs_(runs), size_(size) {}
  Iterator begin() const { return {runs_.data(), 0}; }
  Iterator end() const { return {runs_.data() + runs_.size(), 0}; }
  // Regions, not runs.
  uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  TensorRegion front() const { return runs_.front().At(0); }
  TensorRegion back() const { return runs_.back().At(runs_.back().count - 1); }
  // The stored runs, for walks that can take a whole run at once.
  std::span<const StridedRegion> runs() const { return runs_; }

 private:
  std::span<const StridedRegion> runs_;
  uint64_t size_ = 0;
};

}  // namespace tileprof::engine
