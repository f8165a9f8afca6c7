// The report-key tables: one declaration per key of the structured report
// formats (docs/report-schema.md). Beside each record struct (report.h,
// histogram.h) a specialisation of Keys<Record> lists its members in the
// order the JSON/CBOR encoder writes them: a Key for a scalar member (its
// JSON/CBOR name, its SQLite column, whether a reader requires it) and a Slot
// for a member that holds structure (a list, a nested record, an array
// keyed by category), which the codecs write by hand in that place.
//
//   template <> struct Keys<GraphInfo> {
//     static constexpr std::tuple kAll{
//         Key{"numVertices", "num_vertices", &GraphInfo::num_vertices}, ...};
//   };
//
// The encoder (schema.cc), the tree decoder (schema_decode.cc), the
// streaming tile and variable decoders and the SQLite profile
// (sqlite_profile_*.cc, sqlite_columns.h) take names and types from these
// tables, so a new scalar member is its declaration and its row, and every
// format carries it (tests/reports/report_keys_test.cc round-trips every
// key). Why member pointers rather than Perfetto's X-macros: the type of a
// key is its member's, so the table cannot disagree with the struct, and
// the structs keep their declarations, comments and defaults as they are.
//
// Key types: uint32_t, uint64_t, double, bool, std::string, Category (by
// machine name in JSON/CBOR, by id in SQLite), and std::optional of the
// integers, which is written only when set and read as unset when missing.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace tileprof::report {

enum class Presence : uint8_t {
  kRequired,   // a reader fails when the key is missing
  kDefaulted,  // a missing key reads as the member's default
};

template <typename Record, typename Member>
struct Key {
  using RecordType = Record;
  using MemberType = Member;

  std::string_view name;    // JSON/CBOR: "numVertices"
  std::string_view column;  // SQLite: "num_vertices"
  Member Record::*member;
  Presence presence = Presence::kRequired;
};
template <typename Record, typename Member>
Key(std::string_view, std::string_view, Member Record::*) -> Key<Record, Member>;
template <typename Record, typename Member>
Key(std::string_view, std::string_view, Member Record::*, Presence) -> Key<Record, Member>;

// A member the codecs write by hand, at this place in the key order.
struct Slot {
  std::string_view name;
};

// Specialised beside each record: `static constexpr std::tuple kAll{...}`.
template <typename Record>
struct Keys;

template <typename T>
inline constexpr bool kIsKey = false;
template <typename Record, typename Member>
inline constexpr bool kIsKey<Key<Record, Member>> = true;

template <typename T>
struct OptionalValue {
  using type = T;
  static constexpr bool kOptional = false;
};
template <typename T>
struct OptionalValue<std::optional<T>> {
  using type = T;
  static constexpr bool kOptional = true;
};

// The member type of a Key given as `key` (a Key or a reference to one).
template <typename K>
using MemberOf = typename std::remove_cvref_t<K>::MemberType;

// Calls f(entry) for every Key and Slot of Record's table, in order.
template <typename Record, typename F>
constexpr void ForEachEntry(F&& f) {
  std::apply([&](const auto&... entry) { (f(entry), ...); }, Keys<Record>::kAll);
}

// Calls f(key) for every Key (not Slot) of Record's table, in order.
template <typename Record, typename F>
constexpr void ForEachKey(F&& f) {
  ForEachEntry<Record>([&](const auto& entry) {
    if constexpr (kIsKey<std::remove_cvref_t<decltype(entry)>>) f(entry);
  });
}

template <typename Record>
inline constexpr size_t kNumEntries =
    std::tuple_size_v<std::remove_cv_t<decltype(Keys<Record>::kAll)>>;

// Whether Record's table has Slots (members the codecs write by hand).
template <typename Record>
constexpr bool HasSlots() {
  bool slots = false;
  ForEachEntry<Record>([&](const auto& entry) {
    if constexpr (!kIsKey<std::remove_cvref_t<decltype(entry)>>) slots = true;
  });
  return slots;
}

// The names of Record's entries, Keys and Slots, in table order.
template <typename Record>
constexpr std::array<std::string_view, kNumEntries<Record>> EntryNames() {
  std::array<std::string_view, kNumEntries<Record>> names{};
  size_t i = 0;
  ForEachEntry<Record>([&](const auto& entry) { names[i++] = entry.name; });
  return names;
}

// The position of `name` in Record's table (kNumEntries<Record> if absent).
template <typename Record>
constexpr size_t EntryIndex(std::string_view name) {
  constexpr auto kNames = EntryNames<Record>();
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return i;
  return kNames.size();
}

// Calls f(entry) for the entry at `index` (a Key or a Slot).
template <typename Record, typename F>
constexpr void VisitEntry(size_t index, F&& f) {
  size_t i = 0;
  ForEachEntry<Record>([&](const auto& entry) {
    if (i++ == index) f(entry);
  });
}

}  // namespace tileprof::report
