// Linear-algebra codelets. See linalg.h.
#include "engine/codelets/linalg.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "engine/codelets/cost_model.h"
#include "engine/codelets/families.h"

namespace tileprof::engine {
namespace {

// ---- The algorithms, on one row-major matrix ------------------------------

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

// ---- Costs -------------------------------------------------------------------

// The work of one matrix: multiply-adds that vectorise along a row (load,
// multiply, add, store per vector), divides or square roots (one per
// column: the rows are scaled by its reciprocal, a scalar step), and
// scalar steps of one simple op and a memory access (a pivot compare, a
// swapped element, a scaling multiply, a permutation entry).
struct Work {
  uint64_t macs = 0;
  uint64_t divides = 0;
  uint64_t scalar = 0;
};

// Worker cycles for `count` matrices of `work` each: the flop counts over
// the tile's rate for the type (f32 two lanes per vector, f64 soft-float).
uint64_t Cycles(const Work& work, uint64_t count, ElementType type, const Target& target) {
  using namespace cost;
  const uint64_t simple = OpCycles(OpClass::kSimple, type);
  const uint64_t per_mac_vector = 2 * kMemoryAccessCycles + 2 * simple;
  const uint64_t per_matrix = CeilDiv(work.macs, Width(target, type)) * per_mac_vector +
                              work.divides * OpCycles(OpClass::kDivide, type) +
                              work.scalar * (kMemoryAccessCycles + simple);
  return kWorkerOverhead + count * per_matrix;
}

// Σ_{j<k} (m-j-1)(n-j-1): the rank-1 updates of an LU factorisation.
uint64_t LuMacs(uint64_t m, uint64_t n) {
  uint64_t macs = 0;
  for (uint64_t j = 0; j < std::min(m, n); ++j) macs += (m - j - 1) * (n - j - 1);
  return macs;
}

// ---- Field access --------------------------------------------------------------

template <typename T>
std::vector<T> Read(std::span<const std::byte> bytes, uint64_t first, uint64_t n) {
  std::vector<T> values(n);
  if (n > 0) std::memcpy(values.data(), bytes.data() + first * sizeof(T), n * sizeof(T));
  return values;
}
template <typename T>
void Write(std::span<std::byte> bytes, uint64_t first, const std::vector<T>& values) {
  if (!values.empty()) {
    std::memcpy(bytes.data() + first * sizeof(T), values.data(), values.size() * sizeof(T));
  }
}

// Error unless field `field` holds count * per elements.
Status CheckPer(const Codelet& codelet, const VertexShape& shape, size_t field, uint64_t count,
                uint64_t per) {
  if (shape.field_elements[field] != count * per) {
    return MakeError("field '{}' has {} elements, not {} matrices of {}",
                     codelet.fields()[field].name, shape.field_elements[field], count, per);
  }
  return {};
}

// The number of matrices, from field `field` of `per` elements each (0 when
// per is 0: nothing to do).
Expected<uint64_t> CountOf(const Codelet& codelet, const VertexShape& shape, size_t field,
                           uint64_t per) {
  if (per == 0) return uint64_t{0};
  if (shape.field_elements[field] % per != 0) {
    return MakeError("field '{}' has {} elements, not whole matrices of {}",
                     codelet.fields()[field].name, shape.field_elements[field], per);
  }
  return shape.field_elements[field] / per;
}

Status CheckReal(ElementType type, std::string_view what) {
  if (type == ElementType::kF32 || type == ElementType::kF64) return {};
  return MakeError("{} of {}: only f32 and f64 are supported", what, HloName(type));
}

// ---- The codelets ----------------------------------------------------------------

// Getrf and Geqrf: an m x n matrix factored in place, with min(m, n)
// values per matrix beside it (the pivots, or the reflectors' scales) and
// one info; the info field's length is the number of matrices.
class FactorCodelet : public Codelet {
 public:
  FactorCodelet(std::string name, ElementType type, std::string factored, std::string per_column,
                ElementType per_column_type, uint32_t code_bytes)
      : Codelet(std::move(name), ExecutionKind::kWorker,
                {In("a", type, VectorLayout::kSpan), Out(std::move(factored), type),
                 Out(std::move(per_column), per_column_type),
                 Out("info", ElementType::kS32, VectorLayout::kSpan)},
                {"m", "n"}, code_bytes),
        type_(type) {}

  Status CheckShape(const VertexShape& shape) const override {
    const uint64_t m = shape.params[0], n = shape.params[1], count = shape.field_elements[3];
    TILEPROF_RETURN_IF_ERROR(CheckPer(*this, shape, 0, count, m * n));
    TILEPROF_RETURN_IF_ERROR(CheckPer(*this, shape, 1, count, m * n));
    return CheckPer(*this, shape, 2, count, std::min(m, n));
  }

 protected:
  ElementType type_;
};

template <typename T>
class GetrfCodelet final : public FactorCodelet {
 public:
  explicit GetrfCodelet(ElementType type)
      : FactorCodelet(GetrfCodeletName(type), type, "lu", "ipiv", ElementType::kS32,
                      kGetrfCodeBytes) {}

  uint64_t EstimateCycles(const VertexShape& shape, const Target& target) const override {
    const uint64_t m = shape.params[0], n = shape.params[1], k = std::min(m, n);
    // Per column j: m - j compares, n swapped elements, m - j - 1 scalings.
    const Work work{LuMacs(m, n), k, k * (2 * m + n)};
    return Cycles(work, shape.field_elements[3], type_, target);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const uint32_t m = io.params[0], n = io.params[1], k = std::min(m, n);
    const uint64_t count = Count(io, 3);
    for (uint64_t b = 0; b < count; ++b) {
      std::vector<T> a = Read<T>(io.fields[0], b * m * n, uint64_t{m} * n);
      std::vector<int32_t> ipiv(k), info(1);
      info[0] = FactorLu(a.data(), m, n, ipiv.data());
      Write(io.fields[1], b * m * n, a);
      Write(io.fields[2], b * k, ipiv);
      Write(io.fields[3], b, info);
    }
    return {};
  }
};

template <typename T>
class PotrfCodelet final : public Codelet {
 public:
  explicit PotrfCodelet(ElementType type)
      : Codelet(PotrfCodeletName(type), ExecutionKind::kWorker,
                {In("a", type, VectorLayout::kSpan), Out("l", type),
                 Out("info", ElementType::kS32, VectorLayout::kSpan)},
                {"n", "lower"}, kPotrfCodeBytes),
        type_(type) {}

  Status CheckShape(const VertexShape& shape) const override {
    const uint64_t n = shape.params[0], count = shape.field_elements[2];
    TILEPROF_RETURN_IF_ERROR(CheckPer(*this, shape, 0, count, n * n));
    return CheckPer(*this, shape, 1, count, n * n);
  }
  uint64_t EstimateCycles(const VertexShape& shape, const Target& target) const override {
    const uint64_t n = shape.params[0];
    // Column j: a dot of j for the diagonal and for each of the n - j - 1
    // elements below it (Σ j (n - j) = n (n² - 1) / 6 multiply-adds); a
    // square root and a reciprocal; a scaling per element below.
    const Work work{n * (n * n - 1) / 6, 2 * n, n * (n - 1) / 2};
    return Cycles(work, shape.field_elements[2], type_, target);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const uint32_t n = io.params[0];
    const bool lower = io.params[1] != 0;
    const uint64_t count = Count(io, 2);
    for (uint64_t b = 0; b < count; ++b) {
      std::vector<T> a = Read<T>(io.fields[0], b * n * n, uint64_t{n} * n);
      const std::vector<int32_t> info = {FactorCholesky(a.data(), n, lower)};
      Write(io.fields[1], b * n * n, a);
      Write(io.fields[2], b, info);
    }
    return {};
  }

 private:
  ElementType type_;
};

template <typename T>
class TrsmCodelet final : public Codelet {
 public:
  explicit TrsmCodelet(ElementType type)
      : Codelet(TrsmCodeletName(type), ExecutionKind::kWorker,
                {In("a", type, VectorLayout::kSpan), In("b", type, VectorLayout::kSpan),
                 ScalarIn("alpha", type), Out("x", type)},
                {"m", "n", "left", "lower", "transpose", "unit"}, kTrsmCodeBytes),
        type_(type) {}

  Status CheckShape(const VertexShape& shape) const override {
    const TrsmForm f = FormOf(shape.params);
    const uint64_t k = f.left ? f.m : f.n;
    TILEPROF_ASSIGN_OR_RETURN(const uint64_t count, CountOf(*this, shape, 3, uint64_t{f.m} * f.n));
    TILEPROF_RETURN_IF_ERROR(CheckPer(*this, shape, 0, count, k * k));
    return CheckSameSize(*this, shape, 1, 3);
  }
  uint64_t EstimateCycles(const VertexShape& shape, const Target& target) const override {
    const TrsmForm f = FormOf(shape.params);
    const uint64_t m = f.m, n = f.n, k = f.left ? m : n, rhs = f.left ? n : m;
    const uint64_t count = m * n == 0 ? 0 : shape.field_elements[3] / (m * n);
    // Per right-hand side: k(k-1)/2 multiply-adds; a reciprocal per row of
    // op(A) and a scaling per element (both unless unit); alpha's scaling.
    const Work work{rhs * k * (k - 1) / 2, f.unit ? 0 : k, (f.unit ? 1 : 2) * m * n};
    return Cycles(work, count, type_, target);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const TrsmForm f = FormOf(io.params);
    const uint64_t k = f.left ? f.m : f.n, size = uint64_t{f.m} * f.n;
    const uint64_t count = size == 0 ? 0 : Count(io, 3) / size;
    const T alpha = Read<T>(io.fields[2], 0, 1)[0];
    for (uint64_t b = 0; b < count; ++b) {
      const std::vector<T> a = Read<T>(io.fields[0], b * k * k, k * k);
      std::vector<T> x = Read<T>(io.fields[1], b * size, size);
      SolveTriangular(a.data(), x.data(), f, alpha);
      Write(io.fields[3], b * size, x);
    }
    return {};
  }

 private:
  static TrsmForm FormOf(std::span<const uint32_t> p) {
    return {p[0], p[1], p[2] != 0, p[3] != 0, p[4] != 0, p[5] != 0};
  }
  ElementType type_;
};

// Σ_{j<k} (m-j) (n-j-1) x 2: a reflector's dot and update per column right
// of it, the flops of ?geqr2 and (k columns applied) of ?org2r.
uint64_t QrMacs(uint64_t m, uint64_t n, uint64_t k) {
  uint64_t macs = 0;
  for (uint64_t j = 0; j < k; ++j) macs += 2 * (m - j) * (n - j - 1);
  return macs;
}

template <typename T>
class GeqrfCodelet final : public FactorCodelet {
 public:
  explicit GeqrfCodelet(ElementType type)
      : FactorCodelet(GeqrfCodeletName(type), type, "qr", "tau", type, kGeqrfCodeBytes) {}

  uint64_t EstimateCycles(const VertexShape& shape, const Target& target) const override {
    const uint64_t m = shape.params[0], n = shape.params[1], k = std::min(m, n);
    // Per column: a norm over m - j (a multiply-add each), a square root
    // and a divide, m - j scalings.
    const Work work{QrMacs(m, n, k) + k * m, 2 * k, k * m};
    return Cycles(work, shape.field_elements[3], type_, target);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const uint32_t m = io.params[0], n = io.params[1], k = std::min(m, n);
    const uint64_t count = Count(io, 3);
    for (uint64_t b = 0; b < count; ++b) {
      std::vector<T> a = Read<T>(io.fields[0], b * m * n, uint64_t{m} * n);
      std::vector<T> tau(k);
      FactorQr(a.data(), m, n, tau.data());
      Write(io.fields[1], b * m * n, a);
      Write(io.fields[2], b * k, tau);
      Write(io.fields[3], b, std::vector<int32_t>{0});
    }
    return {};
  }
};

template <typename T>
class OrgqrCodelet final : public Codelet {
 public:
  explicit OrgqrCodelet(ElementType type)
      : Codelet(OrgqrCodeletName(type), ExecutionKind::kWorker,
                {In("a", type, VectorLayout::kSpan), In("tau", type, VectorLayout::kSpan),
                 Out("q", type), Out("info", ElementType::kS32, VectorLayout::kSpan)},
                {"m", "n", "k"}, kOrgqrCodeBytes),
        type_(type) {}

  Status CheckShape(const VertexShape& shape) const override {
    const uint64_t m = shape.params[0], n = shape.params[1], k = shape.params[2];
    if (n > m || k > n) return MakeError("orgqr needs m >= n >= k, not {}, {}, {}", m, n, k);
    const uint64_t count = shape.field_elements[3];
    TILEPROF_RETURN_IF_ERROR(CheckPer(*this, shape, 0, count, m * n));
    TILEPROF_RETURN_IF_ERROR(CheckPer(*this, shape, 1, count, k));
    return CheckPer(*this, shape, 2, count, m * n);
  }
  uint64_t EstimateCycles(const VertexShape& shape, const Target& target) const override {
    const uint64_t m = shape.params[0], n = shape.params[1], k = shape.params[2];
    // The k reflectors applied to the columns right of each, a scaling of
    // each reflector's column and the identity columns set.
    const Work work{QrMacs(m, n, std::min(k, n)), 0, k * m + (n - std::min(k, n)) * m};
    return Cycles(work, shape.field_elements[3], type_, target);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const uint32_t m = io.params[0], n = io.params[1], k = io.params[2];
    const uint64_t count = Count(io, 3);
    for (uint64_t b = 0; b < count; ++b) {
      std::vector<T> a = Read<T>(io.fields[0], b * m * n, uint64_t{m} * n);
      const std::vector<T> tau = Read<T>(io.fields[1], b * k, k);
      FormQ(a.data(), m, n, k, tau.data());
      Write(io.fields[2], b * m * n, a);
      Write(io.fields[3], b, std::vector<int32_t>{0});
    }
    return {};
  }

 private:
  ElementType type_;
};

class LuPivotsCodelet final : public Codelet {
 public:
  LuPivotsCodelet()
      : Codelet(LuPivotsToPermutationCodeletName(), ExecutionKind::kWorker,
                {In("pivots", ElementType::kS32, VectorLayout::kSpan),
                 Out("permutation", ElementType::kS32, VectorLayout::kSpan)},
                {"k", "size"}, kLuPivotsCodeBytes) {}

  Status CheckShape(const VertexShape& shape) const override {
    const uint64_t k = shape.params[0], size = shape.params[1];
    if (k > size) return MakeError("{} pivots for a permutation of {}", k, size);
    TILEPROF_ASSIGN_OR_RETURN(const uint64_t count, CountOf(*this, shape, 1, size));
    return CheckPer(*this, shape, 0, count, k);
  }
  uint64_t EstimateCycles(const VertexShape& shape, const Target& target) const override {
    const uint64_t k = shape.params[0], size = shape.params[1];
    const uint64_t count = size == 0 ? 0 : shape.field_elements[1] / size;
    // The iota, then per pivot a bounds check and a two-element swap.
    return Cycles(Work{0, 0, size + 3 * k}, count, ElementType::kS32, target);
  }

 protected:
  Status Compute(const VertexIo& io) const override {
    const uint32_t k = io.params[0], size = io.params[1];
    const uint64_t count = size == 0 ? 0 : Count(io, 1) / size;
    for (uint64_t b = 0; b < count; ++b) {
      const std::vector<int32_t> pivots = Read<int32_t>(io.fields[0], b * k, k);
      std::vector<int32_t> permutation(size);
      for (uint32_t i = 0; i < size; ++i) permutation[i] = static_cast<int32_t>(i);
      for (uint32_t i = 0; i < k; ++i) {
        const int32_t p = pivots[i];
        if (p >= 0 && static_cast<uint32_t>(p) < size) std::swap(permutation[i], permutation[p]);
      }
      Write(io.fields[1], b * size, permutation);
    }
    return {};
  }
};

// The codelet of C<float> or C<double> for `type`.
template <template <typename> class C>
Expected<std::unique_ptr<Codelet>> MakeReal(ElementType type, std::string_view what) {
  TILEPROF_RETURN_IF_ERROR(CheckReal(type, what));
  if (type == ElementType::kF32) return std::unique_ptr<Codelet>(new C<float>(type));
  return std::unique_ptr<Codelet>(new C<double>(type));
}

}  // namespace

std::string GetrfCodeletName(ElementType type) {
  return fmt::format("tileprof::Getrf<{}>", PoplarName(type));
}
std::string PotrfCodeletName(ElementType type) {
  return fmt::format("tileprof::Potrf<{}>", PoplarName(type));
}
std::string TrsmCodeletName(ElementType type) {
  return fmt::format("tileprof::Trsm<{}>", PoplarName(type));
}
std::string GeqrfCodeletName(ElementType type) {
  return fmt::format("tileprof::Geqrf<{}>", PoplarName(type));
}
std::string OrgqrCodeletName(ElementType type) {
  return fmt::format("tileprof::Orgqr<{}>", PoplarName(type));
}
std::string LuPivotsToPermutationCodeletName() { return "tileprof::LuPivotsToPermutation<int>"; }

Expected<std::unique_ptr<Codelet>> MakeGetrfCodelet(ElementType type) {
  return MakeReal<GetrfCodelet>(type, "getrf");
}
Expected<std::unique_ptr<Codelet>> MakePotrfCodelet(ElementType type) {
  return MakeReal<PotrfCodelet>(type, "potrf");
}
Expected<std::unique_ptr<Codelet>> MakeTrsmCodelet(ElementType type) {
  return MakeReal<TrsmCodelet>(type, "trsm");
}
Expected<std::unique_ptr<Codelet>> MakeGeqrfCodelet(ElementType type) {
  return MakeReal<GeqrfCodelet>(type, "geqrf");
}
Expected<std::unique_ptr<Codelet>> MakeOrgqrCodelet(ElementType type) {
  return MakeReal<OrgqrCodelet>(type, "orgqr");
}
Expected<std::unique_ptr<Codelet>> MakeLuPivotsToPermutationCodelet() {
  return std::unique_ptr<Codelet>(new LuPivotsCodelet());
}

}  // namespace tileprof::engine
