#include "reports/cbor_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "codec_fixtures.h"
#include "reports/json_codec.h"

namespace tileprof::report {
namespace {

using testing::AdderMk1Report;
using testing::FullDocument;
using ::testing::HasSubstr;
using testing::SampleExecution;
using json = nlohmann::json;

std::span<const uint8_t> Bytes(const std::string& bytes) {
  return {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()};
}
std::span<const uint8_t> Bytes(const std::vector<uint8_t>& bytes) { return bytes; }

template <typename Buffer>
ReportDocument ReadOk(const Buffer& bytes) {
  Expected<ReportDocument> document = ReadCborReport(Bytes(bytes), "test.cbor");
  EXPECT_TRUE(document.has_value()) << (document ? "" : document.error().message());
  return document ? std::move(document).value() : ReportDocument{};
}

template <typename Buffer>
std::string ReadError(const Buffer& bytes) {
  Expected<ReportDocument> document = ReadCborReport(Bytes(bytes), "bad.cbor");
  EXPECT_FALSE(document.has_value());
  return document ? "" : document.error().message();
}

// The report as a JSON DOM, to break a value and encode it with another
// CBOR encoder (nlohmann's: definite lengths throughout).
json Dom(const ReportDocument& document) { return json::parse(WriteJsonReport(document)); }

TEST(CborReport, RoundTripsEveryField) {
  ReportDocument document = FullDocument();
  std::string bytes = WriteCborReport(document);
  ReportDocument read = ReadOk(bytes);
  EXPECT_EQ(read, document);
  EXPECT_EQ(WriteCborReport(read), bytes);
}

TEST(CborReport, RoundTripsAWholeEngineReportSmallerThanJson) {
  ReportDocument document = testing::EngineDocument(AdderMk1Report(), SampleExecution());
  std::string bytes = WriteCborReport(document);
  EXPECT_EQ(ReadOk(bytes), document);
  EXPECT_LT(bytes.size(), WriteJsonReport(document).size());
}

TEST(CborReport, StartsWithTheSelfDescribingTagAndHoldsTheJsonSchema) {
  std::string bytes = WriteCborReport(FullDocument());
  ASSERT_GE(bytes.size(), 3u);
  EXPECT_EQ(bytes.substr(0, 3), "\xd9\xd9\xf7");
  // Another decoder sees the same tree as the JSON writer writes.
  json decoded = json::from_cbor(bytes.begin() + 3, bytes.end());
  json expected = Dom(FullDocument());
  expected["execution"]["tileAverageCycles"].clear();  // compared apart: doubles
  decoded["execution"]["tileAverageCycles"].clear();
  EXPECT_EQ(decoded, expected);
}

TEST(CborReport, KeepsNonFiniteDoublesAsFloats) {
  ReportDocument document;
  ExecutionReport& execution = document.execution.emplace();
  execution.clock_hz = std::numeric_limits<double>::quiet_NaN();
  execution.tile_average_cycles[0] = -std::numeric_limits<double>::infinity();
  execution.tile_average_cycles[1] = -0.0;
  ReportDocument read = ReadOk(WriteCborReport(document));
  EXPECT_TRUE(std::isnan(read.execution->clock_hz));
  EXPECT_EQ(read.execution->tile_average_cycles[0], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::signbit(*read.execution->tile_average_cycles[1]));
}

TEST(CborReport, ReadsDefiniteLengthMapsAndHalfFloatsFromOtherEncoders) {
  ReportDocument document = FullDocument();
  std::vector<uint8_t> bytes = json::to_cbor(Dom(document));
  EXPECT_EQ(ReadOk(bytes), document);
}

TEST(CborReport, RejectsAnUnknownMajorVersionNamingBoth) {
  json dom = Dom(FullDocument());
  dom["version"]["major"] = 9;
  dom["version"]["minor"] = 0;
  EXPECT_EQ(ReadError(json::to_cbor(dom)),
            "bad.cbor: version: unsupported report format version 9.0 (this reader reads 1.x)");
}

TEST(CborReport, NamesTheJsonPathOfAMalformedValue) {
  json dom = Dom(testing::EngineDocument(AdderMk1Report()));
  dom["compilation"]["tiles"][12]["categories"]["variable"] = -5;
  EXPECT_EQ(ReadError(json::to_cbor(dom)),
            "bad.cbor: compilation.tiles[12].categories.variable: expected an unsigned integer");
  dom = Dom(FullDocument());
  dom["execution"]["steps"][0]["program"] = json::binary({1, 2});
  std::string error = ReadError(json::to_cbor(dom));
  EXPECT_THAT(error, ::testing::StartsWith("bad.cbor: byte "));
  EXPECT_THAT(error, ::testing::EndsWith(": unexpected byte string"));
}

TEST(CborReport, NamesTheByteOffsetOfMalformedCbor) {
  std::string bytes = WriteCborReport(FullDocument());
  EXPECT_EQ(ReadError(bytes.substr(0, bytes.size() - 1)),
            "bad.cbor: byte " + std::to_string(bytes.size() - 1) + ": truncated input");
  EXPECT_EQ(ReadError(bytes + "\x01"),
            "bad.cbor: byte " + std::to_string(bytes.size()) + ": trailing bytes after the report");
  EXPECT_EQ(ReadError(std::string()), "bad.cbor: byte 0: empty input");
  // A map keyed by an integer: {1: 2}.
  EXPECT_EQ(ReadError(std::string("\xa1\x01\x02")),
            "bad.cbor: byte 1: map key is not a text string");
  // Reserved additional information 28 in an unsigned integer head.
  EXPECT_EQ(ReadError(std::string("\x1c")), "bad.cbor: byte 0: malformed CBOR item");
  // A break with nothing open; invalid UTF-8 in a text string.
  EXPECT_EQ(ReadError(std::string("\xff")),
            "bad.cbor: byte 0: break outside an indefinite-length item");
  EXPECT_EQ(ReadError(std::string("\xbf\x61\xff\x01\xff")),
            "bad.cbor: byte 1: text string is not valid UTF-8");
  EXPECT_EQ(ReadError(std::string("\x01")), "bad.cbor: top level: expected an object");
}

TEST(CborReport, ReadsIndefiniteLengthTextStrings) {
  // {"format": "tileprof-" "report", "version": {"major": 1, "minor": 0}}
  using namespace std::string_literals;
  std::string bytes =
      "\xa2\x66"
      "format"
      "\x7f\x69"
      "tileprof-"
      "\x66"
      "report"
      "\xff"
      "\x67"
      "version"
      "\xa2\x65"
      "major"
      "\x01\x65"
      "minor"
      "\x00"s;
  EXPECT_EQ(ReadOk(bytes), ReportDocument{});
}

// The reader decodes integers, text and container heads itself and leaves
// the rest to libcbor; heads of every width, and heads or texts cut short,
// must read as libcbor reads them.
TEST(CborReport, ReadsHeadsOfEveryWidth) {
  using namespace std::string_literals;
  // {"format": "tileprof-report", "version": {"major": 1, "minor": 0}}, with
  // lengths and values in 1-, 2-, 4- and 8-byte arguments.
  std::string bytes =
      "\xb8\x02"
      "\x78\x06"
      "format"
      "\x79\x00\x0f"
      "tileprof-report"
      "\x7a\x00\x00\x00\x07"
      "version"
      "\xba\x00\x00\x00\x02"
      "\x65"
      "major"
      "\x1b\x00\x00\x00\x00\x00\x00\x00\x01"
      "\x7b\x00\x00\x00\x00\x00\x00\x00\x05"
      "minor"
      "\x19\x00\x00"s;
  EXPECT_EQ(ReadOk(bytes), ReportDocument{});
  // Cut inside the head of "version" (byte 28), its text, and the last integer.
  EXPECT_EQ(ReadError(bytes.substr(0, 30)), "bad.cbor: byte 28: truncated input");
  EXPECT_EQ(ReadError(bytes.substr(0, 35)), "bad.cbor: byte 28: truncated input");
  EXPECT_EQ(ReadError(bytes.substr(0, bytes.size() - 1)),
            "bad.cbor: byte " + std::to_string(bytes.size() - 3) + ": truncated input");
  // A text longer than the input; reserved widths in text and map heads.
  EXPECT_EQ(ReadError("\xa1\x7a\x00\x01\x00\x00"
                      "abc"s),
            "bad.cbor: byte 1: truncated input");
  EXPECT_EQ(ReadError("\xa1\x7c"s), "bad.cbor: byte 1: malformed CBOR item");
  EXPECT_EQ(ReadError("\xbc"s), "bad.cbor: byte 0: malformed CBOR item");
}

TEST(CborReportFile, WritesAtomicallyAndReadsBack) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tileprof-cbor-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "report.cbor").string();
  ASSERT_TRUE(WriteCborReportFile(path, FullDocument()).has_value());
  Expected<ReportDocument> read = ReadCborReportFile(path);
  ASSERT_TRUE(read.has_value()) << read.error().message();
  EXPECT_EQ(*read, FullDocument());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tileprof::report
