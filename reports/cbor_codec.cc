#include "reports/cbor_codec.h"

#include <cbor.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/file.h"
#include "common/mapped_file.h"
#include "reports/schema.h"

namespace tileprof::report {
namespace {

constexpr uint64_t kSelfDescribeTag = 55799;

class CborEmitter final : public schema::Emitter {
 public:
  explicit CborEmitter(std::string& out) : out_(out) {}

  void BeginObject() override { Put(cbor_encode_indef_map_start(buffer_, sizeof buffer_)); }
  void EndObject() override { Put(cbor_encode_break(buffer_, sizeof buffer_)); }
  void BeginArray(size_t size) override {
    Put(cbor_encode_array_start(size, buffer_, sizeof buffer_));
  }
  void EndArray() override {}
  void Key(std::string_view key) override { Text(key); }
  void Uint(uint64_t value) override { Put(cbor_encode_uint(value, buffer_, sizeof buffer_)); }
  void Double(double value) override {
    // One NaN, so that equal reports give equal bytes whatever NaN they held
    // (JSON keeps no payload either).
    if (std::isnan(value)) value = std::numeric_limits<double>::quiet_NaN();
    Put(cbor_encode_double(value, buffer_, sizeof buffer_));
  }
  void String(std::string_view utf8) override { Text(utf8); }
  void Bool(bool value) override { Put(cbor_encode_bool(value, buffer_, sizeof buffer_)); }
  void Tag(uint64_t tag) { Put(cbor_encode_tag(tag, buffer_, sizeof buffer_)); }

 private:
  void Put(size_t size) { out_.append(reinterpret_cast<const char*>(buffer_), size); }
  void Text(std::string_view text) {
    Put(cbor_encode_string_start(text.size(), buffer_, sizeof buffer_));
    out_.append(text);
  }

  std::string& out_;
  unsigned char buffer_[9];  // the longest item head: 1 byte + 8-byte argument
};

// Turns libcbor's flat item stream (one head per cbor_stream_decode call)
// into nested value events for the builder, tracking the open containers:
// definite ones end after their count of items, indefinite ones at a break.
class CborReader {
 public:
  CborReader(std::span<const uint8_t> bytes, schema::DocumentBuilder& builder)
      : bytes_(bytes), builder_(builder) {}

  void Run() {
    size_t offset = 0;
    while (!builder_.failed()) {
      // (Only with no container open can the document be complete.)
      if (stack_.empty() && builder_.done() && !in_string_) {
        if (offset < bytes_.size()) Fail(offset, "trailing bytes after the report");
        return;
      }
      if (offset == bytes_.size()) {
        Fail(offset, offset == 0 ? "empty input" : "truncated input");
        return;
      }
      item_offset_ = offset;
      if (size_t read = Common(offset)) {
        offset += read;
        continue;
      }
      cbor_decoder_result result =
          cbor_stream_decode(bytes_.data() + offset, bytes_.size() - offset, &Callbacks(), this);
      if (result.status == CBOR_DECODER_NEDATA) return Fail(offset, "truncated input");
      if (result.status != CBOR_DECODER_FINISHED || result.read == 0)
        return Fail(offset, "malformed CBOR item");
      offset += result.read;
    }
  }

 private:
  struct Container {
    bool map = false;
    bool indefinite = false;
    uint64_t remaining = 0;  // items (keys and values) left in a definite one
    bool at_key = true;
  };

  // The items a report is made of (unsigned integers, definite text,
  // container starts, break), decoded here rather than through libcbor's
  // callback per item, which cost more than the rest of the reading. Same
  // events as libcbor gives; anything else, and anything that does not fit
  // in the input, returns 0 for libcbor to decode (and to diagnose).
  size_t Common(size_t offset) {
    const uint8_t* p = bytes_.data() + offset;
    const size_t available = bytes_.size() - offset;
    const uint8_t head = p[0];
    if (head == 0xff) {
      Break();
      return 1;
    }
    const uint8_t major = head >> 5;
    const uint8_t info = head & 0x1f;
    if (info == 31) {  // indefinite: only containers here
      if (major == 4 || major == 5) {
        Start(major == 5, true, 0);
        return 1;
      }
      return 0;
    }
    if (major != 0 && major != 3 && major != 4 && major != 5) return 0;
    if (info > 27) return 0;  // reserved: libcbor's error
    size_t length = info < 24 ? 0 : size_t{1} << (info - 24);
    if (length >= available) return 0;
    uint64_t argument = info;
    if (length > 0) {
      argument = 0;
      for (size_t i = 1; i <= length; ++i) argument = argument << 8 | p[i];
    }
    size_t read = 1 + length;
    switch (major) {
      case 0:
        Unsigned(argument);
        return read;
      case 3: {
        if (argument > available - read) return 0;
        Text(p + read, static_cast<size_t>(argument));
        return read + static_cast<size_t>(argument);
      }
      default:
        Start(major == 5, false, static_cast<size_t>(argument));
        return read;
    }
  }

  void Fail(size_t offset, std::string_view message) {
    builder_.Fail(MakeError("byte {}: {}", offset, message));
  }
  void Fail(std::string_view message) { Fail(item_offset_, message); }

  bool AtKey() const { return !stack_.empty() && stack_.back().map && stack_.back().at_key; }

  // Checks that a non-text item may stand here.
  bool NotText() {
    if (in_string_) {
      Fail("a chunk of an indefinite-length text string is not a text string");
      return false;
    }
    if (AtKey()) {
      Fail("map key is not a text string");
      return false;
    }
    return true;
  }

  // After a complete item: advance the enclosing containers, closing the
  // definite ones it fills (each closed container completes its parent's item).
  void Done() {
    while (!builder_.failed() && !stack_.empty()) {
      Container& top = stack_.back();
      if (top.map) top.at_key = !top.at_key;
      if (top.indefinite || --top.remaining > 0) return;
      bool map = top.map;
      stack_.pop_back();
      map ? builder_.end_object() : builder_.end_array();
    }
  }

  void Unsigned(uint64_t value) {
    if (!NotText()) return;
    builder_.number_unsigned(value);
    Done();
  }
  void Negative(uint64_t n) {  // the value -1 - n
    if (!NotText()) return;
    if (n <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      builder_.number_integer(-1 - static_cast<int64_t>(n));
    } else {
      builder_.number_float(-1.0 - static_cast<double>(n), kNoText);
    }
    Done();
  }
  void Float(double value) {
    if (!NotText()) return;
    builder_.number_float(value, kNoText);
    Done();
  }
  void Boolean(bool value) {
    if (!NotText()) return;
    builder_.boolean(value);
    Done();
  }
  void Null() {
    if (!NotText()) return;
    builder_.null();
    Done();
  }
  void Text(const unsigned char* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    if (in_string_) {
      chunks_.append(text);
      return;
    }
    if (AtKey()) {  // the commonest item: no copy unless the builder keeps it
      if (!IsUtf8(text)) return Fail("text string is not valid UTF-8");
      builder_.key(text);
      return Done();
    }
    text_.assign(text);  // one buffer for every value; the builder may take it
    Deliver(text_);
  }
  static bool IsUtf8(std::string_view text) {
    for (char c : text)
      if (static_cast<unsigned char>(c) >= 0x80) return schema::IsValidUtf8(text);
    return true;
  }
  void Deliver(std::string& text) {
    if (!IsUtf8(text)) return Fail("text string is not valid UTF-8");
    if (AtKey()) {
      builder_.key(text);
    } else {
      builder_.string(text);
    }
    Done();
  }
  void TextStart() {
    if (in_string_) return Fail("an indefinite-length text string nested in another");
    in_string_ = true;
    chunks_.clear();
  }
  void Start(bool map, bool indefinite, size_t size) {
    if (!NotText()) return;
    map ? builder_.start_object(size) : builder_.start_array(size);
    if (builder_.failed()) return;
    if (!indefinite && size == 0) {
      map ? builder_.end_object() : builder_.end_array();
      return Done();
    }
    uint64_t items = size;
    if (map) {
      if (items > std::numeric_limits<uint64_t>::max() / 2) return Fail("map too large");
      items *= 2;
    }
    stack_.push_back(Container{map, indefinite, items});
  }
  void Break() {
    if (in_string_) {
      in_string_ = false;
      return Deliver(chunks_);
    }
    if (stack_.empty() || !stack_.back().indefinite)
      return Fail("break outside an indefinite-length item");
    if (stack_.back().map && !stack_.back().at_key)
      return Fail("map ends between a key and its value");
    bool map = stack_.back().map;
    stack_.pop_back();
    map ? builder_.end_object() : builder_.end_array();
    Done();
  }

  static CborReader& Self(void* context) { return *static_cast<CborReader*>(context); }

  static const cbor_callbacks& Callbacks() {
    static const cbor_callbacks callbacks = [] {
      cbor_callbacks c = cbor_empty_callbacks;
      c.uint8 = [](void* x, uint8_t v) { Self(x).Unsigned(v); };
      c.uint16 = [](void* x, uint16_t v) { Self(x).Unsigned(v); };
      c.uint32 = [](void* x, uint32_t v) { Self(x).Unsigned(v); };
      c.uint64 = [](void* x, uint64_t v) { Self(x).Unsigned(v); };
      c.negint8 = [](void* x, uint8_t v) { Self(x).Negative(v); };
      c.negint16 = [](void* x, uint16_t v) { Self(x).Negative(v); };
      c.negint32 = [](void* x, uint32_t v) { Self(x).Negative(v); };
      c.negint64 = [](void* x, uint64_t v) { Self(x).Negative(v); };
      c.byte_string_start = [](void* x) { Self(x).Fail("unexpected byte string"); };
      c.byte_string = [](void* x, cbor_data, size_t) { Self(x).Fail("unexpected byte string"); };
      c.string = [](void* x, cbor_data data, size_t size) { Self(x).Text(data, size); };
      c.string_start = [](void* x) { Self(x).TextStart(); };
      c.indef_array_start = [](void* x) { Self(x).Start(false, true, 0); };
      c.array_start = [](void* x, size_t size) { Self(x).Start(false, false, size); };
      c.indef_map_start = [](void* x) { Self(x).Start(true, true, 0); };
      c.map_start = [](void* x, size_t size) { Self(x).Start(true, false, size); };
      // Tags (the self-describing 55799 among them) carry nothing we read.
      c.tag = [](void*, uint64_t) {};
      c.float2 = [](void* x, float v) { Self(x).Float(v); };
      c.float4 = [](void* x, float v) { Self(x).Float(v); };
      c.float8 = [](void* x, double v) { Self(x).Float(v); };
      c.undefined = [](void* x) { Self(x).Fail("unexpected undefined"); };
      c.null = [](void* x) { Self(x).Null(); };
      c.boolean = [](void* x, bool v) { Self(x).Boolean(v); };
      c.indef_break = [](void* x) { Self(x).Break(); };
      return c;
    }();
    return callbacks;
  }

  static inline const std::string kNoText;

  std::span<const uint8_t> bytes_;
  schema::DocumentBuilder& builder_;
  std::vector<Container> stack_;
  size_t item_offset_ = 0;
  bool in_string_ = false;
  std::string chunks_;
  std::string text_;
};

}  // namespace

std::string WriteCborReport(const ReportDocument& document) {
  std::string out;
  CborEmitter emitter(out);
  emitter.Tag(kSelfDescribeTag);
  schema::Encode(document, emitter);
  return out;
}

Status WriteCborReportFile(const std::string& path, const ReportDocument& document) {
  return WriteFileAtomic(path, WriteCborReport(document));
}

Expected<ReportDocument> ReadCborReport(std::span<const uint8_t> bytes, std::string_view filename) {
  schema::DocumentBuilder builder;
  try {
    CborReader(bytes, builder).Run();
  } catch (const std::exception& e) {
    builder.Fail(Error(e.what()));
  }
  Expected<ReportDocument> document = builder.Finish();
  if (!document) return document.error().Within(filename);
  return document;
}

Expected<ReportDocument> ReadCborReportFile(const std::string& path) {
  Expected<MappedFile> file = MappedFile::Open(path);
  if (!file) return file.error().Within(path);
  return ReadCborReport(file->bytes(), path);
}

}  // namespace tileprof::report
