// The Execution section as data, on the published reports: `compare` of the
// IPU Model and hardware runs of the same tutorial (A09, A10) and of two runs
// of a halo-exchange study (R01, R02), `top --by cycles`, `plot --kind
// execution`, and the CLI around them.
#include "analyzer/execution_views.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tinyxml2.h>

#include <nlohmann/json.hpp>

#include "analyzer/memory_views.h"
#include "analyzer/plots.h"
#include "cli_run.h"
#include "tests/published_corpus.h"

namespace tileprof::analyzer {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::tileprof::cli_test::Tileprof;
using ::tileprof::testing::OurPublished;
using ::tileprof::testing::SharedPublished;

LoadedReport Open(const std::string& path) {
  auto loaded = OpenReport(path, kExecutionNeeds);
  EXPECT_TRUE(loaded) << (loaded ? "" : loaded.error().message());
  return loaded ? std::move(*loaded) : LoadedReport{};
}

const Table* Find(const Output& out, std::string_view name) {
  for (const Table& t : out.tables)
    if (t.name == name) return &t;
  return nullptr;
}

const std::vector<Cell>* Row(const Table& table, std::string_view first) {
  for (const auto& row : table.rows)
    if (CellText(row[0]) == first) return &row;
  return nullptr;
}

const std::string kA09 =
    SharedPublished("A09_poplar_tut7_sdk2.1-2.2_execution_programs_ipumodel.txt");
const std::string kA10 = SharedPublished("A10_poplar_tut7_sdk2.2_execution_ipu_hardware.txt");
const std::string kA07 =
    SharedPublished("A07_poplar_tut7_2020-04_mk1_profile_execution_totals.txt");
const std::string kR01 =
    OurPublished("R01_lbm-graphcore_explicitOneTensor_execution_cycles_by_vertex.txt");
const std::string kR02 =
    OurPublished("R02_lbm-graphcore_explicitManyTensors_execution_cycles_by_vertex.txt");

TEST(CompareExecution, IpuModelAgainstHardwareGivesTheExecutionDeltas) {
  auto out = CompareView(Open(kA09), Open(kA10), 20);
  ASSERT_TRUE(out) << out.error().message();
  const Table* execution = Find(*out, "execution");
  ASSERT_TRUE(execution);
  const auto* total = Row(*execution, "Total cycles");
  ASSERT_TRUE(total);
  EXPECT_EQ(std::get<int64_t>((*total)[3]), 25444984 - 6681766);
  const auto* compute = Row(*execution, "Tile average compute cycles (including idle threads)");
  ASSERT_TRUE(compute);
  EXPECT_DOUBLE_EQ(std::get<double>((*compute)[3]), 28300.3 - 3801.8);
  // Hardware does not print the compute cycles excluding idle threads.
  const auto* excluding = Row(*execution, "Tile average compute cycles (excluding idle threads)");
  ASSERT_TRUE(excluding);
  EXPECT_TRUE(std::holds_alternative<std::monostate>((*excluding)[2]));
  const auto* host = Row(*execution, "Tile average host exchange cycles");
  EXPECT_DOUBLE_EQ(std::get<double>((*host)[3]), 2641488.4 - 6663550.8);
  // Neither report lists cycles by vertex type; neither has memory figures.
  EXPECT_FALSE(Find(*out, "vertex_types"));
  EXPECT_FALSE(Find(*out, "totals"));
}

TEST(CompareExecution, VertexTypesSortedByTheSizeOfTheChange) {
  auto out = CompareView(Open(kR01), Open(kR02), 3);
  ASSERT_TRUE(out) << out.error().message();
  const Table* types = Find(*out, "vertex_types");
  ASSERT_TRUE(types);
  std::vector<std::string> names;
  for (const auto& row : types->rows) names.push_back(CellText(row[0]));
  EXPECT_THAT(names, ElementsAre("popops::Zero2d<float>", "poplar_rt::ShortMemcpy",
                                 "poplar_rt::DstStridedCopyDA32", "[5 others]"));
  EXPECT_EQ(std::get<int64_t>(types->rows[0][5]), 4961280 - 17612544);
  // [5 others] sums the rest, popops::Zero<float> (only in R02) among them.
  EXPECT_EQ(std::get<int64_t>(types->rows[3][5]),
            (11600476 + 243200 + 243200 + 79866 + 1368) - (11521852 + 243200 + 243200 + 101132));
}

TEST(CompareExecution, SdkOneSumsAgainstTileAveragesAreNotMixed) {
  auto out = CompareView(Open(kA07), Open(kA09), 20);
  ASSERT_TRUE(out);
  const Table* execution = Find(*out, "execution");
  ASSERT_TRUE(execution);
  const auto* global =
      Row(*execution,
          "Total global exchange cycles (not measured: needs debug.instrumentExternalExchange)");
  ASSERT_TRUE(global);
  EXPECT_TRUE(Row(*execution, "Total compute cycles (including idle threads) (estimated)"));
  EXPECT_THAT(out->notes, ::testing::Contains(HasSubstr("not compared with each other")));
  EXPECT_THAT(out->notes, ::testing::Contains(HasSubstr("Only one report lists cycles")));
}

TEST(TopVertexTypes, ByCyclesWithShares) {
  auto out = TopVertexTypesView(Open(kA07), 2);
  ASSERT_TRUE(out);
  const Table& t = out->tables[0];
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(CellText(t.rows[0][1]), "DotProductVertex");
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[0][4]), 105);  // 5,250,000 cycles / 50,000
  EXPECT_EQ(CellText(t.rows[2][1]), "[1 others]");
  EXPECT_NEAR(std::get<double>(t.rows[0][5]), 5250000.0 / 5334536 * 100, 1e-9);
  auto none = TopVertexTypesView(Open(kA09), 5);
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().message(), HasSubstr("no 'Cycles by vertex type' list"));
}

TEST(PlotExecution, OneBarPerKindWithItsShare) {
  for (const std::string& path : {kA10, kA07}) {
    LoadedReport loaded = Open(path);
    auto svg = PlotSvg(loaded, PlotKind::kExecution);
    ASSERT_TRUE(svg) << svg.error().message();
    tinyxml2::XMLDocument doc;
    ASSERT_EQ(doc.Parse(svg->data(), svg->size()), tinyxml2::XML_SUCCESS) << doc.ErrorStr();
    size_t bars = CycleSplit(*loaded.execution).size();
    size_t rects = 0;
    for (auto* e = doc.RootElement()->FirstChildElement("rect"); e;
         e = e->NextSiblingElement("rect"))
      ++rects;
    EXPECT_EQ(rects, bars + 1);  // and the white background
  }
  EXPECT_THAT(*PlotSvg(Open(kA10), PlotKind::kExecution),
              HasSubstr("Tile average host exchange cycles: 2,641,488.4 (10.4% of total)"));
  EXPECT_THAT(*PlotSvg(Open(kA07), PlotKind::kExecution),
              HasSubstr("not measured (needs debug.instrumentExternalExchange)"));
}

TEST(ExecutionCli, CompareTopPlotAndBadInput) {
  auto compare = Tileprof("compare '" + kA09 + "' '" + kA10 + "'");
  EXPECT_EQ(compare.status, 0) << compare.out;
  EXPECT_THAT(compare.out, ::testing::ContainsRegex("Total cycles +6,681,766 +25,444,984 +"
                                                    "\\+18,763,218"));
  auto json = Tileprof("compare --format=json '" + kR01 + "' '" + kR02 + "'");
  ASSERT_EQ(json.status, 0);
  auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["vertex_types"][0]["vertex_type"], "popops::Zero2d<float>");
  auto top = Tileprof("top --by cycles -n 1 '" + kR01 + "'");
  EXPECT_EQ(top.status, 0);
  EXPECT_THAT(top.out, HasSubstr("popops::Zero2d<float>"));
  auto plot = Tileprof("plot --kind execution '" + kA10 + "' -o /dev/null");
  EXPECT_EQ(plot.status, 0) << plot.out;
  auto memory_only = Tileprof("compare '" + SharedPublished("A03_tfdocs_mk1_memory_usage.txt") +
                              "' '" + kA09 + "'");
  EXPECT_EQ(memory_only.status, 1);
  EXPECT_THAT(memory_only.out, HasSubstr("nothing in common to compare"));
}

}  // namespace
}  // namespace tileprof::analyzer
