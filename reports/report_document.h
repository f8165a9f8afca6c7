// What one report file holds in the structured formats (JSON, CBOR, SQLite):
// a compilation report, an execution report, or both. A text report always
// has a compilation part, so ParsedTextReport is not reused here: an
// execution-only JSON file (Poplar writes the two profiles separately) must
// be told apart from one with an empty compilation report.
#pragma once

#include <optional>
#include <string_view>

#include "reports/report.h"

namespace tileprof::report {

// The "format" member of every JSON/CBOR report and the metadata of every
// profile database, so a reader can tell our files from any other JSON.
inline constexpr std::string_view kReportFormatName = "tileprof-report";

struct ReportDocument {
  std::optional<CompilationReport> compilation;
  std::optional<ExecutionReport> execution;

  bool operator==(const ReportDocument&) const = default;
};

}  // namespace tileprof::report
