// TileMap against a model holding one tile per element: random assignments,
// after each of which the runs must be exactly the model's maximal runs and
// every lookup must split a range where the model's tiles change.
#include "engine/graph/tile_map.h"

#include <random>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tileprof::engine {
namespace {

using ::testing::ElementsAre;

constexpr uint32_t kUnmapped = UINT32_MAX;

std::vector<TileRun> ModelRuns(const std::vector<uint32_t>& model) {
  std::vector<TileRun> runs;
  for (uint64_t e = 0; e < model.size(); ++e) {
    if (model[e] == kUnmapped) continue;
    if (!runs.empty() && runs.back().end == e && runs.back().tile == model[e])
      ++runs.back().end;
    else
      runs.push_back({e, e + 1, model[e]});
  }
  return runs;
}

TEST(TileMap, AssignmentsOverrideAndMerge) {
  TileMap map;
  map.Assign(0, 10, 1);
  map.Assign(10, 20, 2);
  map.Assign(20, 30, 1);
  map.Assign(5, 25, 1);  // swallows tile 2, joins both neighbours
  EXPECT_THAT(map.Runs(), ElementsAre(TileRun{0, 30, 1}));
  map.Assign(12, 14, 3);  // splits one run in three
  EXPECT_THAT(map.Runs(), ElementsAre(TileRun{0, 12, 1}, TileRun{12, 14, 3}, TileRun{14, 30, 1}));
  map.Assign(40, 50, 3);
  EXPECT_THAT(map.Gaps(60), ElementsAre(std::pair<uint64_t, uint64_t>{30, 40},
                                        std::pair<uint64_t, uint64_t>{50, 60}));
  map.Assign(7, 7, 9);  // empty: nothing changes
  EXPECT_EQ(map.Runs().size(), 4u);
}

TEST(TileMap, MatchesAnElementModelUnderRandomAssignments) {
  std::mt19937_64 rng(12345);
  for (int trial = 0; trial < 200; ++trial) {
    const uint64_t size = 1 + rng() % 64;
    std::vector<uint32_t> model(size, kUnmapped);
    TileMap map;
    for (int step = 0; step < 30; ++step) {
      uint64_t a = rng() % (size + 1), b = rng() % (size + 1);
      if (a > b) std::swap(a, b);
      // Few tiles, so that neighbours often share one and must merge.
      const auto tile = static_cast<uint32_t>(rng() % 3);
      map.Assign(a, b, tile);
      for (uint64_t e = a; e < b; ++e) model[e] = tile;
      ASSERT_EQ(map.Runs(), ModelRuns(model)) << "trial " << trial << " step " << step;
      uint64_t lo = rng() % (size + 1), hi = rng() % (size + 1);
      if (lo > hi) std::swap(lo, hi);
      uint64_t at = lo;
      map.ForEachPiece(lo, hi, [&](uint64_t begin, uint64_t end, std::optional<uint32_t> t) {
        ASSERT_EQ(begin, at);
        ASSERT_LT(begin, end);
        for (uint64_t e = begin; e < end; ++e) ASSERT_EQ(model[e], t.value_or(kUnmapped));
        // A piece ends where the model's tile changes, or at the range's end.
        if (end < hi) {
          ASSERT_NE(model[end], t.value_or(kUnmapped));
        }
        at = end;
      });
      ASSERT_EQ(at, lo == hi ? lo : hi);
    }
  }
}

// The lookup guesses a run's position from the element's; it must agree
// with a plain scan whether the runs are even (a linear mapping) or skewed
// so that every guess misses, and on gaps and past the end.
TEST(TileMap, FirstRunEndingAfterAnElementAgreesWithAScan) {
  auto expect_scan = [](const TileMap& map, uint64_t limit) {
    const std::vector<TileRun>& runs = map.Runs();
    for (uint64_t at = 0; at < limit; ++at) {
      size_t scan = 0;
      while (scan < runs.size() && runs[scan].end <= at) ++scan;
      ASSERT_EQ(map.FirstEndingAfter(at) - runs.begin(), static_cast<std::ptrdiff_t>(scan))
          << "element " << at;
    }
  };
  TileMap even;  // 7 elements on each of 1,472 tiles, after a gap of 5
  for (uint32_t tile = 0; tile < 1472; ++tile) even.Assign(5 + 7 * tile, 12 + 7 * tile, tile);
  expect_scan(even, 5 + 7 * 1472 + 3);
  // Runs growing (guesses fall short) or shrinking (guesses overshoot)
  // geometrically, with a gap of 3 after each.
  for (const bool growing : {true, false}) {
    TileMap skewed;
    uint64_t at = 0;
    for (uint32_t tile = 0; tile < 16; ++tile) {
      const uint64_t size = uint64_t{1} << (growing ? tile : 15 - tile);
      skewed.Assign(at, at + size, tile);
      at += size + 3;
    }
    expect_scan(skewed, at + 3);
  }
}

// Rows of a strided region are looked up from the run the row before ended
// in: the pieces must be exactly those of looking each row up on its own,
// for rows that advance within a run, skip runs, fall in gaps, go backwards
// (a negative stride) or repeat (stride 0).
TEST(TileMap, StridedPiecesAreThoseOfEachRow) {
  using Piece = std::tuple<uint64_t, uint64_t, const TileRun*>;
  std::mt19937_64 rng(777);
  for (int trial = 0; trial < 300; ++trial) {
    const uint64_t size = 8 + rng() % 120;
    TileMap map;
    for (int step = 0; step < 12; ++step) {
      uint64_t a = rng() % (size + 1), b = rng() % (size + 1);
      if (a > b) std::swap(a, b);
      map.Assign(a, b, static_cast<uint32_t>(rng() % 4));
    }
    const uint64_t length = 1 + rng() % 9;
    const uint32_t count = 1 + static_cast<uint32_t>(rng() % 12);
    const int64_t stride = static_cast<int64_t>(rng() % 13) - 4;
    // The first row is placed so that every row lies within [0, size + 9).
    const int64_t reach = stride * (count - 1);
    const uint64_t begin = static_cast<uint64_t>(std::max<int64_t>(0, -reach)) + rng() % 8;
    std::vector<Piece> expected, got;
    for (uint32_t k = 0; k < count; ++k) {
      const uint64_t row = begin + static_cast<uint64_t>(stride * k);
      map.ForEachRunPiece(row, row + length, [&](uint64_t b, uint64_t e, const TileRun* run) {
        expected.emplace_back(b, e, run);
      });
    }
    map.ForEachStridedRunPiece(
        begin, length, stride, count,
        [&](uint64_t b, uint64_t e, const TileRun* run) { got.emplace_back(b, e, run); });
    ASSERT_EQ(got, expected) << "trial " << trial << ": begin " << begin << " length " << length
                             << " stride " << stride << " count " << count;
  }
}

}  // namespace
}  // namespace tileprof::engine
