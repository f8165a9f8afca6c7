// The F16C build of WidenHalves, chosen at run time like the AVX2 panel
// products (dot_kernels.cc), so the binary still runs on any x86-64 host.
#include "engine/codelets/widen.h"

#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace tileprof::engine::numeric {
namespace {

void WidenHalvesScalar(const std::byte* in, uint64_t n, float* out) {
  for (uint64_t i = 0; i < n; ++i) {
    uint16_t bits;
    std::memcpy(&bits, in + 2 * i, 2);
    out[i] = HalfToFloat(bits);
  }
}

void NarrowHalvesScalar(const float* in, uint64_t n, std::byte* out) {
  for (uint64_t i = 0; i < n; ++i) {
    const uint16_t bits = HalfFromFloat(in[i]);
    std::memcpy(out + 2 * i, &bits, 2);
  }
}

#if defined(__x86_64__)
[[gnu::target("avx,f16c")]] void NarrowHalvesF16c(const float* in, uint64_t n, std::byte* out) {
  uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i halves = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    std::memcpy(out + 2 * i, &halves, sizeof halves);
  }
  NarrowHalvesScalar(in + i, n - i, out + 2 * i);
}

[[gnu::target("avx,f16c")]] void WidenHalvesF16c(const std::byte* in, uint64_t n, float* out) {
  uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i halves;
    std::memcpy(&halves, in + 2 * i, sizeof halves);
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(halves));
  }
  WidenHalvesScalar(in + 2 * i, n - i, out + i);
}

// AVX (which also says the OS saves the YMM registers) and F16C's own CPUID
// bit: not every compiler's __builtin_cpu_supports knows "f16c".
bool HasF16c() {
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 &&
           (ecx & bit_F16C) != 0;
  }();
  return has;
}
#endif

// The F16C build when the host has it, else the scalar one.
template <typename In, typename Out>
void Dispatch([[maybe_unused]] void (*f16c)(In, uint64_t, Out), void (*scalar)(In, uint64_t, Out),
              In in, uint64_t n, Out out) {
#if defined(__x86_64__)
  if (HasF16c()) return f16c(in, n, out);
#endif
  scalar(in, n, out);
}

}  // namespace

void WidenHalves(const std::byte* in, uint64_t n, float* out) {
#if defined(__x86_64__)
  Dispatch(WidenHalvesF16c, WidenHalvesScalar, in, n, out);
#else
  WidenHalvesScalar(in, n, out);
#endif
}

void NarrowHalves(const float* in, uint64_t n, std::byte* out) {
#if defined(__x86_64__)
  Dispatch(NarrowHalvesF16c, NarrowHalvesScalar, in, n, out);
#else
  NarrowHalvesScalar(in, n, out);
#endif
}

}  // namespace tileprof::engine::numeric
