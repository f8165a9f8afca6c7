#include "reports/sqlite_profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "codec_fixtures.h"

namespace tileprof::report {
namespace {

using testing::AdderMk1Report;
using ::testing::ElementsAre;
using testing::FullDocument;
using ::testing::HasSubstr;
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
  std::vector<std::string> by_category = Query(
      "SELECT c.label, SUM(t.bytes) AS bytes FROM tile_categories t"
      " JOIN categories c ON c.id = t.category GROUP BY c.id ORDER BY bytes DESC");
  ASSERT_EQ(by_category.size(), 7u);
  EXPECT_THAT(by_category[1], "Stack|3852288");
  EXPECT_THAT(
      Query("SELECT v.name, SUM(t.bytes) AS bytes, COUNT(*) AS tiles FROM tile_vertex_types t"
            " JOIN vertex_types v ON v.id = t.vertex_type GROUP BY v.id"
            " ORDER BY bytes DESC LIMIT 2"),
      ElementsAre("poplin::ConvPartial1x1Out<float,float,true,false>|6648|1",
                  "poplar_rt::DstStridedCopy64BitMultiAccess|2669|1"));
  EXPECT_THAT(Query("SELECT value FROM metadata WHERE key = 'version'"), ElementsAre("1.2"));
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
            path_ +
                ": tile ids must ascend (the database keys tiles by id): tiles[2] is tile 1 "
                "after tile 2");
  EXPECT_EQ(*ReadProfileDatabase(path_), FullDocument());
}

TEST_F(ProfileDatabase, RejectsAnUnknownMajorVersionNamingBoth) {
  RoundTrip(FullDocument());
  Execute("UPDATE metadata SET value = '3' WHERE key = 'version_major'");
  Execute("UPDATE metadata SET value = '0' WHERE key = 'version_minor'");
  EXPECT_EQ(ReadError(),
            path_ + ": metadata: unsupported report format version 3.0 (this reader reads 1.x)");
}

TEST_F(ProfileDatabase, NamesTheTableRowAndColumnOfABadValue) {
  RoundTrip(FullDocument());
  Execute("UPDATE tiles SET tile = 5000000000 WHERE tile = 2");
  EXPECT_EQ(ReadError(),
            path_ + ": table tiles, row 3, column tile: 5000000000 does not fit 32 bits");
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

// Files written before the liveness tables existed read as having none; a
// step naming a program that does not exist is refused.
TEST_F(ProfileDatabase, ReadsFilesWithoutTheLivenessTables) {
  ReportDocument document = FullDocument();
  ASSERT_FALSE(document.compilation->liveness.empty());
  RoundTrip(document);
  Execute(
      "DROP TABLE liveness_steps; DROP TABLE always_live_variables; "
      "DROP TABLE not_always_live_variables; DROP TABLE liveness_fullest_tiles; "
      "DROP TABLE operations; DROP TABLE compute_set_operations; DROP TABLE liveness_by_ipu; "
      "DROP TABLE operation_tiles");
  Expected<ReportDocument> read = ReadProfileDatabase(path_);
  ASSERT_TRUE(read) << read.error().message();
  document.compilation->liveness_by_ipu.clear();
  document.compilation->operation_tiles.clear();
  document.compilation->liveness.clear();
  document.compilation->always_live_variables.clear();
  document.compilation->not_always_live_variables.clear();
  document.compilation->liveness_fullest_tiles.clear();
  document.compilation->operations.clear();
  document.compilation->compute_set_operations.clear();
  EXPECT_EQ(*read, document);
  // Each edit of a fresh copy, and the error it is refused with.
  const std::pair<const char*, const char*> refused[] = {
      {"UPDATE liveness_steps SET program = 7 WHERE id = 1",
       "table liveness_steps, row 1, column program: program 7 does not exist"},
      {"UPDATE compute_set_operations SET operation = 5 WHERE id = 1",
       "table compute_set_operations, row 1, column operation: operation 5 does not exist"},
      {"UPDATE not_always_live_variables SET last_step = 9 WHERE id = 0",
       "table not_always_live_variables, row 0, column last_step: liveness step 9 does not "
       "exist"},
      {"UPDATE not_always_live_variables SET first_step = 1, last_step = 0 WHERE id = 1",
       "table not_always_live_variables, row 1, column first_step: first step 1 is after the "
       "last, 0"},
  };
  for (const auto& [edit, error] : refused) {
    SCOPED_TRACE(edit);
    RoundTrip(FullDocument());
    Execute(edit);
    EXPECT_EQ(ReadError(), path_ + ": " + error);
  }
}

// Files written in format 1.1, before operations had tiles and code, steps
// their split and the per-IPU and per-tile tables existed, read as having
// none of them; a reference out of range in the new tables is refused.
TEST_F(ProfileDatabase, ReadsFormat11FilesWithoutTheNewColumnsAndTables) {
  ReportDocument document = FullDocument();
  RoundTrip(document);
  Execute(
      "DROP TABLE liveness_by_ipu; DROP TABLE operation_tiles; DROP TABLE execution_tile_cycles; "
      "ALTER TABLE operations DROP COLUMN code_bytes; ALTER TABLE operations DROP COLUMN tiles; "
      "ALTER TABLE execution_steps DROP COLUMN compute_cycles; "
      "ALTER TABLE execution_steps DROP COLUMN exchange_cycles; "
      "ALTER TABLE execution_steps DROP COLUMN sync_cycles");
  Expected<ReportDocument> read = ReadProfileDatabase(path_);
  ASSERT_TRUE(read) << read.error().message();
  CompilationReport& compilation = *document.compilation;
  compilation.liveness_by_ipu.clear();
  compilation.operation_tiles.clear();
  for (Operation& op : compilation.operations) op.code_bytes = op.tiles = std::nullopt;
  for (ExecutionStep& step : document.execution->steps)
    step.compute_cycles = step.exchange_cycles = step.sync_cycles = std::nullopt;
  document.execution->tile_cycles.clear();
  EXPECT_EQ(*read, document);
  const std::pair<const char*, const char*> refused[] = {
      {"UPDATE liveness_by_ipu SET step = 2 WHERE id = 3",
       "table liveness_by_ipu, row 3, column step: liveness step 2 does not exist"},
      {"UPDATE operation_tiles SET operation = 2 WHERE id = 0",
       "table operation_tiles, row 0, column operation: operation 2 does not exist"},
      {"UPDATE operation_tiles SET first_tile = 3 WHERE id = 0",
       "table operation_tiles, row 0, column last_tile: 1 is before first_tile 3"},
  };
  for (const auto& [edit, error] : refused) {
    SCOPED_TRACE(edit);
    RoundTrip(FullDocument());
    Execute(edit);
    EXPECT_EQ(ReadError(), path_ + ": " + error);
  }
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
  EXPECT_THAT(
      error_after("UPDATE tile_categories SET category = 40 WHERE tile = 5999 AND category = 0"),
      HasSubstr("table tile_categories, row "));
  EXPECT_THAT(error_after("UPDATE tile_vertex_types SET bytes = 'x' WHERE tile = 4000"),
              HasSubstr("table tile_vertex_types, row 8000, column bytes: expected an integer"));
  // Both tables broken: tile_categories, read first on one connection, wins.
  EXPECT_THAT(
      error_after("UPDATE tile_regions SET region = 7 WHERE tile = 2;"
                  "UPDATE tile_categories SET bytes = -1.5 WHERE tile = 5000 AND category = 0"),
      HasSubstr("table tile_categories, row "));
}

// A read of what a command needs: every tile's totals, the detail of the
// most used ones, whole-report sums from SQL, each as a full read gives it.
TEST_F(ProfileDatabase, PartialReadsAgreeWithTheFullRead) {
  ReportDocument document = testing::EngineDocument(AdderMk1Report(), SampleExecution());
  CompilationReport& report = *document.compilation;
  ASSERT_GT(report.tiles.size(), 3u);
  for (size_t i = 0; i < report.tiles.size(); ++i)
    report.variables.push_back({"v" + std::to_string(i), report.tiles[i].tile, 10 + i,
                                Category::kVariables, i % 2 == 0, std::nullopt});
  RoundTrip(document);
  const MemoryUsage expected_total = Summarize(report.tiles, report.vertex_types);
  std::vector<const TileMemory*> top = TopTiles(report.tiles, 2);

  for (bool old_indexes : {false, true}) {
    if (old_indexes) {  // as written before the indexes carried bytes
      Execute(
          "DROP INDEX tile_categories_by_category; DROP INDEX tile_vertex_types_by_type;"
          "DROP INDEX tile_vertex_data_by_category;"
          "CREATE INDEX tile_categories_by_category ON tile_categories (category);"
          "CREATE INDEX tile_vertex_types_by_type ON tile_vertex_types (vertex_type);");
    }
    std::optional<MemoryUsage> total;
    ProfileReadOptions options{.all_tile_detail = false, .detail_top_tiles = 2, .total = &total};
    Expected<ReportDocument> read = ReadProfileDatabase(path_, options);
    ASSERT_TRUE(read) << read.error().message();
    ASSERT_TRUE(total);
    EXPECT_EQ(*total, expected_total);
    EXPECT_EQ(read->execution, document.execution);
    const CompilationReport& partial = *read->compilation;
    ASSERT_EQ(partial.tiles.size(), report.tiles.size());
    size_t detailed = 0;
    for (size_t i = 0; i < report.tiles.size(); ++i) {
      const TileMemory& full = report.tiles[i];
      const TileMemory& got = partial.tiles[i];
      EXPECT_EQ(got.by_region, full.by_region) << i;
      EXPECT_EQ(got.always_live, full.always_live) << i;
      EXPECT_EQ(got.not_always_live, full.not_always_live) << i;
      bool is_top = std::find(top.begin(), top.end(), &full) != top.end();
      if (is_top) {
        ++detailed;
        EXPECT_EQ(got, full) << i;
      } else {
        EXPECT_EQ(got.by_category, CategoryBytes{}) << i;  // not read
        EXPECT_TRUE(got.vertex_types.empty()) << i;
      }
    }
    EXPECT_EQ(detailed, 2u);
    std::vector<Variable> top_variables;
    for (const Variable& v : report.variables)
      if (v.tile == top[0]->tile || v.tile == top[1]->tile) top_variables.push_back(v);
    EXPECT_EQ(partial.variables, top_variables);
    // The same tiles come out on top of the partial read.
    std::vector<const TileMemory*> partial_top = TopTiles(partial.tiles, 2);
    EXPECT_EQ(partial_top[0]->tile, top[0]->tile);
    EXPECT_EQ(partial_top[1]->tile, top[1]->tile);
    EXPECT_EQ(SummarizeByTile(partial.tiles, 1000), SummarizeByTile(report.tiles, 1000));

    // Totals only, and the full read with a total: same figures.
    Expected<ReportDocument> bare = ReadProfileDatabase(path_, {.all_tile_detail = false});
    ASSERT_TRUE(bare);
    EXPECT_TRUE(bare->compilation->variables.empty());
    std::optional<MemoryUsage> full_total;
    Expected<ReportDocument> full = ReadProfileDatabase(path_, {.total = &full_total});
    ASSERT_TRUE(full);
    EXPECT_EQ(*full, document);
    EXPECT_EQ(full_total, expected_total);
  }
}

TEST_F(ProfileDatabase, PartialReadsStillCheckWhatTheyRead) {
  ReportDocument document = testing::EngineDocument(AdderMk1Report(), SampleExecution());
  RoundTrip(document);
  Execute(
      "UPDATE tile_categories SET category = 40 WHERE tile = (SELECT min(tile) FROM "
      "tile_categories)"
      " AND category = (SELECT min(category) FROM tile_categories)");
  std::optional<MemoryUsage> total;
  Expected<ReportDocument> read =
      ReadProfileDatabase(path_, {.all_tile_detail = false, .total = &total});
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message(), HasSubstr("column category: category 40 does not exist"));
  EXPECT_THAT(read.error().message(), HasSubstr("table tile_categories, row "));
  RoundTrip(document);
  Execute("UPDATE tile_regions SET excluding_gaps = 'x'");
  read = ReadProfileDatabase(path_, {.all_tile_detail = false});
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message(),
              HasSubstr("table tile_regions, row 0, column excluding_gaps"));
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
