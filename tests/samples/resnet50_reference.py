#!/usr/bin/python3
"""Checks samples/resnet50's modules against a plain NumPy ResNet-50.

The reference below is written from the architecture's description (He et al.
2015, v1.5; Keras applications' layer names; TF's 'SAME' padding rule), in
float64, with NumPy's sliding windows: it shares no code with the generator
or the oracle. The modules are evaluated with the NumPy oracle
(tests/oracle/hlo_numpy.py) on the inputs of make_data.py, with the batch
norm statistics, gammas, betas and the dense bias then redrawn at random so
that every term of the normalisation matters.

  resnet50_reference.py small [--dtype f32|f16]
      small variants (widths / 16, 40x40 and 48x48 images, blocks 1,2,1,1:
      identity and projection shortcuts, stride-2 layers on even and odd
      sizes): the inference module's probabilities, and the training step's
      loss and updated moving statistics, against the reference. With f16
      the modules compute in half precision and the tolerances are wider;
      the f16 training step is also compared with the f32 one on the same
      (f16) inputs: loss and the direction and length of the update.
  resnet50_reference.py full MODULE.hlo [--float64]
      a committed full-size inference module (224x224, 1000 classes) against
      the reference. --float64 evaluates it with every float type made f64:
      the f16 module's graph, checked exactly (53 layers of f16 rounding move
      its probabilities by up to 15 % on random weights; the small variants
      check f16 arithmetic itself).

Exit 0 when everything agrees, 1 with the differences otherwise.
"""

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "oracle"))
from hlo_numpy import load_inputs, run_module  # noqa: E402
from hlo_text_parser import parse_module  # noqa: E402

GENERATOR = os.path.join(ROOT, "samples", "resnet50", "gen_resnet50.py")
MAKE_DATA = os.path.join(ROOT, "samples", "resnet50", "make_data.py")
EPS = 1e-5
MOMENTUM = 0.9

# --- the reference network ----------------------------------------------------


def same(size, k, stride):
    """TF's 'SAME': ceil(size / stride) outputs, the padding split with the odd element at the end."""
    out = (size + stride - 1) // stride
    total = max((out - 1) * stride + k - size, 0)
    return out, total // 2, total - total // 2


def windows(x, k, stride, fill):
    """[n, out, out, c, k, k] views of the 'SAME'-padded NHWC input."""
    out, lo, hi = same(x.shape[1], k, stride)
    padded = np.pad(x, ((0, 0), (lo, hi), (lo, hi), (0, 0)), constant_values=fill)
    return sliding_window_view(padded, (k, k), axis=(1, 2))[:, ::stride, ::stride][:, :out, :out]


def conv(x, kernel, stride):
    return np.einsum("nhwcij,ijco->nhwo", windows(x, kernel.shape[0], stride, 0.0), kernel, optimize=True)


class Reference:
    def __init__(self, w, train, width_divisor, blocks):
        self.w = {k: v.astype(np.float64) for k, v in w.items()}
        self.train = train
        self.d = width_divisor
        self.blocks = blocks
        self.stats = {}   # updated moving statistics (train)
        self.batch = {}   # the batch statistics themselves, by the same names (train)

    def bn(self, x, name):
        w = self.w
        if self.train:
            mean = x.mean(axis=(0, 1, 2))
            var = x.var(axis=(0, 1, 2))
            self.batch[f"{name}_moving_mean"], self.batch[f"{name}_moving_variance"] = mean, var
            self.stats[f"{name}_moving_mean"] = MOMENTUM * w[f"{name}_moving_mean"] + (1 - MOMENTUM) * mean
            self.stats[f"{name}_moving_variance"] = MOMENTUM * w[f"{name}_moving_variance"] + (1 - MOMENTUM) * var
        else:
            mean, var = w[f"{name}_moving_mean"], w[f"{name}_moving_variance"]
        return w[f"{name}_gamma"] * (x - mean) / np.sqrt(var + EPS) + w[f"{name}_beta"]

    def conv_bn(self, x, name, stride, relu):
        y = self.bn(conv(x, self.w[f"{name}_conv_kernel"], stride), f"{name}_bn")
        return np.maximum(y, 0) if relu else y

    def logits(self, images):
        x = self.conv_bn(images, "conv1", 2, True)
        x = windows(x, 3, 2, -np.inf).max(axis=(4, 5))
        for stage, count in enumerate(self.blocks):
            for b in range(count):
                name = f"conv{stage + 2}_block{b + 1}"
                stride = 2 if stage > 0 and b == 0 else 1
                shortcut = self.conv_bn(x, f"{name}_0", stride, False) if b == 0 else x
                y = self.conv_bn(x, f"{name}_1", 1, True)
                y = self.conv_bn(y, f"{name}_2", stride, True)
                y = self.conv_bn(y, f"{name}_3", 1, False)
                x = np.maximum(y + shortcut, 0)
        features = x.mean(axis=(1, 2))
        return features @ self.w["predictions_kernel"] + self.w["predictions_bias"]


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def cross_entropy(z, labels):
    log_softmax = z - z.max(axis=1, keepdims=True)
    log_softmax = log_softmax - np.log(np.exp(log_softmax).sum(axis=1, keepdims=True))
    return float(np.mean(-(labels * log_softmax).sum(axis=1)))


# --- running the modules --------------------------------------------------------


def generate(options):
    return subprocess.run([sys.executable, GENERATOR] + options, check=True, capture_output=True,
                          text=True).stdout


def inputs_for(options, outdir, seed, calibrate=False):
    """make_data.py's arrays, with the batch norm parameters and the dense bias redrawn.

    calibrate (inference): the moving statistics become those of the images
    themselves, as a pass with batch statistics gives them, then perturbed
    (mean + 0.2 sd, variance x 0.7-1.4) so that batch statistics would give
    other results. Otherwise a deep residual stack normalised by arbitrary
    statistics grows until the softmax saturates (and f16 overflows)."""
    printed = subprocess.run([sys.executable, MAKE_DATA, outdir, "--seed", str(seed)] + options,
                             check=True, capture_output=True, text=True).stdout
    specs = shlex.split(printed)[1::2]
    paths = {spec.partition("=")[0]: spec.partition("=")[2] for spec in specs}
    rng = np.random.default_rng(seed + 100)
    redraw = {"_bn_gamma": lambda s: rng.uniform(0.5, 1.5, s), "_bn_beta": lambda s: rng.normal(0, 0.2, s),
              "_bn_moving_mean": lambda s: rng.normal(0, 0.2, s),
              "_bn_moving_variance": lambda s: rng.uniform(0.5, 2.0, s),
              "predictions_bias": lambda s: rng.normal(0, 0.1, s)}
    arrays = {}
    for name, path in paths.items():
        a = np.load(path)
        for suffix, draw in redraw.items():
            if name.endswith(suffix):
                a = draw(a.shape).astype(a.dtype)
        arrays[name] = a
    if calibrate:
        d, blocks = width_divisor_and_blocks(options)
        ref = Reference(arrays, True, d, blocks)
        ref.logits(arrays["images"].astype(np.float64))
        for name, value in ref.batch.items():
            if name.endswith("_moving_mean"):
                sd = np.sqrt(ref.batch[name.replace("_mean", "_variance")])
                value = value + 0.2 * sd * rng.normal(size=value.shape)
            else:
                value = value * rng.uniform(0.7, 1.4, value.shape)
            arrays[name] = value.astype(arrays[name].dtype)
    for name, path in paths.items():
        np.save(path, arrays[name])
    return specs, arrays


def evaluate(text, specs, what, float64=False):
    """Runs the module on the files of specs with the oracle. float64: every
    float type of the module and of the files made f64 (the files are rewritten)."""
    if float64:
        text = re.sub(r"\b(f16|bf16|f32)\[", "f64[", text)
        for spec in specs:
            file = spec.partition("=")[2]
            np.save(file, np.load(file).astype(np.float64))
    module = parse_module(text, what)
    return module, run_module(module, load_inputs(module, specs))


def width_divisor_and_blocks(options):
    def value(flag, default):
        return options[options.index(flag) + 1] if flag in options else default
    return int(value("--width-divisor", "1")), tuple(int(v) for v in value("--blocks", "3,4,6,3").split(","))


class Checker:
    def __init__(self):
        self.failures = 0

    def close(self, what, got, want, rtol, atol):
        got = np.asarray(got, np.float64)
        want = np.asarray(want, np.float64)
        if got.shape != want.shape:
            print(f"FAIL {what}: shape {got.shape}, the reference {want.shape}")
            self.failures += 1
            return
        excess = np.abs(got - want) - (atol + rtol * np.abs(want))
        worst = np.unravel_index(np.argmax(excess), excess.shape) if excess.size else ()
        err = float(np.max(np.abs(got - want))) if got.size else 0.0
        rel = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-300))) if got.size else 0.0
        ok = bool(np.all(excess <= 0))
        print(f"{'ok  ' if ok else 'FAIL'} {what}: max |difference| {err:.3g}, relative {rel:.3g} "
              f"(rtol {rtol:g}, atol {atol:g})"
              + ("" if ok else f"; worst at {tuple(int(i) for i in worst)}: {got[worst]:.6g} vs {want[worst]:.6g}"))
        if not ok:
            self.failures += 1

    def true(self, what, ok, detail):
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {detail}")
        if not ok:
            self.failures += 1


def check_inference(chk, options, tmp, seed, rtol, atol, float64=False):
    """The probabilities, within rtol of the reference's (atol for the smallest)."""
    specs, arrays = inputs_for(options, tmp, seed, calibrate=True)
    _, outs = evaluate(generate(options), specs, "inference", float64)
    d, blocks = width_divisor_and_blocks(options)
    z = Reference(arrays, False, d, blocks).logits(arrays["images"].astype(np.float64))
    p = softmax(z)
    chk.true("the reference is not saturated", p.max() < 0.999 and p.min() > 1e-12,
             f"probabilities in [{p.min():.3g}, {p.max():.3g}]")
    chk.close(f"probabilities of gen_resnet50.py {' '.join(options)}{' in float64' if float64 else ''}",
              outs[0], p, rtol, atol)


def check_train(chk, options, tmp, seed, tol, float64=False):
    """The loss within tol["loss"], the moving statistics within tol["stats"] (rtol, atol)."""
    specs, arrays = inputs_for(options, tmp, seed)
    module, outs = evaluate(generate(options), specs, "train step", float64)
    d, blocks = width_divisor_and_blocks(options)
    ref = Reference(arrays, True, d, blocks)
    z = ref.logits(arrays["images"].astype(np.float64))
    loss = cross_entropy(z, arrays["labels"].astype(np.float64))
    what = f"gen_resnet50.py {' '.join(options)}{' in float64' if float64 else ''}"
    chk.close(f"loss of {what}", outs[-1], loss, tol["loss"], 0)
    names = [module.entry.params[i].name for i in sorted(module.entry.params)]
    got = {names[p]: outs[out[0]] for out, p, _ in module.aliases}
    stat_names = sorted(ref.stats)
    chk.true(f"moving statistics of {what}", set(stat_names) <= set(got),
             f"{len(stat_names)} of the reference among the {len(got)} aliased outputs")
    for name in stat_names:
        if name in got:
            chk.close(f"  {name}", got[name], ref.stats[name], *tol["stats"])
    return module, outs, names, arrays


def small(dtype):
    chk = Checker()
    shape = ["--width-divisor", "16", "--blocks", "1,2,1,1"]
    train = ["--mode", "train", "--image-size", "48", "--batch", "3"] + shape
    # The oracle rounds every op's result to the module's type. Measured against the float64
    # reference: f32 probabilities and loss within 2e-6 relative, moving statistics within
    # 1e-4 (5e-8 absolute near zero); f16 (11-bit significands) probabilities within 2.2 %,
    # statistics within 0.2 % (5e-4 absolute near zero). The tolerances leave a margin of 2-10.
    if dtype == "f16":
        probs, tol = (5e-2, 1e-6), {"loss": 1e-3, "stats": (1e-2, 1e-3)}
    else:
        probs, tol = (1e-5, 1e-9), {"loss": 1e-5, "stats": (2e-4, 1e-7)}
    exact = (1e-9, 1e-12), {"loss": 1e-9, "stats": (1e-9, 1e-12)}
    with tempfile.TemporaryDirectory() as tmp:
        for size, batch in (("40", "2"), ("48", "3")):
            options = ["--dtype", dtype, "--image-size", size, "--batch", batch] + shape
            check_inference(chk, options, tmp, 1, *probs)
        module, outs, names, arrays = check_train(chk, ["--dtype", dtype] + train, tmp, 2, tol)
        if dtype == "f16":
            # The same graphs in float64 agree with the reference to the last digits: what
            # f16 moves above is rounding, not the graph.
            check_inference(chk, ["--dtype", dtype, "--image-size", "40", "--batch", "2"] + shape, tmp, 1,
                            *exact[0], float64=True)
            check_train(chk, ["--dtype", dtype] + train, tmp, 2, exact[1], float64=True)
            compare_f16_f32_step(chk, train, tmp, module, outs, names, arrays)
    return chk.failures


def compare_f16_f32_step(chk, train, tmp, module, outs, names, arrays):
    """The f16 training step against the f32 one on the same (f16-valued) inputs."""
    specs, _ = inputs_for(["--dtype", "f16"] + train, tmp, 2)
    for spec in specs:
        path = spec.partition("=")[2]
        np.save(path, np.load(path).astype(np.float32))
    _, outs32 = evaluate(generate(["--dtype", "f32"] + train), specs, "f32 train step")
    chk.close("f16 loss vs f32 loss", outs[-1], outs32[-1], 1e-3, 0)
    # The update w - w' of every weight, as one vector. Its elements differ by 5 % and more
    # between f16 and f32 (rounding of the weights to 11 bits, relu and max-pool choices
    # flipped by rounding, sums that cancel), so compare the direction and the length: a
    # missing loss-scale division or a wrong convert is off by orders.
    # (gradient_check.py --float64 checks the f16 graph's gradient exactly.)
    weights = [(p, out[0]) for out, p, _ in module.aliases if "moving" not in names[p]]
    step16 = np.concatenate([(arrays[names[p]].astype(np.float64) - outs[k].astype(np.float64)).ravel()
                             for p, k in weights])
    step32 = np.concatenate([(arrays[names[p]].astype(np.float64) - outs32[k].astype(np.float64)).ravel()
                             for p, k in weights])
    cosine = float(step16 @ step32 / np.linalg.norm(step16) / np.linalg.norm(step32))
    ratio = float(np.linalg.norm(step16) / np.linalg.norm(step32))
    chk.true("f16 SGD step vs f32 SGD step", cosine > 0.95 and abs(ratio - 1) < 0.1,
             f"cosine {cosine:.5f} (> 0.95), length ratio {ratio:.4f} (1 +- 0.1)")


def full(path, float64):
    chk = Checker()
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"resnet50_infer_b(\d+)_(f32|f16)\.hlo$", path)
    if not m:
        print(f"{path}: expected a committed inference module, resnet50_infer_b<N>_<dtype>.hlo")
        return 1
    batch, dtype = m.groups()
    with tempfile.TemporaryDirectory() as tmp:
        specs, arrays = inputs_for(["--batch", batch, "--dtype", dtype], tmp, 1, calibrate=True)
        _, outs = evaluate(text, specs, path, float64)
        z = Reference(arrays, False, 1, (3, 4, 6, 3)).logits(arrays["images"].astype(np.float64))
        p = softmax(z)
        chk.true("the reference is not saturated", p.max() < 0.999 and p.min() > 1e-12,
                 f"probabilities in [{p.min():.3g}, {p.max():.3g}]")
        # f32 through 53 layers: 2e-5 relative measured. In float64 only the order of the sums differs.
        rtol = 1e-9 if float64 else 1e-4
        chk.close(f"probabilities of {os.path.basename(path)}{' in float64' if float64 else ''}",
                  outs[0], p, rtol, 1e-12)
    return chk.failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("small")
    s.add_argument("--dtype", choices=["f32", "f16"], default="f32")
    f = sub.add_parser("full")
    f.add_argument("module")
    f.add_argument("--float64", action="store_true", help="evaluate the module with every float type made f64")
    args = parser.parse_args()
    failures = small(args.dtype) if args.command == "small" else full(args.module, args.float64)
    if failures:
        print(f"FAIL: {failures} check(s) disagree with the NumPy reference")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
