// What is live at each step (engine/compiler/step_liveness.h) against a
// brute-force count of every tile at every step, on random pieces.
#include <gtest/gtest.h>

#include <random>

#include "engine/compiler/step_liveness.h"

namespace tileprof::engine::compiler {
namespace {

struct Random {
  std::vector<std::vector<Piece>> tiles;
  size_t steps = 0;
  TilePieces View() const {
    TilePieces view;
    for (const std::vector<Piece>& t : tiles) view.push_back(t);
    return view;
  }
};

Random MakeRandom(uint32_t seed, size_t num_tiles, size_t steps, size_t pieces_per_tile) {
  std::mt19937_64 rng(seed);
  Random r;
  r.steps = steps;
  r.tiles.resize(num_tiles);
  for (std::vector<Piece>& tile : r.tiles) {
    const size_t n = rng() % (pieces_per_tile + 1);
    for (size_t k = 0; k < n; ++k) {
      const uint64_t first = rng() % steps;
      const uint64_t last = first + rng() % (steps - first);
      tile.push_back({.bytes = 1 + rng() % 64, .first = first, .last = last});
    }
  }
  return r;
}

// Every (tile, step): the bytes of the pieces covering the step.
std::vector<std::vector<uint64_t>> BruteForce(const Random& r) {
  std::vector<std::vector<uint64_t>> live(r.tiles.size(), std::vector<uint64_t>(r.steps, 0));
  for (size_t t = 0; t < r.tiles.size(); ++t)
    for (const Piece& p : r.tiles[t])
      for (uint64_t i = p.first; i <= p.last; ++i) live[t][i] += p.bytes;
  return live;
}

TEST(StepLiveness, FullestTileAndTotalsAreTheBruteForceOnes) {
  // Seeds past 20 give tiles up to 60 pieces, most walked step by step (a
  // piece every 8 steps or more), the others a few pieces over many steps,
  // whose events are sorted.
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    // Enough tiles for several shards (64 per worker), few for one.
    const size_t num_tiles = seed % 2 ? 300 : 7;
    const Random r = MakeRandom(seed, num_tiles, 1 + seed * 13 % 97, seed > 20 ? 60 : 6);
    const std::vector<std::vector<uint64_t>> brute = BruteForce(r);
    const std::vector<uint64_t> total = LiveBytesPerStep(r.View(), r.steps);
    const std::vector<report::StepTile> fullest = FullestTilePerStep(r.View(), r.steps);
    ASSERT_EQ(fullest.size(), r.steps);
    for (size_t i = 0; i < r.steps; ++i) {
      uint64_t sum = 0;
      report::StepTile best{0, 0};
      for (uint32_t t = 0; t < num_tiles; ++t) {
        sum += brute[t][i];
        if (brute[t][i] > best.not_always_live) best = {t, brute[t][i]};
      }
      EXPECT_EQ(total[i], sum) << "seed " << seed << " step " << i;
      EXPECT_EQ(fullest[i], best) << "seed " << seed << " step " << i;
    }
  }
}

TEST(StepLiveness, NothingLiveIsTileZeroWithNoBytes) {
  Random r;
  r.steps = 5;
  r.tiles.resize(3);
  r.tiles[2].push_back({.bytes = 8, .first = 1, .last = 2});
  const std::vector<report::StepTile> fullest = FullestTilePerStep(r.View(), r.steps);
  const std::vector<report::StepTile> expected{{0, 0}, {2, 8}, {2, 8}, {0, 0}, {0, 0}};
  EXPECT_EQ(fullest, expected);
}

}  // namespace
}  // namespace tileprof::engine::compiler
