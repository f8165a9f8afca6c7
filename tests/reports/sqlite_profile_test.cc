#include "reports/sqlite_profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "codec_fixtures.h"

namespace tileprof::report {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::AdderMk1Report;
using testing::FullDocument;
using testing::ImbalancedMk1Report;
using testing::SampleExecution;

class ProfileDatabase : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tileprof-sqlite-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "profile.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  ReportDocument RoundTrip(const ReportDocument& document) {
    Status written = WriteProfileDatabase(path_, document);
    EXPECT_TRUE(written.has_value()) << (written ? "" : written.error().message());
    Expected<ReportDocument> read = ReadProfileDatabase(path_);
    EXPECT_TRUE(read.has_value()) << (read ? "" : read.error().message());
    return read ? std::move(read).value() : ReportDocument{};
  }

  // Rows of a query as "a|b|c" strings, as the sqlite3 shell prints them.
  std::vector<std::string> Query(const std::string& sql) {
    sqlite3* db = nullptr;
    std::vector<std::string> rows;
    EXPECT_EQ(sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    char* error = nullptr;
    auto collect = [](void* out, int n, char** values, char**) {
      std::string row;
      for (int i = 0; i < n; ++i) row += (i ? "|" : "") + std::string(values[i] ? values[i] : "");
      static_cast<std::vector<std::string>*>(out)->push_back(row);
      return 0;
    };
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), collect, &rows, &error), SQLITE_OK) << error;
    sqlite3_free(error);
    sqlite3_close(db);
    return rows;
  }

  void Execute(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }

  std::string ReadError() {
    Expected<ReportDocument> read = ReadProfileDatabase(path_);
    EXPECT_FALSE(read.has_value());
    return read ? "" : read.error().message();
  }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(ProfileDatabase, RoundTripsEveryField) {
  ReportDocument document = FullDocument();
  EXPECT_EQ(RoundTrip(document), document);
}

TEST_F(ProfileDatabase, RoundTripsWholeEngineReportsAndPartialDocuments) {
  ReportDocument adder = testing::EngineDocument(AdderMk1Report(), SampleExecution());
  EXPECT_EQ(RoundTrip(adder), adder);
  ReportDocument execution_only;
  execution_only.execution = SampleExecution();
  EXPECT_EQ(RoundTrip(execution_only), execution_only);
  ReportDocument empty_compilation;
  empty_compilation.compilation.emplace();
  EXPECT_EQ(RoundTrip(empty_compilation), empty_compilation);
}

TEST_F(ProfileDatabase, StoresNaNAsNull) {
  ReportDocument document;
  ExecutionReport& execution = document.execution.emplace();
  execution.clock_hz = std::numeric_limits<double>::quiet_NaN();
  execution.tile_average_cycles[0] = std::numeric_limits<double>::infinity();
  ReportDocument read = RoundTrip(document);
  EXPECT_TRUE(std::isnan(read.execution->clock_hz));
  EXPECT_EQ(read.execution->tile_average_cycles[0], std::numeric_limits<double>::infinity());
}

TEST_F(ProfileDatabase, KeepsUnsignedValuesAboveTwoToThe63) {
  ReportDocument document;
  TileMemory& tile = document.compilation.emplace().tiles.emplace_back();
  At(tile.by_category, Category::kStack) = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(RoundTrip(document), document);
}

// The three queries of docs/report-schema.md.
TEST_F(ProfileDatabase, AnswersTheDocumentedQueries) {
  RoundTrip(testing::EngineDocument(ImbalancedMk1Report()));
  EXPECT_THAT(Query("SELECT tile, ipu, excluding_gaps, including_gaps FROM tiles"
                    " ORDER BY excluding_gaps DESC, tile LIMIT 3"),
              ElementsAre("0|0|834339|834416", "1|0|520193|520293", "3|0|20483|20583"));
  std::vector<std::string> by_category =
      Query("SELECT c.label, SUM(t.bytes) AS bytes FROM tile_categories t"
            " JOIN categories c ON c.id = t.category GROUP BY c.id ORDER BY bytes DESC");
  ASSERT_EQ(by_category.size(), 7u);
  EXPECT_THAT(by_category[1], "Stack|3852288");
  EXPECT_THAT(Query("SELECT v.name, SUM(t.bytes) AS bytes, COUNT(*) AS tiles FROM tile_vertex_types t"
                    " JOIN vertex_types v ON v.id = t.vertex_type GROUP BY v.id"
                    " ORDER BY bytes DESC LIMIT 2"),
              ElementsAre("poplin::ConvPartial1x1Out<float,float,true,false>|6648|1",
                          "poplar_rt::DstStridedCopy64BitMultiAccess|2669|1"));
  EXPECT_THAT(Query("SELECT value FROM metadata WHERE key = 'version'"), ElementsAre("1.0"));
}

TEST_F(ProfileDatabase, KeepsTextReportFiguresQueryableAsJson) {
  ReportDocument document = FullDocument();
  RoundTrip(document);
  EXPECT_THAT(Query("SELECT json_extract(json, '$.compilation.verbatim.total.includingGaps')"
                    " FROM verbatim"),
              ElementsAre(std::to_string(document.compilation->verbatim.total->including_gaps)));
}

TEST_F(ProfileDatabase, ReplacesAnOldDatabaseAndLeavesNoTemporaryFile) {
  RoundTrip(FullDocument());
  ReportDocument execution_only;
  execution_only.execution = SampleExecution();
  EXPECT_EQ(RoundTrip(execution_only), execution_only);
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir_))
    names.push_back(entry.path().filename().string());
  EXPECT_THAT(names, ElementsAre("profile.db"));
}

TEST_F(ProfileDatabase, RefusesTilesOutOfOrderWithoutTouchingTheOldFile) {
  RoundTrip(FullDocument());
  ReportDocument document = FullDocument();
  std::swap(document.compilation->tiles[1], document.compilation->tiles[2]);
  Status written = WriteProfileDatabase(path_, document);
  ASSERT_FALSE(written.has_value());
  EXPECT_EQ(written.error().message(),
            path_ + ": tile ids must ascend (the database keys tiles by id): tiles[2] is tile 1 "
                    "after tile 2");
  EXPECT_EQ(*ReadProfileDatabase(path_), FullDocument());
}

TEST_F(ProfileDatabase, RejectsAnUnknownMajorVersionNamingBoth) {
  RoundTrip(FullDocument());
  Execute("UPDATE metadata SET value = '3' WHERE key = 'version_major'");
  EXPECT_EQ(ReadError(),
            path_ + ": metadata: unsupported report format version 3.0 (this reader reads 1.x)");
}

TEST_F(ProfileDatabase, NamesTheTableRowAndColumnOfABadValue) {
  RoundTrip(FullDocument());
  Execute("UPDATE tiles SET tile = 5000000000 WHERE tile = 2");
  EXPECT_EQ(ReadError(), path_ + ": table tiles, row 3, column tile: 5000000000 does not fit 32 bits");
  RoundTrip(FullDocument());
  Execute("UPDATE tile_categories SET category = 40 WHERE tile = 1 AND category = 0");
  EXPECT_THAT(ReadError(), HasSubstr("column category: category 40 does not exist (there are 18)"));
  RoundTrip(FullDocument());
  Execute("UPDATE variables SET bytes = 'lots' WHERE id = 1");
  EXPECT_EQ(ReadError(), path_ + ": table variables, row 1, column bytes: expected an integer");
  RoundTrip(FullDocument());
  Execute("DELETE FROM tiles WHERE tile = 3");
  EXPECT_THAT(ReadError(), HasSubstr("tile 3 is not in table tiles"));
  RoundTrip(FullDocument());
  Execute("UPDATE execution_steps SET tiles = 1099511627776 WHERE id = 0");
  EXPECT_THAT(ReadError(), HasSubstr("column tiles: 1099511627776 tiles is more than"));
}

// Enough tiles for tile_categories to be read on a second connection and
// thread: the same document, and the same first error, as one would read.
TEST_F(ProfileDatabase, ReadsManyTilesOnTwoConnectionsAsOnOne) {
  ReportDocument document;
  CompilationReport& report = document.compilation.emplace(testing::SmallCompilation());
  const std::vector<TileMemory> pattern = report.tiles;
  report.tiles.clear();
  for (uint32_t i = 0; i < 6000; ++i) {
    TileMemory tile = pattern[i % pattern.size()];
    tile.tile = i;
    tile.by_category[i % kNumCategories] += i;
    report.tiles.push_back(tile);
  }
  EXPECT_EQ(RoundTrip(document), document);

  auto error_after = [&](const std::string& sql) {
    RoundTrip(document);
    Execute(sql);
    return ReadError();
  };
  EXPECT_THAT(error_after("UPDATE tile_categories SET category = 40 WHERE tile = 5999 AND category = 0"),
              HasSubstr("table tile_categories, row "));
  EXPECT_THAT(error_after("UPDATE tile_vertex_types SET bytes = 'x' WHERE tile = 4000"),
              HasSubstr("table tile_vertex_types, row 8000, column bytes: expected an integer"));
  // Both tables broken: tile_categories, read first on one connection, wins.
  EXPECT_THAT(error_after("UPDATE tile_regions SET region = 7 WHERE tile = 2;"
                          "UPDATE tile_categories SET bytes = -1.5 WHERE tile = 5000 AND category = 0"),
              HasSubstr("table tile_categories, row "));
}

TEST_F(ProfileDatabase, RejectsFilesThatAreNotProfiles) {
  { std::ofstream(path_) << "not a database at all, just some text long enough to be checked"; }
  EXPECT_THAT(ReadError(), HasSubstr("file is not a database"));
  std::filesystem::remove(path_);
  Execute("CREATE TABLE metadata (key TEXT, value TEXT)");
  EXPECT_EQ(ReadError(), path_ + ": metadata: format is \"\", not \"tileprof-report\"");
  EXPECT_THAT(ReadProfileDatabase((dir_ / "missing.db").string()).error().message(),
              HasSubstr("missing.db"));
}

}  // namespace
}  // namespace tileprof::report
