#!/usr/bin/python3
"""Times the Python API on a generated 64-IPU (94,208-tile) report
(bench/analyzer/make_analyzer_report), in each per-tile format. Goals
(issue 28): tileprof.open_report of the SQLite report <= 1 s; the libpva
comprehension [t.memory.total.excludingGaps for t in report.compilation.tiles]
<= 0.5 s. Prints the best of three runs, in seconds.

    bench/python/run.py [BUILD_DIR]   (default: build)
"""

import pathlib
import subprocess
import sys
import tempfile
import time

build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build").resolve()
sys.path.insert(0, str(build / "python"))
import tileprof  # noqa: E402
import tileprof.pva as pva  # noqa: E402


def best_of_three(f):
    times = []
    for _ in range(3):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times)


with tempfile.TemporaryDirectory() as work:
    prefix = pathlib.Path(work) / "bench64"
    subprocess.run([build / "bench" / "analyzer" / "make_analyzer_report", "--ipus", "64",
                    "--tiles-per-ipu", "1472", prefix], check=True, stdout=subprocess.DEVNULL)
    print(f"{'94,208 tiles (best of 3, s)':44} {'json':>8} {'cbor':>8} {'sqlite':>8}")
    rows = {
        "tileprof.open_report": lambda p: tileprof.open_report(p),
        "open_report + tiles.excluding_gaps.max()": lambda p: tileprof.open_report(p).tiles.excluding_gaps.max(),
    }
    for name, f in rows.items():
        cells = [best_of_three(lambda: f(str(prefix) + ext)) for ext in (".json", ".cbor", ".db")]
        print(f"{name:44}" + "".join(f" {c:8.3f}" for c in cells))
    # The comprehension on a freshly opened report, so that it includes
    # building the tile objects (the open itself is the row above).
    times = []
    for _ in range(3):
        report = pva.openReport(str(prefix) + ".db")
        start = time.perf_counter()
        [t.memory.total.excludingGaps for t in report.compilation.tiles]
        times.append(time.perf_counter() - start)
    print(f"{'[t.memory.total.excludingGaps for t in tiles]':44} {'':8} {'':8} {min(times):8.3f}")
