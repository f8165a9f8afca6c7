// Dense linear algebra on small matrices, created on demand by the HLO
// compiler for the LAPACK, cuSOLVER and cuBLAS custom calls of JAX dumps
// (engine/compiler/lower_linalg.cc reads their descriptors). A vertex works
// through `count` independent matrices (one batch element each), stored one
// after another in every field; count is the length of the field noted
// below divided by its per-matrix size.
//
// Matrices are logical and row-major: element (i, j) of an r x c matrix is
// at i * c + j. The libraries read column-major buffers, which JAX's layout
// constraints make hold the logical matrix, so this is the matrix they see.
//
//   tileprof::Getrf<T>  a, lu, ipiv (s32), info (s32); params m, n.
//       LU factorisation with partial pivoting (LAPACK ?getf2, which
//       cuSOLVER's getrf and cuBLAS's getrfBatched also compute): lu holds
//       L (unit diagonal, below) and U (on and above), ipiv[j] the 1-based
//       row swapped with row j + 1 at step j (the first largest |value| of
//       the column), info 0, or the 1-based index of the first zero pivot
//       (the factorisation then goes on, as LAPACK's does). count: info.
//   tileprof::Potrf<T>  a, l, info (s32); params n, lower. Cholesky
//       factorisation (LAPACK ?potf2): lower: A = L L^T, L in the lower
//       triangle; else A = U^T U, U in the upper triangle. Only that
//       triangle of `a` is read and of `l` written; the other is `a`'s
//       (the libraries leave it). A non-positive pivot at step j stops the
//       factorisation: info = j + 1, l[j][j] holds that pivot. count: info.
//   tileprof::Trsm<T>   a, b, alpha (scalar), x; params m, n, left, lower,
//       transpose, unit. Triangular solve (BLAS ?trsm): left: op(A) X =
//       alpha B, else X op(A) = alpha B; B and X m x n, A k x k (k = m when
//       left, else n) whose lower or upper triangle is read (the unit
//       diagonal is not); op(A) = A or A^T. count: x.
//   tileprof::Geqrf<T>  a, qr, tau, info (s32); params m, n. Householder QR
//       (LAPACK ?geqr2): qr holds R on and above the diagonal and below it
//       the reflectors' vectors v (v[j] = 1 implied), tau their scales,
//       H(j) = I - tau[j] v v^T, A = H(0) ... H(k-1) R, k = min(m, n);
//       ?larfg's reflector: beta = -sign(alpha) |(alpha, x)|, tau = 0 when
//       x is already zero. info is always 0. count: info.
//   tileprof::Orgqr<T>  a, tau, q, info (s32); params m, n, k (m >= n >=
//       k). The first n columns of H(0) ... H(k-1) from geqrf's reflectors
//       in a's first k columns (LAPACK ?org2r). info is always 0. count:
//       info.
//   tileprof::LuPivotsToPermutation<int>  pivots (s32), permutation (s32);
//       params k, size. JAX's lu_pivots_to_permutation kernel: the
//       permutation [0, size) after swapping entries i and pivots[i] for i
//       in [0, k) in order (0-based pivots; one outside [0, size) is
//       skipped). count: permutation.
#pragma once

#include <memory>
#include <string>

#include "common/expected.h"
#include "engine/codelets/codelet.h"

namespace tileprof::engine {

// Code bytes, compared with kMatMulCodeBytes (480 B: three nested loops and
// a reduction). getrf has four loops per column (pivot search, row swap,
// scaling, the rank-1 update), 640 B; potrf two (the diagonal's dot and
// the column below), 480 B; trsm the substitution loops in both sides and
// both triangles, 512 B; the permutation an iota and a swap loop, 128 B.
inline constexpr uint32_t kGetrfCodeBytes = 640;
inline constexpr uint32_t kPotrfCodeBytes = 480;
inline constexpr uint32_t kTrsmCodeBytes = 512;
inline constexpr uint32_t kLuPivotsCodeBytes = 128;
// QR: the reflector (a norm, a square root, a scaling) and its application
// (a dot and a rank-1 update per column), 576 B; orgqr the same
// application and the column setup, 512 B.
inline constexpr uint32_t kGeqrfCodeBytes = 576;
inline constexpr uint32_t kOrgqrCodeBytes = 512;

std::string GetrfCodeletName(ElementType type);
std::string PotrfCodeletName(ElementType type);
std::string TrsmCodeletName(ElementType type);
std::string GeqrfCodeletName(ElementType type);
std::string OrgqrCodeletName(ElementType type);
std::string LuPivotsToPermutationCodeletName();

// Errors: a type other than f32 or f64 (the only real types the libraries
// take; JAX's complex forms stay opaque).
Expected<std::unique_ptr<Codelet>> MakeGetrfCodelet(ElementType type);
Expected<std::unique_ptr<Codelet>> MakePotrfCodelet(ElementType type);
Expected<std::unique_ptr<Codelet>> MakeTrsmCodelet(ElementType type);
Expected<std::unique_ptr<Codelet>> MakeGeqrfCodelet(ElementType type);
Expected<std::unique_ptr<Codelet>> MakeOrgqrCodelet(ElementType type);
Expected<std::unique_ptr<Codelet>> MakeLuPivotsToPermutationCodelet();

}  // namespace tileprof::engine
