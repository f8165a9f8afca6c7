// TileMap: disjoint runs of a variable's elements per tile. See tile_map.h.
#include "engine/graph/tile_map.h"

#include <algorithm>
#include <iterator>
#include <optional>

namespace tileprof::engine {

void TileMap::Assign(uint64_t begin, uint64_t end, uint32_t tile) {
  if (begin >= end) return;
  if (!pending_.empty() || (!runs_.empty() && begin < runs_.back().end)) {
    pending_.push_back({begin, end, tile});
    return;
  }
  // Past the last run (a linear mapping, a stored mapping restored): it
  // joins that run or follows it, with no search.
  if (!runs_.empty() && runs_.back().end == begin && runs_.back().tile == tile)
    runs_.back().end = end;
  else
    runs_.push_back({begin, end, tile});
}

void TileMap::ApplyPending() const {
  // Disjoint assignments (the usual case: a new tensor mapped block by
  // block) sort into place; otherwise every point takes the tile of the
  // latest assignment covering it, swept in element order.
  std::vector<TileRun> added = std::move(pending_);
  pending_.clear();
  std::vector<size_t> order(added.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return added[a].begin < added[b].begin; });
  bool disjoint = true;
  for (size_t k = 1; k < order.size() && disjoint; ++k)
    disjoint = added[order[k]].begin >= added[order[k - 1]].end;
  if (disjoint) {
    bool clear_of_existing = true;
    for (size_t k = 0; k < order.size() && clear_of_existing; ++k) {
      const TileRun& run = added[order[k]];
      auto it = std::partition_point(runs_.begin(), runs_.end(),
                                     [&](const TileRun& r) { return r.end <= run.begin; });
      clear_of_existing = it == runs_.end() || it->begin >= run.end;
    }
    if (clear_of_existing) {
      std::vector<TileRun> merged;
      merged.reserve(runs_.size() + added.size());
      size_t a = 0;
      auto push = [&](const TileRun& run) {
        if (!merged.empty() && merged.back().end == run.begin && merged.back().tile == run.tile)
          merged.back().end = run.end;
        else
          merged.push_back(run);
      };
      for (size_t k = 0; k < order.size(); ++k) {
        const TileRun& run = added[order[k]];
        while (a < runs_.size() && runs_[a].begin < run.begin) push(runs_[a++]);
        push(run);
      }
      while (a < runs_.size()) push(runs_[a++]);
      runs_ = std::move(merged);
      return;
    }
  }
  // The general case: paint in order of age over a sorted set of cuts.
  std::vector<uint64_t> cuts;
  cuts.reserve(2 * (runs_.size() + added.size()));
  for (const TileRun& r : runs_) cuts.push_back(r.begin), cuts.push_back(r.end);
  for (const TileRun& r : added) cuts.push_back(r.begin), cuts.push_back(r.end);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  // Each elementary interval [cuts[i], cuts[i+1]) takes the newest owner.
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> owner(cuts.empty() ? 0 : cuts.size() - 1, kNone);
  auto paint = [&](const TileRun& r) {
    auto lo = std::lower_bound(cuts.begin(), cuts.end(), r.begin) - cuts.begin();
    auto hi = std::lower_bound(cuts.begin(), cuts.end(), r.end) - cuts.begin();
    for (auto i = lo; i < hi; ++i) owner[static_cast<size_t>(i)] = r.tile;
  };
  for (const TileRun& r : runs_) paint(r);
  for (const TileRun& r : added) paint(r);
  std::vector<TileRun> result;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    if (owner[i] == kNone) continue;
    if (!result.empty() && result.back().end == cuts[i] && result.back().tile == owner[i])
      result.back().end = cuts[i + 1];
    else
      result.push_back({cuts[i], cuts[i + 1], owner[i]});
  }
  runs_ = std::move(result);
}

std::vector<std::pair<uint64_t, uint64_t>> TileMap::Gaps(uint64_t size) const {
  std::vector<std::pair<uint64_t, uint64_t>> gaps;
  ForEachPiece(0, size, [&](uint64_t begin, uint64_t end, std::optional<uint32_t> tile) {
    if (!tile) gaps.emplace_back(begin, end);
  });
  return gaps;
}

}  // namespace tileprof::engine
