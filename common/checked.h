// Overflow-checked unsigned arithmetic for sizes and offsets read from
// untrusted input (the CVE-2018-6323 class: section-table arithmetic that
// wraps around and passes a bounds check).
#pragma once

#include <cstdint>
#include <optional>

namespace tileprof {

inline std::optional<uint64_t> CheckedAdd(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<uint64_t> CheckedMul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// True when [offset, offset + length) lies inside a buffer of `size` bytes,
// without overflowing.
inline bool InBounds(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

}  // namespace tileprof
