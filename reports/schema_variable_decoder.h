// Internal to reports/schema_decode.cc: decodes one element of
// compilation.variables straight from value events into a Variable.
//
// Keys, types and required members come from Keys<Variable> (report.h).
//
// Why: the general path builds each element as a nlohmann tree (a std::map
// and a std::string per member); mobilenet_v2's report lists 44,000 largest
// variables, and their trees were most of the time of a cache hit of
// `tileprof compile`. Like the tile decoder (schema_tile_decoder.h), this
// accepts only the well-formed shape the writer produces and gives up
// (kBail) at the first event it does not expect: an unknown or repeated key,
// a value of another type, an unknown category, a missing required member.
// The caller then replays the accepted events into the general path, so
// every error is found and worded exactly as before.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reports/report.h"

namespace tileprof::report::schema::internal {

class VariableDecoder {
 public:
  enum class Result { kMore, kDone, kBail };

  struct Event {
    enum class Kind : uint8_t { kStartObject, kKey, kUint, kString, kBool };
    Kind kind;
    // kKey: KeyName's argument; kUint, kBool: the value; kString: the
    // member it was given for (the text is kept in the decoder).
    uint64_t value = 0;
  };
  static std::string_view KeyName(uint64_t key);

  // After the element's opening event (already accepted).
  void Begin();

  Result Key(std::string_view key);
  Result Uint(uint64_t value);
  Result String(std::string& value);
  Result Bool(bool value);
  Result EndObject();

  // After kDone.
  Variable& variable() { return variable_; }
  // After kBail: the events accepted since Begin(), the opening first; the
  // event that bailed is not among them.
  std::span<const Event> events() const { return events_; }
  // The text of a kString event.
  const std::string& Text(const Event& event) const;

 private:
  Result Accept(Event::Kind kind, uint64_t value) {
    events_.push_back(Event{kind, value});
    return Result::kMore;
  }

  Variable variable_;
  // The text of each Category key (its member holds the enum).
  std::array<std::string, kNumEntries<Variable>> category_texts_;
  std::vector<Event> events_;
  int key_ = -1;       // the member whose value comes next, or -1
  uint32_t seen_ = 0;  // members seen (bit per key)
};

}  // namespace tileprof::report::schema::internal
