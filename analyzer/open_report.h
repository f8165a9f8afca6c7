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

struct LoadedReport {
  std::string path;
  ReportFormat format = ReportFormat::kText;
  report::CompilationReport compilation;
  std::optional<report::ExecutionReport> execution;
  report::Stats stats;  // survivable oddities the text reader counted

  // Per-tile data (JSON, CBOR, SQLite of a compiled report) rather than only
  // the figures a text report printed.
  bool HasTiles() const { return !compilation.tiles.empty(); }
};

// Errors: "<path>: <strerror>", "<path>: empty file", the readers' own
// messages (which name the file, line, byte or table), and "<path>: the
// report has no compilation part" for an execution-only document.
Expected<LoadedReport> OpenReport(const std::string& path);

}  // namespace tileprof::analyzer
