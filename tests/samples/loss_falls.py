#!/usr/bin/python3
"""Trains a sample for a few executions with the NumPy oracle; the loss must fall.

Usage: loss_falls.py MODULE.hlo MAKE_DATA OUTDIR [--iterations 3]
Writes the sample's inputs with MAKE_DATA into OUTDIR, runs the module
--iterations times with the weights carried over through input_output_alias
(as `tileprof run --iterations` does) and checks that the mean loss of the
last execution is at least 0.5 % below the first one's. Dropout makes the
CNN's loss noisy from one execution to the next, so only first vs last is
checked.
"""

import argparse
import os
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "oracle"))
from hlo_numpy import load_inputs, run_module  # noqa: E402
from hlo_text_parser import parse_module  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module")
    parser.add_argument("make_data")
    parser.add_argument("outdir")
    parser.add_argument("--iterations", type=int, default=3)
    args = parser.parse_args()
    printed = subprocess.run([sys.executable, args.make_data, args.outdir], check=True,
                             capture_output=True, text=True).stdout
    with open(args.module, encoding="utf-8") as f:
        module = parse_module(f.read(), args.module)
    losses = []

    def note(line):
        print(line, flush=True)
        losses.append(float(line.rsplit("=", 1)[1]))
    run_module(module, load_inputs(module, shlex.split(printed)[1::2]), args.iterations, report=note)
    if len(losses) != args.iterations:
        print(f"FAIL: expected one scalar loss per execution, got {losses}")
        return 1
    if not losses[-1] < 0.995 * losses[0]:
        print(f"FAIL: the loss did not fall: {losses}")
        return 1
    print(f"loss fell from {losses[0]:.4f} to {losses[-1]:.4f} in {args.iterations} executions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
