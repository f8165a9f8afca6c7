"""Digit-like 28x28 images drawn from strokes, for the samples' make_data.py.

No MNIST download: each digit 0-9 is a few strokes (polylines) in a unit box;
every image draws one with a random affine jitter (scale, slant, rotation,
shift), a random pen width and pixel noise, as grey levels in [0, 1] like
MNIST's x / 255. Deterministic for a given seed (NumPy's PCG64).
"""

import numpy as np

# Strokes per digit in a unit box, x right, y down, (0,0) top left.
_ARC = np.linspace(0, 2 * np.pi, 17)


def _ellipse(cx, cy, rx, ry, start=0.0, stop=2 * np.pi, n=17):
    t = np.linspace(start, stop, n)
    return list(zip(cx + rx * np.sin(t), cy - ry * np.cos(t)))


STROKES = {
    0: [_ellipse(0.5, 0.5, 0.28, 0.4)],
    1: [[(0.35, 0.25), (0.55, 0.1), (0.55, 0.9)]],
    2: [_ellipse(0.5, 0.32, 0.26, 0.22, -np.pi / 2, np.pi * 0.75, 9) + [(0.25, 0.9), (0.78, 0.9)]],
    3: [_ellipse(0.48, 0.3, 0.24, 0.2, -np.pi / 2, np.pi, 9),
        _ellipse(0.48, 0.7, 0.26, 0.2, 0, np.pi * 1.5, 9)],
    4: [[(0.62, 0.9), (0.62, 0.1), (0.2, 0.65), (0.82, 0.65)]],
    5: [[(0.75, 0.1), (0.3, 0.1), (0.27, 0.45)] + _ellipse(0.48, 0.65, 0.27, 0.25, -np.pi / 3, np.pi * 1.3, 9)],
    6: [[(0.7, 0.1), (0.4, 0.35)] + _ellipse(0.5, 0.67, 0.25, 0.23, -np.pi * 0.6, np.pi * 1.5, 13)],
    7: [[(0.22, 0.12), (0.8, 0.12), (0.42, 0.9)], [(0.35, 0.5), (0.7, 0.5)]],
    8: [_ellipse(0.5, 0.3, 0.2, 0.19), _ellipse(0.5, 0.7, 0.25, 0.21)],
    9: [_ellipse(0.5, 0.33, 0.24, 0.22) + [(0.72, 0.4), (0.62, 0.9)]],
}


def _segments(digit, transform):
    segs = []
    for stroke in STROKES[digit]:
        pts = np.array(stroke, np.float64) @ transform[:, :2].T + transform[:, 2]
        segs.append(np.stack([pts[:-1], pts[1:]], axis=1))
    return np.concatenate(segs)  # [n, 2 (ends), 2 (x, y)]


def render(digit, rng, size=28):
    scale = rng.uniform(0.75, 1.0) * size * 0.8
    angle = rng.normal(0, 0.12)
    slant = rng.normal(0, 0.15)
    c, s = np.cos(angle), np.sin(angle)
    linear = scale * np.array([[c, -s], [s, c]]) @ np.array([[1, slant], [0, 1]])
    center = np.array([size / 2, size / 2]) + rng.normal(0, 1.2, 2)
    offset = center - linear @ np.array([0.5, 0.5])
    segs = _segments(digit, np.concatenate([linear, offset[:, None]], axis=1))
    ys, xs = np.mgrid[0:size, 0:size] + 0.5
    p = np.stack([xs.ravel(), ys.ravel()], axis=1)[:, None, :]  # [pixels, 1, 2]
    a, b = segs[None, :, 0], segs[None, :, 1]
    ab = b - a
    t = np.clip(((p - a) * ab).sum(-1) / np.maximum((ab * ab).sum(-1), 1e-9), 0, 1)
    dist = np.linalg.norm(p - (a + t[..., None] * ab), axis=-1).min(axis=1)
    width = rng.uniform(1.0, 1.8)
    img = np.clip(1.5 - dist / width, 0, 1) ** 1.5
    img = img + rng.normal(0, 0.05, img.shape)
    return np.clip(img, 0, 1).reshape(size, size).astype(np.float32)


def make_batches(rng, steps, batch, size=28):
    labels = rng.integers(0, 10, (steps, batch)).astype(np.int32)
    images = np.stack([np.stack([render(int(d), rng, size) for d in row]) for row in labels])
    return images, labels


def glorot_uniform(rng, fan_in, fan_out, shape):
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, shape).astype(np.float32)


def write_inputs(description, make_arrays):
    """The make_data.py command line: OUTDIR [--seed N]; writes each array of
    make_arrays(rng) as OUTDIR/<name>.npy (atomically) and prints the
    matching `--input name=path` arguments."""
    import argparse
    import os

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("outdir")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    arguments = []
    for name, array in make_arrays(np.random.default_rng(args.seed)).items():
        path = os.path.join(args.outdir, name + ".npy")
        tmp = path + ".tmp.npy"
        np.save(tmp, array)
        os.replace(tmp, path)
        arguments.append(f"--input {name}={path}")
    print(" ".join(arguments))
