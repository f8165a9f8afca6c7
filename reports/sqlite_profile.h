// The SQLite profile database (`profile.db`): the "parse once, query many"
// form of a report. Tables, columns and example queries are in
// docs/report-schema.md. Category, region and vertex-data-category columns
// hold small integer ids described by the lookup tables `categories`,
// `regions` and `vertex_data_categories`; per-tile rows are stored only when
// non-zero. Integers are SQLite's signed 64 bits: a count of 2^63 or more
// (never produced by a real report) is stored as its two's complement and
// reads back unchanged. NaN doubles are stored as NULL (SQLite has no NaN):
// a NaN clock reads back as NaN, a NaN tile average as unknown.
//
// The figures a text report printed (CompilationReport::verbatim) are kept
// in table `verbatim` as a JSON report (json_codec.h) whose compilation holds
// only them, queryable with json_extract.
#pragma once

#include <string>

#include "common/expected.h"
#include "reports/report.h"
#include "reports/report_document.h"

namespace tileprof::report {

// Writes every table in one transaction into "<path>.tmp-<pid>" and renames
// it over `path`, so readers see the old database or the complete new one.
// Tiles are keyed by id: fails when tile ids do not ascend strictly.
Status WriteProfileDatabase(const std::string& path, const ReportDocument& document);

// Reconstructs the structs. Fails naming the table, row and column of a
// value that does not fit its field, and rejects an unknown major version.
Expected<ReportDocument> ReadProfileDatabase(const std::string& path);

// What a command needs of a profile, so that it reads a fraction of a large
// one: the per-tile detail tables hold most of its rows (23 categories a
// tile), and a command shows that detail for a handful of tiles at most.
struct ProfileReadOptions {
  // false: every tile still has its tile id, regions (so ExcludingGaps and
  // IncludingGaps), always_live and not_always_live, but its categories,
  // vertex data and vertex types are zero/empty unless it is one of the
  // `detail_top_tiles` most used (report::TopTiles, the same choice the
  // views make); variables are read only for those tiles (in id order).
  bool all_tile_detail = true;
  size_t detail_top_tiles = 0;
  // Fill `*total` with what report::Summarize would give over the complete
  // tiles, aggregated in SQL (the detail tables are not stepped through row
  // by row). Left empty when the report has no compilation part.
  std::optional<MemoryUsage>* total = nullptr;
};

// As above, with the parts `options` leaves out not read. Values in rows
// that are not read are not checked.
Expected<ReportDocument> ReadProfileDatabase(const std::string& path,
                                             const ProfileReadOptions& options);

}  // namespace tileprof::report
