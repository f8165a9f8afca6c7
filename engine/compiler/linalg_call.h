// Internal to engine/compiler: reading the linear-algebra custom calls of
// JAX dumps (LU, Cholesky, triangular solve, LU pivots to a permutation)
// into what engine/codelets/linalg.h computes: which operands and results
// hold the matrices, the sizes, the flags. lower_linalg.cc emits them.
//
// The conventions, by target (jaxlib sources, github.com/jax-ml/jax;
// linalg_descriptor.h decodes them):
//
// GPU, a packed kernel descriptor as backend_config (little-endian;
// jaxlib/cuda/cusolver_kernels.h, cublas_kernels.h and
// cuda_lu_pivot_kernels.h, 2021-22; jaxlib/cusolver.py for the operands):
//   cusolver_getrf (a) -> (lu, ipiv, info, work)
//       i32 type, batch, m, n                                   16 bytes
//   cublas_getrf_batched (a) -> (lu, ipiv, info, work)
//       i32 type, batch, n                                      12 bytes
//   cusolver_potrf (a) -> (l, info, work)
//       i32 type, uplo; i64 batch, n; i32 lwork (+4 padding)    32 bytes
//   cublas_trsm_batched (a, b) -> (x, work, work)
//       i32 type, batch, m, n, side, uplo, trans, diag          32 bytes
//   cuda_lu_pivots_to_permutation (pivots) -> permutation
//       i64 batch; i32 pivot_size, permutation_size             16 bytes
//   cusolver_geqrf (a) -> (qr, tau, info, work)
//       i32 type, batch, m, n, lwork                            20 bytes
//   cublas_geqrf_batched (a) -> (qr, tau, work, work)
//       i32 type, batch, m, n                                   16 bytes
//   cusolver_orgqr (a, tau) -> (q, info, work)
//       i32 type, batch, m, n, k, lwork                         24 bytes
// type: 0 f32, 1 f64, 2 c64, 3 c128. cuBLAS enums: side 0 left, 1 right;
// uplo 0 lower, 1 upper; trans 0 N, 1 T, 2 C; diag 0 non-unit, 1 unit. The
// hipsolver_/hipblas_ forms have the same layouts with hipBLAS's values
// (uplo 122 lower, 121 upper; trans 111-113; diag 131/132; side 141/142).
//
// CPU before the typed FFI (jaxlib/lapack.pyx, then lapack.py to 2024):
// the sizes and flags are leading s32 scalar operands, in this order:
//   lapack_{s,d}getrf (batch, m, n, a) -> (lu, ipiv, info)
//   lapack_{s,d}potrf (lower, batch, n, a) -> (l, info)
//   blas_{s,d}trsm (left, lower, trans 0/1/2, unit, m, n, batch, alpha,
//       a, b) -> x
//   lapack_{s,d}geqrf (batch, m, n, lwork, a) -> (qr, tau, info, work)
//   lapack_{s,d}orgqr (batch, m, n, k, lwork, a, tau) -> (q, info, work)
//
// Typed FFI (jaxlib/lapack.py, jax/_src/lax/linalg.py, from 2024): sizes
// from the shapes, flags as attributes, backend_config={uplo = 76 : ui8}:
//   lapack_{s,d}getrf_ffi, cusolver_getrf_ffi (a) -> (lu, ipiv, info)
//   lapack_{s,d}potrf_ffi (a) -> (l, info); uplo 'L' (76) or 'U' (85)
//   cusolver_potrf_ffi (a) -> (l, info); lower = true or false
//   blas_{s,d}trsm_ffi (a, b[, alpha]) -> x; side 'L'/'R', uplo, trans_x
//       'N'/'T'/'C', diag 'U'/'N' as ui8 characters
//   cu_lu_pivots_to_permutation, hip_lu_pivots_to_permutation (pivots)
//       -> permutation (before 2024 with cuda_'s descriptor)
//   lapack_{s,d}geqrf_ffi (a) -> (qr, tau, info, work), from 2025 (qr,
//       tau); cusolver_geqrf_ffi (a) -> (qr, tau)
//   lapack_{s,d}orgqr_ffi (a, tau) -> (q, info, work), from 2025 q;
//       cusolver_orgqr_ffi (a, tau) -> q
//
// Matrices are [batch..., rows, cols]; JAX asks for column-major layouts
// (operand_layout_constraints={f32[3,3]{0,1}}), whose buffer holds the
// logical matrix, which is the one the library factors. Other layouts and
// complex types are valid but not supported: the call stays opaque.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "engine/hlo/attributes.h"
#include "engine/hlo/module.h"
#include "engine/target/element_type.h"

namespace tileprof::engine::compiler {

enum class LinalgOp : uint8_t { kGetrf, kPotrf, kTrsm, kLuPivots, kGeqrf, kOrgqr };

// A call read and checked: the matrices of batch element b are elements
// [b * per, (b + 1) * per) of each array flattened.
struct LinalgCall {
  LinalgOp op = LinalgOp::kGetrf;
  ElementType type = ElementType::kF32;  // of the matrices (s32 for pivots)
  uint64_t batch = 1;                    // matrices (product of the batch dimensions)
  // Operands read per batch element, in the codelet's field order
  // (getrf, potrf: a; trsm: a, b; pivots: pivots), and trsm's alpha.
  std::vector<size_t> inputs;
  std::optional<size_t> alpha;
  // Result leaves written per batch element, in the codelet's field order
  // (getrf: lu, ipiv, info; potrf: l, info; trsm: x; pivots: permutation;
  // geqrf: qr, tau, info; orgqr: q, info);
  // other leaves are library workspace, allocated and never written.
  std::vector<size_t> outputs;
  // The codelet's parameters (engine/codelets/linalg.h).
  std::vector<uint32_t> params;
  // The call has no info result (XLA's cholesky, cuBLAS's batched QR, the
  // newer FFI QR forms): the codelet writes a scratch one (after the
  // outputs above).
  bool scratch_info = false;
};

// IsLinalgTarget (declared in lower.h, for LowerCustomCall): whether a
// target is one of the names above.

// The call, or nullopt when it is valid but not supported (complex types,
// other layouts, empty matrices). Errors name the target (the lowering
// adds the instruction):
// wrong operand count, shapes that disagree, a descriptor of the wrong size
// or whose sizes, type or enums disagree with the shapes, a flag operand
// that is not a constant, a missing attribute.
Expected<std::optional<LinalgCall>> ReadLinalgCall(const hlo::Instruction& instruction,
                                                   const hlo::CustomCall& call);

// XLA's own triangular-solve (left_side, lower, unit_diagonal, transpose_a;
// a [..., k, k], b [..., m, n]) and cholesky (lower; the other triangle is
// implementation-defined: here the input's) ops, which the same codelets
// compute; batch 0 when the result is empty. nullopt for types other than
// f32 and f64; errors for shapes or attributes XLA rejects.
Expected<std::optional<LinalgCall>> ReadLinalgOp(const hlo::Instruction& instruction);

}  // namespace tileprof::engine::compiler
