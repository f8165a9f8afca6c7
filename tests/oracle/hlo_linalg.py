"""The linear-algebra custom calls of JAX dumps, in NumPy, for hlo_numpy.py.

LU (getrf), Cholesky (potrf), triangular solve (trsm), LU pivots to a
permutation and QR (geqrf, orgqr), under the names and argument conventions
jaxlib has used:

* GPU kernels with a packed descriptor as backend_config (jaxlib/cuda/
  cusolver_kernels.h, cublas_kernels.h, cuda_lu_pivot_kernels.h): getrf
  `<iiii` type, batch, m, n; getrf_batched `<iii` type, batch, n; potrf
  `<ii qq i4x` type, uplo, batch, n, lwork; trsm_batched `<8i` type, batch,
  m, n, side, uplo, trans, diag (cuBLAS enums; hipBLAS's for hip*);
  lu_pivots_to_permutation `<qii` batch, pivot_size, permutation_size;
  geqrf `<5i` type, batch, m, n, lwork; geqrf_batched `<4i`; orgqr `<6i`
  type, batch, m, n, k, lwork.
* LAPACK before the typed FFI (jaxlib/lapack.pyx): leading s32 scalar
  operands, getrf (batch, m, n, a), potrf (lower, batch, n, a), trsm
  (left, lower, trans, diag, m, n, batch, alpha, a, b), geqrf (batch, m, n,
  lwork, a), orgqr (batch, m, n, k, lwork, a, tau).
* Typed FFI (jaxlib/lapack.py): attributes in backend_config={...}: potrf
  uplo ('L'/'U') or lower (bool), trsm side, uplo, trans_x, diag.

Matrices are the logical [..., rows, cols] arrays: JAX's layout constraints
are column-major, whose buffer holds the logical matrix; any other
constraint is an error here. Computed in float64 and rounded once (in
float32 under hlo_numpy.py --sums native: hlo_semantics.sum_type), from
the definitions (partial pivoting choosing the first largest |value|; a
zero pivot recorded in info and skipped; Cholesky stops at the first
non-positive pivot, leaving it on the diagonal; geqrf is NumPy's LAPACK,
orgqr the reflectors multiplied out). Library workspace results are zeros.
"""

import re
import struct

import numpy as np

from hlo_semantics import sum_type
from hlo_text_parser import HloError

# target -> (op, form, element type its name says)
TARGETS = {}
for _prefix, _form in (("cu", "cuda"), ("hip", "hip")):
    TARGETS[f"{_prefix}solver_getrf"] = ("getrf", _form, None)
    TARGETS[f"{_prefix}blas_getrf_batched"] = ("getrf_batched", _form, None)
    TARGETS[f"{_prefix}solver_getrf_ffi"] = ("getrf", "ffi", None)
    TARGETS[f"{_prefix}solver_potrf"] = ("potrf", _form, None)
    TARGETS[f"{_prefix}solver_potrf_ffi"] = ("potrf", "ffi", None)
    TARGETS[f"{_prefix}blas_trsm_batched"] = ("trsm", _form, None)
    TARGETS[f"{_prefix}solver_geqrf"] = ("geqrf", _form, None)
    TARGETS[f"{_prefix}blas_geqrf_batched"] = ("geqrf_batched", _form, None)
    TARGETS[f"{_prefix}solver_geqrf_ffi"] = ("geqrf", "ffi", None)
    TARGETS[f"{_prefix}solver_orgqr"] = ("orgqr", _form, None)
    TARGETS[f"{_prefix}solver_orgqr_ffi"] = ("orgqr", "ffi", None)
TARGETS["cuda_lu_pivots_to_permutation"] = ("pivots", "cuda", None)
TARGETS["cu_lu_pivots_to_permutation"] = ("pivots", "cuda", None)
TARGETS["hip_lu_pivots_to_permutation"] = ("pivots", "hip", None)
for _t, _dtype in (("s", "f32"), ("d", "f64")):
    TARGETS[f"lapack_{_t}getrf"] = ("getrf", "scalars", _dtype)
    TARGETS[f"lapack_{_t}getrf_ffi"] = ("getrf", "ffi", _dtype)
    TARGETS[f"lapack_{_t}potrf"] = ("potrf", "scalars", _dtype)
    TARGETS[f"lapack_{_t}potrf_ffi"] = ("potrf", "ffi", _dtype)
    TARGETS[f"blas_{_t}trsm"] = ("trsm", "scalars", _dtype)
    TARGETS[f"blas_{_t}trsm_ffi"] = ("trsm", "ffi", _dtype)
    TARGETS[f"lapack_{_t}geqrf"] = ("geqrf", "scalars", _dtype)
    TARGETS[f"lapack_{_t}geqrf_ffi"] = ("geqrf", "ffi", _dtype)
    TARGETS[f"lapack_{_t}orgqr"] = ("orgqr", "scalars", _dtype)
    TARGETS[f"lapack_{_t}orgqr_ffi"] = ("orgqr", "ffi", _dtype)

# cuBLAS / hipBLAS enum values: (side left, right), (uplo lower, upper),
# (trans N, T, C), (diag non-unit, unit).
ENUMS = {"cuda": ((0, 1), (0, 1), (0, 1, 2), (0, 1)),
         "hip": ((141, 142), (122, 121), (111, 112, 113), (131, 132))}


def decode_c_string(text):
    """The bytes of a C-escaped quoted string ("\\000\\001...")."""
    text = text.strip()
    if not (text.startswith('"') and text.endswith('"')):
        return None
    body, out, i = text[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in "01234567":
            j = i + 1
            while j < len(body) and j < i + 4 and body[j] in "01234567":
                j += 1
            out.append(int(body[i + 1:j], 8))
            i = j
        elif nxt == "x":
            j = i + 2
            while j < len(body) and body[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(body[i + 2:j], 16) & 0xFF)
            i = j
        else:
            out += {"n": b"\n", "t": b"\t", "r": b"\r", "\\": b"\\", '"': b'"', "'": b"'"}.get(nxt, nxt.encode())
            i += 2
    return bytes(out)


def ffi_attributes(text):
    """{uplo = 76 : ui8, lower = true} -> {'uplo': 76, 'lower': 1}."""
    out = {}
    for key, value in re.findall(r"(\w+)\s*=\s*(-?\w+)", text or ""):
        if value in ("true", "false"):
            out[key] = int(value == "true")
        elif re.fullmatch(r"-?\d+", value):
            out[key] = int(value)
    return out


def check_layouts(constraints, matrices, where):
    """The operands of the highest rank (the matrices; JAX's rule) column-major,
    the others (pivots, tau) row-major, batch dimensions row-major: the
    layouts under which the library's matrix is the logical one."""
    found = [(len([d for d in dims.split(",") if d]), dims, layout)
             for dims, layout in re.findall(r"\w+\[([\d,]*)\]\{([\d,]*)\}", constraints or "")]
    top = max((rank for rank, _, _ in found), default=0)
    for rank, dims, layout in found:
        order = [int(x) for x in layout.split(",") if x]
        if not order:
            continue
        want = list(range(rank - 1, -1, -1))
        if matrices and rank == top and rank >= 2:
            want = [rank - 2, rank - 1] + list(range(rank - 3, -1, -1))
        if order != want:
            raise HloError(f"{where}: operand layout {{{layout}}} of [{dims}] is not the library's "
                           f"(expected {{{','.join(map(str, want))}}})")


# -- the algorithms, on one matrix in its sum type (float64 unless native) ---


def getrf(a):
    """LAPACK getf2: (lu, 1-based ipiv, info)."""
    a = np.array(a, sum_type(a.dtype))
    m, n = a.shape
    k = min(m, n)
    ipiv = np.zeros(k, np.int32)
    info = 0
    for j in range(k):
        p = j + int(np.argmax(np.abs(a[j:, j])))
        ipiv[j] = p + 1
        if a[p, j] != 0:
            a[[j, p]] = a[[p, j]]
            a[j + 1:, j] /= a[j, j]
        elif info == 0:
            info = j + 1
        a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    return a, ipiv, info


def potrf(a, lower):
    """LAPACK potf2: (factor in the chosen triangle, the other as given, info)."""
    a = np.array(a, sum_type(a.dtype))
    t = a if lower else a.T.copy()  # work on the lower triangle
    n = t.shape[0]
    for j in range(n):
        d = t[j, j] - np.dot(t[j, :j], t[j, :j])
        if not d > 0:
            t[j, j] = d
            return (t if lower else t.T), j + 1
        t[j, j] = np.sqrt(d)
        t[j + 1:, j] = (t[j + 1:, j] - t[j + 1:, :j] @ t[j, :j]) / t[j, j]
    return (t if lower else t.T), 0


def trsm(a, b, alpha, left, lower, transpose, unit):
    """BLAS trsm: X with op(A) X = alpha B (left) or X op(A) = alpha B, by
    substitution in the direction op(A) is triangular in (the right side
    solves the transposed system op(A)^T X^T = alpha B^T)."""
    wide = sum_type(np.result_type(a, b))
    tri = np.array(np.tril(a) if lower else np.triu(a), wide)
    if unit:
        np.fill_diagonal(tri, 1.0)
    op = tri.T if transpose else tri
    rhs = np.array(alpha * np.array(b, wide), wide)
    if alpha == 0:
        return np.zeros_like(rhs)
    if not left:
        op, rhs = op.T, rhs.T
    x = np.zeros_like(rhs)
    k = op.shape[0]
    forward = (lower != transpose) != (not left)  # op (as solved) is lower triangular
    for i in (range(k) if forward else range(k - 1, -1, -1)):
        done = slice(0, i) if forward else slice(i + 1, k)
        x[i] = (rhs[i] - op[i, done] @ x[done]) / op[i, i]
    return x if left else x.T


def geqrf(a):
    """LAPACK geqrf through NumPy's own LAPACK (mode='raw' gives the factored
    matrix transposed, Fortran's order): (qr, tau)."""
    h, tau = np.linalg.qr(np.array(a, sum_type(a.dtype)), mode="raw")
    return h.T, tau


def orgqr(a, tau):
    """The first n columns of H(0) ... H(k-1), H(j) = I - tau_j v_j v_j^T with
    v_j = [0.., 1, a[j+1:, j]], multiplied out."""
    wide = sum_type(a.dtype)
    a = np.array(a, wide)
    m, n = a.shape
    q = np.eye(m, dtype=wide)
    for j, t in enumerate(np.asarray(tau, wide)):
        v = np.zeros(m, wide)
        v[j] = 1
        v[j + 1:] = a[j + 1:, j]
        q = q @ (np.eye(m) - t * np.outer(v, v))
    return q[:, :n]


def pivots_to_permutation(pivots, size):
    perm = np.arange(size, dtype=np.int32)
    for i, p in enumerate(pivots):
        if 0 <= p < size:
            perm[i], perm[p] = perm[p], perm[i]
    return perm


# -- the calls ------------------------------------------------------------------


def batched(fn, arrays, core_ranks):
    """Applies fn to each batch element of `arrays` (leading dims shared)."""
    batch = arrays[0].shape[:arrays[0].ndim - core_ranks[0]]
    outs = None
    for idx in np.ndindex(*batch):
        res = fn(*[x[idx] for x in arrays])
        if outs is None:
            outs = [np.zeros(batch + np.shape(r), np.asarray(r).dtype) for r in res]
        for o, r in zip(outs, res):
            o[idx] = r
    return outs


def flag_values(op, form, ops, config, where):
    """(sizes said by the call, flags) from the descriptor, scalars or attributes."""
    if form in ("cuda", "hip"):
        raw = decode_c_string(config or "")
        if raw is None:
            raise HloError(f"{where}: no kernel descriptor")
        fmt = {"getrf": "<4i", "getrf_batched": "<3i", "potrf": "<2i2qi4x", "trsm": "<8i", "pivots": "<q2i",
               "geqrf": "<5i", "geqrf_batched": "<4i", "orgqr": "<6i"}[op]
        if len(raw) != struct.calcsize(fmt):
            raise HloError(f"{where}: descriptor of {len(raw)} bytes, expected {struct.calcsize(fmt)}")
        return struct.unpack(fmt, raw)
    if form == "scalars":
        return tuple(int(np.asarray(x)) for x in ops if np.ndim(x) == 0 and np.asarray(x).dtype == np.int32)
    return ffi_attributes(config)


def run_getrf(op, form, ops, config, where):
    a = ops[-1]
    said = flag_values(op, form, ops, config, where)
    m, n = a.shape[-2:]
    batch = int(np.prod(a.shape[:-2]))
    if form in ("cuda", "hip"):
        want = (batch, m, n) if op == "getrf" else (batch, n)
        if tuple(said[1:]) != want:
            raise HloError(f"{where}: descriptor sizes {said[1:]} for {a.shape}")
    elif form == "scalars" and said[:3] != (batch, m, n):
        raise HloError(f"{where}: scalar sizes {said[:3]} for {a.shape}")
    lu, ipiv, info = batched(lambda x: getrf(x), [a], [2])
    out = [lu.astype(a.dtype), ipiv, info.astype(np.int32)]
    return out


def run_potrf(op, form, ops, config, where):
    a = ops[-1]
    said = flag_values(op, form, ops, config, where)
    if form in ("cuda", "hip"):
        lower = said[1] == ENUMS[form][1][0]
    elif form == "scalars":
        lower = said[0] != 0
    elif "lower" in said:
        lower = said["lower"] != 0
    else:
        lower = said["uplo"] == ord("L")
    lu, info = batched(lambda x: potrf(x, lower), [a], [2])
    return [lu.astype(a.dtype), info.astype(np.int32)]


def run_trsm(op, form, ops, config, where):
    said = flag_values(op, form, ops, config, where)
    if form in ("cuda", "hip"):
        e = ENUMS[form]
        a, b, alpha = ops[0], ops[1], 1.0
        left, lower = said[4] == e[0][0], said[5] == e[1][0]
        transpose, unit = said[6] != e[2][0], said[7] == e[3][1]
    elif form == "scalars":
        a, b, alpha = ops[8], ops[9], float(ops[7])
        left, lower, transpose, unit = said[0] != 0, said[1] != 0, said[2] != 0, said[3] != 0
    else:
        a, b = ops[0], ops[1]
        alpha = float(ops[2]) if len(ops) > 2 else 1.0
        left, lower = said["side"] == ord("L"), said["uplo"] == ord("L")
        transpose, unit = said["trans_x"] != ord("N"), said["diag"] == ord("U")
    x, = batched(lambda p, q: (trsm(p, q, alpha, left, lower, transpose, unit),), [a, b], [2, 2])
    return [x.astype(b.dtype)]


def run_qr(op, form, ops, shape, config, where):
    """geqrf -> [qr, tau (, info)], orgqr -> [q (, info)]; info 0."""
    said = flag_values(op, form, ops, config, where)
    leaves = shape.leaves()
    if op in ("geqrf", "geqrf_batched"):
        a = ops[-1]
        if form in ("cuda", "hip") and tuple(said[1:4]) != (int(np.prod(a.shape[:-2])),) + a.shape[-2:]:
            raise HloError(f"{where}: descriptor sizes {said[1:4]} for {a.shape}")
        qr, tau = batched(geqrf, [a], [2])
        out = [qr.astype(a.dtype), tau.astype(a.dtype)]
    else:
        a, tau = ops[-2], ops[-1]
        q, = batched(lambda x, t: (orgqr(x, t),), [a, tau], [2, 1])
        out = [q.astype(a.dtype)]
    if len(leaves) > len(out) and leaves[len(out)].dtype == "s32":
        out.append(np.zeros(leaves[len(out)].dims, np.int32))  # info
    return out


def linalg_call(target, ops, shape, attrs, where):
    """The result of a linear-algebra custom call (a tuple when the shape is one)."""
    op, form, dtype = TARGETS[target]
    check_layouts(attrs.get("operand_layout_constraints"), op != "pivots", where)
    config = attrs.get("backend_config")
    leaves = shape.leaves()
    if dtype is not None and leaves[0].dtype != dtype:
        raise HloError(f"{where}: {target} takes {dtype}, not {leaves[0].dtype}")
    if op == "pivots":
        pivots = ops[0]
        size = shape.dims[-1]
        perm, = batched(lambda p: (pivots_to_permutation(p, size),), [pivots], [1])
        return perm
    if op in ("getrf", "getrf_batched"):
        out = run_getrf(op, form, ops, config, where)
    elif op == "potrf":
        out = run_potrf(op, form, ops, config, where)
    elif op in ("geqrf", "geqrf_batched", "orgqr"):
        out = run_qr(op, form, ops, shape, config, where)
    else:
        out = run_trsm(op, form, ops, config, where)
    # Library workspace results: zeros.
    for leaf in leaves[len(out):]:
        out.append(np.zeros(leaf.dims, {"s8": np.int8, "u8": np.uint8, "f32": np.float32,
                                        "f64": np.float64, "s32": np.int32}[leaf.dtype]))
    return tuple(out) if shape.is_tuple() else out[0]


def linalg_op(op, ops, attrs, where):
    """XLA's triangular-solve and cholesky ops (the upper or lower triangle
    the factor does not use, implementation-defined in XLA, keeps the input,
    as LAPACK leaves it)."""
    flag = lambda name: attrs.get(name, "false").strip() == "true"  # noqa: E731
    if op == "cholesky":
        factor, _ = batched(lambda x: potrf(x, flag("lower")), [ops[0]], [2])
        return factor.astype(ops[0].dtype)
    mode = attrs.get("transpose_a", "NO_TRANSPOSE").strip()
    if mode not in ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"):
        raise HloError(f"{where}: transpose_a={mode}")
    a, b = ops
    x, = batched(lambda p, q: (trsm(p, q, 1.0, flag("left_side"), flag("lower"), mode != "NO_TRANSPOSE",
                                    flag("unit_diagonal")),), [a, b], [2, 2])
    return x.astype(b.dtype)
