#!/usr/bin/python3
"""Trains a sample with `tileprof run` for a few executions; the loss must fall.

Usage: tileprof_loss_falls.py TILEPROF MODULE.hlo MAKE_DATA OUTDIR OUTPUT [--iterations 3]
Runs the module on the tile simulator (weights carried over through
input_output_alias) and checks that the loss OUTPUT (e.g. out.6) of the last
execution is at least 0.5 % below the first one's, as loss_falls.py does for
the NumPy oracle. The CNN draws its dropout masks with rng from the tiles'
PRNG state, so this is the check of the rng variant end to end.
"""

import argparse
import os
import re
import shlex
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tileprof")
    parser.add_argument("module")
    parser.add_argument("make_data")
    parser.add_argument("outdir")
    parser.add_argument("output")
    parser.add_argument("--iterations", type=int, default=3)
    args = parser.parse_args()
    # The run writes its report into OUTDIR (its working directory).
    args.tileprof, args.module, args.outdir = (os.path.abspath(p) for p in
                                               (args.tileprof, args.module, args.outdir))
    os.makedirs(args.outdir, exist_ok=True)
    flags = subprocess.run([sys.executable, args.make_data, args.outdir], check=True,
                           capture_output=True, text=True).stdout
    command = [args.tileprof, "run", args.module, *shlex.split(flags), "--iterations",
               str(args.iterations)]
    run = subprocess.run(command, cwd=args.outdir, capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stdout, run.stderr, sep="\n")
        print(f"tileprof_loss_falls: tileprof run failed (exit {run.returncode})")
        return 1
    pattern = re.compile(r"^execution (\d+): " + re.escape(args.output) + r" \([^)]*\) = (\S+)$",
                         re.MULTILINE)
    losses = [float(value) for _, value in pattern.findall(run.stdout)]
    print("losses:", losses)
    if len(losses) != args.iterations:
        print(run.stdout)
        print(f"tileprof_loss_falls: expected {args.iterations} losses of {args.output}")
        return 1
    if not losses[-1] < losses[0] * 0.995:
        print(f"tileprof_loss_falls: the loss did not fall by 0.5 %: {losses}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
