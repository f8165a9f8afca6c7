#include "reports/text_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report_fixtures.h"
#include "reports/invariants.h"
#include "reports/text_writer.h"

namespace tileprof::report {
namespace {

using testing::AdderMk1Report;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ImbalancedMk1Report;
using testing::Lines;
using testing::ReadShared;
using testing::SampleExecution;
using ::testing::StartsWith;

ParsedTextReport ReadOk(const std::string& text, std::string_view name = "test.rep") {
  Expected<ParsedTextReport> parsed = ReadTextReport(text, name);
  EXPECT_TRUE(parsed.has_value()) << (parsed ? "" : parsed.error().message());
  return parsed ? std::move(parsed).value() : ParsedTextReport{};
}

std::string ReadError(const std::string& text) {
  Expected<ParsedTextReport> parsed = ReadTextReport(text, "bad.rep");
  EXPECT_FALSE(parsed.has_value());
  return parsed ? "" : parsed.error().message();
}

TextReportOptions PoplarIdentical() {
  TextReportOptions options;
  options.format_version_line = false;
  return options;
}

TEST(ReadTextReport, ReadsThePublishedAdderReportCompletely) {
  ParsedTextReport parsed = ReadOk(ReadShared("corpus/reports/adder-mk1.rep"), "adder-mk1.rep");
  const CompilationReport& report = parsed.compilation;
  ASSERT_TRUE(report.target && report.graph && report.verbatim.total && report.verbatim.by_tile);
  EXPECT_EQ(report.target->num_ipus, 1u);
  EXPECT_EQ(report.target->tiles_per_ipu, 1216u);
  EXPECT_EQ(report.target->total_tiles, 1216u);
  EXPECT_EQ(report.target->bytes_per_tile, 262144u);
  EXPECT_EQ(report.target->total_memory, 1216u * 262144u);
  EXPECT_DOUBLE_EQ(report.target->clock_hz, 1.6e9);
  EXPECT_TRUE(report.target->sizes_rounded);
  EXPECT_FALSE(report.target->replication);
  EXPECT_EQ(*report.graph, (GraphInfo{1219, 1223, 30562, 4}));

  const MemoryUsage& total = *report.verbatim.total;
  EXPECT_TRUE(total.known.IsComplete());
  EXPECT_EQ(total.including_gaps, 23878396u);
  EXPECT_EQ(total.ExcludingGaps(), 5355604u);
  EXPECT_EQ(At(total.by_category, Category::kStack), 3852288u);
  EXPECT_EQ(At(total.by_category, Category::kInstrumentationResults), 4876u);
  EXPECT_EQ(total.vertex_data, 14640u);
  EXPECT_EQ(total.vertex_data_by_category[1], 4904u);
  ASSERT_EQ(total.by_vertex_type.size(), 3u);
  EXPECT_EQ(total.by_vertex_type[2].name,
            "popops::BinaryOp1DSupervisor<popops::expr::BinaryOpType::ADD,float>");
  EXPECT_EQ(total.by_vertex_type[0].bytes, 34048u);

  const ByTileSummary& by_tile = *report.verbatim.by_tile;
  EXPECT_THAT(by_tile.rows, ElementsAre(HistogramRow{4, 5, 1215}, HistogramRow{5, 6, 1}));
  EXPECT_EQ(by_tile.max_including_gaps, (TileMaximum{49184, 0}));
  EXPECT_EQ(by_tile.max_excluding_gaps, (TileMaximum{5780, 0}));
  EXPECT_EQ(by_tile.tiles_out_of_memory, 0u);
  EXPECT_TRUE(report.verbatim.tile_blocks.empty());
  EXPECT_TRUE(report.tiles.empty());
  EXPECT_FALSE(parsed.execution);
  EXPECT_FALSE(parsed.format_version);
  // The publication is consistent in everything the reader checks.
  EXPECT_TRUE(parsed.stats.empty()) << ::testing::PrintToString(parsed.stats.Describe());
  EXPECT_THAT(CheckInvariants(report), ElementsAre());
}

TEST(ReadTextReport, ReadsThePublishedExcerptPartially) {
  ParsedTextReport parsed = ReadOk(ReadShared("corpus/reports/oom-mk1-excerpt.rep"), "oom.rep");
  const CompilationReport& report = parsed.compilation;
  EXPECT_FALSE(report.target);
  EXPECT_FALSE(report.graph);
  EXPECT_FALSE(report.verbatim.total);
  ASSERT_TRUE(report.verbatim.by_tile);
  const ByTileSummary& by_tile = *report.verbatim.by_tile;
  ASSERT_EQ(by_tile.rows.size(), 14u);
  EXPECT_EQ(by_tile.rows[1], (HistogramRow{8, 16, 1192}));
  EXPECT_EQ(by_tile.rows[5], (HistogramRow{488, 496, 0}));
  EXPECT_EQ(by_tile.rows[13], (HistogramRow{808, 816, 1}));
  uint64_t tiles = 0;
  for (const HistogramRow& row : by_tile.rows) tiles += row.tiles;
  EXPECT_EQ(tiles, 1216u);
  EXPECT_EQ(by_tile.tiles_out_of_memory, 2u);
  EXPECT_EQ(by_tile.max_excluding_gaps, (TileMaximum{834339, 0}));

  ASSERT_EQ(report.verbatim.tile_blocks.size(), 1u);
  const TileUsage& block = report.verbatim.tile_blocks[0];
  EXPECT_EQ(block.tile, 0u);
  const MemoryRowsKnown& known = block.usage.known;
  EXPECT_TRUE(known.including_gaps);
  EXPECT_TRUE(known.regions.all());
  EXPECT_EQ(known.categories.count(), 11u);  // up to Control Code
  EXPECT_TRUE(known.categories.test(static_cast<size_t>(Category::kControlCode)));
  EXPECT_FALSE(known.categories.test(static_cast<size_t>(Category::kVertexCode)));
  EXPECT_EQ(known.vertex_data_categories.count(), 2u);
  EXPECT_EQ(block.usage.including_gaps, 834416u);
  EXPECT_EQ(block.usage.ExcludingGaps(), 834339u);
  EXPECT_EQ(block.usage.vertex_data, 22353u);
  EXPECT_EQ(block.usage.by_vertex_type.size(), 6u);

  const Stats& stats = parsed.stats;
  EXPECT_EQ(stats.count(StatId::kTextHistogramRowsElided), 1u);
  EXPECT_EQ(stats.count(StatId::kTextMissingTotalLabel), 1u);
  EXPECT_EQ(stats.count(StatId::kTextMissingRows), 1u);
  EXPECT_EQ(stats.first_location(StatId::kTextMissingRows), "oom.rep:23");
  EXPECT_EQ(stats.count(StatId::kTextHistogramBarMismatch), 0u);  // our bar rule fits
  EXPECT_EQ(stats.count(StatId::kTextUnknownLine), 0u);
  EXPECT_FALSE(stats.HasErrors());
  EXPECT_THAT(CheckInvariants(report), ElementsAre());
}

TEST(ReadTextReport, ReadsTheSpecExecutionSample) {
  std::string text =
      "Execution:\n\nPrograms executed:\n\n<anonymous>.\n\n"
      "  Total cycles:                                         6,681,766 (approx 5,023.9 "
      "microseconds)\n"
      "  Tile average compute cycles (including idle threads): 3,801.8 (0.1% of total)\n"
      "  Tile average compute cycles (excluding idle threads): 3,717.6 (0.1% of total)\n"
      "  Tile average IPU exchange cycles:                     8,697.4 (0.1% of total)\n"
      "  Tile average global exchange cycles:                  0.0 (0.0% of total)\n"
      "  Tile average host exchange cycles:                    6,663,550.8 (99.7% of total)\n"
      "  Tile average sync cycles:                             1,134.8 (0.0% of total)\n\n"
      "  Cycles by vertex type:\n"
      "    popops::Zero2d<float>              (14592 instances):   17,612,544\n"
      "    ...\n";
  ParsedTextReport parsed = ReadOk(text);
  ASSERT_TRUE(parsed.execution);
  const ExecutionReport& execution = *parsed.execution;
  EXPECT_THAT(execution.programs, ElementsAre("<anonymous>"));
  EXPECT_EQ(execution.total_cycles, 6681766u);
  EXPECT_NEAR(execution.clock_hz, 1.33e9, 1e5);  // implied by 5,023.9 microseconds
  EXPECT_EQ(execution.tile_average_cycles[4], 6663550.8);
  EXPECT_EQ(execution.cycles_by_vertex_type,
            (std::vector<VertexTypeCycles>{{"popops::Zero2d<float>", 14592, 17612544}}));
  EXPECT_EQ(parsed.stats.count(StatId::kTextElisionMarker), 1u);
  EXPECT_EQ(parsed.stats.count(StatId::kTextInconsistentTotals), 0u);
  EXPECT_THAT(CheckInvariants(execution), ElementsAre());
  // Written again, the fixed part is the same text.
  std::vector<std::string> again = ExecutionLines(execution, TextReportOptions{});
  std::vector<std::string> original = Lines(text);
  EXPECT_EQ(std::vector<std::string>(again.begin(), again.begin() + 15),
            std::vector<std::string>(original.begin(), original.begin() + 15));
}

// Reading a published report and writing it again gives the same bytes: the
// reader keeps everything the writer needs when per-tile data is absent.
TEST(RoundTrip, PublishedAdderReportReadAndWrittenIsIdentical) {
  std::string original = ReadShared("corpus/reports/adder-mk1.rep");
  ParsedTextReport parsed = ReadOk(original);
  EXPECT_EQ(WriteTextReport(parsed.compilation, nullptr, PoplarIdentical()), original);
}

// The excerpt is written in tileprof's layout (a "  Total:" line, no blank
// line inside the block, By Type widths from the rows it has), after which
// reading and writing is stable.
TEST(RoundTrip, PublishedExcerptIsStableAfterOnePass) {
  ParsedTextReport first = ReadOk(ReadShared("corpus/reports/oom-mk1-excerpt.rep"));
  std::string once = WriteTextReport(first.compilation, nullptr, PoplarIdentical());
  EXPECT_THAT(once, StartsWith("  By Tile (Excluding Gaps):\n"));
  EXPECT_THAT(once, HasSubstr("\nTile # 0 memory usage:\nMemory Usage:\n  Total:\n"));
  ParsedTextReport second = ReadOk(once);
  EXPECT_EQ(second.compilation, first.compilation);
  EXPECT_EQ(WriteTextReport(second.compilation, nullptr, PoplarIdentical()), once);
}

// write -> read -> write of our own reports, with every section.
TEST(RoundTrip, OwnReportsAreIdenticalAfterReadingBack) {
  ExecutionReport execution = SampleExecution();
  execution.cycles_by_vertex_type.push_back({"popops::Cast<float,unsigned int>", 40, 1234});
  execution.steps = {{"main program", 6000000}, {"host copy", 681766}};
  TextReportOptions options;
  options.show_execution_steps = true;
  for (const CompilationReport& report : {AdderMk1Report(), ImbalancedMk1Report()}) {
    std::string first = WriteTextReport(report, &execution, options);
    ParsedTextReport parsed = ReadOk(first);
    ASSERT_TRUE(parsed.format_version);
    EXPECT_EQ(*parsed.format_version, kFormatVersion);
    EXPECT_TRUE(parsed.stats.empty()) << ::testing::PrintToString(parsed.stats.Describe());
    EXPECT_EQ(WriteTextReport(parsed.compilation, parsed.execution ? &*parsed.execution : nullptr,
                              options),
              first);
    // The verbatim figures are the ones derived from the tiles.
    EXPECT_EQ(parsed.compilation.verbatim.total, ResolveTotal(report));
    EXPECT_EQ(parsed.compilation.verbatim.by_tile, ResolveByTile(report));
    EXPECT_EQ(parsed.compilation.verbatim.tile_blocks,
              ResolveTileBlocks(report, TileBlocks::kWhenImbalanced));
    ASSERT_TRUE(parsed.execution);
    EXPECT_EQ(parsed.execution->steps, execution.steps);
    ASSERT_EQ(parsed.execution->cycles_by_vertex_type.size(), 2u);
    EXPECT_EQ(parsed.execution->cycles_by_vertex_type[1].name, "popops::Cast<float,unsigned int>");
  }
}

TEST(ReadTextReport, ErrorsNameFileLineAndColumn) {
  EXPECT_EQ(ReadError("Target:\n  Number of IPUs:         x\n"),
            "bad.rep:2: error: expected a count like '1,216', got 'x'\n"
            "  Number of IPUs:         x\n"
            "                          ^");
  EXPECT_THAT(ReadError("Target:\n  Memory Per-Tile:        256.0 KiB\n"),
              StartsWith("bad.rep:2: error: expected a size like '256.0 kB', got '256.0 KiB'"));
  EXPECT_THAT(ReadError("Target:\n  Clock Speed (approx):   1.6 GHz\n"),
              StartsWith("bad.rep:2: error: expected a clock like '1,600.0 MHz'"));
  EXPECT_THAT(ReadError("Graph:\n  Number of vertices:   12,34\n"),
              StartsWith("bad.rep:2: error: expected a count like '1,216', got '12,34'"));
  EXPECT_THAT(ReadError("Memory Usage:\n  Total:\n    Including Gaps:   12 KB\n"),
              StartsWith("bad.rep:3: error: expected a size like '1,234 B', got '12 KB'"));
  EXPECT_THAT(ReadError("Memory Usage:\n          By Type:\n            foo::Bar   1x2 B\n"),
              StartsWith("bad.rep:3: error: expected a count like '1,216', got '1x2'"));
  EXPECT_THAT(ReadError("Memory Usage:\n          By Type:\n            1,234 B\n"),
              StartsWith("bad.rep:3: error: vertex type row without a type name"));
  EXPECT_THAT(ReadError("Tile # zero memory usage:\n"),
              StartsWith("bad.rep:1: error: expected a count like '1,216', got 'zero'"));
  EXPECT_THAT(ReadError("  By Tile (Excluding Gaps):\n     4 - x ***  12\n"),
              StartsWith("bad.rep:2: error: expected a count like '1,216', got 'x'"));
  EXPECT_THAT(ReadError("  By Tile (Excluding Gaps):\n     4 to 5 ***  12\n"),
              StartsWith("bad.rep:2: error: expected a histogram row"));
  EXPECT_THAT(ReadError("  By Tile (Excluding Gaps):\n  8 - 16 * 1\n  0 - 8 * 1\n"),
              StartsWith("bad.rep:3: error: histogram row 0 - 8 does not follow 8 - 16"));
  EXPECT_THAT(ReadError("  By Tile (Excluding Gaps):\n  8 - 8 * 1\n"),
              StartsWith("bad.rep:2: error: empty range 8 - 8"));
  EXPECT_THAT(ReadError("  By Tile (Excluding Gaps):\n    Maximum (Including Gaps): 49,184 on 0\n"),
              StartsWith("bad.rep:2: error: expected '<bytes> (<KiB> K) on tile <id>'"));
  EXPECT_THAT(ReadError("Execution:\n  Total cycles:  12 (approx 3 seconds)\n"),
              StartsWith("bad.rep:2: error: expected '(approx <n> microseconds)'"));
  EXPECT_THAT(ReadError("Target:\n  Number of IPUs:         99999999999\n"),
              StartsWith("bad.rep:2: error: '99999999999' is out of range"));
}

TEST(ReadTextReport, RejectsTextThatIsNoReport) {
  EXPECT_THAT(ReadError(""), StartsWith("bad.rep:1: error: not a text report"));
  EXPECT_THAT(ReadError("hello\nworld\n"), StartsWith("bad.rep:1: error: not a text report"));
}

TEST(ReadTextReport, RejectsUnknownMajorVersionsByName) {
  EXPECT_THAT(ReadError("tileprof report format: 2.0\n\nTarget:\n"),
              StartsWith("bad.rep:1: error: unsupported text report format 2.0 (this reader "
                         "reads 1.x)"));
  EXPECT_THAT(ReadError("tileprof report format: one\n"),
              StartsWith("bad.rep:1: error: malformed format version 'one'"));
  ParsedTextReport newer_minor = ReadOk("tileprof report format: 1.7\n\nGraph:\n");
  EXPECT_EQ(newer_minor.format_version, (FormatVersion{1, 7}));
}

TEST(ReadTextReport, CountsTolerableOddities) {
  std::string text =
      "Target:\r\n"
      "  Number of IPUs:         1\r\n"
      "  Number of IPUs:         1\n"
      "  Favourite colour:       blue\n"
      "\n"
      "Tile # 9 memory usage:\n"
      "  By Tile (Excluding Gaps):\n"
      "       0 - 8 **                 20\n"
      "       8 - 16 ***************  1,192\n"
      "    ...\n"
      "\n"
      "Target:\n";
  ParsedTextReport parsed = ReadOk(text, "odd.rep");
  const Stats& stats = parsed.stats;
  EXPECT_EQ(stats.count(StatId::kTextCrlf), 2u);
  EXPECT_EQ(stats.first_location(StatId::kTextCrlf), "odd.rep:1");
  EXPECT_EQ(stats.count(StatId::kTextDuplicateRow), 1u);
  EXPECT_EQ(stats.count(StatId::kTextUnknownLine), 1u);
  EXPECT_EQ(stats.first_location(StatId::kTextUnknownLine), "odd.rep:4");
  EXPECT_EQ(stats.count(StatId::kTextMissingRows), 1u);  // the Target lacks 5 lines
  EXPECT_EQ(stats.count(StatId::kTextOrphanTileHeader), 1u);
  EXPECT_EQ(stats.count(StatId::kTextHistogramBarMismatch), 2u);    // 1 and 40 stars by our rule
  EXPECT_EQ(stats.count(StatId::kTextHistogramCountMismatch), 1u);  // 1,212 of 0 tiles
  EXPECT_EQ(stats.count(StatId::kTextElisionMarker), 1u);
  EXPECT_EQ(stats.count(StatId::kTextExtraReport), 1u);
  EXPECT_EQ(stats.first_location(StatId::kTextExtraReport), "odd.rep:12");
  EXPECT_FALSE(stats.HasErrors());
  EXPECT_THAT(stats.Describe(),
              ::testing::Contains(StartsWith("text_crlf (info): 2, first at odd.rep:1: ")));
}

TEST(ReadTextReport, NotesTotalsThatDisagreeWithTheirRows) {
  std::string text = ReadShared("corpus/reports/adder-mk1.rep");
  // Make Vertex Data disagree with Vertex Instances.
  size_t at = text.find("Vertex Data (14,640B)");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 21, "Vertex Data (14,641B)");
  ParsedTextReport parsed = ReadOk(text);
  EXPECT_EQ(parsed.stats.count(StatId::kTextInconsistentTotals), 1u);
  EXPECT_EQ(parsed.compilation.verbatim.total->vertex_data, 14641u);
  EXPECT_THAT(CheckInvariants(parsed.compilation),
              ElementsAre("total: Vertex Data is 14641 B, its data types sum to 14640 B",
                          "total: Vertex Data is 14641 B, its By Category rows sum to 14640 B"));
}

}  // namespace
}  // namespace tileprof::report
