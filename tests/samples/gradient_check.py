#!/usr/bin/python3
"""Checks a sample's hand-written backward pass against finite differences.

The samples' training steps spell out the gradients op by op, so a wrong
transpose or a missing factor would still train, just badly. This generates
a one-step variant of the module (GENERATOR --steps 1 ...), evaluates it with
the NumPy oracle and compares the gradient the module applies, g = (w - w') /
lr for every variable, with the central difference of the loss it reports
along a direction d (half along g, half random):

    (loss(w + h d) - loss(w - h d)) / 2h  ~=  <g, d>

Usage: gradient_check.py GENERATOR MAKE_DATA [--gen-arg ARG ...] [--lr 0.01]
Exit 0 when they agree within 1 % (relu and max-pool kinks and f32 rounding
of the loss stay far below that for h = 1e-3).
"""

import argparse
import os
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
    parser.add_argument("--lr", type=float, default=0.01)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        text = subprocess.run([sys.executable, args.generator, "--steps", "1"] + args.gen_arg,
                              check=True, capture_output=True, text=True).stdout
        module = parse_module(text, "one-step module")
        printed = subprocess.run([sys.executable, args.make_data, tmp, "--seed", "3"],
                                 check=True, capture_output=True, text=True).stdout
        specs = shlex.split(printed)[1::2]
        # make_data writes a whole execution's batches; the one-step module takes the first.
        for spec in specs:
            name, _, path = spec.partition("=")
            if name in ("images", "labels"):
                np.save(path, np.load(path)[:1])
        inputs = load_inputs(module, specs)
        aliased = sorted(param for _, param, _ in module.aliases)
        outs = run_module(module, inputs)
        loss = float(outs[-1])
        grads = [(inputs[p].astype(np.float64) - outs[k].astype(np.float64)) / args.lr
                 for k, p in enumerate(aliased)]
        gnorm = np.sqrt(sum(float(np.sum(g * g)) for g in grads))
        rng = np.random.default_rng(0)
        rand = [rng.normal(size=g.shape) for g in grads]
        rnorm = np.sqrt(sum(float(np.sum(r * r)) for r in rand))
        direction = [g / gnorm + r / rnorm for g, r in zip(grads, rand)]
        analytic = sum(float(np.sum(g * d)) for g, d in zip(grads, direction))
        h = 1e-3

        def loss_at(sign):
            moved = list(inputs)
            for p, d in zip(aliased, direction):
                moved[p] = (inputs[p] + sign * h * d).astype(inputs[p].dtype)
            return float(run_module(module, moved)[-1])
        numeric = (loss_at(+1) - loss_at(-1)) / (2 * h)
        rel = abs(numeric - analytic) / max(abs(analytic), 1e-12)
        print(f"loss {loss:.6f}, |g| {gnorm:.6g}; directional derivative: module {analytic:.6g}, "
              f"finite difference {numeric:.6g} (relative difference {rel:.2e})")
        if not rel < 0.01:
            print("FAIL: the module's gradient disagrees with the finite difference of its loss")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
