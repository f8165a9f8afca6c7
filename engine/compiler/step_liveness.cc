#include "engine/compiler/step_liveness.h"

#include <algorithm>
#include <bit>
#include <map>
#include <mutex>

#include "engine/compiler/tile_threads.h"

namespace tileprof::engine::compiler {
namespace {

bool Fuller(const report::StepTile& a, const report::StepTile& b) {
  return a.not_always_live != b.not_always_live ? a.not_always_live > b.not_always_live
                                                : a.tile < b.tile;
}

// The most of ranges of steps: Raise(lo, hi, x) keeps x as a candidate for
// every step in [lo, hi]; At(i) is the fullest candidate of step i. A node
// holds the fullest value raised over the whole of its range, so a raise
// touches O(log steps) nodes and a step's answer is on its path to the root.
class RangeMax {
 public:
  explicit RangeMax(size_t steps)
      : size_(std::bit_ceil(std::max<size_t>(steps, 1))), nodes_(2 * size_) {}

  void Raise(size_t lo, size_t hi, const report::StepTile& value) {
    for (lo += size_, hi += size_ + 1; lo < hi; lo >>= 1, hi >>= 1) {
      if (lo & 1) Keep(nodes_[lo++], value);
      if (hi & 1) Keep(nodes_[--hi], value);
    }
  }
  report::StepTile At(size_t step) const {
    report::StepTile best = nodes_[step + size_];
    for (size_t n = (step + size_) >> 1; n > 0; n >>= 1) Keep(best, nodes_[n]);
    return best;
  }
  void Merge(const RangeMax& other) {
    for (size_t n = 0; n < nodes_.size(); ++n) Keep(nodes_[n], other.nodes_[n]);
  }

 private:
  static void Keep(report::StepTile& at, const report::StepTile& value) {
    if (Fuller(value, at)) at = value;
  }
  size_t size_;
  std::vector<report::StepTile> nodes_;
};

// A tile's pieces walked through a difference array when the tile has at
// least one piece for this many steps.
constexpr size_t kDenseStepsPerPiece = 8;

// Raises the steps of each run of constant live bytes on `tile` (of its
// `pieces`) in `fullest`, from a difference array over the steps (`delta`:
// scratch, left all zero).
void RaiseDense(std::span<const Piece> pieces, size_t steps, uint32_t tile,
                std::vector<int64_t>& delta, RangeMax& fullest) {
  delta.resize(steps + 1, 0);
  for (const Piece& piece : pieces) {
    if (piece.first >= steps || piece.bytes == 0) continue;
    delta[piece.first] += static_cast<int64_t>(piece.bytes);
    delta[std::min<uint64_t>(piece.last + 1, steps)] -= static_cast<int64_t>(piece.bytes);
  }
  // A run ends where the live bytes may change: at any step with events,
  // as the sorted walk of the events ends them (raising one value over two
  // adjacent runs is raising it over their union).
  int64_t live = 0;
  size_t start = 0;
  for (size_t step = 0; step < steps; ++step) {
    if (delta[step] == 0) continue;
    if (live > 0 && start < step)
      fullest.Raise(start, step - 1, {tile, static_cast<uint64_t>(live)});
    live += delta[step];
    delta[step] = 0;
    start = step;
  }
  if (live > 0) fullest.Raise(start, steps - 1, {tile, static_cast<uint64_t>(live)});
  delta[steps] = 0;
}

}  // namespace

// A difference array per shard of tiles: each piece adds its bytes from its
// first step to its last.
std::vector<uint64_t> LiveBytesPerStep(const TilePieces& tiles, size_t steps) {
  std::vector<uint64_t> live(steps + 1, 0);
  std::mutex merge;
  ForTileShards(static_cast<uint32_t>(tiles.size()), [&](uint32_t shard, uint32_t shards) {
    // Unsigned wrap-around: the subtractions cancel the additions in the sum.
    std::vector<uint64_t> delta(steps + 1, 0);
    for (size_t t = shard; t < tiles.size(); t += shards) {
      for (const Piece& piece : tiles[t]) {
        delta[piece.first] += piece.bytes;
        delta[std::min<uint64_t>(piece.last + 1, steps)] -= piece.bytes;
      }
    }
    std::lock_guard<std::mutex> lock(merge);
    for (size_t i = 0; i <= steps; ++i) live[i] += delta[i];
  });
  uint64_t sum = 0;
  for (size_t i = 0; i < steps; ++i) live[i] = sum += live[i];
  live.pop_back();
  return live;
}

std::vector<uint64_t> ReceiveBytesPerStep(const TilePieces& tiles, size_t steps) {
  std::vector<uint64_t> bytes(steps, 0);
  for (std::span<const Piece> pieces : tiles) {
    for (const Piece& piece : pieces) {
      if (piece.variable == kNoVariable && piece.first < steps) bytes[piece.first] += piece.bytes;
    }
  }
  return bytes;
}

// A tile's live bytes over the steps are constant between the steps where a
// piece starts or ends: each such run raises the steps it covers, so the
// work is O(pieces log steps), not tiles x steps (94,208 tiles x 10^5 steps
// would be 10^10).
std::vector<report::StepTile> FullestTilePerStep(const TilePieces& tiles, size_t steps) {
  RangeMax fullest(steps);
  std::mutex merge;
  ForTileShards(static_cast<uint32_t>(tiles.size()), [&](uint32_t shard, uint32_t shards) {
    RangeMax mine(steps);
    std::vector<std::pair<uint64_t, int64_t>> events;  // (step, signed bytes)
    std::vector<int64_t> delta;                        // by step, for tiles of many pieces
    for (size_t t = shard; t < tiles.size(); t += shards) {
      // A tile with a piece every few steps is walked step by step through
      // a difference array (sorting its events was a twentieth of
      // mobilenet_v2's compile); the ranges raised are the same.
      if (steps <= kDenseStepsPerPiece * tiles[t].size()) {
        RaiseDense(tiles[t], steps, static_cast<uint32_t>(t), delta, mine);
        continue;
      }
      events.clear();
      for (const Piece& piece : tiles[t]) {
        if (piece.first >= steps || piece.bytes == 0) continue;
        events.push_back({piece.first, static_cast<int64_t>(piece.bytes)});
        events.push_back(
            {std::min<uint64_t>(piece.last + 1, steps), -static_cast<int64_t>(piece.bytes)});
      }
      std::sort(events.begin(), events.end());
      int64_t live = 0;
      for (size_t e = 0; e < events.size();) {
        const uint64_t step = events[e].first;
        for (; e < events.size() && events[e].first == step; ++e) live += events[e].second;
        const uint64_t next = e < events.size() ? events[e].first : steps;
        if (live > 0 && step < next && step < steps)
          mine.Raise(step, next - 1, {static_cast<uint32_t>(t), static_cast<uint64_t>(live)});
      }
    }
    std::lock_guard<std::mutex> lock(merge);
    fullest.Merge(mine);
  });
  std::vector<report::StepTile> out(steps);
  for (size_t i = 0; i < steps; ++i) out[i] = fullest.At(i);
  return out;
}

std::vector<report::LiveVariable> NotAlwaysLiveVariables(
    const Graph& graph, const TilePieces& tiles, size_t steps,
    const std::function<std::string(uint64_t)>& buffer_name) {
  struct Span {
    uint64_t bytes = 0, first = 0, last = 0;
  };
  // A variable is live from its first use to its last on every tile holding it.
  std::vector<Span> by_variable(graph.num_variables());
  std::vector<uint64_t> buffer_at(steps, 0);  // buffers live one step: the common case
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> buffer_over;  // the others
  for (std::span<const Piece> pieces : tiles) {
    for (const Piece& piece : pieces) {
      if (piece.variable != kNoVariable) {
        by_variable[piece.variable] = {by_variable[piece.variable].bytes + piece.bytes, piece.first,
                                       piece.last};
      } else if (piece.first == piece.last && piece.first < steps) {
        buffer_at[piece.first] += piece.bytes;
      } else {
        buffer_over[{piece.first, piece.last}] += piece.bytes;
      }
    }
  }
  std::vector<report::LiveVariable> out;
  for (VariableId v = 0; v < by_variable.size(); ++v) {
    const Span& s = by_variable[v];
    if (s.bytes != 0) out.push_back({graph.variable(v).name, s.bytes, s.first, s.last});
  }
  for (uint64_t step = 0; step < steps; ++step) {
    if (buffer_at[step] != 0) out.push_back({buffer_name(step), buffer_at[step], step, step});
  }
  for (const auto& [span, bytes] : buffer_over)
    out.push_back({buffer_name(span.first), bytes, span.first, span.second});
  std::sort(out.begin(), out.end(),
            [](const report::LiveVariable& a, const report::LiveVariable& b) {
              if (a.bytes != b.bytes) return a.bytes > b.bytes;
              if (a.first_step != b.first_step) return a.first_step < b.first_step;
              return a.name < b.name;
            });
  return out;
}

}  // namespace tileprof::engine::compiler
