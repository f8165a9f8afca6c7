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

// Four rows at once, each against the same panel: acc[i][r] (+)= sum over
// t of a[i][t] * panel[t * stride + r], two vectors of outputs at a time.
// Each panel vector loaded serves four rows instead of one, which is what
// bounds the one-row kernel (a load per multiply-add). The sums are still
// each output's own, in t order.
template <typename C, size_t kBytes>
[[gnu::always_inline]] inline void PanelBlockRows4(const C* const* a, uint64_t count,
                                                   const C* panel, uint64_t stride, C* const* acc,
                                                   uint64_t r) {
  using L = Lane<C>;
  typedef L V __attribute__((vector_size(kBytes)));
  constexpr size_t kStep = kBytes / sizeof(L);
  V s00, s01, s10, s11, s20, s21, s30, s31, p0, p1;
  C* const acc0 = acc[0] + r;
  C* const acc1 = acc[1] + r;
  C* const acc2 = acc[2] + r;
  C* const acc3 = acc[3] + r;
  std::memcpy(&s00, acc0, kBytes);
  std::memcpy(&s01, acc0 + kStep, kBytes);
  std::memcpy(&s10, acc1, kBytes);
  std::memcpy(&s11, acc1 + kStep, kBytes);
  std::memcpy(&s20, acc2, kBytes);
  std::memcpy(&s21, acc2 + kStep, kBytes);
  std::memcpy(&s30, acc3, kBytes);
  std::memcpy(&s31, acc3 + kStep, kBytes);
  const C* const a0 = a[0];
  const C* const a1 = a[1];
  const C* const a2 = a[2];
  const C* const a3 = a[3];
  for (uint64_t t = 0; t < count; ++t) {
    const C* row = panel + r + t * stride;
    std::memcpy(&p0, row, kBytes);
    std::memcpy(&p1, row + kStep, kBytes);
    C x0, x1, x2, x3;  // through memcpy, as the panel (InPlace)
    std::memcpy(&x0, a0 + t, sizeof x0);
    std::memcpy(&x1, a1 + t, sizeof x1);
    std::memcpy(&x2, a2 + t, sizeof x2);
    std::memcpy(&x3, a3 + t, sizeof x3);
    const L l0 = static_cast<L>(x0), l1 = static_cast<L>(x1), l2 = static_cast<L>(x2),
            l3 = static_cast<L>(x3);
    s00 = s00 + l0 * p0;
    s01 = s01 + l0 * p1;
    s10 = s10 + l1 * p0;
    s11 = s11 + l1 * p1;
    s20 = s20 + l2 * p0;
    s21 = s21 + l2 * p1;
    s30 = s30 + l3 * p0;
    s31 = s31 + l3 * p1;
  }
  std::memcpy(acc0, &s00, kBytes);
  std::memcpy(acc0 + kStep, &s01, kBytes);
  std::memcpy(acc1, &s10, kBytes);
  std::memcpy(acc1 + kStep, &s11, kBytes);
  std::memcpy(acc2, &s20, kBytes);
  std::memcpy(acc2 + kStep, &s21, kBytes);
  std::memcpy(acc3, &s30, kBytes);
  std::memcpy(acc3 + kStep, &s31, kBytes);
}

// Four rows against one panel: whole blocks, then the columns past the last
// one a row at a time (PanelDotIn).
template <typename C, size_t kBytes = 16>
[[gnu::always_inline]] inline void PanelRows4In(const C* const* a, uint64_t count, const C* panel,
                                                uint64_t stride, uint64_t width, C* const* acc) {
  constexpr size_t kBlock = 2 * kBytes / sizeof(C);
  uint64_t r = 0;
  for (; r + kBlock <= width; r += kBlock)
    PanelBlockRows4<C, kBytes>(a, count, panel, stride, acc, r);
  if (r == width) return;
  for (uint64_t j = 0; j < 4; ++j)
    PanelDotIn<C, kBytes>(a[j], count, panel + r, stride, width - r, acc[j] + r);
}

// `rows` rows of a, a_stride apart, into rows of acc, acc_stride apart:
// groups of four, then one at a time.
template <typename C, size_t kBytes = 16>
[[gnu::always_inline]] inline void PanelDotRowsIn(const C* a, uint64_t a_stride, uint64_t rows,
                                                  uint64_t count, const C* panel, uint64_t stride,
                                                  uint64_t width, C* acc, uint64_t acc_stride) {
  uint64_t i = 0;
  for (; i + 4 <= rows; i += 4) {
    const C* const a4[4] = {a + i * a_stride, a + (i + 1) * a_stride, a + (i + 2) * a_stride,
                            a + (i + 3) * a_stride};
    C* const acc4[4] = {acc + i * acc_stride, acc + (i + 1) * acc_stride,
                        acc + (i + 2) * acc_stride, acc + (i + 3) * acc_stride};
    PanelRows4In<C, kBytes>(a4, count, panel, stride, width, acc4);
  }
  for (; i < rows; ++i)
    PanelDotIn<C, kBytes>(a + i * a_stride, count, panel, stride, width, acc + i * acc_stride);
}

// f32 on AVX2 (dot_kernels.cc): eight lanes a vector, multiply then add as
// above (no FMA: the rounding stays that of a one-output loop). False when the host has no
// AVX2 or is not x86-64.
bool PanelDotAvx2(const float* a, uint64_t count, const float* panel, uint64_t stride,
                  uint64_t width, float* acc);
bool PanelDotRowsAvx2(const float* a, uint64_t a_stride, uint64_t rows, uint64_t count,
                      const float* panel, uint64_t stride, uint64_t width, float* acc,
                      uint64_t acc_stride);
bool PanelDot4Avx2(const float* const* a, uint64_t count, const float* panel, uint64_t stride,
                   uint64_t width, float* const* acc);

}  // namespace detail

template <typename C>
void PanelDot(const C* a, uint64_t count, const C* panel, uint64_t stride, uint64_t width, C* acc) {
  if (count == 0) return;  // nothing to add; the panel may be empty (null)
  if constexpr (std::is_same_v<C, float>) {
    if (detail::PanelDotAvx2(a, count, panel, stride, width, acc)) return;
  }
  detail::PanelDotIn<C>(a, count, panel, stride, width, acc);
}

// PanelDot for `rows` rows at once: for i < rows,
//   acc[i * acc_stride + r] (+)= sum over t of a[i * a_stride + t] * panel[t * stride + r].
// Bit for bit what PanelDot gives row by row, several times faster when
// rows >= 4 (each panel load serves four rows).
template <typename C>
void PanelDotRows(const C* a, uint64_t a_stride, uint64_t rows, uint64_t count, const C* panel,
                  uint64_t stride, uint64_t width, C* acc, uint64_t acc_stride) {
  if (count == 0 || rows == 0) return;
  if constexpr (std::is_same_v<C, float>) {
    if (detail::PanelDotRowsAvx2(a, a_stride, rows, count, panel, stride, width, acc, acc_stride))
      return;
  }
  detail::PanelDotRowsIn<C>(a, a_stride, rows, count, panel, stride, width, acc, acc_stride);
}

// PanelDot for four rows anywhere: acc[i][r] (+)= sum over t of a[i][t] *
// panel[t * stride + r], i < 4; the rows of acc must not overlap.
template <typename C>
void PanelDot4(const C* const a[4], uint64_t count, const C* panel, uint64_t stride, uint64_t width,
               C* const acc[4]) {
  if (count == 0) return;
  if constexpr (std::is_same_v<C, float>) {
    if (detail::PanelDot4Avx2(a, count, panel, stride, width, acc)) return;
  }
  detail::PanelRows4In<C>(a, count, panel, stride, width, acc);
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

// The same for a written field: the kernels accumulate into it directly.
template <ElementType kAcc, typename C>
C* InPlaceOut(std::span<std::byte> field) {
  if constexpr (std::is_same_v<typename numeric::Traits<kAcc>::Storage, C>) {
    if (reinterpret_cast<uintptr_t>(field.data()) % alignof(C) == 0)
      return reinterpret_cast<C*>(field.data());
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
