// Internal to reports/schema*.cc: the machine names the JSON/CBOR schema
// uses for enums (docs/report-schema.md), shared by the encoder
// (schema.cc) and the decoder (schema_decode.cc).
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "reports/report.h"

namespace tileprof::report::schema::internal {

inline constexpr std::string_view kRegionNames[] = {"nonInterleaved", "interleaved", "overflowed"};
inline constexpr std::string_view kVertexDataNames[] = {"internalVertexState", "edgePointers",
                                                        "copyPointers", "padding", "descriptors"};
inline constexpr std::string_view kCycleKindNames[] = {
    "computeIncludingIdle", "computeExcludingIdle", "ipuExchange",
    "globalExchange",       "hostExchange",         "sync"};
static_assert(std::size(kRegionNames) == kNumRegions);
static_assert(std::size(kVertexDataNames) == kNumVertexDataCategories);
static_assert(std::size(kCycleKindNames) == kNumCycleKinds);

inline const std::array<std::string_view, kNumCategories>& CategoryNames() {
  static const auto names = [] {
    std::array<std::string_view, kNumCategories> out;
    for (size_t i = 0; i < kNumCategories; ++i)
      out[i] = CategoryMachineName(static_cast<Category>(i));
    return out;
  }();
  return names;
}

// Deeper than anything the schema nests (6 levels), shallow enough that no
// recursion over a tree can exhaust the stack.
inline constexpr size_t kMaxDepth = 64;

}  // namespace tileprof::report::schema::internal
