#!/usr/bin/python3
"""Checks a sample's hand-written backward pass against finite differences.

The samples' training steps spell out the gradients op by op, so a wrong
transpose or a missing factor would still train, just badly. This generates
a one-step variant of the module (GENERATOR --steps 1 ...), evaluates it with
the NumPy oracle and compares the gradient the module applies, g = (w - w') /
lr for every variable, with the central difference of the loss it reports
along a direction d (half along g, half random):

    (loss(w + h d) - loss(w - h d)) / 2h  ~=  <g, d>

Usage: gradient_check.py GENERATOR MAKE_DATA [--gen-arg ARG ...] [--data-arg ARG ...]
                         [--lr 0.01] [--state REGEX] [--float64] [--per-parameter]
--gen-arg and --data-arg pass options to the generator and to MAKE_DATA (the
same variant options for samples/resnet50). Aliased parameters whose names
match --state are carried state, not weights moved by their gradient (batch
norm's moving statistics): they are left out of the check. --float64 makes
every f16, bf16 and f32 of the module (and of its inputs) f64, so that h can
be 1e-6: a deep network with batch norm on a small batch has relu and
max-pool kinks closer than 1e-3 along any direction. The graph is the same,
so a half-precision module's backward pass (its converts to and from f32
included) is checked as written. --per-parameter adds the same check for
each parameter alone.
Exit 0 when they agree within 1 % (relu and max-pool kinks and f32 rounding
of the loss stay far below that for h = 1e-3).
"""

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "oracle"))
from hlo_numpy import load_inputs, run_module  # noqa: E402
from hlo_text_parser import parse_module  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("generator")
    parser.add_argument("make_data")
    parser.add_argument("--gen-arg", action="append", default=[])
    parser.add_argument("--data-arg", action="append", default=[])
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--state", help="names of aliased parameters that are not gradient-updated (regex)")
    parser.add_argument("--float64", action="store_true",
                        help="evaluate the module with every f16, bf16 and f32 made f64 (and h 1e-6)")
    parser.add_argument("--per-parameter", action="store_true",
                        help="also check every parameter's gradient alone, along its own direction")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        text = subprocess.run([sys.executable, args.generator, "--steps", "1"] + args.gen_arg,
                              check=True, capture_output=True, text=True).stdout
        if args.float64:
            text = re.sub(r"\b(f16|bf16|f32)\[", "f64[", text)
        module = parse_module(text, "one-step module")
        printed = subprocess.run([sys.executable, args.make_data, tmp, "--seed", "3"] + args.data_arg,
                                 check=True, capture_output=True, text=True).stdout
        specs = shlex.split(printed)[1::2]
        # make_data writes a whole execution's batches; the one-step module takes the first.
        params = {p.name: p for p in module.entry.params.values()}
        for spec in specs:
            name, _, path = spec.partition("=")
            array = np.load(path)
            if name in ("images", "labels") and array.shape != params[name].shape.dims:
                array = array[:1]
            if args.float64 and array.dtype in (np.float16, np.float32):
                array = array.astype(np.float64)
            np.save(path, array)
        inputs = load_inputs(module, specs)
        names = [module.entry.params[i].name for i in sorted(module.entry.params)]
        # (parameter, output leaf) of every aliased weight; the outputs are a flat tuple.
        pairs = sorted((param, out[0]) for out, param, _ in module.aliases
                       if not (args.state and re.search(args.state, names[param])))
        aliased = [p for p, _ in pairs]
        outs = run_module(module, inputs)
        loss = float(outs[-1])
        grads = [(inputs[p].astype(np.float64) - outs[k].astype(np.float64)) / args.lr for p, k in pairs]
        gnorm = np.sqrt(sum(float(np.sum(g * g)) for g in grads))
        rng = np.random.default_rng(0)
        rand = [rng.normal(size=g.shape) for g in grads]
        rnorm = np.sqrt(sum(float(np.sum(r * r)) for r in rand))
        direction = [g / gnorm + r / rnorm for g, r in zip(grads, rand)]
        analytic = sum(float(np.sum(g * d)) for g, d in zip(grads, direction))
        # f64 rounding allows a step far below the distance to the nearest relu or max-pool kink.
        h = 1e-6 if args.float64 else 1e-3

        def loss_at(sign, params, directions):
            moved = list(inputs)
            for p, d in zip(params, directions):
                moved[p] = (inputs[p] + sign * h * d).astype(inputs[p].dtype)
            return float(run_module(module, moved)[-1])
        numeric = (loss_at(+1, aliased, direction) - loss_at(-1, aliased, direction)) / (2 * h)
        rel = abs(numeric - analytic) / max(abs(analytic), 1e-12)
        print(f"loss {loss:.6f}, |g| {gnorm:.6g}; directional derivative: module {analytic:.6g}, "
              f"finite difference {numeric:.6g} (relative difference {rel:.2e})")
        failed = not rel < 0.01
        if args.per_parameter:
            # One parameter at a time, along its own gradient plus a random direction of the
            # same norm: a wrong gradient of a small layer cannot hide in the sum.
            worst = 0.0
            for p, g, r in zip(aliased, grads, rand):
                norm = np.sqrt(float(np.sum(g * g)))
                d = (g / norm if norm else 0 * g) + r / np.sqrt(float(np.sum(r * r)))
                one = float(np.sum(g * d))
                fd = (loss_at(+1, [p], [d]) - loss_at(-1, [p], [d])) / (2 * h)
                rel_p = abs(fd - one) / max(abs(one), 1e-12)
                worst = max(worst, rel_p)
                if not rel_p < 0.01:
                    failed = True
                    print(f"  {names[p]}: module {one:.6g}, finite difference {fd:.6g} "
                          f"(relative difference {rel_p:.2e})")
            print(f"{len(aliased)} parameters one by one: largest relative difference {worst:.2e}")
        if failed:
            print("FAIL: the module's gradient disagrees with the finite difference of its loss")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
