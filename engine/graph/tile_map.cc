// TileMap: disjoint runs of a variable's elements per tile. See tile_map.h.
#include "engine/graph/tile_map.h"

#include <algorithm>
#include <iterator>
#include <optional>

namespace tileprof::engine {

void TileMap::Assign(uint64_t begin, uint64_t end, uint32_t tile) {
  if (begin >= end) return;
  // Runs [i, j) overlap [begin, end).
  auto i = std::partition_point(runs_.begin(), runs_.end(),
                                [begin](const TileRun& run) { return run.end <= begin; });
  auto j =
      std::partition_point(i, runs_.end(), [end](const TileRun& run) { return run.begin < end; });
  TileRun run{begin, end, tile};
  std::optional<TileRun> left, right;
  if (i != j && i->begin < begin) {
    if (i->tile == tile)
      run.begin = i->begin;
    else
      left = TileRun{i->begin, begin, i->tile};
  }
  if (i != j && std::prev(j)->end > end) {
    if (std::prev(j)->tile == tile)
      run.end = std::prev(j)->end;
    else
      right = TileRun{end, std::prev(j)->end, std::prev(j)->tile};
  }
  // Neighbours that touch it on the same tile join it.
  if (!left && i != runs_.begin() && std::prev(i)->end == run.begin && std::prev(i)->tile == tile) {
    --i;
    run.begin = i->begin;
  }
  if (!right && j != runs_.end() && j->begin == run.end && j->tile == tile) {
    run.end = j->end;
    ++j;
  }
  TileRun replacement[3];
  size_t n = 0;
  if (left) replacement[n++] = *left;
  replacement[n++] = run;
  if (right) replacement[n++] = *right;
  // Overwrite what fits in [i, j), then erase the rest or insert the excess.
  const auto overwrite = static_cast<size_t>(std::min<ptrdiff_t>(j - i, static_cast<ptrdiff_t>(n)));
  i = std::copy_n(replacement, overwrite, i);
  if (overwrite == n)
    runs_.erase(i, j);
  else
    runs_.insert(j, replacement + overwrite, replacement + n);
}

std::vector<std::pair<uint64_t, uint64_t>> TileMap::Gaps(uint64_t size) const {
  std::vector<std::pair<uint64_t, uint64_t>> gaps;
  ForEachPiece(0, size, [&](uint64_t begin, uint64_t end, std::optional<uint32_t> tile) {
    if (!tile) gaps.emplace_back(begin, end);
  });
  return gaps;
}

}  // namespace tileprof::engine
