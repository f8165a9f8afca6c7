#!/usr/bin/python3
"""Self-tests of the NumPy oracle (hlo_numpy.py) on hand-computed values.

The oracle judges `tileprof run`, so it is checked against numbers worked out
by hand (in the comments) and, for convolution, against a direct loop over
the definition. Run: /usr/bin/python3 tests/oracle/oracle_selftest.py
"""

import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from hlo_numpy import run_module  # noqa: E402
from hlo_text_parser import HloError, parse_module  # noqa: E402


def run(text, *inputs, iterations=1):
    module = parse_module(text, "<test>")
    leaves = run_module(module, [np.asarray(i) for i in inputs], iterations)
    return leaves if len(leaves) > 1 else leaves[0]


ADD = """
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}
"""
MAX = """
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
"""


class Elementwise(unittest.TestCase):
    def test_arithmetic_and_short_style(self):
        out = run("""HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  s = f32[3] add(x, y)
  p = f32[3] multiply(s, y)
  ROOT r = f32[3] subtract(p, x)
}""", np.float32([1, 2, 3]), np.float32([4, 5, 6]))
        # (1+4)*4-1 = 19, (2+5)*5-2 = 33, (3+6)*6-3 = 51
        np.testing.assert_array_equal(out, [19, 33, 51])

    def test_integer_division_follows_xla(self):
        out = run("""HloModule m
ENTRY e {
  x = s32[5] parameter(0)
  y = s32[5] parameter(1)
  q = s32[5] divide(x, y)
  r = s32[5] remainder(x, y)
  ROOT t = (s32[5], s32[5]) tuple(q, r)
}""", np.int32([7, -7, 7, 5, -2147483648]), np.int32([2, 2, 0, -3, -1]))
        # truncation toward zero; x/0 = -1 and x%0 = x; INT_MIN/-1 = INT_MIN, remainder 0
        np.testing.assert_array_equal(out[0], [3, -3, -1, -1, -2147483648])
        np.testing.assert_array_equal(out[1], [1, -1, 7, 2, 0])

    def test_compare_select_convert_clamp(self):
        out = run("""HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  zb = f32[4] broadcast(z), dimensions={}
  gt = pred[4] compare(x, zb), direction=GT
  r = f32[4] select(gt, x, zb)
  i = s32[4] convert(x)
  lo = f32[] constant(-1)
  hi = f32[] constant(1)
  c = f32[4] clamp(lo, x, hi)
  ROOT t = (f32[4], s32[4], f32[4]) tuple(r, i, c)
}""", np.float32([-1.5, 2.7, 0, 0.5]))
        np.testing.assert_array_equal(out[0], np.float32([0, 2.7, 0, 0.5]))
        np.testing.assert_array_equal(out[1], [-1, 2, 0, 0])  # truncation
        np.testing.assert_array_equal(out[2], [-1, 1, 0, 0.5])

    def test_unsigned_wraps_and_shifts(self):
        out = run("""HloModule m
ENTRY e {
  x = u32[3] parameter(0)
  k = u32[3] constant({2654435761, 1, 2})
  m = u32[3] multiply(x, k)
  s = u32[3] constant({16, 32, 1})
  ROOT r = u32[3] shift-right-logical(m, s)
}""", np.uint32([3, 5, 0x80000000]))
        # 3*2654435761 mod 2^32 = 3668339987 -> >>16 = 55974; shift by 32 gives 0; 2^31*2 wraps to 0
        np.testing.assert_array_equal(out, [55974, 0, 0])

    def test_bitcast_convert_builds_floats(self):
        out = run("""HloModule m
ENTRY e {
  x = u32[2] constant({1065353216, 1073741824})
  ROOT f = f32[2] bitcast-convert(x)
}""")
        np.testing.assert_array_equal(out, [1.0, 2.0])


class FloatRounding(unittest.TestCase):
    """f16/bf16: every op computed in f32 and rounded to nearest even (docs/op-support.md)."""

    def test_scalar_bf16_chain_rounds_each_op(self):
        # 1 + 2^-8 is a bf16 tie: to even, 1. Kept in f32, (x + 2^-8) - x would be 2^-8.
        out = run("""HloModule m
ENTRY e {
  x = bf16[] constant(1)
  d = bf16[] constant(0.00390625)
  s = bf16[] add(x, d)
  ROOT r = bf16[] subtract(s, x)
}""")
        self.assertEqual(float(out), 0.0)

    def test_bf16_reducer_rounds_each_op(self):
        # Sum of squares through a two-op reducer, acc + v*v, v = 1.0625: v*v =
        # 1.12890625 is a bf16 tie, to even 1.125, and three of them sum exactly
        # to 3.375. Kept in f32 the sum would be 3.38671875, rounding to 3.390625.
        out = run("""HloModule m
sq {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  bb = bf16[] multiply(b, b)
  ROOT s = bf16[] add(a, bb)
}
ENTRY e {
  v = bf16[3] constant({1.0625, 1.0625, 1.0625})
  z = bf16[] constant(0)
  ROOT r = bf16[] reduce(v, z), dimensions={0}, to_apply=sq
}""")
        self.assertEqual(float(out), 3.375)

    def test_convert_to_bf16_goes_through_f32(self):
        # 2^24 + 2^16 + 1 -> f32 2^24 + 2^16 (tie to even), a bf16 tie -> 2^24.
        out = run("""HloModule m
ENTRY e {
  i = s32[2] constant({16842753, 16842754})
  ROOT b = bf16[2] convert(i)
}""")
        np.testing.assert_array_equal(out, [16777216.0, 16908288.0])

    def test_round_nearest_afz_near_one_half(self):
        out = run("""HloModule m
ENTRY e {
  x = f32[4] constant({0.49999997, -0.49999997, 2.5, -0.5})
  h = f16[2] constant({0.4998, 1.5})
  rx = f32[4] round-nearest-afz(x)
  rh = f16[2] round-nearest-afz(h)
  ROOT t = (f32[4], f16[2]) tuple(rx, rh)
}""")
        np.testing.assert_array_equal(out[0], [0, -0.0, 3, -1])
        np.testing.assert_array_equal(out[1], [0, 2])


class DataMovement(unittest.TestCase):
    def test_broadcast_transpose_reshape_slice(self):
        out = run("""HloModule m
ENTRY e {
  v = f32[3] parameter(0)
  b = f32[2,3] broadcast(v), dimensions={1}
  t = f32[3,2] transpose(b), dimensions={1,0}
  r = f32[6] reshape(t)
  ROOT s = f32[2] slice(r), slice={[1:6:3]}
}""", np.float32([1, 2, 3]))
        # b = [[1,2,3],[1,2,3]], t = [[1,1],[2,2],[3,3]], r = [1,1,2,2,3,3], r[1:6:3] = r[1], r[4] = [1,3]
        np.testing.assert_array_equal(out, [1, 3])

    def test_dynamic_slice_clamps_and_update(self):
        out = run("""HloModule m
ENTRY e {
  x = f32[5] parameter(0)
  i = s32[] parameter(1)
  d = f32[2] dynamic-slice(x, i), dynamic_slice_sizes={2}
  u = f32[5] dynamic-update-slice(x, d, i)
  ROOT t = (f32[2], f32[5]) tuple(d, u)
}""", np.float32([10, 11, 12, 13, 14]), np.int32(7))
        # start 7 clamps to 5-2 = 3
        np.testing.assert_array_equal(out[0], [13, 14])
        np.testing.assert_array_equal(out[1], [10, 11, 12, 13, 14])

    def test_pad_interior_and_negative(self):
        out = run("""HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  z = f32[] constant(0)
  ROOT p = f32[6] pad(x, z), padding=-1_2_1
}""", np.float32([1, 2, 3]))
        # interior 1: [1,0,2,0,3]; low -1 drops the first; high 2: [0,2,0,3,0,0]
        np.testing.assert_array_equal(out, [0, 2, 0, 3, 0, 0])

    def test_concatenate_iota_reverse(self):
        out = run("""HloModule m
ENTRY e {
  a = s32[2] iota(), iota_dimension=0
  b = s32[2] reverse(a), dimensions={0}
  ROOT c = s32[4] concatenate(a, b), dimensions={0}
}""")
        np.testing.assert_array_equal(out, [0, 1, 1, 0])


class Dot(unittest.TestCase):
    def test_matmul_and_batch(self):
        out = run("""HloModule m
ENTRY e {
  a = f32[2,2] parameter(0)
  b = f32[2,2] parameter(1)
  m = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[2,2] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  a3 = f32[1,2,2] reshape(a)
  b3 = f32[1,2,2] reshape(b)
  bm = f32[1,2,2] dot(a3, b3), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT r = (f32[2,2], f32[2,2], f32[1,2,2]) tuple(m, t, bm)
}""", np.float32([[1, 2], [3, 4]]), np.float32([[5, 6], [7, 8]]))
        # [[1*5+2*7, 1*6+2*8], [3*5+4*7, 3*6+4*8]] = [[19,22],[43,50]]; a^T b = [[26,30],[38,44]]
        np.testing.assert_array_equal(out[0], [[19, 22], [43, 50]])
        np.testing.assert_array_equal(out[1], [[26, 30], [38, 44]])
        np.testing.assert_array_equal(out[2], [[[19, 22], [43, 50]]])


def naive_conv_nhwc(x, k, stride, pad):
    """Direct loop of the definition: x [N,H,W,C], k [KH,KW,C,O]."""
    x = np.pad(x, [(0, 0), pad[0], pad[1], (0, 0)])
    n, h, w, c = x.shape
    kh, kw, _, o = k.shape
    oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
    out = np.zeros((n, oh, ow, o))
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                for f in range(o):
                    out[b, i, j, f] = np.sum(x[b, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
                                             * k[:, :, :, f])
    return out


class Convolution(unittest.TestCase):
    def test_hand_computed_1d(self):
        out = run("""HloModule m
ENTRY e {
  x = f32[1,4,1] parameter(0)
  k = f32[2,1,1] parameter(1)
  ROOT c = f32[1,3,1] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f
}""", np.float32([1, 2, 3, 4]).reshape(1, 4, 1), np.float32([10, 1]).reshape(2, 1, 1))
        # [1*10+2, 2*10+3, 3*10+4]
        np.testing.assert_array_equal(out.reshape(-1), [12, 23, 34])

    def test_2d_stride_pad_against_loops(self):
        rng = np.random.default_rng(1)
        x = rng.normal(size=(2, 5, 6, 3)).astype(np.float32)
        k = rng.normal(size=(3, 3, 3, 4)).astype(np.float32)
        out = run("""HloModule m
ENTRY e {
  x = f32[2,5,6,3] parameter(0)
  k = f32[3,3,3,4] parameter(1)
  ROOT c = f32[2,3,3,4] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}""", x, k)
        np.testing.assert_allclose(out, naive_conv_nhwc(x, k, 2, [(1, 1), (1, 1)]), rtol=1e-5, atol=1e-5)

    def test_weight_gradient_form(self):
        # dk[i,j,c,o] = sum_{n,y,x} in[n,y+i,x+j,c] * g[n,y,x,o]
        rng = np.random.default_rng(2)
        x = rng.normal(size=(2, 5, 5, 3)).astype(np.float32)
        g = rng.normal(size=(2, 3, 3, 4)).astype(np.float32)
        out = run("""HloModule m
ENTRY e {
  x = f32[2,5,5,3] parameter(0)
  g = f32[2,3,3,4] parameter(1)
  ROOT c = f32[3,3,3,4] convolution(x, g), window={size=3x3}, dim_labels=f01b_i01o->01bf
}""", x, g)
        want = np.zeros((3, 3, 3, 4))
        for i in range(3):
            for j in range(3):
                want[i, j] = np.einsum("nyxc,nyxo->co", x[:, i:i + 3, j:j + 3, :], g)
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)

    def test_feature_groups(self):
        # depthwise: 2 groups of one channel each
        x = np.float32([[1, 10], [2, 20], [3, 30]]).reshape(1, 3, 2)
        k = np.float32([[1, 1], [1, -1]]).reshape(2, 1, 2)
        out = run("""HloModule m
ENTRY e {
  x = f32[1,3,2] parameter(0)
  k = f32[2,1,2] parameter(1)
  ROOT c = f32[1,2,2] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f, feature_group_count=2
}""", x, k)
        # channel 0 with [1,1]: 1+2, 2+3; channel 1 with [1,-1]: 10-20, 20-30
        np.testing.assert_array_equal(out.reshape(2, 2), [[3, -10], [5, -10]])


class Reductions(unittest.TestCase):
    def test_native_sums_round_in_f32(self):
        import hlo_semantics
        text = "HloModule m\n" + ADD + """
ENTRY e {
  x = f32[3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=%add
}"""
        x = np.float32([1e8, 1.0, -1e8])
        self.assertEqual(run(text, x), 1.0)  # float64, rounded once: exact
        hlo_semantics.SUMS["mode"] = "native"
        try:
            self.assertEqual(run(text, x), 0.0)  # 1e8 + 1 is 1e8 in f32
        finally:
            hlo_semantics.SUMS["mode"] = "wide"

    def test_reduce_add_and_generic(self):
        out = run("HloModule m\n" + ADD + """
%mul (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %p = f32[] multiply(f32[] %a, f32[] %b)
  %one = f32[] constant(1)
  ROOT %q = f32[] add(f32[] %p, f32[] %one)
}
ENTRY %e (x: f32[2,3]) -> (f32[2], f32[3]) {
  %x = f32[2,3]{1,0} parameter(0)
  %z = f32[] constant(0)
  %r = f32[2]{0} reduce(f32[2,3]{1,0} %x, f32[] %z), dimensions={1}, to_apply=%add
  %g = f32[3]{0} reduce(f32[2,3]{1,0} %x, f32[] %z), dimensions={0}, to_apply=%mul
  ROOT %t = (f32[2]{0}, f32[3]{0}) tuple(f32[2]{0} %r, f32[3]{0} %g)
}""", np.float32([[1, 2, 3], [4, 5, 6]]))
        np.testing.assert_array_equal(out[0], [6, 15])
        # fold: ((0*1+1)*4+1) = 5, ((0*2+1)*5+1) = 6, ((0*3+1)*6+1) = 7
        np.testing.assert_array_equal(out[1], [5, 6, 7])

    def test_reduce_window_max_pool(self):
        out = run("HloModule m\n" + MAX + """
ENTRY e {
  x = f32[1,4,4,1] parameter(0)
  i = f32[] constant(-inf)
  ROOT r = f32[1,2,2,1] reduce-window(x, i), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=max
}""", np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1))
        np.testing.assert_array_equal(out.reshape(2, 2), [[5, 7], [13, 15]])

    def test_reduce_window_padded_sum(self):
        out = run("HloModule m\n" + ADD + """
ENTRY e {
  x = f32[3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce-window(x, z), window={size=2 pad=1_0}, to_apply=add
}""", np.float32([1, 2, 3]))
        np.testing.assert_array_equal(out, [1, 3, 5])  # [0+1, 1+2, 2+3]

    def test_select_and_scatter_max_pool_gradient(self):
        out = run("HloModule m\n" + ADD + """
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
ENTRY e {
  x = f32[4] parameter(0)
  g = f32[3] parameter(1)
  z = f32[] constant(0)
  ROOT s = f32[4] select-and-scatter(x, g, z), window={size=2 stride=1}, select=ge, scatter=add
}""", np.float32([1, 5, 2, 2]), np.float32([10, 20, 30]))
        # windows [1,5] -> index 1, [5,2] -> index 1, [2,2] -> first (GE keeps the current): index 2
        np.testing.assert_array_equal(out, [0, 30, 30, 0])


class GatherScatterSort(unittest.TestCase):
    def test_gather_rows(self):
        out = run("""HloModule m
ENTRY e {
  t = f32[3,2] parameter(0)
  i = s32[2] parameter(1)
  ROOT g = f32[2,2] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
}""", np.float32([[1, 2], [3, 4], [5, 6]]), np.int32([2, 0]))
        np.testing.assert_array_equal(out, [[5, 6], [1, 2]])

    def test_scatter_add_with_duplicates_and_out_of_bounds(self):
        out = run("HloModule m\n" + ADD + """
ENTRY e {
  o = f32[3] parameter(0)
  i = s32[3,1] parameter(1)
  u = f32[3] parameter(2)
  ROOT s = f32[3] scatter(o, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}""", np.float32([1, 1, 1]), np.int32([[2], [2], [5]]), np.float32([10, 20, 30]))
        np.testing.assert_array_equal(out, [1, 1, 31])  # index 5 is out of bounds: skipped

    def test_sort_key_value(self):
        out = run("""HloModule m
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = f32[4] parameter(0)
  v = s32[4] iota(), iota_dimension=0
  ROOT s = (f32[4], s32[4]) sort(k, v), dimensions={0}, is_stable=true, to_apply=less
}""", np.float32([3, 1, 2, 1]))
        np.testing.assert_array_equal(out[0], [1, 1, 2, 3])
        np.testing.assert_array_equal(out[1], [1, 3, 2, 0])  # stable: the two 1s keep their order


class BatchNorm(unittest.TestCase):
    TRAIN = """HloModule m
ENTRY e {
  x = f64[2,2] parameter(0)
  s = f64[2] parameter(1)
  o = f64[2] parameter(2)
  ROOT t = (f64[2,2], f64[2], f64[2]) batch-norm-training(x, s, o), epsilon=0, feature_index=1
}"""

    def test_training_by_hand(self):
        # Feature 0 holds 1 and 5 (mean 3, variance 4), feature 1 holds 3 and
        # 7 (mean 5, variance 4): each normalises to -1 and 1.
        y, mean, var = run(self.TRAIN, np.float64([[1, 3], [5, 7]]), np.float64([1, 2]),
                           np.float64([0, 10]))
        np.testing.assert_array_equal(mean, [3, 5])
        np.testing.assert_array_equal(var, [4, 4])
        np.testing.assert_array_equal(y, [[-1, 8], [1, 12]])

    def test_grad_is_the_derivative_of_training(self):
        # batch-norm-grad's results are the derivatives of sum(dy * y) for the
        # y of batch-norm-training with the batch's own mean and variance:
        # checked against central differences.
        rng = np.random.default_rng(3)
        x = rng.normal(size=(3, 4, 2))
        scale, offset, dy = rng.normal(size=4), rng.normal(size=4), rng.normal(size=(3, 4, 2))
        train = """HloModule m
ENTRY e {
  x = f64[3,4,2] parameter(0)
  s = f64[4] parameter(1)
  o = f64[4] parameter(2)
  ROOT t = (f64[3,4,2], f64[4], f64[4]) batch-norm-training(x, s, o), epsilon=0.01, feature_index=1
}"""
        grad = """HloModule m
ENTRY e {
  x = f64[3,4,2] parameter(0)
  s = f64[4] parameter(1)
  m = f64[4] parameter(2)
  v = f64[4] parameter(3)
  dy = f64[3,4,2] parameter(4)
  ROOT g = (f64[3,4,2], f64[4], f64[4]) batch-norm-grad(x, s, m, v, dy), epsilon=0.01, feature_index=1
}"""

        def loss(x, scale, offset):
            return float((run(train, x, scale, offset)[0] * dy).sum())

        _, mean, var = run(train, x, scale, offset)
        gx, gscale, goffset = run(grad, x, scale, mean, var, dy)
        h = 1e-6

        def numeric(f, v):
            out = np.zeros_like(v)
            for i in np.ndindex(v.shape):
                up, down = v.copy(), v.copy()
                up[i] += h
                down[i] -= h
                out[i] = (f(up) - f(down)) / (2 * h)
            return out
        np.testing.assert_allclose(gx, numeric(lambda v: loss(v, scale, offset), x), atol=1e-6)
        np.testing.assert_allclose(gscale, numeric(lambda v: loss(x, v, offset), scale), atol=1e-6)
        np.testing.assert_allclose(goffset, numeric(lambda v: loss(x, scale, v), offset), atol=1e-6)


class Control(unittest.TestCase):
    def test_while_sums_and_alias_iterations(self):
        text = """HloModule m, input_output_alias={ {0}: (0, {}, may-alias) }
cond {
  t = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  n = s32[] constant(4)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  t = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  a = f32[] get-tuple-element(t), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  f = f32[] convert(j)
  s = f32[] add(a, f)
  ROOT r = (s32[], f32[]) tuple(j, s)
}
ENTRY e {
  a = f32[] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[]) tuple(z, a)
  w = (s32[], f32[]) while(t), condition=cond, body=body
  s = f32[] get-tuple-element(w), index=1
  ROOT r = (f32[]) tuple(s)
}"""
        self.assertEqual(float(run(text, np.float32(0))), 10)  # 1+2+3+4
        # three executions: the output feeds parameter 0 each time: 10, 20, 30
        self.assertEqual(float(run(text, np.float32(0), iterations=3)), 30)

    def test_conditional_and_call(self):
        out = run("""HloModule m
neg {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
dbl {
  x = f32[] parameter(0)
  ROOT d = f32[] add(x, x)
}
ENTRY e {
  p = pred[] parameter(0)
  x = f32[] parameter(1)
  c = f32[] conditional(p, x, x), true_computation=neg, false_computation=dbl
  ROOT k = f32[] call(c), to_apply=dbl
}""", np.bool_(False), np.float32(3))
        self.assertEqual(float(out), 12)


class Errors(unittest.TestCase):
    def test_unsupported_opcode_names_instruction(self):
        with self.assertRaisesRegex(HloError, r"e/cc .*custom-call"):
            run("""HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  ROOT cc = f32[2] custom-call(x), custom_call_target="foo"
}""", np.float32([1, 2]))

    def test_unbounded_dimension_only_where_evaluated(self):
        # XLA's hlo_to_mhlo import test keeps an unbounded computation beside
        # the entry: the module runs; evaluating '?' is an error.
        text = """HloModule m
%unbounded (a: f32[?,4]) -> f32[?,4] {
  %a = f32[?,4] parameter(0)
  ROOT %b = f32[?,4] abs(f32[?,4] %a)
}
ENTRY e {
  x = f32[2] parameter(0)
  ROOT n = f32[2] custom-call(x), custom_call_target="SetBound", literal=s32[] 1
}"""
        np.testing.assert_array_equal(run(text, np.float32([1, -2])), [1, -2])
        with self.assertRaisesRegex(HloError, r"e/a .*unbounded dimension"):
            run("HloModule m\nENTRY e {\n  a = f32[?,4] parameter(0)\n"
                "  ROOT b = f32[?,4] abs(a)\n}", np.zeros((2, 4), np.float32))

    def test_parse_error_has_line(self):
        with self.assertRaisesRegex(HloError, r"<test>:3: .*unknown operand 'nope'"):
            run("HloModule m\nENTRY e {\n  ROOT x = f32[2] negate(nope)\n}")

    def test_cli_rejects_shape_mismatch(self):
        with tempfile.TemporaryDirectory() as d:
            hlo = os.path.join(d, "m.hlo")
            with open(hlo, "w") as f:
                f.write("HloModule m\nENTRY e {\n  ROOT x = f32[2] parameter(0)\n}\n")
            npy = os.path.join(d, "x.npy")
            np.save(npy, np.zeros(3, np.float32))
            r = subprocess.run([sys.executable, os.path.join(HERE, "hlo_numpy.py"), hlo, "--input", f"x={npy}"],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 1)
            self.assertIn("parameter x is f32[2], the file holds float32[3]", r.stderr)

    def test_cli_writes_leaves(self):
        with tempfile.TemporaryDirectory() as d:
            hlo = os.path.join(d, "m.hlo")
            with open(hlo, "w") as f:
                f.write("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  n = f32[2] negate(x)\n"
                        "  ROOT t = (f32[2], (f32[2])) tuple(x, (f32[2]) tuple(n))\n}\n")
            f.close()
            # nested tuple operand written as a separate instruction
            with open(hlo, "w") as f:
                f.write("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  n = f32[2] negate(x)\n"
                        "  i = (f32[2]) tuple(n)\n  ROOT t = (f32[2], (f32[2])) tuple(x, i)\n}\n")
            npy = os.path.join(d, "x.npy")
            np.save(npy, np.float32([1, 2]))
            out = os.path.join(d, "out")
            r = subprocess.run([sys.executable, os.path.join(HERE, "hlo_numpy.py"), hlo, "--input", f"0={npy}",
                                "--outputs", out], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            np.testing.assert_array_equal(np.load(os.path.join(out, "out.0.npy")), [1, 2])
            np.testing.assert_array_equal(np.load(os.path.join(out, "out.1.npy")), [-1, -2])

    def test_cli_takes_tuple_parameter_leaves(self):
        # A tuple parameter's leaves by flattened index (NAME.k), as
        # `tileprof run --input` names them; a lone leaf by the parameter's name.
        with tempfile.TemporaryDirectory() as d:
            hlo = os.path.join(d, "m.hlo")
            with open(hlo, "w") as f:
                f.write("HloModule m\nENTRY e {\n  p.1 = ((f32[2], s32[]), f32[1]) parameter(0)\n"
                        "  q = ((f32[2])) parameter(1)\n"
                        "  a = (f32[2], s32[]) get-tuple-element(p.1), index=0\n"
                        "  x = f32[2] get-tuple-element(a), index=0\n"
                        "  q0 = (f32[2]) get-tuple-element(q), index=0\n"
                        "  y = f32[2] get-tuple-element(q0), index=0\n"
                        "  ROOT s = f32[2] add(x, y)\n}\n")
            files = {}
            for name, value in [("p.1.0", np.float32([1, 2])), ("p.1.1", np.int32(7)),
                                ("p.1.2", np.float32([3])), ("q", np.float32([10, 20]))]:
                files[name] = os.path.join(d, name + ".npy")
                np.save(files[name], value)
            out = os.path.join(d, "out")
            r = subprocess.run([sys.executable, os.path.join(HERE, "hlo_numpy.py"), hlo]
                               + [a for n, p in files.items() for a in ("--input", f"{n}={p}")]
                               + ["--outputs", out], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            np.testing.assert_array_equal(np.load(os.path.join(out, "out.0.npy")), [11, 22])
            del files["p.1.1"]
            r = subprocess.run([sys.executable, os.path.join(HERE, "hlo_numpy.py"), hlo]
                               + [a for n, p in files.items() for a in ("--input", f"{n}={p}")],
                               capture_output=True, text=True)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("no --input for p.1.1", r.stderr)


def threefry2x32(k1, k2, x0, x1):
    """Threefry-2x32, 20 rounds, as Salmon et al. (SC'11) define it."""
    mask = 0xFFFFFFFF
    rotations = ((13, 15, 26, 6), (17, 29, 16, 24))
    keys = (k1, k2, k1 ^ k2 ^ 0x1BD11BDA)
    x = [(x0 + keys[0]) & mask, (x1 + keys[1]) & mask]
    for block in range(5):
        for r in rotations[block % 2]:
            x[0] = (x[0] + x[1]) & mask
            x[1] = (((x[1] << r) | (x[1] >> (32 - r))) & mask) ^ x[0]
        x[0] = (x[0] + keys[(block + 1) % 3]) & mask
        x[1] = (x[1] + keys[(block + 2) % 3] + block + 1) & mask
    return x[0], x[1]


def module_io(name, seed=1):
    """The oracle's outputs for modules/NAME.hlo on compare.py's inputs of that seed."""
    import compare
    path = os.path.join(HERE, "modules", name + ".hlo")
    with open(path) as f:
        text = f.read()
    module = parse_module(text, path)
    with tempfile.TemporaryDirectory() as d:
        specs = compare.generate_inputs(module, text, seed, d)[1::2]
        inputs = {s.partition("=")[0]: np.load(s.partition("=")[2]) for s in specs}
    params = [module.entry.params[i].name for i in sorted(module.entry.params)]
    return inputs, run_module(module, [inputs[p] for p in params])


class LinalgByHand(unittest.TestCase):
    def test_lu_pivots_and_permutation(self):
        # [[1, 2], [3, 4]]: row 2 pivots (ipiv 2, 1-based), l = 1/3, u22 = 2 - 4/3;
        # the 0-based pivots [1, 1] give the permutation [1, 0].
        lu, ipiv, info, perm = run("""
HloModule lu
ENTRY main {
  a = f32[2,2] parameter(0)
  lu = (f32[2,2]{0,1}, s32[2]{0}, s32[], f32[8]{0}) custom-call(a), custom_call_target="cusolver_getrf", operand_layout_constraints={f32[2,2]{0,1}}, backend_config="\\000\\000\\000\\000\\001\\000\\000\\000\\002\\000\\000\\000\\002\\000\\000\\000"
  f = f32[2,2] get-tuple-element(lu), index=0
  p = s32[2] get-tuple-element(lu), index=1
  i = s32[] get-tuple-element(lu), index=2
  one = s32[] constant(1)
  ones = s32[2] broadcast(one), dimensions={}
  p0 = s32[2] subtract(p, ones)
  perm = s32[2] custom-call(p0), custom_call_target="cu_lu_pivots_to_permutation"
  ROOT out = (f32[2,2], s32[2], s32[], s32[2]) tuple(f, p, i, perm)
}""", np.array([[1, 2], [3, 4]], np.float32))
        np.testing.assert_allclose(lu, [[3, 4], [1 / 3, 2 / 3]], rtol=1e-6)
        np.testing.assert_array_equal(ipiv, [2, 2])
        self.assertEqual(int(info), 0)
        np.testing.assert_array_equal(perm, [1, 0])

    def test_cholesky_and_triangular_solve(self):
        # [[4, 2], [2, 5]] = L L^T, L = [[2, 0], [1, 2]] (the upper 9 kept);
        # L x = [2, 9] gives x = [1, 4]; a non-SPD [[1, 2], [2, 1]] stops at
        # step 2 with 1 - 4 = -3 on the diagonal, info 2.
        l, info, x, bad, bad_info = run("""
HloModule chol
ENTRY main {
  s = f64[2,2] parameter(0)
  b = f64[2,1] parameter(1)
  n = f64[2,2] parameter(2)
  c = (f64[2,2]{0,1}, s32[]) custom-call(s), custom_call_target="lapack_dpotrf_ffi", operand_layout_constraints={f64[2,2]{0,1}}, backend_config={uplo = 76 : ui8}
  l = f64[2,2] get-tuple-element(c), index=0
  i = s32[] get-tuple-element(c), index=1
  x = f64[2,1] custom-call(l, b), custom_call_target="blas_dtrsm_ffi", backend_config={diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}
  d = (f64[2,2]{0,1}, s32[]) custom-call(n), custom_call_target="lapack_dpotrf_ffi", backend_config={uplo = 76 : ui8}
  d0 = f64[2,2] get-tuple-element(d), index=0
  d1 = s32[] get-tuple-element(d), index=1
  ROOT out = (f64[2,2], s32[], f64[2,1], f64[2,2], s32[]) tuple(l, i, x, d0, d1)
}""", np.array([[4.0, 9], [2, 5]]), np.array([[2.0], [9]]), np.array([[1.0, 2], [2, 1]]))
        np.testing.assert_allclose(l, [[2, 9], [1, 2]])
        self.assertEqual(int(info), 0)
        np.testing.assert_allclose(x, [[1], [4]])
        np.testing.assert_allclose(bad, [[1, 2], [2, -3]])
        self.assertEqual(int(bad_info), 2)


class ModulesAgainstPlainNumpy(unittest.TestCase):
    """The comparison modules, recomputed here with plain NumPy indexing and loops."""

    def test_dot(self):
        i, out = module_io("dot")
        a, b = i["a"].astype(np.float64), i["b"].astype(np.float64)
        mm = a @ b
        np.testing.assert_allclose(out[0], mm, rtol=1e-6)
        np.testing.assert_allclose(out[1], a.T @ out[0].astype(np.float64), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(out[3], np.matmul(i["c"].astype(np.float64), i["d"]), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out[4], a @ i["v"], rtol=1e-5, atol=1e-6)

    def test_convolution_forward(self):
        i, out = module_io("convolution")
        np.testing.assert_allclose(out[0], naive_conv_nhwc(i["x"], i["k"], 1, [(0, 0), (0, 0)]), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(out[1], naive_conv_nhwc(i["x"], i["k"], 2, [(1, 1), (1, 1)]), rtol=1e-5, atol=1e-5)
        same = naive_conv_nhwc(i["x"], i["k"], 1, [(1, 1), (1, 1)])
        np.testing.assert_allclose(out[5], same.transpose(0, 3, 1, 2), rtol=1e-5, atol=1e-5)
        # the input gradient: the adjoint of the forward convolution, <g, conv(x)> = <igrad(g), x>
        lhs = np.sum(i["g"].astype(np.float64) * naive_conv_nhwc(i["x"], i["k"], 1, [(0, 0), (0, 0)]))
        self.assertAlmostEqual(lhs, float(np.sum(out[3].astype(np.float64) * i["x"])), delta=1e-3)
        # and the weight gradient: <g, conv(x, k)> = <wgrad, k>
        self.assertAlmostEqual(lhs, float(np.sum(out[2].astype(np.float64) * i["k"])), delta=1e-3)

    def test_reduce(self):
        i, out = module_io("reduce")
        x = i["x"].astype(np.float64)
        np.testing.assert_allclose(out[0], x.sum(2), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(out[3], x.sum(), rtol=1e-6, atol=1e-5)
        np.testing.assert_array_equal(out[4], i["x"].max(1))
        np.testing.assert_allclose(out[6], (x * x).sum(2), rtol=1e-5)
        np.testing.assert_array_equal(out[7], i["n"].sum((1, 2)))
        np.testing.assert_array_equal(out[8], i["x"].max(2))
        np.testing.assert_array_equal(out[9], i["x"].argmax(2))

    def test_reduce_window_and_select_and_scatter(self):
        i, out = module_io("reduce_window")
        x, g = i["x"], i["g"]
        pool = np.zeros((2, 4, 4, 3), np.float32)
        grad = np.zeros_like(x)
        for b in range(2):
            for r in range(4):
                for c in range(4):
                    for f in range(3):
                        win = x[b, 2 * r:2 * r + 2, 2 * c:2 * c + 2, f]
                        pool[b, r, c, f] = win.max()
                        k = int(np.argmax(win.reshape(-1)))  # the first maximum
                        grad[b, 2 * r + k // 2, 2 * c + k % 2, f] += g[b, r, c, f]
        np.testing.assert_array_equal(out[0], pool)
        np.testing.assert_allclose(out[3], grad, rtol=1e-6)
        padded = np.pad(x.astype(np.float64), [(0, 0), (1, 1), (1, 1), (0, 0)])
        avg = sum(padded[:, dy:dy + 9, dx:dx + 9, :] for dy in range(3) for dx in range(3))
        np.testing.assert_allclose(out[2], avg, rtol=1e-5, atol=1e-5)

    def test_gather(self):
        i, out = module_io("gather")
        t = i["table"]
        np.testing.assert_array_equal(out[0], t[i["ids"]])
        for n, (r, c) in enumerate(i["starts"]):
            np.testing.assert_array_equal(out[1][n], t[r:r + 3, c:c + 2])
        np.testing.assert_array_equal(out[2], t[np.clip(i["wild"], 0, 9), 0:2])

    def test_scatter(self):
        i, out = module_io("scatter")
        summed = i["base"].astype(np.float64).copy()
        np.add.at(summed, i["ids"], i["upd"])
        np.testing.assert_allclose(out[0], summed, rtol=1e-6, atol=1e-6)
        placed = i["base"][:, 1].copy()
        placed[i["uniq"]] = i["vals"]
        np.testing.assert_array_equal(out[1], placed)
        skipped = i["base"].astype(np.float64).copy()
        for row, u in zip(i["wild"][:, 0], i["wupd"]):
            if 0 <= row < 10:
                skipped[row] += u
        np.testing.assert_allclose(out[2], skipped, rtol=1e-6, atol=1e-6)

    def test_sort(self):
        i, out = module_io("sort")
        x, k = i["x"], i["k"]
        np.testing.assert_array_equal(out[0], np.sort(x, 1))
        np.testing.assert_array_equal(out[1], -np.sort(-x, 0))
        np.testing.assert_array_equal(out[3], np.argsort(x, 1, kind="stable"))
        np.testing.assert_array_equal(out[4], np.sort(k))
        np.testing.assert_array_equal(out[5], np.argsort(k, kind="stable"))

    def test_while(self):
        i, out = module_io("while")
        s, rows = i["state"].copy(), i["rows"]
        hist = np.zeros(20, np.float32)
        n = 0
        while n < 20 and float(np.sum(s.astype(np.float64) ** 2)) < 8:
            s = (s * np.float32(1.25) + rows[n]) if n % 3 else (np.tanh(s) - rows[n])
            hist[n] = s.sum()
            n += 1
        self.assertEqual(int(out[1]), n)
        self.assertEqual(n, 9)  # as the module's comment says
        np.testing.assert_allclose(out[0], s, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out[2], hist, rtol=1e-5, atol=1e-5)

    def test_threefry_split(self):
        # Known-answer vectors of Threefry-2x32 with 20 rounds (Random123's
        # kat_vectors, also in JAX's random tests) check the reference first.
        self.assertEqual(threefry2x32(0, 0, 0, 0), (0x6B200159, 0x99BA4EFE))
        self.assertEqual(threefry2x32(0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF),
                         (0x1CB996FC, 0xBB002BE7))
        self.assertEqual(threefry2x32(0x13198A2E, 0x03707344, 0x243F6A88, 0x85A308D3),
                         (0xC4923A9C, 0x483DF7A0))
        module = parse_module(open(os.path.join(HERE, "modules", "threefry_split.hlo")).read())
        # jax.random.split(jnp.array([1, 2], jnp.uint32), 20) in JAX.
        out = run_module(module, [np.array([1, 2], np.uint32)])[0]
        np.testing.assert_array_equal(out[:3], [[3234953621, 905610242], [3904707248, 604500810],
                                                [535849136, 2362750133]])
        i, out = module_io("threefry_split")
        k1, k2 = (int(v) for v in i["key"])
        pairs = [threefry2x32(k1, k2, c, 20 + c) for c in range(20)]
        flat = [p[0] for p in pairs] + [p[1] for p in pairs]
        np.testing.assert_array_equal(out[0], np.array(flat, np.uint32).reshape(20, 2))

    def test_linalg(self):
        # Each factorisation and solve checked by its defining property.
        i, out = module_io("linalg")
        (lu, ipiv, info, perm, lub, ipivb, infob, permb, lur, ipivr, infor, permr, lud, ipivd, infod,
         ch, chi, chu, chui, chd, chdi, chg, chn, chni, x1, x2, x3, x4, x5, x6, x7, chx,
         qr, qtau, qinfo, q, qqinfo, qrb, qtaub, qrl, qtaul, ql, qrd, qtaud, qd) = out

        def check_lu(a, lu, perm):
            m, n = a.shape
            k = min(m, n)
            low = np.tril(lu, -1)[:, :k] + np.eye(m, k)
            np.testing.assert_allclose(a[perm], low @ np.triu(lu)[:k], rtol=1e-5, atol=1e-5)

        check_lu(i["g"].astype(np.float64), lu, perm)
        for b in np.ndindex(2, 5):
            check_lu(i["gb"][b].astype(np.float64), lub[b], permb[b])
        check_lu(i["gr"].astype(np.float64), lur, permr)
        for b in range(2):
            perm_d = np.arange(4)
            for j, p in enumerate(ipivd[b] - 1):
                perm_d[[j, p]] = perm_d[[p, j]]
            check_lu(i["gd"][b], lud[b], perm_d)
        self.assertEqual(int(info) + int(infor) + int(infob.sum()) + int(infod.sum()), 0)
        p = i["p"].astype(np.float64)
        spd = p @ np.swapaxes(p, 1, 2) + 4 * np.eye(4)
        for b in range(3):
            low, up = np.tril(ch[b]), np.triu(chu[b])
            np.testing.assert_allclose(low @ low.T, spd[b], rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(up.T @ up, spd[b], rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(np.tril(chg[b]), low, rtol=1e-6)
            self.assertAlmostEqual(chn[b][0, 0], -spd[b][0, 0], places=4)  # the failed pivot
        np.testing.assert_array_equal(np.concatenate([chi, chui, chni]), [0, 0, 0, 0, 0, 0, 1, 1, 1])
        sd = i["pd"] @ i["pd"].T + 4 * np.eye(4)
        np.testing.assert_allclose(np.tril(chd) @ np.tril(chd).T, sd, rtol=1e-12)
        ta = np.tril(i["t"] + 8 * np.eye(4))
        unit_upper = np.triu(i["t"] + 8 * np.eye(4), 1) + np.eye(4)
        for b in range(2):
            np.testing.assert_allclose(ta[b] @ x1[b], i["tb"][b], rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(unit_upper[b].T @ x2[b], x1[b], rtol=1e-12, atol=1e-12)
        tsa = i["ts"].astype(np.float64) + 8 * np.eye(5)
        tsb = i["tsb"].astype(np.float64)
        np.testing.assert_allclose(x3 @ np.triu(tsa).T, 2 * tsb, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.triu(tsa[:3, :3]).T @ x4, 0.5 * tsb, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(x5 @ (np.tril(tsa, -1) + np.eye(5)), tsb, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose((np.tril(tsa[:3, :3], -1) + np.eye(3)) @ x6, tsb, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(x7 @ np.triu(tsa).T, tsb, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.triu(chx), np.triu(chu), rtol=1e-6)
        # QR: Q orthonormal, Q R = A; R's diagonal signs follow LAPACK's
        # reflector (beta = -sign(alpha) |x|).
        gr = i["gr"].astype(np.float64)
        for qq, rr, a in [(q[0], qr[0], 2 * gr), (q[1], qr[1], 2 * gr), (ql, qrl, gr)] + \
                [(qd[b], qrd[b], i["gd"][b]) for b in range(2)]:
            np.testing.assert_allclose(qq.T @ qq, np.eye(qq.shape[1]), atol=1e-5)
            np.testing.assert_allclose(qq @ np.triu(rr)[:qq.shape[1]], a, rtol=1e-5, atol=1e-5)
            self.assertLess(rr[0, 0] * a[0, 0], 0)  # beta = -sign(alpha) |x|
        np.testing.assert_array_equal(np.concatenate([qinfo, qqinfo]), [0, 0, 0, 0])
        for b in np.ndindex(2, 5):
            r = np.triu(qrb[b])
            np.testing.assert_allclose(np.abs(np.diag(r)), np.abs(np.diag(np.linalg.qr(i["gb"][b])[1])),
                                       rtol=1e-4)

    def test_elementwise_integers(self):
        i, out = module_io("elementwise")
        a, b = i["i"].astype(np.int64), i["j"].astype(np.int64)
        q = np.where(b == 0, -1, np.trunc(a / np.where(b == 0, 1, b))).astype(np.int32)
        np.testing.assert_array_equal(out[19], q)
        r = np.where(b == 0, a, np.fmod(a, np.where(b == 0, 1, b))).astype(np.int32)
        np.testing.assert_array_equal(out[20], r)
        wrapped = ((a * 100000000 + b + 2**31) % 2**32 - 2**31).astype(np.int32)
        np.testing.assert_array_equal(out[18], wrapped)
        k = i["k"].astype(np.int64)
        shl = np.where(k >= 32, 0, ((a << np.minimum(k, 31)) + 2**31) % 2**32 - 2**31).astype(np.int32)
        np.testing.assert_array_equal(out[23], shl)


STAND_IN = """#!/bin/sh
# A stand-in for the tileprof binary in compare.py's own tests: `help run`
# answers as configured; `run` evaluates with the oracle (with
# STAND_IN_SUMS="--sums native", at f32 sums: another f32 evaluation) and,
# with STAND_IN_SCALE, scales out.0 (a wrong answer compare.py must catch).
if [ "$1" = help ]; then
  if [ -n "$STAND_IN_NO_RUN" ]; then echo "tileprof: help: no command named 'run'; 'tileprof --help' lists them" >&2; exit 2; fi
  exit 0
fi
shift
PY="$(dirname "$0")/scale.py"
"{python}" "{oracle}" "$@" $STAND_IN_SUMS || exit $?
while [ $# -gt 0 ]; do [ "$1" = --outputs ] && OUT="$2"; shift; done
[ -n "$STAND_IN_SCALE" ] && "{python}" "$PY" "$OUT/out.0.npy" "$STAND_IN_SCALE"
exit 0
"""

SCALE = """import sys
import numpy as np
a = np.load(sys.argv[1])
np.save(sys.argv[1], (a * float(sys.argv[2])).astype(a.dtype))
"""


class CompareScript(unittest.TestCase):
    def run_compare(self, env_extra, *extra):
        with tempfile.TemporaryDirectory() as d:
            tool = os.path.join(d, "tileprof")
            with open(tool, "w") as f:
                f.write(STAND_IN.format(python=sys.executable, oracle=os.path.join(HERE, "hlo_numpy.py")))
            os.chmod(tool, 0o755)
            with open(os.path.join(d, "scale.py"), "w") as f:
                f.write(SCALE)
            env = dict(os.environ, **env_extra)
            r = subprocess.run([sys.executable, os.path.join(HERE, "compare.py"),
                                os.path.join(HERE, "modules", "dot.hlo"), "--tileprof", tool,
                                "--workdir", os.path.join(d, "work"), *extra],
                               capture_output=True, text=True, env=env)
            return r

    def test_equal_outputs_pass(self):
        r = self.run_compare({})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("ok   out.4: float32[16]", r.stdout)

    def test_wrong_output_fails(self):
        r = self.run_compare({"STAND_IN_SCALE": "1.001"})
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("FAIL out.0: float32[16, 32]", r.stdout)
        self.assertIn("MISMATCH", r.stdout)

    def test_an_infinite_oracle_value_takes_only_itself(self):
        from compare import compare_leaf
        want = np.float32([np.inf, 1.0])
        self.assertTrue(compare_leaf(0, want.copy(), want, 0, 0)[0])
        self.assertTrue(compare_leaf(0, want.copy(), want, 1e-5, 1e-6)[0])
        self.assertFalse(compare_leaf(0, np.float32([3e38, 1.0]), want, 1e-5, 1e-6)[0])

    def test_an_f32_evaluation_passes_at_its_own_rounding(self):
        # At rtol 1e-9 no f32 sum of 64 products meets the tolerance; an
        # evaluation with f32 sums (the stand-in) is then as far from the
        # float64 oracle as the oracle's own native evaluation: equal to it.
        native = {"STAND_IN_SUMS": "--sums native"}
        r = self.run_compare(native, "--rtol", "1e-9", "--atol", "0")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        r = self.run_compare(native, "--rtol", "1e-9", "--atol", "0", "--rounding-reference")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("ok   (rounding) out.0: float32[16, 32]", r.stdout)
        self.assertIn("PASS (rounding)", r.stdout)

    def test_a_wrong_answer_is_not_rounding(self):
        r = self.run_compare({"STAND_IN_SCALE": "1.001"}, "--rounding-reference")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("FAIL out.0: float32[16, 32]", r.stdout)
        self.assertIn("MISMATCH", r.stdout)

    def test_within_rounding_is_within_4_times_the_native_error(self):
        from compare import within_rounding
        want = np.float32([1.0, 2.0, 3.0])
        native = np.float32([1.0, 2.0 + 1e-4, 3.0])  # 5 x a 1e-5 tolerance
        self.assertTrue(within_rounding(np.float32([1.0, 2.0, 3.0 + 2e-4]), want, native, 1e-5, 0)[0])
        # More than 4 times the native evaluation's error, a NaN, or any
        # failure where the native evaluation is exact: a mismatch.
        self.assertFalse(within_rounding(np.float32([1.0, 2.0, 3.0 + 1e-2]), want, native, 1e-5, 0)[0])
        self.assertFalse(within_rounding(np.float32([1.0, 2.0, np.nan]), want, native, 1e-5, 0)[0])
        self.assertFalse(within_rounding(np.float32([1.0, 2.0, 3.0 + 2e-4]), want, want, 1e-5, 0)[0])

    def test_skipped_only_without_run_command(self):
        r = self.run_compare({"STAND_IN_NO_RUN": "1"})
        self.assertEqual(r.returncode, 77, r.stdout + r.stderr)
        self.assertIn("SKIPPED", r.stdout)


if __name__ == "__main__":
    unittest.main()
