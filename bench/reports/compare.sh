#!/usr/bin/env bash
# Report codec figures (issue 7), in one run:
#   * write and read times of the compilation report of a large module (the
#     2 MB corpus dump, 9,468 instructions) compiled for ipu2 (1,472 tiles),
#     in each format: text, JSON, CBOR, SQLite (report_bench formats; best of
#     3, each read checked against what was written);
#   * a generated 256 MiB JSON report (64 IPUs x 1,472 tiles, variables,
#     tile-level execution steps) read by the streaming reader, timed by
#     hyperfine in the same run as `python3 -c 'import json; json.load(...)'`
#     (goal: faster than Python), with peak RSS from /usr/bin/time -v (goal:
#     under 1.5x the file size).
# Usage: bench/reports/compare.sh [BUILD_DIR] [MIB]   (defaults: build, 256)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-"$root/build"}
mib=${2:-256}
bench="$build/bench/reports/report_bench"
model="$root/../shared/corpus/hlo/1648647409115717.module_0337.jit_loss.9581.before_optimizations.txt"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== 1,472-tile report of a large module, each format (best of 3)"
"$bench" formats "$model" 3

echo
echo "== Streaming read of a generated ${mib} MiB JSON report"
big="$work/report.json"
"$bench" generate "$big" "$mib"
hyperfine -N --warmup 1 --min-runs 3 --export-json "$work/times.json" \
  -n "tileprof read" "$bench read $big" \
  -n "python json.load" "python3 -c 'import json; json.load(open(\"$big\"))'" >/dev/null
python3 - "$work/times.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
t, p = r["tileprof read"], r["python json.load"]
for name, x in (("tileprof read", t), ("python json.load", p)):
    print(f"{name:17} {x['mean']:7.2f} s +- {x['stddev']:.2f}  (user {x['user']:.2f} s, system {x['system']:.2f} s)")
print(f"python / tileprof: {p['mean'] / t['mean']:.2f}x wall, {(p['user'] + p['system']) / (t['user'] + t['system']):.2f}x CPU")
PY
bytes=$(stat -c %s "$big")
for name in tileprof python; do
  if [ $name = tileprof ]; then cmd=("$bench" read "$big"); else cmd=(python3 -c "import json; json.load(open('$big'))"); fi
  kb=$(/usr/bin/time -v "${cmd[@]}" 2>&1 >/dev/null | awk -F': ' '/Maximum resident/ {print $2}')
  python3 -c "import sys; kb,b=map(int,sys.argv[1:3]); print(f'{sys.argv[3]:17} peak RSS {kb/1024:8.1f} MiB = {kb*1024/b:4.2f}x the {b/1048576:.1f} MiB file')" "$kb" "$bytes" "$name"
done
