#!/usr/bin/python3
"""Writes cnn.hlo: the training step of seed 003's Keras CNN as HLO text.

The model (seed 003_5bcbcef389f2c020, Listing 4.1 of Graphcore's IPU
programmer's guide) on 28x28x1 digits, 10 classes:

    Conv2D(32, 3x3, relu) -> MaxPooling2D(2x2) -> Conv2D(64, 3x3, relu)
    -> MaxPooling2D(2x2) -> Flatten -> Dropout(0.5) -> Dense(10, softmax)
    model.compile('sgd', 'categorical_crossentropy'): SGD learning rate 0.01,
    one-hot labels

One execution runs a while loop of STEPS training steps of batch 32; step i
dynamic-slices batch i out of the execution's images and labels. The ops are
the ones TF's XLA bridge emits for these layers: `convolution` with
dim_labels b01f_01io->b01f forward; for the gradients the weight gradient as a
convolution of the activations with the output gradient (f01b_i01o->01bf,
window = output size) and the input gradient as a convolution with the
reversed kernel (b01f_01oi->b01f, pad 2); max pooling as `reduce-window` and
its gradient as `select-and-scatter` (select GE, scatter add); Dropout as
`rng` (rng_uniform in [0, 1)) compared with the rate, kept values scaled by
1 / (1 - rate). The cross-entropy uses the logits of the last layer (Keras'
softmax-logits path) and is averaged over the batch.

`--dropout hash` replaces the rng op by a counter-based hash of the element
index and step (iota, multiply, xor, shift-right-logical, convert), so
that the dropout masks are defined bit for bit: the run-vs-oracle comparison
test uses that variant, because `rng` values are implementation-defined.

Usage: gen_cnn.py [-o cnn.hlo] [--dropout rng|hash]   (default: stdout, rng)
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from hlo_text import Metadata, Module, Shape, f32, u32  # noqa: E402

STEPS = 5
BATCH = 32
PIXELS = 28
CLASSES = 10
RATE = 0.5
LEARNING_RATE = "0.01"  # Keras 'sgd'

# Lines of Listing 4.1 in seed 003 (model_fn and the compile/fit calls).
L_CONV, L_POOL, L_CONV_1, L_POOL_1, L_FLAT, L_DROP, L_DENSE, L_LOSS, L_FIT = 7, 8, 9, 10, 11, 12, 13, 25, 26


def conv_shape(n, k=3):
    return n - k + 1


def build(dropout):
    m = Module("a_inference_train_function_2914__.508" + ("" if dropout == "rng" else ".hash"),
               Metadata("cnn.py"))
    add = m.scalar_binary("sum", "add")
    mx = m.scalar_binary("max", "maximum")
    ge = m.scalar_compare("ge", "GE")

    h1 = conv_shape(PIXELS)          # 26
    q1 = h1 // 2                     # 13
    h2 = conv_shape(q1)              # 11
    q2 = h2 // 2                     # 5
    flat = q2 * q2 * 64              # 1600
    x_all = Shape("f32", (STEPS, BATCH, PIXELS, PIXELS, 1))
    y_all = Shape("f32", (STEPS, BATCH, CLASSES))
    weights = [f32(3, 3, 1, 32), f32(32), f32(3, 3, 32, 64), f32(64), f32(flat, CLASSES), f32(CLASSES)]
    state = Shape.tuple_of([Shape("s32")] + weights + [x_all, y_all, f32()])

    cond = m.computation("cond")
    t = cond.parameter(state, "arg_tuple.0")
    cond.at("", "while/LoopCond", L_FIT)
    cond.set_root(cond.compare(cond.gte(t, 0), cond.scalar("s32", STEPS), "LT"))

    b = m.computation("body")
    t = b.parameter(state, "arg_tuple.1")
    b.at("", "while/body", L_FIT)
    i = b.gte(t, 0)
    k1, b1, k2, b2, w, bw = (b.gte(t, k) for k in range(1, 7))
    xs, ys, loss_sum = b.gte(t, 7), b.gte(t, 8), b.gte(t, 9)

    b.at("IteratorGetNext", "IteratorGetNext", L_FIT)
    zero = b.scalar("s32", 0)
    x = b.op("dynamic-slice", f32(1, BATCH, PIXELS, PIXELS, 1), [xs, i, zero, zero, zero, zero],
             [f"dynamic_slice_sizes={{1,{BATCH},{PIXELS},{PIXELS},1}}"])
    x = b.reshape(x, f32(BATCH, PIXELS, PIXELS, 1))
    y = b.op("dynamic-slice", f32(1, BATCH, CLASSES), [ys, i, zero, zero],
             [f"dynamic_slice_sizes={{1,{BATCH},{CLASSES}}}"])
    y = b.reshape(y, f32(BATCH, CLASSES))
    fzero = b.scalar("f32", "0")
    neg_inf = b.scalar("f32", "-inf")

    def conv_relu(inp, kernel, bias, out_dims, scope, line):
        b.at("Conv2D", f"model/{scope}/Conv2D", line)
        c = b.op("convolution", f32(*out_dims), [inp, kernel],
                 ["window={size=3x3}", "dim_labels=b01f_01io->b01f"])
        b.at("BiasAdd", f"model/{scope}/BiasAdd", line)
        c = b.binary("add", c, b.broadcast(bias, f32(*out_dims), [3]))
        b.at("Relu", f"model/{scope}/Relu", line)
        zeros = b.splat("f32", "0", out_dims)
        return c, b.binary("maximum", c, zeros), zeros

    def max_pool(inp, out_dims, scope, line):
        b.at("MaxPool", f"model/{scope}/MaxPool", line)
        return b.op("reduce-window", f32(*out_dims), [inp, neg_inf],
                    ["window={size=1x2x2x1 stride=1x2x2x1}", f"to_apply=%{mx.name}"])

    c1, r1, zeros1 = conv_relu(x, k1, b1, (BATCH, h1, h1, 32), "conv2d", L_CONV)
    p1 = max_pool(r1, (BATCH, q1, q1, 32), "max_pooling2d", L_POOL)
    c2, r2, zeros2 = conv_relu(p1, k2, b2, (BATCH, h2, h2, 64), "conv2d_1", L_CONV_1)
    p2 = max_pool(r2, (BATCH, q2, q2, 64), "max_pooling2d_1", L_POOL_1)
    b.at("Reshape", "model/flatten/Reshape", L_FLAT)
    f = b.reshape(p2, f32(BATCH, flat))

    # Dropout(0.5), training mode.
    if dropout == "rng":
        b.at("RandomUniform", "model/dropout/dropout/random_uniform/RandomUniform", L_DROP)
        u = b.op("rng", f32(BATCH, flat), [fzero, b.scalar("f32", "1")], ["distribution=rng_uniform"])
    else:
        b.at("StatelessRandomUniformV2", "model/dropout/dropout/random_uniform/StatelessRandomUniformV2", L_DROP)
        u = hash_uniform(b, i, (BATCH, flat))
    b.at("GreaterEqual", "model/dropout/dropout/GreaterEqual", L_DROP)
    keep = b.compare(u, b.splat("f32", repr(RATE), (BATCH, flat)), "GE")
    b.at("Mul", "model/dropout/dropout/Mul", L_DROP)
    scale = b.splat("f32", repr(1.0 / (1.0 - RATE)), (BATCH, flat))
    zeros_f = b.splat("f32", "0", (BATCH, flat))
    d = b.select(keep, b.binary("multiply", f, scale), zeros_f)

    b.at("MatMul", "model/dense/MatMul", L_DENSE)
    z = b.dot(d, w, f32(BATCH, CLASSES), 1, 0)
    b.at("BiasAdd", "model/dense/BiasAdd", L_DENSE)
    z = b.binary("add", z, b.broadcast(bw, f32(BATCH, CLASSES), [1]))

    # Categorical cross-entropy on the logits, mean over the batch.
    scope = "categorical_crossentropy/softmax_cross_entropy_with_logits"
    b.at("SoftmaxCrossEntropyWithLogits", scope, L_LOSS)
    zmax = b.reduce(z, neg_inf, [1], mx)
    shifted = b.binary("subtract", z, b.broadcast(zmax, f32(BATCH, CLASSES), [0]))
    e = b.unary("exponential", shifted)
    esum = b.reduce(e, fzero, [1], add)
    probs = b.binary("divide", e, b.broadcast(esum, f32(BATCH, CLASSES), [0]))
    picked = b.reduce(b.binary("multiply", shifted, y), fzero, [1], add)
    per_example = b.binary("subtract", b.unary("log", esum), picked)
    b.at("Mean", "categorical_crossentropy/weighted_loss/Mean", L_LOSS)
    loss = b.binary("divide", b.reduce(per_example, fzero, [0], add), b.scalar("f32", str(BATCH)))

    # Backward pass.
    b.at("SoftmaxCrossEntropyWithLogits", scope, L_LOSS)
    dz = b.binary("multiply", b.binary("subtract", probs, y), b.splat("f32", repr(1.0 / BATCH), (BATCH, CLASSES)))
    b.at("MatMul", "gradient_tape/model/dense/MatMul/MatMul_1", L_DENSE)
    dw = b.dot(d, dz, f32(flat, CLASSES), 0, 0)
    b.at("BiasAddGrad", "gradient_tape/model/dense/BiasAdd/BiasAddGrad", L_DENSE)
    dbw = b.reduce(dz, fzero, [0], add)
    b.at("MatMul", "gradient_tape/model/dense/MatMul/MatMul", L_DENSE)
    dd = b.dot(dz, w, f32(BATCH, flat), 1, 1)
    b.at("Mul", "gradient_tape/model/dropout/dropout/Mul", L_DROP)
    df = b.select(keep, b.binary("multiply", dd, scale), zeros_f)
    b.at("Reshape", "gradient_tape/model/flatten/Reshape", L_FLAT)
    dp2 = b.reshape(df, f32(BATCH, q2, q2, 64))

    def max_pool_grad(act, grad, scope, line):
        b.at("MaxPoolGrad", f"gradient_tape/model/{scope}/MaxPool/MaxPoolGrad", line)
        return b.op("select-and-scatter", act.shape, [act, grad, fzero],
                    ["window={size=1x2x2x1 stride=1x2x2x1}", f"select=%{ge.name}", f"scatter=%{add.name}"])

    def relu_bias_grad(pre, grad, zeros, scope, line):
        b.at("ReluGrad", f"gradient_tape/model/{scope}/ReluGrad", line)
        dc = b.select(b.compare(pre, zeros, "GT"), grad, zeros)
        b.at("BiasAddGrad", f"gradient_tape/model/{scope}/BiasAdd/BiasAddGrad", line)
        return dc, b.reduce(dc, fzero, [0, 1, 2], add)

    def filter_grad(act, dc, kernel_shape, scope, line):
        b.at("Conv2DBackpropFilter", f"gradient_tape/model/{scope}/Conv2D/Conv2DBackpropFilter", line)
        size = dc.shape.dims[1]
        return b.op("convolution", kernel_shape, [act, dc],
                    [f"window={{size={size}x{size}}}", "dim_labels=f01b_i01o->01bf"])

    dr2 = max_pool_grad(r2, dp2, "max_pooling2d_1", L_POOL_1)
    dc2, db2 = relu_bias_grad(c2, dr2, zeros2, "conv2d_1", L_CONV_1)
    dk2 = filter_grad(p1, dc2, k2.shape, "conv2d_1", L_CONV_1)
    b.at("Conv2DBackpropInput", "gradient_tape/model/conv2d_1/Conv2D/Conv2DBackpropInput", L_CONV_1)
    k2r = b.op("reverse", k2.shape, [k2], ["dimensions={0,1}"])
    dp1 = b.op("convolution", p1.shape, [dc2, k2r],
               ["window={size=3x3 pad=2_2x2_2}", "dim_labels=b01f_01oi->b01f"])
    dr1 = max_pool_grad(r1, dp1, "max_pooling2d", L_POOL)
    dc1, db1 = relu_bias_grad(c1, dr1, zeros1, "conv2d", L_CONV)
    dk1 = filter_grad(x, dc1, k1.shape, "conv2d", L_CONV)

    updated = []
    for var, grad, name in ((k1, dk1, "conv2d/kernel"), (b1, db1, "conv2d/bias"),
                            (k2, dk2, "conv2d_1/kernel"), (b2, db2, "conv2d_1/bias"),
                            (w, dw, "dense/kernel"), (bw, dbw, "dense/bias")):
        b.at("ResourceApplyGradientDescent", f"SGD/SGD/update_{name}/ResourceApplyGradientDescent", L_LOSS)
        lr = b.splat("f32", LEARNING_RATE, var.shape.dims)
        updated.append(b.binary("subtract", var, b.binary("multiply", lr, grad)))

    b.at("", "while/body", L_FIT)
    i_next = b.binary("add", i, b.scalar("s32", 1))
    b.at("AddV2", "loss_sum/AddV2", L_FIT)
    loss_sum = b.binary("add", loss_sum, loss)
    b.at("", "while/body", L_FIT)
    b.set_root(b.tuple([i_next] + updated + [xs, ys, loss_sum]))

    e = m.computation("cluster_train_function", entry=True)
    names = ["conv2d_kernel", "conv2d_bias", "conv2d_1_kernel", "conv2d_1_bias", "dense_kernel", "dense_bias"]
    params = [e.parameter(s, n) for s, n in zip(weights, names)]
    params += [e.parameter(x_all, "images"), e.parameter(y_all, "labels")]
    e.at("", "while", L_FIT)
    init = e.tuple([e.scalar("s32", 0)] + params + [e.scalar("f32", "0")])
    loop = e.op("while", state, [init], [f"condition=%{cond.name}", f"body=%{b.name}"])
    outs = [e.gte(loop, k) for k in range(1, 7)]
    e.at("Mean", "loss/Mean", L_FIT)
    mean = e.binary("divide", e.gte(loop, 9), e.scalar("f32", str(STEPS)))
    e.no_metadata()
    e.set_root(e.tuple(outs + [mean]))
    m.alias([(k, k) for k in range(6)])
    return m


def hash_uniform(b, step, dims):
    """Uniform [0, 1) floats from a 32-bit integer hash of (element index, step)."""
    n = dims[0] * dims[1]
    idx = b.op("iota", u32(n), [], ["iota_dimension=0"])
    s = b.broadcast(b.convert(step, "u32"), u32(n), [])
    x = b.binary("add", idx, b.binary("multiply", s, b.splat("u32", str(n), (n,))))
    for shift_bits, mul in ((16, 0x7FEB352D), (15, 0x846CA68B), (16, None)):
        x = b.binary("xor", x, b.binary("shift-right-logical", x, b.splat("u32", str(shift_bits), (n,))))
        if mul is not None:
            x = b.binary("multiply", x, b.splat("u32", str(mul), (n,)))
    # The top 24 bits as an integer convert to f32 exactly; times 2^-24 is in [0, 1).
    top = b.binary("shift-right-logical", x, b.splat("u32", "8", (n,)))
    u = b.binary("multiply", b.convert(top, "f32"), b.splat("f32", repr(2.0 ** -24), (n,)))
    return b.reshape(u, f32(*dims))


def banner(dropout):
    lines = [
        "Generated by samples/cnn/gen_cnn.py; do not edit (regenerate instead).",
        "Training step of seed 003's Keras CNN: Conv2D(32,3x3,relu), MaxPool 2x2, Conv2D(64,3x3,relu),",
        "MaxPool 2x2, Flatten, Dropout(0.5), Dense(10, softmax); categorical cross-entropy,",
        f"SGD lr {LEARNING_RATE}, batch {BATCH}, {STEPS} steps per execution.",
        "Parameters: conv2d_kernel, conv2d_bias, conv2d_1_kernel, conv2d_1_bias, dense_kernel,",
        f"dense_bias (updated and aliased), images f32[{STEPS},{BATCH},{PIXELS},{PIXELS},1],",
        f"labels f32[{STEPS},{BATCH},{CLASSES}] (one-hot). Results: the six updated variables,",
        "then the mean loss of the steps.",
    ]
    if dropout == "hash":
        lines.append("Variant --dropout hash: dropout masks from an integer hash instead of rng.")
    return lines


def main():
    global STEPS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", help="output file (default: stdout)")
    parser.add_argument("--dropout", choices=["rng", "hash"], default="rng")
    parser.add_argument("--steps", type=int, default=STEPS,
                        help=f"training steps per execution (default {STEPS}, as committed; "
                             "tests/samples/gradient_check.py uses 1)")
    args = parser.parse_args()
    STEPS = args.steps
    text = build(args.dropout).text(banner(args.dropout))
    if args.output:
        tmp = args.output + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, args.output)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
