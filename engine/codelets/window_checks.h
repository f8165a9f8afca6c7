// Internal to engine/codelets: what the window codelets (window.cc,
// reduce_window.cc) share in reading and checking their parameters.
#pragma once

#include <cstdint>
#include <string_view>

#include <fmt/format.h>

#include "common/expected.h"

namespace tileprof::engine::window {

inline constexpr uint32_t kMaxRank = 16;

// A signed parameter, stored as 32-bit two's complement.
inline int64_t Signed(uint32_t bits) { return static_cast<int32_t>(bits); }

// Error unless a box field holds its box's elements.
inline Status CheckBoxField(std::string_view field, uint64_t elements, uint64_t box) {
  if (elements != box)
    return MakeError("field '{}' has {} elements, its box has {}", field, elements, box);
  return {};
}

// Error unless the output run [first, first + count) lies inside the result.
inline Status CheckOutputRun(uint64_t first, uint64_t count, uint64_t total) {
  if (first > total || count > total - first) {
    return MakeError("field 'out' has {} elements from element {}, beyond the {} of the result",
                     count, first, total);
  }
  return {};
}

}  // namespace tileprof::engine::window
