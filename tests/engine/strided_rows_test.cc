// Rows appended a line at a time (AppendStridedRows, TensorIndex::
// AppendBoxRuns) make exactly the runs AppendStrided makes of them one by
// one: the graph a lowering builds must not depend on which path cut it.
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/graph/region_list.h"
#include "engine/graph/tensor.h"

namespace tileprof::engine {
namespace {

std::vector<StridedRegion> RowByRow(std::vector<StridedRegion> runs, const StridedRegion& rows) {
  size_t used = runs.size();
  runs.resize(used + rows.count);
  for (uint32_t k = 0; k < rows.count; ++k) AppendStrided(runs.data(), used, rows.At(k));
  runs.resize(used);
  return runs;
}

TEST(RegionList, AppendStridedRowsIsAppendStridedRowByRow) {
  std::mt19937_64 rng(7);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<StridedRegion> runs;
    // Blocks that continue, repeat, reverse or break the one before.
    for (int block = pick(1, 4); block-- > 0;) {
      const StridedRegion rows{
          static_cast<uint64_t>(pick(0, 12)) + 100, static_cast<uint64_t>(pick(1, 3)), pick(-3, 4),
          static_cast<VariableId>(pick(0, 1)), static_cast<uint32_t>(pick(0, 5))};
      const std::vector<StridedRegion> expected = RowByRow(runs, rows);
      AppendStridedRows(runs, rows);
      ASSERT_EQ(runs, expected) << "trial " << trial;
    }
  }
}

// A run at the count's limit takes no more rows: the next starts a run.
TEST(RegionList, AppendStridedRowsStopsARunAtTheCountLimit) {
  const std::vector<StridedRegion> full = {{0, 2, 4, 3, UINT32_MAX - 2}};
  const StridedRegion rows{uint64_t{4} * (UINT32_MAX - 2), 2, 4, 3, 5};
  std::vector<StridedRegion> runs = full;
  AppendStridedRows(runs, rows);
  EXPECT_EQ(runs, RowByRow(full, rows));
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].count, UINT32_MAX);
  EXPECT_EQ(runs[1].count, 3u);
}

// Every box of a few tensors, one region (whole, or a slice starting past
// the variable's first element) and fragmented, appended after a run the
// first row may continue.
TEST(TensorIndex, AppendBoxRunsAreTheRunsOfAppendBoxRegions) {
  const Tensor whole = Tensor::OfVariable(4, ElementType::kF32, {3, 4, 5});
  const Tensor sliced = *Tensor::OfVariable(5, ElementType::kF32, {6, 4, 5}).Slice(2, 5, 0);
  const size_t perm[] = {2, 0, 1};
  const Tensor fragmented = *whole.Dimshuffle(perm)->Slice(1, 4, 2);
  size_t boxes = 0;
  for (const Tensor* source : {&whole, &sliced, &fragmented}) {
    const TensorIndex index(*source);
    const std::vector<uint64_t>& shape = source->shape();
    for (uint64_t l0 = 0; l0 < shape[0]; ++l0)
      for (uint64_t s0 = 0; l0 + s0 <= shape[0]; ++s0)
        for (uint64_t l1 = 0; l1 < shape[1]; ++l1)
          for (uint64_t s1 = 1; l1 + s1 <= shape[1]; ++s1)
            for (uint64_t l2 = 0; l2 < shape[2]; ++l2)
              for (uint64_t s2 = 1; l2 + s2 <= shape[2]; ++s2) {
                const uint64_t lo[] = {l0, l1, l2}, size[] = {s0, s1, s2};
                const std::vector<StridedRegion> before = {
                    {source->regions()[0].begin, s2, 5, source->regions()[0].variable, 1}};
                std::vector<TensorRegion> regions;
                ASSERT_TRUE(index.AppendBox(lo, size, regions));
                std::vector<StridedRegion> expected = before;
                size_t used = expected.size();
                expected.resize(used + regions.size());
                for (const TensorRegion& region : regions)
                  AppendStrided(expected.data(), used, region);
                expected.resize(used);
                std::vector<StridedRegion> runs = before;
                ASSERT_TRUE(index.AppendBoxRuns(lo, size, runs));
                ASSERT_EQ(runs, expected) << l0 << s0 << l1 << s1 << l2 << s2;
                ++boxes;
              }
  }
  EXPECT_GT(boxes, 1500u);
  const TensorIndex index(whole);
  std::vector<StridedRegion> runs;
  const uint64_t lo[] = {1, 2, 0}, too_big[] = {2, 3, 5};
  const Status bad = index.AppendBoxRuns(lo, too_big, runs);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), "box [2, 5) of dimension 1 out of range for f32[3,4,5]");
  EXPECT_TRUE(runs.empty());
}

}  // namespace
}  // namespace tileprof::engine
