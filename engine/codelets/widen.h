// Internal to engine/codelets: a run of stored elements converted to their
// compute type at once, for kernels that read an operand many times (a
// convolution reads each input element once per kernel position that
// covers it): converting it once per vertex instead of per read.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/codelets/numeric.h"

namespace tileprof::engine::numeric {

// f16 to f32, n elements: through the F16C instruction when the host has it,
// which gives HalfToFloat's bits for every input (a signalling NaN made
// quiet, subnormals exact; the test compares all 65,536), else one by one.
void WidenHalves(const std::byte* in, uint64_t n, float* out);

// n elements stored as kType from `in`, as their compute type C.
template <ElementType kType, typename C>
void Widen(const std::byte* in, uint64_t n, C* out) {
  if constexpr (kType == ElementType::kF16 && std::is_same_v<C, float>) {
    WidenHalves(in, n, out);
  } else {
    for (uint64_t i = 0; i < n; ++i)
      out[i] = static_cast<C>(Traits<kType>::Load(in + i * SizeOf(kType)));
  }
}

}  // namespace tileprof::engine::numeric
