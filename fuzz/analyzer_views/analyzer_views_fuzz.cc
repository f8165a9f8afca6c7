// Fuzzes the analyzer views on whatever a reader accepts: the bytes are
// sniffed as OpenReport does (text, JSON or CBOR; SQLite needs a file), and
// every view, plot and the HTML page must then render without crashing,
// however odd the numbers (elided rows, zero or huge sizes, unknown rows),
// the Execution views included.
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>

#include "analyzer/execution_views.h"
#include "analyzer/memory_views.h"
#include "analyzer/oom.h"
#include "analyzer/open_report.h"
#include "analyzer/plots.h"
#include "analyzer/view_page.h"
#include "reports/cbor_codec.h"
#include "reports/json_codec.h"
#include "reports/text_reader.h"

namespace ta = tileprof::analyzer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  std::string_view text(reinterpret_cast<const char*>(data), size);
  ta::LoadedReport loaded;
  loaded.path = "fuzz";
  loaded.format = ta::SniffReportFormat(bytes);
  tileprof::report::ReportDocument document;
  switch (loaded.format) {
    case ta::ReportFormat::kText: {
      auto read = tileprof::report::ReadTextReport(text, "fuzz");
      if (!read) return 0;
      document.compilation = std::move(read->compilation);
      document.execution = std::move(read->execution);
      break;
    }
    case ta::ReportFormat::kJson: {
      auto read = tileprof::report::ReadJsonReport(text, "fuzz");
      if (!read) return 0;
      document = std::move(*read);
      break;
    }
    case ta::ReportFormat::kCbor: {
      auto read = tileprof::report::ReadCborReport(bytes, "fuzz");
      if (!read) return 0;
      document = std::move(*read);
      break;
    }
    case ta::ReportFormat::kSqlite:
      return 0;
  }
  if (!document.compilation && !document.execution) return 0;
  // Keep per-tile work bounded: the views are linear, the fuzzer is not patient.
  if (document.compilation && document.compilation->tiles.size() > 4096) return 0;
  if (document.compilation) loaded.compilation = std::move(*document.compilation);
  loaded.execution = std::move(document.execution);
  for (auto format : {ta::OutputFormat::kTable, ta::OutputFormat::kCsv, ta::OutputFormat::kJson}) {
    auto render = [&](const tileprof::Expected<ta::Output>& out) {
      if (out)
        (void)ta::Render(*out, format);
      else if (out.error().message().empty())
        std::abort();
    };
    render(ta::HistogramView(loaded, {}));
    render(ta::HistogramView(loaded, {.including_gaps = true, .bucket_kib = 3}));
    render(ta::TopTilesView(loaded, 5));
    render(ta::OomView(loaded, nullptr, {.bytes_per_tile = 1000}));
    render(ta::CompareView(loaded, loaded, 5));
    render(ta::CompareView(loaded, ta::LoadedReport{}, 5));
    render(ta::TopVertexTypesView(loaded, 3));
  }
  for (auto kind : {ta::PlotKind::kTiles, ta::PlotKind::kHistogram, ta::PlotKind::kCategories,
                    ta::PlotKind::kExecution})
    (void)ta::PlotSvg(loaded, kind);
  (void)ta::ViewPage(loaded, &loaded);
  return 0;
}
