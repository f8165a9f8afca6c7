// Internal to reports/sqlite_profile_*.cc: the SQLite columns of a record's
// Keys (report_keys.h), in table order — their definitions for CREATE TABLE,
// their names for INSERT and SELECT, and binding a record's values — so a
// new key gets its column without a change here. Types: integers, booleans
// and categories (by id) are INTEGER NOT NULL, strings TEXT NOT NULL,
// doubles REAL (nullable: SQLite stores NaN as NULL), std::optional members
// nullable.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "reports/report.h"
#include "reports/sqlite_db.h"

namespace tileprof::report::sqlite {

// "name TEXT NOT NULL, tile INTEGER NOT NULL, ..., address INTEGER".
// `nullable`: every column may be NULL (a record that may be absent, whose
// columns sit in its parent's row).
template <typename Record>
std::string ColumnDefinitions(bool nullable = false) {
  std::string out;
  ForEachKey<Record>([&](const auto& key) {
    using Member = MemberOf<decltype(key)>;
    using Value = typename OptionalValue<Member>::type;
    if (!out.empty()) out += ", ";
    out += key.column;
    if constexpr (std::is_same_v<Value, std::string>) {
      out += " TEXT";
    } else if constexpr (std::is_same_v<Value, double>) {
      out += " REAL";
    } else {
      static_assert(std::is_integral_v<Value> || std::is_same_v<Value, Category>,
                    "a key type the SQLite profile does not know");
      out += " INTEGER";
    }
    if (!nullable && !OptionalValue<Member>::kOptional && !std::is_same_v<Value, double>)
      out += " NOT NULL";
  });
  return out;
}

// "name, tile, bytes, ...".
template <typename Record>
std::string ColumnNames() {
  std::string out;
  ForEachKey<Record>([&](const auto& key) {
    if (!out.empty()) out += ", ";
    out += key.column;
  });
  return out;
}

// The same for a table of a file that has only `present` of them: an
// optional member's missing column (added to the format later) reads as
// NULL, that is unset.
template <typename Record>
std::string ColumnNames(std::span<const std::string> present) {
  std::string out;
  ForEachKey<Record>([&](const auto& key) {
    if (!out.empty()) out += ", ";
    const bool missing = std::find(present.begin(), present.end(), key.column) == present.end();
    if (OptionalValue<MemberOf<decltype(key)>>::kOptional && missing)
      out += "NULL";
    else
      out += key.column;
  });
  return out;
}

template <typename Record>
constexpr int NumColumns() {
  int n = 0;
  ForEachKey<Record>([&](const auto&) { ++n; });
  return n;
}

// The position of `column` among Record's columns (NumColumns if absent).
template <typename Record>
constexpr int ColumnIndex(std::string_view column) {
  int i = 0;
  int found = -1;
  ForEachKey<Record>([&](const auto& key) {
    if (found < 0 && key.column == column) found = i;
    ++i;
  });
  return found < 0 ? i : found;
}

// "?,?,?" for `n` parameters.
inline std::string Parameters(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += i == 0 ? "?" : ",?";
  return out;
}

// Binds the values of `record`'s keys, in column order; NULL for each when
// `record` is null.
template <typename Record>
void BindColumns(Statement& insert, const Record* record) {
  ForEachKey<Record>([&](const auto& key) {
    using Value = typename OptionalValue<MemberOf<decltype(key)>>::type;
    if (record == nullptr) {
      insert.OptionalUint({});
      return;
    }
    const auto& member = record->*key.member;
    if constexpr (OptionalValue<MemberOf<decltype(key)>>::kOptional) {
      if constexpr (std::is_integral_v<Value>) {
        insert.OptionalUint(member);
      } else {
        static_assert(std::is_integral_v<Value>, "only integers are optional");
      }
    } else if constexpr (std::is_same_v<Value, std::string>) {
      insert.Text(member);
    } else if constexpr (std::is_same_v<Value, double>) {
      insert.Double(member);
    } else if constexpr (std::is_same_v<Value, Category>) {
      insert.Uint(static_cast<uint64_t>(member));
    } else {
      insert.Uint(member);
    }
  });
}

}  // namespace tileprof::report::sqlite
