#!/usr/bin/env bash
# Throughput of `tileprof logscan` on a large log, against `grep -c` of the
# same file. Goal: at least 200 MB/s.
#
# The log is built from the published logs (../shared/corpus/published/B*,
# tests/analyzer/data/published/L*): 4 MB runs of their ordinary lines
# (Poplar DEBUG/TRACE engine lines, TensorFlow INFO lines, Keras progress
# lines, PopTorch warnings) with one block of their compilation lines after
# each run, the shape of a long DEBUG-level training log: a few thousand
# compilations (3,000 in 1 GB) in a sea of lines logscan must skip.
#   bench/logscan/run.sh [BUILD_DIR] [SIZE_MB]   (defaults: build, 1024)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-build}" && pwd)
size_mb=${2:-1024}
tileprof=$build/cli/tileprof
shared=$root/../shared/corpus/published
ours=$root/tests/analyzer/data/published
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# Ordinary lines: the published lines no rule of logscan takes (checked below
# by scanning the run alone), repeated to 4 MB.
grep -h -v -e 'phase:' -e 'ompil' -e 'attached to' -e 'Poplar version' -e 'Elapsed' \
  "$shared"/B01_* "$shared"/B02_* "$shared"/B04_* "$shared"/B06_* "$shared"/B07_* \
  | grep -v 'poplar_compiler.cc' >lines.txt
: >run.log
while (($(stat -c %s run.log) < 4194304)); do cat lines.txt >>run.log; done
# Compilation lines: TensorFlow's bar (B02), JAX (L04), Poplar phases (B01),
# PopTorch (L02).
cat "$shared"/B02_* "$ours"/L04_* "$shared"/B01_* "$ours"/L02_* >events.log
runs=$((size_mb * 1048576 / ($(stat -c %s run.log) + $(stat -c %s events.log))))
for ((i = 0; i < runs; ++i)); do cat run.log events.log; done >big.log
bytes=$(stat -c %s big.log)
printf "log: %d bytes (%d runs of %d + %d bytes), %d lines\n" "$bytes" "$runs" \
  "$(stat -c %s run.log)" "$(stat -c %s events.log)" "$(wc -l <big.log)"
"$tileprof" logscan --format=json run.log >quiet.json
quiet=$(grep -c '"module"' quiet.json || true)
echo "builds found in one run of ordinary lines alone: $quiet (expected 0)"

source "$root/bench/timing.sh"
rate() { awk -v b="$bytes" -v s="$1" 'BEGIN { if (s > 0) printf "%.0f", b / 1e6 / s; else print "inf" }'; }

cat big.log >/dev/null  # into the page cache, for both
read -r lw lc < <(best_of_three "$tileprof" logscan --format=json big.log)
"$tileprof" logscan --format=json big.log >scan.json
summary=$(grep -m1 '"compilations"' scan.json)
read -r gw gc < <(best_of_three grep -c 'Compiling module' big.log)
printf "%-40s %8s %8s %10s\n" "command" "wall s" "cpu s" "MB/s"
printf "%-40s %8s %8s %10s\n" "tileprof logscan --format=json" "$lw" "$lc" "$(rate "$lw")"
printf "%-40s %8s %8s %10s\n" "grep -c 'Compiling module'" "$gw" "$gc" "$(rate "$gw")"
echo "logscan found:$summary (expected $((runs * 12)) compilations: 2 + 8 + 1 + 1 per block)"
