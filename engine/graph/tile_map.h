// TileMap: which tile holds each element of one variable, as a set of
// disjoint runs. Assigning a range overrides what was there (Poplar's
// setTileMapping semantics: the last mapping of an element wins), so the map
// always gives at most one tile per element; elements never assigned are
// gaps, which graph validation reports.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
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
  // O(1) past the end of the map (how a tensor is mapped linearly: in
  // element order). Anywhere else the assignment waits in a list and all
  // waiting ones are applied together, in O(n log n), when the map is read
  // next: a planned operation maps its output block by block, out of
  // element order, and inserting each run into the middle of the sorted
  // runs moved the tail every time (quadratic: 70% of a ResNet-50 compile).
  // Reading a map with waiting assignments is therefore not thread-safe:
  // Graph::FlushTileMappings() applies them all before parallel readers.
  void Assign(uint64_t begin, uint64_t end, uint32_t tile);

  void Reserve(size_t count) { runs_.reserve(count); }
  // The runs in element order.
  const std::vector<TileRun>& Runs() const {
    Flush();
    return runs_;
  }
  // Applies the waiting assignments.
  void Flush() const {
    if (!pending_.empty()) ApplyPending();
  }
  // The maximal ranges within [0, size) that no run covers.
  std::vector<std::pair<uint64_t, uint64_t>> Gaps(uint64_t size) const;
  // Splits [begin, end) at run boundaries and calls
  // f(piece_begin, piece_end, std::optional<uint32_t> tile) in order, with
  // nullopt for unmapped pieces.
  template <typename F>
  void ForEachPiece(uint64_t begin, uint64_t end, F&& f) const;
  // The same, calling f(piece_begin, piece_end, const TileRun* run) with the
  // run holding the piece (nullptr for unmapped pieces): the memory model
  // finds where a piece lies in its tile's storage from its run.
  template <typename F>
  void ForEachRunPiece(uint64_t begin, uint64_t end, F&& f) const;
  // ForEachRunPiece over the rows [begin + k * stride, + length), k < count,
  // in row order. A row is looked for first in the run the row before ended
  // in, then the next run: rows of a strided read mostly fall there, and the
  // search for every row was a sixth of mobilenet_v2's compile.
  template <typename F>
  void ForEachStridedRunPiece(uint64_t begin, uint64_t length, int64_t stride, uint32_t count,
                              F&& f) const;
  // The first run that ends after element `at`: the one holding it, or the
  // next (end of Runs() if none).
  std::vector<TileRun>::const_iterator FirstEndingAfter(uint64_t at) const;
  // The tile holding all of [begin, end), if one run holds it.
  std::optional<uint32_t> TileHolding(uint64_t begin, uint64_t end) const {
    const auto it = FirstEndingAfter(begin);
    if (it == runs_.end() || it->begin > begin || it->end < end) return std::nullopt;
    return it->tile;
  }

 private:
  // Disjoint and in element order. A sorted vector rather than a tree: the
  // memory model looks up every region of every vertex field here (over a
  // hundred million for mobilenet_v2), and a binary search over contiguous
  // runs stays in cache where a tree walk did not.
  mutable std::vector<TileRun> runs_;
  // Assignments not yet applied, in the order made (the later wins).
  mutable std::vector<TileRun> pending_;
  void ApplyPending() const;
  // The pieces of [begin, end) from `it`, the first run ending after begin;
  // returns the run holding the last piece (end of runs_ if none does).
  template <typename F>
  std::vector<TileRun>::const_iterator RunPiecesFrom(std::vector<TileRun>::const_iterator it,
                                                     uint64_t begin, uint64_t end, F&& f) const;
};

inline std::vector<TileRun>::const_iterator TileMap::FirstEndingAfter(uint64_t at) const {
  Flush();
  // A linear mapping cuts a variable into runs of nearly equal size, so the
  // run at the interpolated position is nearly always the one, where a
  // binary search over a variable spread on 1,472 tiles made eleven probes,
  // most of them cache misses: mobilenet_v2's compileGraph phase took 2.9 s
  // with the search alone, 2.1 s with the guess first.
  const size_t n = runs_.size();
  if (n > 4 && at >= runs_.front().begin && at < runs_.back().end) {
    const double span = static_cast<double>(runs_.back().end - runs_.front().begin);
    const double fraction = static_cast<double>(at - runs_.front().begin) / span;
    const size_t guess = std::min(n - 1, static_cast<size_t>(fraction * static_cast<double>(n)));
    for (size_t i = guess > 0 ? guess - 1 : 0; i <= guess + 1 && i < n; ++i) {
      if (runs_[i].end > at && (i == 0 || runs_[i - 1].end <= at))
        return runs_.begin() + static_cast<std::ptrdiff_t>(i);
    }
  }
  return std::partition_point(runs_.begin(), runs_.end(),
                              [at](const TileRun& run) { return run.end <= at; });
}

template <typename F>
std::vector<TileRun>::const_iterator TileMap::RunPiecesFrom(std::vector<TileRun>::const_iterator it,
                                                            uint64_t begin, uint64_t end,
                                                            F&& f) const {
  auto last = runs_.cend();
  uint64_t pos = begin;
  while (pos < end) {
    if (it == runs_.end() || it->begin >= end) {
      f(pos, end, static_cast<const TileRun*>(nullptr));
      break;
    }
    if (it->begin > pos) {
      f(pos, it->begin, static_cast<const TileRun*>(nullptr));
      pos = it->begin;
    }
    const uint64_t piece_end = it->end < end ? it->end : end;
    f(pos, piece_end, &*it);
    pos = piece_end;
    last = it;
    ++it;
  }
  return last;
}

template <typename F>
void TileMap::ForEachRunPiece(uint64_t begin, uint64_t end, F&& f) const {
  RunPiecesFrom(FirstEndingAfter(begin), begin, end, f);
}

template <typename F>
void TileMap::ForEachStridedRunPiece(uint64_t begin, uint64_t length, int64_t stride,
                                     uint32_t count, F&& f) const {
  if (length == 0) return;
  Flush();
  auto hint = runs_.cend();
  for (uint32_t k = 0; k < count; ++k) {
    // Unsigned: a negative stride wraps to the right element.
    const uint64_t row = begin + static_cast<uint64_t>(stride) * k;
    auto it = hint;
    // The run holding `row` is the first ending after it (runs are
    // disjoint and sorted).
    const auto holds = [row](const TileRun& run) { return run.begin <= row && row < run.end; };
    if (it == runs_.end() || !holds(*it)) {
      if (it != runs_.end() && it + 1 != runs_.end() && holds(*(it + 1)))
        ++it;
      else
        it = FirstEndingAfter(row);
    }
    const auto last = RunPiecesFrom(it, row, row + length, f);
    if (last != runs_.end()) hint = last;
  }
}

template <typename F>
void TileMap::ForEachPiece(uint64_t begin, uint64_t end, F&& f) const {
  auto it = FirstEndingAfter(begin);
  uint64_t pos = begin;
  while (pos < end) {
    if (it == runs_.end() || it->begin >= end) {
      f(pos, end, std::optional<uint32_t>());
      return;
    }
    if (it->begin > pos) {
      f(pos, it->begin, std::optional<uint32_t>());
      pos = it->begin;
    }
    const uint64_t piece_end = it->end < end ? it->end : end;
    f(pos, piece_end, std::optional<uint32_t>(it->tile));
    pos = piece_end;
    ++it;
  }
}

}  // namespace tileprof::engine
