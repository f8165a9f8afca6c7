#!/usr/bin/python3
"""Writes the inputs of a samples/resnet50 module as .npy files into OUTDIR.

  <layer>_conv_kernel.npy       HWIO, He normal (Keras' HeNormal: truncated
                                normal, stddev sqrt(2 / fan_in) / 0.8796)
  <layer>_bn_gamma.npy          ones
  <layer>_bn_beta.npy           zeros
  <layer>_bn_moving_mean.npy    zeros
  <layer>_bn_moving_variance.npy  ones
  predictions_kernel.npy        [2048, 1000] Glorot uniform (Keras' Dense default)
  predictions_bias.npy          zeros
  images.npy                    [N, 224, 224, 3] uniform in [0, 1)
  labels.npy                    [N, 1000] one-hot of uniform random classes (--mode train)

The module is chosen with the generator's options (gen_resnet50.py --help),
which default to the inference module at batch 1 in f32; its parameter list
(names, shapes, order) comes from gen_resnet50.parameters, so the files always
fit the module the same options generate. With --dtype f16 every array but
the labels is f16 (drawn in f32, then rounded).

Usage: make_data.py OUTDIR [--seed N] [--mode ...] [--batch N] [--dtype ...]
Prints the --input arguments for `tileprof run` and the oracle, e.g.
  tileprof run samples/resnet50/resnet50_train_b8_f32.hlo \\
      $(make_data.py /tmp/r50 --mode train --batch 8)
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_resnet50 import add_arguments, config_from, parameter_dtype, parameters  # noqa: E402


def he_normal(rng, fan_in, shape):
    """Keras' HeNormal: a normal truncated at two standard deviations, scaled
    so that the truncated distribution has variance 2 / fan_in."""
    stddev = np.sqrt(2.0 / fan_in) / 0.87962566103423978
    values = rng.normal(0.0, 1.0, shape)
    outside = np.abs(values) > 2
    while outside.any():
        values[outside] = rng.normal(0.0, 1.0, int(outside.sum()))
        outside = np.abs(values) > 2
    return values * stddev


def glorot_uniform(rng, fan_in, fan_out, shape):
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, shape)


def make_arrays(cfg, rng):
    arrays = {}
    for name, dims, role in parameters(cfg):
        if role == "kernel":
            value = he_normal(rng, dims[0] * dims[1] * dims[2], dims)
        elif role in ("gamma", "moving_variance"):
            value = np.ones(dims)
        elif role in ("beta", "moving_mean", "dense_bias"):
            value = np.zeros(dims)
        elif role == "dense_kernel":
            value = glorot_uniform(rng, dims[0], dims[1], dims)
        elif role == "images":
            value = rng.uniform(0.0, 1.0, dims)
        elif role == "labels":
            value = np.eye(dims[1])[rng.integers(0, dims[1], dims[0])]
        else:
            raise AssertionError(role)
        arrays[name] = value.astype(np.float16 if parameter_dtype(cfg, role) == "f16" else np.float32)
    return arrays


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir")
    parser.add_argument("--seed", type=int, default=0)
    add_arguments(parser)
    args = parser.parse_args()
    cfg = config_from(args)
    os.makedirs(args.outdir, exist_ok=True)
    arguments = []
    for name, array in make_arrays(cfg, np.random.default_rng(args.seed)).items():
        path = os.path.join(args.outdir, name + ".npy")
        tmp = path + ".tmp.npy"
        np.save(tmp, array)
        os.replace(tmp, path)
        arguments.append(f"--input {name}={path}")
    print(" ".join(arguments))


if __name__ == "__main__":
    main()
