// Internal to engine/codelets: the LAPACK and BLAS algorithms the
// linear-algebra codelets (linalg.cc) run, each on one row-major matrix of
// f32 or f64: ?getf2, ?potf2, ?trsm, ?larfg/?larf, ?geqr2 and ?org2r.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

namespace tileprof::engine::linalg {

// LAPACK ?getf2 on the m x n matrix `a`, in place; returns info.
template <typename T>
int32_t FactorLu(T* a, uint32_t m, uint32_t n, int32_t* ipiv) {
  int32_t info = 0;
  const uint32_t k = std::min(m, n);
  for (uint32_t j = 0; j < k; ++j) {
    uint32_t p = j;
    for (uint32_t i = j + 1; i < m; ++i) {
      if (std::abs(a[i * n + j]) > std::abs(a[p * n + j])) p = i;
    }
    ipiv[j] = static_cast<int32_t>(p) + 1;
    const T pivot = a[p * n + j];
    if (pivot != T(0)) {
      if (p != j) std::swap_ranges(a + j * n, a + (j + 1) * n, a + p * n);
      for (uint32_t i = j + 1; i < m; ++i) a[i * n + j] /= pivot;
    } else if (info == 0) {
      info = static_cast<int32_t>(j) + 1;  // a zero column: nothing to scale
    }
    for (uint32_t i = j + 1; i < m; ++i) {
      const T l = a[i * n + j];
      for (uint32_t c = j + 1; c < n; ++c) a[i * n + c] -= l * a[j * n + c];
    }
  }
  return info;
}

// LAPACK ?potf2 on the n x n matrix `a`, in place; returns info. The upper
// factor U is the transpose of the lower one of the same matrix, so both
// run the lower algorithm through `at`, which reads the upper triangle
// transposed.
template <typename T>
int32_t FactorCholesky(T* a, uint32_t n, bool lower) {
  auto at = [&](uint32_t i, uint32_t j) -> T& { return lower ? a[i * n + j] : a[j * n + i]; };
  for (uint32_t j = 0; j < n; ++j) {
    T d = at(j, j);
    for (uint32_t k = 0; k < j; ++k) d -= at(j, k) * at(j, k);
    if (!(d > T(0))) {  // also NaN
      at(j, j) = d;
      return static_cast<int32_t>(j) + 1;
    }
    d = std::sqrt(d);
    at(j, j) = d;
    for (uint32_t i = j + 1; i < n; ++i) {
      T s = at(i, j);
      for (uint32_t k = 0; k < j; ++k) s -= at(i, k) * at(j, k);
      at(i, j) = s / d;
    }
  }
  return 0;
}

// The shape and flags of one triangular solve: B is m x n, A square on
// its left or right side.
struct TrsmForm {
  uint32_t m = 0, n = 0;
  bool left = true, lower = true, transpose = false, unit = false;
};

// BLAS ?trsm: x (holding B, m x n) becomes X. Substitution runs along the
// rows of X (left) or its columns (right), in the direction in which op(A)
// is triangular.
template <typename T>
void SolveTriangular(const T* a, T* x, const TrsmForm& f, T alpha) {
  const uint32_t m = f.m, n = f.n, k = f.left ? m : n;
  auto op = [&](uint32_t i, uint32_t j) { return f.transpose ? a[j * k + i] : a[i * k + j]; };
  const bool op_lower = f.lower != f.transpose;
  if (alpha == T(0)) {  // BLAS: X = 0 without reading A
    std::fill(x, x + static_cast<uint64_t>(m) * n, T(0));
    return;
  }
  if (alpha != T(1)) std::for_each(x, x + static_cast<uint64_t>(m) * n, [&](T& v) { v *= alpha; });
  for (uint32_t step = 0; step < k; ++step) {
    if (f.left) {  // op(A) X = B: row i from the rows solved before it
      const uint32_t i = op_lower ? step : k - 1 - step;
      for (uint32_t r = op_lower ? 0 : i + 1; r < (op_lower ? i : k); ++r) {
        const T c = op(i, r);
        for (uint32_t col = 0; col < n; ++col) x[i * n + col] -= c * x[r * n + col];
      }
      if (!f.unit) {
        for (uint32_t col = 0; col < n; ++col) x[i * n + col] /= op(i, i);
      }
    } else {  // X op(A) = B: column j from the columns solved before it
      const uint32_t j = op_lower ? k - 1 - step : step;
      for (uint32_t c = op_lower ? j + 1 : 0; c < (op_lower ? k : j); ++c) {
        const T coefficient = op(c, j);
        for (uint32_t row = 0; row < m; ++row) x[row * n + j] -= x[row * n + c] * coefficient;
      }
      if (!f.unit) {
        for (uint32_t row = 0; row < m; ++row) x[row * n + j] /= op(j, j);
      }
    }
  }
}

// LAPACK ?larfg on alpha = v[0] and x = v[1..len): v becomes the reflector
// (v[0] = beta, x scaled so that v[0] = 1 is implied); returns tau. No
// rescaling of tiny norms (LAPACK's safmin loop): f32 and f64 here.
template <typename T>
T Reflector(T* v, uint32_t len, uint32_t stride) {
  T norm = 0;
  for (uint32_t i = 1; i < len; ++i) norm = std::hypot(norm, v[i * stride]);
  if (norm == T(0)) return T(0);
  const T alpha = v[0];
  const T beta = alpha >= T(0) ? -std::hypot(alpha, norm) : std::hypot(alpha, norm);
  const T scale = T(1) / (alpha - beta);
  for (uint32_t i = 1; i < len; ++i) v[i * stride] *= scale;
  v[0] = beta;
  return (beta - alpha) / beta;
}

// LAPACK ?larf from the left: C = (I - tau v v^T) C for the rows [r, m) and
// columns [c0, n) of the m x n matrix `a`, v in column `col` from row r
// (v[r] = 1).
template <typename T>
void ApplyReflector(T* a, uint32_t m, uint32_t n, uint32_t r, uint32_t col, T tau, uint32_t c0) {
  if (tau == T(0)) return;
  for (uint32_t c = c0; c < n; ++c) {
    T w = a[r * n + c];
    for (uint32_t i = r + 1; i < m; ++i) w += a[i * n + col] * a[i * n + c];
    a[r * n + c] -= tau * w;
    for (uint32_t i = r + 1; i < m; ++i) a[i * n + c] -= tau * w * a[i * n + col];
  }
}

// LAPACK ?geqr2 on the m x n matrix `a`, in place.
template <typename T>
void FactorQr(T* a, uint32_t m, uint32_t n, T* tau) {
  for (uint32_t j = 0; j < std::min(m, n); ++j) {
    tau[j] = Reflector(a + j * n + j, m - j, n);
    ApplyReflector(a, m, n, j, j, tau[j], j + 1);
  }
}

// LAPACK ?org2r: `a` (m x n, the reflectors in its first k columns)
// becomes the first n columns of H(0) ... H(k-1).
template <typename T>
void FormQ(T* a, uint32_t m, uint32_t n, uint32_t k, const T* tau) {
  for (uint32_t j = k; j < n; ++j) {
    for (uint32_t i = 0; i < m; ++i) a[i * n + j] = i == j ? T(1) : T(0);
  }
  for (uint32_t s = k; s-- > 0;) {
    a[s * n + s] = T(1);
    ApplyReflector(a, m, n, s, s, tau[s], s + 1);
    for (uint32_t i = s + 1; i < m; ++i) a[i * n + s] *= -tau[s];
    a[s * n + s] = T(1) - tau[s];
    for (uint32_t i = 0; i < s; ++i) a[i * n + s] = T(0);
  }
}

}  // namespace tileprof::engine::linalg
