#include "reports/text_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report_fixtures.h"
#include "reports/text_reader.h"

namespace tileprof::report {
namespace {

using testing::AdderMk1Report;
using ::testing::ElementsAre;
using testing::ImbalancedMk1Report;
using testing::Lines;
using testing::ReadShared;
using testing::SampleExecution;

TextReportOptions PoplarIdentical() {
  TextReportOptions options;
  options.format_version_line = false;
  return options;
}

// The whole published adder report, every line derived from 1,216 tiles:
// Target and Graph from their structs, Memory Usage from Summarize, the
// histogram, maxima and out-of-memory count from SummarizeByTile, and no tile
// blocks because the adder is balanced (IsImbalanced).
TEST(WriteTextReport, ReproducesThePublishedAdderReportFromPerTileData) {
  std::string expected = ReadShared("corpus/reports/adder-mk1.rep");
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(WriteTextReport(AdderMk1Report(), nullptr, PoplarIdentical()), expected);
}

TEST(WriteTextReport, FormatVersionLineComesFirstWhenAsked) {
  std::string text = WriteTextReport(AdderMk1Report(), nullptr, TextReportOptions{});
  EXPECT_TRUE(text.starts_with("tileprof report format: 1.2\n\nTarget:\n")) << text.substr(0, 80);
}

// tileprof's Liveness section (show_liveness): the peak step, its fullest
// tile and the largest variables live then; a reader skips it, reading the
// same report as without it.
TEST(WriteTextReport, LivenessSectionGivesThePeakAndReadsBackAsWithout) {
  CompilationReport report = AdderMk1Report();
  report.programs = {{"main", "Sequence", {1, 2}, std::nullopt},
                     {"add", "Execute", {}, std::nullopt},
                     {"copy", "Execute", {}, std::nullopt}};
  report.liveness = {{1, 400}, {2, 1200}};
  report.liveness_fullest_tiles = {{5, 100}, {7, 700}};
  report.always_live_variables = {{"c", 8}};
  report.not_always_live_variables = {{"exchange buffer of copy", 800, 1, 1}, {"x", 400, 0, 1}};
  TextReportOptions options;
  options.show_liveness = true;
  const std::string text = WriteTextReport(report, nullptr, options);
  EXPECT_THAT(LivenessLines(report),
              ElementsAre("Liveness:", "  Program steps:                    2",
                          "  Always-live (all tiles):          8 B",
                          "  Peak not-always-live (all tiles): 1,200 B at step 1 (copy)",
                          "  Fullest tile at the peak:         tile 7, 700 B not-always-live",
                          "  Largest live at the peak (all tiles, steps live):",
                          "    exchange buffer of copy   800 B   1-1",
                          "    x                         400 B   0-1"));
  EXPECT_NE(text.find("\n\nLiveness:\n"), std::string::npos);
  Expected<ParsedTextReport> with = ReadTextReport(text, "r.rep");
  Expected<ParsedTextReport> without =
      ReadTextReport(WriteTextReport(report, nullptr, TextReportOptions{}), "r.rep");
  ASSERT_TRUE(with && without);
  EXPECT_EQ(with->compilation, without->compilation);
  EXPECT_EQ(with->stats, without->stats) << "no line of the section is unknown";
  EXPECT_TRUE(LivenessLines(CompilationReport{}).empty());
}

TEST(WriteTextReport, ComputesTheWholeGraphFromTheTiles) {
  CompilationReport report = AdderMk1Report();
  At(report.tiles[7].by_category, Category::kConstants) += 1024;
  report.tiles[7].by_region[0].excluding_gaps += 1024;
  report.tiles[7].by_region[0].including_gaps += 1024;
  std::string text = WriteTextReport(report, nullptr, PoplarIdentical());
  EXPECT_THAT(Lines(text),
              ::testing::Contains("          Constants:                             1,024 B"));
  EXPECT_THAT(Lines(text), ::testing::Contains("        Non-interleaved:     5,356,628 B"));
}

// The imbalanced Mk1 graph: the writer prints every histogram bucket where
// the publication elided empty ones, and the tile 0 block in full where the
// publication stopped early. Every published line must appear, in order, and
// our extra lines must be exactly the elided ones.
TEST(WriteTextReport, ReproducesThePublishedImbalancedHistogramAndTileBlock) {
  std::vector<std::string> ours =
      Lines(WriteTextReport(ImbalancedMk1Report(), nullptr, PoplarIdentical()));
  std::vector<std::string> published = Lines(ReadShared("corpus/reports/oom-mk1-excerpt.rep"));
  ASSERT_FALSE(published.empty());
  // The seed's tile block has one more By Type row than the corpus excerpt.
  published.push_back(
      "            popops::BinaryOp1DSupervisor<popops::expr::BinaryOpType::MULTIPLY,float>"
      "           752 B");
  auto start = std::find(ours.begin(), ours.end(), published.front());
  ASSERT_NE(start, ours.end());
  std::vector<std::string> extra;
  auto it = start;
  for (const std::string& line : published) {
    // The publication's blank line inside the tile block is not ours.
    if (line.empty() && it != ours.end() && !it->empty()) continue;
    while (it != ours.end() && *it != line) extra.push_back(*it++);
    ASSERT_NE(it, ours.end()) << "published line not reproduced in order: " << line;
    ++it;
  }
  // Elided: empty histogram buckets, the Total label, the data-type rows after
  // Control Code and the last three vertex data categories.
  size_t empty_buckets = 0;
  std::vector<std::string> other;
  for (const std::string& line : extra) {
    if (line.ends_with("                                               0") && line.size() == 62)
      ++empty_buckets;
    else
      other.push_back(line);
  }
  EXPECT_EQ(empty_buckets, 102u - 14u);
  EXPECT_THAT(other,
              ElementsAre("  Total:", "          Vertex Code:                               0 B",
                          "          Internal Exchange Code:                    0 B",
                          "          Host Exchange Code:                        0 B",
                          "          Global Exchange Code:                      0 B",
                          "          Instrumentation Results:                   0 B",
                          "          Shared Code Storage:                       0 B",
                          "          Shared Data Storage:                       0 B",
                          "            Copy pointers:                  7,403 B",
                          "            Padding:                            0 B",
                          "            Descriptors:                        0 B"));
}

TEST(WriteTextReport, PrintsFiveTileBlocksInDescendingOrderWhenImbalanced) {
  std::string text = WriteTextReport(ImbalancedMk1Report(), nullptr, PoplarIdentical());
  std::vector<std::string> headers;
  for (const std::string& line : Lines(text))
    if (line.starts_with("Tile # ")) headers.push_back(line);
  // Tile 3 holds 3 B more than tile 2; tile 27 is the first of the 12 KiB
  // tiles with the largest remainder (27 % 7 = 6).
  EXPECT_THAT(headers, ElementsAre("Tile # 0 memory usage:", "Tile # 1 memory usage:",
                                   "Tile # 3 memory usage:", "Tile # 2 memory usage:",
                                   "Tile # 27 memory usage:"));
}

TEST(WriteTextReport, TileBlockPolicyOverridesTheImbalanceRule) {
  TextReportOptions options = PoplarIdentical();
  options.tile_blocks = TileBlocks::kAlways;
  options.max_tile_blocks = 2;
  std::string text = WriteTextReport(AdderMk1Report(), nullptr, options);
  EXPECT_NE(text.find("\nTile # 0 memory usage:\nMemory Usage:\n  Total:\n"
                      "    Including Gaps:             49,184 B\n"),
            std::string::npos);
  EXPECT_NE(text.find("Tile # 1 memory usage:"), std::string::npos);
  EXPECT_EQ(text.find("Tile # 2 memory usage:"), std::string::npos);
  options.tile_blocks = TileBlocks::kNever;
  EXPECT_EQ(WriteTextReport(ImbalancedMk1Report(), nullptr, options).find("Tile #"),
            std::string::npos);
}

// Spec section 3: the Mk2 / Bow sample's replica lines and clock.
TEST(TargetLines, PrintsReplicaLinesForNewerTargets) {
  EXPECT_THAT(
      TargetLines(MakeTarget("ipu21", 1, 1472, 638976, 1.85e9, 1)),
      ElementsAre("Target:", "  Number of IPUs:         1", "  Tiles per IPU:          1,472",
                  "  Total Tiles:            1,472", "  Memory Per-Tile:        624.0 kB",
                  "  Total Memory:           897.0 MB", "  Clock Speed (approx):   1,850.0 MHz",
                  "  Number of Replicas:     1", "  IPUs per Replica:       1",
                  "  Tiles per Replica:      1,472", "  Memory per Replica:     897.0 MB"));
}

// Spec section 7, the tutorial's numbers. The sample's one "Cycles by vertex
// type" row is padded for other rows the tutorial elided; with a single row
// our name column is just that name.
TEST(ExecutionLines, MatchesTheTutorialSample) {
  EXPECT_THAT(
      ExecutionLines(SampleExecution(), TextReportOptions{}),
      ElementsAre(
          "Execution:", "", "Programs executed:", "", "<anonymous>.", "",
          "  Total cycles:                                         6,681,766 (approx "
          "5,023.9 microseconds)",
          "  Tile average compute cycles (including idle threads): 3,801.8 (0.1% of total)",
          "  Tile average compute cycles (excluding idle threads): 3,717.6 (0.1% of total)",
          "  Tile average IPU exchange cycles:                     8,697.4 (0.1% of total)",
          "  Tile average global exchange cycles:                  0.0 (0.0% of total)",
          "  Tile average host exchange cycles:                    6,663,550.8 (99.7% of "
          "total)",
          "  Tile average sync cycles:                             1,134.8 (0.0% of total)", "",
          "  Cycles by vertex type:", "    popops::Zero2d<float> (14592 instances):   17,612,544"));
}

TEST(ExecutionLines, SortsVertexTypesAndShowsStepsOnRequest) {
  ExecutionReport execution = SampleExecution();
  execution.cycles_by_vertex_type.push_back({"popops::Fill<half>", 1216, 99999999});
  execution.steps = {{"main", 1200}, {"copy in", 34}};
  TextReportOptions options;
  options.show_execution_steps = true;
  std::vector<std::string> lines = ExecutionLines(execution, options);
  EXPECT_THAT(std::vector<std::string>(lines.end() - 6, lines.end()),
              ElementsAre("    popops::Fill<half>    (1216 instances):    99,999,999",
                          "    popops::Zero2d<float> (14592 instances):   17,612,544", "",
                          "  Execution steps:", "    main      1,200", "    copy in      34"));
}

TEST(VertexTypeNameWidth, FitsBothPublishedRowLengths) {
  EXPECT_EQ(12 + VertexTypeNameWidth(67) + 10 + 2, 96u);   // adder-mk1.rep
  EXPECT_EQ(12 + VertexTypeNameWidth(72) + 10 + 2, 100u);  // seed 004 tile block
  EXPECT_EQ(VertexTypeNameWidth(0), 4u);
  EXPECT_EQ(VertexTypeNameWidth(1), 8u);
  EXPECT_EQ(VertexTypeNameWidth(4), 8u);
}

TEST(MemoryUsageLines, LeavesOutRowsThatAreNotKnown) {
  MemoryUsage usage;
  usage.known = MemoryRowsKnown::None();
  usage.known.including_gaps = true;
  usage.including_gaps = 100;
  EXPECT_THAT(MemoryUsageLines(usage),
              ElementsAre("Memory Usage:", "  Total:", "    Including Gaps:                100 B"));
  usage.known.categories.set(static_cast<size_t>(Category::kStack));
  At(usage.by_category, Category::kStack) = 100;
  EXPECT_THAT(MemoryUsageLines(usage),
              ElementsAre("Memory Usage:", "  Total:", "    Including Gaps:                100 B",
                          "    Excluding Gaps:", "      By Data Type:",
                          "          Stack:                                   100 B"));
}

TEST(WriteTextReport, EmptyReportIsEmpty) {
  EXPECT_EQ(WriteTextReport(CompilationReport{}, nullptr, PoplarIdentical()), "");
}

}  // namespace
}  // namespace tileprof::report
