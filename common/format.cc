#include "common/format.h"

#include <cmath>

#include <fmt/format.h>

namespace tileprof {
namespace {

// Inserts a ',' every three digits into a run of decimal digits.
std::string GroupDigits(std::string_view digits) {
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

}  // namespace

std::string WithThousands(uint64_t value) { return GroupDigits(fmt::format("{}", value)); }

std::string WithThousands(int64_t value) {
  if (value >= 0) return WithThousands(static_cast<uint64_t>(value));
  // Negate in unsigned arithmetic so INT64_MIN does not overflow.
  return "-" + WithThousands(uint64_t{0} - static_cast<uint64_t>(value));
}

std::string WithThousands(double value, int decimals) {
  if (!std::isfinite(value)) return fmt::format("{}", value);
  std::string text = fmt::format("{:.{}f}", std::fabs(value), decimals);
  size_t point = text.find('.');
  std::string integral = text.substr(0, point);
  std::string rest = point == std::string::npos ? "" : text.substr(point);
  // A value that rounds to zero prints without a sign ("0.0", not "-0.0").
  bool negative = value < 0 && text.find_first_of("123456789") != std::string::npos;
  return (negative ? "-" : "") + GroupDigits(integral) + rest;
}

std::string BinarySize(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"kB", "MB", "GB", "TB", "PB", "EB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes) / 1024.0;
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{} {}", WithThousands(value, 1), kUnits[unit]);
}

std::string KibiK(uint64_t bytes) {
  return WithThousands(static_cast<double>(bytes) / 1024.0, 1) + " K";
}

}  // namespace tileprof
