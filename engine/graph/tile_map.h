// TileMap: which tile holds each element of one variable, as a set of
// disjoint runs. Assigning a range overrides what was there (Poplar's
// setTileMapping semantics: the last mapping of an element wins), so the map
// always gives at most one tile per element; elements never assigned are
// gaps, which graph validation reports.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <vector>

namespace tileprof::engine {

// Elements [begin, end) of a variable on `tile`.
struct TileRun {
  uint64_t begin = 0;
  uint64_t end = 0;
  uint32_t tile = 0;
  bool operator==(const TileRun&) const = default;
};

class TileMap {
 public:
  // Maps [begin, end) to `tile`, replacing earlier mappings of those
  // elements and merging with neighbouring runs on the same tile.
  // O(log n + runs replaced).
  void Assign(uint64_t begin, uint64_t end, uint32_t tile);

  // The runs in element order.
  std::vector<TileRun> Runs() const;
  // The maximal ranges within [0, size) that no run covers.
  std::vector<std::pair<uint64_t, uint64_t>> Gaps(uint64_t size) const;
  // Splits [begin, end) at run boundaries and calls
  // f(piece_begin, piece_end, std::optional<uint32_t> tile) in order, with
  // nullopt for unmapped pieces.
  template <typename F>
  void ForEachPiece(uint64_t begin, uint64_t end, F&& f) const;

 private:
  struct Run {
    uint64_t end;
    uint32_t tile;
  };
  // Splits the run containing `pos` (if pos falls strictly inside one) in two.
  void SplitAt(uint64_t pos);

  std::map<uint64_t, Run> runs_;  // keyed by begin
};

template <typename F>
void TileMap::ForEachPiece(uint64_t begin, uint64_t end, F&& f) const {
  auto it = runs_.upper_bound(begin);
  if (it != runs_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end > begin) it = prev;
  }
  uint64_t pos = begin;
  while (pos < end) {
    if (it == runs_.end() || it->first >= end) {
      f(pos, end, std::optional<uint32_t>());
      return;
    }
    if (it->first > pos) {
      f(pos, it->first, std::optional<uint32_t>());
      pos = it->first;
    }
    const uint64_t piece_end = it->second.end < end ? it->second.end : end;
    f(pos, piece_end, std::optional<uint32_t>(it->second.tile));
    pos = piece_end;
    ++it;
  }
}

}  // namespace tileprof::engine
