// Internal to the contraction planner: what its cost model (conv_plan.cc)
// and its search (conv_search.cc) share.
#pragma once

#include <array>
#include <cstdint>
#include <limits>

#include "engine/compiler/conv_plan.h"

namespace tileprof::engine::compiler::plan_internal {

inline constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

inline uint64_t CeilDiv(uint64_t a, uint64_t b) { return b == 0 ? 0 : (a + b - 1) / b; }

// Saturating: a product or sum past 2^64 compares as the largest cost.
inline uint64_t Mul(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? kMax : product;
}
inline uint64_t Add(uint64_t a, uint64_t b) { return a > kMax - b ? kMax : a + b; }

inline size_t Index(PlanDim d) { return static_cast<size_t>(d); }

// The full size of each dimension.
std::array<uint64_t, kPlanDims> FullSizes(const ContractionShape& shape);

// `shape` with `dim` (an output dimension) cut to ceil(size / steps).
ContractionShape SliceShape(const ContractionShape& shape, PlanDim dim, uint64_t steps);

}  // namespace tileprof::engine::compiler::plan_internal
