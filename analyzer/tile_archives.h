// Per-tile archives (the shape of Poplar's `target.saveArchive`) from a
// report, and the tables `tileprof archive` prints from one.
//
// Layout (elfdump/tile_archive.h kTotalInTextWithBreakdown): member i is
// tile i, `tile<i>.o`; its `.text` holds the tile's total (excluding gaps,
// the report's per-tile figure), so
//   size -A archive.a | grep -e ".text" | awk '{print $2}'
// prints every tile's total in tile order, as Poplar's archives do. The
// breakdown follows as one unlisted section per non-zero category,
// `.tile.<machine name>` (`.tile.variables`, `.tile.vertexCode`, ...), which
// size does not list (its Total stays the tile's total) but `readelf -S`
// and `tileprof archive` show.
#pragma once

#include <string>
#include <vector>

#include "analyzer/output.h"
#include "common/expected.h"
#include "elfdump/tile_archive.h"
#include "reports/report.h"

namespace tileprof::analyzer {

inline constexpr std::string_view kCategorySectionPrefix = ".tile.";

// Errors when the report has no per-tile data (a text report).
Expected<std::vector<elf::TileImage>> TileImagesOf(const report::CompilationReport& report,
                                                   std::string_view report_name);
Status WriteReportArchive(const std::string& path, const report::CompilationReport& report,
                          std::string_view report_name);

// The archive's tiles (member order) with each member's `.text` total and
// its category sections, and the By Tile histogram of the totals. Errors
// name the archive (and member): not an archive, a malformed member, a
// member that is not an ELF object or has no `.text`.
Expected<Output> ArchiveView(const std::string& path);

}  // namespace tileprof::analyzer
