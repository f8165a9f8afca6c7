#include "reports/histogram.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report_fixtures.h"
#include "reports/text_reader.h"

namespace tileprof::report {
namespace {

using ::testing::ElementsAre;
using testing::Lines;
using testing::ReadShared;

// The By Tile lines of each published histogram in seed 004, from the
// "Range (KB)" header to the "tile(s) out of memory" line.
std::vector<std::vector<std::string>> SeedHistograms() {
  std::vector<std::vector<std::string>> histograms;
  std::vector<std::string> current;
  bool inside = false;
  for (const std::string& line : Lines(ReadShared("seeds/004_52f774136a9b39c5.txt"))) {
    if (line == kHistogramHeader) inside = true;
    if (!inside) continue;
    current.push_back(line);
    if (line.ends_with("tile(s) out of memory")) {
      histograms.push_back(std::move(current));
      current.clear();
      inside = false;
    }
  }
  return histograms;
}

// The reader takes the counts and maxima from each published report; the bars,
// padding and K figures are recomputed and must give the seed's bytes.
TEST(ReproduceHistogram, ReRendersThePublishedHistogramsByteForByte) {
  std::vector<std::vector<std::string>> seed = SeedHistograms();
  ASSERT_EQ(seed.size(), 2u);
  const char* kFiles[] = {"corpus/reports/adder-mk1.rep", "corpus/reports/oom-mk1-excerpt.rep"};
  for (size_t i = 0; i < 2; ++i) {
    Expected<ParsedTextReport> parsed = ReadTextReport(ReadShared(kFiles[i]), kFiles[i]);
    ASSERT_TRUE(parsed) << parsed.error().message();
    Expected<std::vector<std::string>> lines = ReproduceHistogram(*parsed);
    ASSERT_TRUE(lines) << lines.error().message();
    EXPECT_EQ(*lines, seed[i]) << kFiles[i];
  }
}

TEST(ReproduceHistogram, NeedsAByTileSection) {
  Expected<ParsedTextReport> parsed = ReadTextReport("Graph:\n", "g.rep");
  ASSERT_TRUE(parsed);
  Expected<std::vector<std::string>> lines = ReproduceHistogram(*parsed);
  ASSERT_FALSE(lines);
  EXPECT_EQ(lines.error().message(), "report has no By Tile section");
}

TEST(ChooseBucketKib, FitsBothPublishedSamples) {
  EXPECT_EQ(ChooseBucketKib(4400, 5780), 1u);         // adder: 4 - 5, 5 - 6
  EXPECT_EQ(ChooseBucketKib(6144, 834339), 8u);       // imbalanced: 0 - 8 ... 808 - 816
  EXPECT_EQ(ChooseBucketKib(0, 128 * 1024 - 1), 1u);  // exactly 128 buckets
  EXPECT_EQ(ChooseBucketKib(0, 128 * 1024), 2u);      // 129 would be too many
  EXPECT_EQ(ChooseBucketKib(5, 5), 1u);
  EXPECT_EQ(ChooseBucketKib(0, UINT64_MAX), uint64_t{1} << 47);
}

TEST(BarLength, LargestGetsFortyAndNonEmptyAtLeastOne) {
  EXPECT_EQ(BarLength(1215, 1215), 40);
  EXPECT_EQ(BarLength(1, 1215), 1);
  EXPECT_EQ(BarLength(20, 1192), 1);  // the published 0.67 star
  EXPECT_EQ(BarLength(0, 1192), 0);
  EXPECT_EQ(BarLength(596, 1192), 20);
  EXPECT_EQ(BarLength(44, 1192), 1);  // 1.48
  EXPECT_EQ(BarLength(45, 1192), 2);  // 1.51
  EXPECT_EQ(BarLength(3, 8), 15);     // 15.0
  EXPECT_EQ(BarLength(UINT64_MAX - 1, UINT64_MAX), 40);
}

TEST(BuildHistogram, BucketsFromSmallestToLargestIncludingEmptyOnes) {
  std::vector<uint64_t> tiles = {4096, 4100, 9000, 5119};
  EXPECT_THAT(BuildHistogram(tiles),
              ElementsAre(HistogramRow{4, 5, 3}, HistogramRow{5, 6, 0}, HistogramRow{6, 7, 0},
                          HistogramRow{7, 8, 0}, HistogramRow{8, 9, 1}));
  EXPECT_TRUE(BuildHistogram({}).empty());
  std::vector<uint64_t> one = {0};
  EXPECT_THAT(BuildHistogram(one), ElementsAre(HistogramRow{0, 1, 1}));
}

TEST(RenderHistogramRows, PadsRangesToTheDigitsOfTheLargestBound) {
  std::vector<HistogramRow> rows = {{0, 8, 20}, {8, 16, 1192}, {1000, 1008, 4}};
  EXPECT_THAT(RenderHistogramRows(rows),
              ElementsAre("       0 -    8 *                                            20",
                          "       8 -   16 ****************************************  1,192",
                          "    1000 - 1008 *                                             4"));
}

TEST(RenderHistogramRows, KeepsLargeCountsClearOfTheBar) {
  std::vector<HistogramRow> rows = {{0, 8, 120000}, {8, 16, 5}};
  EXPECT_THAT(RenderHistogramRows(rows),
              ElementsAre("        0 -  8 **************************************** 120,000",
                          "        8 - 16 *                                             5"));
}

TEST(RenderByTile, LeavesOutLinesThatAreNotKnown) {
  ByTileSummary by_tile;
  by_tile.rows = {{4, 5, 2}};
  EXPECT_THAT(RenderByTile(by_tile),
              ElementsAre(std::string(kHistogramHeader),
                          "         4 - 5 ****************************************      2"));
  by_tile.tiles_out_of_memory = 1234;
  EXPECT_THAT(RenderByTile(by_tile),
              ElementsAre(std::string(kHistogramHeader),
                          "         4 - 5 ****************************************      2", "",
                          "    1,234 tile(s) out of memory"));
}

TEST(RowsAreContiguous, DetectsElisionsAndUnevenWidths) {
  std::vector<HistogramRow> rows = {{0, 8, 1}, {8, 16, 1}};
  EXPECT_TRUE(RowsAreContiguous(rows));
  rows.push_back({24, 32, 1});
  EXPECT_FALSE(RowsAreContiguous(rows));
  std::vector<HistogramRow> uneven = {{0, 8, 1}, {8, 12, 1}};
  EXPECT_FALSE(RowsAreContiguous(uneven));
}

}  // namespace
}  // namespace tileprof::report
