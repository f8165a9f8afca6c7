#!/usr/bin/python3
"""An independent evaluator of HLO text in NumPy: the oracle of `tileprof run`.

Usage:
  hlo_numpy.py MODULE.hlo [--input NAME_OR_INDEX=FILE.npy ...] [--outputs DIR]
               [--iterations N] [--seed S] [--sums wide|native] [--quiet]

Writes every leaf of the ENTRY result (tuples flattened depth first) as
DIR/out.K.npy, the naming of `tileprof run --outputs`. With --iterations N the
module runs N times and, as the module's input_output_alias says, each aliased
output becomes the parameter of the next execution (weights carry over); the
outputs of the last execution are written. Scalar outputs are printed after
every execution.

This shares no code with tileprof: it has its own parser (hlo_text_parser.py)
and implements the semantics of the XLA operation reference directly. Sums
(dot, convolution, reduce with an add reducer) are accumulated in float64 and
rounded once, so the oracle is closer to the exact value than any f32
implementation; compare.py's tolerances allow for the f32 rounding of the
implementation under test. --sums native computes them in the type XLA:CPU
accumulates in instead (float32 for f16, bf16 and f32): a second evaluation
at the module's own precision, whose distance from the wide one shows how
much the results depend on rounding (compare.py --rounding-reference). Dot and convolution operands are converted to the
result type first and integer sums wrap in it (contraction_operands).

f16 and bf16 follow XLA's rule (docs/op-support.md, "Floating-point
rounding"): every op is computed in f32 and its result rounded to nearest
even. f16 is NumPy's float16, whose ufuncs do exactly that; bf16 is held as
float32 and rounded after every instruction, in reducers and comparators too;
converts to bf16 go through float32, as XLA's do.

Ops: parameter, constant, iota, the elementwise unary/binary ops, compare,
select, clamp, convert, bitcast-convert, broadcast, reshape, transpose, copy,
reverse, slice, dynamic-slice, dynamic-update-slice, concatenate, pad, dot,
convolution, reduce, reduce-window, select-and-scatter, gather, scatter, sort,
map, while, conditional, call, fusion, tuple, get-tuple-element, copy-start,
copy-done, rng,
batch-norm-training/-inference/-grad; custom
calls and collectives in hlo_custom_calls.py, the linear-algebra ones in
hlo_linalg.py.
"""

import argparse
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hlo_semantics import (BINARY, COMPARE, NP_TYPES, SUMS, UNARY, convert, int_list, is_float,  # noqa: E402
                           np_type, parse_literal, parse_padding, parse_slice, parse_window, round_bf16,
                           round_bf16_once, sum_type)
from hlo_custom_calls import collective, custom_call  # noqa: E402
from hlo_linalg import linalg_op  # noqa: E402
from hlo_text_parser import UNBOUNDED, HloError, parse_module  # noqa: E402

# --- the evaluator -------------------------------------------------------------


class Evaluator:
    def __init__(self, module, seed=0):
        self.module = module
        self.rng = np.random.default_rng(seed)
        self.reducer_kind_cache = {}

    def where(self, comp, inst):
        return f"{comp.name}/{inst.name} (line {inst.line}, {inst.opcode})"

    def run(self, comp, args, check_shapes=True):
        if len(args) != len(comp.params):
            raise HloError(f"computation {comp.name} takes {len(comp.params)} arguments, got {len(args)}")
        env = {}
        with np.errstate(all="ignore"):
            for inst in comp.instructions:
                if any(UNBOUNDED in leaf.dims for leaf in flat_leaves(inst.shape)):
                    raise HloError(f"{self.where(comp, inst)}: an unbounded dimension ('?'): "
                                   "dynamic shapes are not supported")
                try:
                    value = self.eval(comp, inst, env, args)
                except HloError:
                    raise
                except (ValueError, IndexError, KeyError, TypeError) as e:
                    raise HloError(f"{self.where(comp, inst)}: {e}") from e
                if check_shapes:
                    value = self.conform(comp, inst, value)
                elif not inst.shape.is_tuple() and inst.shape.dtype == "bf16":
                    # Reducers and comparators too: every bf16 op rounds.
                    value = round_bf16(value)
                env[inst.name] = value
        return env[comp.root.name]

    def conform(self, comp, inst, value):
        shape = inst.shape
        if shape.is_tuple():
            return value
        if shape.dtype in ("token", "opaque"):
            return value
        dt = np_type(shape.dtype, self.where(comp, inst))
        value = np.asarray(value)
        if value.shape != shape.dims:
            raise HloError(f"{self.where(comp, inst)}: oracle produced shape {value.shape}, "
                           f"the instruction says {shape}")
        if value.dtype != dt:
            value = value.astype(dt)
        if shape.dtype == "bf16":
            value = round_bf16(value)
        return value

    # A reducer/comparator computation applied to arrays elementwise.
    def apply(self, comp, args):
        return self.run(comp, [np.asarray(a) for a in args], check_shapes=False)

    def reducer_kind(self, comp):
        """'add', 'maximum', ... when the computation is just that op of its two parameters."""
        if comp.name in self.reducer_kind_cache:
            return self.reducer_kind_cache[comp.name]
        kind = None
        root = comp.root
        if len(comp.params) == 2 and root.opcode in ("add", "maximum", "minimum", "multiply", "and", "or") \
                and len(root.operands) == 2:
            ops = {comp.by_name[o].opcode for o in root.operands}
            nums = {comp.by_name[o].operand_text.strip() for o in root.operands}
            if ops == {"parameter"} and nums == {"0", "1"}:
                kind = root.opcode
        self.reducer_kind_cache[comp.name] = kind
        return kind

    def called(self, comp, inst, attr):
        name = inst.attrs.get(attr)
        if name is None:
            raise HloError(f"{self.where(comp, inst)}: missing attribute {attr}")
        name = name.strip().lstrip("%")
        if name not in self.module.computations:
            raise HloError(f"{self.where(comp, inst)}: unknown computation '{name}'")
        return self.module.computations[name]

    def eval(self, comp, inst, env, args):
        op = inst.opcode
        ops = [env[o] for o in inst.operands]
        a = inst.attrs
        shape = inst.shape
        where = self.where(comp, inst)

        if op == "parameter":
            return args[int(inst.operand_text)]
        if op == "constant":
            return parse_literal(inst.operand_text, shape, where)
        if op == "iota":
            dim = int(a["iota_dimension"])
            dt = np_type(shape.dtype, where)
            idx = np.arange(shape.dims[dim]).astype(dt)
            view = [1] * len(shape.dims)
            view[dim] = shape.dims[dim]
            return np.broadcast_to(idx.reshape(view), shape.dims).copy()
        if op in UNARY:
            return UNARY[op](ops[0])
        if op in BINARY:
            return BINARY[op](ops[0], ops[1])
        if op == "compare":
            return COMPARE[a["direction"]](ops[0], ops[1])
        if op == "select":
            return np.where(ops[0], ops[1], ops[2])
        if op == "clamp":
            return np.minimum(np.maximum(ops[1], ops[0]), ops[2])
        if op == "convert":
            return convert(ops[0], shape.dtype)
        if op == "bitcast-convert":
            dt = np_type(shape.dtype, where)
            # The bytes in order, little-endian (XLA's CPU backend): between widths
            # the narrower side has a last dimension of the width ratio.
            src = np.ascontiguousarray(ops[0]).astype(ops[0].dtype.newbyteorder("<"))
            return src.reshape(-1).view(np.dtype(dt).newbyteorder("<")).astype(dt).reshape(shape.dims)
        if op == "broadcast":
            dims = int_list(a.get("dimensions", "{}"))
            x = ops[0]
            view = [1] * len(shape.dims)
            for i, d in enumerate(dims):
                view[d] = x.shape[i]
            return np.broadcast_to(x.reshape(view), shape.dims).copy()
        if op in ("reshape", "bitcast"):
            return ops[0].reshape(shape.dims)
        if op == "transpose":
            return np.transpose(ops[0], int_list(a["dimensions"])).copy()
        if op == "reverse":
            return np.flip(ops[0], int_list(a["dimensions"])).copy()
        if op == "slice":
            spec = parse_slice(a["slice"])
            return ops[0][tuple(slice(s, e, st) for s, e, st in spec)].copy()
        if op == "dynamic-slice":
            sizes = int_list(a["dynamic_slice_sizes"])
            x = ops[0]
            starts = [int(np.clip(int(s), 0, x.shape[i] - sizes[i])) for i, s in enumerate(ops[1:])]
            return x[tuple(slice(s, s + n) for s, n in zip(starts, sizes))].copy()
        if op == "dynamic-update-slice":
            x = ops[0].copy()
            upd = ops[1]
            starts = [int(np.clip(int(s), 0, x.shape[i] - upd.shape[i])) for i, s in enumerate(ops[2:])]
            x[tuple(slice(s, s + n) for s, n in zip(starts, upd.shape))] = upd
            return x
        if op == "concatenate":
            return np.concatenate(ops, axis=int_list(a["dimensions"])[0])
        if op == "pad":
            return self.pad(ops[0], ops[1], parse_padding(a["padding"]))
        if op == "tuple":
            return tuple(ops)
        if op == "copy-start":  # an asynchronous copy: (destination, source, u32 context)
            return (ops[0].copy(), ops[0], np.uint32(0))
        if op == "copy-done":
            return ops[0][0]
        if op == "get-tuple-element":
            return ops[0][int(a["index"])]
        if op == "dot":
            return self.dot(ops[0], ops[1], a, shape, where)
        if op == "convolution":
            return self.convolution(ops[0], ops[1], a, shape, where)
        if op == "reduce":
            return self.reduce(ops, a, self.called(comp, inst, "to_apply"), shape)
        if op == "reduce-window":
            return self.reduce_window(ops, a, self.called(comp, inst, "to_apply"))
        if op == "select-and-scatter":
            return self.select_and_scatter(ops, a, self.called(comp, inst, "select"),
                                           self.called(comp, inst, "scatter"))
        if op == "gather":
            return self.gather(ops[0], ops[1], a, shape)
        if op == "scatter":
            return self.scatter(ops, a, self.called(comp, inst, "to_apply"), shape)
        if op == "sort":
            return self.sort(ops, a, self.called(comp, inst, "to_apply"))
        if op == "map":
            return self.apply(self.called(comp, inst, "to_apply"), ops)
        if op == "while":
            cond = self.called(comp, inst, "condition")
            body = self.called(comp, inst, "body")
            state = ops[0]
            while bool(self.run(cond, [state])):
                state = self.run(body, [state])
            return state
        if op == "conditional":
            if "branch_computations" in a:
                names = [n.strip().lstrip("%") for n in a["branch_computations"].strip("{}").split(",")]
                index = int(ops[0])
                if index < 0 or index >= len(names):
                    index = len(names) - 1  # XLA: out-of-range selects the last branch
                branch = self.module.computations[names[index]]
            else:
                branch = self.called(comp, inst, "true_computation" if bool(ops[0]) else "false_computation")
                index = 0 if bool(ops[0]) else 1
            return self.run(branch, [ops[1 + index]])
        if op == "call":
            return self.run(self.called(comp, inst, "to_apply"), ops)
        if op == "fusion":
            return self.run(self.called(comp, inst, "calls"), ops)
        if op == "rng":
            dt = np_type(shape.dtype, where)
            dist = a.get("distribution", "")
            if dist == "rng_uniform":
                if is_float(ops[0]):
                    lo, hi = float(ops[0]), float(ops[1])
                    return self.rng.uniform(lo, hi, shape.dims).astype(dt)
                return self.rng.integers(int(ops[0]), int(ops[1]), shape.dims).astype(dt)
            if dist == "rng_normal":
                return self.rng.normal(float(ops[0]), float(ops[1]), shape.dims).astype(dt)
            raise HloError(f"{where}: rng distribution '{dist}'")
        if op == "custom-call":
            return custom_call(inst, ops, shape, where)
        if op in ("triangular-solve", "cholesky"):
            return linalg_op(op, ops, a, where)
        if op in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute"):
            return collective(inst, ops, shape, self.module, where)
        if op in ("batch-norm-training", "batch-norm-inference", "batch-norm-grad"):
            return batch_norm(op, ops, a, shape)
        if op == "get-dimension-size":
            return np.int32(ops[0].shape[int_list(a["dimensions"])[0]])
        raise HloError(f"{where}: opcode '{op}' is not supported by the oracle")

    # -- data movement -------------------------------------------------------

    @staticmethod
    def pad(x, value, spec):
        out = x
        # interior padding first, then edge padding (negative = crop)
        for d, (lo, hi, interior) in enumerate(spec):
            if interior:
                n = out.shape[d]
                size = n + max(n - 1, 0) * interior
                shape = list(out.shape)
                shape[d] = size
                new = np.full(shape, value, out.dtype)
                idx = [slice(None)] * out.ndim
                idx[d] = slice(0, size, interior + 1)
                new[tuple(idx)] = out
                out = new
            n = out.shape[d]
            if lo < 0:
                idx = [slice(None)] * out.ndim
                idx[d] = slice(-lo, n)
                out = out[tuple(idx)]
                lo = 0
            if hi < 0:
                idx = [slice(None)] * out.ndim
                idx[d] = slice(0, out.shape[d] + hi)
                out = out[tuple(idx)]
                hi = 0
            if lo or hi:
                widths = [(0, 0)] * out.ndim
                widths[d] = (lo, hi)
                out = np.pad(out, widths, constant_values=value)
        return np.ascontiguousarray(out)

    # -- dot -------------------------------------------------------------------

    def dot(self, x, y, a, shape, where):
        lb = int_list(a.get("lhs_batch_dims", "{}"))
        rb = int_list(a.get("rhs_batch_dims", "{}"))
        lc = int_list(a.get("lhs_contracting_dims", "{}"))
        rc = int_list(a.get("rhs_contracting_dims", "{}"))
        letters = iter("abcdefghijklmnopqrstuvwxyz")
        ls = [None] * x.ndim
        rs = [None] * y.ndim
        for i, j in zip(lb, rb):
            ls[i] = rs[j] = next(letters)
        for i, j in zip(lc, rc):
            ls[i] = rs[j] = next(letters)
        for i in range(x.ndim):
            if ls[i] is None:
                ls[i] = next(letters)
        for j in range(y.ndim):
            if rs[j] is None:
                rs[j] = next(letters)
        out = [ls[i] for i in lb] + [ls[i] for i in range(x.ndim) if i not in lb and i not in lc] \
            + [rs[j] for j in range(y.ndim) if j not in rb and j not in rc]
        x, y, acc = contraction_operands(x, y, shape.dtype)
        result = np.einsum(f"{''.join(ls)},{''.join(rs)}->{''.join(out)}", x.astype(acc), y.astype(acc),
                           optimize=True)
        return round_once(result, shape.dtype)

    # -- convolution -----------------------------------------------------------

    def convolution(self, x, k, a, shape, where):
        labels = a["dim_labels"]
        m = re.fullmatch(r"([0-9bf]+)_([0-9io]+)->([0-9bf]+)", labels)
        if not m:
            raise HloError(f"{where}: dim_labels '{labels}'")
        lhs, rhs, out = m.groups()
        nsp = len(lhs) - 2
        window = parse_window(a.get("window", "{}")) if nsp else None
        if nsp and len(window["size"]) != nsp:
            raise HloError(f"{where}: window has {len(window['size'])} dims, dim_labels {nsp}")
        fgc = int(a.get("feature_group_count", "1"))
        bgc = int(a.get("batch_group_count", "1"))
        sp = [str(i) for i in range(nsp)]
        # canonical: lhs [B, F, s...], rhs [O, I, s...], out [B, F, s...]
        xi = np.transpose(x, [lhs.index("b"), lhs.index("f")] + [lhs.index(s) for s in sp])
        ki = np.transpose(k, [rhs.index("o"), rhs.index("i")] + [rhs.index(s) for s in sp])
        xi, ki, acc = contraction_operands(xi, ki, shape.dtype)
        xi = xi.astype(acc)
        ki = ki.astype(acc)
        if nsp:
            for d in range(nsp):
                if window["rhs_reversal"][d]:
                    ki = np.flip(ki, 2 + d)
            spec = [(0, 0, 0), (0, 0, 0)] + [(lo, hi, window["lhs_dilate"][d] - 1)
                                             for d, (lo, hi) in enumerate(window["pad"])]
            xi = self.pad(xi, 0.0, spec)
        B, F = xi.shape[0], xi.shape[1]
        O, I = ki.shape[0], ki.shape[1]
        if F != I * fgc:
            raise HloError(f"{where}: input features {F} != kernel input features {I} x groups {fgc}")
        out_sp = []
        for d in range(nsp):
            eff = (window["size"][d] - 1) * window["rhs_dilate"][d] + 1
            out_sp.append((xi.shape[2 + d] - eff) // window["stride"][d] + 1 if xi.shape[2 + d] >= eff else 0)
        if O % (fgc * bgc) or B % bgc:
            raise HloError(f"{where}: {O} output features or batch {B} do not split into the groups")
        Bo = B // bgc
        result = np.zeros([Bo, O] + out_sp, acc)
        groups = fgc * bgc  # one of the two counts is 1
        og = O // groups
        if nsp and np.prod(out_sp) < np.prod(window["size"]):
            # Weight gradients: a window as big as the input, a few outputs.
            self.conv_by_output(xi, ki, window, out_sp, result, groups, fgc, I, Bo, og)
            offsets = []
        else:
            offsets = np.ndindex(*(window["size"] if nsp else []))
        for offset in offsets:
            idx = [slice(None), slice(None)]
            for d in range(nsp):
                start = offset[d] * window["rhs_dilate"][d]
                stop = start + (out_sp[d] - 1) * window["stride"][d] + 1 if out_sp[d] else start
                idx.append(slice(start, stop, window["stride"][d]))
            xs = xi[tuple(idx)]  # [B, F, out...]
            kk = ki[(slice(None), slice(None)) + tuple(offset)]  # [O, I]
            for g in range(groups):
                # feature groups split the input features, batch groups the batch
                xg = xs[:, g * I:(g + 1) * I] if fgc > 1 else xs[g * Bo:(g + 1) * Bo]
                result[:, g * og:(g + 1) * og] += np.moveaxis(
                    np.tensordot(xg, kk[g * og:(g + 1) * og], axes=([1], [1])), -1, 1)
        perm = [0] * (nsp + 2)
        canon = ["b", "f"] + sp
        for pos, label in enumerate(out):
            perm[pos] = canon.index(label)
        return round_once(np.transpose(result, perm), shape.dtype)

    @staticmethod
    def conv_by_output(xi, ki, window, out_sp, result, groups, fgc, I, Bo, og):
        nsp = len(out_sp)
        for pos in np.ndindex(*out_sp):
            idx = [slice(None), slice(None)]
            for d in range(nsp):
                start = pos[d] * window["stride"][d]
                stop = start + (window["size"][d] - 1) * window["rhs_dilate"][d] + 1
                idx.append(slice(start, stop, window["rhs_dilate"][d]))
            patch = xi[tuple(idx)]  # [B, F, window...]
            for g in range(groups):
                xg = patch[:, g * I:(g + 1) * I] if fgc > 1 else patch[g * Bo:(g + 1) * Bo]
                kg = ki[g * og:(g + 1) * og]
                result[(slice(None), slice(g * og, (g + 1) * og)) + pos] += \
                    xg.reshape(xg.shape[0], -1) @ kg.reshape(kg.shape[0], -1).T

    # -- reductions ------------------------------------------------------------

    def reduce(self, ops, a, reducer, shape):
        n = len(ops) // 2
        inputs, inits = ops[:n], ops[n:]
        dims = tuple(int_list(a["dimensions"]))
        kind = self.reducer_kind(reducer) if n == 1 else None
        if kind is not None:
            x = inputs[0]
            init = inits[0]
            if kind == "add" and is_float(x):
                acc = accumulator(x)
                return (np.add.reduce(x.astype(acc), axis=dims) + init.astype(acc)).astype(x.dtype)
            ufunc = {"add": np.add, "maximum": np.maximum, "minimum": np.minimum, "multiply": np.multiply,
                     "and": np.logical_and if x.dtype == np.bool_ else np.bitwise_and,
                     "or": np.logical_or if x.dtype == np.bool_ else np.bitwise_or}[kind]
            return ufunc.reduce(x, axis=dims, initial=init[()]).astype(x.dtype)
        # Generic: fold the reduced elements in row-major order, vectorised over the kept dims.
        kept = [d for d in range(inputs[0].ndim) if d not in dims]
        moved = [np.transpose(x, kept + list(dims)).reshape([x.shape[d] for d in kept] + [-1]) for x in inputs]
        acc = [np.broadcast_to(i, moved[0].shape[:-1]).copy() for i in inits]
        for j in range(moved[0].shape[-1]):
            res = self.apply(reducer, acc + [m[..., j] for m in moved])
            acc = list(res) if n > 1 else [res]
        acc = [np.asarray(v).astype(x.dtype) for v, x in zip(acc, inputs)]
        return tuple(acc) if n > 1 else acc[0]

    def window_slices(self, padded_shape, window, out_shape):
        for offset in np.ndindex(*window["size"]):
            idx = []
            for d in range(len(window["size"])):
                start = offset[d] * window["rhs_dilate"][d]
                stride = window["stride"][d]
                stop = start + (out_shape[d] - 1) * stride + 1 if out_shape[d] else start
                idx.append(slice(start, stop, stride))
            yield offset, tuple(idx)

    def window_out_shape(self, padded_shape, window):
        out = []
        for d, n in enumerate(padded_shape):
            eff = (window["size"][d] - 1) * window["rhs_dilate"][d] + 1
            out.append((n - eff) // window["stride"][d] + 1 if n >= eff else 0)
        return out

    def reduce_window(self, ops, a, reducer):
        n = len(ops) // 2
        inputs, inits = ops[:n], ops[n:]
        window = parse_window(a["window"])
        padded = [self.pad(x, init[()], [(lo, hi, window["lhs_dilate"][d] - 1)
                                         for d, (lo, hi) in enumerate(window["pad"])])
                  for x, init in zip(inputs, inits)]
        out_shape = self.window_out_shape(padded[0].shape, window)
        kind = self.reducer_kind(reducer) if n == 1 else None
        acc = [np.full(out_shape, init[()], x.dtype) for x, init in zip(inputs, inits)]
        if kind == "add" and is_float(inputs[0]):
            acc = [acc[0].astype(accumulator(acc[0]))]
        for _, idx in self.window_slices(padded[0].shape, window, out_shape):
            vals = [p[idx] for p in padded]
            if kind == "add":
                acc = [acc[0] + vals[0]]
            elif kind in ("maximum", "minimum"):
                acc = [getattr(np, kind)(acc[0], vals[0])]
            else:
                res = self.apply(reducer, acc + vals)
                acc = list(res) if n > 1 else [res]
        acc = [np.asarray(v).astype(x.dtype) for v, x in zip(acc, inputs)]
        return tuple(acc) if n > 1 else acc[0]

    def select_and_scatter(self, ops, a, select, scatter):
        operand, source, init = ops
        window = parse_window(a["window"])
        # Padding positions are never selected: pad a validity mask alongside.
        spec = [(lo, hi, 0) for lo, hi in window["pad"]]
        padded = self.pad(operand, 0, spec)
        valid = self.pad(np.ones(operand.shape, np.bool_), False, spec)
        index = self.pad(np.arange(operand.size).reshape(operand.shape), -1, spec)
        out_shape = self.window_out_shape(padded.shape, window)
        if list(source.shape) != out_shape:
            raise HloError(f"source shape {source.shape} does not match the window output {out_shape}")
        cur_val = np.zeros(out_shape, operand.dtype)
        cur_idx = np.full(out_shape, -1, np.int64)
        have = np.zeros(out_shape, np.bool_)
        for _, idx in self.window_slices(padded.shape, window, out_shape):
            cand, ok, cidx = padded[idx], valid[idx], index[idx]
            keep = np.asarray(self.apply(select, [cur_val, cand]), np.bool_)
            take = ok & (~have | ~keep)
            cur_val = np.where(take, cand, cur_val)
            cur_idx = np.where(take, cidx, cur_idx)
            have |= ok
        result = np.full(operand.size, init[()], operand.dtype)
        kind = self.reducer_kind(scatter)
        flat_idx = cur_idx.reshape(-1)
        flat_src = source.reshape(-1)
        sel = flat_idx >= 0
        if kind == "add":
            acc = result.astype(accumulator(result))
            np.add.at(acc, flat_idx[sel], flat_src[sel])
            result = acc.astype(operand.dtype)
        else:
            for i, s in zip(flat_idx[sel], flat_src[sel]):
                result[i] = self.apply(scatter, [result[i], s])
        return result.reshape(operand.shape)

    # -- gather / scatter --------------------------------------------------------

    def gather(self, operand, indices, a, shape):
        offset_dims = int_list(a.get("offset_dims", "{}"))
        collapsed = int_list(a.get("collapsed_slice_dims", "{}"))
        start_map = int_list(a.get("start_index_map", "{}"))
        ivd = int(a["index_vector_dim"])
        sizes = int_list(a["slice_sizes"])
        obatch = int_list(a.get("operand_batching_dims", "{}"))
        ibatch = int_list(a.get("start_indices_batching_dims", "{}"))
        if ivd == indices.ndim:
            indices = indices[..., None]
        idx = np.moveaxis(indices, ivd, -1)
        batch_shape = idx.shape[:-1]
        batch_dims_out = [d for d in range(len(shape.dims)) if d not in offset_dims]
        out = np.zeros(shape.dims, operand.dtype)
        window_dims = [d for d in range(operand.ndim) if d not in collapsed and d not in obatch]
        ibatch_positions = [d if d < ivd else d - 1 for d in ibatch] if ibatch else []
        for b in np.ndindex(*batch_shape):
            start = [0] * operand.ndim
            for k, od in enumerate(start_map):
                start[od] = int(idx[b + (k,)])
            for od, bd in zip(obatch, ibatch_positions):
                start[od] = b[bd]
            start = [int(np.clip(s, 0, operand.shape[d] - sizes[d])) for d, s in enumerate(start)]
            piece = operand[tuple(slice(s, s + n) for s, n in zip(start, sizes))]
            piece = piece.reshape([sizes[d] for d in window_dims])
            target = [slice(None)] * len(shape.dims)
            for pos, d in enumerate(batch_dims_out):
                target[d] = b[pos]
            out[tuple(target)] = piece
        return out

    def scatter(self, ops, a, combiner, shape):
        n = (len(ops) - 1) // 2
        operands = [o.copy() for o in ops[:n]]
        indices = ops[n]
        updates = ops[n + 1:]
        uwd = int_list(a.get("update_window_dims", "{}"))
        inserted = int_list(a.get("inserted_window_dims", "{}"))
        sd2od = int_list(a.get("scatter_dims_to_operand_dims", "{}"))
        ivd = int(a["index_vector_dim"])
        obatch = int_list(a.get("input_batching_dims", "{}"))
        ibatch = int_list(a.get("scatter_indices_batching_dims", "{}"))
        if ivd == indices.ndim:
            indices = indices[..., None]
        idx = np.moveaxis(indices, ivd, -1)
        scatter_dims = [d for d in range(updates[0].ndim) if d not in uwd]
        window_operand_dims = [d for d in range(operands[0].ndim) if d not in inserted and d not in obatch]
        ibatch_positions = [d if d < ivd else d - 1 for d in ibatch] if ibatch else []
        for b in np.ndindex(*idx.shape[:-1]):
            start = [0] * operands[0].ndim
            for k, od in enumerate(sd2od):
                start[od] = int(idx[b + (k,)])
            for od, bd in zip(obatch, ibatch_positions):
                start[od] = b[bd]
            sel = [slice(None)] * updates[0].ndim
            for pos, d in enumerate(scatter_dims):
                sel[d] = b[pos]
            windows = [u[tuple(sel)] for u in updates]  # dims = update_window_dims in order
            wshape = windows[0].shape
            # XLA skips the whole window when any part of it is out of bounds
            # (the start must lie in [0, operand dim - window size]).
            wsize = [1] * operands[0].ndim
            for k, od in enumerate(window_operand_dims):
                wsize[od] = wshape[k]
            if any(s < 0 or s > operands[0].shape[d] - wsize[d] for d, s in enumerate(start)):
                continue
            for w in np.ndindex(*wshape):
                full = list(start)
                for k, od in enumerate(window_operand_dims):
                    full[od] += w[k]
                t = tuple(full)
                res = self.apply(combiner, [o[t] for o in operands] + [win[w] for win in windows])
                if n > 1:
                    for o, r in zip(operands, res):
                        o[t] = r
                else:
                    operands[0][t] = res
        return tuple(operands) if n > 1 else operands[0]

    # -- sort ----------------------------------------------------------------------

    def sort(self, ops, a, comparator):
        dim = int_list(a["dimensions"])[0]
        moved = [np.moveaxis(o, dim, -1) for o in ops]
        outs = [m.copy() for m in moved]
        for b in np.ndindex(*moved[0].shape[:-1]):
            line = [m[b] for m in moved]
            n = line[0].shape[0]

            apply = self.apply

            class Key:
                """An element as the comparator orders it. list.sort compares
                with < alone, so one comparator call per comparison."""
                __slots__ = ("i",)

                def __init__(self, i):
                    self.i = i

                def __lt__(self, other, line=line):
                    args = []
                    for v in line:
                        args += [v[self.i], v[other.i]]
                    return bool(apply(comparator, args))
            order = sorted(range(n), key=Key)  # stable
            for o, m in zip(outs, moved):
                o[b] = m[b][order]
        outs = [np.moveaxis(o, -1, dim) for o in outs]
        return tuple(outs) if len(outs) > 1 else outs[0]


def accumulator(x):
    return sum_type(x.dtype) if is_float(x) else x.dtype


def contraction_operands(x, y, dtype):
    """The operands of a dot or convolution with a `dtype` result, and the type
    to sum in. XLA converts each operand to the result type first
    (HloEvaluator::HandleDotSlowPath; the OperandUpcaster pass inserts the same
    converts), so s8 x s32 -> s32 sign-extends the s8 operand and f32 x f32 ->
    bf16 rounds both operands to bf16. Integer sums then run in the result
    type, wrapping (NumPy's integer arithmetic is modular); float sums in
    float64, rounded once by round_once."""
    x, y = convert(x, dtype), convert(y, dtype)
    return x, y, accumulator(x)


def round_once(result, dtype):
    """A float64 sum rounded once to `dtype` (NumPy's float64 -> float16 and
    float32 casts round once; bf16 needs round_bf16_once)."""
    if dtype == "bf16":
        return round_bf16_once(result)
    return result.astype(NP_TYPES[dtype]) if dtype in NP_TYPES else result


def batch_norm(op, ops, a, shape):
    """The batch-norm ops by their definition in XLA's operation semantics, in
    float64, each result rounded once: over every dimension but feature_index,
    mean = E[x], var = E[(x - mean)^2] (the population variance)."""
    f = int(a["feature_index"])
    eps = float(a.get("epsilon", "0"))
    wide = sum_type(ops[0].dtype)
    x = ops[0].astype(wide)
    axes = tuple(d for d in range(x.ndim) if d != f)
    view = [1] * x.ndim
    view[f] = x.shape[f]

    def spread(v):
        return v.astype(wide).reshape(view)

    dtype = shape.elements[0].dtype if shape.is_tuple() else shape.dtype
    if op == "batch-norm-training":
        scale, offset = ops[1], ops[2]
        mean = x.mean(axis=axes)
        var = ((x - mean.reshape(view)) ** 2).mean(axis=axes)
        y = (x - mean.reshape(view)) / np.sqrt(var.reshape(view) + eps) * spread(scale) + spread(offset)
        return tuple(round_once(v, dtype) for v in (y, mean, var))
    if op == "batch-norm-inference":
        scale, offset, mean, var = ops[1:5]
        y = (x - spread(mean)) / np.sqrt(spread(var) + eps) * spread(scale) + spread(offset)
        return round_once(y, dtype)
    scale, mean, var, dy = ops[1], ops[2], ops[3], ops[4].astype(wide)
    n = x.size // x.shape[f]
    centred = x - spread(mean)
    rsqrt = 1.0 / np.sqrt(var.astype(wide) + eps)
    grad_offset = dy.sum(axis=axes)
    dy_centred = (dy * centred).sum(axis=axes)
    grad_scale = dy_centred * rsqrt
    grad_x = (spread(scale) * rsqrt.reshape(view) / n *
              (n * dy - grad_offset.reshape(view) -
               centred * (dy_centred / (var.astype(wide) + eps)).reshape(view)))
    return tuple(round_once(v, dtype) for v in (grad_x, grad_scale, grad_offset))


# --- command line -----------------------------------------------------------------

def flatten(value):
    if isinstance(value, tuple):
        out = []
        for v in value:
            out.extend(flatten(v))
        return out
    return [value]


def get_at(value, index):
    for i in index:
        value = value[i]
    return value


def set_at(value, index, leaf):
    if not index:
        return leaf
    items = list(value)
    items[index[0]] = set_at(items[index[0]], index[1:], leaf)
    return tuple(items)


def split_leaf(name, by_name):
    """'p.3' -> ('p', 3) when p is a parameter (names may hold dots): leaf 3 of
    the tuple parameter p in flattened order, as `tileprof run --input` names it."""
    head, sep, tail = name.rpartition(".")
    if sep and head in by_name and tail.isdigit():
        return head, int(tail)
    return None, None


def check_array(spec, arr, shape, what):
    want = np.dtype(NP_TYPES.get(shape.dtype, np.float32))
    if tuple(arr.shape) != shape.dims or arr.dtype != want:
        raise HloError(f"--input {spec}: {what} is {shape}, the file holds {arr.dtype}{list(arr.shape)}")


def flat_leaves(shape):
    return [leaf for e in shape.elements for leaf in flat_leaves(e)] if shape.is_tuple() else [shape]


def assemble(shape, leaves, counter, what):
    """The value of a tuple parameter from its leaves by flattened index."""
    if not shape.is_tuple():
        k = counter[0]
        counter[0] += 1
        if k not in leaves:
            raise HloError(f"no --input for {what}.{k}")
        return leaves[k]
    return tuple(assemble(e, leaves, counter, what) for e in shape.elements)


def load_inputs(module, specs):
    """Arrays by parameter name or number; a tuple parameter's leaves as NAME.k
    (k in flattened order)."""
    entry = module.entry
    params = [entry.params[i] for i in sorted(entry.params)]
    if sorted(entry.params) != list(range(len(params))):
        raise HloError(f"{entry.name}: parameter numbers are not 0..{len(params) - 1}")
    values = [None] * len(params)
    leaves = [dict() for _ in params]
    by_name = {p.name: i for i, p in enumerate(params)}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            raise HloError(f"--input {spec}: expected NAME_OR_INDEX=FILE.npy")
        leaf = None
        if name in by_name:
            i = by_name[name]
        elif name.isdigit() and int(name) < len(params):
            i = int(name)
        else:
            head, leaf = split_leaf(name, by_name)
            if head is None:
                raise HloError(f"--input {spec}: no parameter named '{name}' "
                               f"(parameters: {', '.join(p.name for p in params)})")
            i = by_name[head]
        shape = params[i].shape
        if leaf is not None:
            flat = flat_leaves(shape) if shape.is_tuple() else []
            if leaf >= len(flat):
                raise HloError(f"--input {spec}: parameter {params[i].name} has no leaf {leaf}")
            shape = flat[leaf]
        elif shape.is_tuple() and len(flat_leaves(shape)) == 1:
            leaf, shape = 0, flat_leaves(shape)[0]  # a lone leaf goes by its parameter's name
        elif shape.is_tuple():
            raise HloError(f"--input {spec}: {name} is a tuple; give its leaves as {name}.0, ...")
        arr = np.load(path, allow_pickle=False)
        check_array(spec, arr, shape, f"parameter {name}")
        if leaf is not None:
            leaves[i][leaf] = arr
        else:
            values[i] = arr
    for i, p in enumerate(params):
        if values[i] is None and p.shape.is_tuple() and leaves[i]:
            values[i] = assemble(p.shape, leaves[i], [0], p.name)
    missing = [params[i].name for i, v in enumerate(values) if v is None]
    if missing:
        raise HloError(f"no --input for parameter(s): {', '.join(missing)}")
    return values


def run_module(module, inputs, iterations=1, seed=0, report=None):
    ev = Evaluator(module, seed)
    args = list(inputs)
    result = None
    root_shape = module.entry.root.shape
    for it in range(iterations):
        result = ev.run(module.entry, args)
        leaves = flatten(result)
        if report is not None:
            scalars = [f"out.{k} = {np.asarray(v).item()!r}" for k, v in enumerate(leaves) if np.ndim(v) == 0]
            if scalars:
                report(f"execution {it + 1}: " + ", ".join(scalars))
        for out_index, param, param_index in module.aliases:
            if param >= len(args):
                raise HloError(f"input_output_alias names parameter {param}, the module has {len(args)}")
            leaf = get_at(result, out_index) if root_shape.is_tuple() or not out_index else None
            if leaf is None:
                raise HloError(f"input_output_alias names output {out_index}, which does not exist")
            args[param] = set_at(args[param], param_index, leaf)
    return flatten(result)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Evaluate an HLO module with NumPy (the oracle of tileprof run).")
    parser.add_argument("module")
    parser.add_argument("--input", action="append", default=[], metavar="NAME_OR_INDEX=FILE.npy")
    parser.add_argument("--outputs", metavar="DIR")
    parser.add_argument("--iterations", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0, help="seed of the rng op")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--sums", choices=("wide", "native"), default="wide",
                        help="float sums in float64 rounded once (wide, the default) or in the type "
                             "XLA:CPU accumulates in (native: float32 for f16, bf16 and f32)")
    args = parser.parse_args(argv)
    SUMS["mode"] = args.sums
    if args.iterations < 1:
        parser.error("--iterations must be at least 1")
    try:
        with open(args.module, encoding="utf-8") as f:
            module = parse_module(f.read(), args.module)
        inputs = load_inputs(module, args.input)
        leaves = run_module(module, inputs, args.iterations, args.seed,
                            None if args.quiet else (lambda line: print(line, flush=True)))
        if args.outputs:
            os.makedirs(args.outputs, exist_ok=True)
            for k, leaf in enumerate(leaves):
                path = os.path.join(args.outputs, f"out.{k}.npy")
                tmp = path + ".tmp.npy"
                np.save(tmp, np.asarray(leaf))
                os.replace(tmp, path)
    except HloError as e:
        print(f"hlo_numpy: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"hlo_numpy: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
