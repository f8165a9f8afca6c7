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
  AssignNow(begin, end, tile);
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

void TileMap::AssignNow(uint64_t begin, uint64_t end, uint32_t tile) {
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
