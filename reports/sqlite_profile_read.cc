// Reading a SQLite profile database back into a ReportDocument, only as far
// as ProfileReadOptions asks; see sqlite_profile.h.
#include "reports/sqlite_profile.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "reports/json_codec.h"
#include "reports/schema.h"
#include "reports/sqlite_columns.h"
#include "reports/sqlite_db.h"

namespace tileprof::report {
namespace {

using sqlite::Connection;
using sqlite::Statement;

constexpr std::string_view kAverageColumns[] = {
    "avg_compute_including_idle", "avg_compute_excluding_idle", "avg_ipu_exchange",
    "avg_global_exchange",        "avg_host_exchange",          "avg_sync"};
static_assert(std::size(kAverageColumns) == kNumCycleKinds);

// A step's cycles_by_tile is sized from a column; this bounds what an
// untrusted database can make us allocate (64 IPUs have 94,208 tiles).
constexpr uint64_t kMaxStepTiles = uint64_t{1} << 24;

// ---------------------------------------------------------------------------
// Reading.

// One result row of a query on `table`, with the first conversion error.
class Row {
 public:
  Row(sqlite3_stmt* statement, std::string_view table, std::optional<Error>& error)
      : statement_(statement), table_(table), error_(error) {}

  void Fail(int column, std::string_view message) {
    if (error_) return;
    error_ = MakeError("table {}, row {}, column {}: {}", table_, row_,
                       sqlite3_column_name(statement_, column), message);
  }
  bool IsNull(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }

  uint64_t Uint(int column) {
    // One column call rather than two (type, then value): millions of rows
    // go through here. The value is used before the next step, on the one
    // thread that owns the connection, as sqlite3_column_value requires.
    sqlite3_value* value = sqlite3_column_value(statement_, column);
    if (sqlite3_value_type(value) != SQLITE_INTEGER) {
      Fail(column, "expected an integer");
      return 0;
    }
    return static_cast<uint64_t>(sqlite3_value_int64(value));
  }
  uint32_t Uint32(int column) {
    uint64_t value = Uint(column);
    if (value > std::numeric_limits<uint32_t>::max()) {
      Fail(column, fmt::format("{} does not fit 32 bits", value));
      return 0;
    }
    return static_cast<uint32_t>(value);
  }
  // An id that must be below `limit` (a lookup table or a list length).
  size_t Index(int column, size_t limit, std::string_view what) {
    uint64_t value = Uint(column);
    if (!error_ && value >= limit) {
      Fail(column, fmt::format("{} {} does not exist (there are {})", what, value, limit));
      return 0;
    }
    return static_cast<size_t>(value);
  }
  std::optional<uint64_t> OptionalUint(int column) {
    if (IsNull(column)) return std::nullopt;
    return Uint(column);
  }
  std::optional<double> OptionalDouble(int column) {
    int type = sqlite3_column_type(statement_, column);
    if (type == SQLITE_NULL) return std::nullopt;
    if (type != SQLITE_FLOAT && type != SQLITE_INTEGER) {
      Fail(column, "expected a number");
      return std::nullopt;
    }
    return sqlite3_column_double(statement_, column);
  }
  std::string Text(int column) {
    if (sqlite3_column_type(statement_, column) != SQLITE_TEXT) {
      Fail(column, "expected text");
      return {};
    }
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
    return std::string(text, static_cast<size_t>(sqlite3_column_bytes(statement_, column)));
  }

  void Next() { ++row_; }

 private:
  sqlite3_stmt* statement_;
  std::string_view table_;
  std::optional<Error>& error_;
  uint64_t row_ = 0;
};

// Reads the columns of Record's keys (sqlite_columns.h), from `first` on,
// into `record`.
template <typename Record>
void ReadColumns(Row& row, int first, Record& record) {
  int column = first;
  ForEachKey<Record>([&](const auto& key) {
    using Member = MemberOf<decltype(key)>;
    using Value = typename OptionalValue<Member>::type;
    auto& member = record.*key.member;
    const int c = column++;
    if constexpr (OptionalValue<Member>::kOptional) {
      if (row.IsNull(c)) {
        member.reset();
        return;
      }
    }
    if constexpr (std::is_same_v<Value, uint32_t>) {
      member = row.Uint32(c);
    } else if constexpr (std::is_same_v<Value, uint64_t>) {
      member = row.Uint(c);
    } else if constexpr (std::is_same_v<Value, bool>) {
      member = row.Uint(c) != 0;
    } else if constexpr (std::is_same_v<Value, double>) {
      member = row.OptionalDouble(c).value_or(std::numeric_limits<double>::quiet_NaN());
    } else if constexpr (std::is_same_v<Value, std::string>) {
      member = row.Text(c);
    } else {
      static_assert(std::is_same_v<Value, Category>, "a key type the SQLite reader does not know");
      member = static_cast<Category>(row.Index(c, kNumCategories, "category"));
    }
  });
}

// "SELECT <before>Record's columns<after> FROM <rest>".
template <typename Record>
std::string SelectSql(std::string_view before, std::string_view after, std::string_view rest) {
  return fmt::format("SELECT {}{}{} FROM {}", before, sqlite::ColumnNames<Record>(), after, rest);
}

// Fails the row unless the vertex type `record` names (its vertex_type
// column, Record's columns starting at `first`) exists.
template <typename Record>
void CheckVertexType(Row& row, int first, const Record& record, size_t num_types) {
  if (record.type < num_types) return;
  row.Fail(first + sqlite::ColumnIndex<Record>("vertex_type"),
           fmt::format("vertex type {} does not exist (there are {})", record.type, num_types));
}

// Whether two stats are of one unchanged file.
bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

// From this many tiles on, tile_categories (over half of all rows) is read on
// a second connection and thread while this one reads the other per-tile
// tables: SQLite's stepping through rows is most of the reading time.
constexpr size_t kTilesForSecondReader = 4096;

class Reader {
 public:
  explicit Reader(Connection& db, const ProfileReadOptions& options = {})
      : db_(db), options_(options) {}
  // `path` and `opened` (its stat before `db` was opened) let the reader
  // open the file a second time; without them it reads on `db` alone.
  Reader(Connection& db, const ProfileReadOptions& options, std::string path,
         const struct stat& opened)
      : db_(db), options_(options), path_(std::move(path)), opened_(opened) {}

  Expected<ReportDocument> Read() {
    std::string format;
    std::optional<uint64_t> major;
    std::optional<uint64_t> minor;
    bool has_compilation = false;
    bool has_execution = false;
    TILEPROF_RETURN_IF_ERROR(ForEach("metadata", "SELECT key, value FROM metadata", [&](Row& row) {
      std::string key = row.Text(0);
      std::string value = row.Text(1);
      auto number = [&]() -> std::optional<uint64_t> {
        uint64_t n = 0;
        for (char c : value) {
          if (c < '0' || c > '9' || n > std::numeric_limits<uint32_t>::max()) return std::nullopt;
          n = n * 10 + static_cast<uint64_t>(c - '0');
        }
        if (value.empty()) return std::nullopt;
        return n;
      };
      if (key == "format") format = value;
      if (key == "version_major") major = number();
      if (key == "version_minor") minor = number();
      if (key == "has_compilation") has_compilation = value == "1";
      if (key == "has_execution") has_execution = value == "1";
    }));
    if (format != kReportFormatName)
      return MakeError("metadata: format is \"{}\", not \"{}\"", format, kReportFormatName);
    if (!major || !minor)
      return Error("metadata: version_major or version_minor missing or malformed");
    if (*major != kFormatVersion.major)
      return MakeError("metadata: unsupported report format version {}.{} (this reader reads {}.x)",
                       *major, *minor, kFormatVersion.major);
    ReportDocument document;
    if (has_compilation) {
      TILEPROF_RETURN_IF_ERROR(Compilation(document.compilation.emplace()));
    }
    if (has_execution) {
      TILEPROF_RETURN_IF_ERROR(Execution(document.execution.emplace()));
    }
    return document;
  }

 private:
  // Runs `sql`, calling f(row) for each result row, and fails with the
  // first conversion error or SQLite error.
  template <typename F>
  Status ForEach(std::string_view table, std::string_view sql, F&& f) {
    TILEPROF_ASSIGN_OR_RETURN(Statement query, db_.Prepare(sql));
    std::optional<Error> error;
    Row row(query.get(), table, error);
    int rc;
    while ((rc = sqlite3_step(query.get())) == SQLITE_ROW) {
      f(row);
      if (error) return *error;
      row.Next();
    }
    if (rc != SQLITE_DONE) return db_.LastError().Within(fmt::format("table {}", table));
    return {};
  }

  // ForEach on a prepared statement with its parameters bound, which is
  // then reset for the next binding.
  template <typename F>
  Status ForEachBound(std::string_view table, Statement& query, F&& f) {
    std::optional<Error> error;
    Row row(query.get(), table, error);
    int rc;
    while ((rc = sqlite3_step(query.get())) == SQLITE_ROW) {
      f(row);
      if (error) break;
      row.Next();
    }
    query.Rewind();
    if (error) return *error;
    if (rc != SQLITE_DONE) return db_.LastError().Within(fmt::format("table {}", table));
    return {};
  }

  // Rows of a table keyed 0, 1, 2, ... in order, so ids are vector indices.
  static void CheckId(Row& row, size_t expected) {
    uint64_t id = row.Uint(0);
    if (id != expected)
      row.Fail(0, fmt::format("id {} out of sequence (expected {})", id, expected));
  }

  // A table of records keyed by their position (the writer's List).
  template <typename Record>
  Status List(std::string_view table, std::vector<Record>& records) {
    TILEPROF_ASSIGN_OR_RETURN(std::vector<std::string> columns, db_.Columns(table));
    return ForEach(table,
                   fmt::format("SELECT id, {} FROM {} ORDER BY id",
                               sqlite::ColumnNames<Record>(columns), table),
                   [&](Row& row) {
                     CheckId(row, records.size());
                     ReadColumns(row, 1, records.emplace_back());
                   });
  }

  // A List whose table may be missing: added after files were written.
  template <typename Record>
  Status OptionalList(std::string_view table, std::vector<Record>& records) {
    TILEPROF_ASSIGN_OR_RETURN(bool present, db_.HasTable(table));
    if (!present) return {};
    return List(table, records);
  }

  // A reference from a row to one of `size` records, or the error naming
  // the table, row and column.
  static Status Reference(std::string_view table, size_t row, std::string_view column,
                          std::string_view what, uint64_t index, size_t size) {
    if (index < size) return {};
    return MakeError("table {}, row {}, column {}: {} {} does not exist", table, row, column, what,
                     index);
  }

  // The tables added in formats 1.1 and 1.2 (each absent from older files: none).
  Status OperationsAndLiveness(CompilationReport& report) {
    TILEPROF_RETURN_IF_ERROR(OptionalList("operations", report.operations));
    TILEPROF_RETURN_IF_ERROR(OptionalList("compute_set_operations", report.compute_set_operations));
    for (size_t i = 0; i < report.compute_set_operations.size(); ++i) {
      const ComputeSetOperation& link = report.compute_set_operations[i];
      TILEPROF_RETURN_IF_ERROR(Reference("compute_set_operations", i, "compute_set", "compute set",
                                         link.compute_set, report.compute_sets.size()));
      TILEPROF_RETURN_IF_ERROR(Reference("compute_set_operations", i, "operation", "operation",
                                         link.operation, report.operations.size()));
    }
    TILEPROF_RETURN_IF_ERROR(OptionalList("liveness_steps", report.liveness));
    for (size_t i = 0; i < report.liveness.size(); ++i) {
      TILEPROF_RETURN_IF_ERROR(Reference("liveness_steps", i, "program", "program",
                                         report.liveness[i].program, report.programs.size()));
    }
    TILEPROF_RETURN_IF_ERROR(OptionalList("liveness_fullest_tiles", report.liveness_fullest_tiles));
    if (!report.liveness_fullest_tiles.empty() &&
        report.liveness_fullest_tiles.size() != report.liveness.size())
      return MakeError("table liveness_fullest_tiles: {} rows for {} liveness steps",
                       report.liveness_fullest_tiles.size(), report.liveness.size());
    TILEPROF_RETURN_IF_ERROR(OptionalList("liveness_by_ipu", report.liveness_by_ipu));
    for (size_t i = 0; i < report.liveness_by_ipu.size(); ++i) {
      TILEPROF_RETURN_IF_ERROR(Reference("liveness_by_ipu", i, "step", "liveness step",
                                         report.liveness_by_ipu[i].step, report.liveness.size()));
    }
    TILEPROF_RETURN_IF_ERROR(OptionalList("operation_tiles", report.operation_tiles));
    for (size_t i = 0; i < report.operation_tiles.size(); ++i) {
      const OperationTiles& run = report.operation_tiles[i];
      TILEPROF_RETURN_IF_ERROR(Reference("operation_tiles", i, "operation", "operation",
                                         run.operation, report.operations.size()));
      if (run.first_tile > run.last_tile)
        return MakeError(
            "table operation_tiles, row {}, column last_tile: {} is before first_tile {}", i,
            run.last_tile, run.first_tile);
    }
    TILEPROF_RETURN_IF_ERROR(OptionalList("always_live_variables", report.always_live_variables));
    TILEPROF_RETURN_IF_ERROR(
        OptionalList("not_always_live_variables", report.not_always_live_variables));
    for (size_t i = 0; i < report.not_always_live_variables.size(); ++i) {
      const LiveVariable& v = report.not_always_live_variables[i];
      TILEPROF_RETURN_IF_ERROR(Reference("not_always_live_variables", i, "last_step",
                                         "liveness step", v.last_step, report.liveness.size()));
      if (v.first_step > v.last_step)
        return MakeError(
            "table not_always_live_variables, row {}, column first_step: first step {} is after "
            "the last, {}",
            i, v.first_step, v.last_step);
    }
    return {};
  }

  Status Compilation(CompilationReport& report) {
    size_t targets = 0;
    constexpr int kTargetColumns = sqlite::NumColumns<Target>();
    TILEPROF_RETURN_IF_ERROR(ForEach(
        "target", SelectSql<Target>("", ", " + sqlite::ColumnNames<Replication>(), "target"),
        [&](Row& row) {
          if (++targets > 1) return row.Fail(0, "more than one target row");
          Target& t = report.target.emplace();
          ReadColumns(row, 0, t);
          if (!row.IsNull(kTargetColumns))
            ReadColumns(row, kTargetColumns, t.replication.emplace());
        }));
    size_t graphs = 0;
    TILEPROF_RETURN_IF_ERROR(ForEach("graph", SelectSql<GraphInfo>("", "", "graph"), [&](Row& row) {
      if (++graphs > 1) return row.Fail(0, "more than one graph row");
      ReadColumns(row, 0, report.graph.emplace());
    }));
    TILEPROF_RETURN_IF_ERROR(List("vertex_types", report.vertex_types));
    size_t num_types = report.vertex_types.size();
    TILEPROF_RETURN_IF_ERROR(List("compute_sets", report.compute_sets));
    TILEPROF_RETURN_IF_ERROR(
        ForEach("compute_set_vertices",
                SelectSql<ComputeSetVertices>(
                    "compute_set, ", "", "compute_set_vertices ORDER BY compute_set, position"),
                [&](Row& row) {
                  size_t set = row.Index(0, report.compute_sets.size(), "compute set");
                  ComputeSetVertices vertices;
                  ReadColumns(row, 1, vertices);
                  CheckVertexType(row, 1, vertices, num_types);
                  report.compute_sets[set].vertices.push_back(vertices);
                }));
    TILEPROF_RETURN_IF_ERROR(List("programs", report.programs));
    TILEPROF_RETURN_IF_ERROR(ForEach(
        "program_children",
        "SELECT program, child FROM program_children ORDER BY program, position", [&](Row& row) {
          size_t program = row.Index(0, report.programs.size(), "program");
          auto child = static_cast<uint32_t>(row.Index(1, report.programs.size(), "program"));
          report.programs[program].children.push_back(child);
        }));
    for (size_t i = 0; i < report.programs.size(); ++i) {
      const std::optional<uint32_t>& set = report.programs[i].compute_set;
      if (set)
        TILEPROF_RETURN_IF_ERROR(Reference("programs", i, "compute_set", "compute set", *set,
                                           report.compute_sets.size()));
    }
    TILEPROF_RETURN_IF_ERROR(OperationsAndLiveness(report));
    TILEPROF_RETURN_IF_ERROR(Tiles(report, num_types));
    if (options_.total) TILEPROF_RETURN_IF_ERROR(Total(report, num_types));
    std::string variables_sql = SelectSql<Variable>("id, ", "", "variables");
    if (!options_.all_tile_detail) {
      // Only the detailed tiles' variables, still in id order (their ids are
      // then not consecutive). The ids are integers we chose, not input.
      std::string in;
      for (uint32_t id : detailed_) in += fmt::format("{}{}", in.empty() ? "" : ",", id);
      variables_sql += fmt::format(" WHERE tile IN ({})", in);
    }
    variables_sql += " ORDER BY id";
    TILEPROF_RETURN_IF_ERROR(ForEach("variables", variables_sql, [&](Row& row) {
      if (options_.all_tile_detail) CheckId(row, report.variables.size());
      ReadColumns(row, 1, report.variables.emplace_back());
    }));
    size_t verbatims = 0;
    std::optional<Error> verbatim_error;
    TILEPROF_RETURN_IF_ERROR(ForEach("verbatim", "SELECT json FROM verbatim", [&](Row& row) {
      if (++verbatims > 1) return row.Fail(0, "more than one verbatim row");
      std::string text = row.Text(0);
      Expected<ReportDocument> holder = ReadJsonReport(text, "verbatim.json");
      if (!holder) return row.Fail(0, holder.error().message());
      if (holder->compilation) report.verbatim = std::move(holder->compilation->verbatim);
    }));
    return {};
  }

  // A second connection to the same unchanged file, or nothing (then the
  // caller reads on its own connection).
  std::unique_ptr<Connection> SecondConnection() {
    if (path_.empty()) return nullptr;
    auto second = std::make_unique<Connection>();
    if (!second->Open(path_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX)) return nullptr;
    // Replaced or rewritten since the first was opened: the two would not
    // read one report.
    struct stat now {};
    if (::stat(path_.c_str(), &now) != 0 || !SameFile(opened_, now)) return nullptr;
    return second;
  }

  Status Tiles(CompilationReport& report, size_t num_types) {
    // Reserved: growing to 94,208 tiles by doubling copies them and touches
    // twice the pages. The count is of rows that exist, so a damaged file
    // cannot make it large.
    TILEPROF_RETURN_IF_ERROR(ForEach("tiles", "SELECT count(*) FROM tiles", [&](Row& row) {
      report.tiles.reserve(static_cast<size_t>(row.Uint(0)));
    }));
    TILEPROF_RETURN_IF_ERROR(
        ForEach("tiles", SelectSql<TileMemory>("", "", "tiles ORDER BY tile"),
                [&](Row& row) { ReadColumns(row, 0, report.tiles.emplace_back()); }));
    // Child rows name tiles by id; ids ascend, so a binary search finds them.
    // The rows come grouped by tile (the tables' keys start with it), so the
    // tile of the row before (`last`), or the one after it, is tried first.
    size_t last = 0;
    auto find = [&](Row& row, int column, size_t& last) -> TileMemory* {
      uint32_t id = row.Uint32(column);
      std::vector<TileMemory>& tiles = report.tiles;
      if (last < tiles.size() && tiles[last].tile == id) return &tiles[last];
      if (last + 1 < tiles.size() && tiles[last + 1].tile == id) return &tiles[++last];
      auto it = std::lower_bound(tiles.begin(), tiles.end(), id,
                                 [](const TileMemory& t, uint32_t v) { return t.tile < v; });
      if (it != tiles.end() && it->tile == id) last = static_cast<size_t>(it - tiles.begin());
      if (it == tiles.end() || it->tile != id) {
        row.Fail(column, fmt::format("tile {} is not in table tiles", id));
        return nullptr;
      }
      return &*it;
    };
    // Each table fills its own members of the tiles, so the two threads
    // never write the same memory.
    auto categories = [&](Reader& reader, size_t& last) {
      return reader.ForEach("tile_categories", "SELECT tile, category, bytes FROM tile_categories",
                            [&](Row& row) {
                              TileMemory* tile = find(row, 0, last);
                              size_t category = row.Index(1, kNumCategories, "category");
                              if (tile) tile->by_category[category] = row.Uint(2);
                            });
    };
    if (!options_.all_tile_detail) {
      TILEPROF_RETURN_IF_ERROR(Regions(find, last));
      return Detail(report, num_types);
    }
    std::unique_ptr<Connection> second;
    if (report.tiles.size() >= kTilesForSecondReader) second = SecondConnection();
    if (!second) {
      TILEPROF_RETURN_IF_ERROR(categories(*this, last));
      return OtherTileTables(num_types, find, last);
    }
    Status categories_read;
    std::thread worker([&] {
      try {
        Reader reader(*second);
        size_t cursor = 0;
        categories_read = categories(reader, cursor);
      } catch (const std::exception& e) {  // allocation failure
        categories_read = Error(e.what());
      }
    });
    Status rest;
    try {
      rest = OtherTileTables(num_types, find, last);
    } catch (...) {
      worker.join();
      throw;
    }
    worker.join();
    // The error the one-connection order (categories first) would give.
    if (!categories_read) return categories_read;
    return rest;
  }

  template <typename Find>
  Status Regions(Find& find, size_t& last) {
    return ForEach("tile_regions", SelectSql<RegionBytes>("tile, region, ", "", "tile_regions"),
                   [&](Row& row) {
                     TileMemory* tile = find(row, 0, last);
                     size_t region = row.Index(1, kNumRegions, "region");
                     RegionBytes bytes;
                     ReadColumns(row, 2, bytes);
                     if (tile) tile->by_region[region] = bytes;
                   });
  }

  // The detail rows of the most used tiles, chosen as the views choose
  // (TopTiles over the regions just read), each found by the tables' keys,
  // which start with the tile.
  Status Detail(CompilationReport& report, size_t num_types) {
    if (options_.detail_top_tiles == 0) return {};
    std::vector<TileMemory*> chosen;
    for (const TileMemory* tile : TopTiles(report.tiles, options_.detail_top_tiles))
      chosen.push_back(&report.tiles[static_cast<size_t>(tile - report.tiles.data())]);
    TILEPROF_ASSIGN_OR_RETURN(
        Statement categories,
        db_.Prepare("SELECT category, bytes FROM tile_categories WHERE tile = ?"));
    TILEPROF_ASSIGN_OR_RETURN(
        Statement vertex_data,
        db_.Prepare("SELECT category, bytes FROM tile_vertex_data WHERE tile = ?"));
    TILEPROF_ASSIGN_OR_RETURN(Statement vertex_types,
                              db_.Prepare(SelectSql<VertexTypeBytes>(
                                  "", "", "tile_vertex_types WHERE tile = ? ORDER BY position")));
    for (TileMemory* tile : chosen) {
      detailed_.push_back(tile->tile);
      categories.Uint(tile->tile);
      TILEPROF_RETURN_IF_ERROR(ForEachBound("tile_categories", categories, [&](Row& row) {
        tile->by_category[row.Index(0, kNumCategories, "category")] = row.Uint(1);
      }));
      vertex_data.Uint(tile->tile);
      TILEPROF_RETURN_IF_ERROR(ForEachBound("tile_vertex_data", vertex_data, [&](Row& row) {
        tile->vertex_data[row.Index(0, kNumVertexDataCategories, "vertex data category")] =
            row.Uint(1);
      }));
      vertex_types.Uint(tile->tile);
      TILEPROF_RETURN_IF_ERROR(ForEachBound("tile_vertex_types", vertex_types, [&](Row& row) {
        VertexTypeBytes type;
        ReadColumns(row, 0, type);
        CheckVertexType(row, 0, type, num_types);
        tile->vertex_types.push_back(type);
      }));
    }
    std::sort(detailed_.begin(), detailed_.end());
    return {};
  }

  // Summarize over the complete tiles equals Summarize over one tile holding
  // their sums (it only adds), so the detail tables are summed in SQL, each
  // by a scan of its (key, bytes) index. Regions come from the tiles read.
  // Files written before those indexes existed get the same sums, slower.
  Status Total(const CompilationReport& report, size_t num_types) {
    TileMemory sum;
    for (const TileMemory& tile : report.tiles) {
      for (size_t r = 0; r < kNumRegions; ++r) {
        sum.by_region[r].excluding_gaps += tile.by_region[r].excluding_gaps;
        sum.by_region[r].including_gaps += tile.by_region[r].including_gaps;
      }
    }
    TILEPROF_RETURN_IF_ERROR(ForEach(
        "tile_categories", "SELECT category, sum(bytes) FROM tile_categories GROUP BY category",
        [&](Row& row) {
          sum.by_category[row.Index(0, kNumCategories, "category")] = row.Uint(1);
        }));
    TILEPROF_RETURN_IF_ERROR(ForEach(
        "tile_vertex_data", "SELECT category, sum(bytes) FROM tile_vertex_data GROUP BY category",
        [&](Row& row) {
          sum.vertex_data[row.Index(0, kNumVertexDataCategories, "vertex data category")] =
              row.Uint(1);
        }));
    TILEPROF_RETURN_IF_ERROR(
        ForEach("tile_vertex_types",
                "SELECT vertex_type, sum(bytes) FROM tile_vertex_types GROUP BY vertex_type",
                [&](Row& row) {
                  auto type = static_cast<uint32_t>(row.Index(0, num_types, "vertex type"));
                  sum.vertex_types.push_back(VertexTypeBytes{type, row.Uint(1)});
                }));
    *options_.total = Summarize(std::span<const TileMemory>(&sum, 1), report.vertex_types);
    return {};
  }

  // The per-tile tables after tile_categories.
  template <typename Find>
  Status OtherTileTables(size_t num_types, Find& find, size_t& last) {
    TILEPROF_RETURN_IF_ERROR(Regions(find, last));
    TILEPROF_RETURN_IF_ERROR(ForEach(
        "tile_vertex_data", "SELECT tile, category, bytes FROM tile_vertex_data", [&](Row& row) {
          TileMemory* tile = find(row, 0, last);
          size_t category = row.Index(1, kNumVertexDataCategories, "vertex data category");
          if (tile) tile->vertex_data[category] = row.Uint(2);
        }));
    return ForEach(
        "tile_vertex_types",
        SelectSql<VertexTypeBytes>("tile, ", "", "tile_vertex_types ORDER BY tile, position"),
        [&](Row& row) {
          TileMemory* tile = find(row, 0, last);
          VertexTypeBytes type;
          ReadColumns(row, 1, type);
          CheckVertexType(row, 1, type, num_types);
          if (tile) tile->vertex_types.push_back(type);
        });
  }

  Status Execution(ExecutionReport& execution) {
    size_t rows = 0;
    std::string averages;
    for (std::string_view column : kAverageColumns) averages += fmt::format(", {}", column);
    constexpr int kColumns = sqlite::NumColumns<ExecutionReport>();
    TILEPROF_RETURN_IF_ERROR(
        ForEach("execution", SelectSql<ExecutionReport>("", averages, "execution"), [&](Row& row) {
          if (++rows > 1) return row.Fail(0, "more than one execution row");
          ReadColumns(row, 0, execution);
          for (size_t i = 0; i < kNumCycleKinds; ++i)
            execution.tile_average_cycles[i] = row.OptionalDouble(kColumns + static_cast<int>(i));
        }));
    if (rows == 0) return Error("table execution: no row, but metadata says there is one");
    TILEPROF_RETURN_IF_ERROR(ForEach(
        "execution_programs", "SELECT id, name FROM execution_programs ORDER BY id", [&](Row& row) {
          CheckId(row, execution.programs.size());
          execution.programs.push_back(row.Text(1));
        }));
    TILEPROF_RETURN_IF_ERROR(List("execution_vertex_types", execution.cycles_by_vertex_type));
    constexpr int kTilesColumn = 1 + sqlite::NumColumns<ExecutionStep>();
    TILEPROF_ASSIGN_OR_RETURN(std::vector<std::string> step_columns,
                              db_.Columns("execution_steps"));
    TILEPROF_RETURN_IF_ERROR(
        ForEach("execution_steps",
                fmt::format("SELECT id, {}, tiles FROM execution_steps ORDER BY id",
                            sqlite::ColumnNames<ExecutionStep>(step_columns)),
                [&](Row& row) {
                  CheckId(row, execution.steps.size());
                  ExecutionStep step;
                  ReadColumns(row, 1, step);
                  uint64_t tiles = row.Uint(kTilesColumn);
                  if (tiles > kMaxStepTiles)
                    return row.Fail(kTilesColumn,
                                    fmt::format("{} tiles is more than {}", tiles, kMaxStepTiles));
                  step.cycles_by_tile.resize(tiles);
                  execution.steps.push_back(std::move(step));
                }));
    TILEPROF_RETURN_IF_ERROR(
        ForEach("step_cycles", "SELECT step, tile, cycles FROM step_cycles", [&](Row& row) {
          size_t step = row.Index(0, execution.steps.size(), "step");
          std::vector<uint64_t>& cycles = execution.steps[step].cycles_by_tile;
          size_t tile = row.Index(1, cycles.size(), "tile");
          if (!cycles.empty()) cycles[tile] = row.Uint(2);
        }));
    // Format 1.2: each tile's cycles split over the run (tile-level profiles).
    return OptionalList("execution_tile_cycles", execution.tile_cycles);
  }

  Connection& db_;
  ProfileReadOptions options_;
  std::string path_;
  struct stat opened_ {};
  std::vector<uint32_t> detailed_;  // ids of the tiles Detail read, ascending
};
}  // namespace

Expected<ReportDocument> ReadProfileDatabase(const std::string& path) {
  return ReadProfileDatabase(path, ProfileReadOptions{});
}

Expected<ReportDocument> ReadProfileDatabase(const std::string& path,
                                             const ProfileReadOptions& options) {
  Connection db;
  struct stat opened {};
  bool stated = ::stat(path.c_str(), &opened) == 0;
  // One connection per reader and thread (`compare` reads two at once), so
  // SQLite's per-call locking is not needed: it cost a sixth of the reading.
  TILEPROF_RETURN_IF_ERROR(db.Open(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX));
  Expected<ReportDocument> document =
      stated ? Reader(db, options, path, opened).Read() : Reader(db, options).Read();
  if (!document) return document.error().Within(path);
  return document;
}

}  // namespace tileprof::report
