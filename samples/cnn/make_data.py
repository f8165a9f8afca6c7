#!/usr/bin/python3
"""Writes the inputs of samples/cnn/cnn.hlo as .npy files into OUTDIR.

  conv2d_kernel.npy    f32[3,3,1,32]   Glorot uniform (Keras' default initialiser)
  conv2d_bias.npy      f32[32]         zeros
  conv2d_1_kernel.npy  f32[3,3,32,64]  Glorot uniform
  conv2d_1_bias.npy    f32[64]         zeros
  dense_kernel.npy     f32[1600,10]    Glorot uniform
  dense_bias.npy       f32[10]         zeros
  images.npy           f32[5,32,28,28,1]  stroke-drawn digits in [0, 1] (../digits.py)
  labels.npy           f32[5,32,10]    their digits, one-hot (categorical_crossentropy)

Glorot fans of a convolution kernel are receptive field x input / output
channels, as in Keras.

Usage: make_data.py OUTDIR [--seed N]   (needs python3-numpy)
Prints the --input arguments for `tileprof run` and the oracle.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from digits import glorot_uniform, make_batches, write_inputs  # noqa: E402

STEPS, BATCH, CLASSES, PIXELS, FLAT = 5, 32, 10, 28, 1600


def make_arrays(rng):
    arrays = {
        "conv2d_kernel": glorot_uniform(rng, 9 * 1, 9 * 32, (3, 3, 1, 32)),
        "conv2d_bias": np.zeros(32, np.float32),
        "conv2d_1_kernel": glorot_uniform(rng, 9 * 32, 9 * 64, (3, 3, 32, 64)),
        "conv2d_1_bias": np.zeros(64, np.float32),
        "dense_kernel": glorot_uniform(rng, FLAT, CLASSES, (FLAT, CLASSES)),
        "dense_bias": np.zeros(CLASSES, np.float32),
    }
    images, labels = make_batches(rng, STEPS, BATCH, PIXELS)
    arrays["images"] = images[..., None]
    arrays["labels"] = np.eye(CLASSES, dtype=np.float32)[labels]
    return arrays


if __name__ == "__main__":
    write_inputs(__doc__.splitlines()[0], make_arrays)
