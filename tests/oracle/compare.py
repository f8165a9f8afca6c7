#!/usr/bin/python3
"""Runs `tileprof run` and the NumPy oracle on one module and compares every output.

Usage:
  compare.py MODULE.hlo --tileprof PATH [--workdir DIR] [--seed S] [--iterations N]
             [--make-data SCRIPT] [--rtol R --atol A] [--rounding-reference]

Inputs: with --make-data, SCRIPT OUTDIR --seed S writes them (the samples'
make_data.py, which prints the --input arguments); otherwise they are drawn
from the seed as the module's `// oracle-inputs:` comment says, per parameter
name: `normal`, `uniform:LO:HI`, `randint:LO:HI` (HI excluded),
`permutation:N`, `bool`. Parameters not listed get normal floats, integers in
[0, 4) and random preds.

Target: tileprof runs for the module's `// oracle-target: NAME` when it has
one (a module whose lowering depends on a tile's memory), else for run's
default.

Tolerances: a float output passes when |tileprof - oracle| <= atol + rtol *
|oracle| for every element; integer and pred outputs must be equal. The
module's `// oracle-tolerance: rtol=R atol=A` comment states them, --rtol and
--atol override, and the default is the elementwise one, rtol 1e-5 atol 1e-6.
Why these numbers: the oracle computes sums in float64 and rounds once, the
simulator in f32 in its own order; an elementwise op is within an ulp or two
(transcendentals a few ulps: 1e-5 relative), a sum of K terms within about
sqrt(K) ulps of sum|terms| (the dot, convolution and reduce modules state
atol 1e-4 / 1e-5 for their K), and a training run adds the rounding of every
step (the samples use rtol 1e-4 atol 1e-5).

With --rounding-reference, the oracle also evaluates the module with its sums
in the module's own precision (hlo_numpy.py --sums native: float32, as
XLA:CPU accumulates). A float output that fails the tolerance then passes
"at the module's own rounding" when tileprof's worst error, in units of the
tolerance, is at most ROUNDING_FACTOR (4) times the native evaluation's: the
module's results depend on f32 rounding that much (a sum that cancels, an
ill-conditioned solve, a loop that amplifies), and tileprof is about as
close to the exact answer as another f32 evaluation is. Where the native
evaluation is within a quarter of the tolerance, nothing is excused. The
verdict line is then "PASS (rounding)", and each such output says both
errors.

Exit status: 0 all outputs match, 1 a mismatch or a failed run, 77 when the
tileprof binary has no `run` command yet (CTest's SKIP_RETURN_CODE).
"""

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from hlo_numpy import NP_TYPES  # noqa: E402
from hlo_text_parser import HloError, parse_module  # noqa: E402

SKIP = 77
# How many times the native evaluation's worst error (in units of the
# tolerance) tileprof's may be: two f32 evaluations that sum in different
# orders (NumPy's BLAS blocks and pairwise sums, the simulator's per-tile
# partials and reduction tree) have errors of the same order, not equal
# ones; an error of more than 4 times points at a defect, not at rounding.
ROUNDING_FACTOR = 4.0


def header_value(text, key):
    m = re.search(r"//\s*" + re.escape(key) + r":\s*(.*)", text)
    return m.group(1).strip() if m else None


def draw(rng, kind, shape, dtype, name):
    dt = NP_TYPES[dtype]
    dims = shape.dims
    fields = kind.split(":")
    if fields[0] == "normal":
        return rng.normal(size=dims).astype(dt)
    if fields[0] == "uniform":
        return rng.uniform(float(fields[1]), float(fields[2]), dims).astype(dt)
    if fields[0] == "randint":
        return rng.integers(int(fields[1]), int(fields[2]), dims, dtype=np.int64).astype(dt)
    if fields[0] == "permutation":
        return rng.permutation(int(fields[1])).astype(dt).reshape(dims)
    if fields[0] == "bool":
        return rng.integers(0, 2, dims).astype(np.bool_)
    raise SystemExit(f"compare.py: oracle-inputs: unknown kind '{kind}' for {name}")


def generate_inputs(module, text, seed, outdir):
    spec = {}
    for item in (header_value(text, "oracle-inputs") or "").split():
        name, _, kind = item.partition("=")
        spec[name] = kind
    rng = np.random.default_rng(seed)
    args = []
    params = [module.entry.params[i] for i in sorted(module.entry.params)]
    for unknown in set(spec) - {p.name for p in params}:
        raise SystemExit(f"compare.py: oracle-inputs names '{unknown}', which is not a parameter")
    for p in params:
        for name, shape in leaves_of(p.name, p.shape):
            dtype = shape.dtype
            kind = spec.get(name, spec.get(p.name))
            if kind is None:
                kind = "bool" if dtype == "pred" else ("normal" if dtype.startswith(("f", "bf")) else "randint:0:4")
            arr = draw(rng, kind, shape, dtype, name)
            path = os.path.join(outdir, f"{name}.npy")
            np.save(path, arr)
            args += ["--input", f"{name}={path}"]
    return args


def leaves_of(name, shape):
    """(NAME.k, leaf shape) of a tuple parameter's leaves in flattened order, as
    `tileprof run --input` names them; the parameter itself when an array."""
    if not shape.is_tuple():
        return [(name, shape)]
    flat = []
    stack = [shape]
    while stack:
        s = stack.pop(0)
        if s.is_tuple():
            stack[0:0] = list(s.elements)
        else:
            flat.append(s)
    if len(flat) == 1:  # tileprof names a lone leaf by its parameter
        return [(name, flat[0])]
    return [(f"{name}.{k}", leaf) for k, leaf in enumerate(flat)]


def tileprof_has_run(tileprof):
    r = subprocess.run([tileprof, "help", "run"], capture_output=True, text=True)
    if r.returncode == 0:
        return True
    if "no command named 'run'" in r.stderr:
        return False
    raise SystemExit(f"compare.py: `{tileprof} help run` failed unexpectedly (exit {r.returncode}): {r.stderr}")


def float_errors(got, want, rtol, atol):
    """(|got - want| per element, its bound, the elements out of bound);
    NaN against NaN and an infinity against itself are matches."""
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    same_nan = np.isnan(g) & np.isnan(w)
    with np.errstate(invalid="ignore"):  # inf - inf, handled below
        err = np.where(same_nan, 0, np.abs(g - w))
    err = np.where(np.isinf(w) & (g == w), 0, err)
    # An infinite oracle value takes only itself: rtol * inf would accept
    # anything (and with rtol 0 be NaN, accepting nothing).
    bound = np.where(np.isinf(w), 0, atol + rtol * np.where(np.isinf(w), 0, np.abs(w)))
    bad = ~(err <= bound) & ~same_nan  # a NaN's bound is NaN: both NaN is a match
    return err, bound, bad


def worst_ratio(got, want, rtol, atol):
    """The largest error in units of its bound (inf where the bound is 0 or
    an element is NaN against a number); 0 for an empty array."""
    err, bound, bad = float_errors(got, want, rtol, atol)
    if not err.size:
        return 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(err == 0, 0.0, err / bound)  # a zero bound: inf
    # NaN against a number (err NaN) is out of any bound.
    return float(np.max(np.where(np.isnan(ratio), np.where(bad, np.inf, 0.0), ratio)))


def within_rounding(got, want, native, rtol, atol):
    """Whether a float output that fails the tolerance is within the module's
    own f32 rounding (see the module docstring), and the line that says why."""
    if native is None or native.shape != want.shape or not np.issubdtype(want.dtype, np.floating):
        return False, ""
    mine = worst_ratio(got, want, rtol, atol)
    theirs = worst_ratio(native, want, rtol, atol)
    line = (f"; tileprof's worst error is {mine:.3g} x the tolerance, the oracle's own f32 evaluation's "
            f"{theirs:.3g} x")
    return bool(np.isfinite(mine) and mine <= ROUNDING_FACTOR * theirs), line


def compare_leaf(k, got, want, rtol, atol):
    if got.shape != want.shape:
        return False, f"out.{k}: shape {got.shape} vs oracle {want.shape}"
    if got.dtype != want.dtype:
        return False, f"out.{k}: dtype {got.dtype} vs oracle {want.dtype}"
    if np.issubdtype(want.dtype, np.floating):
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        err, bound, bad = float_errors(got, want, rtol, atol)
        max_err = float(np.max(err)) if err.size else 0.0
        rel = float(np.max(err / np.maximum(np.abs(w), 1e-30))) if err.size else 0.0
        line = f"out.{k}: {want.dtype}{list(want.shape)} max abs err {max_err:.3g}, max rel err {rel:.3g}"
        if bad.any():
            i = np.unravel_index(np.argmax(np.where(bad, err - bound, -np.inf)), want.shape)
            return False, line + f"; {int(bad.sum())} element(s) out of tolerance, e.g. at {list(i)}: " \
                                 f"tileprof {g[i]!r} vs oracle {w[i]!r}"
        return True, line
    bad = got != want
    line = f"out.{k}: {want.dtype}{list(want.shape)} exact"
    if bad.any():
        i = np.unravel_index(np.argmax(bad), want.shape)
        return False, line + f"; {int(bad.sum())} element(s) differ, e.g. at {list(i)}: " \
                             f"tileprof {got[i]!r} vs oracle {want[i]!r}"
    return True, line


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module")
    parser.add_argument("--tileprof", required=True)
    parser.add_argument("--workdir")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=1)
    parser.add_argument("--make-data", metavar="SCRIPT")
    parser.add_argument("--rtol", type=float)
    parser.add_argument("--atol", type=float)
    parser.add_argument("--rounding-reference", action="store_true",
                        help="also evaluate with sums in the module's own precision and pass an output "
                             "whose error is of the order of that evaluation's")
    args = parser.parse_args()
    args.module = os.path.abspath(args.module)

    if not tileprof_has_run(args.tileprof):
        print(f"SKIPPED: {args.tileprof} has no `run` command yet; the comparison runs once it has one")
        return SKIP

    with open(args.module, encoding="utf-8") as f:
        text = f.read()
    try:
        module = parse_module(text, args.module)
    except HloError as e:
        print(f"compare.py: {e}", file=sys.stderr)
        return 1
    rtol, atol = 1e-5, 1e-6
    tol = header_value(text, "oracle-tolerance")
    if tol:
        fields = dict(f.split("=") for f in tol.split())
        rtol, atol = float(fields["rtol"]), float(fields["atol"])
    rtol = args.rtol if args.rtol is not None else rtol
    atol = args.atol if args.atol is not None else atol

    workdir = os.path.abspath(args.workdir or tempfile.mkdtemp(prefix="tileprof-compare-"))
    os.makedirs(workdir, exist_ok=True)
    inputs_dir = os.path.join(workdir, "inputs")
    os.makedirs(inputs_dir, exist_ok=True)
    if args.make_data:
        r = subprocess.run([sys.executable, args.make_data, inputs_dir, "--seed", str(args.seed)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"compare.py: {args.make_data} failed:\n{r.stderr}", file=sys.stderr)
            return 1
        input_args = shlex.split(r.stdout)
    else:
        input_args = generate_inputs(module, text, args.seed, inputs_dir)

    # `// oracle-target: NAME` runs tileprof for that target (a module about a
    # tile's memory, whose lowering depends on it), else run's default.
    target = header_value(text, "oracle-target")
    target_args = ["--target", target.strip()] if target else []
    runs = {
        "tileprof": [args.tileprof, "run", args.module] + target_args + input_args,
        "oracle": [sys.executable, os.path.join(HERE, "hlo_numpy.py"), args.module] + input_args,
    }
    def execute(name, cmd):
        cmd = cmd + ["--outputs", os.path.join(workdir, name), "--iterations", str(args.iterations)]
        print("$ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
        r = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
        sys.stdout.write(r.stdout[-4000:])
        if r.returncode != 0:
            print(f"compare.py: {name} failed (exit {r.returncode}):\n{r.stderr[-4000:]}", file=sys.stderr)
        return r.returncode == 0

    for name, cmd in runs.items():
        if not execute(name, cmd):
            return 1
    # The native evaluation, run only once an output is out of tolerance
    # (it doubles the oracle's time).
    native_ran = False

    leaves = module.entry.root.shape.leaves()
    ok = True
    by_rounding = 0  # outputs passed at the module's own rounding
    print(f"tolerance: |tileprof - oracle| <= {atol:g} + {rtol:g} * |oracle| (integers exact)")
    for k in range(len(leaves)):
        paths = [os.path.join(workdir, side, f"out.{k}.npy") for side in ("tileprof", "oracle")]
        missing = [p for p in paths if not os.path.exists(p)]
        if missing:
            print(f"out.{k}: MISSING {missing[0]}")
            ok = False
            continue
        got, want = np.load(paths[0]), np.load(paths[1])
        good, line = compare_leaf(k, got, want, rtol, atol)
        if not good and args.rounding_reference:
            if not native_ran:
                native_ran = True
                if not execute("oracle-native", runs["oracle"] + ["--sums", "native"]):
                    return 1
            native = os.path.join(workdir, "oracle-native", f"out.{k}.npy")
            rounding, why = within_rounding(got, want, np.load(native) if os.path.exists(native) else None,
                                            rtol, atol)
            line += why
            if rounding:
                print("ok   (rounding) " + line)
                by_rounding += 1
                continue
        print(("ok   " if good else "FAIL ") + line)
        ok &= good
    extra = os.path.join(workdir, "tileprof", f"out.{len(leaves)}.npy")
    if os.path.exists(extra):
        print(f"FAIL tileprof wrote {extra}, but the module has {len(leaves)} result leaves")
        ok = False
    print(("PASS (rounding)" if by_rounding else "PASS") if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
