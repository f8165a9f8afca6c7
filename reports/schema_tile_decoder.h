// Internal to reports/schema_decode.cc: decodes one element of
// compilation.tiles straight from value events into a TileMemory.
//
// Why: the general path builds each element as a nlohmann tree (a std::map
// per object, a std::string per key) and decodes the tree; for a report of
// 94,208 tiles that was most of the reading time of JSON and CBOR alike.
// This decoder accepts only the well-formed shape the writer produces, and
// gives up (kBail) at the first event it does not expect: an unknown or
// repeated key, a value of another type, a missing required member. The
// caller then replays the accepted events into the general path and carries
// on there, so every error is found and worded exactly as before.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "reports/report.h"

namespace tileprof::report::schema::internal {

class TileDecoder {
 public:
  enum class Result { kMore, kDone, kBail };

  // 16 bytes, since a tile has some sixty of them.
  struct Event {
    enum class Kind : uint8_t { kStartObject, kEndObject, kStartArray, kEndArray, kKey, kUint };
    Kind kind;
    uint64_t value = 0;  // for kUint; for kKey, KeyName's argument
  };
  static std::string_view KeyName(uint64_t key);

  // After the tile's opening event (already accepted).
  void Begin();

  Result StartObject();
  Result EndObject();
  Result StartArray();
  Result EndArray();
  Result Key(std::string_view key);
  Result Uint(uint64_t value);

  // After kDone.
  TileMemory& tile() { return tile_; }
  // After kBail: the events accepted since Begin(), the tile's opening
  // first; the event that bailed is not among them.
  std::span<const Event> events() const { return events_; }

 private:
  // Where the next event lands.
  enum class At : uint8_t {
    kTile,
    kCategories,
    kRegions,
    kRegion,
    kVertexData,
    kVertexTypes,
    kVertexType
  };

  Result Accept(Event::Kind kind, uint64_t value = 0) {
    events_.push_back(Event{kind, value});
    return Result::kMore;
  }

  TileMemory tile_;
  std::vector<Event> events_;
  At at_ = At::kTile;
  int key_ = -1;            // the member whose value comes next, or -1
  int last_key_ = -1;       // the previous member of the current object, a search hint
  uint32_t seen_ = 0;       // members seen in the current object (bit per key)
  uint32_t seen_tile_ = 0;  // members seen in the tile object itself
  uint32_t seen_regions_ = 0;
  size_t region_ = 0;
  VertexTypeBytes vertex_type_;
};

}  // namespace tileprof::report::schema::internal
