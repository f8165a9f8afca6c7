#include "reports/schema_tile_decoder.h"

#include <limits>
#include <type_traits>

#include "reports/schema_tables.h"

namespace tileprof::report::schema::internal {
namespace {

// The keys of a tile, a region and a vertex type (report.h's tables); the
// tile's Slots are the structure this decoder walks.
constexpr auto kTileKeys = EntryNames<TileMemory>();
constexpr auto kRegionKeys = EntryNames<RegionBytes>();
constexpr auto kVertexTypeKeys = EntryNames<VertexTypeBytes>();
constexpr int kCategories = static_cast<int>(EntryIndex<TileMemory>("categories"));
constexpr int kRegions = static_cast<int>(EntryIndex<TileMemory>("regions"));
constexpr int kVertexData = static_cast<int>(EntryIndex<TileMemory>("vertexData"));
constexpr int kVertexTypes = static_cast<int>(EntryIndex<TileMemory>("vertexTypes"));
static_assert(kVertexTypes < static_cast<int>(kTileKeys.size()), "a tile Slot is missing");
static_assert(!HasSlots<RegionBytes>() && !HasSlots<VertexTypeBytes>());
static_assert(kTileKeys.size() <= 32 && kRegionKeys.size() <= 32 && kVertexTypeKeys.size() <= 32,
              "seen bits");

// The bits of the keys a reader requires, of a record with no Slots or of
// a tile (whose Slots are never required).
template <typename Record>
constexpr uint32_t RequiredKeys() {
  uint32_t bits = 0;
  size_t i = 0;
  ForEachEntry<Record>([&](const auto& entry) {
    if constexpr (kIsKey<std::remove_cvref_t<decltype(entry)>>) {
      using Member = MemberOf<decltype(entry)>;
      if (entry.presence == Presence::kRequired && !OptionalValue<Member>::kOptional)
        bits |= 1u << i;
    }
    ++i;
  });
  return bits;
}

// Stores an unsigned integer into the scalar key at `index` of `record`;
// false when that entry is a Slot or not an integer, or the value does not
// fit a 32-bit member.
template <typename Record>
bool StoreUint(Record& record, int index, uint64_t value) {
  bool stored = false;
  VisitEntry<Record>(static_cast<size_t>(index), [&](const auto& entry) {
    if constexpr (kIsKey<std::remove_cvref_t<decltype(entry)>>) {
      using Value = typename OptionalValue<MemberOf<decltype(entry)>>::type;
      if constexpr (std::is_same_v<Value, uint64_t>) {
        record.*entry.member = value;
        stored = true;
      } else if constexpr (std::is_same_v<Value, uint32_t>) {
        if (value <= std::numeric_limits<uint32_t>::max()) {
          record.*entry.member = static_cast<uint32_t>(value);
          stored = true;
        }
      }
    }
  });
  return stored;
}

// The index of `key` in `names`, or -1. Keys come in the writer's order,
// so the search starts after the previous key of the object (`after`).
template <typename Names>
int IndexOf(const Names& names, std::string_view key, int after) {
  const size_t n = std::size(names);
  size_t start = after < 0 ? 0 : static_cast<size_t>(after) + 1;
  for (size_t k = 0; k < n; ++k) {
    size_t i = (start + k) % n;
    if (names[i] == key) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

void TileDecoder::Begin() {
  tile_ = TileMemory{};
  events_.clear();
  at_ = At::kTile;
  key_ = -1;
  last_key_ = -1;
  seen_tile_ = 0;
  Accept(Event::Kind::kStartObject);
}

TileDecoder::Result TileDecoder::Key(std::string_view key) {
  if (key_ != -1) return Result::kBail;
  int index = -1;
  // A key repeated in one object is the general path's error to report.
  auto take = [&](const auto& names, uint32_t& seen) {
    index = IndexOf(names, key, last_key_);
    if (index < 0 || (seen & (1u << index)) != 0) return false;
    seen |= 1u << index;
    return true;
  };
  bool ok = false;
  switch (at_) {
    case At::kTile:
      ok = take(kTileKeys, seen_tile_);
      break;
    case At::kCategories:
      ok = take(CategoryNames(), seen_);
      break;
    case At::kRegions:
      ok = take(kRegionNames, seen_regions_);
      break;
    case At::kRegion:
      ok = take(kRegionKeys, seen_);
      break;
    case At::kVertexData:
      ok = take(kVertexDataNames, seen_);
      break;
    case At::kVertexType:
      ok = take(kVertexTypeKeys, seen_);
      break;
    case At::kVertexTypes:
      break;
  }
  if (!ok) return Result::kBail;
  key_ = index;
  last_key_ = index;
  return Accept(Event::Kind::kKey, static_cast<uint64_t>(at_) << 8 | static_cast<uint64_t>(index));
}

std::string_view TileDecoder::KeyName(uint64_t key) {
  auto index = static_cast<size_t>(key & 0xff);
  switch (static_cast<At>(key >> 8)) {
    case At::kTile:
      return kTileKeys[index];
    case At::kCategories:
      return CategoryNames()[index];
    case At::kRegions:
      return kRegionNames[index];
    case At::kRegion:
      return kRegionKeys[index];
    case At::kVertexData:
      return kVertexDataNames[index];
    case At::kVertexType:
      return kVertexTypeKeys[index];
    case At::kVertexTypes:
      break;
  }
  return {};  // unreachable: Key() records no other
}

TileDecoder::Result TileDecoder::Uint(uint64_t value) {
  if (key_ < 0) return Result::kBail;
  auto slot = static_cast<size_t>(key_);
  switch (at_) {
    case At::kTile:
      if (!StoreUint(tile_, key_, value)) return Result::kBail;
      break;
    case At::kCategories:
      tile_.by_category[slot] = value;
      break;
    case At::kRegion:
      if (!StoreUint(tile_.by_region[region_], key_, value)) return Result::kBail;
      break;
    case At::kVertexData:
      tile_.vertex_data[slot] = value;
      break;
    case At::kVertexType:
      if (!StoreUint(vertex_type_, key_, value)) return Result::kBail;
      break;
    case At::kRegions:
    case At::kVertexTypes:
      return Result::kBail;
  }
  key_ = -1;
  return Accept(Event::Kind::kUint, value);
}

TileDecoder::Result TileDecoder::StartObject() {
  if (at_ == At::kTile && key_ == kCategories) {
    at_ = At::kCategories;
  } else if (at_ == At::kTile && key_ == kRegions) {
    at_ = At::kRegions;
    seen_regions_ = 0;
  } else if (at_ == At::kTile && key_ == kVertexData) {
    at_ = At::kVertexData;
  } else if (at_ == At::kRegions && key_ >= 0) {
    at_ = At::kRegion;
    region_ = static_cast<size_t>(key_);
  } else if (at_ == At::kVertexTypes) {
    at_ = At::kVertexType;
    vertex_type_ = VertexTypeBytes{};
  } else {
    return Result::kBail;
  }
  seen_ = 0;
  key_ = -1;
  last_key_ = -1;
  return Accept(Event::Kind::kStartObject);
}

TileDecoder::Result TileDecoder::StartArray() {
  if (at_ != At::kTile || key_ != kVertexTypes) return Result::kBail;
  at_ = At::kVertexTypes;
  key_ = -1;
  return Accept(Event::Kind::kStartArray);
}

TileDecoder::Result TileDecoder::EndObject() {
  if (key_ != -1) return Result::kBail;
  constexpr uint32_t kTileRequired = RequiredKeys<TileMemory>();
  switch (at_) {
    case At::kTile:
      return (seen_tile_ & kTileRequired) == kTileRequired ? Result::kDone : Result::kBail;
    case At::kCategories:
    case At::kRegions:
    case At::kVertexData:
      last_key_ = at_ == At::kCategories ? kCategories
                  : at_ == At::kRegions  ? kRegions
                                         : kVertexData;
      at_ = At::kTile;
      break;
    case At::kRegion:
      if ((seen_ & RequiredKeys<RegionBytes>()) != RequiredKeys<RegionBytes>())
        return Result::kBail;
      last_key_ = static_cast<int>(region_);
      at_ = At::kRegions;
      break;
    case At::kVertexType:
      if ((seen_ & RequiredKeys<VertexTypeBytes>()) != RequiredKeys<VertexTypeBytes>())
        return Result::kBail;
      tile_.vertex_types.push_back(vertex_type_);
      at_ = At::kVertexTypes;
      break;
    case At::kVertexTypes:
      return Result::kBail;
  }
  return Accept(Event::Kind::kEndObject);
}

TileDecoder::Result TileDecoder::EndArray() {
  if (at_ != At::kVertexTypes) return Result::kBail;
  at_ = At::kTile;
  last_key_ = kVertexTypes;
  return Accept(Event::Kind::kEndArray);
}

}  // namespace tileprof::report::schema::internal
