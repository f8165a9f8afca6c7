#include "reports/text_scan.h"

#include <charconv>
#include <cmath>
#include <string>

#include "common/format.h"
#include "reports/text_input.h"

namespace tileprof::report {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Validates "1,234,567" / "1234567" and returns the digits without commas.
std::optional<std::string> StripThousands(std::string_view text) {
  if (text.empty() || !IsDigit(text.front()) || !IsDigit(text.back())) return std::nullopt;
  bool has_commas = text.find(',') != std::string_view::npos;
  std::string digits;
  digits.reserve(text.size());
  size_t since_comma = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (IsDigit(c)) {
      digits.push_back(c);
      ++since_comma;
    } else if (c == ',') {
      // The first group has 1-3 digits, every later one exactly 3.
      bool first_group = digits.size() == since_comma;
      if (since_comma == 0 || since_comma > 3 || (!first_group && since_comma != 3))
        return std::nullopt;
      since_comma = 0;
    } else {
      return std::nullopt;
    }
  }
  if (has_commas && since_comma != 3) return std::nullopt;
  return digits;
}

// The magnitude a BinarySize text shows, comparable across units:
// (unit index, value in tenths). "100 B" -> (0, 1000), "256.0 kB" -> (1, 2560).
using SizeKey = std::pair<int, uint64_t>;

std::optional<SizeKey> KeyOf(std::string_view text) {
  static constexpr std::string_view kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  size_t space = text.rfind(' ');
  if (space == std::string_view::npos) return std::nullopt;
  std::string_view unit = text.substr(space + 1);
  std::string_view number = text.substr(0, space);
  for (int i = 0; i < static_cast<int>(std::size(kUnits)); ++i) {
    if (unit != kUnits[i]) continue;
    size_t point = number.find('.');
    std::optional<std::string> integral = StripThousands(number.substr(0, point));
    std::string_view fraction = point == std::string_view::npos ? "0" : number.substr(point + 1);
    if (!integral || fraction.size() != 1 || !IsDigit(fraction[0]) || integral->size() > 17)
      return std::nullopt;
    return SizeKey{i, std::stoull(*integral) * 10 + static_cast<uint64_t>(fraction[0] - '0')};
  }
  return std::nullopt;
}

}  // namespace

std::string Quoted(std::string_view token) {
  constexpr size_t kMaxShownToken = 40;
  if (token.size() > kMaxShownToken)
    return "'" + EscapeControls(token.substr(0, kMaxShownToken)) + "...'";
  return "'" + EscapeControls(token) + "'";
}

std::string_view Trim(std::string_view text) {
  size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  size_t end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

std::string_view TrimRight(std::string_view text) {
  size_t end = text.find_last_not_of(" \t");
  return end == std::string_view::npos ? std::string_view() : text.substr(0, end + 1);
}

bool ConsumePrefix(std::string_view& text, std::string_view prefix) {
  if (!text.starts_with(prefix)) return false;
  text.remove_prefix(prefix.size());
  return true;
}

bool ConsumeSuffix(std::string_view& text, std::string_view suffix) {
  if (!text.ends_with(suffix)) return false;
  text.remove_suffix(suffix.size());
  return true;
}

std::optional<uint64_t> ParseCount(std::string_view text) {
  std::optional<std::string> digits = StripThousands(text);
  if (!digits) return std::nullopt;
  uint64_t value = 0;
  const char* end = digits->data() + digits->size();
  auto [ptr, ec] = std::from_chars(digits->data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;  // out of range
  return value;
}

std::optional<double> ParseDecimal(std::string_view text) {
  size_t point = text.find('.');
  std::optional<std::string> integral = StripThousands(text.substr(0, point));
  if (!integral) return std::nullopt;
  std::string number = *integral;
  if (point != std::string_view::npos) {
    std::string_view fraction = text.substr(point + 1);
    if (fraction.empty()) return std::nullopt;
    for (char c : fraction)
      if (!IsDigit(c)) return std::nullopt;
    number += '.';
    number += fraction;
  }
  double value = 0;
  const char* end = number.data() + number.size();
  auto [ptr, ec] = std::from_chars(number.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<uint64_t> ParseBinarySize(std::string_view text) {
  static constexpr std::string_view kUnits[] = {"kB", "MB", "GB", "TB", "PB", "EB"};
  size_t space = text.rfind(' ');
  if (space == std::string_view::npos) return std::nullopt;
  std::string_view number = text.substr(0, space);
  std::string_view unit = text.substr(space + 1);
  if (unit == "B") return ParseCount(number);
  double multiplier = 1;
  bool found = false;
  for (std::string_view candidate : kUnits) {
    multiplier *= 1024;
    if (unit == candidate) {
      found = true;
      break;
    }
  }
  if (!found) return std::nullopt;
  std::optional<double> value = ParseDecimal(number);
  if (!value) return std::nullopt;
  // 2^64 exactly as a double; anything at or above does not fit.
  constexpr double kLimit = 18446744073709551616.0;
  double nearest = std::round(*value * multiplier);
  if (nearest < kLimit && BinarySize(static_cast<uint64_t>(nearest)) == text)
    return static_cast<uint64_t>(nearest);
  // Otherwise `text` was rounded (up into this unit's last step, as
  // "1,024.0 kB" and "16.0 EB" are, or across a floating-point tie): take the
  // smallest value that prints as `text`. BinarySize is monotonic, so a binary
  // search over its printed magnitude finds it.
  std::optional<SizeKey> target = KeyOf(text);
  if (!target) {  // not as BinarySize prints ("256.00 kB"): the nearest will do
    if (nearest < kLimit) return static_cast<uint64_t>(nearest);
    return std::nullopt;
  }
  uint64_t lo = 0;
  uint64_t hi = UINT64_MAX;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (KeyOf(BinarySize(mid)).value_or(SizeKey{}) < *target) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (BinarySize(lo) == text) return lo;
  if (nearest < kLimit) return static_cast<uint64_t>(nearest);
  return std::nullopt;
}

}  // namespace tileprof::report
