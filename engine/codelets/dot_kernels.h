// Internal to engine/codelets: the multiply-accumulate loop and the
// (input, accumulator) type pairs shared by the matmul and convolution
// codelets (dot.cc, conv.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

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

// Calls f(TypeTag<in>, TypeTag<acc>) for the pairs the catalogue has (only
// those are instantiated).
template <typename F>
Status DispatchPair(ElementType in, ElementType acc, F&& f) {
  using T = ElementType;
  using numeric::TypeTag;
  if (in == T::kF32 && acc == T::kF32) return f(TypeTag<T::kF32>{}, TypeTag<T::kF32>{});
  if (in == T::kF16 && acc == T::kF32) return f(TypeTag<T::kF16>{}, TypeTag<T::kF32>{});
  if (in == T::kF16 && acc == T::kF16) return f(TypeTag<T::kF16>{}, TypeTag<T::kF16>{});
  if (in == T::kBF16 && acc == T::kF32) return f(TypeTag<T::kBF16>{}, TypeTag<T::kF32>{});
  if (in == T::kS32 && acc == T::kS32) return f(TypeTag<T::kS32>{}, TypeTag<T::kS32>{});
  if (in == T::kF64 && acc == T::kF64) return f(TypeTag<T::kF64>{}, TypeTag<T::kF64>{});
  return MakeError("no dot product for {} inputs and {} accumulators", HloName(in), HloName(acc));
}

}  // namespace tileprof::engine::dot
