#include "reports/invariants.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report_fixtures.h"

namespace tileprof::report {
namespace {

using testing::AdderMk1Report;
using ::testing::ElementsAre;
using testing::ImbalancedMk1Report;
using ::testing::IsEmpty;
using testing::SampleExecution;

TEST(CheckInvariants, FixturesAreConsistent) {
  EXPECT_THAT(CheckInvariants(AdderMk1Report()), IsEmpty());
  EXPECT_THAT(CheckInvariants(ImbalancedMk1Report()), IsEmpty());
  EXPECT_THAT(CheckInvariants(SampleExecution()), IsEmpty());
}

TEST(CheckInvariants, CategoriesMustSumToTheTileTotal) {
  CompilationReport report = AdderMk1Report();
  At(report.tiles[5].by_category, Category::kVertexCode) += 3;
  Violations out;
  CheckCategoriesSumToRegions(report.tiles[5], out);
  EXPECT_THAT(out, ElementsAre("tile 5: categories sum to 4410 B, regions (excluding gaps) to "
                               "4407 B"));
  EXPECT_THAT(CheckInvariants(report), ::testing::Contains(out[0]));
}

TEST(CheckInvariants, IncludingGapsMustNotBeBelowExcluding) {
  CompilationReport report = AdderMk1Report();
  report.tiles[3].by_region[1] = {10, 4};
  Violations out;
  CheckIncludingAtLeastExcluding(report.tiles[3], out);
  EXPECT_THAT(out, ElementsAre("tile 3: Interleaved region has 4 B including gaps < 10 B "
                               "excluding gaps"));
}

TEST(CheckInvariants, LivenessMustCoverTheTile) {
  TileMemory tile = AdderMk1Report().tiles[0];
  tile.always_live -= 1;
  Violations out;
  CheckLivenessSumsToTotal(tile, out);
  EXPECT_THAT(out, ElementsAre("tile 0: always-live 5746 B + not-always-live 33 B != 5780 B "
                               "excluding gaps"));
}

TEST(CheckInvariants, VertexDataCategoriesMustSumToTheirDataTypes) {
  TileMemory tile = AdderMk1Report().tiles[0];
  tile.vertex_data[3] = 8;  // padding that no data type accounts for
  Violations out;
  CheckVertexDataSums(tile, out);
  EXPECT_THAT(out, ElementsAre("tile 0: vertex data by category sums to 21 B, its categories "
                               "to 13 B"));
}

TEST(CheckInvariants, VertexTypeIndicesMustExist) {
  CompilationReport report = AdderMk1Report();
  report.tiles[2].vertex_types.push_back({7, 1});
  EXPECT_THAT(CheckInvariants(report),
              ElementsAre("tile 2: vertex type index 7 out of range (3 types)"));
}

TEST(CheckInvariants, TilesMustCoverTheTargetInOrder) {
  CompilationReport report = AdderMk1Report();
  report.tiles.pop_back();
  EXPECT_THAT(CheckInvariants(report),
              ElementsAre("report has 1215 tiles, the target 1216",
                          "histogram counts sum to 1215, the target has 1216 tiles"));
  report = AdderMk1Report();
  std::swap(report.tiles[10].tile, report.tiles[11].tile);
  EXPECT_THAT(CheckInvariants(report),
              ElementsAre("tiles[10] has id 11; tiles must be in id order from 0"));
}

TEST(CheckInvariants, TargetFiguresMustAgree) {
  Target target = MakeTarget("ipu2", 2, 1472, 638976, 1.33e9, 1);
  Violations out;
  CheckTarget(target, out);
  EXPECT_THAT(out, IsEmpty());
  target.total_tiles = 1472;
  target.total_memory = 1000;
  target.replication->num_replicas = 3;
  CheckTarget(target, out);
  EXPECT_THAT(out, ElementsAre("target: 1472 total tiles != 2 IPUs x 1472 tiles",
                               "target: total memory 1000 B != 1472 tiles x 624.0 kB",
                               "target: 3 replicas x 1 IPUs != 2 IPUs"));
}

TEST(CheckInvariants, HistogramCountsMustSumToTheTiles) {
  ByTileSummary by_tile;
  by_tile.rows = {{4, 5, 1215}, {5, 6, 2}};
  by_tile.max_excluding_gaps = TileMaximum{6144, 0};  // 6 KiB: past the last bucket
  by_tile.max_including_gaps = TileMaximum{5000, 0};
  by_tile.tiles_out_of_memory = 2000;
  Violations out;
  CheckHistogram(by_tile, 1216, out);
  EXPECT_THAT(out, ElementsAre("histogram counts sum to 1217, the target has 1216 tiles",
                               "maximum (excluding gaps) 6144 B is not in the last bucket 5 - 6",
                               "maximum including gaps is below the maximum excluding gaps",
                               "2000 tiles out of memory, but only 1217 tiles counted"));
  by_tile = {};
  by_tile.rows = {{0, 8, 0}, {8, 16, 3}, {12, 20, 1}};
  out.clear();
  CheckHistogram(by_tile, std::nullopt, out);
  EXPECT_THAT(out, ElementsAre("histogram row 12 - 20 overlaps or precedes 8 - 16",
                               "histogram starts or ends with an empty bucket"));
}

TEST(CheckInvariants, PrintedBlocksAreCheckedOverTheirKnownRows) {
  MemoryUsage usage = Summarize(AdderMk1Report().tiles, AdderMk1Report().vertex_types);
  Violations out;
  CheckMemoryUsage(usage, "total", out);
  EXPECT_THAT(out, IsEmpty());
  At(usage.by_category, Category::kStack) += 1;
  usage.including_gaps = 5;
  CheckMemoryUsage(usage, "total", out);
  EXPECT_THAT(out, ElementsAre("total: data types sum to 5355605 B, memory regions to 5355604 B",
                               "total: including gaps 5 B < excluding gaps 5355604 B"));
  // Unknown rows are not held to the sums.
  usage.known.categories.reset(static_cast<size_t>(Category::kStack));
  usage.known.including_gaps = false;
  out.clear();
  CheckMemoryUsage(usage, "total", out);
  EXPECT_THAT(out, IsEmpty());
}

TEST(CheckInvariants, TilesMustSumToVerbatimTotals) {
  CompilationReport report = AdderMk1Report();
  report.verbatim.total = ResolveTotal(report);
  EXPECT_THAT(CheckInvariants(report), IsEmpty());
  At(report.verbatim.total->by_category, Category::kVariables) = 1;
  report.verbatim.total->including_gaps = 2;
  Violations out;
  CheckTilesSumToTotal(report, out);
  EXPECT_THAT(out, ElementsAre("tiles sum to 23878396 B including gaps, the report says 2 B",
                               "tiles sum to 39108 B of Variables, the report says 1 B"));
}

TEST(CheckInvariants, TileBlocksMustNotExceedTheWholeGraph) {
  CompilationReport report;
  report.verbatim.total = Summarize(AdderMk1Report().tiles, {});
  TileUsage block{0, *report.verbatim.total};
  At(block.usage.by_category, Category::kConstants) = 1;
  report.verbatim.tile_blocks.push_back(block);
  Violations out;
  CheckTilesSumToTotal(report, out);
  EXPECT_THAT(out, ElementsAre("tile 0: 1 B of Constants exceeds the whole graph's 0 B"));
}

TEST(CheckInvariants, ExecutionAveragesMustFitTheTotal) {
  ExecutionReport execution = SampleExecution();
  execution.tile_average_cycles[1] = 4000.0;  // excluding idle > including idle
  execution.tile_average_cycles[5] = 9e6;
  EXPECT_THAT(CheckInvariants(execution),
              ElementsAre("compute cycles excluding idle threads (4000) exceed those including "
                          "them (3801.8)",
                          "tile averages sum to 15676050.0 cycles, more than the 6681766 total"));
}

}  // namespace
}  // namespace tileprof::report
