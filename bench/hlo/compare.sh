#!/usr/bin/env bash
# HLO parse throughput and peak memory (issue 3): on the 2 MB corpus dump and
# on a 100 MB module generated from it (gen_module.py), in one run:
#   * hlo_parse_bench: ParseModules alone, MB/s (goal >= 200 MB/s);
#   * `tileprof hlo stats FILE` (read + parse + stats) next to `wc -l FILE`
#     in the same hyperfine run, as a ratio;
#   * peak RSS of `tileprof hlo stats FILE` from /usr/bin/time, as a multiple
#     of the input (goal < 4x), and above the process's own baseline.
# Usage: bench/hlo/compare.sh [BUILD_DIR] [MB]   (defaults: build, 100)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-"$root/build"}
mb=${2:-100}
tileprof="$build/cli/tileprof"
corpus="$root/../shared/corpus/hlo"
small="$corpus/1648647409115717.module_0337.jit_loss.9581.before_optimizations.txt"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
large="$work/generated_${mb}mb.hlo"
python3 "$root/bench/hlo/gen_module.py" "$small" "$mb" "$large"

echo "== ParseModules (Google Benchmark)"
"$build/bench/hlo/hlo_parse_bench" --benchmark_min_time=1 "$small" "$large" 2>/dev/null |
  grep -E '^(Parse|Benchmark)'

echo "== CLI against wc -l (hyperfine, one run)"
hyperfine -N --warmup 2 --min-runs 5 --export-json "$work/times.json" \
  -n "wc small" "wc -l $small" -n "tileprof small" "$tileprof hlo stats $small" \
  -n "wc large" "wc -l $large" -n "tileprof large" "$tileprof hlo stats $large" >/dev/null
python3 - "$work/times.json" <<'PY'
import json, sys
r = {x["command"]: x["mean"] * 1e3 for x in json.load(open(sys.argv[1]))["results"]}
for size in ("small", "large"):
    w, t = r[f"wc {size}"], r[f"tileprof {size}"]
    print(f"{size:5}  wc -l {w:8.2f} ms   tileprof hlo stats {t:8.2f} ms   ratio {t / w:5.2f}")
PY

echo "== Peak memory of tileprof hlo stats"
base=$(/usr/bin/time -f %M "$tileprof" --version 2>&1 >/dev/null | tail -1)
for f in "$small" "$large"; do
  kb=$(/usr/bin/time -f %M "$tileprof" hlo stats "$f" 2>&1 >/dev/null | tail -1)
  bytes=$(stat -c %s "$f")
  python3 -c "import sys; kb,b,base=map(int,sys.argv[1:]); print(f'{b/1e6:8.1f} MB input  peak {kb/1024:8.1f} MiB  = {kb*1024/b:4.2f}x input  ({(kb-base)*1024/b:4.2f}x above the {base/1024:.1f} MiB baseline)')" "$kb" "$bytes" "$base"
done
