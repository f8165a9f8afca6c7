// Internal to engine/codelets: a run of stored elements converted to their
// compute type at once, for kernels that read an operand many times (a
// convolution reads each input element once per kernel position that
// covers it): converting it once per vertex instead of per read.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>

#include "engine/codelets/numeric.h"

namespace tileprof::engine::numeric {

// f16 to f32, n elements: through the F16C instruction when the host has it,
// which gives HalfToFloat's bits for every input (a signalling NaN made
// quiet, subnormals exact; the test compares all 65,536), else one by one.
void WidenHalves(const std::byte* in, uint64_t n, float* out);

// f32 to f16, n elements, rounded as HalfFromFloat does (to nearest even; a
// NaN stays a quiet NaN with the top of its payload): through F16C when the
// host has it (the same bits for all 2^32 floats, compared by hand; the test
// keeps a sample), else one by one.
void NarrowHalves(const float* in, uint64_t n, std::byte* out);

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

// n values of compute type C, stored as kType into `out`.
template <ElementType kType, typename C>
void Narrow(const C* in, uint64_t n, std::byte* out) {
  if constexpr (kType == ElementType::kF16 && std::is_same_v<C, float>) {
    NarrowHalves(in, n, out);
  } else {
    for (uint64_t i = 0; i < n; ++i) Traits<kType>::Store(out + i * SizeOf(kType), in[i]);
  }
}

// A field of elements stored as kType, as C: converted into the calling
// thread's scratch slot kSlot (Scratch) when they are stored as another
// type; nullptr when they are stored as C already (or there are none), to
// be read as they are.
template <ElementType kType, typename C, int kSlot>
const C* WidenField(std::span<const std::byte> field) {
  if constexpr (std::is_same_v<typename Traits<kType>::Storage, C>) {
    return nullptr;
  } else {
    const uint64_t n = field.size() / SizeOf(kType);
    if (n == 0) return nullptr;
    C* out = Scratch<C, kSlot>(n);
    Widen<kType>(field.data(), n, out);
    return out;
  }
}

// Element `at` of `field` as C: from `widened` (WidenField's result) when
// there is one, else converted from the field.
template <ElementType kType, typename C>
C ElementAs(const C* widened, std::span<const std::byte> field, uint64_t at) {
  return widened != nullptr ? widened[at] : static_cast<C>(Get<kType>(field, at));
}

// out[i] = f(in[0][i], in[1][i], ...) for i < n: inputs stored as kIn, the
// output as kOut, f over their compute types (the elementwise maps and
// casts). With f16 on either side the values go through buffers of the
// compute type a chunk at a time (Widen and Narrow: F16C's conversions, the
// bits of HalfToFloat and HalfFromFloat), so f is a loop over floats;
// converting element by element in software was most of an f16 add's time.
// The spans are taken by value: read through a VertexIo, every store to
// the output might have changed them, so each element reloaded them and the
// loop was never vectorised.
template <ElementType kIn, ElementType kOut, size_t kArgs, typename F>
void MapElements(std::array<std::span<const std::byte>, kArgs> in, std::span<std::byte> out,
                 uint64_t n, F f) {
  constexpr auto kAll = std::make_index_sequence<kArgs>();
  if constexpr (kIn == ElementType::kF16 || kOut == ElementType::kF16) {
    constexpr uint64_t kChunk = 256;
    typename Traits<kIn>::Compute x[kArgs][kChunk];
    typename Traits<kOut>::Compute y[kChunk];
    for (uint64_t at = 0; at < n; at += kChunk) {
      const uint64_t m = std::min(kChunk, n - at);
      for (size_t a = 0; a < kArgs; ++a) Widen<kIn>(in[a].data() + at * SizeOf(kIn), m, x[a]);
      for (uint64_t i = 0; i < m; ++i) y[i] = [&]<size_t... kA>(std::index_sequence<kA...>) {
          return f(x[kA][i]...);
        }
      (kAll);
      Narrow<kOut>(y, m, out.data() + at * SizeOf(kOut));
    }
  } else {
    for (uint64_t i = 0; i < n; ++i)
      Put<kOut>(
          out, i, [&]<size_t... kA>(std::index_sequence<kA...>) {
            return f(Get<kIn>(in[kA], i)...);
          }(kAll));
  }
}

}  // namespace tileprof::engine::numeric
