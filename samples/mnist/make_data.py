#!/usr/bin/python3
"""Writes the inputs of samples/mnist/mnist.hlo as .npy files into OUTDIR.

  dense_kernel.npy    f32[784,128]  Glorot uniform (Keras' default initialiser)
  dense_bias.npy      f32[128]      zeros
  dense_1_kernel.npy  f32[128,10]   Glorot uniform
  dense_1_bias.npy    f32[10]       zeros
  images.npy          f32[10,32,28,28]  stroke-drawn digits in [0, 1] (../digits.py)
  labels.npy          s32[10,32]    their digits 0..9

One execution of the module trains on images.npy (10 batches of 32); with
`--iterations N` the same 320 images are seen N times while the weights carry
over through input_output_alias, so the printed loss falls.

Usage: make_data.py OUTDIR [--seed N]   (needs python3-numpy)
Prints the --input arguments for `tileprof run` and the oracle.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from digits import glorot_uniform, make_batches, write_inputs  # noqa: E402

STEPS, BATCH, HIDDEN, CLASSES, PIXELS = 10, 32, 128, 10, 28


def make_arrays(rng):
    flat = PIXELS * PIXELS
    arrays = {
        "dense_kernel": glorot_uniform(rng, flat, HIDDEN, (flat, HIDDEN)),
        "dense_bias": np.zeros(HIDDEN, np.float32),
        "dense_1_kernel": glorot_uniform(rng, HIDDEN, CLASSES, (HIDDEN, CLASSES)),
        "dense_1_bias": np.zeros(CLASSES, np.float32),
    }
    arrays["images"], arrays["labels"] = make_batches(rng, STEPS, BATCH, PIXELS)
    return arrays


if __name__ == "__main__":
    write_inputs(__doc__.splitlines()[0], make_arrays)
