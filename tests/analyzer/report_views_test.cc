// The analyzer views (analyzer/open_report.h, memory_views.h, oom.h,
// plots.h, tile_archives.h) on the seed's published reports and on samples
// compiled by the engine, across the four report formats.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tinyxml2.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "analyzer/memory_views.h"
#include "analyzer/oom.h"
#include "analyzer/open_report.h"
#include "analyzer/plots.h"
#include "analyzer/tile_archives.h"
#include "analyzer/view_page.h"
#include "analyzer/xml_writer.h"
#include "analyzer_fixtures.h"
#include "reports/json_codec.h"

namespace tileprof::analyzer {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace testing;  // NOLINT: the fixtures

LoadedReport MustOpen(const std::string& path) {
  auto loaded = OpenReport(path);
  EXPECT_TRUE(loaded) << loaded.error().message();
  return loaded ? std::move(*loaded) : LoadedReport{};
}

std::string MustRender(const Expected<Output>& output, OutputFormat format = OutputFormat::kTable) {
  EXPECT_TRUE(output) << output.error().message();
  return output ? Render(*output, format) : std::string();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The `n`-th (0-based) histogram of the seed, from its "Range (KB)" line to
// its "tile(s) out of memory" line, as published.
std::vector<std::string> SeedHistogram(int n) {
  auto text = ReadFile(SharedPath("seeds/004_52f774136a9b39c5.txt"));
  EXPECT_TRUE(text);
  std::vector<std::string> all = Lines(text ? *text : ""), block;
  int seen = -1;
  for (const std::string& line : all) {
    if (line.find("Range (KB) Histogram") != std::string::npos) ++seen;
    if (seen == n) {
      block.push_back(line);
      if (line.find("tile(s) out of memory") != std::string::npos) break;
    }
  }
  return block;
}

nlohmann::json Json(const Expected<Output>& output) {
  return nlohmann::json::parse(MustRender(output, OutputFormat::kJson));
}

// --- The seed's published reports ------------------------------------------

TEST(HistogramView, ReproducesTheSeedsHistograms) {
  const std::pair<const char*, int> cases[] = {{"corpus/reports/adder-mk1.rep", 0},
                                               {"corpus/reports/oom-mk1-excerpt.rep", 1}};
  for (const auto& [file, n] : cases) {
    SCOPED_TRACE(file);
    std::vector<std::string> expected = SeedHistogram(n);
    ASSERT_GE(expected.size(), 6u);
    std::vector<std::string> ours =
        Lines(MustRender(HistogramView(MustOpen(SharedPath(file)), {})));
    ASSERT_FALSE(ours.empty());
    EXPECT_EQ(ours.front(), "  By Tile (Excluding Gaps):");
    EXPECT_EQ(std::vector<std::string>(ours.begin() + 1, ours.end()), expected);
  }
}

TEST(HistogramView, TablesOfThePublishedExcerpt) {
  nlohmann::json j =
      Json(HistogramView(MustOpen(SharedPath("corpus/reports/oom-mk1-excerpt.rep")), {}));
  ASSERT_EQ(j["histogram"].size(), 14u);
  EXPECT_EQ(j["histogram"][13], (nlohmann::json{{"lo_kb", 808}, {"hi_kb", 816}, {"tiles", 1}}));
  EXPECT_EQ(j["maxima"][1]["bytes"], 834339);
  EXPECT_EQ(j["summary"][0]["tiles_out_of_memory"], 2);
  // The published rows leave empty buckets out, so no single width is claimed.
  EXPECT_TRUE(j["summary"][0]["bucket_kb"].is_null());
}

TEST(HistogramView, PerTileOptionsNeedPerTileData) {
  LoadedReport text = MustOpen(SharedPath("corpus/reports/adder-mk1.rep"));
  auto result = HistogramView(text, {.including_gaps = false, .bucket_kib = 2});
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(),
              StartsWith(SharedPath("corpus/reports/adder-mk1.rep") + ": "));
  EXPECT_THAT(result.error().message(), HasSubstr("per-tile data"));
}

TEST(TopTilesView, PrintsThePublishedTileBlock) {
  LoadedReport excerpt = MustOpen(SharedPath("corpus/reports/oom-mk1-excerpt.rep"));
  std::string out = MustRender(TopTilesView(excerpt, 5));
  EXPECT_THAT(out, StartsWith("Tile # 0 memory usage:\nMemory Usage:\n"));
  EXPECT_THAT(out, HasSubstr("          Variables:                           807,658 B\n"));
  EXPECT_THAT(out, HasSubstr("The text report printed 1 tile block(s); asked for 5."));
  nlohmann::json j = Json(TopTilesView(excerpt, 5));
  EXPECT_EQ(j["tiles"][0]["variable"], 807658);
  EXPECT_EQ(j["tiles"][0]["overflowed"], 580387);
  EXPECT_TRUE(j["tiles"][0]["controlTable"] == 0);
  EXPECT_TRUE(j["tiles"][0]["vertexCode"].is_null());  // not printed in the excerpt
  EXPECT_EQ(j["vertex_types"][0]["type"], "poplin::ConvPartial1x1Out<float,float,true,false>");
  // The adder report is balanced: Poplar printed no tile block.
  auto adder = TopTilesView(MustOpen(SharedPath("corpus/reports/adder-mk1.rep")), 5);
  ASSERT_FALSE(adder);
  EXPECT_THAT(adder.error().message(), HasSubstr("prints no tile blocks"));
}

TEST(OomView, ExcerptNeedsACapacityAndThenFindsTheTile) {
  LoadedReport excerpt = MustOpen(SharedPath("corpus/reports/oom-mk1-excerpt.rep"));
  auto no_target = OomView(excerpt, nullptr, {});
  ASSERT_FALSE(no_target);
  EXPECT_THAT(no_target.error().message(), HasSubstr("--bytes-per-tile"));
  nlohmann::json j = Json(OomView(excerpt, nullptr, {.bytes_per_tile = 262144}));
  EXPECT_EQ(j["summary"][0]["tiles_out_of_memory"], 2);
  EXPECT_EQ(j["tiles"][0]["tile"], 0);
  EXPECT_EQ(j["tiles"][0]["over_by"], 834339 - 262144);
  EXPECT_EQ(j["categories"][0]["category"], "Variables");
}

// --- Opening reports ----------------------------------------------------------

TEST(OpenReport, SniffsContentNotExtension) {
  const CompiledSample& s = OomSample();
  std::map<std::string, ReportFormat> expected = {{"text", ReportFormat::kText},
                                                  {"json", ReportFormat::kJson},
                                                  {"cbor", ReportFormat::kCbor},
                                                  {"sqlite", ReportFormat::kSqlite}};
  for (const auto& [name, format] : expected) {
    SCOPED_TRACE(name);
    // Every format under a misleading name.
    fs::path renamed = TempDir() / ("renamed_" + name + ".json");
    fs::copy_file(s.paths.at(name), renamed, fs::copy_options::overwrite_existing);
    LoadedReport loaded = MustOpen(renamed.string());
    EXPECT_EQ(loaded.format, format);
    EXPECT_EQ(loaded.HasTiles(), name != "text");
  }
}

TEST(OpenReport, ErrorsNameTheFile) {
  auto write = [](const std::string& name, std::string_view bytes) {
    std::string path = (TempDir() / name).string();
    EXPECT_TRUE(WriteFileAtomic(path, bytes));
    return path;
  };
  std::string json = ReadFile(OomSample().paths.at("json")).value();
  std::string cbor = ReadFile(OomSample().paths.at("cbor")).value();
  const std::pair<std::string, std::string> cases[] = {
      {(TempDir() / "missing.rep").string(), "No such file"},
      {write("empty.json", ""), "empty file"},
      {write("truncated.json", json.substr(0, json.size() / 2)), ""},
      {write("truncated.cbor", cbor.substr(0, cbor.size() / 2)), ""},
      {write("garbage.rep", std::string("\x01\x02\x03 not a report\n")), ""},
      {write("not_sqlite.db", std::string("SQLite format 3\0garbage that is no database", 43)), ""},
      {write("execution_only.json", report::WriteJsonReport(report::ReportDocument{
                                        std::nullopt, report::ExecutionReport{}})),
       "no compilation part"},
      {write("other_major.json", R"({"format":"tileprof-report","version":{"major":9,"minor":0}})"),
       "9"},
  };
  for (const auto& [path, detail] : cases) {
    SCOPED_TRACE(path);
    auto loaded = OpenReport(path);
    ASSERT_FALSE(loaded);
    EXPECT_THAT(loaded.error().message(), StartsWith(path));
    EXPECT_THAT(loaded.error().message(), HasSubstr(detail));
  }
}

// --- Same answers from every format -------------------------------------------

TEST(CrossFormat, EveryViewGivesTheSameOutputFromJsonCborAndSqlite) {
  const CompiledSample& s = OomSample();
  std::map<std::string, LoadedReport> reports;
  for (const char* f : {"json", "cbor", "sqlite"}) reports[f] = MustOpen(s.paths.at(f));
  auto tensors = ReadTensorMapFile(SourcePath("tests/analyzer/data/oom_ipu1_tensor_map.json"));
  ASSERT_TRUE(tensors) << tensors.error().message();
  for (OutputFormat format : {OutputFormat::kTable, OutputFormat::kCsv, OutputFormat::kJson}) {
    auto views = [&](const LoadedReport& r) {
      LoadedReport renamed = r;
      renamed.path = "report";  // the path is printed by oom; compare the rest
      std::vector<std::string> out;
      out.push_back(MustRender(HistogramView(renamed, {}), format));
      out.push_back(
          MustRender(HistogramView(renamed, {.including_gaps = true, .bucket_kib = 64}), format));
      out.push_back(MustRender(TopTilesView(renamed, 7), format));
      out.push_back(MustRender(OomView(renamed, &*tensors, {}), format));
      out.push_back(MustRender(CompareView(renamed, renamed, 10), format));
      for (PlotKind kind : {PlotKind::kTiles, PlotKind::kHistogram, PlotKind::kCategories})
        out.push_back(PlotSvg(renamed, kind).value());
      return out;
    };
    std::vector<std::string> json = views(reports["json"]);
    EXPECT_EQ(views(reports["cbor"]), json);
    EXPECT_EQ(views(reports["sqlite"]), json);
  }
}

// Each command opens a SQLite profile asking only for what it shows
// (OpenOptions); its output must be that of the whole report read from JSON.
TEST(CrossFormat, SqliteReadAsEachCommandNeedsGivesTheWholeReportsOutput) {
  const CompiledSample& s = OomSample();
  auto open = [&](const char* format, const OpenOptions& needs) {
    auto loaded = OpenReport(s.paths.at(format), needs);
    EXPECT_TRUE(loaded) << loaded.error().message();
    LoadedReport r = loaded ? std::move(*loaded) : LoadedReport{};
    r.path = "report";  // printed by oom and view; compare the rest
    return r;
  };
  LoadedReport json = open("json", kWholeReport);
  ASSERT_GT(json.compilation.tiles.size(), 20u);
  ASSERT_FALSE(json.compilation.variables.empty());
  auto tensors = ReadTensorMapFile(SourcePath("tests/analyzer/data/oom_ipu1_tensor_map.json"));
  ASSERT_TRUE(tensors) << tensors.error().message();

  // The partial read is partial: tiles beyond the top have no categories.
  LoadedReport totals = open("sqlite", TotalsAndTopTiles(0));
  ASSERT_EQ(totals.compilation.tiles.size(), json.compilation.tiles.size());
  EXPECT_TRUE(totals.compilation.variables.empty());
  EXPECT_EQ(totals.compilation.tiles[0].CategoryTotal(), 0u);
  EXPECT_NE(json.compilation.tiles[0].CategoryTotal(), 0u);
  EXPECT_FALSE(totals.total);

  for (OutputFormat format : {OutputFormat::kTable, OutputFormat::kCsv, OutputFormat::kJson}) {
    SCOPED_TRACE(static_cast<int>(format));
    EXPECT_EQ(MustRender(HistogramView(totals, {}), format),
              MustRender(HistogramView(json, {}), format));
    HistogramOptions wide{.including_gaps = true, .bucket_kib = 64};
    EXPECT_EQ(MustRender(HistogramView(totals, wide), format),
              MustRender(HistogramView(json, wide), format));
    for (size_t n : {1, 7, 40}) {
      EXPECT_EQ(MustRender(TopTilesView(open("sqlite", TotalsAndTopTiles(n)), n), format),
                MustRender(TopTilesView(json, n), format));
    }
    for (size_t n : {1, 5, 12}) {
      OomOptions oom{.worst_tiles = n};
      EXPECT_EQ(MustRender(OomView(open("sqlite", TotalsAndTopTiles(n)), &*tensors, oom), format),
                MustRender(OomView(json, &*tensors, oom), format));
    }
    LoadedReport summed = open("sqlite", TotalsAndTopTiles(0, /*total=*/true));
    ASSERT_TRUE(summed.total);
    EXPECT_EQ(*summed.total, *report::ResolveTotal(json.compilation));
    EXPECT_EQ(MustRender(CompareView(summed, summed, 10), format),
              MustRender(CompareView(json, json, 10), format));
    EXPECT_EQ(MustRender(CompareView(json, summed, 10), format),
              MustRender(CompareView(json, json, 10), format));
  }
  for (PlotKind kind : {PlotKind::kTiles, PlotKind::kHistogram, PlotKind::kCategories})
    EXPECT_EQ(PlotSvg(open("sqlite", PlotNeeds(kind)), kind).value(), PlotSvg(json, kind).value());
  EXPECT_EQ(ViewPage(open("sqlite", kWholeReport), nullptr).value(),
            ViewPage(json, nullptr).value());
}

TEST(CrossFormat, TextReportGivesTheSameHistogramAndTopTilesAsPerTileData) {
  const CompiledSample& s = OomSample();
  LoadedReport text = MustOpen(s.paths.at("text"));
  LoadedReport json = MustOpen(s.paths.at("json"));
  EXPECT_EQ(MustRender(HistogramView(text, {})), MustRender(HistogramView(json, {})));
  // The text report printed the five most-used tiles (memory is imbalanced).
  EXPECT_EQ(MustRender(TopTilesView(text, 5)), MustRender(TopTilesView(json, 5)));
}

// --- Views on compiled samples ------------------------------------------------

TEST(HistogramView, BucketWidthAndIncludingGaps) {
  LoadedReport json = MustOpen(OomSample().paths.at("json"));
  const auto& tiles = json.compilation.tiles;
  nlohmann::json j = Json(HistogramView(json, {.including_gaps = true, .bucket_kib = 100}));
  uint64_t max_incl = 0, sum = 0;
  for (const auto& t : tiles) max_incl = std::max(max_incl, t.IncludingGaps());
  const auto& rows = j["histogram"];
  EXPECT_EQ(rows.size(), max_incl / 102400 - rows[0]["lo_kb"].get<uint64_t>() / 100 + 1);
  for (const auto& row : rows) {
    EXPECT_EQ(row["hi_kb"].get<uint64_t>() - row["lo_kb"].get<uint64_t>(), 100u);
    sum += row["tiles"].get<uint64_t>();
  }
  EXPECT_EQ(sum, tiles.size());
  EXPECT_EQ(j["summary"][0]["bucket_kb"], 100);
  std::string table = MustRender(HistogramView(json, {.including_gaps = true, .bucket_kib = 100}));
  EXPECT_THAT(table,
              StartsWith("  By Tile (Including Gaps):\n    Range (KB) Histogram (Including Gaps)"));

  EXPECT_FALSE(BuildHistogramWithWidth(std::vector<uint64_t>{1, 2}, 0));
  auto too_many = BuildHistogramWithWidth(std::vector<uint64_t>{0, 1ull << 40}, 1);
  ASSERT_FALSE(too_many);
  EXPECT_THAT(too_many.error().message(), HasSubstr("use at least"));
  auto rows2 = BuildHistogramWithWidth(std::vector<uint64_t>{1023, 1024, 5000}, 2);
  ASSERT_TRUE(rows2);
  EXPECT_EQ(*rows2, (std::vector<report::HistogramRow>{{0, 2, 2}, {2, 4, 0}, {4, 6, 1}}));
}

TEST(OomView, CompiledSampleWithTensorMap) {
  LoadedReport json = MustOpen(OomSample().paths.at("json"));
  const auto& tiles = json.compilation.tiles;
  const uint64_t capacity = json.compilation.target->bytes_per_tile;
  // The fixture is the tensor map of this compile (`tensor_map` option),
  // with op names as a TensorFlow model would give them.
  auto tensors = ReadTensorMapFile(SourcePath("tests/analyzer/data/oom_ipu1_tensor_map.json"));
  ASSERT_TRUE(tensors) << tensors.error().message();
  nlohmann::json j = Json(OomView(json, &*tensors, {}));

  uint64_t over = 0;
  for (const auto& t : tiles) over += t.ExcludingGaps() > capacity;
  ASSERT_EQ(over, 1u);  // samples/oom/README.md
  EXPECT_EQ(j["summary"][0]["tiles_out_of_memory"], 1);
  ASSERT_GE(j["tiles"].size(), 1u);
  // The overflowing tile is that of `token`, the custom call tileprof cannot
  // look into, whose one vertex receives every logit.
  const uint32_t worst = j["tiles"][0]["tile"];
  EXPECT_EQ(worst, 1174u);
  const nlohmann::json& worst_row = j["tiles"][0];
  const report::TileMemory& t = tiles[worst];
  EXPECT_GT(t.ExcludingGaps(), capacity);
  EXPECT_EQ(worst_row["over_by"], t.ExcludingGaps() - capacity);
  EXPECT_EQ(worst_row["overflowed"], t.by_region[2].excluding_gaps);
  EXPECT_EQ(worst_row["always_live"], t.always_live);
  EXPECT_EQ(worst_row["not_always_live"], t.not_always_live);

  // Its largest variable is that receive buffer, which no tensor map
  // lists: the 128,256 logits of f32 but the few already on the tile, and
  // the two scalars (top-p and the uniform sample).
  const nlohmann::json* buffer = nullptr;
  for (const auto& row : j["variables"])
    if (row["tile"] == worst && buffer == nullptr) buffer = &row;
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ((*buffer)["variable"], "exchange buffer of token");
  const uint64_t received = (*buffer)["bytes"];
  EXPECT_GT(received, 128256u * 4 * 99 / 100);
  EXPECT_LE(received, 128256u * 4 + 2 * 4);
  // Tensors on the tile, largest first, with the bytes of the fixture: a
  // piece of the embedding table is the largest (the unembedding lies on
  // the dot's own tiles, not this one); `token` is all of its result.
  std::vector<nlohmann::json> here;
  for (const auto& row : j["tensors"])
    if (row["tile"] == worst) here.push_back(row);
  ASSERT_FALSE(here.empty());
  EXPECT_EQ(here[0]["instruction"], "table");
  EXPECT_EQ(here[0]["op_name"], "embedding/table");
  const uint64_t table_here = here[0]["bytes_on_tile"];
  bool token = false;
  for (const auto& row : here) {
    EXPECT_NE(row["instruction"], "unembed");
    if (row["instruction"] != "token") continue;
    token = true;
    EXPECT_EQ(row["op_name"], "sampling/TopPSample");
    EXPECT_EQ(row["bytes_on_tile"], 4);
    EXPECT_EQ(row["tensor_bytes"], 4);
    EXPECT_EQ(row["tiles_spanned"], 1);
  }
  EXPECT_TRUE(token);

  std::map<std::string, nlohmann::json> suggestions;
  for (const auto& row : j["suggestions"])
    if (row["tile"] == worst) suggestions[row["suggestion"].get<std::string>()] = row;
  const uint64_t total_tiles = tiles.size();
  const uint64_t even = (128 * 64 * 64 * 4 + total_tiles - 1) / total_tiles;
  EXPECT_EQ(suggestions.at("spread the largest tensor over all tiles")["saves"], table_here - even);
  EXPECT_EQ(suggestions.at("split the largest tensor in two (serialise its op)")["saves"],
            table_here / 2);
  // The receive buffer is larger than any tensor here, and it is the
  // custom call's (the report's compute set `token`, whose vertex is an
  // opaque op): the suggestion names the op and says why halving it is not
  // the user's to do; recomputing activations keeps it.
  EXPECT_EQ(suggestions.count("split the largest variable in two"), 0u);
  const nlohmann::json& codelet = suggestions.at("give the op a codelet, or run it on the host");
  EXPECT_EQ(codelet["saves"], received);
  EXPECT_EQ(codelet["target"], "exchange buffer of token");
  EXPECT_NE(codelet["assumption"].get<std::string>().find("custom-call token is an opaque op"),
            std::string::npos)
      << codelet["assumption"];
  if (t.not_always_live > 0) {
    EXPECT_EQ(suggestions.at("halve the batch size")["saves"], t.not_always_live / 2);
    if (t.not_always_live > received) {
      EXPECT_EQ(suggestions.at("recompute activations instead of keeping them")["saves"],
                t.not_always_live - received);
    }
  }
  // The tensors of the tiles examined are listed and no others: `ids` is
  // on tile 1214 alone, so it is listed once when that tile is examined,
  // else not.
  bool ids_tile_examined = false;
  for (const auto& row : j["tiles"]) ids_tile_examined = ids_tile_examined || row["tile"] == 1214;
  int ids = 0;
  for (const auto& row : j["tensors"]) {
    if (row["instruction"] != "ids") continue;
    ++ids;
    EXPECT_EQ(row["tile"], 1214);
    EXPECT_EQ(row["bytes_on_tile"], 8);
  }
  EXPECT_EQ(ids, ids_tile_examined ? 1 : 0);
  nlohmann::json all = Json(OomView(json, &*tensors, {.worst_tiles = 1216}));
  ids = 0;
  for (const auto& row : all["tensors"]) ids += row["instruction"] == "ids";
  EXPECT_EQ(ids, 1);
}

TEST(OomView, ListsVariablesOfTheReportAndSplitsTheLargest) {
  const CompiledSample& s = OomSample();
  report::ReportDocument document;
  document.compilation = s.report;
  // Two variables on the worst tile, one elsewhere.
  uint32_t worst = 0;
  for (uint32_t i = 0; i < s.report.tiles.size(); ++i) {
    if (s.report.tiles[i].ExcludingGaps() > s.report.tiles[worst].ExcludingGaps()) worst = i;
  }
  ASSERT_NE(worst, 3u);
  document.compilation->variables = {
      {"embedding/table/part0", worst, 40000, report::Category::kVariables, true, 0},
      {"dense/kernel", worst, 16384, report::Category::kVariables, false, 40000},
      {"other", 3, 99999, report::Category::kVariables, true, std::nullopt}};
  std::string path = (TempDir() / "with_variables.cbor").string();
  ASSERT_TRUE(report::WriteCborReportFile(path, document));
  nlohmann::json j = Json(OomView(MustOpen(path), nullptr, {.worst_tiles = 1}));
  ASSERT_EQ(j["variables"].size(), 2u);
  EXPECT_EQ(j["variables"][0], (nlohmann::json{{"tile", worst},
                                               {"variable", "embedding/table/part0"},
                                               {"bytes", 40000},
                                               {"always_live", "yes"}}));
  EXPECT_EQ(j["variables"][1]["always_live"], "no");
  bool split = false;
  for (const auto& row : j["suggestions"]) {
    if (row["suggestion"] == "split the largest variable in two") {
      split = true;
      EXPECT_EQ(row["saves"], 20000);
      EXPECT_EQ(row["target"], "embedding/table/part0");
      EXPECT_EQ(row["fits_after"], "no");
    }
  }
  EXPECT_TRUE(split);
}

TEST(OomView, AReceiveBufferNamesTheOpThatReceivesIt) {
  // The largest variable of a tile is the receive buffer of an op with
  // codelets (here the sample's first compute set made by an operation
  // whose vertices are not opaque): the suggestion is to serialise that op,
  // named as the report's operations name it.
  const CompiledSample& s = OomSample();
  report::ReportDocument document;
  document.compilation = s.report;
  const report::CompilationReport& r = *document.compilation;
  std::optional<report::ComputeSetOperation> link;
  for (const report::ComputeSetOperation& l : r.compute_set_operations) {
    bool opaque = false;
    for (const auto& v : r.compute_sets[l.compute_set].vertices)
      opaque = opaque || r.vertex_types[v.type].name.starts_with("tileprof::OpaqueOp");
    if (!opaque) {
      link = l;
      break;
    }
  }
  ASSERT_TRUE(link.has_value());
  const std::string set = r.compute_sets[link->compute_set].name;
  const report::Operation& op = r.operations[link->operation];
  document.compilation->variables = {
      {"exchange buffer of " + set, 0, 300000, report::Category::kVariables, false, 0}};
  std::string path = (TempDir() / "receive_buffer.cbor").string();
  ASSERT_TRUE(report::WriteCborReportFile(path, document));
  nlohmann::json j = Json(OomView(MustOpen(path), nullptr, {.worst_tiles = 1216}));
  bool serialise = false;
  for (const auto& row : j["suggestions"]) {
    EXPECT_NE(row["suggestion"], "give the op a codelet, or run it on the host");
    if (row["suggestion"] != "serialise the op that receives it (in two steps)") continue;
    serialise = true;
    EXPECT_EQ(row["tile"], 0);
    EXPECT_EQ(row["saves"], 150000);
    EXPECT_THAT(row["assumption"].get<std::string>(),
                HasSubstr(fmt::format("{} {}", op.opcode, op.name)));
  }
  EXPECT_TRUE(serialise);
}

TEST(Output, CsvQuotesAndJsonEscapes) {
  LoadedReport excerpt = MustOpen(SharedPath("corpus/reports/oom-mk1-excerpt.rep"));
  std::string csv = MustRender(TopTilesView(excerpt, 1), OutputFormat::kCsv);
  EXPECT_THAT(csv, HasSubstr("\n0,\"poplin::ConvPartial1x1Out<float,float,true,false>\",6648\n"));
  Output out;
  out.tables.push_back(
      {"t", "", {"name", "n", "d"}, {{std::string("a\"b,\n\xff"), int64_t{-3}, 0.5}}});
  EXPECT_EQ(Render(out, OutputFormat::kCsv), "name,n,d\n\"a\"\"b,\n\xff\",-3,0.5\n");
  auto j = nlohmann::json::parse(Render(out, OutputFormat::kJson));
  EXPECT_EQ(j["t"][0]["name"], "a\"b,\n\xef\xbf\xbd");
  EXPECT_EQ(j["t"][0]["n"], -3);
  EXPECT_EQ(j["t"][0]["d"], 0.5);
  EXPECT_EQ(Render(out, OutputFormat::kTable), "t:\n  name     n     d\n  a\"b, \xff  -3  0.50\n");
}

TEST(OomView, TensorMapTileBeyondTheTarget) {
  LoadedReport json = MustOpen(OomSample().paths.at("json"));
  auto tensors =
      ParseTensorMap(R"({"mappings":{"c":[["x",0,[1],"float",0,0,1,[[99999,1]],""]]}})", "tm.json");
  ASSERT_TRUE(tensors);
  auto out = OomView(json, &*tensors, {});
  ASSERT_FALSE(out);
  EXPECT_THAT(out.error().message(), HasSubstr("tile 99999"));
}

TEST(TensorMap, ParsesTheSpecExampleAndRejectsBadShapes) {
  auto ok = ParseTensorMap(
      R"({"mappings":{"cluster_1.5":[["add.0",0,[32,32],"float",0,0,1024,[[0,256],[1,256],[2,256],[3,256]],"dense/add"]]}})",
      "tm.json");
  ASSERT_TRUE(ok) << ok.error().message();
  ASSERT_EQ(ok->size(), 1u);
  EXPECT_EQ((*ok)[0].Bytes(), 4096u);
  EXPECT_EQ((*ok)[0].tiles.size(), 4u);
  EXPECT_EQ((*ok)[0].op_name, "dense/add");
  // tileprof's maps of bf16 and f64 tensors (a TPU dump's DLRM has both).
  auto own = ParseTensorMap(
      R"({"mappings":{"c":[["a",0,[3],"bfloat16",0,0,3,[[0,3]],""],["b",0,[2],"double",0,0,2,[[1,2]],""]]}})",
      "tm.json");
  ASSERT_TRUE(own) << own.error().message();
  ASSERT_EQ(own->size(), 2u);
  EXPECT_EQ((*own)[0].Bytes(), 6u);
  EXPECT_EQ((*own)[1].Bytes(), 16u);
  const std::pair<const char*, const char*> bad[] = {
      {"[1,2", "not valid JSON"},
      {R"({"mapping":{}})", "\"mappings\""},
      {R"({"mappings":{"c":[["a",0,[1],"float",0,0,2,[[0,1]],""]]}})",
       "mappings[\"c\"][0][6]: total 2 is not the sum of the per-tile counts (1)"},
      {R"({"mappings":{"c":[["a",0,[1],"complex",0,0,1,[[0,1]],""]]}})",
       "unknown element type 'complex'"},
      {R"({"mappings":{"c":[["a",0,[1],"float",0,0,2,[[1,1],[0,1]],""]]}})",
       "[7][1]: tile 0 does not ascend"},
      {R"({"mappings":{"c":[["a",0,[1],"float",0,0,1,[[0]],""]]}})", "[7][0]: expected [tile, n]"},
      {R"({"mappings":{"c":[["a",0,[1],"float",2,0,1,[[0,1]],""]]}})", "[4]: expected 0 or 1"},
      {R"({"mappings":{"c":[["a",0,[1],"float",0,0,1,[[0,1]],""]],"d":[["a",0,[1],"float",0,0,1,[[0,1]],""]]}})",
       "appears twice"},
      {R"({"mappings":{"c":[["a",0]]}})", "expected an array of 9 elements"},
  };
  for (const auto& [text, message] : bad) {
    SCOPED_TRACE(text);
    auto parsed = ParseTensorMap(text, "tm.json");
    ASSERT_FALSE(parsed);
    EXPECT_THAT(parsed.error().message(), StartsWith("tm.json: "));
    EXPECT_THAT(parsed.error().message(), HasSubstr(message));
  }
}

TEST(CompareView, DeltasAndTheTilesThatChangedMost) {
  const CompiledSample& s = OomSample();
  report::ReportDocument changed;
  changed.compilation = s.report;
  auto& tiles = changed.compilation->tiles;
  report::At(tiles[5].by_category, report::Category::kVariables) += 1000;
  tiles[5].by_region[0].excluding_gaps += 1000;
  tiles[5].by_region[0].including_gaps += 1000;
  report::At(tiles[9].by_category, report::Category::kStack) -= 8;
  tiles[9].by_region[0].excluding_gaps -= 8;
  tiles[9].by_region[0].including_gaps -= 8;
  std::string path = (TempDir() / "changed.json").string();
  ASSERT_TRUE(report::WriteJsonReportFile(path, changed));
  nlohmann::json j = Json(CompareView(MustOpen(s.paths.at("sqlite")), MustOpen(path), 20));
  ASSERT_EQ(j["tiles"].size(), 2u);
  EXPECT_EQ(j["tiles"][0]["tile"], 5);
  EXPECT_EQ(j["tiles"][0]["delta"], 1000);
  EXPECT_EQ(j["tiles"][1]["tile"], 9);
  EXPECT_EQ(j["tiles"][1]["delta"], -8);
  EXPECT_EQ(j["categories"][0]["category"], "Variables");
  EXPECT_EQ(j["categories"][0]["delta"], 1000);
  EXPECT_EQ(j["categories"][4]["delta"], -8);
  EXPECT_EQ(j["totals"][1]["measure"], "excluding_gaps");
  EXPECT_EQ(j["totals"][1]["delta"], 992);
}

// --- Plots --------------------------------------------------------------------

int CountElements(const tinyxml2::XMLElement* element, std::string_view name) {
  int n = 0;
  for (const tinyxml2::XMLElement* child = element->FirstChildElement(); child;
       child = child->NextSiblingElement()) {
    if (name == child->Name()) ++n;
    n += CountElements(child, name);
  }
  return n;
}

TEST(Plots, WellFormedSvgWithTheCapacityLine) {
  LoadedReport json = MustOpen(OomSample().paths.at("json"));
  for (PlotKind kind : {PlotKind::kTiles, PlotKind::kHistogram, PlotKind::kCategories}) {
    SCOPED_TRACE(std::string(PlotKindName(kind)));
    auto svg = PlotSvg(json, kind);
    ASSERT_TRUE(svg) << svg.error().message();
    tinyxml2::XMLDocument doc;
    ASSERT_EQ(doc.Parse(svg->data(), svg->size()), tinyxml2::XML_SUCCESS) << doc.ErrorStr();
    ASSERT_NE(doc.RootElement(), nullptr);
    EXPECT_STREQ(doc.RootElement()->Name(), "svg");
    EXPECT_STREQ(doc.RootElement()->Attribute("xmlns"), "http://www.w3.org/2000/svg");
    if (kind == PlotKind::kTiles) {
      // 1,216 tiles in at most 1,000 columns, each a bar with a tooltip.
      EXPECT_EQ(CountElements(doc.RootElement(), "rect"), 1 + 1000);
      bool capacity = false;
      for (auto* g = doc.RootElement()->FirstChildElement("line"); g;
           g = g->NextSiblingElement("line"))
        capacity = capacity ||
                   (g->Attribute("class") && std::string_view(g->Attribute("class")) == "capacity");
      EXPECT_TRUE(capacity);
      EXPECT_THAT(*svg, HasSubstr("capacity 262,144 B per tile"));
      EXPECT_THAT(*svg, HasSubstr("fill=\"#e15759\""));  // the tiles over capacity are red
    }
  }
  // A text report has no per-tile data for the tiles plot, but has a histogram.
  LoadedReport text = MustOpen(OomSample().paths.at("text"));
  auto tiles = PlotSvg(text, PlotKind::kTiles);
  ASSERT_FALSE(tiles);
  EXPECT_THAT(tiles.error().message(), StartsWith(OomSample().paths.at("text") + ": "));
  EXPECT_TRUE(PlotSvg(text, PlotKind::kHistogram));
}

TEST(XmlWriter, EscapesEverythingAParserCouldTripOn) {
  XmlWriter w;
  std::string nasty = std::string("a<b>&\"c'\x01\x1f d\xff\xc3(") + "\xe2\x82\xac";
  w.Open("svg", {{"title", nasty}});
  w.Text(nasty);
  w.Close();
  std::string xml = w.Finish();
  tinyxml2::XMLDocument doc;
  ASSERT_EQ(doc.Parse(xml.data(), xml.size()), tinyxml2::XML_SUCCESS) << doc.ErrorStr() << "\n"
                                                                      << xml;
  std::string expected = "a<b>&\"c'\xef\xbf\xbd\xef\xbf\xbd d\xef\xbf\xbd\xef\xbf\xbd(\xe2\x82\xac";
  EXPECT_EQ(doc.RootElement()->Attribute("title"), expected);
  EXPECT_EQ(std::string(doc.RootElement()->GetText()), expected);
}

// --- Per-tile archives --------------------------------------------------------

TEST(TileArchives, SizePipelinePrintsEveryTilesTotalInOrder) {
  const CompiledSample& s = OomSample();
  std::string dir = TempDir().string();
  std::string archive = dir + "/oom.a";
  ASSERT_TRUE(WriteReportArchive(archive, s.report, "oom"));
  std::string expected;
  for (const auto& t : s.report.tiles) expected += std::to_string(t.ExcludingGaps()) + "\n";
  // `cd` first: the archive path is printed in every member header line.
  for (std::string size : {std::string("size"), std::string(TILEPROF_CLI) + " size"}) {
    SCOPED_TRACE(size);
    ShellRun run =
        Shell("cd '" + dir + "' && " + size + " -A oom.a | grep -e \".text\" | awk '{print $2}'");
    EXPECT_EQ(run.status, 0);
    EXPECT_EQ(run.out, expected);
  }
  // size -A's Total is the tile's total too: the breakdown sections are unlisted.
  ShellRun totals = Shell("cd '" + dir + "' && size -A oom.a | grep '^Total' | awk '{print $2}'");
  EXPECT_EQ(totals.out, expected);

  nlohmann::json j = Json(ArchiveView(archive));
  ASSERT_EQ(j["tiles"].size(), s.report.tiles.size());
  for (size_t i : {size_t{0}, size_t{127}, size_t{128}, s.report.tiles.size() - 1}) {
    const auto& t = s.report.tiles[i];
    EXPECT_EQ(j["tiles"][i]["total"], t.ExcludingGaps());
    EXPECT_EQ(j["tiles"][i]["member"], "tile" + std::to_string(i) + ".o");
    EXPECT_EQ(j["tiles"][i]["variable"], report::At(t.by_category, report::Category::kVariables));
    EXPECT_EQ(j["tiles"][i]["stack"], report::At(t.by_category, report::Category::kStack));
  }
  // The histogram of the archive is the report's.
  LoadedReport json = MustOpen(s.paths.at("json"));
  EXPECT_EQ(Json(ArchiveView(archive))["histogram"], Json(HistogramView(json, {}))["histogram"]);
}

TEST(TileArchives, Errors) {
  LoadedReport text = MustOpen(SharedPath("corpus/reports/adder-mk1.rep"));
  auto from_text =
      WriteReportArchive((TempDir() / "x.a").string(), text.compilation, "adder-mk1.rep");
  ASSERT_FALSE(from_text);
  EXPECT_THAT(from_text.error().message(), StartsWith("adder-mk1.rep: "));
  std::string not_archive = (TempDir() / "not_archive.a").string();
  ASSERT_TRUE(WriteFileAtomic(not_archive, "hello\n"));
  auto view = ArchiveView(not_archive);
  ASSERT_FALSE(view);
  EXPECT_THAT(view.error().message(), StartsWith(not_archive + ": not an ar archive"));
  auto missing = ArchiveView((TempDir() / "missing.a").string());
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message(), HasSubstr("missing.a"));
  // An archive whose member is not an ELF object names the member.
  std::string bad = (TempDir() / "bad_member.a").string();
  ASSERT_TRUE(WriteFileAtomic(
      bad,
      std::string("!<arch>\ntile0.o/        0           0     0     644     4         `\nabcd")));
  auto bad_view = ArchiveView(bad);
  ASSERT_FALSE(bad_view);
  EXPECT_THAT(bad_view.error().message(), HasSubstr("(tile0.o): not an ELF object"));
}

}  // namespace
}  // namespace tileprof::analyzer
