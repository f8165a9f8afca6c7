// Trace events (../shared/spec/trace-events.md): the `tensorflow.IpuTraceEvent`
// protobuf messages users drain from the device, in the protobuf wire format
// with the original field numbers, so existing decoders (protoc --decode,
// the Python bindings of the original .proto) read our files.
//
// Schema: the full-report era (spec 2.1), a superset of the reduced one: the
// compile-end event carries the compilation report, tensor map and
// instruction info, and the execute event the execution report.
//
// Why a small hand-written codec rather than libprotobuf: six flat messages
// of bytes/varint/double fields; generated code would add protoc to the build
// and libprotobuf (a large C++ DSO) to every start-up of `tileprof`, for what
// is ~150 lines of varint handling. `protoc --decode` is the test oracle.
//
// Event files are a stream of length-delimited messages (a varint byte count,
// then the message), as protobuf's writeDelimitedTo / parseDelimitedFrom
// write and read them. The writer appends each event with one write() as it
// happens, into "<path>.partial", renamed to <path> on Close(): a crash keeps
// every event written so far, and an existing <path> is replaced only by a
// complete file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"

namespace tileprof::report {

enum class TraceEventType : int32_t {
  kCompileBegin = 0,
  kCompileEnd = 1,
  kHostToDeviceTransfer = 2,
  kDeviceToHostTransfer = 3,
  kLoadEngine = 4,
  kExecute = 5,
};

// "COMPILE_BEGIN", ...; "UNKNOWN(<n>)" for values outside the enum.
std::string TraceEventTypeName(TraceEventType type);

struct TraceEvent {
  double timestamp = 0;  // seconds since the Unix epoch
  int32_t ordinal = 0;
  TraceEventType type = TraceEventType::kCompileBegin;
  std::string module_name;  // compile begin/end, load engine, execute
  // COMPILE_END
  int64_t duration_us = 0;
  std::string compilation_report;  // text/JSON/CBOR report, or a file path
  std::string tensor_map;          // JSON, or a file path
  std::string instruction_info;    // JSON
  std::string poplar_graph;
  // EXECUTE
  std::string execution_report;
  std::string activity_trace;
  // HOST_TO_DEVICE_TRANSFER, DEVICE_TO_HOST_TRANSFER: the data-transfer JSON
  std::string data_transfer;

  bool operator==(const TraceEvent&) const = default;
};

// One IpuTraceEvent message (no length prefix).
std::string EncodeTraceEvent(const TraceEvent& event);
Expected<TraceEvent> DecodeTraceEvent(std::string_view bytes);

// A whole event stream. Errors name the event index and byte offset.
std::string EncodeTraceEventStream(const std::vector<TraceEvent>& events);
struct TraceEventStream {
  std::vector<TraceEvent> events;
  // Set when the stream ends inside an event (a crash while writing): the
  // events before it are still returned.
  std::string truncated;
};
Expected<TraceEventStream> DecodeTraceEventStream(std::string_view bytes);

// The data-transfer JSON of spec section 5.
struct TransferredTensor {
  std::string name;
  uint64_t size = 0;
};
std::string DataTransferJson(const std::vector<TransferredTensor>& tensors);

// What extract_all_strings_from_event_trace prints for the events (spec
// section 4): a 70-dash rule, "=> @ <local time %F %T %z>: " and the body.
std::string EventsToText(const std::vector<TraceEvent>& events);

// Appends events to an event file as they happen (see the top of this file).
class TraceEventWriter {
 public:
  static Expected<TraceEventWriter> Open(const std::string& path);
  TraceEventWriter(TraceEventWriter&& other) noexcept;
  TraceEventWriter& operator=(TraceEventWriter&&) = delete;
  ~TraceEventWriter();  // Close()s, ignoring errors

  Status Append(const TraceEvent& event);
  Status Close();

 private:
  TraceEventWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

}  // namespace tileprof::report
