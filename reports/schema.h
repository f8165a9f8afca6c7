// The structured report schema (docs/report-schema.md), shared by the JSON
// and CBOR codecs so that the two encodings cannot drift apart: one encoder
// walks the structs and drives an Emitter (a JSON or CBOR byte writer); one
// DocumentBuilder consumes value events in nlohmann's SAX shape, fed either
// by nlohmann::json::sax_parse or by a libcbor stream decoder.
//
// Reading streams: the large arrays (tiles, variables, vertex types, compute
// sets, programs, execution steps) are decoded one element at a time and the
// element's tree is dropped, so peak memory is the structs plus one element
// plus the small remainder of the document, never a DOM of the whole file.
// Elements that arrive before "format" and "version" (a key-sorted file) are
// held until the version is known, because their meaning depends on it.
//
// Internal to reports/: the public entry points are json_codec.h and
// cbor_codec.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "reports/report.h"
#include "reports/report_document.h"

namespace tileprof::report::schema {

// Machine names for the enums that have no spec-given ones (categories use
// CategoryMachineName): "nonInterleaved", "edgePointers", "ipuExchange".
std::string_view RegionName(Region region);
std::string_view VertexDataCategoryName(VertexDataCategory category);
std::string_view CycleKindName(CycleKind kind);

// JSON and CBOR text strings must be UTF-8; names read from a text report
// may not be. Invalid bytes become U+FFFD, so such names are the one thing a
// text-to-JSON/CBOR conversion changes.
bool IsValidUtf8(std::string_view text);
std::string ToValidUtf8(std::string_view text);

// ---------------------------------------------------------------------------
// Writing.

class Emitter {
 public:
  virtual ~Emitter() = default;
  virtual void BeginObject() = 0;
  virtual void EndObject() = 0;
  // Arrays know their size up front (CBOR writes it); objects do not, since
  // members are left out when empty or unknown.
  virtual void BeginArray(size_t size) = 0;
  virtual void EndArray() = 0;
  virtual void Key(std::string_view key) = 0;
  virtual void Uint(uint64_t value) = 0;
  virtual void Double(double value) = 0;
  virtual void String(std::string_view utf8) = 0;  // always valid UTF-8
  virtual void Bool(bool value) = 0;
};

void Encode(const ReportDocument& document, Emitter& out);

// ---------------------------------------------------------------------------
// Reading.

// Receives value events and builds a ReportDocument. The SAX member
// functions return false once an error is recorded, which stops the parser.
// Error messages name the JSON path ("compilation.tiles[12].categories.stack:
// expected an unsigned integer"); drivers add the file and, for syntax
// errors, the position.
class DocumentBuilder {
 public:
  using json = nlohmann::json;

  DocumentBuilder();
  ~DocumentBuilder();
  DocumentBuilder(const DocumentBuilder&) = delete;
  DocumentBuilder& operator=(const DocumentBuilder&) = delete;

  // nlohmann::json_sax interface.
  bool null();
  bool boolean(bool value);
  bool number_integer(json::number_integer_t value);
  bool number_unsigned(json::number_unsigned_t value);
  bool number_float(json::number_float_t value, const json::string_t& text);
  bool string(json::string_t& value);
  bool binary(json::binary_t& value);
  bool start_object(std::size_t size);
  bool key(json::string_t& key);
  // The same for a key that is not in a std::string already (CBOR's).
  bool key(std::string_view key);
  bool end_object();
  bool start_array(std::size_t size);
  bool end_array();
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& error);

  // For drivers that detect errors themselves (malformed CBOR).
  void Fail(Error error);
  // Inline: a driver asks after every item.
  bool failed() const { return error_->has_value(); }
  // Whether the error came from parse_error: its message starts with a
  // position ("3:14: ..."), which drivers join to the file name with ':'.
  bool syntax_error() const;
  // Whether a complete top-level value has been seen.
  bool done() const;

  // After the last event: the document, or the first error.
  Expected<ReportDocument> Finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
  const std::optional<Error>* error_;  // the state's first error
};

}  // namespace tileprof::report::schema
