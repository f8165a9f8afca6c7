// Reads a report file in any format tileprof writes, telling them apart by
// their first bytes rather than the file name: a SQLite profile database
// ("SQLite format 3\0"), a CBOR report (the self-describing tag d9 d9 f7, or
// a CBOR map), a JSON report (a '{' after whitespace), otherwise a text
// report (ours or Poplar's). Errors are the format reader's, naming the file.
#pragma once

#include <string>
#include <string_view>

#include "common/expected.h"
#include "reports/report_document.h"

namespace tileprof::report {

enum class ReportFormat { kText, kJson, kCbor, kSqlite };
std::string_view ReportFormatName(ReportFormat format);  // "text", "json", ...

// The format the bytes start like.
ReportFormat SniffReportFormat(std::string_view head);

Expected<ReportDocument> ReadReportFile(const std::string& path);

}  // namespace tileprof::report
