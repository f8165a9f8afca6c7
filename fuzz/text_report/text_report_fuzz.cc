// Fuzzes the text report reader: any bytes either fail with a located error
// or read; what reads is written, and the written text must read again and
// be a fixed point (written once more, the same bytes), so reader and writer
// agree on everything the text carries.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "reports/invariants.h"
#include "reports/text_reader.h"
#include "reports/text_writer.h"

namespace {

using tileprof::report::ExecutionReport;
using tileprof::report::ParsedTextReport;

std::string Write(const ParsedTextReport& parsed) {
  tileprof::report::TextReportOptions options;
  options.show_execution_steps = true;
  const ExecutionReport* execution = parsed.execution ? &*parsed.execution : nullptr;
  return tileprof::report::WriteTextReport(parsed.compilation, execution, options);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = tileprof::report::ReadTextReport(text, "fuzz.rep");
  if (!parsed) {
    if (!parsed.error().message().starts_with("fuzz.rep:")) std::abort();
    return 0;
  }
  // The checks must cope with whatever was read.
  (void)tileprof::report::CheckInvariants(parsed->compilation);
  if (parsed->execution) (void)tileprof::report::CheckInvariants(*parsed->execution);
  (void)tileprof::report::ReproduceHistogram(*parsed);

  std::string once = Write(*parsed);
  auto again = tileprof::report::ReadTextReport(once, "written.rep");
  if (!again) std::abort();                 // we wrote something we cannot read
  if (Write(*again) != once) std::abort();  // not a fixed point
  return 0;
}
