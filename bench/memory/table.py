#!/usr/bin/python3
"""The memory table of docs/memory-model.md: each module's peak-live bound
against the total its compiled report gives.

For every HLO module given (default: the corpus ../shared/corpus/hlo and
the samples), compiles it with `tileprof compile --allow-out-of-memory` for
the target and reads the report back from its SQLite profile: the total
excluding gaps and the tiles whose excluding-gaps total exceeds the tile's
memory. The bound comes from `tileprof hlo stats --format=json`. The goal
(issue 23): total <= 1.5 x bound + 48 KiB x tiles, and no tile out of memory
when the bound is under 60% of the target's memory.

Usage: table.py [--tileprof build/cli/tileprof] [--target ipu2]
                [--update docs/memory-model.md] [MODULE ...]
Prints a markdown table (and, with --update, replaces the one between the
markers in that file). Exits 1 if any module misses the goal.
"""

import argparse
import glob
import json
import os
import re
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BEGIN, END = "<!-- memory-table:begin -->", "<!-- memory-table:end -->"
SLACK_PER_TILE = 48 * 1024


def default_modules():
    corpus = sorted(glob.glob(os.path.join(ROOT, "..", "shared", "corpus", "hlo", "*")))
    corpus = [m for m in corpus if not m.endswith((".md", ".tsv"))]
    samples = sorted(glob.glob(os.path.join(ROOT, "samples", "**", "*.hlo"), recursive=True))
    return corpus + samples


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def measure(tileprof, target, module, workdir):
    stats = run([tileprof, "hlo", "stats", "--format=json", module])
    if stats.returncode != 0:
        return {"module": module, "error": stats.stderr.strip().splitlines()[-1:]}
    entries = json.loads(stats.stdout)
    sources = [module]
    if len(entries) > 1:
        # `tileprof compile` takes one module a file: the modules of a file
        # split with '// -----' (XLA's test files) are compiled one by one.
        with open(module) as f:
            parts = [p for p in re.split(r"^// -{5,}.*$", f.read(), flags=re.M) if "HloModule" in p]
        if len(parts) != len(entries):
            return {"module": module, "error": f"{len(entries)} modules, {len(parts)} parts"}
        sources = []
        for i, part in enumerate(parts):
            sources.append(os.path.join(workdir, f"part{i}.hlo"))
            with open(sources[-1], "w") as f:
                f.write(part)
    rows = []
    for i, entry in enumerate(entries):
        db = os.path.join(workdir, f"m{i}.db")
        if os.path.exists(db):
            os.remove(db)
        cmd = [tileprof, "compile", sources[i], "--target", target, "--allow-out-of-memory",
               "-o", os.path.join(workdir, "r.rep"), "--profile-db", db, "--progress=false"]
        start = time.monotonic()
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        done = run(cmd)
        seconds = time.monotonic() - start
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        row = {"module": module if len(entries) == 1 else f"{module} #{i + 1} ({entry['module']})",
               "bound": entry["peak_live_bytes"], "seconds": seconds,
               "rss_mb": rss / 1024 if rss > before else None}
        if not os.path.exists(db):
            lines = (done.stderr or done.stdout).strip().splitlines()
            row["error"] = lines[-1] if lines else f"exit {done.returncode}"
            rows.append(row)
            continue
        con = sqlite3.connect(db)
        per_tile = con.execute("SELECT bytes_per_tile, total_tiles FROM target").fetchone()
        total, oom = con.execute(
            "SELECT SUM(excluding_gaps), SUM(excluding_gaps > ?) FROM tiles",
            (per_tile[0],)).fetchone()
        con.close()
        row.update({"total": total or 0, "oom": oom or 0, "tiles": per_tile[1],
                    "capacity": per_tile[0] * per_tile[1]})
        rows.append(row)
    return rows


def verdict(row):
    if "error" in row:
        return False
    limit = 1.5 * row["bound"] + SLACK_PER_TILE * row["tiles"]
    fits_goal = row["bound"] >= 0.6 * row["capacity"] or row["oom"] == 0
    return row["total"] <= limit and fits_goal


def mb(n):
    return f"{n / 1e6:,.1f}"


def table(rows):
    out = ["| module | bound (MB) | total (MB) | total / bound | limit (MB) | tiles OOM | goal |",
           "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for row in rows:
        name = os.path.basename(row["module"])
        if "error" in row:
            out.append(f"| {name} | {mb(row.get('bound', 0))} | error: {row['error']} | | | | no |")
            continue
        limit = 1.5 * row["bound"] + SLACK_PER_TILE * row["tiles"]
        ratio = row["total"] / row["bound"] if row["bound"] else float("inf")
        out.append(f"| {name} | {mb(row['bound'])} | {mb(row['total'])} | {ratio:,.2f} | "
                   f"{mb(limit)} | {row['oom']:,} | {'yes' if verdict(row) else 'no'} |")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tileprof", default=os.path.join(ROOT, "build", "cli", "tileprof"))
    parser.add_argument("--target", default="ipu2")
    parser.add_argument("--update", help="markdown file whose table to replace")
    parser.add_argument("modules", nargs="*")
    args = parser.parse_args()
    modules = args.modules or default_modules()
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for module in modules:
            result = measure(args.tileprof, args.target, module, workdir)
            for row in result if isinstance(result, list) else [result]:
                rows.append(row)
                print(f"{os.path.basename(row['module'])}: "
                      f"{'error ' + str(row['error']) if 'error' in row else 'ok'}", file=sys.stderr)
    text = table(rows)
    print(text)
    if args.update:
        with open(args.update) as f:
            doc = f.read()
        if BEGIN not in doc or END not in doc:
            sys.exit(f"{args.update}: no {BEGIN} ... {END} markers")
        head, rest = doc.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        with open(args.update + ".tmp", "w") as f:
            f.write(head + BEGIN + "\n" + text + "\n" + END + tail)
        os.replace(args.update + ".tmp", args.update)
    return 0 if all(verdict(r) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
