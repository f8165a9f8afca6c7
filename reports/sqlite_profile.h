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
#include "reports/report_document.h"

namespace tileprof::report {

// Writes every table in one transaction into "<path>.tmp-<pid>" and renames
// it over `path`, so readers see the old database or the complete new one.
// Tiles are keyed by id: fails when tile ids do not ascend strictly.
Status WriteProfileDatabase(const std::string& path, const ReportDocument& document);

// Reconstructs the structs. Fails naming the table, row and column of a
// value that does not fit its field, and rejects an unknown major version.
Expected<ReportDocument> ReadProfileDatabase(const std::string& path);

}  // namespace tileprof::report
