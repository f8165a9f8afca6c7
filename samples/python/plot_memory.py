#!/usr/bin/python3
"""Plots a tileprof report's memory per tile, stacked by category, with the
tile's capacity: what `tileprof plot` draws, from Python.

    PYTHONPATH=build/python samples/python/plot_memory.py REPORT [-o memory.png]

REPORT is a JSON, CBOR or SQLite report (per-tile data), e.g. one written by
`tileprof run samples/adder.hlo --config <(echo '{"profile_db": "profile.db"}')`.
"""

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import tileprof  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("report")
parser.add_argument("-o", "--output", default="memory.png")
parser.add_argument("--categories", type=int, default=6,
                    help="categories drawn separately (the rest are 'other')")
args = parser.parse_args()

report = tileprof.open_report(args.report)
if not report.has_tiles:
    raise SystemExit(f"{args.report}: a {report.format} report has no per-tile data")
tiles = report.tiles
matrix = tiles.categories
# The largest categories over the whole report get their own colour.
order = np.argsort(matrix.sum(axis=0))[::-1]
shown = [c for c in order[: args.categories] if matrix[:, c].sum() > 0]
other = matrix.sum(axis=1) - matrix[:, shown].sum(axis=1)

fig, ax = plt.subplots(figsize=(10, 4))
x = np.arange(len(tiles))
bottom = np.zeros(len(tiles))
for c in shown:
    ax.bar(x, matrix[:, c], bottom=bottom, width=1.0, label=tileprof.CATEGORY_LABELS[c])
    bottom += matrix[:, c]
ax.bar(x, other, bottom=bottom, width=1.0, label="Other", color="lightgrey")
if report.target is not None:
    ax.axhline(report.target.bytes_per_tile, color="red", linestyle="--", label="Tile capacity")
ax.set_xlabel("Tile")
ax.set_ylabel("Bytes (excluding gaps)")
ax.set_title(f"{args.report}: {tiles.excluding_gaps.sum():,} B on {len(tiles):,} tiles")
ax.legend(fontsize="small", loc="upper right")
fig.tight_layout()
fig.savefig(args.output)
print(f"Wrote {args.output}: largest tile {int(tiles.excluding_gaps.max()):,} B "
      f"(tile {int(tiles.tile[tiles.excluding_gaps.argmax()])})")
