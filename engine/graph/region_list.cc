#include "engine/graph/region_list.h"

#include <algorithm>
#include <queue>
#include <vector>

namespace tileprof::engine {

void AppendStridedRows(std::vector<StridedRegion>& runs, const StridedRegion& rows) {
  for (uint32_t k = 0; k < rows.count;) {
    // A row as AppendStrided takes it...
    size_t used = runs.size();
    runs.emplace_back();
    AppendStrided(runs.data(), used, rows.At(k++));
    runs.resize(used);
    // ...then every following row the last run takes: each is one stride on
    // from the one before, which continues a run of one row (its stride
    // then set) or a run of that stride, up to the count's limit.
    StridedRegion& last = runs.back();
    if (k == rows.count || (last.count > 1 && last.stride != rows.stride)) continue;
    const auto take = static_cast<uint32_t>(
        std::min<uint64_t>(rows.count - k, uint64_t{UINT32_MAX} - last.count));
    if (take == 0) continue;
    last.stride = rows.stride;
    last.count += take;
    k += take;
  }
}

size_t CountStridedRuns(std::span<const TensorRegion> regions) {
  // AppendStrided only looks at the last run: keep that one and count.
  StridedRegion window[2];
  size_t used = 0, runs = 0;
  for (const TensorRegion& region : regions) {
    AppendStrided(window, used, region);
    if (used == 2) {
      window[0] = window[1];
      used = 1;
      ++runs;
    }
  }
  return runs + used;
}

namespace {

uint64_t Distance(int64_t stride) {
  return stride < 0 ? 0 - static_cast<uint64_t>(stride) : static_cast<uint64_t>(stride);
}

// Whether the regions of `runs`, whose hulls overlap, share an element: a
// merge of the runs' regions in element order (each run's are disjoint and
// ordered: ascending, or descending for a negative stride), through a heap
// of one cursor per run.
Overlap InterleavedRunsAlias(std::span<const StridedRegion> runs) {
  struct Cursor {
    uint64_t begin;
    size_t run;
    uint32_t next;  // regions of the run taken so far
    bool operator>(const Cursor& other) const { return begin > other.begin; }
  };
  const auto region = [&](size_t run, uint32_t taken) {
    const StridedRegion& r = runs[run];
    return r.At(r.stride >= 0 ? taken : r.count - 1 - taken);
  };
  std::priority_queue<Cursor, std::vector<Cursor>, std::greater<>> heap;
  for (size_t i = 0; i < runs.size(); ++i) heap.push({region(i, 0).begin, i, 0});
  uint64_t covered = 0, taken = 0;
  bool any = false;
  while (!heap.empty()) {
    if (++taken > kMaxInterleavedRegions) return Overlap::kTooManyToCheck;
    Cursor cursor = heap.top();
    heap.pop();
    const TensorRegion piece = region(cursor.run, cursor.next);
    if (any && piece.begin < covered) return Overlap::kRepeats;
    covered = std::max(covered, piece.end);
    any = true;
    if (++cursor.next < runs[cursor.run].count) {
      cursor.begin = region(cursor.run, cursor.next).begin;
      heap.push(cursor);
    }
  }
  return Overlap::kNone;
}

}  // namespace

Overlap RunsHaveAliases(std::span<const StridedRegion> runs) {
  std::vector<StridedRegion> sorted;
  sorted.reserve(runs.size());
  for (const StridedRegion& run : runs) {
    if (run.length == 0 || run.count == 0) continue;
    if (run.count > 1 && Distance(run.stride) < run.length) return Overlap::kRepeats;
    sorted.push_back(run);
  }
  const auto before = [](const StridedRegion& a, const StridedRegion& b) {
    return a.variable != b.variable ? a.variable < b.variable : a.Hull().begin < b.Hull().begin;
  };
  if (!std::is_sorted(sorted.begin(), sorted.end(), before))
    std::sort(sorted.begin(), sorted.end(), before);
  // Groups of runs whose hulls overlap; only those are merged region by region.
  for (size_t first = 0; first < sorted.size();) {
    size_t last = first + 1;
    uint64_t end = sorted[first].Hull().end;
    while (last < sorted.size() && sorted[last].variable == sorted[first].variable &&
           sorted[last].Hull().begin < end) {
      end = std::max(end, sorted[last].Hull().end);
      ++last;
    }
    if (last - first > 1) {
      const Overlap overlap =
          InterleavedRunsAlias(std::span<const StridedRegion>(sorted).subspan(first, last - first));
      if (overlap != Overlap::kNone) return overlap;
    }
    first = last;
  }
  return Overlap::kNone;
}

}  // namespace tileprof::engine
