// The streaming JSON parser (reports/json_sax.h) against nlohmann's, which
// it replaces in the report reader: the same events for what both accept,
// rejection of the same inputs, and the same result whatever the chunking.
#include "reports/json_sax.h"

#include <gtest/gtest.h>

#include <bit>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/file.h"
#include "reports/json_codec.h"
#include "tests/reports/codec_fixtures.h"

namespace tileprof::report::json_sax {
namespace {

using json = nlohmann::json;

// Records events as text; doubles by bit pattern.
struct Recorder {
  std::vector<std::string> events;
  bool null() { return Add("null"); }
  bool boolean(bool v) { return Add(v ? "true" : "false"); }
  bool number_integer(int64_t v) { return Add("i" + std::to_string(v)); }
  bool number_unsigned(uint64_t v) { return Add("u" + std::to_string(v)); }
  bool number_float(double v, const std::string&) {
    return Add("f" + std::to_string(std::bit_cast<uint64_t>(v)));
  }
  bool string(std::string& v) { return Add("s:" + v); }
  bool binary(json::binary_t&) { return Add("binary"); }
  bool start_object(std::size_t) { return Add("{"); }
  bool key(std::string& k) { return Add("k:" + k); }
  bool end_object() { return Add("}"); }
  bool start_array(std::size_t) { return Add("["); }
  bool end_array() { return Add("]"); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    failed = true;
    return false;
  }
  bool Add(std::string event) {
    events.push_back(std::move(event));
    return true;
  }
  bool failed = false;
};

struct Outcome {
  bool ok = false;
  std::vector<std::string> events;
};

Outcome Nlohmann(std::string_view text) {
  Recorder r;
  bool ok =
      json::sax_parse(text.begin(), text.end(), &r, json::input_format_t::json, true) && !r.failed;
  return {ok, ok ? r.events : std::vector<std::string>{}};
}

Outcome Ours(std::string_view text, size_t chunk) {
  Recorder r;
  bool ok;
  if (chunk == 0) {
    Parser parser(text);
    ok = parser.Parse(r);
    if (!ok) {
      EXPECT_TRUE(parser.has_syntax_error()) << text;
    }
  } else {
    size_t at = 0;
    Parser parser([&](std::string_view& out, std::string&) {
      out = text.substr(at, chunk);
      at += out.size();
      return true;
    });
    ok = parser.Parse(r);
  }
  return {ok, ok ? r.events : std::vector<std::string>{}};
}

void ExpectSame(std::string_view text) {
  Outcome expected = Nlohmann(text);
  for (size_t chunk : {0, 1, 2, 3, 7, 64}) {
    Outcome actual = Ours(text, chunk);
    EXPECT_EQ(actual.ok, expected.ok) << "chunk " << chunk << ": " << text.substr(0, 200);
    EXPECT_EQ(actual.events, expected.events) << "chunk " << chunk << ": " << text.substr(0, 200);
  }
}

TEST(JsonSax, AgreesWithNlohmannOnValidInput) {
  for (const char* text : {"{}",
                           "[]",
                           " [ ] ",
                           "0",
                           "-0",
                           "-0.0",
                           "1.5e3",
                           "1E-2",
                           "123456789012345678901234567890",
                           "18446744073709551615",
                           "18446744073709551616",
                           "-9223372036854775808",
                           "-9223372036854775809",
                           "1e-400",
                           "true",
                           "false",
                           "null",
                           R"("")",
                           R"("a\"b\\c\/d\b\f\n\r\t")",
                           R"("\u0041\u00e9\u20ac")",
                           R"("\ud83d\ude00")",
                           R"("\u0000")",
                           "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
                           "{\"a\":[1,2,{\"b\":null}],\"c\":{\"d\":\"e\"}}",
                           "\xef\xbb\xbf{}",
                           " \n\t\r{ \"k\" : [ true , false ] }\n"})
    ExpectSame(text);
}

TEST(JsonSax, AgreesWithNlohmannOnInvalidInput) {
  for (const char* text : {"",
                           " ",
                           "{",
                           "[",
                           "]",
                           "}",
                           "{]",
                           "[}",
                           "[1,]",
                           "{\"a\":1,}",
                           "{\"a\"}",
                           "{\"a\" 1}",
                           "{1:2}",
                           "01",
                           "-",
                           "-a",
                           "1.",
                           ".5",
                           "1e",
                           "1e+",
                           "+1",
                           "tru",
                           "trux",
                           "nul",
                           "[1 2]",
                           "{} {}",
                           "\"abc",
                           "\"a\nb\"",
                           R"("\x")",
                           R"("\u12")",
                           R"("\ud800")",
                           R"("\ud800\u0041")",
                           R"("\udc00")",
                           "\"\xff\"",
                           "\"\xc0\xaf\"",
                           "\"\xed\xa0\x80\"",
                           "\"\xf4\x90\x80\x80\"",
                           "\"\xe2\x82\"",
                           "1e400",
                           "-1e400",
                           "\xef\xbb",
                           "\xef{}",
                           "[1]x",
                           "NaN",
                           "Infinity",
                           "[-]",
                           "[1e5.]"})
    ExpectSame(text);
}

TEST(JsonSax, AgreesOnEveryReport) {
  ExpectSame(WriteJsonReport(testing::FullDocument()));
  const std::filesystem::path corpus =
      std::filesystem::path(TILEPROF_SOURCE_DIR) / "fuzz/report_json/corpus";
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
    Expected<std::string> text = ReadFile(entry.path().string());
    ASSERT_TRUE(text);
    ExpectSame(*text);
    ++files;
  }
  EXPECT_GE(files, 5u);
}

TEST(JsonSax, ErrorsGiveLineAndColumnOfTheOffendingByte) {
  Parser parser(std::string_view("{\n  \"format\": tileprof\n}"));
  Recorder r;
  EXPECT_FALSE(parser.Parse(r));
  ASSERT_TRUE(parser.has_syntax_error());
  EXPECT_EQ(parser.syntax_error().line, 2u);
  EXPECT_EQ(parser.syntax_error().column, 14u);  // 'i' of tileprof, as nlohmann says
  EXPECT_EQ(parser.syntax_error().message, "syntax error while parsing value - invalid literal");
}

TEST(JsonSax, ReadErrorsAreNotSyntaxErrors) {
  Parser parser([](std::string_view&, std::string& error) {
    error = "disk on fire";
    return false;
  });
  Recorder r;
  EXPECT_FALSE(parser.Parse(r));
  EXPECT_FALSE(parser.has_syntax_error());
  EXPECT_EQ(parser.read_error(), "disk on fire");
}

// The builder keeps a step's cyclesByTile as plain integers while it can;
// a key-sorted file (execution before format/version) and a bad element
// must still read exactly as before.
TEST(JsonReportReader, PackedTileCyclesReadBackInEveryOrder) {
  ReportDocument document = testing::FullDocument();
  std::string compact = WriteJsonReport(document);
  Expected<ReportDocument> read = ReadJsonReport(compact, "r.json");
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(*read, document);
  // nlohmann's json sorts keys: "compilation", "execution", "format", "version".
  std::string sorted = json::parse(compact).dump(1);
  ASSERT_LT(sorted.find("\"execution\""), sorted.find("\"format\""));
  Expected<ReportDocument> held = ReadJsonReport(sorted, "sorted.json");
  ASSERT_TRUE(held) << held.error().message();
  EXPECT_EQ(*held, document);
}

TEST(JsonReportReader, ABadTileCycleIsReportedWithItsPath) {
  std::string text =
      R"({"format":"tileprof-report","version":{"major":1,"minor":0},"execution":{"totalCycles":1,)"
      R"("clockFrequency":1.0,"steps":[{"program":"a","cycles":1,"cyclesByTile":[1,2]},)"
      R"({"program":"b","cycles":1,"cyclesByTile":[3,"x",4]}]}})";
  Expected<ReportDocument> read = ReadJsonReport(text, "bad.json");
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().message(),
            "bad.json: execution.steps[1].cyclesByTile[1]: expected an unsigned integer");
  std::string ok = text;
  ok.replace(ok.find("\"x\""), 3, "9");
  Expected<ReportDocument> fixed = ReadJsonReport(ok, "ok.json");
  ASSERT_TRUE(fixed) << fixed.error().message();
  EXPECT_EQ(fixed->execution->steps[0].cycles_by_tile, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(fixed->execution->steps[1].cycles_by_tile, (std::vector<uint64_t>{3, 9, 4}));
}

}  // namespace
}  // namespace tileprof::report::json_sax
