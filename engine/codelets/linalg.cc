// Linear-algebra codelets (the algorithms themselves: linalg_kernels.h). See linalg.h.
#include "engine/codelets/linalg.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "engine/codelets/cost_model.h"
#include "engine/codelets/families.h"
#include "engine/codelets/linalg_kernels.h"

namespace tileprof::engine {
namespace {

using linalg::FactorCholesky;
using linalg::FactorLu;
using linalg::FactorQr;
using linalg::FormQ;
using linalg::SolveTriangular;
using linalg::TrsmForm;

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
