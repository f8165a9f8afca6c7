#!/usr/bin/python3
"""Poplar tutorial 7 on tileprof's simulator next to the Execution summaries
Graphcore published for it (../shared/corpus/published A07-A10).

Runs `tut7_sample 10000 1000 --device D` (samples/tut7) for the tutorial's
three devices and prints, per published run, each figure as a tile average:
published, tileprof, and their ratio. A07 (SDK 1.x, Mk1) printed totals over
all 1,216 tiles; they are divided by the tile count here.

    bench/sim/tut7_published.py --tut7 build/samples/tut7/tut7_sample [--published DIR]
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# (published file prefix, the tutorial's device, what it is)
RUNS = [
    ("A07", "model-ipu1", "Mk1 IPU Model, SDK 1.x (2020-04)"),
    ("A08", "model-ipu2", "Mk2 IPU Model, SDK 2.0"),
    ("A09", "model-ipu2", "Mk2 IPU Model, SDK 2.1-3.1"),
    ("A10", "ipu", "Mk2 hardware, SDK 2.2-3.1"),
]
FIGURES = [
    ("total", "Total cycles"),
    ("compute", "compute cycles (including idle threads)"),
    ("compute_busy", "compute cycles (excluding idle threads)"),
    ("exchange", "IPU exchange cycles"),
    ("host", "host exchange cycles"),
    ("sync", "sync cycles"),
]
MK1_TILES = 1216


def number(text):
    m = re.match(r"\s*([\d,]+(?:\.\d+)?)", text)
    return float(m.group(1).replace(",", "")) if m else None


def parse(text):
    """Tile averages of an Execution section, any of the three layouts."""
    out = {}
    for line in text.splitlines():
        if ":" not in line:
            continue
        label, _, value = line.strip().partition(":")
        v = number(value)
        if v is None:
            continue
        for key, tail in FIGURES:
            if key == "total" and label == "Total cycles":
                out[key] = v
            elif key != "total" and label.endswith(tail):
                out[key] = v / MK1_TILES if label.startswith("Total ") else v
    return out


def run_tut7(binary, device):
    r = subprocess.run([binary, "10000", "1000", "--device", device], capture_output=True, text=True)
    if r.returncode != 0 or "Multiplication result OK" not in r.stdout:
        sys.exit(f"tut7_published.py: {binary} --device {device} failed (exit {r.returncode}):\n{r.stderr}")
    return parse(r.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tut7", required=True, help="the tut7_sample binary")
    ap.add_argument("--published", default=os.path.join(ROOT, "..", "shared", "corpus", "published"))
    args = ap.parse_args()
    files = {f[:3]: os.path.join(args.published, f) for f in os.listdir(args.published)}
    ours = {}
    for prefix, device, what in RUNS:
        if prefix not in files:
            sys.exit(f"tut7_published.py: no {prefix}_* file in {args.published}")
        published = parse(open(files[prefix]).read())
        if device not in ours:
            ours[device] = run_tut7(args.tut7, device)
        print(f"\n{prefix} ({what}) vs tut7_sample 10000 1000 --device {device}\n")
        print("| figure (tile average) | published | tileprof | tileprof / published |")
        print("| --- | ---: | ---: | ---: |")
        for key, label in FIGURES:
            p, t = published.get(key), ours[device].get(key)
            if p is None or t is None:
                continue
            ratio = f"{t / p:.2f}" if p else "-"
            print(f"| {label} | {p:,.1f} | {t:,.1f} | {ratio} |")


if __name__ == "__main__":
    main()
