// Sorts whose lines are too long for one tile (engine/compiler/
// lower_sort_spread.cc): compiled for an ipu1's 256 KiB tiles, each line is
// cut into blocks over several tiles, no tile holds more than a block of a
// result, and the simulator's answer is std::stable_sort's, ties and all.
// tests/oracle/modules/sort_spread.hlo holds the NumPy comparisons.
#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <span>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/codelets/sort.h"
#include "tests/engine/sim_test_util.h"

namespace tileprof::engine::sim_test {
namespace {

// Elements of variable `name` per tile.
std::map<uint32_t, uint64_t> ElementsPerTile(const Graph& graph, std::string_view name) {
  std::map<uint32_t, uint64_t> per_tile;
  for (VariableId v = 0; v < graph.num_variables(); ++v) {
    if (graph.variable(v).name != name) continue;
    for (const TileRun& run : graph.TileMapping(v)) per_tile[run.tile] += run.end - run.begin;
  }
  return per_tile;
}

// A stable argsort of `n` s32 keys with many ties, descending, and its keys:
// 20,001 key-value pairs are 160 KB, ten blocks of 2,001 (the last 1,992).
constexpr std::string_view kArgsort = R"(
HloModule argsort
gt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=GT
}
ENTRY main {
  k = s32[20001]{0} parameter(0)
  pos = s32[20001]{0} iota(), iota_dimension=0
  sorted = (s32[20001]{0}, s32[20001]{0}) sort(k, pos), dimensions={0}, is_stable=true, to_apply=gt
  keys = s32[20001]{0} get-tuple-element(sorted), index=0
  perm = s32[20001]{0} get-tuple-element(sorted), index=1
  ROOT out = (s32[20001]{0}, s32[20001]{0}) tuple(keys, perm)
})";

TEST(SimSortSpread, LongLineIsSortedInBlocksOverTilesAndStaysStable) {
  Compiled compiled = CompileText(std::string(kArgsort), "ipu1", 1216);
  EXPECT_EQ(compiled.result.tiles_out_of_memory, 0u);
  // Each result in blocks of at most 2,001 on ten tiles, never the line.
  for (std::string_view name : {"sorted.0", "sorted.1"}) {
    const std::map<uint32_t, uint64_t> tiles = ElementsPerTile(*compiled.result.graph, name);
    EXPECT_EQ(tiles.size(), 10u) << name;
    for (const auto& [tile, elements] : tiles) EXPECT_LE(elements, 2001u) << name;
  }
  std::vector<int32_t> k(20001);
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<int32_t>((i * 7919) % 37);
  auto simulator = MustCreate(compiled, 2);
  sim::HostData out = MustRun(*simulator, {{"k", Encode<int32_t>(k)}});
  std::vector<int32_t> perm(k.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int32_t a, int32_t b) { return k[a] > k[b]; });
  std::vector<int32_t> keys(k.size());
  for (size_t i = 0; i < k.size(); ++i) keys[i] = k[static_cast<size_t>(perm[i])];
  EXPECT_EQ(Decode<int32_t>(out["out.0"]), keys);
  EXPECT_EQ(Decode<int32_t>(out["out.1"]), perm);
}

// A line that fits a quarter of a tile stays on one (no merge steps).
TEST(SimSortSpread, ShortLineStaysOnOneTile) {
  std::string text(kArgsort);
  for (size_t at; (at = text.find("20001")) != std::string::npos;) text.replace(at, 5, "4000");
  Compiled compiled = CompileText(std::move(text), "ipu1", 1216);
  EXPECT_EQ(ElementsPerTile(*compiled.result.graph, "sorted.0").size(), 1u);
}

// The merge-split codelet: the stable merge's first |out| or last |out|
// elements, a tie taken from a first; an error, not a guess, on bad sizes.
TEST(SimSortSpread, MergeCodeletKeepsTiesInOrder) {
  Expected<std::unique_ptr<Codelet>> merge =
      MakeSortMergeCodelet(0, SortOrder::kLt, {ElementType::kS32, ElementType::kS32});
  ASSERT_TRUE(merge.has_value()) << merge.error().message();
  EXPECT_EQ((*merge)->name(), "tileprof::SortMerge<0,lt,int,int>");
  // a = keys 1 2 2 5 (values 10..13), b = keys 2 3 4 (values 20..22).
  std::vector<int32_t> ak = {1, 2, 2, 5}, av = {10, 11, 12, 13}, bk = {2, 3, 4}, bv = {20, 21, 22};
  const auto run = [&](uint32_t upper, size_t count, std::vector<int32_t>& ok,
                       std::vector<int32_t>& ov) {
    ok.assign(count, -1);
    ov.assign(count, -1);
    const auto bytes = [](std::vector<int32_t>& v) { return std::as_writable_bytes(std::span(v)); };
    const std::array<std::span<std::byte>, 6> fields = {bytes(ak), bytes(av), bytes(bk),
                                                        bytes(bv), bytes(ok), bytes(ov)};
    const std::array<uint32_t, 1> params = {upper};
    return (*merge)->Run({.fields = fields, .params = params});
  };
  std::vector<int32_t> keys, values;
  ASSERT_TRUE(run(0, 4, keys, values).has_value());
  EXPECT_THAT(keys, ::testing::ElementsAre(1, 2, 2, 2));
  EXPECT_THAT(values, ::testing::ElementsAre(10, 11, 12, 20));  // a's 2s before b's
  ASSERT_TRUE(run(1, 3, keys, values).has_value());
  EXPECT_THAT(keys, ::testing::ElementsAre(3, 4, 5));
  EXPECT_THAT(values, ::testing::ElementsAre(21, 22, 13));
  EXPECT_FALSE(run(2, 3, keys, values).has_value());
  EXPECT_FALSE(run(0, 8, keys, values).has_value());  // more than a and b hold
  EXPECT_FALSE(MakeSortMergeCodelet(1, SortOrder::kLt, {ElementType::kS32}).has_value());
  EXPECT_FALSE(MakeSortMergeCodelet(0, SortOrder::kLtTotal, {ElementType::kS32}).has_value());
}

}  // namespace
}  // namespace tileprof::engine::sim_test
