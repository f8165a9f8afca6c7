// TileMap: disjoint runs of a variable's elements per tile. See tile_map.h.
#include "engine/graph/tile_map.h"

#include <iterator>

namespace tileprof::engine {

void TileMap::SplitAt(uint64_t pos) {
  auto it = runs_.upper_bound(pos);
  if (it == runs_.begin()) return;
  --it;
  if (it->first < pos && pos < it->second.end) {
    runs_.emplace(pos, Run{it->second.end, it->second.tile});
    it->second.end = pos;
  }
}

void TileMap::Assign(uint64_t begin, uint64_t end, uint32_t tile) {
  if (begin >= end) return;
  SplitAt(begin);
  SplitAt(end);
  runs_.erase(runs_.lower_bound(begin), runs_.lower_bound(end));
  auto it = runs_.emplace(begin, Run{end, tile}).first;
  // Merge with the run after, then the run before.
  auto next = std::next(it);
  if (next != runs_.end() && next->first == end && next->second.tile == tile) {
    it->second.end = next->second.end;
    runs_.erase(next);
  }
  if (it != runs_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end == begin && prev->second.tile == tile) {
      prev->second.end = it->second.end;
      runs_.erase(it);
    }
  }
}

std::vector<TileRun> TileMap::Runs() const {
  std::vector<TileRun> runs;
  runs.reserve(runs_.size());
  for (const auto& [begin, run] : runs_) runs.push_back({begin, run.end, run.tile});
  return runs;
}

std::vector<std::pair<uint64_t, uint64_t>> TileMap::Gaps(uint64_t size) const {
  std::vector<std::pair<uint64_t, uint64_t>> gaps;
  ForEachPiece(0, size, [&](uint64_t begin, uint64_t end, std::optional<uint32_t> tile) {
    if (!tile) gaps.emplace_back(begin, end);
  });
  return gaps;
}

}  // namespace tileprof::engine
