// The view page's data (analyzer/view_page.h) against the report it shows:
// the Liveness view's peak is the report's peak not-always-live figure, the
// Memory view's columns are the report's tiles, and what the page embeds
// cannot end its <script> early.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "analyzer/view_page.h"
#include "analyzer_fixtures.h"

namespace tileprof::analyzer {
namespace {

using namespace testing;  // NOLINT: the fixtures
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

LoadedReport Open(const std::string& path) {
  auto loaded = OpenReport(path);
  EXPECT_TRUE(loaded) << loaded.error().message();
  return loaded ? std::move(*loaded) : LoadedReport{};
}

// The JSON between the page's data tags.
json EmbeddedData(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"tileprof-data\">";
  const size_t begin = page.find(open);
  EXPECT_NE(begin, std::string::npos);
  const size_t end = page.find("</script>", begin);
  return json::parse(page.substr(begin + open.size(), end - begin - open.size()));
}

TEST(ViewPage, LivenessAndTilesAreTheReports) {
  const CompiledSample& s = OomSample();
  LoadedReport loaded = Open(s.paths.at("json"));
  const report::CompilationReport& report = loaded.compilation;
  ASSERT_FALSE(report.liveness.empty());
  json data = ViewData(loaded).value();

  uint64_t peak = 0;
  for (const report::LivenessStep& step : report.liveness)
    peak = std::max(peak, step.not_always_live);
  const json& live = data["liveness"]["notAlwaysLive"];
  ASSERT_EQ(live.size(), report.liveness.size());
  uint64_t page_peak = 0;
  for (const json& bytes : live) page_peak = std::max(page_peak, bytes.get<uint64_t>());
  EXPECT_EQ(page_peak, peak);
  EXPECT_EQ(data["programs"].size(), report.programs.size());

  const json& tiles = data["tiles"];
  ASSERT_EQ(tiles["excludingGaps"].size(), report.tiles.size());
  for (size_t t = 0; t < report.tiles.size(); ++t) {
    uint64_t categories = 0;
    for (const json& c : tiles["categories"]) categories += c["bytes"][t].get<uint64_t>();
    EXPECT_EQ(categories, report.tiles[t].CategoryTotal()) << "tile " << t;
    EXPECT_EQ(tiles["excludingGaps"][t].get<uint64_t>(), report.tiles[t].ExcludingGaps());
  }
  // The out-of-memory analysis the Insights view shows.
  EXPECT_EQ(data["oom"]["summary"][0]["tiles_out_of_memory"].get<uint64_t>(),
            1u);  // samples/oom/README.md
}

// The Operations view's totals are the report's: every vertex of a compute
// set an operation owns is counted once, the others (the seed's) not at all.
TEST(ViewPage, OperationsAccountForTheirComputeSetsVertices) {
  LoadedReport loaded = Open(OomSample().paths.at("json"));
  const report::CompilationReport& report = loaded.compilation;
  ASSERT_FALSE(report.operations.empty());
  json data = ViewData(loaded).value();
  uint64_t owned = 0, all = 0, listed = 0;
  std::set<uint64_t> sets;
  for (const json& row : data["operations"]) {
    listed += row[2].get<uint64_t>();
    EXPECT_TRUE(row[6].is_null()) << "a compiled report has no cycles";
    for (const json& cs : row[7]) {
      EXPECT_TRUE(sets.insert(cs.get<uint64_t>()).second);
      owned += data["computeSets"][cs.get<size_t>()][1].get<uint64_t>();
    }
  }
  for (const json& set : data["computeSets"]) all += set[1].get<uint64_t>();
  EXPECT_EQ(listed, owned);
  EXPECT_LT(owned, all);  // setSeed belongs to no instruction
  EXPECT_EQ(data["operations"].size(), report.operations.size());
}

TEST(ViewPage, ListsTheLargestVariablesOfTheMostUsedTilesFirst) {
  LoadedReport loaded = Open(OomSample().paths.at("json"));
  json data = ViewData(loaded).value();
  const json& rows = data["variables"];
  ASSERT_FALSE(rows.empty());
  uint32_t fullest = 0;
  for (const report::TileMemory& tile : loaded.compilation.tiles)
    if (tile.ExcludingGaps() > loaded.compilation.tiles[fullest].ExcludingGaps())
      fullest = tile.tile;
  EXPECT_EQ(rows[0][0].get<uint32_t>(), fullest);
  std::map<uint32_t, size_t> per_tile;
  for (const json& row : rows) ++per_tile[row[0].get<uint32_t>()];
  for (const auto& [tile, count] : per_tile) EXPECT_LE(count, kViewVariablesPerTile) << tile;
  // Tiles are counted as listed whether or not they hold variables.
  EXPECT_GE(data["variablesTiles"].get<size_t>(), per_tile.size());
}

TEST(ViewPage, EmbeddedNamesCannotEndTheScript) {
  LoadedReport loaded = Open(OomSample().paths.at("json"));
  ASSERT_FALSE(loaded.compilation.variables.empty());
  const std::string hostile = "</script><script>alert(1)</script>";
  loaded.compilation.variables[0].name = hostile;
  loaded.path = "<b>report</b>";
  std::string page = ViewPage(loaded, nullptr).value();
  EXPECT_THAT(page, Not(HasSubstr(hostile)));
  EXPECT_THAT(page, Not(HasSubstr("<b>report</b>")));
  json data = EmbeddedData(page);
  bool found = false;
  for (const json& row : data["report"]["variables"]) found = found || row[1] == hostile;
  EXPECT_TRUE(found) << "the name survives, escaped";
  EXPECT_EQ(data["report"]["path"], "<b>report</b>");
}

TEST(ViewPage, CompareCarriesBothReportsAndTheirDeltas) {
  LoadedReport a = Open(OomSample().paths.at("json"));
  LoadedReport b = Open(AdderSample().paths.at("json"));
  json data = EmbeddedData(ViewPage(a, &b).value());
  ASSERT_TRUE(data.contains("other"));
  EXPECT_EQ(data["other"]["path"], b.path);
  ASSERT_TRUE(data["compare"].contains("totals")) << data["compare"].dump();
  EXPECT_THAT(data["compare"].dump(), HasSubstr("delta"));
  EXPECT_FALSE(EmbeddedData(ViewPage(a, nullptr).value()).contains("other"));
}

TEST(ViewPage, ATextReportHasNoTilesButStillAPage) {
  LoadedReport text = Open(OomSample().paths.at("text"));
  json data = ViewData(text).value();
  EXPECT_TRUE(data["tiles"].is_null());
  EXPECT_TRUE(data["liveness"]["notAlwaysLive"].empty());
  EXPECT_FALSE(data["total"].is_null());
}

}  // namespace
}  // namespace tileprof::analyzer
