#include "reports/report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/format.h"
#include "report_fixtures.h"
#include "reports/stats.h"
#include "reports/text_scan.h"

namespace tileprof::report {
namespace {

using testing::AdderMk1Report;
using ::testing::ElementsAre;
using testing::ImbalancedMk1Report;

TEST(Categories, LabelsAndMachineNamesMapBothWays) {
  for (size_t i = 0; i < kNumCategories; ++i) {
    Category category = static_cast<Category>(i);
    EXPECT_EQ(CategoryFromLabel(CategoryLabel(category)), category);
    EXPECT_EQ(CategoryFromMachineName(CategoryMachineName(category)), category);
  }
  EXPECT_EQ(CategoryLabel(Category::kVertexInstances), "Vertex Instances");
  EXPECT_EQ(CategoryMachineName(Category::kVertexInstances), "vertexInstanceState");
  EXPECT_EQ(CategoryLabel(Category::kSharedDataStorage), "Shared Data Storage");
  EXPECT_EQ(CategoryFromLabel("Variables:"), std::nullopt);
  EXPECT_EQ(CategoryFromMachineName("controlId"), std::nullopt);  // no text row
}

TEST(MakeTarget, DerivesTotalsAndReplicas) {
  Target target = MakeTarget("ipu2", 2, 1472, 638976, 1.33e9, 1);
  EXPECT_EQ(target.total_tiles, 2944u);
  EXPECT_EQ(target.total_memory, 1881145344u);  // profile_test.py's totalMemory
  ASSERT_TRUE(target.replication);
  EXPECT_EQ(target.replication->num_replicas, 2u);
  EXPECT_EQ(target.replication->memory_per_replica, 940572672u);
  EXPECT_FALSE(MakeTarget("ipu1", 1, 1216, 262144, 1.6e9).replication);
}

// Summarize gives the published whole-graph figures from the fixture's tiles.
TEST(Summarize, AddsTheTilesUp) {
  CompilationReport report = AdderMk1Report();
  MemoryUsage total = Summarize(report.tiles, report.vertex_types);
  EXPECT_EQ(total.including_gaps, 23878396u);
  EXPECT_EQ(total.ExcludingGaps(), 5355604u);
  EXPECT_EQ(At(total.by_category, Category::kControlCode), 851272u);
  EXPECT_EQ(total.vertex_data, 14640u);
  EXPECT_EQ(total.vertex_data_by_category[0], 9736u);
  EXPECT_THAT(total.by_vertex_type,
              ElementsAre(NamedBytes{"poprand::SetSeedSupervisor", 34048},
                          NamedBytes{"popops::ScaledAddSupervisor<float,float,true>", 60},
                          NamedBytes{"popops::BinaryOp1DSupervisor<popops::expr::BinaryOpType::"
                                     "ADD,float>",
                                     16}));
  EXPECT_TRUE(total.known.IsComplete());
}

TEST(Summarize, MergesTypesAndNamesBadIndices) {
  std::vector<VertexType> types = {{"b"}, {"a"}, {"b"}};
  std::vector<TileMemory> tiles(2);
  tiles[0].vertex_types = {{0, 5}, {1, 5}};
  tiles[1].vertex_types = {{2, 5}, {9, 1}};
  EXPECT_THAT(
      Summarize(tiles, types).by_vertex_type,
      ElementsAre(NamedBytes{"b", 10}, NamedBytes{"a", 5}, NamedBytes{"<unknown vertex type>", 1}));
  EXPECT_THAT(UsageOfTile(tiles[0], types).by_vertex_type,
              ElementsAre(NamedBytes{"a", 5}, NamedBytes{"b", 5}));  // ties by name
}

TEST(SummarizeByTile, FindsMaximaAndOutOfMemoryTiles) {
  CompilationReport report = ImbalancedMk1Report();
  ByTileSummary by_tile = SummarizeByTile(report.tiles, testing::kMk1BytesPerTile);
  EXPECT_EQ(by_tile.max_including_gaps, (TileMaximum{834416, 0}));
  EXPECT_EQ(by_tile.max_excluding_gaps, (TileMaximum{834339, 0}));
  EXPECT_EQ(by_tile.tiles_out_of_memory, 2u);
  EXPECT_EQ(by_tile.rows.size(), 102u);
  EXPECT_FALSE(SummarizeByTile(report.tiles, std::nullopt).tiles_out_of_memory);
  // Ties go to the lowest tile id.
  std::vector<TileMemory> tied = {testing::SmallTile(0, 100, 0), testing::SmallTile(1, 200, 0),
                                  testing::SmallTile(2, 200, 0)};
  EXPECT_EQ(SummarizeByTile(tied, 150).max_excluding_gaps, (TileMaximum{200, 1}));
  EXPECT_EQ(SummarizeByTile(tied, 150).tiles_out_of_memory, 2u);
}

TEST(TopTiles, DescendingWithTiesByTileId) {
  std::vector<TileMemory> tiles = {testing::SmallTile(0, 10, 0), testing::SmallTile(1, 30, 0),
                                   testing::SmallTile(2, 20, 0), testing::SmallTile(3, 30, 0)};
  std::vector<uint32_t> ids;
  for (const TileMemory* tile : TopTiles(tiles, 3)) ids.push_back(tile->tile);
  EXPECT_THAT(ids, ElementsAre(1, 3, 2));
  EXPECT_EQ(TopTiles(tiles, 10).size(), 4u);
}

TEST(IsImbalanced, TwiceTheMeanOrOutOfMemory) {
  EXPECT_FALSE(IsImbalanced(AdderMk1Report().tiles, testing::kMk1BytesPerTile));
  EXPECT_TRUE(IsImbalanced(ImbalancedMk1Report().tiles, testing::kMk1BytesPerTile));
  // Mean 100: a maximum of exactly 200 is balanced, 201 is not.
  std::vector<TileMemory> tiles = {testing::SmallTile(0, 0, 0), testing::SmallTile(1, 200, 0),
                                   testing::SmallTile(2, 100, 0)};
  EXPECT_FALSE(IsImbalanced(tiles, std::nullopt));
  tiles[1] = testing::SmallTile(1, 201, 0);
  tiles[2] = testing::SmallTile(2, 99, 0);
  EXPECT_TRUE(IsImbalanced(tiles, std::nullopt));
  // Out of memory is imbalanced whatever the mean.
  std::vector<TileMemory> full = {testing::SmallTile(0, 300, 0), testing::SmallTile(1, 300, 0)};
  EXPECT_FALSE(IsImbalanced(full, std::nullopt));
  EXPECT_TRUE(IsImbalanced(full, 256));
  EXPECT_FALSE(IsImbalanced({}, 256));
}

TEST(Resolve, PrefersPerTileDataOverVerbatimFigures) {
  CompilationReport report = AdderMk1Report();
  report.verbatim.total = MemoryUsage{};
  report.verbatim.by_tile = ByTileSummary{};
  EXPECT_EQ(ResolveTotal(report)->including_gaps, 23878396u);
  EXPECT_EQ(ResolveByTile(report)->rows.size(), 2u);
  report.tiles.clear();
  EXPECT_EQ(ResolveTotal(report)->including_gaps, 0u);
  EXPECT_TRUE(ResolveByTile(report)->rows.empty());
  EXPECT_FALSE(ResolveTotal(CompilationReport{}));
}

TEST(AverageTileCycles, AveragesEachKind) {
  std::vector<TileCycles> tiles = {{0, {10, 8, 4, 0, 100, 1}}, {1, {20, 16, 6, 0, 100, 2}}};
  auto averages = AverageTileCycles(tiles);
  EXPECT_EQ(averages[0], 15.0);
  EXPECT_EQ(averages[5], 1.5);
  EXPECT_FALSE(AverageTileCycles({})[0]);
}

TEST(Stats, CountsAndKeepsTheFirstPlace) {
  Stats stats;
  EXPECT_TRUE(stats.empty());
  stats.Add(StatId::kTextUnknownLine, "a.rep:3");
  stats.Add(StatId::kTextUnknownLine, "a.rep:9");
  EXPECT_EQ(stats.count(StatId::kTextUnknownLine), 2u);
  EXPECT_EQ(stats.first_location(StatId::kTextUnknownLine), "a.rep:3");
  EXPECT_FALSE(stats.HasErrors());
  EXPECT_THAT(stats.Describe(),
              ElementsAre("text_unknown_line (info): 2, first at a.rep:3: a line the text reader "
                          "does not recognise was skipped"));
  EXPECT_EQ(GetStatInfo(StatId::kTextMissingRows).severity, StatSeverity::kDataLoss);
}

TEST(TextScan, CountsWithAndWithoutSeparators) {
  EXPECT_EQ(ParseCount("1,216"), 1216u);
  EXPECT_EQ(ParseCount("23,878,396"), 23878396u);
  EXPECT_EQ(ParseCount("1216"), 1216u);
  EXPECT_EQ(ParseCount("0"), 0u);
  EXPECT_EQ(ParseCount("18,446,744,073,709,551,615"), UINT64_MAX);
  for (const char* bad : {"", ",1", "1,", "12,16", "1,2345", "1234,567", "1,23,456", "-1", "+1",
                          "1 2", "18446744073709551616", "0x10"})
    EXPECT_EQ(ParseCount(bad), std::nullopt) << bad;
}

TEST(TextScan, Decimals) {
  EXPECT_EQ(ParseDecimal("1,600.0"), 1600.0);
  EXPECT_EQ(ParseDecimal("6,663,550.8"), 6663550.8);
  EXPECT_EQ(ParseDecimal("12"), 12.0);
  for (const char* bad : {"", "1.", ".5", "1.2.3", "1,60.0", "nan", "inf", "-1.0", "1e5"})
    EXPECT_EQ(ParseDecimal(bad), std::nullopt) << bad;
}

// ParseBinarySize inverts BinarySize at the precision the text has: reading
// what BinarySize printed gives a value that prints the same.
TEST(TextScan, BinarySizesReadBackToTheSameText) {
  EXPECT_EQ(ParseBinarySize("256.0 kB"), 262144u);
  EXPECT_EQ(ParseBinarySize("897.0 MB"), 940572672u);
  EXPECT_EQ(ParseBinarySize("100 B"), 100u);
  EXPECT_EQ(ParseBinarySize("1,024.0 kB"), 1048525u);  // rounded up from below 1 MiB
  // 16 EiB does not fit in 64 bits, but BinarySize prints "16.0 EB" for
  // values just below it; they read back to one that prints the same.
  ASSERT_TRUE(ParseBinarySize("16.0 EB"));
  EXPECT_EQ(BinarySize(*ParseBinarySize("16.0 EB")), "16.0 EB");
  for (const char* bad : {"256.0", "256.0 KiB", "x kB", "17.0 EB", "1.5 B"})
    EXPECT_EQ(ParseBinarySize(bad), std::nullopt) << bad;
  uint64_t state = 88172645463325252ull;  // xorshift: a fixed pseudo-random sweep
  for (int i = 0; i < 20000; ++i) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    uint64_t bytes = state >> (i % 64);
    std::string text = BinarySize(bytes);
    std::optional<uint64_t> back = ParseBinarySize(text);
    ASSERT_TRUE(back) << text;
    EXPECT_EQ(BinarySize(*back), text) << bytes;
  }
}

}  // namespace
}  // namespace tileprof::report
