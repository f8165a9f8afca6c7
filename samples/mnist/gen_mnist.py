#!/usr/bin/python3
"""Writes mnist.hlo: the training step of seed 000's Keras model as HLO text.

The model (seed 000_1d7f469a2cd2582d, the pre-compile example of Graphcore's
TensorFlow 2 guide):

    Flatten -> Dense(128, relu) -> Dense(10, softmax)
    loss SparseCategoricalCrossentropy, optimizer SGD() (learning rate 0.01)
    batch 32, steps_per_execution=10

One execution of the module is what Keras compiles for one call with
steps_per_execution=10: a while loop of 10 steps; step i takes batch i out of
the images/labels of the execution (dynamic-slice), runs the forward pass, the
backward pass, and the SGD update. The module returns the updated weights and
biases, aliased to their parameters (input_output_alias) so that they carry
over from one execution to the next, and the mean loss of the 10 steps.

The cross-entropy is computed from the logits of the last Dense layer, as
Keras does when the output comes from a softmax (its `_keras_logits` path),
and the labels become one-hot with iota == label, as TF's XLA lowering of
SparseSoftmaxCrossEntropyWithLogits does.

Usage: gen_mnist.py [-o mnist.hlo]   (default: stdout)
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from hlo_text import Metadata, Module, Shape, f32, s32  # noqa: E402

STEPS = 10
BATCH = 32
PIXELS = 28
HIDDEN = 128
CLASSES = 10
LEARNING_RATE = "0.01"  # Keras SGD() default

# Lines of the model script in seed 000's listing.
LINE_FLATTEN, LINE_DENSE, LINE_DENSE_1, LINE_LOSS, LINE_SGD, LINE_FIT = 41, 42, 43, 59, 60, 62


def build():
    m = Module("a_inference_train_function_1287__.311", Metadata("mnist.py"))
    add = m.scalar_binary("sum", "add")
    mx = m.scalar_binary("max", "maximum")

    flat = PIXELS * PIXELS
    x_all = Shape("f32", (STEPS, BATCH, PIXELS, PIXELS))
    y_all = Shape("s32", (STEPS, BATCH))
    weights = [f32(flat, HIDDEN), f32(HIDDEN), f32(HIDDEN, CLASSES), f32(CLASSES)]
    state = Shape.tuple_of([s32()] + weights + [x_all, y_all, f32()])

    # --- loop condition: i < STEPS -------------------------------------------
    cond = m.computation("cond")
    t = cond.parameter(state, "arg_tuple.0")
    cond.at("", "while/LoopCond", LINE_FIT)
    i = cond.gte(t, 0)
    n = cond.scalar("s32", STEPS)
    cond.set_root(cond.compare(i, n, "LT"))

    # --- loop body: one training step ----------------------------------------
    b = m.computation("body")
    t = b.parameter(state, "arg_tuple.1")
    b.at("", "while/body", LINE_FIT)
    i = b.gte(t, 0)
    w1, b1, w2, b2 = (b.gte(t, k) for k in range(1, 5))
    xs, ys, loss_sum = b.gte(t, 5), b.gte(t, 6), b.gte(t, 7)

    b.at("IteratorGetNext", "IteratorGetNext", LINE_FIT)
    zero = b.scalar("s32", 0)
    x = b.op("dynamic-slice", f32(1, BATCH, PIXELS, PIXELS), [xs, i, zero, zero, zero],
             [f"dynamic_slice_sizes={{1,{BATCH},{PIXELS},{PIXELS}}}"])
    y = b.op("dynamic-slice", s32(1, BATCH), [ys, i, zero], [f"dynamic_slice_sizes={{1,{BATCH}}}"])
    y = b.reshape(y, s32(BATCH))

    b.at("Reshape", "sequential/flatten/Reshape", LINE_FLATTEN)
    x = b.reshape(x, f32(BATCH, flat))

    # Dense(128, relu)
    b.at("MatMul", "sequential/dense/MatMul", LINE_DENSE)
    z1 = b.dot(x, w1, f32(BATCH, HIDDEN), 1, 0)
    b.at("BiasAdd", "sequential/dense/BiasAdd", LINE_DENSE)
    z1 = b.binary("add", z1, b.broadcast(b1, f32(BATCH, HIDDEN), [1]))
    b.at("Relu", "sequential/dense/Relu", LINE_DENSE)
    zeros_h = b.splat("f32", "0", (BATCH, HIDDEN))
    h = b.binary("maximum", z1, zeros_h)

    # Dense(10, softmax): the logits
    b.at("MatMul", "sequential/dense_1/MatMul", LINE_DENSE_1)
    z2 = b.dot(h, w2, f32(BATCH, CLASSES), 1, 0)
    b.at("BiasAdd", "sequential/dense_1/BiasAdd", LINE_DENSE_1)
    z2 = b.binary("add", z2, b.broadcast(b2, f32(BATCH, CLASSES), [1]))

    # Sparse softmax cross-entropy with logits, mean over the batch.
    scope = "sparse_categorical_crossentropy/SparseSoftmaxCrossEntropyWithLogits"
    b.at("SparseSoftmaxCrossEntropyWithLogits", scope, LINE_LOSS)
    neg_inf = b.scalar("f32", "-inf")
    zmax = b.reduce(z2, neg_inf, [1], mx)
    shifted = b.binary("subtract", z2, b.broadcast(zmax, f32(BATCH, CLASSES), [0]))
    e = b.unary("exponential", shifted)
    fzero = b.scalar("f32", "0")
    esum = b.reduce(e, fzero, [1], add)
    log_sum = b.unary("log", esum)
    probs = b.binary("divide", e, b.broadcast(esum, f32(BATCH, CLASSES), [0]))
    classes = b.op("iota", s32(BATCH, CLASSES), [], ["iota_dimension=1"])
    onehot_p = b.compare(b.broadcast(y, s32(BATCH, CLASSES), [0]), classes, "EQ")
    onehot = b.convert(onehot_p, "f32")
    picked = b.reduce(b.binary("multiply", shifted, onehot), fzero, [1], add)
    per_example = b.binary("subtract", log_sum, picked)
    b.at("Mean", "sparse_categorical_crossentropy/weighted_loss/Mean", LINE_LOSS)
    total = b.reduce(per_example, fzero, [0], add)
    loss = b.binary("divide", total, b.scalar("f32", str(BATCH)))

    # Backward pass.
    b.at("SparseSoftmaxCrossEntropyWithLogits", scope, LINE_LOSS)
    inv_batch = b.splat("f32", f"{1.0 / BATCH!r}", (BATCH, CLASSES))
    dz2 = b.binary("multiply", b.binary("subtract", probs, onehot), inv_batch)
    b.at("MatMul", "gradient_tape/sequential/dense_1/MatMul/MatMul_1", LINE_DENSE_1)
    dw2 = b.dot(h, dz2, f32(HIDDEN, CLASSES), 0, 0)
    b.at("BiasAddGrad", "gradient_tape/sequential/dense_1/BiasAdd/BiasAddGrad", LINE_DENSE_1)
    db2 = b.reduce(dz2, fzero, [0], add)
    b.at("MatMul", "gradient_tape/sequential/dense_1/MatMul/MatMul", LINE_DENSE_1)
    dh = b.dot(dz2, w2, f32(BATCH, HIDDEN), 1, 1)
    b.at("ReluGrad", "gradient_tape/sequential/dense/ReluGrad", LINE_DENSE)
    active = b.compare(z1, zeros_h, "GT")
    dz1 = b.select(active, dh, zeros_h)
    b.at("MatMul", "gradient_tape/sequential/dense/MatMul/MatMul", LINE_DENSE)
    dw1 = b.dot(x, dz1, f32(flat, HIDDEN), 0, 0)
    b.at("BiasAddGrad", "gradient_tape/sequential/dense/BiasAdd/BiasAddGrad", LINE_DENSE)
    db1 = b.reduce(dz1, fzero, [0], add)

    # SGD: w -= lr * g (ResourceApplyGradientDescent).
    updated = []
    for var, grad, name in ((w1, dw1, "dense/kernel"), (b1, db1, "dense/bias"),
                            (w2, dw2, "dense_1/kernel"), (b2, db2, "dense_1/bias")):
        b.at("ResourceApplyGradientDescent", f"SGD/SGD/update_{name}/ResourceApplyGradientDescent", LINE_SGD)
        lr = b.splat("f32", LEARNING_RATE, var.shape.dims)
        updated.append(b.binary("subtract", var, b.binary("multiply", lr, grad)))

    b.at("", "while/body", LINE_FIT)
    i_next = b.binary("add", i, b.scalar("s32", 1))
    b.at("AddV2", "loss_sum/AddV2", LINE_FIT)
    loss_sum = b.binary("add", loss_sum, loss)
    b.at("", "while/body", LINE_FIT)
    b.set_root(b.tuple([i_next] + updated + [xs, ys, loss_sum]))

    # --- ENTRY ----------------------------------------------------------------
    e = m.computation("cluster_train_function", entry=True)
    params = [e.parameter(w1.shape, "dense_kernel"), e.parameter(b1.shape, "dense_bias"),
              e.parameter(w2.shape, "dense_1_kernel"), e.parameter(b2.shape, "dense_1_bias"),
              e.parameter(x_all, "images"), e.parameter(y_all, "labels")]
    e.at("", "while", LINE_FIT)
    init = e.tuple([e.scalar("s32", 0)] + params + [e.scalar("f32", "0")])
    loop = e.op("while", state, [init], [f"condition=%{cond.name}", f"body=%{b.name}"])
    outs = [e.gte(loop, k) for k in range(1, 5)]
    e.at("Mean", "loss/Mean", LINE_FIT)
    mean = e.binary("divide", e.gte(loop, 7), e.scalar("f32", str(STEPS)))
    e.no_metadata()
    e.set_root(e.tuple(outs + [mean]))
    m.alias([(k, k) for k in range(4)])
    return m


def banner():
    return [
        "Generated by samples/mnist/gen_mnist.py; do not edit (regenerate instead).",
        "Training step of seed 000's Keras model: Flatten, Dense(128, relu), Dense(10, softmax),",
        f"sparse categorical cross-entropy, SGD lr {LEARNING_RATE}, batch {BATCH}, {STEPS} steps per execution.",
        "Parameters: dense_kernel, dense_bias, dense_1_kernel, dense_1_bias (updated and aliased),",
        f"images f32[{STEPS},{BATCH},{PIXELS},{PIXELS}], labels s32[{STEPS},{BATCH}] (0..9).",
        "Results: the four updated variables, then the mean loss of the steps.",
    ]


def main():
    global STEPS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", help="output file (default: stdout)")
    parser.add_argument("--steps", type=int, default=STEPS,
                        help=f"training steps per execution (default {STEPS}, as committed; "
                             "tests/samples/gradient_check.py uses 1)")
    args = parser.parse_args()
    STEPS = args.steps
    text = build().text(banner())
    if args.output:
        tmp = args.output + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, args.output)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
