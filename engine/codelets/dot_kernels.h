// Internal to engine/codelets: the multiply-accumulate loop and the
// (input, accumulator) type pairs shared by the matmul and convolution
// codelets (dot.cc, conv.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <span>
#include <type_traits>
#include <utility>

#include "common/expected.h"
#include "engine/codelets/numeric.h"

namespace tileprof::engine::dot {

template <typename C>
C MulAdd(C acc, C a, C b) {
  if constexpr (numeric::kIsInt<C>)
    return numeric::WrapAdd(acc, numeric::WrapMul(a, b));
  else
    return acc + a * b;
}

// Panel products, the simulator's fast matmul and convolution kernel:
//   acc[r] (+)= sum over t < count of a[t] * panel[t * stride + r],  r < width.
// Each acc[r] still sums its products in t order, each product rounded to C
// before it is added (the build turns off FP contraction), exactly as a
// loop over one output at a time would: the results are the same bit for bit. What changes is
// the loop order: the panel (weights converted to C once, laid out so that
// consecutive outputs are adjacent) is walked a row at a time while a block
// of accumulators stays in vector registers. Integers run in their unsigned
// type, where wrap-around is defined.
namespace detail {

template <typename C, bool = numeric::kIsInt<C>>
struct LaneOf {
  using type = C;
};
template <typename C>
struct LaneOf<C, true> {
  using type = std::make_unsigned_t<C>;
};
template <typename C>
using Lane = typename LaneOf<C>::type;

// kVectors vectors of kBytes bytes of accumulators, kept in registers:
// spelled out because GCC keeps a wider generic vector, or an array of them,
// in memory. Always inlined, so that in PanelDotAvx2 the 32-byte vectors are
// AVX registers.
template <typename C, int kVectors, size_t kBytes = 16>
[[gnu::always_inline]] inline void PanelBlock(const C* a, uint64_t count, const C* panel,
                                              uint64_t stride, C* acc) {
  static_assert(kVectors == 1 || kVectors == 4);
  using L = Lane<C>;
  typedef L V __attribute__((vector_size(kBytes)));
  constexpr size_t kStep = kBytes / sizeof(L);
  V s0, s1{}, s2{}, s3{}, r0, r1, r2, r3;
  std::memcpy(&s0, acc, kBytes);
  if constexpr (kVectors == 4) {
    std::memcpy(&s1, acc + kStep, kBytes);
    std::memcpy(&s2, acc + 2 * kStep, kBytes);
    std::memcpy(&s3, acc + 3 * kStep, kBytes);
  }
  for (uint64_t t = 0; t < count; ++t) {
    C at;  // through memcpy, as the panel (InPlace)
    std::memcpy(&at, a + t, sizeof at);
    const L x = static_cast<L>(at);
    const C* row = panel + t * stride;
    std::memcpy(&r0, row, kBytes);
    s0 = s0 + x * r0;
    if constexpr (kVectors == 4) {
      std::memcpy(&r1, row + kStep, kBytes);
      std::memcpy(&r2, row + 2 * kStep, kBytes);
      std::memcpy(&r3, row + 3 * kStep, kBytes);
      s1 = s1 + x * r1;
      s2 = s2 + x * r2;
      s3 = s3 + x * r3;
    }
  }
  std::memcpy(acc, &s0, kBytes);
  if constexpr (kVectors == 4) {
    std::memcpy(acc + kStep, &s1, kBytes);
    std::memcpy(acc + 2 * kStep, &s2, kBytes);
    std::memcpy(acc + 3 * kStep, &s3, kBytes);
  }
}

// Blocks of four vectors of kBytes, then one, then single outputs.
template <typename C, size_t kBytes = 16>
[[gnu::always_inline]] inline void PanelDotIn(const C* a, uint64_t count, const C* panel,
                                              uint64_t stride, uint64_t width, C* acc) {
  constexpr size_t kNarrow = kBytes / sizeof(C), kWide = 4 * kNarrow;
  uint64_t r = 0;
  for (; r + kWide <= width; r += kWide)
    PanelBlock<C, 4, kBytes>(a, count, panel + r, stride, acc + r);
  for (; r + kNarrow <= width; r += kNarrow)
    PanelBlock<C, 1, kBytes>(a, count, panel + r, stride, acc + r);
  for (; r < width; ++r) {
    C sum = acc[r];
    for (uint64_t t = 0; t < count; ++t) {
      C at, w;  // through memcpy: a and the panel may be a field's bytes (InPlace)
      std::memcpy(&at, a + t, sizeof at);
      std::memcpy(&w, panel + t * stride + r, sizeof w);
      sum = MulAdd<C>(sum, at, w);
    }
    acc[r] = sum;
  }
}

// f32 on AVX2 (dot_kernels.cc): eight lanes a vector, multiply then add as
// above (no FMA: the rounding stays that of a one-output loop). False when the host has no
// AVX2 or is not x86-64.
bool PanelDotAvx2(const float* a, uint64_t count, const float* panel, uint64_t stride,
                  uint64_t width, float* acc);

}  // namespace detail

template <typename C>
void PanelDot(const C* a, uint64_t count, const C* panel, uint64_t stride, uint64_t width, C* acc) {
  if (count == 0) return;  // nothing to add; the panel may be empty (null)
  if constexpr (std::is_same_v<C, float>) {
    if (detail::PanelDotAvx2(a, count, panel, stride, width, acc)) return;
  }
  detail::PanelDotIn<C>(a, count, panel, stride, width, acc);
}

// A field's elements as C, for a panel product to read in place, when they
// are stored as C (f32 into f32, not f16 into f32) and aligned for it;
// nullptr when they must be converted into a panel first. The kernels read
// panels through memcpy only.
template <ElementType kIn, typename C>
const C* InPlace(std::span<const std::byte> field) {
  if constexpr (std::is_same_v<typename numeric::Traits<kIn>::Storage, C>) {
    if (reinterpret_cast<uintptr_t>(field.data()) % alignof(C) == 0)
      return reinterpret_cast<const C*>(field.data());
  }
  return nullptr;
}

// The (input, accumulator) pairs of the matmul and general conv partials,
// declared once for the catalogue (dot.cc, conv.cc) and DispatchPair.
//  * Floats: f16 and bf16 inputs accumulate in f32 (Traits' compute type)
//    whether the accumulator field is f32 or the 16-bit type itself, which
//    is then rounded once, on store (XLA's HloEvaluatorTypedVisitor<half,
//    float> and <bfloat16, float>).
//  * Integers: every type with itself, so that any integer dot lowers once
//    its operands are converted to the result type (XLA's OperandUpcaster),
//    and the widening pairs of quantised models (s8 x s8 -> s32, u8 -> u32
//    or s32, s16 -> s32, u16 -> u32), which convert each element to the
//    accumulator's type as they read it instead of in a copy first. Sums wrap.
inline constexpr std::pair<ElementType, ElementType> kDotPairs[] = {
    {ElementType::kF32, ElementType::kF32},   {ElementType::kF16, ElementType::kF32},
    {ElementType::kF16, ElementType::kF16},   {ElementType::kBF16, ElementType::kF32},
    {ElementType::kBF16, ElementType::kBF16}, {ElementType::kF64, ElementType::kF64},
    {ElementType::kS8, ElementType::kS8},     {ElementType::kU8, ElementType::kU8},
    {ElementType::kS16, ElementType::kS16},   {ElementType::kU16, ElementType::kU16},
    {ElementType::kS32, ElementType::kS32},   {ElementType::kU32, ElementType::kU32},
    {ElementType::kS64, ElementType::kS64},   {ElementType::kU64, ElementType::kU64},
    {ElementType::kS8, ElementType::kS32},    {ElementType::kU8, ElementType::kU32},
    {ElementType::kU8, ElementType::kS32},    {ElementType::kS16, ElementType::kS32},
    {ElementType::kU16, ElementType::kU32},
};

// Calls f(TypeTag<in>, TypeTag<acc>) for the pairs of kDotPairs (only those
// are instantiated), trying kDotPairs[kIndex] onwards.
template <size_t kIndex = 0, typename F>
Status DispatchPair(ElementType in, ElementType acc, F&& f) {
  if constexpr (kIndex == std::size(kDotPairs)) {
    return MakeError("no dot product for {} inputs and {} accumulators", HloName(in), HloName(acc));
  } else {
    constexpr std::pair<ElementType, ElementType> kPair = kDotPairs[kIndex];
    if (in == kPair.first && acc == kPair.second) {
      return f(numeric::TypeTag<kPair.first>{}, numeric::TypeTag<kPair.second>{});
    }
    return DispatchPair<kIndex + 1>(in, acc, std::forward<F>(f));
  }
}

}  // namespace tileprof::engine::dot
