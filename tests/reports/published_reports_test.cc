// Every published text report and Execution summary, read: A01-A10 from
// ../shared/corpus/published/ and R01-R03 from tests/analyzer/data/published/
// (sources in SOURCES.md beside each). Every line of each is placed (no
// text_unknown_line), the figures land where they belong, and what is read
// writes back to text that reads the same.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/file.h"
#include "reports/text_input.h"
#include "reports/text_reader.h"
#include "reports/text_writer.h"
#include "tests/published_corpus.h"

namespace tileprof::report {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using ::tileprof::testing::OurPublished;
using ::tileprof::testing::SharedPublished;

ParsedTextReport MustRead(const std::string& path) {
  Expected<std::string> text = ReadFile(path);
  EXPECT_TRUE(text) << path;
  auto parsed = ReadTextReport(text ? *text : std::string(), path);
  EXPECT_TRUE(parsed) << (parsed ? "" : parsed.error().message());
  if (!parsed) return {};
  EXPECT_EQ(parsed->stats.count(StatId::kTextUnknownLine), 0u) << path;
  // Written and read back, the same report.
  TextReportOptions options;
  options.show_execution_steps = true;
  const ExecutionReport* execution = parsed->execution ? &*parsed->execution : nullptr;
  std::string written = WriteTextReport(parsed->compilation, execution, options);
  auto again = ReadTextReport(written, "written.rep");
  EXPECT_TRUE(again) << written;
  if (again) {
    EXPECT_EQ(again->execution.has_value(), parsed->execution.has_value());
    if (again->execution && parsed->execution) {
      EXPECT_EQ(again->execution->total_cycles, parsed->execution->total_cycles);
      EXPECT_EQ(again->execution->tile_total_cycles, parsed->execution->tile_total_cycles);
      EXPECT_EQ(again->execution->cycles_by_vertex_type, parsed->execution->cycles_by_vertex_type);
    }
  }
  return std::move(*parsed);
}

size_t Kind(CycleKind kind) { return static_cast<size_t>(kind); }

TEST(PublishedReports, A01ToA06MemorySections) {
  ParsedTextReport a01 = MustRead(SharedPublished("A01_tfdocs_mk1_target.txt"));
  ASSERT_TRUE(a01.compilation.target);
  EXPECT_EQ(a01.compilation.target->tiles_per_ipu, 1216u);
  EXPECT_EQ(a01.compilation.target->bytes_per_tile, 262144u);
  ParsedTextReport a02 = MustRead(SharedPublished("A02_tfdocs_mk1_graph.txt"));
  ASSERT_TRUE(a02.compilation.graph);
  EXPECT_EQ(a02.compilation.graph->num_variables, 30562u);
  ParsedTextReport a03 = MustRead(SharedPublished("A03_tfdocs_mk1_memory_usage.txt"));
  ASSERT_TRUE(a03.compilation.verbatim.total);
  EXPECT_EQ(a03.compilation.verbatim.total->including_gaps, 23878396u);
  EXPECT_EQ(a03.compilation.verbatim.total->ExcludingGaps(), 5355604u);
  ParsedTextReport a04 = MustRead(SharedPublished("A04_tfdocs_mk1_tile_histogram_imbalanced.txt"));
  ASSERT_TRUE(a04.compilation.verbatim.by_tile);
  EXPECT_EQ(a04.compilation.verbatim.by_tile->tiles_out_of_memory, 2u);
  for (const char* name : {"A05_tfdocs_mk1_tile0_memory_usage.txt",
                           "A06_tfdocs_0.9.41_mk1_tile0_memory_usage_widecols.txt"}) {
    ParsedTextReport tile = MustRead(SharedPublished(name));
    ASSERT_EQ(tile.compilation.verbatim.tile_blocks.size(), 1u) << name;
    EXPECT_EQ(tile.compilation.verbatim.tile_blocks[0].tile, 0u);
    EXPECT_EQ(tile.compilation.verbatim.tile_blocks[0].usage.ExcludingGaps(), 834339u);
  }
}

TEST(PublishedReports, A07Sdk1TotalsEstimatesAndUnmeasuredRows) {
  ParsedTextReport r =
      MustRead(SharedPublished("A07_poplar_tut7_2020-04_mk1_profile_execution_totals.txt"));
  ASSERT_TRUE(r.execution);
  const ExecutionReport& e = *r.execution;
  EXPECT_EQ(e.total_cycles, 8190756u);
  EXPECT_NEAR(e.clock_hz, 1.6e9, 1e6);  // 8,190,756 cycles in 5,119.2 us
  const auto& compute = e.tile_total_cycles[Kind(CycleKind::kComputeIncludingIdle)];
  ASSERT_TRUE(compute.printed);
  EXPECT_EQ(compute.cycles, 5513152u);
  EXPECT_TRUE(compute.estimated);
  EXPECT_EQ(compute.needs_option, "debug.instrumentCompute");
  EXPECT_EQ(e.tile_total_cycles[Kind(CycleKind::kComputeExcludingIdle)].cycles, 5334536u);
  EXPECT_EQ(e.tile_total_cycles[Kind(CycleKind::kIpuExchange)].cycles, 963855u);
  const auto& global = e.tile_total_cycles[Kind(CycleKind::kGlobalExchange)];
  ASSERT_TRUE(global.printed);
  EXPECT_FALSE(global.cycles);
  EXPECT_EQ(global.needs_option, "debug.instrumentExternalExchange");
  EXPECT_EQ(e.tile_total_cycles[Kind(CycleKind::kHostExchange)].cycles, 9952701003u);
  EXPECT_EQ(e.tile_total_cycles[Kind(CycleKind::kSync)].cycles, 781286u);
  ASSERT_TRUE(e.shared_structure_copy_cycles.printed);
  EXPECT_EQ(e.shared_structure_copy_cycles.cycles, 0u);
  EXPECT_THAT(e.cycles_by_vertex_type,
              ElementsAre(VertexTypeCycles{"DotProductVertex", 50000, 5250000},
                          VertexTypeCycles{"ReduceVertex", 10000, 80000},
                          VertexTypeCycles{"poplar_rt::ShortMemcpy", 63, 4536}));
  for (const auto& average : e.tile_average_cycles) EXPECT_FALSE(average);
}

TEST(PublishedReports, A08A09A10R03TileAverageLayouts) {
  ParsedTextReport a08 = MustRead(SharedPublished("A08_poplar_tut7_sdk2.0_execution_ipumodel.txt"));
  ParsedTextReport a09 =
      MustRead(SharedPublished("A09_poplar_tut7_sdk2.1-2.2_execution_programs_ipumodel.txt"));
  ParsedTextReport a10 =
      MustRead(SharedPublished("A10_poplar_tut7_sdk2.2_execution_ipu_hardware.txt"));
  ParsedTextReport r03 =
      MustRead(OurPublished("R03_tutorials_tut7_2021-10_execution_ipu_hardware_column0.txt"));
  for (const auto* r : {&a08, &a09, &a10, &r03}) ASSERT_TRUE(r->execution);
  EXPECT_EQ(a08.execution->total_cycles, 6681740u);
  EXPECT_TRUE(a08.execution->programs.empty());
  EXPECT_THAT(a09.execution->programs, ElementsAre("<anonymous>"));
  EXPECT_EQ(a09.execution->total_cycles, 6681766u);
  EXPECT_DOUBLE_EQ(*a09.execution->tile_average_cycles[Kind(CycleKind::kHostExchange)], 6663550.8);
  EXPECT_NEAR(a09.execution->clock_hz, 1.33e9, 1e6);
  // On hardware Poplar does not print the compute cycles excluding idle threads.
  EXPECT_FALSE(a10.execution->tile_average_cycles[Kind(CycleKind::kComputeExcludingIdle)]);
  EXPECT_DOUBLE_EQ(*a10.execution->tile_average_cycles[Kind(CycleKind::kSync)], 135849.6);
  // The same figures with the rows at column 0, as one README printed them.
  EXPECT_EQ(r03.execution->tile_average_cycles, a10.execution->tile_average_cycles);
  EXPECT_EQ(r03.execution->total_cycles, a10.execution->total_cycles);
}

TEST(PublishedReports, R01R02CyclesByVertexTypeOfAHaloExchangeStudy) {
  ParsedTextReport r01 =
      MustRead(OurPublished("R01_lbm-graphcore_explicitOneTensor_execution_cycles_by_vertex.txt"));
  ParsedTextReport r02 = MustRead(
      OurPublished("R02_lbm-graphcore_explicitManyTensors_execution_cycles_by_vertex.txt"));
  ASSERT_TRUE(r01.execution && r02.execution);
  EXPECT_EQ(r01.execution->cycles_by_vertex_type.size(), 7u);
  EXPECT_EQ(r02.execution->cycles_by_vertex_type.size(), 8u);
  EXPECT_EQ(r01.execution->cycles_by_vertex_type[0],
            (VertexTypeCycles{"popops::Zero2d<float>", 14592, 17612544}));
  EXPECT_EQ(r02.execution->cycles_by_vertex_type.back(),
            (VertexTypeCycles{"popops::Zero<float>", 48, 1368}));
  EXPECT_NEAR(r01.execution->clock_hz, 1.6e9, 1e6);  // a Mk1: 178,569,036 cycles in 111,605.6 us
}

TEST(PublishedReports, SdkOneRowsThatDoNotScanAreLocatedErrors) {
  auto bad = ReadTextReport(
      "Execution:\n\nTotal IPU exchange cycles:   12x\n"
      "Total compute cycles (including idle threads): 5 Estimated (ask someone)\n",
      "bad.rep");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message(), HasSubstr("bad.rep:3: error: expected a count"));
}

TEST(TextInput, BinaryAndNonUtf8InputGetsOneEscapedLine) {
  auto png = ReadTextReport(std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16), "x.png");
  ASSERT_FALSE(png);
  EXPECT_EQ(png.error().message(),
            "x.png: not a text report: byte 0x89 is not UTF-8 at byte offset 0 "
            "(\"\\x89PNG\\r\\n\\x1a\\n\\x00\\x00\\x00\\rIHDR\")");
  EXPECT_EQ(png.error().message().find('\n'), std::string::npos);
  std::string nul = "Target:\n  Number of IPUs: 1\n";
  nul += std::string(1, '\0');
  auto with_nul = ReadTextReport(nul, "n.rep");
  ASSERT_FALSE(with_nul);
  EXPECT_THAT(with_nul.error().message(), HasSubstr("a NUL byte at byte offset 28"));
  // Overlong forms, surrogates and cut sequences are not UTF-8; real UTF-8 is.
  EXPECT_TRUE(FindNonText("\xc0\xaf"));
  EXPECT_TRUE(FindNonText("\xed\xa0\x80"));
  EXPECT_TRUE(FindNonText("ok \xe2\x96"));
  EXPECT_FALSE(FindNonText("Graph compilation: 100%|\xe2\x96\x88\xe2\x96\x88| \xf0\x9f\x98\x80"));
  EXPECT_EQ(FindNonText("0123456789abcdef\xff")->offset, 16u);
}

TEST(TextInput, ErrorLinesShowControlCharactersEscaped) {
  auto bad = ReadTextReport("Target:\n  Number of IPUs: \x1b[31mone\n", "c.rep");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message().find('\x1b'), std::string::npos);
  EXPECT_THAT(bad.error().message(), HasSubstr("\\x1b[31mone"));
}

}  // namespace
}  // namespace tileprof::report
