#!/usr/bin/python3
"""Writes ResNet-50 (v1.5) as HLO text: inference, or one SGD training step.

The network (He et al. 2015, "v1.5" as in the Flax ImageNet example, with
Keras applications' layer names), on NHWC images:

    conv1: Conv 7x7/2, 64 -> BN -> ReLU -> MaxPool 3x3/2
    conv2..conv5: [3, 4, 6, 3] bottleneck blocks of widths 64, 128, 256, 512:
        1x1 conv (width) -> BN -> ReLU -> 3x3 conv (width, stride) -> BN -> ReLU
        -> 1x1 conv (4 x width) -> BN, plus the shortcut, -> ReLU
        stride 2 on the 3x3 conv of the first block of conv3..conv5; the first
        block of every stage has a projection shortcut (1x1 conv, stride, + BN)
    global average pool -> Dense(1000) -> softmax

Convolutions have no bias (BN follows each one), padding 'SAME' everywhere
(stride-2 layers pad asymmetrically: 7x7/2 on 224 pads 2_3, 3x3/2 on 56 pads
0_1; the Flax example and Keras applications pad the stem 3_3 and the max
pool 1_1 explicitly, for the same shapes), BN epsilon 1e-5 and momentum 0.9
(Flax's example). 25,557,032 trainable parameters plus 53,120 moving
statistics at full size.

The ops are those a 2022 JAX dump of this Flax/Keras-on-JAX model shows
(`../shared/corpus/hlo` has such dumps): `convolution` with
dim_labels=b01f_01io->b01f and HWIO kernels; BN as subtract/multiply/add with
per-channel vectors broadcast along dimension 3 (`rsqrt(var + eps) * gamma`
computed on the vectors, as Flax does, not `batch-norm-*` ops); ReLU as
`maximum` with a broadcast zero; max pool as `reduce-window` (-inf init,
`maximum`); the average pool as `reduce` + `divide`; Dense as `dot` + bias;
softmax with its max shift. Reducers are one `region_N` computation per use.

--mode train writes one SGD step (learning rate 0.1, batch statistics in BN,
moving statistics updated with momentum 0.9; cross-entropy of the softmax on
one-hot labels, averaged over the batch) with the backward pass as JAX's
transposition writes it: input gradients as `convolution` of the output
gradient with the `reverse`d kernel (b01f_01oi->b01f; stride s becomes
lhs_dilate=s), weight gradients as `convolution` of the activations with the
output gradient (f01b_i01o->01bf, window = output size; stride s becomes
rhs_dilate=s, negative padding where the stride skips input), BN backward
through the batch statistics, ReLU backward as `select` on `compare` GT,
max-pool backward as `select-and-scatter` (GE, add). The updated parameters
and moving statistics are returned in parameter order, aliased to their
parameters (input_output_alias), then the loss.

--dtype f16: parameters, images and activations in f16 (convolutions and
dots f16 -> f16); what JAX computes in f32 is converted: BN batch statistics
and normalisation in training (Flax converts x to f32 for them), the average
pool's sum (jnp.mean upcasts f16), the softmax and the loss (Keras' advice:
the last softmax in f32). Labels, probabilities and the loss are f32. The
f16 training step scales the loss gradient by a static loss scale of 1024
and divides the gradients by it before the update, as mixed-precision
training does so that small gradients do not flush to zero in f16 (Keras'
LossScaleOptimizer adjusts its scale dynamically; a static one keeps the step
a function of its inputs).

Usage: gen_resnet50.py [-o FILE] [--mode inference|train] [--batch N]
                       [--dtype f32|f16] [--image-size 224] [--width-divisor 1]
                       [--blocks 3,4,6,3] [--classes 1000]
The last four make small variants of the same network for the tests
(tests/samples/resnet50_*.py); make_data.py takes the same options.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from hlo_text import Metadata, Module, Shape, window  # noqa: E402

STAGE_WIDTHS = (64, 128, 256, 512)
EXPANSION = 4
STEM_WIDTH = 64
EPSILON = "1e-05"
MOMENTUM = 0.9
LEARNING_RATE = "0.1"
LOSS_SCALE = "1024"  # f16 training only


class Config:
    def __init__(self, mode="inference", batch=1, dtype="f32", image_size=224, width_divisor=1,
                 blocks=(3, 4, 6, 3), classes=1000):
        self.mode = mode
        self.batch = batch
        self.dtype = dtype
        self.image_size = image_size
        self.width_divisor = width_divisor
        self.blocks = tuple(blocks)
        self.classes = classes

    def is_full_size(self):
        return self.image_size == 224 and self.width_divisor == 1 and self.blocks == (3, 4, 6, 3) \
            and self.classes == 1000


def same_padding(size, kernel, stride):
    """Output size and (low, high) padding of 'SAME' (TF, Keras, Flax, lax.padtype_to_pads)."""
    out = -(-size // stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return out, (total // 2, total - total // 2)


def architecture(cfg):
    """The stem's width, the bottleneck blocks in order, the features and the final spatial size."""
    d = cfg.width_divisor
    for w in (STEM_WIDTH,) + STAGE_WIDTHS:
        if w % d:
            raise ValueError(f"--width-divisor {d} does not divide the width {w}")
    stem = STEM_WIDTH // d
    size, _ = same_padding(cfg.image_size, 7, 2)
    size, _ = same_padding(size, 3, 2)
    blocks = []
    cin = stem
    for stage, (width, count) in enumerate(zip(STAGE_WIDTHS, cfg.blocks)):
        w = width // d
        for b in range(count):
            stride = 2 if stage > 0 and b == 0 else 1
            blocks.append({"name": f"conv{stage + 2}_block{b + 1}", "cin": cin, "width": w,
                           "cout": EXPANSION * w, "stride": stride, "projection": b == 0})
            size, _ = same_padding(size, 3, stride)
            cin = EXPANSION * w
    return stem, blocks, cin, size


def parameters(cfg):
    """The entry parameters in order: (name, dims, role). Roles: kernel, gamma,
    beta, moving_mean, moving_variance, dense_kernel, dense_bias, images, labels."""
    stem, blocks, features, _ = architecture(cfg)
    out = []

    def conv_bn(prefix, k, cin, cout):
        out.append((f"{prefix}_conv_kernel", (k, k, cin, cout), "kernel"))
        for role in ("gamma", "beta", "moving_mean", "moving_variance"):
            out.append((f"{prefix}_bn_{role}", (cout,), role))

    conv_bn("conv1", 7, 3, stem)
    for blk in blocks:
        name, cin, w = blk["name"], blk["cin"], blk["width"]
        if blk["projection"]:
            conv_bn(f"{name}_0", 1, cin, EXPANSION * w)
        conv_bn(f"{name}_1", 1, cin, w)
        conv_bn(f"{name}_2", 3, w, w)
        conv_bn(f"{name}_3", 1, w, EXPANSION * w)
    out.append(("predictions_kernel", (features, cfg.classes), "dense_kernel"))
    out.append(("predictions_bias", (cfg.classes,), "dense_bias"))
    out.append(("images", (cfg.batch, cfg.image_size, cfg.image_size, 3), "images"))
    if cfg.mode == "train":
        out.append(("labels", (cfg.batch, cfg.classes), "labels"))
    return out


def parameter_dtype(cfg, role):
    return "f32" if role == "labels" else cfg.dtype


class Builder:
    """The entry computation, with JAX-style metadata on every instruction:
    op_type the JAX primitive, op_name the jit and layer scopes and the primitive."""

    def __init__(self, module, comp, cfg, fn):
        self.m = module
        self.c = comp
        self.cfg = cfg
        self.dt = cfg.dtype
        self.fn = fn
        self.scope = ""
        self.regions = 0

    def emit(self, prim, method, *args):
        """Calls the computation's `method` with metadata naming `prim`. The
        arguments are evaluated before the metadata is set, so nested calls
        cannot leave theirs on this instruction."""
        path = "/".join(p for p in (self.fn, self.scope, prim) if p)
        self.c.at(prim, path, None)
        return getattr(self.c, method)(*args)

    def shape(self, dims, dtype=None):
        return Shape(dtype or self.dt, dims)

    def region(self, opcode, dtype):
        comp = self.m.scalar_binary(f"region_{self.regions}", opcode, dtype)
        self.regions += 1
        return comp

    def compare_region(self, direction, dtype):
        comp = self.m.scalar_compare(f"region_{self.regions}", direction, dtype)
        self.regions += 1
        return comp

    # Elementwise and broadcasts, each with its primitive's metadata.
    def binary(self, prim, opcode, a, b):
        return self.emit(prim, "binary", opcode, a, b)

    def add(self, a, b):
        return self.binary("add", "add", a, b)

    def sub(self, a, b):
        return self.binary("sub", "subtract", a, b)

    def mul(self, a, b):
        return self.binary("mul", "multiply", a, b)

    def div(self, a, b):
        return self.binary("div", "divide", a, b)

    def splat(self, literal, dims, dtype=None):
        return self.emit("broadcast_in_dim", "splat", dtype or self.dt, literal, dims)

    def bcast(self, a, dims, along):
        return self.emit("broadcast_in_dim", "broadcast", a, Shape(a.shape.dtype, dims), along)

    def convert(self, a, dtype):
        if a.shape.dtype == dtype:
            return a
        return self.emit("convert_element_type", "convert", a, dtype)

    def reduce_sum(self, a, dims):
        dtype = a.shape.dtype
        init = self.emit("reduce_sum", "scalar", dtype, "0")
        return self.emit("reduce_sum", "reduce", a, init, dims, self.region("add", dtype))

    def relu_grad(self, pre, grad):
        zeros = self.splat("0", pre.shape.dims, pre.shape.dtype)
        positive = self.emit("gt", "compare", pre, zeros, "GT")
        zeros = self.splat("0", pre.shape.dims, pre.shape.dtype)
        return self.emit("select_n", "select", positive, grad, zeros)


def square(shape_dims):
    n, h, w, c = shape_dims
    if h != w:
        raise ValueError("square images only")
    return n, h, c


class ResNet50:
    def __init__(self, cfg):
        self.cfg = cfg
        self.train = cfg.mode == "train"
        fn = "jit(train_step)/jit(main)" if self.train else "jit(predict)/jit(main)"
        self.m = Module("jit_train_step" if self.train else "jit_predict", Metadata(None))
        self.entry = self.m.computation("main", entry=True)
        self.b = Builder(self.m, self.entry, cfg, fn)
        self.params = {}
        for name, dims, role in parameters(cfg):
            self.params[name] = self.entry.parameter(Shape(parameter_dtype(cfg, role), dims), name)
        self.grads = {}       # parameter name -> gradient (train)
        self.new_stats = {}   # moving statistic name -> updated value (train)
        self.forward_scope = "jvp(resnet50)" if self.train else "resnet50"

    # --- forward ---------------------------------------------------------------

    def scope(self, layer, backward=False):
        model = "transpose(jvp(resnet50))" if backward else self.forward_scope
        self.b.scope = f"{model}/{layer}" if layer else model

    def conv(self, x, prefix, k, stride):
        b = self.b
        self.scope(f"{prefix}_conv")
        kernel = self.params[f"{prefix}_conv_kernel"]
        n, h, _ = square(x.shape.dims)
        cout = kernel.shape.dims[3]
        ho, pad = same_padding(h, k, stride)
        y = b.emit("conv_general_dilated", "convolution", x, kernel, b.shape((n, ho, ho, cout)),
                   window((k, k), (stride, stride), (pad, pad)), "b01f_01io->b01f")
        return y, {"x": x, "kernel": kernel, "k": k, "stride": stride, "pad": pad, "h": h, "ho": ho,
                   "prefix": prefix}

    def batch_norm(self, x, prefix):
        b = self.b
        self.scope(f"{prefix}_bn")
        p = {r: self.params[f"{prefix}_bn_{r}"] for r in ("gamma", "beta", "moving_mean", "moving_variance")}
        dims = x.shape.dims
        c = dims[3]
        if not self.train:
            # Flax's _normalize with the moving statistics: (x - mean) * (rsqrt(var + eps) * gamma) + beta.
            centred = b.sub(x, b.bcast(p["moving_mean"], dims, [3]))
            inv = b.emit("rsqrt", "unary", "rsqrt", b.add(p["moving_variance"], b.splat(EPSILON, (c,))))
            scale = b.mul(inv, p["gamma"])
            y = b.mul(centred, b.bcast(scale, dims, [3]))
            return b.add(y, b.bcast(p["beta"], dims, [3])), None
        # Batch statistics in f32 (Flax's _compute_stats converts x), var = E[x^2] - E[x]^2.
        n, h, _ = square(dims)
        count = str(n * h * h)
        x32 = b.convert(x, "f32")
        mean = b.div(b.reduce_sum(x32, [0, 1, 2]), b.splat(count, (c,), "f32"))
        mean2 = b.div(b.reduce_sum(b.mul(x32, x32), [0, 1, 2]), b.splat(count, (c,), "f32"))
        var_raw = b.sub(mean2, b.mul(mean, mean))
        var = b.emit("max", "binary", "maximum", b.splat("0", (c,), "f32"), var_raw)
        centred = b.sub(x32, b.bcast(mean, dims, [3]))
        var_eps = b.add(var, b.splat(EPSILON, (c,), "f32"))
        inv = b.emit("rsqrt", "unary", "rsqrt", var_eps)
        gamma = b.convert(p["gamma"], "f32")
        scale = b.mul(inv, gamma)
        y = b.mul(centred, b.bcast(scale, dims, [3]))
        y = b.convert(b.add(y, b.bcast(b.convert(p["beta"], "f32"), dims, [3])), self.cfg.dtype)
        # Moving statistics: momentum * old + (1 - momentum) * batch statistic.
        for role, stat in (("moving_mean", mean), ("moving_variance", var)):
            old = p[role]
            kept = b.mul(b.splat(repr(MOMENTUM), (c,)), old)
            added = b.mul(b.splat(repr(round(1 - MOMENTUM, 6)), (c,)), b.convert(stat, self.cfg.dtype))
            self.new_stats[f"{prefix}_bn_{role}"] = b.add(kept, added)
        return y, {"x32": x32, "mean": mean, "var_raw": var_raw, "var_eps": var_eps, "inv": inv,
                   "gamma": gamma, "scale": scale, "centred": centred, "count": count, "prefix": prefix,
                   "dtype": x.shape.dtype}

    def relu(self, x, layer):
        self.scope(layer)
        zeros = self.b.splat("0", x.shape.dims, x.shape.dtype)
        return self.b.emit("max", "binary", "maximum", x, zeros)

    def conv_bn(self, x, prefix, k, stride, relu):
        y, conv_rec = self.conv(x, prefix, k, stride)
        y, bn_rec = self.batch_norm(y, prefix)
        rec = {"conv": conv_rec, "bn": bn_rec, "pre": y}
        if relu:
            y = self.relu(y, f"{prefix}_relu")
        return y, rec

    def block(self, x, blk):
        name = blk["name"]
        recs = {}
        if blk["projection"]:
            shortcut, recs["0"] = self.conv_bn(x, f"{name}_0", 1, blk["stride"], relu=False)
        else:
            shortcut = x
        y, recs["1"] = self.conv_bn(x, f"{name}_1", 1, 1, relu=True)
        y, recs["2"] = self.conv_bn(y, f"{name}_2", 3, blk["stride"], relu=True)
        y, recs["3"] = self.conv_bn(y, f"{name}_3", 1, 1, relu=False)
        self.scope(f"{name}_add")
        total = self.b.add(y, shortcut)
        recs["sum"] = total
        return self.relu(total, f"{name}_out"), recs

    def forward(self):
        b = self.b
        cfg = self.cfg
        stem, blocks, features, final = architecture(cfg)
        x = self.params["images"]
        y, stem_rec = self.conv_bn(x, "conv1", 7, 2, relu=True)
        # MaxPool 3x3/2, 'SAME': padding reads the -inf init value.
        self.scope("pool1_pool")
        n, h, c = square(y.shape.dims)
        ho, pad = same_padding(h, 3, 2)
        init = b.emit("reduce_window_max", "scalar", cfg.dtype, "-inf")
        pool_window = window((1, 3, 3, 1), (1, 2, 2, 1), ((0, 0), pad, pad, (0, 0)))
        pooled = b.emit("reduce_window_max", "reduce_window", y, init, b.shape((n, ho, ho, c)), pool_window,
                        b.region("maximum", cfg.dtype))
        pool_rec = {"x": y, "window": pool_window}
        x = pooled
        block_recs = []
        for blk in blocks:
            x, rec = self.block(x, blk)
            block_recs.append((blk, rec))
        # Global average pool (jnp.mean: the sum in f32 for f16 inputs), Dense.
        self.scope("avg_pool")
        x32 = b.convert(x, "f32")
        pooled_sum = b.reduce_sum(x32, [1, 2])
        feat = b.convert(b.div(pooled_sum, b.splat(str(final * final), (n, features), "f32")), cfg.dtype)
        self.scope("predictions")
        logits = b.emit("dot_general", "dot", feat, self.params["predictions_kernel"], b.shape((n, cfg.classes)),
                        1, 0)
        logits = b.add(logits, b.bcast(self.params["predictions_bias"], (n, cfg.classes), [1]))
        logits = b.convert(logits, "f32")
        # Softmax with the max shift (jax.nn.softmax).
        self.scope("predictions_softmax")
        cls = (n, cfg.classes)
        neg_inf = b.emit("reduce_max", "scalar", "f32", "-inf")
        top = b.emit("reduce_max", "reduce", logits, neg_inf, [1], b.region("maximum", "f32"))
        shifted = b.sub(logits, b.bcast(top, cls, [0]))
        exps = b.emit("exp", "unary", "exponential", shifted)
        sums = b.reduce_sum(exps, [1])
        probs = b.div(exps, b.bcast(sums, cls, [0]))
        tape = {"stem": stem_rec, "pool": pool_rec, "blocks": block_recs, "feat": feat, "final": final,
                "features": features}
        return probs, shifted, sums, tape

    # --- backward --------------------------------------------------------------

    def conv_backward(self, rec, dy, need_input_grad):
        """JAX's transposition of conv_general_dilated: the weight gradient and,
        unless the input is the images, the input gradient."""
        b = self.b
        self.scope(f"{rec['prefix']}_conv", backward=True)
        k, s, (lo, _), h, ho = rec["k"], rec["stride"], rec["pad"], rec["h"], rec["ho"]
        # Weight gradient: window = the output gradient, dilated by the stride;
        # high padding (ho - 1) s + k - h - lo (negative when the stride skips input).
        w_pad = (lo, (ho - 1) * s + k - h - lo)
        dw = b.emit("conv_general_dilated", "convolution", rec["x"], dy, rec["kernel"].shape,
                    window((ho, ho), None, (w_pad, w_pad), None, (s, s)), "f01b_i01o->01bf")
        self.grads[f"{rec['prefix']}_conv_kernel"] = dw
        if not need_input_grad:
            return None
        # Input gradient: the output gradient dilated by the stride, convolved with the reversed kernel.
        x_pad = (k - lo - 1, h + lo - (ho - 1) * s - 1)
        kernel = rec["kernel"]
        reversed_kernel = b.emit("rev", "op", "reverse", kernel.shape, [kernel], ["dimensions={0,1}"])
        return b.emit("conv_general_dilated", "convolution", dy, reversed_kernel, rec["x"].shape,
                      window((k, k), None, (x_pad, x_pad), (s, s)), "b01f_01oi->b01f")

    def batch_norm_backward(self, rec, dy):
        """Backward through y = (x - mean) * rsqrt(var + eps) * gamma + beta with
        mean = E[x], var = max(0, E[x^2] - mean^2), all in f32."""
        b = self.b
        prefix = rec["prefix"]
        self.scope(f"{prefix}_bn", backward=True)
        dims = dy.shape.dims
        c = dims[3]
        dy32 = b.convert(dy, "f32")
        dtype = rec["dtype"]
        self.grads[f"{prefix}_bn_beta"] = b.convert(b.reduce_sum(dy32, [0, 1, 2]), dtype)
        dscale = b.reduce_sum(b.mul(dy32, rec["centred"]), [0, 1, 2])
        self.grads[f"{prefix}_bn_gamma"] = b.convert(b.mul(dscale, rec["inv"]), dtype)
        dcentred = b.mul(dy32, b.bcast(rec["scale"], dims, [3]))
        dinv = b.mul(dscale, rec["gamma"])
        # rsqrt'(v) = -0.5 * rsqrt(v) / v
        dvar = b.mul(dinv, b.mul(b.splat("-0.5", (c,), "f32"), b.div(rec["inv"], rec["var_eps"])))
        positive = b.emit("gt", "compare", rec["var_raw"], b.splat("0", (c,), "f32"), "GT")
        dvar = b.emit("select_n", "select", positive, dvar, b.splat("0", (c,), "f32"))
        # var_raw = mean2 - mean^2; centred = x - mean
        dmean = b.sub(b.emit("neg", "unary", "negate", b.reduce_sum(dcentred, [0, 1, 2])),
                      b.mul(b.mul(b.splat("2", (c,), "f32"), rec["mean"]), dvar))
        count = b.splat(rec["count"], (c,), "f32")
        dsum = b.div(dmean, count)
        dsum2 = b.mul(b.splat("2", (c,), "f32"), b.div(dvar, count))
        dx = b.add(dcentred, b.bcast(dsum, dims, [3]))
        dx = b.add(dx, b.mul(rec["x32"], b.bcast(dsum2, dims, [3])))
        return b.convert(dx, dtype)

    def conv_bn_backward(self, rec, dy, relu, need_input_grad=True):
        b = self.b
        if relu:
            self.scope(f"{rec['conv']['prefix']}_relu", backward=True)
            dy = b.relu_grad(rec["pre"], dy)
        dy = self.batch_norm_backward(rec["bn"], dy)
        return self.conv_backward(rec["conv"], dy, need_input_grad)

    def block_backward(self, blk, recs, dout):
        b = self.b
        name = blk["name"]
        self.scope(f"{name}_out", backward=True)
        dsum = b.relu_grad(recs["sum"], dout)
        d = self.conv_bn_backward(recs["3"], dsum, relu=False)
        d = self.conv_bn_backward(recs["2"], d, relu=True)
        d = self.conv_bn_backward(recs["1"], d, relu=True)
        dshortcut = self.conv_bn_backward(recs["0"], dsum, relu=False) if blk["projection"] else dsum
        self.scope(f"{name}_add", backward=True)
        return b.add(d, dshortcut)

    def train_step(self, probs, shifted, sums, tape):
        b = self.b
        cfg = self.cfg
        n = cfg.batch
        cls = (n, cfg.classes)
        labels = self.params["labels"]
        # optax.softmax_cross_entropy: -sum(labels * log_softmax(logits)), mean over the batch.
        b.scope = "jvp(softmax_cross_entropy)"
        log_softmax = b.sub(shifted, b.bcast(b.emit("log", "unary", "log", sums), cls, [0]))
        per_example = b.emit("neg", "unary", "negate", b.reduce_sum(b.mul(labels, log_softmax), [1]))
        loss = b.div(b.reduce_sum(per_example, [0]), b.emit("div", "scalar", "f32", str(n)))
        # d loss / d logits = (softmax - labels) / batch for one-hot labels.
        b.scope = "transpose(jvp(softmax_cross_entropy))"
        dlogits = b.div(b.sub(probs, labels), b.splat(str(n), cls, "f32"))
        self.scope("predictions", backward=True)
        if cfg.dtype == "f16":
            dlogits = b.mul(dlogits, b.splat(LOSS_SCALE, cls, "f32"))
        dlogits = b.convert(dlogits, cfg.dtype)
        kernel = self.params["predictions_kernel"]
        self.grads["predictions_bias"] = b.reduce_sum(dlogits, [0])
        self.grads["predictions_kernel"] = b.emit("dot_general", "dot", tape["feat"], dlogits, kernel.shape,
                                                  0, 0)
        dfeat = b.emit("dot_general", "dot", dlogits, kernel, tape["feat"].shape, 1, 1)
        self.scope("avg_pool", backward=True)
        final, features = tape["final"], tape["features"]
        dmean = b.div(b.convert(dfeat, "f32"), b.splat(str(final * final), (n, features), "f32"))
        d = b.convert(b.bcast(dmean, (n, final, final, features), [0, 3]), cfg.dtype)
        for blk, recs in reversed(tape["blocks"]):
            d = self.block_backward(blk, recs, d)
        self.scope("pool1_pool", backward=True)
        pool = tape["pool"]
        zero = b.emit("select_and_scatter_add", "scalar", cfg.dtype, "0")
        d = b.emit("select_and_scatter_add", "select_and_scatter", pool["x"], d, zero, pool["window"],
                   b.compare_region("GE", cfg.dtype), b.region("add", cfg.dtype))
        self.conv_bn_backward(tape["stem"], d, relu=True, need_input_grad=False)
        # SGD: w - lr * g; moving statistics from the forward pass.
        updated = []
        for name, dims, role in parameters(cfg):
            if role in ("images", "labels"):
                continue
            if role in ("moving_mean", "moving_variance"):
                updated.append(self.new_stats[name])
                continue
            b.scope = f"sgd/{name}"
            w = self.params[name]
            g = self.grads[name]
            if cfg.dtype == "f16":
                g = b.div(g, b.splat(LOSS_SCALE, dims))
            updated.append(b.sub(w, b.mul(b.splat(LEARNING_RATE, dims), g)))
        return updated, loss

    def build(self):
        probs, shifted, sums, tape = self.forward()
        if not self.train:
            self.entry.no_metadata()
            self.entry.set_root(probs)
            return self.m
        updated, loss = self.train_step(probs, shifted, sums, tape)
        self.entry.no_metadata()
        self.entry.set_root(self.entry.tuple(updated + [loss]))
        self.m.alias([(k, k) for k in range(len(updated))])
        return self.m


def count_parameters(cfg):
    trainable = stats = 0
    for _, dims, role in parameters(cfg):
        size = 1
        for d in dims:
            size *= d
        if role in ("moving_mean", "moving_variance"):
            stats += size
        elif role not in ("images", "labels"):
            trainable += size
    return trainable, stats


def banner(cfg):
    trainable, stats = count_parameters(cfg)
    variant = "" if cfg.is_full_size() else (
        f" (small variant: image {cfg.image_size}, widths / {cfg.width_divisor}, "
        f"blocks {','.join(map(str, cfg.blocks))}, {cfg.classes} classes)")
    lines = [
        "Generated by samples/resnet50/gen_resnet50.py; do not edit (regenerate instead).",
        f"ResNet-50 v1.5{variant}, NHWC, {cfg.dtype}, batch {cfg.batch}: "
        f"{trainable:,} trainable parameters, {stats:,} moving statistics.",
    ]
    if cfg.mode == "train":
        lines += [
            f"One SGD step (lr {LEARNING_RATE}), BN on batch statistics (momentum {MOMENTUM}), softmax",
            "cross-entropy on one-hot labels"
            + (f", static loss scale {LOSS_SCALE}." if cfg.dtype == "f16" else "."),
            "Parameters: the weights in layer order (see README.md), images, labels. Results: every",
            "weight and moving statistic updated, in parameter order and aliased to its parameter,",
            "then the loss f32[].",
        ]
    else:
        lines += [
            "Inference, BN on the moving statistics. Parameters: the weights in layer order",
            f"(see README.md), then images. Result: softmax probabilities f32[{cfg.batch},{cfg.classes}].",
        ]
    return lines


def add_arguments(parser):
    """The options that choose the variant (make_data.py takes them too)."""
    parser.add_argument("--mode", choices=["inference", "train"], default="inference")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--dtype", choices=["f32", "f16"], default="f32")
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument("--width-divisor", type=int, default=1,
                        help="divides every layer's width (64 for the stem, 64/128/256/512 per stage)")
    parser.add_argument("--blocks", default="3,4,6,3", help="bottleneck blocks per stage (four numbers)")
    parser.add_argument("--classes", type=int, default=1000)


def config_from(args):
    blocks = tuple(int(v) for v in args.blocks.split(","))
    if len(blocks) != 4 or min(blocks) < 1:
        raise SystemExit("--blocks takes four positive numbers, e.g. 3,4,6,3")
    if args.batch < 1 or args.image_size < 1 or args.classes < 1 or args.width_divisor < 1:
        raise SystemExit("--batch, --image-size, --classes and --width-divisor must be positive")
    return Config(args.mode, args.batch, args.dtype, args.image_size, args.width_divisor, blocks, args.classes)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", help="output file (default: stdout)")
    add_arguments(parser)
    parser.add_argument("--steps", type=int, choices=[1], default=1,
                        help="SGD steps per execution: one, as a JAX train_step (the option exists for "
                             "tests/samples/gradient_check.py, which passes --steps 1)")
    args = parser.parse_args()
    cfg = config_from(args)
    try:
        text = ResNet50(cfg).build().text(banner(cfg))
    except ValueError as e:
        raise SystemExit(f"gen_resnet50.py: {e}")
    if args.output:
        tmp = args.output + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, args.output)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
