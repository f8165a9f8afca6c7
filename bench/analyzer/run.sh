#!/usr/bin/env bash
# Times every analyzer command on a generated 64-IPU (94,208-tile) report in
# each format (text, JSON, CBOR, SQLite), and `tileprof archive` on the
# report's per-tile archive. Goal: under 1 s each; the SQLite and CBOR paths
# faster than JSON. Prints the best of three wall-clock runs, in seconds.
#   bench/analyzer/run.sh [BUILD_DIR]   (default: build)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
tileprof=$build/cli/tileprof
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$build/bench/analyzer/make_analyzer_report" --ipus 64 --tiles-per-ipu 1472 bench64
ls -l bench64.* | awk '{printf "  %-12s %12d bytes\n", $9, $5}'

# "wall/cpu" seconds of the run with the smallest wall time, of three: on a
# shared machine the CPU time (user + sys) is the steadier figure.
best() {
  local best="" pair wall cpu
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %U %S" -o time.txt "$@" >/dev/null 2>&1 || true
    read -r wall user sys < <(tail -n 1 time.txt)
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    if [[ -z "$best" ]] || awk -v a="$wall" -v b="$best" 'BEGIN { exit !(a < b) }'; then
      best=$wall
      pair="$wall/$cpu"
    fi
  done
  printf "%s" "$pair"
}

printf "\n%-36s %10s %10s %10s %10s\n" "command (wall/cpu s)" text json cbor sqlite
for cmd in "hist" "hist --format=json" "hist --bucket-kb 32" "top" "top -n 20 --format=csv" "oom" \
           "compare SELF" "plot -o out.svg" "plot --kind histogram -o out.svg" \
           "plot --kind categories -o out.svg" "html -o out.html"; do
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
