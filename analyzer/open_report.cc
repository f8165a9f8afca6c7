#include "analyzer/open_report.h"

#include <cstring>

#include "common/mapped_file.h"
#include "reports/cbor_codec.h"
#include "reports/json_codec.h"
#include "reports/sqlite_profile.h"
#include "reports/text_reader.h"

namespace tileprof::analyzer {
namespace {

constexpr char kSqliteMagic[] = "SQLite format 3";  // and its NUL: 16 bytes

// Readers name the file in their own words; make sure every message starts
// with the path, whichever reader failed.
Error NamingFile(const Error& error, const std::string& path) {
  if (error.message().starts_with(path)) return error;
  return error.Within(path);
}

}  // namespace

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

ReportFormat SniffReportFormat(std::span<const uint8_t> head) {
  if (head.size() >= sizeof kSqliteMagic &&
      std::memcmp(head.data(), kSqliteMagic, sizeof kSqliteMagic) == 0) {
    return ReportFormat::kSqlite;
  }
  if (head.size() >= 3 && head[0] == 0xd9 && head[1] == 0xd9 && head[2] == 0xf7) {
    return ReportFormat::kCbor;
  }
  // A CBOR map (major type 5) starts with a0..bf; no text report or JSON
  // document starts with such a byte (it is not a UTF-8 lead byte).
  if (!head.empty() && head[0] >= 0xa0 && head[0] <= 0xbf) return ReportFormat::kCbor;
  size_t i = 0;
  if (head.size() >= 3 && head[0] == 0xef && head[1] == 0xbb && head[2] == 0xbf) i = 3;
  while (i < head.size() &&
         (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
    ++i;
  if (i < head.size() && head[i] == '{') return ReportFormat::kJson;
  return ReportFormat::kText;
}

std::optional<report::MemoryUsage> Total(const LoadedReport& report) {
  if (report.total) return report.total;
  return report::ResolveTotal(report.compilation);
}

Expected<LoadedReport> OpenReport(const std::string& path, const OpenOptions& options) {
  Expected<MappedFile> file = MappedFile::Open(path);
  if (!file) return NamingFile(file.error(), path);
  std::span<const uint8_t> bytes = file->bytes();
  if (bytes.empty()) return MakeError("{}: empty file, not a report", path);
  LoadedReport loaded;
  loaded.path = path;
  loaded.format = SniffReportFormat(bytes.first(std::min<size_t>(bytes.size(), 64)));
  report::ReportDocument document;
  switch (loaded.format) {
    case ReportFormat::kSqlite: {
      report::ProfileReadOptions read_options;
      read_options.all_tile_detail = options.all_tile_detail;
      read_options.detail_top_tiles = options.detail_top_tiles;
      if (options.total) read_options.total = &loaded.total;
      auto read = report::ReadProfileDatabase(path, read_options);
      if (!read) return NamingFile(read.error(), path);
      document = std::move(*read);
      break;
    }
    case ReportFormat::kCbor: {
      auto read = report::ReadCborReport(bytes, path);
      if (!read) return NamingFile(read.error(), path);
      document = std::move(*read);
      break;
    }
    case ReportFormat::kJson: {
      std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      auto read = report::ReadJsonReport(text, path);
      if (!read) return NamingFile(read.error(), path);
      document = std::move(*read);
      break;
    }
    case ReportFormat::kText: {
      std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      auto read = report::ReadTextReport(text, path);
      if (!read) return NamingFile(read.error(), path);
      document.compilation = std::move(read->compilation);
      document.execution = std::move(read->execution);
      loaded.stats = std::move(read->stats);
      break;
    }
  }
  if (!document.compilation && !(options.execution_only && document.execution)) {
    return MakeError("{}: the {} report has no compilation part (memory figures)", path,
                     ReportFormatName(loaded.format));
  }
  if (document.compilation) loaded.compilation = std::move(*document.compilation);
  loaded.execution = std::move(document.execution);
  return loaded;
}

}  // namespace tileprof::analyzer
