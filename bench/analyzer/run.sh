#!/usr/bin/env bash
# Times every analyzer command on a generated 64-IPU (94,208-tile) report in
# each format (text, JSON, CBOR, SQLite), and `tileprof archive` on the
# report's per-tile archive. Goal: under 1 s each; the SQLite and CBOR paths
# faster than JSON. Prints the best of three wall-clock runs, in seconds.
#   bench/analyzer/run.sh [BUILD_DIR]   (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
tileprof=$build/cli/tileprof
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$build/bench/analyzer/make_analyzer_report" --ipus 64 --tiles-per-ipu 1472 bench64
ls -l bench64.* | awk '{printf "  %-12s %12d bytes\n", $9, $5}'

# "wall/cpu" seconds of the best of three runs (bench/timing.sh).
source "$here/../timing.sh"
best() {
  local wall cpu
  read -r wall cpu < <(best_of_three "$@")
  printf "%s/%s" "$wall" "$cpu"
}

printf "\n%-36s %10s %10s %10s %10s\n" "command (wall/cpu s)" text json cbor sqlite
for cmd in "hist" "hist --format=json" "hist --bucket-kb 32" "top" "top -n 20 --format=csv" "oom" \
           "compare SELF" "plot -o out.svg" "plot --kind histogram -o out.svg" \
           "plot --kind categories -o out.svg" "view -o out.html"; do
  row=""
  for ext in rep json cbor db; do
    read -ra words <<<"${cmd/SELF/bench64.$ext}"
    row+=$(printf " %10s" "$(best "$tileprof" "${words[0]}" "bench64.$ext" "${words[@]:1}")")
  done
  printf "%-36s%s\n" "$cmd" "$row"
done
printf "%-36s %10s\n" "archive bench64.a" "$(best "$tileprof" archive bench64.a)"
printf "%-36s %10s\n" "archive bench64.a --format=json" "$(best "$tileprof" archive bench64.a --format=json)"
printf "%-36s %10s\n" "GNU size -A bench64.a | grep | awk" "$(best sh -c 'size -A bench64.a | grep -e ".text" | awk "{print \$2}"')"
