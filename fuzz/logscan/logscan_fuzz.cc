// Fuzzes the log scanner: any bytes parse, summarise and render without
// crashing, through both the streaming scanner the command uses and the
// event list the tests use, and the report stays proportional to the input.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "analyzer/log_scan.h"

namespace ta = tileprof::analyzer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  ta::ParsedLog parsed = ta::ParseLog(text);
  if (parsed.events.size() > size + 1) std::abort();  // at most one event per byte
  ta::LogScanSummary from_events = ta::ScanLogs({parsed.events}, {"fuzz.log"}, {});

  ta::LogScanner scanner;
  scanner.Scan(text, "fuzz.log");
  ta::LogScanSummary streamed = scanner.Finish();
  // Every build starts at a line of the log.
  for (const ta::ModuleBuild& b : streamed.builds)
    if (b.line == 0 || b.line > streamed.lines) std::abort();
  if (streamed.builds.size() > parsed.events.size() + streamed.lines) std::abort();

  for (const ta::LogScanSummary* s : {&from_events, &streamed}) {
    std::string report = ta::FormatLogScanText(*s);
    std::string json = ta::FormatLogScanJson(*s);
    if (report.empty() || json.empty()) std::abort();
  }
  return 0;
}
