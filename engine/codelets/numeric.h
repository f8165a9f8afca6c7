// Internal to engine/codelets: typed access to element bytes and the scalar
// semantics of the operations (XLA's definitions; see codelets.h). Each
// element type has a storage type (its bytes) and a compute type (what the
// arithmetic runs in: f32 for f16 and bf16, bool for pred).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/target/element_type.h"

namespace tileprof::engine::numeric {

template <ElementType kType>
struct Traits;

template <typename StorageT, typename ComputeT>
struct PlainTraits {
  using Storage = StorageT;
  using Compute = ComputeT;
  static Compute Load(const std::byte* p) {
    Storage v;
    std::memcpy(&v, p, sizeof(Storage));
    return static_cast<Compute>(v);
  }
  static void Store(std::byte* p, Compute v) {
    const auto s = static_cast<Storage>(v);
    std::memcpy(p, &s, sizeof(Storage));
  }
};

template <>
struct Traits<ElementType::kPred> {
  using Storage = uint8_t;
  using Compute = bool;
  static Compute Load(const std::byte* p) { return std::to_integer<uint8_t>(*p) != 0; }
  static void Store(std::byte* p, Compute v) { *p = std::byte{v ? uint8_t{1} : uint8_t{0}}; }
};
template <>
struct Traits<ElementType::kS8> : PlainTraits<int8_t, int8_t> {};
template <>
struct Traits<ElementType::kU8> : PlainTraits<uint8_t, uint8_t> {};
template <>
struct Traits<ElementType::kS16> : PlainTraits<int16_t, int16_t> {};
template <>
struct Traits<ElementType::kU16> : PlainTraits<uint16_t, uint16_t> {};
template <>
struct Traits<ElementType::kS32> : PlainTraits<int32_t, int32_t> {};
template <>
struct Traits<ElementType::kU32> : PlainTraits<uint32_t, uint32_t> {};
template <>
struct Traits<ElementType::kS64> : PlainTraits<int64_t, int64_t> {};
template <>
struct Traits<ElementType::kU64> : PlainTraits<uint64_t, uint64_t> {};
template <>
struct Traits<ElementType::kF32> : PlainTraits<float, float> {};
template <>
struct Traits<ElementType::kF64> : PlainTraits<double, double> {};
template <>
struct Traits<ElementType::kF16> {
  using Storage = uint16_t;
  using Compute = float;
  static Compute Load(const std::byte* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return HalfToFloat(v);
  }
  static void Store(std::byte* p, Compute v) {
    const uint16_t s = HalfFromFloat(v);
    std::memcpy(p, &s, 2);
  }
};
template <>
struct Traits<ElementType::kBF16> {
  using Storage = uint16_t;
  using Compute = float;
  static Compute Load(const std::byte* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return BFloat16ToFloat(v);
  }
  static void Store(std::byte* p, Compute v) {
    const uint16_t s = BFloat16FromFloat(v);
    std::memcpy(p, &s, 2);
  }
};

template <ElementType kType>
using TypeTag = std::integral_constant<ElementType, kType>;

// Calls f(TypeTag<type>{}) for the runtime `type`.
template <typename F>
decltype(auto) Dispatch(ElementType type, F&& f) {
  switch (type) {
    case ElementType::kPred:
      return f(TypeTag<ElementType::kPred>{});
    case ElementType::kS8:
      return f(TypeTag<ElementType::kS8>{});
    case ElementType::kU8:
      return f(TypeTag<ElementType::kU8>{});
    case ElementType::kS16:
      return f(TypeTag<ElementType::kS16>{});
    case ElementType::kU16:
      return f(TypeTag<ElementType::kU16>{});
    case ElementType::kS32:
      return f(TypeTag<ElementType::kS32>{});
    case ElementType::kU32:
      return f(TypeTag<ElementType::kU32>{});
    case ElementType::kS64:
      return f(TypeTag<ElementType::kS64>{});
    case ElementType::kU64:
      return f(TypeTag<ElementType::kU64>{});
    case ElementType::kF16:
      return f(TypeTag<ElementType::kF16>{});
    case ElementType::kBF16:
      return f(TypeTag<ElementType::kBF16>{});
    case ElementType::kF32:
      return f(TypeTag<ElementType::kF32>{});
    case ElementType::kF64:
      return f(TypeTag<ElementType::kF64>{});
  }
  return f(TypeTag<ElementType::kF32>{});  // unreachable for valid enums
}

// Element i of a field span.
template <ElementType kType>
typename Traits<kType>::Compute Get(std::span<const std::byte> bytes, uint64_t i) {
  return Traits<kType>::Load(bytes.data() + i * SizeOf(kType));
}
template <ElementType kType>
void Put(std::span<std::byte> bytes, uint64_t i, typename Traits<kType>::Compute v) {
  Traits<kType>::Store(bytes.data() + i * SizeOf(kType), v);
}

// A per-thread scratch buffer of at least n elements of C (slot tells a
// kernel's buffers apart), so that kernels run per vertex without allocating.
template <typename C, int kSlot>
C* Scratch(uint64_t n) {
  thread_local std::vector<C> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

template <typename C>
inline constexpr bool kIsFloat = std::is_floating_point_v<C>;
template <typename C>
inline constexpr bool kIsInt = std::is_integral_v<C> && !std::is_same_v<C, bool>;
template <typename C>
inline constexpr bool kIsPred = std::is_same_v<C, bool>;

// Two's complement arithmetic: done in uint64_t, where overflow is defined,
// then narrowed (modular since C++20).
template <typename C>
C WrapAdd(C a, C b) {
  return static_cast<C>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
template <typename C>
C WrapSub(C a, C b) {
  return static_cast<C>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
template <typename C>
C WrapMul(C a, C b) {
  return static_cast<C>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// XLA: x / 0 = -1 (all ones); INT_MIN / -1 = INT_MIN.
template <typename C>
C IntDivide(C a, C b) {
  if (b == 0) return static_cast<C>(~uint64_t{0});
  if constexpr (std::is_signed_v<C>) {
    if (a == std::numeric_limits<C>::min() && b == -1) return a;
  }
  return static_cast<C>(a / b);
}
// XLA: x % 0 = x; INT_MIN % -1 = 0.
template <typename C>
C IntRemainder(C a, C b) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<C>) {
    if (a == std::numeric_limits<C>::min() && b == -1) return 0;
  }
  return static_cast<C>(a % b);
}
// Exponentiation by squaring in two's complement; a negative exponent gives
// 1 for base 1 and 0 otherwise (XLA's EmitIntegerPow).
template <typename C>
C IntPower(C base, C exponent) {
  if constexpr (std::is_signed_v<C>) {
    if (exponent < 0) return base == 1 ? 1 : 0;
  }
  auto e = static_cast<uint64_t>(exponent);
  C result = 1;
  while (e != 0) {
    if (e & 1) result = WrapMul(result, base);
    base = WrapMul(base, base);
    e >>= 1;
  }
  return result;
}

// IEEE 754-2019 maximum/minimum: NaN-propagating, -0 < +0 (XLA's float max
// and min propagate NaN).
// Written as selects rather than early returns, so that a loop of them
// has no branch on the data (a ReLU's signs are random).
template <typename C>
C FloatMax(C a, C b) {
  C m = a > b ? a : b;
  m = a == b ? (std::signbit(a) ? b : a) : m;
  m = std::isnan(b) ? b : m;
  return std::isnan(a) ? a : m;
}
template <typename C>
C FloatMin(C a, C b) {
  C m = a < b ? a : b;
  m = a == b ? (std::signbit(a) ? a : b) : m;
  m = std::isnan(b) ? b : m;
  return std::isnan(a) ? a : m;
}
template <typename C>
C Max(C a, C b) {
  if constexpr (kIsFloat<C>)
    return FloatMax(a, b);
  else
    return a > b ? a : b;
}
template <typename C>
C Min(C a, C b) {
  if constexpr (kIsFloat<C>)
    return FloatMin(a, b);
  else
    return a < b ? a : b;
}

// Shifts with XLA's saturation: the amount is read as unsigned; amounts of at
// least the bit width give 0 (or the sign fill for the arithmetic shift).
template <typename C>
C ShiftLeft(C a, C amount) {
  using U = std::make_unsigned_t<C>;
  const auto n = static_cast<U>(amount);
  if (n >= sizeof(C) * 8) return 0;
  return static_cast<C>(static_cast<U>(static_cast<U>(a) << n));
}
template <typename C>
C ShiftRightLogical(C a, C amount) {
  using U = std::make_unsigned_t<C>;
  const auto n = static_cast<U>(amount);
  if (n >= sizeof(C) * 8) return 0;
  return static_cast<C>(static_cast<U>(static_cast<U>(a) >> n));
}
template <typename C>
C ShiftRightArithmetic(C a, C amount) {
  using S = std::make_signed_t<C>;
  using U = std::make_unsigned_t<C>;
  const auto n = static_cast<U>(amount);
  const auto s = static_cast<S>(a);
  // >> on a negative signed value is arithmetic since C++20.
  if (n >= sizeof(C) * 8) return static_cast<C>(s < 0 ? S{-1} : S{0});
  return static_cast<C>(static_cast<S>(s >> n));
}

template <typename C>
C Absolute(C a) {
  if constexpr (kIsFloat<C>)
    return std::fabs(a);
  else if constexpr (std::is_signed_v<C>)
    return a < 0 ? WrapSub(C{0}, a) : a;
  else
    return a;
}
template <typename C>
C Negate(C a) {
  if constexpr (kIsFloat<C>)
    return -a;
  else
    return WrapSub(C{0}, a);
}
template <typename C>
C Signum(C a) {
  if constexpr (kIsFloat<C>) {
    if (std::isnan(a) || a == 0) return a;
    return std::copysign(C{1}, a);
  } else if constexpr (std::is_signed_v<C>) {
    return static_cast<C>((C{0} < a) - (a < C{0}));
  } else {
    return static_cast<C>(a != 0 ? 1 : 0);
  }
}

}  // namespace tileprof::engine::numeric
