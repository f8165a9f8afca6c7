// The AVX2 build of the f32 panel product (dot_kernels.h). Compiled for
// x86-64's baseline like the rest, with this one function targeting AVX2 and
// chosen at run time, so the binary still runs on any x86-64 host.
#include "engine/codelets/dot_kernels.h"

namespace tileprof::engine::dot::detail {

#if defined(__x86_64__)
namespace {

[[gnu::target("avx2")]] void PanelDotAvx2Body(const float* a, uint64_t count, const float* panel,
                                              uint64_t stride, uint64_t width, float* acc) {
  PanelDotIn<float, 32>(a, count, panel, stride, width, acc);
}

[[gnu::target("avx2")]] void PanelDotRowsAvx2Body(const float* a, uint64_t a_stride, uint64_t rows,
                                                  uint64_t count, const float* panel,
                                                  uint64_t stride, uint64_t width, float* acc,
                                                  uint64_t acc_stride) {
  PanelDotRowsIn<float, 32>(a, a_stride, rows, count, panel, stride, width, acc, acc_stride);
}

[[gnu::target("avx2")]] void PanelDot4Avx2Body(const float* const* a, uint64_t count,
                                               const float* panel, uint64_t stride, uint64_t width,
                                               float* const* acc) {
  PanelRows4In<float, 32>(a, count, panel, stride, width, acc);
}

bool HasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}

}  // namespace

bool PanelDotRowsAvx2(const float* a, uint64_t a_stride, uint64_t rows, uint64_t count,
                      const float* panel, uint64_t stride, uint64_t width, float* acc,
                      uint64_t acc_stride) {
  if (!HasAvx2()) return false;
  PanelDotRowsAvx2Body(a, a_stride, rows, count, panel, stride, width, acc, acc_stride);
  return true;
}

bool PanelDot4Avx2(const float* const* a, uint64_t count, const float* panel, uint64_t stride,
                   uint64_t width, float* const* acc) {
  if (!HasAvx2()) return false;
  PanelDot4Avx2Body(a, count, panel, stride, width, acc);
  return true;
}

bool PanelDotAvx2(const float* a, uint64_t count, const float* panel, uint64_t stride,
                  uint64_t width, float* acc) {
  if (!HasAvx2()) return false;
  PanelDotAvx2Body(a, count, panel, stride, width, acc);
  return true;
}
#else
bool PanelDotAvx2(const float*, uint64_t, const float*, uint64_t, uint64_t, float*) {
  return false;
}
bool PanelDotRowsAvx2(const float*, uint64_t, uint64_t, uint64_t, const float*, uint64_t, uint64_t,
                      float*, uint64_t) {
  return false;
}
bool PanelDot4Avx2(const float* const*, uint64_t, const float*, uint64_t, uint64_t, float* const*) {
  return false;
}
#endif

}  // namespace tileprof::engine::dot::detail
