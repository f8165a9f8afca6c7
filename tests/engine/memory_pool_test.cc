// The not-always-live pool's first-fit placement (engine/compiler/memory_pool.h).
#include "engine/compiler/memory_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "engine/compiler/memory_model.h"

namespace tileprof::engine::compiler {
namespace {

// The peak by a sweep over start and end events, independent of the
// placement's own bookkeeping.
uint64_t SweepPeak(std::span<const Piece> pieces) {
  std::vector<std::pair<uint64_t, int64_t>> events;
  for (const Piece& p : pieces) {
    events.emplace_back(p.first, static_cast<int64_t>(p.bytes));
    events.emplace_back(p.last + 1, -static_cast<int64_t>(p.bytes));
  }
  std::sort(events.begin(), events.end());  // ends before starts at one step
  int64_t live = 0, peak = 0;
  for (const auto& [step, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return static_cast<uint64_t>(peak);
}

bool LiveTogether(const Piece& a, const Piece& b) { return a.first <= b.last && b.first <= a.last; }

std::vector<Piece> RandomPieces(std::mt19937_64& rng, size_t count, uint64_t steps) {
  std::vector<Piece> pieces;
  for (size_t i = 0; i < count; ++i) {
    Piece p;
    p.first = rng() % steps;
    // Mostly short lives (receive buffers), some long (variables).
    p.last = p.first + (rng() % 4 == 0 ? rng() % steps : rng() % 3);
    p.bytes = rng() % 8 == 0 ? 0 : 1 + rng() % 700;
    pieces.push_back(p);
  }
  return pieces;
}

TEST(MemoryPool, PlacesPiecesLiveTogetherApartAndAlignedWithThePeakOfASweep) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<Piece> pieces = RandomPieces(rng, 1 + rng() % 300, 1 + rng() % 60);
    const uint64_t peak = SweepPeak(pieces);
    const PoolExtent pool = FirstFitExtent(pieces);
    EXPECT_EQ(pool.peak, peak) << "round " << round;
    EXPECT_GE(pool.extent, pool.peak);
    uint64_t extent = 0;
    for (size_t i = 0; i < pieces.size(); ++i) {
      const Piece& a = pieces[i];
      EXPECT_EQ(a.offset % memory::kDataAlignment, 0u);
      extent = std::max(extent, a.offset + a.bytes);
      for (size_t j = i + 1; j < pieces.size(); ++j) {
        const Piece& b = pieces[j];
        if (a.bytes == 0 || b.bytes == 0 || !LiveTogether(a, b)) continue;
        EXPECT_TRUE(a.offset + a.bytes <= b.offset || b.offset + b.bytes <= a.offset)
            << "round " << round << ": pieces " << i << " and " << j << " overlap";
      }
    }
    EXPECT_EQ(pool.extent, extent);
  }
}

// First fit: a piece goes into the lowest gap it fits, and space freed by a
// piece whose life ended is reused.
TEST(MemoryPool, ReusesTheLowestGapThatFits) {
  std::vector<Piece> pieces = {
      {.bytes = 64, .first = 0, .last = 0},  // freed after step 0
      {.bytes = 32, .first = 0, .last = 9},
      {.bytes = 16, .first = 1, .last = 1},   // into the first one's space
      {.bytes = 128, .first = 2, .last = 2},  // too big for it: above
  };
  const PoolExtent pool = FirstFitExtent(pieces);
  // Sorted by first step, the larger first within a step.
  ASSERT_EQ(pieces[0].bytes, 64u);
  EXPECT_EQ(pieces[0].offset, 0u);
  EXPECT_EQ(pieces[1].offset, 64u);
  EXPECT_EQ(pieces[2].offset, 0u);
  EXPECT_EQ(pieces[3].offset, 96u);
  EXPECT_EQ(pool.extent, 224u);
  EXPECT_EQ(pool.peak, 160u);
}

// The largest variables of a tile: the runs of one variable are one entry,
// named at its lowest address; receive buffers are named by their step.
TEST(MemoryPool, LargestVariablesMergeRunsOfOneVariable) {
  Graph graph(*Target::FromPreset("ipu1", 1, 4));
  for (const char* name : {"a", "b", "c"}) {
    ASSERT_TRUE(graph.AddVariable(ElementType::kF32, {64}, name));
  }
  const auto buffer = [](uint64_t step) { return "buffer " + std::to_string(step); };
  const std::vector<Piece> distinct = {
      {.bytes = 8, .first = 0, .last = 1, .variable = 0, .offset = 0},
      {.bytes = 24, .first = 0, .last = 1, .variable = 1, .offset = 8},
      {.bytes = 24, .first = 3, .last = 3, .variable = kNoVariable, .offset = 8},
  };
  auto names = [](const std::vector<report::Variable>& variables) {
    std::vector<std::string> out;
    for (const report::Variable& v : variables)
      out.push_back(v.name + "@" + std::to_string(v.offset.value_or(0)));
    return out;
  };
  EXPECT_EQ(names(LargestVariables(graph, 2, distinct, 100, {}, buffer)),
            (std::vector<std::string>{"b@108", "buffer 3@108", "a@100"}));
  std::vector<Piece> split = distinct;
  split.push_back({.bytes = 20, .first = 2, .last = 2, .variable = 0, .offset = 40});
  split.push_back({.bytes = 4, .first = 2, .last = 2, .variable = 2, .offset = 60});
  const std::vector<report::Variable> merged = LargestVariables(graph, 2, split, 100, {}, buffer);
  EXPECT_EQ(names(merged), (std::vector<std::string>{"a@100", "b@108", "buffer 3@108", "c@160"}));
  EXPECT_EQ(merged[0].bytes, 28u);
  EXPECT_EQ(merged[0].tile, 2u);
}

}  // namespace
}  // namespace tileprof::engine::compiler
