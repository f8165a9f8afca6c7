#include "reports/report_file.h"

#include <cstdio>
#include <memory>

#include "common/file.h"
#include "reports/cbor_codec.h"
#include "reports/json_codec.h"
#include "reports/sqlite_profile.h"
#include "reports/text_reader.h"

namespace tileprof::report {

std::string_view ReportFormatName(ReportFormat format) {
  switch (format) {
    case ReportFormat::kText:
      return "text";
    case ReportFormat::kJson:
      return "json";
    case ReportFormat::kCbor:
      return "cbor";
    case ReportFormat::kSqlite:
      return "sqlite";
  }
  return "text";
}

ReportFormat SniffReportFormat(std::string_view head) {
  if (head.starts_with(std::string_view("SQLite format 3\0", 16))) return ReportFormat::kSqlite;
  if (head.starts_with("\xd9\xd9\xf7")) return ReportFormat::kCbor;
  if (!head.empty()) {
    auto first = static_cast<unsigned char>(head[0]);
    if (first >= 0xa0 && first <= 0xbf) return ReportFormat::kCbor;  // major type 5: a map
  }
  size_t start = head.find_first_not_of(" \t\r\n");
  if (start != std::string_view::npos && head[start] == '{') return ReportFormat::kJson;
  return ReportFormat::kText;
}

Expected<ReportDocument> ReadReportFile(const std::string& path) {
  std::string head;
  {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                         &std::fclose);
    if (!file) {
      Expected<std::string> probe = ReadFile(path);  // the usual "'<path>': No such file" text
      if (!probe) return probe.error();
      return MakeError("'{}': cannot be opened", path);
    }
    char buffer[64];
    size_t n = std::fread(buffer, 1, sizeof buffer, file.get());
    head.assign(buffer, n);
  }
  switch (SniffReportFormat(head)) {
    case ReportFormat::kSqlite:
      return ReadProfileDatabase(path);
    case ReportFormat::kCbor:
      return ReadCborReportFile(path);
    case ReportFormat::kJson:
      return ReadJsonReportFile(path);
    case ReportFormat::kText:
      break;
  }
  TILEPROF_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  TILEPROF_ASSIGN_OR_RETURN(ParsedTextReport parsed, ReadTextReport(text, path));
  return ReportDocument{std::move(parsed.compilation), std::move(parsed.execution)};
}

}  // namespace tileprof::report
