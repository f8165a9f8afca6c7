// Internal to engine/codelets: what the index-driven codelets (indexed.cc,
// gather.cc) share — index element types, reading an index, and walking the
// row-major coordinates of a shape.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include "engine/codelets/numeric.h"

namespace tileprof::engine::index_walk {

inline uint64_t Product(std::span<const uint32_t> dims) {
  uint64_t n = 1;
  for (uint32_t d : dims) n *= d;
  return n;
}

// The first element a vertex writes: parameter `first` (the first one) holds
// its low 32 bits and the last parameter, `firstHigh`, the high ones (a
// result of a large model's stacked layers has more than 2^32 elements).
inline uint64_t FirstElement(std::span<const uint32_t> params) {
  return params.front() | (static_cast<uint64_t>(params.back()) << 32);
}

inline bool IsIndexType(ElementType type) {
  switch (type) {
    case ElementType::kS8:
    case ElementType::kU8:
    case ElementType::kS16:
    case ElementType::kU16:
    case ElementType::kS32:
    case ElementType::kU32:
    case ElementType::kS64:
    case ElementType::kU64:
      return true;
    default:
      return false;
  }
}

// Element i of an index span as a signed 64-bit value (u64 above INT64_MAX
// saturates: out of range, or clamped to the largest start, either way).
inline int64_t LoadIndex(ElementType type, std::span<const std::byte> bytes, uint64_t i = 0) {
  return numeric::Dispatch(type, [&](auto tag) -> int64_t {
    constexpr ElementType kType = decltype(tag)::value;
    using C = typename numeric::Traits<kType>::Compute;
    if constexpr (numeric::kIsInt<C>) {
      const C v = numeric::Get<kType>(bytes, i);
      if constexpr (std::is_unsigned_v<C> && sizeof(C) == 8) {
        return v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                   ? std::numeric_limits<int64_t>::max()
                   : static_cast<int64_t>(v);
      } else {
        return static_cast<int64_t>(v);
      }
    } else {
      return 0;  // not reached: the factories accept integer index types only
    }
  });
}

// Row-major coordinates of a flat index, advanced one element at a time.
class Odometer {
 public:
  Odometer(std::span<const uint32_t> dims, uint64_t flat) : dims_(dims), pos_(dims.size(), 0) {
    for (size_t d = dims.size(); d-- > 0;) {
      if (dims[d] == 0) continue;
      pos_[d] = flat % dims[d];
      flat /= dims[d];
    }
  }
  uint64_t operator[](size_t d) const { return pos_[d]; }
  void Next() {
    for (size_t d = dims_.size(); d-- > 0;) {
      if (++pos_[d] < dims_[d]) return;
      pos_[d] = 0;
    }
  }
  // Next() `n` times, where n >= 1 and the last coordinate plus n does not
  // pass the end of its dimension (a run along the row).
  void Advance(uint64_t n) {
    if (dims_.empty()) return;
    pos_.back() += n - 1;
    Next();
  }

 private:
  std::span<const uint32_t> dims_;
  std::vector<uint64_t> pos_;
};

// The same coordinates as signed values, for offset arithmetic.
class SignedOdometer : public Odometer {
 public:
  using Odometer::Odometer;
  int64_t operator[](size_t d) const { return static_cast<int64_t>(Odometer::operator[](d)); }
};

}  // namespace tileprof::engine::index_walk
