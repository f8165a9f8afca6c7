// Number and size scanning for the text report reader: the inverses of
// common/format.h (WithThousands, BinarySize). Every function accepts exactly
// the token (no surrounding text) and returns nullopt for anything else, so
// the reader can say which token was malformed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tileprof::report {

// Whitespace is spaces and tabs; CR is removed by the line splitter.
std::string_view Trim(std::string_view text);
std::string_view TrimRight(std::string_view text);

// Removes `prefix` / `suffix` from `text` if present; says whether it did.
bool ConsumePrefix(std::string_view& text, std::string_view prefix);
bool ConsumeSuffix(std::string_view& text, std::string_view suffix);

// A token for an error message: quoted, cut after 40 characters, control
// characters escaped.
std::string Quoted(std::string_view token);

// "1,216", "1216", "0". Commas, if any, must separate groups of three.
// Rejects signs, blanks, and values beyond 2^64 - 1.
std::optional<uint64_t> ParseCount(std::string_view text);

// "1,600.0", "3,801.8", "0.1", "12": a non-negative decimal with optional
// thousands separators in the integral part.
std::optional<double> ParseDecimal(std::string_view text);

// The inverse of BinarySize: "100 B" -> 100, "256.0 kB" -> 262,144,
// "897.0 MB" -> 940,572,672. A rounded size maps to value x unit when that
// prints back as `text`, else (the text was rounded up, as "1,024.0 kB" is
// for 1,048,525 B) to the smallest value that does, so reading what
// BinarySize printed always gives a value that prints the same. nullopt for
// other units and for sizes no 64-bit value prints as.
std::optional<uint64_t> ParseBinarySize(std::string_view text);

}  // namespace tileprof::report
