// Writing a ReportDocument as a SQLite profile database; see sqlite_profile.h.
#include "reports/sqlite_profile.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <system_error>
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

// Lookup tables first, then data tables, then indexes: the indexes are
// built once over the inserted rows, which is faster than maintaining them
// row by row. The per-category and per-type indexes carry `bytes` so that a
// whole-report sum (GROUP BY category) reads only the index, in order. A
// record's own columns come from its keys (sqlite_columns.h); ids,
// positions, derived columns and keys are written here.
std::string Schema() {
  using sqlite::ColumnDefinitions;
  return fmt::format(
      R"sql(
CREATE TABLE metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE regions (id INTEGER PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE vertex_data_categories (id INTEGER PRIMARY KEY, name TEXT NOT NULL,
  label TEXT NOT NULL);
CREATE TABLE target ({}, {});
CREATE TABLE graph ({});
CREATE TABLE vertex_types (id INTEGER PRIMARY KEY, {});
CREATE TABLE compute_sets (id INTEGER PRIMARY KEY, {});
CREATE TABLE compute_set_vertices (compute_set INTEGER NOT NULL, position INTEGER NOT NULL,
  {}, PRIMARY KEY (compute_set, position)) WITHOUT ROWID;
CREATE TABLE programs (id INTEGER PRIMARY KEY, {});
CREATE TABLE program_children (program INTEGER NOT NULL, position INTEGER NOT NULL,
  child INTEGER NOT NULL, PRIMARY KEY (program, position)) WITHOUT ROWID;
CREATE TABLE operations (id INTEGER PRIMARY KEY, {});
CREATE TABLE compute_set_operations (id INTEGER PRIMARY KEY, {});
CREATE TABLE liveness_steps (id INTEGER PRIMARY KEY, {});
CREATE TABLE liveness_fullest_tiles (id INTEGER PRIMARY KEY, {});
CREATE TABLE liveness_by_ipu (id INTEGER PRIMARY KEY, {});
CREATE TABLE operation_tiles (id INTEGER PRIMARY KEY, {});
CREATE TABLE always_live_variables (id INTEGER PRIMARY KEY, {});
CREATE TABLE not_always_live_variables (id INTEGER PRIMARY KEY, {});
CREATE TABLE tiles ({}, ipu INTEGER, excluding_gaps INTEGER NOT NULL,
  including_gaps INTEGER NOT NULL, PRIMARY KEY (tile));
CREATE TABLE tile_categories (tile INTEGER NOT NULL, category INTEGER NOT NULL,
  bytes INTEGER NOT NULL, PRIMARY KEY (tile, category)) WITHOUT ROWID;
CREATE TABLE tile_regions (tile INTEGER NOT NULL, region INTEGER NOT NULL,
  {}, PRIMARY KEY (tile, region)) WITHOUT ROWID;
CREATE TABLE tile_vertex_data (tile INTEGER NOT NULL, category INTEGER NOT NULL,
  bytes INTEGER NOT NULL, PRIMARY KEY (tile, category)) WITHOUT ROWID;
CREATE TABLE tile_vertex_types (tile INTEGER NOT NULL, position INTEGER NOT NULL,
  {}, PRIMARY KEY (tile, position)) WITHOUT ROWID;
CREATE TABLE variables (id INTEGER PRIMARY KEY, {});
CREATE TABLE verbatim (json TEXT NOT NULL);
CREATE TABLE execution ({},
  avg_compute_including_idle REAL, avg_compute_excluding_idle REAL, avg_ipu_exchange REAL,
  avg_global_exchange REAL, avg_host_exchange REAL, avg_sync REAL);
CREATE TABLE execution_programs (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE execution_vertex_types (id INTEGER PRIMARY KEY, {});
CREATE TABLE execution_steps (id INTEGER PRIMARY KEY, {}, tiles INTEGER NOT NULL);
CREATE TABLE step_cycles (step INTEGER NOT NULL, tile INTEGER NOT NULL,
  cycles INTEGER NOT NULL, PRIMARY KEY (step, tile)) WITHOUT ROWID;
CREATE TABLE execution_tile_cycles (id INTEGER PRIMARY KEY, {});
)sql",
      ColumnDefinitions<Target>(), ColumnDefinitions<Replication>(/*nullable=*/true),
      ColumnDefinitions<GraphInfo>(), ColumnDefinitions<VertexType>(),
      ColumnDefinitions<ComputeSet>(), ColumnDefinitions<ComputeSetVertices>(),
      ColumnDefinitions<Program>(), ColumnDefinitions<Operation>(),
      ColumnDefinitions<ComputeSetOperation>(), ColumnDefinitions<LivenessStep>(),
      ColumnDefinitions<StepTile>(), ColumnDefinitions<IpuStep>(),
      ColumnDefinitions<OperationTiles>(), ColumnDefinitions<NamedBytes>(),
      ColumnDefinitions<LiveVariable>(), ColumnDefinitions<TileMemory>(),
      ColumnDefinitions<RegionBytes>(), ColumnDefinitions<VertexTypeBytes>(),
      ColumnDefinitions<Variable>(), ColumnDefinitions<ExecutionReport>(),
      ColumnDefinitions<VertexTypeCycles>(), ColumnDefinitions<ExecutionStep>(),
      ColumnDefinitions<TileCycleSplit>());
}

// "INSERT INTO <table> VALUES (?,...)" for `leading` columns before Record's
// and `trailing` after them.
template <typename Record>
std::string InsertSql(std::string_view table, int leading = 0, int trailing = 0) {
  return fmt::format("INSERT INTO {} VALUES ({})", table,
                     sqlite::Parameters(leading + sqlite::NumColumns<Record>() + trailing));
}

constexpr const char* kIndexes = R"sql(
CREATE INDEX tile_categories_by_category ON tile_categories (category, bytes);
CREATE INDEX tile_vertex_data_by_category ON tile_vertex_data (category, bytes);
CREATE INDEX tile_vertex_types_by_type ON tile_vertex_types (vertex_type, bytes);
CREATE INDEX variables_by_tile ON variables (tile);
CREATE INDEX step_cycles_by_tile ON step_cycles (tile);
)sql";

// ---------------------------------------------------------------------------
// Writing.

class Writer {
 public:
  explicit Writer(Connection& db) : db_(db) {}

  Status Write(const ReportDocument& document) {
    TILEPROF_RETURN_IF_ERROR(db_.Exec("PRAGMA journal_mode = OFF; BEGIN"));
    TILEPROF_RETURN_IF_ERROR(db_.Exec(Schema().c_str()));
    TILEPROF_RETURN_IF_ERROR(Metadata(document));
    TILEPROF_RETURN_IF_ERROR(Lookups());
    if (document.compilation) TILEPROF_RETURN_IF_ERROR(Compilation(*document.compilation));
    if (document.execution) TILEPROF_RETURN_IF_ERROR(Execution(*document.execution));
    TILEPROF_RETURN_IF_ERROR(db_.Exec(kIndexes));
    return db_.Exec("COMMIT");
  }

 private:
  Status Done(Statement& statement, std::string_view table) {
    if (!statement.Run()) return db_.LastError().Within(fmt::format("inserting into {}", table));
    return {};
  }

  Status Metadata(const ReportDocument& document) {
    TILEPROF_ASSIGN_OR_RETURN(Statement insert, db_.Prepare("INSERT INTO metadata VALUES (?, ?)"));
    const std::pair<std::string_view, std::string> rows[] = {
        {"format", std::string(kReportFormatName)},
        {"version", fmt::format("{}.{}", kFormatVersion.major, kFormatVersion.minor)},
        {"version_major", fmt::format("{}", kFormatVersion.major)},
        {"version_minor", fmt::format("{}", kFormatVersion.minor)},
        {"has_compilation", document.compilation ? "1" : "0"},
        {"has_execution", document.execution ? "1" : "0"},
    };
    for (const auto& [key, value] : rows) {
      insert.Text(key).Text(value);
      TILEPROF_RETURN_IF_ERROR(Done(insert, "metadata"));
    }
    return {};
  }

  Status Lookups() {
    auto fill = [&](const char* sql, size_t n, auto name, auto label) -> Status {
      TILEPROF_ASSIGN_OR_RETURN(Statement insert, db_.Prepare(sql));
      for (size_t i = 0; i < n; ++i) {
        insert.Uint(i).Text(name(i)).Text(label(i));
        TILEPROF_RETURN_IF_ERROR(Done(insert, "lookup tables"));
      }
      return {};
    };
    TILEPROF_RETURN_IF_ERROR(fill(
        "INSERT INTO categories VALUES (?, ?, ?)", kNumCategories,
        [](size_t i) { return CategoryMachineName(static_cast<Category>(i)); },
        [](size_t i) { return CategoryLabel(static_cast<Category>(i)); }));
    TILEPROF_RETURN_IF_ERROR(fill(
        "INSERT INTO regions VALUES (?, ?, ?)", kNumRegions,
        [](size_t i) { return schema::RegionName(static_cast<Region>(i)); },
        [](size_t i) { return RegionLabel(static_cast<Region>(i)); }));
    return fill(
        "INSERT INTO vertex_data_categories VALUES (?, ?, ?)", kNumVertexDataCategories,
        [](size_t i) { return schema::VertexDataCategoryName(static_cast<VertexDataCategory>(i)); },
        [](size_t i) { return VertexDataCategoryLabel(static_cast<VertexDataCategory>(i)); });
  }

  Status Compilation(const CompilationReport& report) {
    if (report.target) {
      const Target& t = *report.target;
      TILEPROF_ASSIGN_OR_RETURN(
          Statement insert,
          db_.Prepare(InsertSql<Target>("target", 0, sqlite::NumColumns<Replication>())));
      sqlite::BindColumns(insert, &t);
      sqlite::BindColumns(insert, t.replication ? &*t.replication : nullptr);
      TILEPROF_RETURN_IF_ERROR(Done(insert, "target"));
    }
    if (report.graph) {
      TILEPROF_ASSIGN_OR_RETURN(Statement insert, db_.Prepare(InsertSql<GraphInfo>("graph")));
      sqlite::BindColumns(insert, &*report.graph);
      TILEPROF_RETURN_IF_ERROR(Done(insert, "graph"));
    }
    TILEPROF_RETURN_IF_ERROR(List("vertex_types", report.vertex_types));
    TILEPROF_RETURN_IF_ERROR(ComputeSets(report));
    TILEPROF_RETURN_IF_ERROR(Programs(report));
    TILEPROF_RETURN_IF_ERROR(List("operations", report.operations));
    TILEPROF_RETURN_IF_ERROR(List("compute_set_operations", report.compute_set_operations));
    TILEPROF_RETURN_IF_ERROR(List("liveness_steps", report.liveness));
    TILEPROF_RETURN_IF_ERROR(List("liveness_fullest_tiles", report.liveness_fullest_tiles));
    TILEPROF_RETURN_IF_ERROR(List("liveness_by_ipu", report.liveness_by_ipu));
    TILEPROF_RETURN_IF_ERROR(List("operation_tiles", report.operation_tiles));
    TILEPROF_RETURN_IF_ERROR(List("always_live_variables", report.always_live_variables));
    TILEPROF_RETURN_IF_ERROR(List("not_always_live_variables", report.not_always_live_variables));
    TILEPROF_RETURN_IF_ERROR(Tiles(report));
    TILEPROF_RETURN_IF_ERROR(List("variables", report.variables));
    if (report.verbatim != VerbatimMemory{}) {
      ReportDocument holder;
      holder.compilation.emplace().verbatim = report.verbatim;
      TILEPROF_ASSIGN_OR_RETURN(Statement insert, db_.Prepare("INSERT INTO verbatim VALUES (?)"));
      insert.Text(WriteJsonReport(holder));
      TILEPROF_RETURN_IF_ERROR(Done(insert, "verbatim"));
    }
    return {};
  }

  // One row per record, its id (the position) first.
  template <typename Record>
  Status List(std::string_view table, const std::vector<Record>& records) {
    TILEPROF_ASSIGN_OR_RETURN(Statement insert, db_.Prepare(InsertSql<Record>(table, 1)));
    for (size_t i = 0; i < records.size(); ++i) {
      insert.Uint(i);
      sqlite::BindColumns(insert, &records[i]);
      TILEPROF_RETURN_IF_ERROR(Done(insert, table));
    }
    return {};
  }

  Status ComputeSets(const CompilationReport& report) {
    TILEPROF_RETURN_IF_ERROR(List("compute_sets", report.compute_sets));
    TILEPROF_ASSIGN_OR_RETURN(
        Statement vertices, db_.Prepare(InsertSql<ComputeSetVertices>("compute_set_vertices", 2)));
    for (size_t i = 0; i < report.compute_sets.size(); ++i) {
      const ComputeSet& set = report.compute_sets[i];
      for (size_t j = 0; j < set.vertices.size(); ++j) {
        vertices.Uint(i).Uint(j);
        sqlite::BindColumns(vertices, &set.vertices[j]);
        TILEPROF_RETURN_IF_ERROR(Done(vertices, "compute_set_vertices"));
      }
    }
    return {};
  }

  Status Programs(const CompilationReport& report) {
    TILEPROF_RETURN_IF_ERROR(List("programs", report.programs));
    TILEPROF_ASSIGN_OR_RETURN(Statement children,
                              db_.Prepare("INSERT INTO program_children VALUES (?,?,?)"));
    for (size_t i = 0; i < report.programs.size(); ++i) {
      const Program& program = report.programs[i];
      for (size_t j = 0; j < program.children.size(); ++j) {
        children.Uint(i).Uint(j).Uint(program.children[j]);
        TILEPROF_RETURN_IF_ERROR(Done(children, "program_children"));
      }
    }
    return {};
  }

  Status Tiles(const CompilationReport& report) {
    TILEPROF_ASSIGN_OR_RETURN(Statement tiles, db_.Prepare(InsertSql<TileMemory>("tiles", 0, 3)));
    TILEPROF_ASSIGN_OR_RETURN(Statement categories,
                              db_.Prepare("INSERT INTO tile_categories VALUES (?,?,?)"));
    TILEPROF_ASSIGN_OR_RETURN(Statement regions,
                              db_.Prepare(InsertSql<RegionBytes>("tile_regions", 2)));
    TILEPROF_ASSIGN_OR_RETURN(Statement vertex_data,
                              db_.Prepare("INSERT INTO tile_vertex_data VALUES (?,?,?)"));
    TILEPROF_ASSIGN_OR_RETURN(Statement vertex_types,
                              db_.Prepare(InsertSql<VertexTypeBytes>("tile_vertex_types", 2)));
    uint64_t tiles_per_ipu = report.target ? report.target->tiles_per_ipu : 0;
    for (const TileMemory& tile : report.tiles) {
      std::optional<uint64_t> ipu;
      if (tiles_per_ipu > 0) ipu = tile.tile / tiles_per_ipu;
      sqlite::BindColumns(tiles, &tile);
      tiles.OptionalUint(ipu).Uint(tile.ExcludingGaps()).Uint(tile.IncludingGaps());
      TILEPROF_RETURN_IF_ERROR(Done(tiles, "tiles"));
      for (size_t i = 0; i < kNumCategories; ++i) {
        if (tile.by_category[i] == 0) continue;
        categories.Uint(tile.tile).Uint(i).Uint(tile.by_category[i]);
        TILEPROF_RETURN_IF_ERROR(Done(categories, "tile_categories"));
      }
      for (size_t i = 0; i < kNumRegions; ++i) {
        const RegionBytes& region = tile.by_region[i];
        if (region == RegionBytes{}) continue;
        regions.Uint(tile.tile).Uint(i);
        sqlite::BindColumns(regions, &region);
        TILEPROF_RETURN_IF_ERROR(Done(regions, "tile_regions"));
      }
      for (size_t i = 0; i < kNumVertexDataCategories; ++i) {
        if (tile.vertex_data[i] == 0) continue;
        vertex_data.Uint(tile.tile).Uint(i).Uint(tile.vertex_data[i]);
        TILEPROF_RETURN_IF_ERROR(Done(vertex_data, "tile_vertex_data"));
      }
      for (size_t i = 0; i < tile.vertex_types.size(); ++i) {
        vertex_types.Uint(tile.tile).Uint(i);
        sqlite::BindColumns(vertex_types, &tile.vertex_types[i]);
        TILEPROF_RETURN_IF_ERROR(Done(vertex_types, "tile_vertex_types"));
      }
    }
    return {};
  }

  Status Execution(const ExecutionReport& execution) {
    {
      TILEPROF_ASSIGN_OR_RETURN(Statement insert, db_.Prepare(InsertSql<ExecutionReport>(
                                                      "execution", 0, kNumCycleKinds)));
      sqlite::BindColumns(insert, &execution);
      for (const std::optional<double>& average : execution.tile_average_cycles)
        insert.Double(average);
      TILEPROF_RETURN_IF_ERROR(Done(insert, "execution"));
    }
    {
      TILEPROF_ASSIGN_OR_RETURN(Statement insert,
                                db_.Prepare("INSERT INTO execution_programs VALUES (?,?)"));
      for (size_t i = 0; i < execution.programs.size(); ++i) {
        insert.Uint(i).Text(execution.programs[i]);
        TILEPROF_RETURN_IF_ERROR(Done(insert, "execution_programs"));
      }
    }
    TILEPROF_RETURN_IF_ERROR(List("execution_vertex_types", execution.cycles_by_vertex_type));
    TILEPROF_ASSIGN_OR_RETURN(Statement steps,
                              db_.Prepare(InsertSql<ExecutionStep>("execution_steps", 1, 1)));
    TILEPROF_ASSIGN_OR_RETURN(Statement cycles,
                              db_.Prepare("INSERT INTO step_cycles VALUES (?,?,?)"));
    for (size_t i = 0; i < execution.steps.size(); ++i) {
      const ExecutionStep& step = execution.steps[i];
      steps.Uint(i);
      sqlite::BindColumns(steps, &step);
      steps.Uint(step.cycles_by_tile.size());
      TILEPROF_RETURN_IF_ERROR(Done(steps, "execution_steps"));
      for (size_t tile = 0; tile < step.cycles_by_tile.size(); ++tile) {
        if (step.cycles_by_tile[tile] == 0) continue;
        cycles.Uint(i).Uint(tile).Uint(step.cycles_by_tile[tile]);
        TILEPROF_RETURN_IF_ERROR(Done(cycles, "step_cycles"));
      }
    }
    return List("execution_tile_cycles", execution.tile_cycles);
  }

  Connection& db_;
};

Status CheckTileOrder(const ReportDocument& document) {
  if (!document.compilation) return {};
  const std::vector<TileMemory>& tiles = document.compilation->tiles;
  for (size_t i = 1; i < tiles.size(); ++i)
    if (tiles[i].tile <= tiles[i - 1].tile)
      return MakeError(
          "tile ids must ascend (the database keys tiles by id): tiles[{}] is tile {} after tile "
          "{}",
          i, tiles[i].tile, tiles[i - 1].tile);
  return {};
}

}  // namespace

Status WriteProfileDatabase(const std::string& path, const ReportDocument& document) {
  if (Status order = CheckTileOrder(document); !order) return order.error().Within(path);
  std::string temp = fmt::format("{}.tmp-{}", path, ::getpid());
  std::error_code ignored;
  std::filesystem::remove(temp, ignored);  // left by a crashed writer with our pid
  Status written = [&]() -> Status {
    Connection db;
    TILEPROF_RETURN_IF_ERROR(db.Open(temp, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE));
    TILEPROF_RETURN_IF_ERROR(Writer(db).Write(document));
    if (!db.Close()) return Error("cannot close the database");
    return {};
  }();
  if (!written) {
    std::filesystem::remove(temp, ignored);
    return written.error().Within(path);
  }
  std::error_code error;
  std::filesystem::rename(temp, path, error);
  if (error) {
    std::filesystem::remove(temp, ignored);
    return MakeError("cannot rename '{}' onto '{}': {}", temp, path, error.message());
  }
  return {};
}

}  // namespace tileprof::report
