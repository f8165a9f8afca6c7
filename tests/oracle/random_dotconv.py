#!/usr/bin/env python3
"""Random dots and convolutions, run by tileprof and by the NumPy oracle.

Usage: random_dotconv.py --tileprof PATH --workdir DIR [--count N] [--first-seed S]

For each seed, one convolution (1 to 3 spatial dimensions; every dimension
label permuted in input, kernel and output; random size, stride, padding
from -1, lhs and rhs dilation and reversal per dimension; feature or batch
groups) and one dot (0 to 2 batch, contracting and free dimensions per
operand, in random positions and pairing order; sometimes a contraction of
hundreds, which is split over tiles) are written to DIR and checked with
compare.py. The generator only makes shapes XLA accepts. Exits 1 naming the
failing modules, 77 when the binary has no `run` command.
"""
import argparse
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def conv_module(seed):
    rnd = random.Random(seed)
    nsp = rnd.choice([1, 2, 2, 3])
    sp = [str(i) for i in range(nsp)]

    def perm(letters):
        letters = list(letters)
        rnd.shuffle(letters)
        return "".join(letters)

    lhs, rhs, out = perm(["b", "f"] + sp), perm(["i", "o"] + sp), perm(["b", "f"] + sp)
    fgc = bgc = 1
    r = rnd.random()
    if r < 0.25:
        fgc = rnd.choice([2, 3])
    elif r < 0.45:
        bgc = rnd.choice([2, 3])
    ci = rnd.randint(1, 4)
    co = rnd.randint(1, 3) * fgc * bgc
    batch_out = rnd.randint(1, 3)
    win, in_sp, k_sp, out_sp = [], [], [], []
    for _ in range(nsp):
        while True:
            n, k, s = rnd.randint(1, 7), rnd.randint(1, 3), rnd.randint(1, 3)
            lo, hi, ld, rd = rnd.randint(-1, 2), rnd.randint(-1, 2), rnd.randint(1, 2), rnd.randint(1, 2)
            rev = rnd.random() < 0.3
            padded, span = (n - 1) * ld + 1 + lo + hi, (k - 1) * rd + 1
            if padded >= span:
                break
        in_sp.append(n)
        k_sp.append(k)
        out_sp.append((padded - span) // s + 1)
        win.append((k, s, lo, hi, ld, rd, int(rev)))
    sizes_in = {"b": batch_out * bgc, "f": ci * fgc, **{str(d): in_sp[d] for d in range(nsp)}}
    sizes_k = {"i": ci, "o": co, **{str(d): k_sp[d] for d in range(nsp)}}
    sizes_out = {"b": batch_out, "f": co, **{str(d): out_sp[d] for d in range(nsp)}}

    def shape(labels, sizes):
        return "[" + ",".join(str(sizes[c]) for c in labels) + "]"

    def field(i):
        return "x".join(str(t[i]) for t in win)

    window = (f"size={field(0)} stride={field(1)} pad=" + "x".join(f"{t[2]}_{t[3]}" for t in win) +
              f" lhs_dilate={field(4)} rhs_dilate={field(5)} rhs_reversal={field(6)}")
    groups = (f", feature_group_count={fgc}" if fgc > 1 else "") + (f", batch_group_count={bgc}" if bgc > 1 else "")
    return f"""HloModule random_conv_{seed}
// oracle-inputs: x=normal k=normal
// oracle-tolerance: rtol=1e-4 atol=1e-4
ENTRY main {{
  x = f32{shape(lhs, sizes_in)} parameter(0)
  k = f32{shape(rhs, sizes_k)} parameter(1)
  ROOT c = f32{shape(out, sizes_out)} convolution(x, k), window={{{window}}}, dim_labels={lhs}_{rhs}->{out}{groups}
}}
"""


def dot_module(seed):
    rnd = random.Random(seed)
    nb, nc, nfl, nfr = (rnd.randint(0, 2) for _ in range(4))
    sizes = {"b": [rnd.randint(1, 4) for _ in range(nb)], "c": [rnd.randint(1, 5) for _ in range(nc)],
             "l": [rnd.randint(1, 5) for _ in range(nfl)], "r": [rnd.randint(1, 5) for _ in range(nfr)]}
    if nc and rnd.random() < 0.3:
        sizes["c"][0] = rnd.choice([300, 700])
    lhs = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("l", i) for i in range(nfl)]
    rhs = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("r", i) for i in range(nfr)]
    rnd.shuffle(lhs)
    rnd.shuffle(rhs)

    def j(values):
        return ",".join(map(str, values))

    lshape = [sizes[g][i] for g, i in lhs]
    rshape = [sizes[g][i] for g, i in rhs]
    out = sizes["b"] + [sizes[g][i] for g, i in lhs if g == "l"] + [sizes[g][i] for g, i in rhs if g == "r"]
    lb, rb = [lhs.index(("b", i)) for i in range(nb)], [rhs.index(("b", i)) for i in range(nb)]
    lc, rc = [lhs.index(("c", i)) for i in range(nc)], [rhs.index(("c", i)) for i in range(nc)]
    return f"""HloModule random_dot_{seed}
// oracle-inputs: a=normal b=normal
// oracle-tolerance: rtol=1e-4 atol=1e-3
ENTRY main {{
  a = f32[{j(lshape)}] parameter(0)
  b = f32[{j(rshape)}] parameter(1)
  ROOT d = f32[{j(out)}] dot(a, b), lhs_batch_dims={{{j(lb)}}}, lhs_contracting_dims={{{j(lc)}}}, rhs_batch_dims={{{j(rb)}}}, rhs_contracting_dims={{{j(rc)}}}
}}
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tileprof", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--count", type=int, default=12)
    parser.add_argument("--first-seed", type=int, default=1)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    failed = []
    for seed in range(args.first_seed, args.first_seed + args.count):
        for kind, make in (("conv", conv_module), ("dot", dot_module)):
            path = os.path.join(args.workdir, f"{kind}_{seed}.hlo")
            with open(path, "w") as f:
                f.write(make(seed))
            r = subprocess.run([sys.executable, os.path.join(HERE, "compare.py"), path, "--tileprof", args.tileprof,
                                "--workdir", os.path.join(args.workdir, f"{kind}_{seed}")],
                               capture_output=True, text=True)
            if r.returncode == 77:
                print(r.stdout + r.stderr)
                return 77
            if r.returncode != 0:
                failed.append(path)
                print(f"FAIL {path}\n{r.stdout}{r.stderr}")
    print(f"{2 * args.count - len(failed)} of {2 * args.count} random modules match the oracle")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
