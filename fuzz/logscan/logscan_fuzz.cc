// Fuzzes the log scanner: any bytes parse, summarise and render without
// crashing, and the report stays proportional to the input.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "analyzer/log_scan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto events = tileprof::analyzer::ParseLog(text, "fuzz.log");
  if (events.size() > size + 1) std::abort();  // at most one event per byte
  auto summary = tileprof::analyzer::ScanLogs({events}, {});
  std::string report = tileprof::analyzer::FormatLogScanText(summary);
  std::string json = tileprof::analyzer::FormatLogScanJson(summary);
  if (report.empty() || json.empty()) std::abort();
  return 0;
}
