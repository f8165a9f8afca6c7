#include "reports/trace_events.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>

namespace tileprof::report {
namespace {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Field numbers of spec section 1 and 2.1.
enum EnvelopeField : uint32_t { kTimestamp = 1, kOrdinal = 2, kType = 3 };
constexpr uint32_t kFirstPayloadField = 5;  // compile_begin = 5 ... execute = 9
// The payload field of each type, in TraceEventType order.
constexpr uint32_t PayloadField(TraceEventType type) {
  switch (type) {
    case TraceEventType::kCompileBegin:
      return 5;
    case TraceEventType::kCompileEnd:
      return 6;
    case TraceEventType::kHostToDeviceTransfer:
    case TraceEventType::kDeviceToHostTransfer:
      return 7;
    case TraceEventType::kLoadEngine:
      return 8;
    case TraceEventType::kExecute:
      return 9;
  }
  return 0;
}

class Writer {
 public:
  void Varint(uint64_t value) {
    while (value >= 0x80) {
      out_.push_back(static_cast<char>(value | 0x80));
      value >>= 7;
    }
    out_.push_back(static_cast<char>(value));
  }
  void Tag(uint32_t field, WireType wire) { Varint((uint64_t{field} << 3) | wire); }
  // proto3 leaves out fields that hold their default value.
  void VarintField(uint32_t field, uint64_t value) {
    if (value == 0) return;
    Tag(field, kVarint);
    Varint(value);
  }
  void BytesField(uint32_t field, std::string_view bytes, bool even_if_empty = false) {
    if (bytes.empty() && !even_if_empty) return;
    Tag(field, kLengthDelimited);
    Varint(bytes.size());
    out_.append(bytes);
  }
  void DoubleField(uint32_t field, double value) {
    if (value == 0) return;
    Tag(field, kFixed64);
    auto bits = std::bit_cast<uint64_t>(value);
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>(bits >> (8 * i)));
  }
  std::string& text() { return out_; }

 private:
  std::string out_;
};

std::string EncodePayload(const TraceEvent& e) {
  Writer w;
  switch (e.type) {
    case TraceEventType::kCompileBegin:
      w.BytesField(2, e.module_name);
      break;
    case TraceEventType::kCompileEnd:
      w.BytesField(1, e.compilation_report);
      w.VarintField(2, static_cast<uint64_t>(e.duration_us));
      w.BytesField(3, e.module_name);
      w.BytesField(4, e.tensor_map);
      w.BytesField(5, e.instruction_info);
      w.BytesField(6, e.poplar_graph);
      break;
    case TraceEventType::kHostToDeviceTransfer:
    case TraceEventType::kDeviceToHostTransfer:
      w.BytesField(1, e.data_transfer);
      break;
    case TraceEventType::kLoadEngine:
      w.BytesField(1, e.module_name);
      break;
    case TraceEventType::kExecute:
      w.BytesField(1, e.execution_report);
      w.BytesField(2, e.activity_trace);
      w.BytesField(3, e.module_name);
      break;
  }
  return std::move(w.text());
}

// A bounds-checked protobuf reader over one message.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool done() const { return pos_ >= bytes_.size(); }
  size_t pos() const { return pos_; }

  Expected<uint64_t> Varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= bytes_.size()) return MakeError("byte {}: varint runs past the end", pos_);
      auto byte = static_cast<uint8_t>(bytes_[pos_++]);
      value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return MakeError("byte {}: varint longer than 10 bytes", pos_);
  }
  Expected<std::string_view> Bytes() {
    TILEPROF_ASSIGN_OR_RETURN(uint64_t size, Varint());
    if (size > bytes_.size() - pos_)
      return MakeError("byte {}: field of {} bytes runs past the end ({} left)", pos_, size,
                       bytes_.size() - pos_);
    std::string_view out = bytes_.substr(pos_, size);
    pos_ += size;
    return out;
  }
  Expected<uint64_t> Fixed(size_t width) {
    if (width > bytes_.size() - pos_)
      return MakeError("byte {}: fixed{} runs past the end", pos_, width * 8);
    uint64_t value = 0;
    for (size_t i = 0; i < width; ++i)
      value |= uint64_t{static_cast<uint8_t>(bytes_[pos_ + i])} << (8 * i);
    pos_ += width;
    return value;
  }
  template <typename T>
  static Status Ok(const Expected<T>& result) {
    if (!result) return result.error();
    return {};
  }
  // Skips a field this schema does not know, as protobuf readers must.
  Status Skip(uint32_t wire) {
    switch (wire) {
      case kVarint:
        return Ok(Varint());
      case kFixed64:
        return Ok(Fixed(8));
      case kFixed32:
        return Ok(Fixed(4));
      case kLengthDelimited:
        return Ok(Bytes());
      default:
        return MakeError("byte {}: unsupported wire type {}", pos_, wire);
    }
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

struct Tag {
  uint32_t field;
  uint32_t wire;
};

Expected<Tag> ReadTag(Reader& r) {
  size_t at = r.pos();
  TILEPROF_ASSIGN_OR_RETURN(uint64_t tag, r.Varint());
  auto field = static_cast<uint32_t>(tag >> 3);
  if (field == 0 || tag >> 3 > 0x1fffffff)
    return MakeError("byte {}: invalid field number {}", at, tag >> 3);
  return Tag{field, static_cast<uint32_t>(tag & 7)};
}

// Reads a bytes field into `out`, or reports the wire-type mismatch.
Status ReadBytesInto(Reader& r, const Tag& tag, std::string_view what, std::string* out) {
  if (tag.wire != kLengthDelimited)
    return MakeError("byte {}: {} has wire type {}, expected 2 (bytes)", r.pos(), what, tag.wire);
  TILEPROF_ASSIGN_OR_RETURN(std::string_view bytes, r.Bytes());
  out->assign(bytes);
  return {};
}

Status DecodePayload(std::string_view bytes, TraceEvent* e) {
  Reader r(bytes);
  while (!r.done()) {
    TILEPROF_ASSIGN_OR_RETURN(Tag tag, ReadTag(r));
    std::string* target = nullptr;
    switch (e->type) {
      case TraceEventType::kCompileBegin:
        if (tag.field == 2) target = &e->module_name;
        break;
      case TraceEventType::kCompileEnd:
        if (tag.field == 2) {
          if (tag.wire != kVarint) return MakeError("byte {}: duration is not a varint", r.pos());
          TILEPROF_ASSIGN_OR_RETURN(uint64_t duration, r.Varint());
          e->duration_us = static_cast<int64_t>(duration);
          continue;
        }
        if (tag.field == 1) target = &e->compilation_report;
        if (tag.field == 3) target = &e->module_name;
        if (tag.field == 4) target = &e->tensor_map;
        if (tag.field == 5) target = &e->instruction_info;
        if (tag.field == 6) target = &e->poplar_graph;
        break;
      case TraceEventType::kHostToDeviceTransfer:
      case TraceEventType::kDeviceToHostTransfer:
        if (tag.field == 1) target = &e->data_transfer;
        break;
      case TraceEventType::kLoadEngine:
        if (tag.field == 1) target = &e->module_name;
        break;
      case TraceEventType::kExecute:
        if (tag.field == 1) target = &e->execution_report;
        if (tag.field == 2) target = &e->activity_trace;
        if (tag.field == 3) target = &e->module_name;
        break;
    }
    if (target != nullptr) {
      TILEPROF_RETURN_IF_ERROR(ReadBytesInto(r, tag, fmt::format("field {}", tag.field), target));
    } else {
      TILEPROF_RETURN_IF_ERROR(r.Skip(tag.wire));
    }
  }
  return {};
}

std::string LocalTime(double timestamp) {
  // Beyond year +-5000 (or NaN) a calendar date means nothing, and the
  // conversion to time_t would overflow.
  if (!(timestamp > -1e11 && timestamp < 1e11))
    return fmt::format("{} s since the epoch", timestamp);
  auto seconds = static_cast<time_t>(timestamp);
  std::tm local{};
  localtime_r(&seconds, &local);
  char text[64];
  size_t n = std::strftime(text, sizeof text, "%F %T %z", &local);
  return std::string(text, n);
}

std::string EventBody(const TraceEvent& e) {
  switch (e.type) {
    case TraceEventType::kCompileBegin:
      return "Compile begin: " + e.module_name + "\n";
    case TraceEventType::kCompileEnd:
      return fmt::format("Compile end: {}\nDuration: {} us\n{}", e.module_name, e.duration_us,
                         e.compilation_report);
    case TraceEventType::kHostToDeviceTransfer:
      return "Host->Device\n" + e.data_transfer + "\n";
    case TraceEventType::kDeviceToHostTransfer:
      return "Device->Host\n" + e.data_transfer + "\n";
    case TraceEventType::kLoadEngine:
      return "Load engine: " + e.module_name + "\n";
    case TraceEventType::kExecute:
      return "Execute: " + e.module_name + "\n" + e.execution_report;
  }
  return "Unknown event";
}

Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return MakeError("'{}': write failed: {}", path, std::strerror(errno));
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

}  // namespace

std::string TraceEventTypeName(TraceEventType type) {
  switch (type) {
    case TraceEventType::kCompileBegin:
      return "COMPILE_BEGIN";
    case TraceEventType::kCompileEnd:
      return "COMPILE_END";
    case TraceEventType::kHostToDeviceTransfer:
      return "HOST_TO_DEVICE_TRANSFER";
    case TraceEventType::kDeviceToHostTransfer:
      return "DEVICE_TO_HOST_TRANSFER";
    case TraceEventType::kLoadEngine:
      return "LOAD_ENGINE";
    case TraceEventType::kExecute:
      return "EXECUTE";
  }
  return fmt::format("UNKNOWN({})", static_cast<int32_t>(type));
}

std::string EncodeTraceEvent(const TraceEvent& event) {
  Writer w;
  w.DoubleField(kTimestamp, event.timestamp);
  // int32 fields are sign-extended to 64 bits on the wire.
  w.VarintField(kOrdinal, static_cast<uint64_t>(static_cast<int64_t>(event.ordinal)));
  w.VarintField(kType, static_cast<uint64_t>(static_cast<int64_t>(event.type)));
  // A set oneof member is written even when it is empty.
  w.BytesField(PayloadField(event.type), EncodePayload(event), /*even_if_empty=*/true);
  return std::move(w.text());
}

Expected<TraceEvent> DecodeTraceEvent(std::string_view bytes) {
  TraceEvent event;
  Reader r(bytes);
  std::optional<std::pair<uint32_t, std::string_view>> payload;
  while (!r.done()) {
    TILEPROF_ASSIGN_OR_RETURN(Tag tag, ReadTag(r));
    if (tag.field == kTimestamp && tag.wire == kFixed64) {
      TILEPROF_ASSIGN_OR_RETURN(uint64_t bits, r.Fixed(8));
      event.timestamp = std::bit_cast<double>(bits);
    } else if ((tag.field == kOrdinal || tag.field == kType) && tag.wire == kVarint) {
      TILEPROF_ASSIGN_OR_RETURN(uint64_t value, r.Varint());
      auto as_int32 = static_cast<int32_t>(static_cast<int64_t>(value));
      if (tag.field == kOrdinal)
        event.ordinal = as_int32;
      else
        event.type = static_cast<TraceEventType>(as_int32);
    } else if (tag.field >= kFirstPayloadField && tag.field <= 9 && tag.wire == kLengthDelimited) {
      TILEPROF_ASSIGN_OR_RETURN(std::string_view body, r.Bytes());
      payload.emplace(tag.field, body);  // the last member of a oneof wins
    } else if (tag.field <= 9) {
      return MakeError("byte {}: field {} has the wrong wire type {}", r.pos(), tag.field,
                       tag.wire);
    } else {
      TILEPROF_RETURN_IF_ERROR(r.Skip(tag.wire));
    }
  }
  if (static_cast<int32_t>(event.type) < 0 || static_cast<int32_t>(event.type) > 5)
    return MakeError("unknown event type {}", static_cast<int32_t>(event.type));
  if (payload) {
    if (payload->first != PayloadField(event.type))
      return MakeError("a {} event carries payload field {}, expected {}",
                       TraceEventTypeName(event.type), payload->first, PayloadField(event.type));
    Status status = DecodePayload(payload->second, &event);
    if (!status)
      return status.error().Within(fmt::format("{} payload", TraceEventTypeName(event.type)));
  }
  return event;
}

std::string EncodeTraceEventStream(const std::vector<TraceEvent>& events) {
  Writer w;
  for (const TraceEvent& event : events) {
    std::string message = EncodeTraceEvent(event);
    w.Varint(message.size());
    w.text().append(message);
  }
  return std::move(w.text());
}

Expected<TraceEventStream> DecodeTraceEventStream(std::string_view bytes) {
  TraceEventStream stream;
  Reader r(bytes);
  while (!r.done()) {
    size_t at = r.pos();
    auto message = r.Bytes();
    if (!message) {
      stream.truncated =
          fmt::format("event {} at byte {} is incomplete (the writer stopped mid-event): {}",
                      stream.events.size(), at, message.error().message());
      break;
    }
    auto event = DecodeTraceEvent(*message);
    if (!event)
      return event.error().Within(fmt::format("event {} at byte {}", stream.events.size(), at));
    stream.events.push_back(std::move(*event));
  }
  return stream;
}

std::string DataTransferJson(const std::vector<TransferredTensor>& tensors) {
  // jsoncpp's default StreamWriterBuilder layout, which the original used.
  std::string out = "{\n\t\"tensors\" : \n\t[\n";
  uint64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::string name;
    for (char c : tensors[i].name) {
      if (c == '"' || c == '\\') name += '\\';
      name += c;
    }
    out += fmt::format("\t\t{{\n\t\t\t\"name\" : \"{}\",\n\t\t\t\"size\" : {}\n\t\t}}{}\n", name,
                       tensors[i].size, i + 1 < tensors.size() ? "," : "");
    total += tensors[i].size;
  }
  if (tensors.empty())
    out = "{\n\t\"tensors\" : [],\n";
  else
    out += "\t],\n";
  out += fmt::format("\t\"total_size\" : {}\n}}", total);
  return out;
}

std::string EventsToText(const std::vector<TraceEvent>& events) {
  std::string out;
  for (const TraceEvent& e : events)
    out += fmt::format("{:->70}\n=> @ {}: {}\n", "", LocalTime(e.timestamp), EventBody(e));
  return out;
}

Expected<TraceEventWriter> TraceEventWriter::Open(const std::string& path) {
  std::string partial = path + ".partial";
  int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return MakeError("cannot create '{}': {}", partial, std::strerror(errno));
  return TraceEventWriter(path, fd);
}

TraceEventWriter::TraceEventWriter(TraceEventWriter&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

TraceEventWriter::~TraceEventWriter() { (void)Close(); }

Status TraceEventWriter::Append(const TraceEvent& event) {
  if (fd_ < 0) return MakeError("'{}': the event file is closed", path_);
  std::string message = EncodeTraceEvent(event);
  Writer framed;
  framed.Varint(message.size());
  framed.text().append(message);
  // One write per event, so a crash leaves whole events behind.
  return WriteAll(fd_, framed.text(), path_ + ".partial");
}

Status TraceEventWriter::Close() {
  if (fd_ < 0) return {};
  int fd = fd_;
  fd_ = -1;
  if (::fsync(fd) != 0 || ::close(fd) != 0)
    return MakeError("'{}.partial': cannot finish writing: {}", path_, std::strerror(errno));
  std::string partial = path_ + ".partial";
  if (std::rename(partial.c_str(), path_.c_str()) != 0)
    return MakeError("cannot rename '{}' to '{}': {}", partial, path_, std::strerror(errno));
  return {};
}

}  // namespace tileprof::report
