#!/usr/bin/python3
"""Host seconds per training step of the samples on the tile simulator, next to
the NumPy oracle (tests/oracle/hlo_numpy.py) evaluating the same module.

    bench/sim/steps.py --tileprof build/cli/tileprof [--threads N] [--only NAME ...]
        [--workdir DIR]

Samples: MNIST (10 steps an execution), the CNN (5), ResNet-50 inference at
batch 1 f32 (one forward pass) and a ResNet-50 training step at batch 1 f16
(it fits one ipu2 in f16 and in f32, samples/resnet50/README.md).

tileprof: `tileprof run ... --iterations 2`, which prints the seconds its
executions took (compile excluded). Oracle: wall time of `--iterations 3`
minus that of `--iterations 1` (the best of two runs each), over 2, so that
its start-up and parsing cancel out.
Both divide by the steps an execution runs. The ratio is oracle time over
tileprof time: above 1, the simulator is the faster.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3"

# name, module (or generator options), make_data options, steps an execution
SAMPLES = [
    ("mnist", "samples/mnist/mnist.hlo", ["samples/mnist/make_data.py"], 10),
    ("cnn", "samples/cnn/cnn.hlo", ["samples/cnn/make_data.py"], 5),
    ("resnet50_infer_b1_f32", "samples/resnet50/resnet50_infer_b1_f32.hlo",
     ["samples/resnet50/make_data.py"], 1),
    ("resnet50_train_b1_f16", ["--mode", "train", "--batch", "1", "--dtype", "f16"],
     ["samples/resnet50/make_data.py", "--mode", "train", "--batch", "1", "--dtype", "f16"], 1),
]


def run(cmd, cwd):
    start = time.monotonic()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"steps.py: {' '.join(cmd[:3])} ... failed ({done.returncode}):\n"
                 f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return time.monotonic() - start, done.stdout + done.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tileprof", required=True)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--workdir")
    args = parser.parse_args()
    tileprof = os.path.abspath(args.tileprof)
    work = args.workdir or tempfile.mkdtemp(prefix="tileprof-steps-")
    print(f"| sample | steps an execution | tileprof s/step ({args.threads} threads) "
          f"| oracle s/step | oracle / tileprof |")
    print("|---|---:|---:|---:|---:|")
    for name, module, data, steps in SAMPLES:
        if args.only and name not in args.only:
            continue
        here = os.path.join(work, name)
        os.makedirs(here, exist_ok=True)
        if isinstance(module, list):
            path = os.path.join(here, name + ".hlo")
            run([PY, os.path.join(ROOT, "samples/resnet50/gen_resnet50.py"), "-o", path] + module,
                here)
            module = path
        else:
            module = os.path.join(ROOT, module)
        _, printed = run([PY, os.path.join(ROOT, data[0]), os.path.join(here, "data")] + data[1:],
                         here)
        inputs = printed.split()
        _, printed = run([tileprof, "run", module, *inputs, "--iterations", "2", "--threads",
                          str(args.threads), "--outputs", os.path.join(here, "out"), "-o",
                          os.path.join(here, "run.rep")], here)
        found = re.search(r"(\d+) execution\(s\) in ([0-9.]+) s", printed)
        if not found:
            sys.exit(f"steps.py: no execution time in tileprof's output:\n{printed}")
        sim = float(found.group(2)) / int(found.group(1)) / steps
        # The best of two runs each, 1 and 3 executions: the difference is two.
        oracle = [min(run([PY, os.path.join(ROOT, "tests/oracle/hlo_numpy.py"), module, *inputs,
                           "--quiet", "--iterations", str(n)], here)[0] for _ in range(2))
                  for n in (1, 3)]
        per_step = max(oracle[1] - oracle[0], 0.0) / 2 / steps
        print(f"| {name} | {steps} | {sim:.4f} | {per_step:.4f} | {per_step / sim:.2f}x |",
              flush=True)


if __name__ == "__main__":
    main()
