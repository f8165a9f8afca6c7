// Fuzzes the trace-event stream reader: any bytes either fail with an error
// or decode; what decodes must encode to a stream that decodes to the same
// events (the encoding of decoded events is canonical, so it is also a
// fixed point), and the text dump must cope with whatever was decoded.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "reports/trace_events.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto stream = tileprof::report::DecodeTraceEventStream(bytes);
  if (!stream) {
    if (stream.error().message().empty()) std::abort();
    return 0;
  }
  std::string again = tileprof::report::EncodeTraceEventStream(stream->events);
  auto reread = tileprof::report::DecodeTraceEventStream(again);
  if (!reread || reread->events.size() != stream->events.size() || !reread->truncated.empty())
    std::abort();
  if (tileprof::report::EncodeTraceEventStream(reread->events) != again) std::abort();
  (void)tileprof::report::EventsToText(stream->events);
  return 0;
}
