// The text report reader: reads tileprof's own `Trace_Event_Report.rep` and
// the reports Poplar printed (../shared/corpus/reports/), including published
// excerpts with rows left out, into the report structs.
//
// What a text report can carry: Target, Graph, the whole-graph Memory Usage
// block, the By Tile histogram with its Maximum and out-of-memory lines, up to
// five tile blocks, and the Execution summary. It never carries every tile's
// memory, so CompilationReport::tiles stays empty and the figures land in
// CompilationReport::verbatim, with MemoryUsage::known saying which rows were
// present. The reader is line-oriented and matches lines by their trimmed
// text, so indentation may drift; blank lines and "..." lines are skipped.
//
// Malformed text (a recognised line whose value does not scan, a histogram
// row out of order, an unknown major format version, or no report at all)
// fails with "file:line: error: message", then the line and a caret.
// Survivable oddities are counted in ParsedTextReport::stats (stats.h).
#pragma once

#include <optional>
#include <string_view>

#include "common/expected.h"
#include "reports/report.h"
#include "reports/stats.h"

namespace tileprof::report {

struct ParsedTextReport {
  CompilationReport compilation;
  std::optional<ExecutionReport> execution;
  std::optional<FormatVersion> format_version;  // when the format line was present
  Stats stats;
};

// `filename` only names the input in messages and stats.
Expected<ParsedTextReport> ReadTextReport(std::string_view text, std::string_view filename);

}  // namespace tileprof::report
