#!/usr/bin/env python3
"""Writes an HLO module that lowers to about one million vertices.

Usage: gen_million.py [--ops N] [--elements E] > million.hlo

Each elementwise op over an f32[E] tensor is mapped linearly over every tile
and lowers to one vertex per tile holding part of its output; a chain of N
adds/multiplies over tensors covering all 1,472 tiles of an ipu2 gives
N x 1,472 vertices (plus the seed vertex per tile). The defaults, 680 ops of
f32[1,472 x 64], give 1,002,432 vertices on ipu2.
"""
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--ops", type=int, default=680)
parser.add_argument("--elements", type=int, default=1472 * 64)
args = parser.parse_args()

shape = f"f32[{args.elements}]"
lines = ["HloModule million_vertices", "", "ENTRY main {",
         f"  x = {shape} parameter(0)", f"  y = {shape} parameter(1)"]
prev, other = "x", "y"
for i in range(args.ops):
    op = "add" if i % 2 == 0 else "multiply"
    name = f"v{i}"
    lines.append(f"  {name} = {shape} {op}({prev}, {other})")
    # Each op reads the previous result and the one before it, so values stay
    # live for two steps and the liveness-based reuse has work to do.
    prev, other = name, prev
lines.append(f"  ROOT out = {shape} negate({prev})")
lines.append("}")
print("\n".join(lines))
