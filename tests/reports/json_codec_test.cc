#include "reports/json_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "codec_fixtures.h"

namespace tileprof::report {
namespace {

using testing::AdderMk1Report;
using testing::FullDocument;
using ::testing::HasSubstr;
using testing::SampleExecution;
using testing::SmallCompilation;
using ::testing::StartsWith;
using json = nlohmann::json;

ReportDocument ReadOk(const std::string& text) {
  Expected<ReportDocument> document = ReadJsonReport(text, "test.json");
  EXPECT_TRUE(document.has_value()) << (document ? "" : document.error().message());
  return document ? std::move(document).value() : ReportDocument{};
}

std::string ReadError(const std::string& text) {
  Expected<ReportDocument> document = ReadJsonReport(text, "bad.json");
  EXPECT_FALSE(document.has_value());
  return document ? "" : document.error().message();
}

// The written report as a DOM, for tests that break one value.
json Dom(const ReportDocument& document) { return json::parse(WriteJsonReport(document)); }

ReportDocument EngineDocumentForErrors() { return testing::EngineDocument(AdderMk1Report()); }

TEST(JsonReport, RoundTripsEveryField) {
  ReportDocument document = FullDocument();
  std::string text = WriteJsonReport(document);
  ReportDocument read = ReadOk(text);
  EXPECT_EQ(read, document);
  EXPECT_EQ(WriteJsonReport(read), text);
}

TEST(JsonReport, RoundTripsAWholeEngineReport) {
  ReportDocument document;
  document.compilation = AdderMk1Report();
  document.execution = SampleExecution();
  EXPECT_EQ(ReadOk(WriteJsonReport(document)), document);
}

TEST(JsonReport, KeepsAnExecutionOnlyReportApartFromAnEmptyCompilation) {
  ReportDocument execution_only;
  execution_only.execution = SampleExecution();
  EXPECT_EQ(ReadOk(WriteJsonReport(execution_only)), execution_only);
  ReportDocument empty_compilation;
  empty_compilation.compilation.emplace();
  EXPECT_EQ(ReadOk(WriteJsonReport(empty_compilation)), empty_compilation);
  EXPECT_EQ(ReadOk(WriteJsonReport(ReportDocument{})), ReportDocument{});
}

TEST(JsonReport, StartsWithTheFormatAndVersion) {
  std::string text = WriteJsonReport(FullDocument());
  EXPECT_THAT(text, StartsWith(R"({"format":"tileprof-report","version":{"major":1,"minor":2},)"));
  json dom = json::parse(text);
  EXPECT_EQ(dom["compilation"]["tiles"][1]["categories"]["variable"], 200);
  EXPECT_EQ(
      dom["compilation"]["tiles"][3]["regions"]["interleaved"]["includingGaps"],
      dom["compilation"]["tiles"][3]["regions"]["interleaved"]["excludingGaps"].get<uint64_t>() +
          24);
  EXPECT_EQ(dom["compilation"]["variables"][1].count("offset"), 0u);
  EXPECT_EQ(dom["execution"]["tileAverageCycles"].count("globalExchange"), 0u);
  EXPECT_EQ(dom["execution"]["steps"][0]["cyclesByTile"], json({30, 0, 45, 0}));
}

// A key-sorted file (jq -S, Python sort_keys) has "compilation" before
// "format" and "version": its streamed elements wait for the version.
TEST(JsonReport, ReadsAKeySortedFile) {
  ReportDocument document = FullDocument();
  std::string sorted = Dom(document).dump(2);  // nlohmann's json keeps keys sorted
  ASSERT_LT(sorted.find("\"compilation\""), sorted.find("\"format\""));
  EXPECT_EQ(ReadOk(sorted), document);
}

TEST(JsonReport, KeepsDoublesExactIncludingNonFiniteOnes) {
  ReportDocument document;
  ExecutionReport& execution = document.execution.emplace();
  execution.clock_hz = 0.1 + 0.2;
  execution.tile_average_cycles = {-0.0,
                                   3.0,
                                   1e300,
                                   std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity(),
                                   std::numeric_limits<double>::quiet_NaN()};
  std::string text = WriteJsonReport(document);
  EXPECT_THAT(text, HasSubstr(R"("computeIncludingIdle":-0.0,"computeExcludingIdle":3.0,)"));
  EXPECT_THAT(text, HasSubstr(R"("hostExchange":"-Infinity","sync":"NaN")"));
  ReportDocument read = ReadOk(text);
  EXPECT_EQ(read.execution->clock_hz, 0.1 + 0.2);
  EXPECT_TRUE(std::signbit(*read.execution->tile_average_cycles[0]));
  EXPECT_EQ(read.execution->tile_average_cycles[2], 1e300);
  EXPECT_TRUE(std::isnan(*read.execution->tile_average_cycles[5]));
  EXPECT_EQ(WriteJsonReport(read), text);
}

TEST(JsonReport, ReplacesInvalidUtf8InNames) {
  ReportDocument document;
  document.compilation.emplace().vertex_types = {
      {"bad\xff"
       "byte"}};
  ReportDocument read = ReadOk(WriteJsonReport(document));
  EXPECT_EQ(read.compilation->vertex_types[0].name,
            "bad\xef\xbf\xbd"
            "byte");
}

TEST(JsonReport, AcceptsANewerMinorVersionAndIgnoresUnknownKeys) {
  json dom = Dom(FullDocument());
  dom["version"]["minor"] = 7;
  dom["compilation"]["tiles"][0]["heat"] = 3;
  dom["futureSection"] = {{"a", 1}};
  EXPECT_EQ(ReadOk(dom.dump()), FullDocument());
}

TEST(JsonReport, RejectsAnUnknownMajorVersionNamingBoth) {
  json dom = Dom(FullDocument());
  dom["version"] = {{"major", 2}, {"minor", 3}};
  EXPECT_EQ(ReadError(dom.dump()),
            "bad.json: version: unsupported report format version 2.3 (this reader reads 1.x)");
}

TEST(JsonReport, RejectsOtherJson) {
  EXPECT_EQ(ReadError(R"({"format":"chrome-trace","version":{"major":1,"minor":0}})"),
            "bad.json: format: \"chrome-trace\" is not \"tileprof-report\"");
  EXPECT_EQ(ReadError(R"({"traceEvents":[]})"),
            "bad.json: format: missing (not a tileprof report)");
  EXPECT_EQ(ReadError(R"({"format":"tileprof-report"})"), "bad.json: version: missing");
  EXPECT_EQ(ReadError("[1,2]"), "bad.json: top level: expected an object");
}

TEST(JsonReport, NamesTheJsonPathOfAMalformedValue) {
  json dom = Dom(EngineDocumentForErrors());
  dom["compilation"]["tiles"][12]["categories"]["variable"] = "many";
  EXPECT_EQ(ReadError(dom.dump()),
            "bad.json: compilation.tiles[12].categories.variable: expected an unsigned integer");
}

TEST(JsonReport, NamesThePathOfEachKindOfProblem) {
  auto error_after = [](auto&& change) {
    json dom = Dom(FullDocument());
    change(dom);
    return ReadError(dom.dump());
  };
  EXPECT_EQ(error_after([](json& d) { d["compilation"]["target"].erase("numIpus"); }),
            "bad.json: compilation.target.numIpus: missing");
  EXPECT_EQ(error_after([](json& d) { d["compilation"]["target"]["numIpus"] = -1; }),
            "bad.json: compilation.target.numIpus: expected an unsigned integer");
  EXPECT_EQ(error_after([](json& d) { d["compilation"]["tiles"][1]["tile"] = 1ull << 40; }),
            "bad.json: compilation.tiles[1].tile: expected an unsigned 32-bit integer");
  EXPECT_EQ(error_after([](json& d) { d["compilation"]["tiles"][0]["categories"]["heap"] = 1; }),
            "bad.json: compilation.tiles[0].categories.heap: unknown category");
  EXPECT_EQ(error_after([](json& d) { d["compilation"]["variables"][2]["category"] = "x"; }),
            "bad.json: compilation.variables[2].category: unknown category \"x\"");
  EXPECT_EQ(
      error_after([](json& d) { d["compilation"]["tiles"][2]["vertexTypes"][2]["type"] = 9; }),
      "bad.json: compilation.tiles[2].vertexTypes[2].type: vertex type 9 does not exist "
      "(the report has 3)");
  EXPECT_EQ(
      error_after([](json& d) { d["compilation"]["computeSets"][1]["vertices"][0]["type"] = 5; }),
      "bad.json: compilation.computeSets[1].vertices[0].type: vertex type 5 does not exist "
      "(the report has 3)");
  EXPECT_EQ(error_after([](json& d) { d["compilation"]["programs"][1]["computeSet"] = 2; }),
            "bad.json: compilation.programs[1].computeSet: compute set 2 does not exist "
            "(the report has 2)");
  EXPECT_EQ(
      error_after([](json& d) { d["compilation"]["programs"][0]["children"][1] = 3; }),
      "bad.json: compilation.programs[0].children[1]: program 3 does not exist (the report has 3)");
  EXPECT_EQ(error_after([](json& d) { d["compilation"]["tiles"] = 5; }),
            "bad.json: compilation.tiles: expected an array");
  EXPECT_EQ(error_after([](json& d) { d["compilation"]["tiles"][3] = 5; }),
            "bad.json: compilation.tiles[3]: expected an object");
  EXPECT_EQ(error_after(
                [](json& d) { d["compilation"]["verbatim"]["byTile"]["rows"][0]["tiles"] = 1.5; }),
            "bad.json: compilation.verbatim.byTile.rows[0].tiles: expected an unsigned integer");
  EXPECT_EQ(error_after([](json& d) {
              d["execution"]["steps"][1]["cyclesByTile"] = {1, "x"};
            }),
            "bad.json: execution.steps[1].cyclesByTile[1]: expected an unsigned integer");
  EXPECT_EQ(error_after([](json& d) { d["execution"]["tileAverageCycles"]["sync"] = true; }),
            "bad.json: execution.tileAverageCycles.sync: expected a number");
  EXPECT_EQ(error_after([](json& d) { d["execution"]["clockFrequency"] = "fast"; }),
            "bad.json: execution.clockFrequency: expected a number");
}

TEST(JsonReport, RejectsDuplicateKeys) {
  std::string text = WriteJsonReport(FullDocument());
  std::string doubled = text;
  doubled.insert(doubled.find("\"tiles\":["), R"("tiles":[],)");
  EXPECT_EQ(ReadError(doubled), "bad.json: compilation.tiles: duplicate key");
  EXPECT_EQ(ReadError(R"({"format":"tileprof-report","format":"x"})"),
            "bad.json: format: duplicate key");
}

// Well-formed tiles are decoded without a tree (schema_tile_decoder.h);
// anything else in a tile hands it to the general decoder mid-way, which must
// then read it as if it had seen it whole.
TEST(JsonReport, ReadsATileTheSameWhereverItsDecodingChangesPath) {
  const ReportDocument document = FullDocument();
  const std::string text = WriteJsonReport(document);
  const size_t tiles = text.find("\"tiles\":[");
  ASSERT_NE(tiles, std::string::npos);
  // An unknown member (ignored) at each depth of the first tile.
  // (Among categories, regions and vertex data an unknown name is an error.)
  for (std::string_view after : {"\"tiles\":[{", "\"nonInterleaved\":{", "\"vertexTypes\":[{"}) {
    std::string changed = text;
    size_t at = changed.find(after, tiles);
    ASSERT_NE(at, std::string::npos) << after;
    changed.insert(at + after.size(), R"("future":[1,{"a":null}],)");
    EXPECT_EQ(ReadOk(changed), document) << after;
  }
  // A member of another type after well-formed ones.
  std::string changed = text;
  changed.insert(changed.find("\"vertexTypes\":[{", tiles), R"("note":"x",)");
  EXPECT_EQ(ReadOk(changed), document);

  auto error_after = [&](std::string_view after, std::string_view insert) {
    std::string bad = text;
    size_t at = bad.find(after, tiles);
    EXPECT_NE(at, std::string::npos) << after;
    bad.insert(at + after.size(), insert);
    return ReadError(bad);
  };
  EXPECT_EQ(error_after("\"nonInterleaved\":{", R"("includingGaps":1,)"),
            "bad.json: compilation.tiles[0].regions.nonInterleaved.includingGaps: duplicate key");
  EXPECT_EQ(error_after("\"regions\":{", R"("future":{},)"),
            "bad.json: compilation.tiles[0].regions.future: unknown region");
  EXPECT_EQ(error_after("\"categories\":{", R"("stack":1,"stack":2,)"),
            "bad.json: compilation.tiles[0].categories.stack: duplicate key");
  EXPECT_EQ(error_after("\"vertexTypes\":[", R"({"type":0},)"),
            "bad.json: compilation.tiles[0].vertexTypes[0].bytes: missing");
  EXPECT_EQ(error_after("\"tiles\":[", R"({},)"), "bad.json: compilation.tiles[0].tile: missing");
  EXPECT_EQ(error_after("\"tiles\":[", R"({"tile":-1},)"),
            "bad.json: compilation.tiles[0].tile: expected an unsigned integer");
  EXPECT_EQ(
      error_after("\"vertexTypes\":[", R"({"type":4294967296,"bytes":1},)"),
      "bad.json: compilation.tiles[0].vertexTypes[0].type: expected an unsigned 32-bit integer");
  std::string truncated = text.substr(0, text.find("\"vertexData\":{", tiles) + 5);
  EXPECT_THAT(ReadError(truncated), StartsWith("bad.json:1:"));
}

// Well-formed variables are decoded without a tree too
// (schema_variable_decoder.h), with the same hand-over to the general path.
TEST(JsonReport, ReadsAVariableTheSameWhereverItsDecodingChangesPath) {
  const ReportDocument document = FullDocument();
  const std::string text = WriteJsonReport(document);
  const size_t variables = text.find("\"variables\":[");
  ASSERT_NE(variables, std::string::npos);
  auto insert_after = [&](std::string_view after, std::string_view insert) {
    std::string changed = text;
    size_t at = changed.find(after, variables);
    EXPECT_NE(at, std::string::npos) << after;
    changed.insert(at + after.size(), insert);
    return changed;
  };
  // Unknown members of any type, first or after well-formed ones, are skipped.
  for (std::string_view member :
       {R"("future":[1,{"a":null}],)", R"("note":"x",)", R"("f":1.5,)", R"("n":null,)"}) {
    EXPECT_EQ(ReadOk(insert_after("\"variables\":[{", member)), document) << member;
    EXPECT_EQ(ReadOk(insert_after("\"tile\":0,", member)), document) << member;
  }
  // Members in another order.
  std::string reordered = text;
  const std::string first = R"("name":"a","tile":0,)";
  size_t at = reordered.find(first, variables);
  ASSERT_NE(at, std::string::npos);
  reordered.erase(at, first.size());
  reordered.insert(reordered.find("\"alwaysLive\"", at), first);
  EXPECT_EQ(ReadOk(reordered), document);

  EXPECT_EQ(ReadError(insert_after("\"variables\":[{", R"("tile":1,)")),
            "bad.json: compilation.variables[0].tile: duplicate key");
  EXPECT_EQ(ReadError(insert_after("\"variables\":[", R"({"name":"x","tile":1,"bytes":2},)")),
            "bad.json: compilation.variables[0].category: missing");
  EXPECT_EQ(
      ReadError(insert_after("\"variables\":[",
                             R"({"name":"x","tile":4294967296,"bytes":2,"category":"stack"},)")),
      "bad.json: compilation.variables[0].tile: expected an unsigned 32-bit integer");
  EXPECT_EQ(ReadError(insert_after("\"variables\":[",
                                   R"({"name":7,"tile":1,"bytes":2,"category":"stack"},)")),
            "bad.json: compilation.variables[0].name: expected a string");
  EXPECT_EQ(ReadError(insert_after("\"variables\":[",
                                   R"({"name":"x","tile":1,"bytes":2,"category":"heap"},)")),
            "bad.json: compilation.variables[0].category: unknown category \"heap\"");
  EXPECT_EQ(ReadError(insert_after(
                "\"variables\":[",
                R"({"name":"x","tile":1,"bytes":2,"category":"stack","alwaysLive":1},)")),
            "bad.json: compilation.variables[0].alwaysLive: expected true or false");
  EXPECT_EQ(ReadError(insert_after("\"variables\":[",
                                   R"({"name":"x","tile":1,"bytes":-2,"category":"stack"},)")),
            "bad.json: compilation.variables[0].bytes: expected an unsigned integer");
  std::string truncated = text.substr(0, text.find("\"category\"", variables) + 5);
  EXPECT_THAT(ReadError(truncated), StartsWith("bad.json:1:"));
}

TEST(JsonReport, GivesLineAndColumnOfASyntaxError) {
  EXPECT_THAT(ReadError("{\n  \"format\": tileprof\n}"),
              StartsWith("bad.json:2:14: syntax error while parsing value"));
  EXPECT_THAT(ReadError(""), StartsWith("bad.json:1:1: "));
  EXPECT_THAT(ReadError(WriteJsonReport(FullDocument()) + "{}"), HasSubstr("syntax error"));
  std::string truncated = WriteJsonReport(FullDocument());
  truncated.resize(truncated.size() - 2);  // the final "}\n"
  EXPECT_THAT(ReadError(truncated), HasSubstr("unexpected end of input"));
}

TEST(JsonReport, RejectsDeepNesting) {
  std::string deep = R"({"format":"tileprof-report","x":)" + std::string(100000, '[');
  EXPECT_THAT(ReadError(deep), HasSubstr("nested deeper than 64 levels"));
}

TEST(JsonReportFile, WritesAtomicallyAndReadsBack) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tileprof-json-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "report.json").string();
  ASSERT_TRUE(WriteJsonReportFile(path, FullDocument()).has_value());
  Expected<ReportDocument> read = ReadJsonReportFile(path);
  ASSERT_TRUE(read.has_value()) << read.error().message();
  EXPECT_EQ(*read, FullDocument());
  Expected<ReportDocument> missing = ReadJsonReportFile((dir / "none.json").string());
  ASSERT_FALSE(missing.has_value());
  EXPECT_THAT(missing.error().message(), HasSubstr("none.json"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tileprof::report
