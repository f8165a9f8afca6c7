// Internal to engine/codelets: the multiply-accumulate loop and the
// (input, accumulator) type pairs shared by the matmul and convolution
// codelets (dot.cc, conv.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
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

// acc (+)= sum over i < count of a[a0 + i * a_step] * b[b0 + i * b_step].
template <ElementType kIn, ElementType kAcc>
typename numeric::Traits<kAcc>::Compute Dot(typename numeric::Traits<kAcc>::Compute acc,
                                            std::span<const std::byte> a, uint64_t a0,
                                            uint64_t a_step, std::span<const std::byte> b,
                                            uint64_t b0, uint64_t b_step, uint64_t count) {
  using C = typename numeric::Traits<kAcc>::Compute;
  for (uint64_t i = 0; i < count; ++i) {
    acc = MulAdd<C>(acc, static_cast<C>(numeric::Get<kIn>(a, a0 + i * a_step)),
                    static_cast<C>(numeric::Get<kIn>(b, b0 + i * b_step)));
  }
  return acc;
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
