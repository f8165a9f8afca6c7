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
#include "reports/sqlite_db.h"

namespace tileprof::report {
namespace {

using sqlite::Connection;
using sqlite::Statement;

// Lookup tables first, then data tables, then indexes: the indexes are
// built once over the inserted rows, which is faster than maintaining them
// row by row. The per-category and per-type indexes carry `bytes` so that a
// whole-report sum (GROUP BY category) reads only the index, in order.
constexpr const char* kSchema = R"sql(
CREATE TABLE metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE regions (id INTEGER PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE vertex_data_categories (id INTEGER PRIMARY KEY, name TEXT NOT NULL,
  label TEXT NOT NULL);
CREATE TABLE target (arch TEXT NOT NULL, num_ipus INTEGER NOT NULL,
  tiles_per_ipu INTEGER NOT NULL, total_tiles INTEGER NOT NULL,
  bytes_per_tile INTEGER NOT NULL, total_memory INTEGER NOT NULL, clock_hz REAL,
  sizes_rounded INTEGER NOT NULL, num_replicas INTEGER, ipus_per_replica INTEGER,
  tiles_per_replica INTEGER, memory_per_replica INTEGER);
CREATE TABLE graph (num_vertices INTEGER NOT NULL, num_edges INTEGER NOT NULL,
  num_variables INTEGER NOT NULL, num_compute_sets INTEGER NOT NULL);
CREATE TABLE vertex_types (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE compute_sets (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE compute_set_vertices (compute_set INTEGER NOT NULL, position INTEGER NOT NULL,
  vertex_type INTEGER NOT NULL, count INTEGER NOT NULL,
  PRIMARY KEY (compute_set, position)) WITHOUT ROWID;
CREATE TABLE programs (id INTEGER PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL,
  compute_set INTEGER);
CREATE TABLE program_children (program INTEGER NOT NULL, position INTEGER NOT NULL,
  child INTEGER NOT NULL, PRIMARY KEY (program, position)) WITHOUT ROWID;
CREATE TABLE tiles (tile INTEGER PRIMARY KEY, ipu INTEGER, excluding_gaps INTEGER NOT NULL,
  including_gaps INTEGER NOT NULL, always_live INTEGER NOT NULL,
  not_always_live INTEGER NOT NULL);
CREATE TABLE tile_categories (tile INTEGER NOT NULL, category INTEGER NOT NULL,
  bytes INTEGER NOT NULL, PRIMARY KEY (tile, category)) WITHOUT ROWID;
CREATE TABLE tile_regions (tile INTEGER NOT NULL, region INTEGER NOT NULL,
  excluding_gaps INTEGER NOT NULL, including_gaps INTEGER NOT NULL,
  PRIMARY KEY (tile, region)) WITHOUT ROWID;
CREATE TABLE tile_vertex_data (tile INTEGER NOT NULL, category INTEGER NOT NULL,
  bytes INTEGER NOT NULL, PRIMARY KEY (tile, category)) WITHOUT ROWID;
CREATE TABLE tile_vertex_types (tile INTEGER NOT NULL, position INTEGER NOT NULL,
  vertex_type INTEGER NOT NULL, bytes INTEGER NOT NULL,
  PRIMARY KEY (tile, position)) WITHOUT ROWID;
CREATE TABLE variables (id INTEGER PRIMARY KEY, name TEXT NOT NULL, tile INTEGER NOT NULL,
  bytes INTEGER NOT NULL, category INTEGER NOT NULL, always_live INTEGER NOT NULL,
  address INTEGER);
CREATE TABLE verbatim (json TEXT NOT NULL);
CREATE TABLE execution (total_cycles INTEGER NOT NULL, clock_hz REAL,
  avg_compute_including_idle REAL, avg_compute_excluding_idle REAL, avg_ipu_exchange REAL,
  avg_global_exchange REAL, avg_host_exchange REAL, avg_sync REAL);
CREATE TABLE execution_programs (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE execution_vertex_types (id INTEGER PRIMARY KEY, name TEXT NOT NULL,
  instances INTEGER NOT NULL, cycles INTEGER NOT NULL);
CREATE TABLE execution_steps (id INTEGER PRIMARY KEY, program TEXT NOT NULL,
  cycles INTEGER NOT NULL, tiles INTEGER NOT NULL);
CREATE TABLE step_cycles (step INTEGER NOT NULL, tile INTEGER NOT NULL,
  cycles INTEGER NOT NULL, PRIMARY KEY (step, tile)) WITHOUT ROWID;
)sql";

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
    TILEPROF_RETURN_IF_ERROR(db_.Exec(kSchema));
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
      TILEPROF_ASSIGN_OR_RETURN(Statement insert,
                                db_.Prepare("INSERT INTO target VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"));
      insert.Text(t.arch).Uint(t.num_ipus).Uint(t.tiles_per_ipu).Uint(t.total_tiles);
      insert.Uint(t.bytes_per_tile).Uint(t.total_memory).Double(t.clock_hz).Uint(t.sizes_rounded);
      if (t.replication) {
        insert.Uint(t.replication->num_replicas).Uint(t.replication->ipus_per_replica);
        insert.Uint(t.replication->tiles_per_replica).Uint(t.replication->memory_per_replica);
      } else {
        insert.OptionalUint({}).OptionalUint({}).OptionalUint({}).OptionalUint({});
      }
      TILEPROF_RETURN_IF_ERROR(Done(insert, "target"));
    }
    if (report.graph) {
      const GraphInfo& g = *report.graph;
      TILEPROF_ASSIGN_OR_RETURN(Statement insert,
                                db_.Prepare("INSERT INTO graph VALUES (?,?,?,?)"));
      insert.Uint(g.num_vertices).Uint(g.num_edges).Uint(g.num_variables).Uint(g.num_compute_sets);
      TILEPROF_RETURN_IF_ERROR(Done(insert, "graph"));
    }
    {
      TILEPROF_ASSIGN_OR_RETURN(Statement insert,
                                db_.Prepare("INSERT INTO vertex_types VALUES (?,?)"));
      for (size_t i = 0; i < report.vertex_types.size(); ++i) {
        insert.Uint(i).Text(report.vertex_types[i].name);
        TILEPROF_RETURN_IF_ERROR(Done(insert, "vertex_types"));
      }
    }
    TILEPROF_RETURN_IF_ERROR(ComputeSets(report));
    TILEPROF_RETURN_IF_ERROR(Programs(report));
    TILEPROF_RETURN_IF_ERROR(Tiles(report));
    {
      TILEPROF_ASSIGN_OR_RETURN(Statement insert,
                                db_.Prepare("INSERT INTO variables VALUES (?,?,?,?,?,?,?)"));
      for (size_t i = 0; i < report.variables.size(); ++i) {
        const Variable& v = report.variables[i];
        insert.Uint(i).Text(v.name).Uint(v.tile).Uint(v.bytes);
        insert.Uint(static_cast<uint64_t>(v.category)).Uint(v.always_live).OptionalUint(v.offset);
        TILEPROF_RETURN_IF_ERROR(Done(insert, "variables"));
      }
    }
    if (report.verbatim != VerbatimMemory{}) {
      ReportDocument holder;
      holder.compilation.emplace().verbatim = report.verbatim;
      TILEPROF_ASSIGN_OR_RETURN(Statement insert, db_.Prepare("INSERT INTO verbatim VALUES (?)"));
      insert.Text(WriteJsonReport(holder));
      TILEPROF_RETURN_IF_ERROR(Done(insert, "verbatim"));
    }
    return {};
  }

  Status ComputeSets(const CompilationReport& report) {
    TILEPROF_ASSIGN_OR_RETURN(Statement sets, db_.Prepare("INSERT INTO compute_sets VALUES (?,?)"));
    TILEPROF_ASSIGN_OR_RETURN(Statement vertices,
                              db_.Prepare("INSERT INTO compute_set_vertices VALUES (?,?,?,?)"));
    for (size_t i = 0; i < report.compute_sets.size(); ++i) {
      const ComputeSet& set = report.compute_sets[i];
      sets.Uint(i).Text(set.name);
      TILEPROF_RETURN_IF_ERROR(Done(sets, "compute_sets"));
      for (size_t j = 0; j < set.vertices.size(); ++j) {
        vertices.Uint(i).Uint(j).Uint(set.vertices[j].type).Uint(set.vertices[j].count);
        TILEPROF_RETURN_IF_ERROR(Done(vertices, "compute_set_vertices"));
      }
    }
    return {};
  }

  Status Programs(const CompilationReport& report) {
    TILEPROF_ASSIGN_OR_RETURN(Statement programs,
                              db_.Prepare("INSERT INTO programs VALUES (?,?,?,?)"));
    TILEPROF_ASSIGN_OR_RETURN(Statement children,
                              db_.Prepare("INSERT INTO program_children VALUES (?,?,?)"));
    for (size_t i = 0; i < report.programs.size(); ++i) {
      const Program& program = report.programs[i];
      programs.Uint(i).Text(program.name).Text(program.kind).OptionalUint(program.compute_set);
      TILEPROF_RETURN_IF_ERROR(Done(programs, "programs"));
      for (size_t j = 0; j < program.children.size(); ++j) {
        children.Uint(i).Uint(j).Uint(program.children[j]);
        TILEPROF_RETURN_IF_ERROR(Done(children, "program_children"));
      }
    }
    return {};
  }

  Status Tiles(const CompilationReport& report) {
    TILEPROF_ASSIGN_OR_RETURN(Statement tiles,
                              db_.Prepare("INSERT INTO tiles VALUES (?,?,?,?,?,?)"));
    TILEPROF_ASSIGN_OR_RETURN(Statement categories,
                              db_.Prepare("INSERT INTO tile_categories VALUES (?,?,?)"));
    TILEPROF_ASSIGN_OR_RETURN(Statement regions,
                              db_.Prepare("INSERT INTO tile_regions VALUES (?,?,?,?)"));
    TILEPROF_ASSIGN_OR_RETURN(Statement vertex_data,
                              db_.Prepare("INSERT INTO tile_vertex_data VALUES (?,?,?)"));
    TILEPROF_ASSIGN_OR_RETURN(Statement vertex_types,
                              db_.Prepare("INSERT INTO tile_vertex_types VALUES (?,?,?,?)"));
    uint64_t tiles_per_ipu = report.target ? report.target->tiles_per_ipu : 0;
    for (const TileMemory& tile : report.tiles) {
      std::optional<uint64_t> ipu;
      if (tiles_per_ipu > 0) ipu = tile.tile / tiles_per_ipu;
      tiles.Uint(tile.tile).OptionalUint(ipu).Uint(tile.ExcludingGaps()).Uint(tile.IncludingGaps());
      tiles.Uint(tile.always_live).Uint(tile.not_always_live);
      TILEPROF_RETURN_IF_ERROR(Done(tiles, "tiles"));
      for (size_t i = 0; i < kNumCategories; ++i) {
        if (tile.by_category[i] == 0) continue;
        categories.Uint(tile.tile).Uint(i).Uint(tile.by_category[i]);
        TILEPROF_RETURN_IF_ERROR(Done(categories, "tile_categories"));
      }
      for (size_t i = 0; i < kNumRegions; ++i) {
        const RegionBytes& region = tile.by_region[i];
        if (region == RegionBytes{}) continue;
        regions.Uint(tile.tile).Uint(i).Uint(region.excluding_gaps).Uint(region.including_gaps);
        TILEPROF_RETURN_IF_ERROR(Done(regions, "tile_regions"));
      }
      for (size_t i = 0; i < kNumVertexDataCategories; ++i) {
        if (tile.vertex_data[i] == 0) continue;
        vertex_data.Uint(tile.tile).Uint(i).Uint(tile.vertex_data[i]);
        TILEPROF_RETURN_IF_ERROR(Done(vertex_data, "tile_vertex_data"));
      }
      for (size_t i = 0; i < tile.vertex_types.size(); ++i) {
        vertex_types.Uint(tile.tile).Uint(i).Uint(tile.vertex_types[i].type);
        vertex_types.Uint(tile.vertex_types[i].bytes);
        TILEPROF_RETURN_IF_ERROR(Done(vertex_types, "tile_vertex_types"));
      }
    }
    return {};
  }

  Status Execution(const ExecutionReport& execution) {
    {
      TILEPROF_ASSIGN_OR_RETURN(Statement insert,
                                db_.Prepare("INSERT INTO execution VALUES (?,?,?,?,?,?,?,?)"));
      insert.Uint(execution.total_cycles).Double(execution.clock_hz);
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
    {
      TILEPROF_ASSIGN_OR_RETURN(Statement insert,
                                db_.Prepare("INSERT INTO execution_vertex_types VALUES (?,?,?,?)"));
      for (size_t i = 0; i < execution.cycles_by_vertex_type.size(); ++i) {
        const VertexTypeCycles& type = execution.cycles_by_vertex_type[i];
        insert.Uint(i).Text(type.name).Uint(type.instances).Uint(type.cycles);
        TILEPROF_RETURN_IF_ERROR(Done(insert, "execution_vertex_types"));
      }
    }
    TILEPROF_ASSIGN_OR_RETURN(Statement steps,
                              db_.Prepare("INSERT INTO execution_steps VALUES (?,?,?,?)"));
    TILEPROF_ASSIGN_OR_RETURN(Statement cycles,
                              db_.Prepare("INSERT INTO step_cycles VALUES (?,?,?)"));
    for (size_t i = 0; i < execution.steps.size(); ++i) {
      const ExecutionStep& step = execution.steps[i];
      steps.Uint(i).Text(step.program).Uint(step.cycles).Uint(step.cycles_by_tile.size());
      TILEPROF_RETURN_IF_ERROR(Done(steps, "execution_steps"));
      for (size_t tile = 0; tile < step.cycles_by_tile.size(); ++tile) {
        if (step.cycles_by_tile[tile] == 0) continue;
        cycles.Uint(i).Uint(tile).Uint(step.cycles_by_tile[tile]);
        TILEPROF_RETURN_IF_ERROR(Done(cycles, "step_cycles"));
      }
    }
    return {};
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
