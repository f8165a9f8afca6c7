// One way to open any report: the text report (`.rep`, ours or one Poplar
// printed), JSON, CBOR or the SQLite profile database. The format is told by
// the content, never the extension alone, so a `profile.db` renamed to
// `report.json` still opens: SQLite's 16-byte header, CBOR's self-describing
// tag (d9 d9 f7) or a leading map, a `{` after optional BOM and blanks for
// JSON; anything else is read as text. Every error starts with the path.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "common/expected.h"
#include "reports/report.h"
#include "reports/report_document.h"
#include "reports/stats.h"

namespace tileprof::analyzer {

enum class ReportFormat { kText, kJson, kCbor, kSqlite };
std::string_view ReportFormatName(ReportFormat format);  // "text", "json", "cbor", "sqlite"

// Decides from the first bytes of a file (any length; 16 suffice).
ReportFormat SniffReportFormat(std::span<const uint8_t> head);

// What a command needs of a report. A SQLite profile is then read only in
// part (reports/sqlite_profile.h ProfileReadOptions); the other formats are
// streams, read whole whatever is asked.
struct OpenOptions {
  // false: tiles carry their regions and live bytes, and only the
  // `detail_top_tiles` most used (report::TopTiles) also their categories,
  // vertex data, vertex types and variables. A view may then look at the
  // detail of no other tile, and must take whole-report sums from Total().
  bool all_tile_detail = true;
  size_t detail_top_tiles = 0;
  bool total = false;  // fill LoadedReport::total when the reader can sum cheaply
  // An execution-only document (no memory figures) is accepted: for the
  // views of the Execution section.
  bool execution_only = false;
};

// Everything, as every view may need.
inline constexpr OpenOptions kWholeReport{};
// Per-tile totals, full detail of the `n` most used tiles, whole-report sums.
constexpr OpenOptions TotalsAndTopTiles(size_t n, bool total = false) {
  return OpenOptions{false, n, total, false};
}
// What the execution views need: no tile detail; execution-only documents.
inline constexpr OpenOptions kExecutionNeeds{false, 0, false, true};

struct LoadedReport {
  std::string path;
  ReportFormat format = ReportFormat::kText;
  report::CompilationReport compilation;
  std::optional<report::ExecutionReport> execution;
  report::Stats stats;  // survivable oddities the text reader counted
  // The whole-report block (report::Summarize of the complete tiles) when a
  // reader summed it for a partial read; else empty.
  std::optional<report::MemoryUsage> total;

  // Per-tile data (JSON, CBOR, SQLite of a compiled report) rather than only
  // the figures a text report printed.
  bool HasTiles() const { return !compilation.tiles.empty(); }
};

// Errors: "<path>: <strerror>", "<path>: empty file", the readers' own
// messages (which name the file, line, byte or table), and "<path>: the
// report has no compilation part" for an execution-only document unless
// OpenOptions::execution_only.
Expected<LoadedReport> OpenReport(const std::string& path,
                                  const OpenOptions& options = kWholeReport);

// The whole-report block: LoadedReport::total when read, else
// report::ResolveTotal (derived from the tiles, or the printed figures).
std::optional<report::MemoryUsage> Total(const LoadedReport& report);

}  // namespace tileprof::analyzer
