#!/usr/bin/env bash
# Times `tileprof size -A` against GNU `size -A` and `llvm-size -A` in one
# hyperfine run (../shared/spec/size-sysv.md section 9), after checking that
# the candidate's stdout and exit code equal GNU's on every input.
#
# usage: bench/size/compare.sh [TILEPROF_BINARY]
#   TILEPROF_BINARY  default: build/cli/tileprof. A binary named tileprof* is
#                    run as `BINARY size -A`; any other binary as `BINARY -A`,
#                    so `compare.sh /usr/bin/size` checks this script's plumbing.
# environment:
#   RUNS=N               hyperfine --runs (default: hyperfine's own choice)
#   TILE_ARCHIVE_BENCH   the tile_archive_bench binary (default: found next to
#                        the candidate's build tree, or under build*/)
#   TILEPROF_SHARED_DIR  the shared/ folder (default: ../shared beside the repo)
#
# Inputs: the largest .a under /usr/lib, libc.a, and synthetic per-tile
# archives of 1,472, 5,888 and 23,552 members written by
# shared/corpus/elf/mkbench.py (all sections NOBITS) into a temporary folder.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
candidate=${1:-$root/build/cli/tileprof}
shared=${TILEPROF_SHARED_DIR:-$root/../shared}
mkbench=$shared/corpus/elf/mkbench.py
gnu_size=/usr/bin/size

die() { echo "compare.sh: $*" >&2; exit 1; }

command -v hyperfine > /dev/null || die "hyperfine is not installed"
command -v python3 > /dev/null || die "python3 is not installed"
[[ -x $gnu_size ]] || die "GNU size ($gnu_size) is not installed"
[[ -f $mkbench ]] || die "mkbench.py not found at $mkbench (set TILEPROF_SHARED_DIR)"
[[ -x $candidate ]] || die "candidate '$candidate' is not an executable (build tileprof first)"
llvm_size=$(command -v llvm-size || true)

case "$(basename "$candidate")" in
  tileprof*)
    "$candidate" size --help > /dev/null 2>&1 ||
      die "'$candidate size --help' failed: this tileprof has no working 'size' subcommand yet"
    candidate_cmd=("$candidate" size -A)
    ;;
  *) candidate_cmd=("$candidate" -A) ;;
esac
candidate_line="'$candidate' ${candidate_cmd[*]:1}"  # for hyperfine, quoted
candidate_name=$(basename "$candidate")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tileprof_size_bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Inputs, with a label each.
inputs=()
labels=()
add_input() { inputs+=("$1"); labels+=("$2"); }
largest=$(find /usr/lib -name '*.a' -type f -printf '%s\t%p\n' 2> /dev/null | sort -n | tail -1 |
  cut -f2-)
libc=/usr/lib/x86_64-linux-gnu/libc.a
[[ -n $largest ]] && add_input "$largest" "$(basename "$largest") (largest .a)"
if [[ -f $libc && $libc != "$largest" ]]; then add_input "$libc" "libc.a"; fi
for n in 1,472 5,888 23,552; do  # one, four and sixteen ipu2s
  python3 "$mkbench" "${n/,/}" "$tmp/tiles${n/,/}.a"
  add_input "$tmp/tiles${n/,/}.a" "synthetic $n tiles (NOBITS)"
done

# 1. Correctness first: the candidate must print exactly what GNU prints.
for i in "${!inputs[@]}"; do
  in=${inputs[$i]}
  gnu_rc=0; "$gnu_size" -A "$in" > "$tmp/gnu.out" 2> /dev/null || gnu_rc=$?
  cand_rc=0; "${candidate_cmd[@]}" "$in" > "$tmp/cand.out" 2> "$tmp/cand.err" || cand_rc=$?
  if ! cmp -s "$tmp/gnu.out" "$tmp/cand.out" || [[ $gnu_rc != "$cand_rc" ]]; then
    echo "MISMATCH on ${labels[$i]} ($in): exit $cand_rc (GNU $gnu_rc)" >&2
    diff "$tmp/gnu.out" "$tmp/cand.out" | head -20 >&2 || true
    head -5 "$tmp/cand.err" >&2
    die "${candidate_cmd[*]} differs from GNU size -A; not timing a wrong answer"
  fi
done
echo "stdout and exit code identical to GNU size -A on ${#inputs[@]} inputs" >&2

# 2. One hyperfine run over every tool and input. -N runs without a shell, so
# process start-up is not inflated by /bin/sh.
args=(--warmup 3 -N --export-json "$tmp/hyperfine.json" --style basic)
[[ -n ${RUNS:-} ]] && args+=(--runs "$RUNS")
for i in "${!inputs[@]}"; do
  q="'${inputs[$i]}'"
  args+=(--command-name "GNU size: ${labels[$i]}" "$gnu_size -A $q")
  [[ -n $llvm_size ]] && args+=(--command-name "llvm-size: ${labels[$i]}" "$llvm_size -A $q")
  args+=(--command-name "$candidate_name: ${labels[$i]}" "$candidate_line $q")
done
hyperfine "${args[@]}" >&2

# 3. The table.
{
  for i in "${!inputs[@]}"; do
    members=$(ar t "${inputs[$i]}" | wc -l)
    bytes=$(stat -L -c %s "${inputs[$i]}")
    printf '%s\t%s\t%s\t%s\n' "$i" "${labels[$i]}" "$members" "$bytes"
  done
} > "$tmp/inputs.tsv"
python3 - "$tmp/hyperfine.json" "$tmp/inputs.tsv" "$candidate_name" << 'EOF'
import json, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
cand = sys.argv[3]
def ms(key):
    r = results.get(key)
    return None if r is None else r["mean"] * 1000
def cell(v, fmt):
    return "-" if v is None else fmt.format(v)
head = ["input", "members", "bytes", "GNU ms", "llvm ms", f"{cand} ms",
        f"GNU/{cand}", f"llvm/{cand}", "us/member"]
rows = []
for line in open(sys.argv[2]):
    i, label, members, size = line.rstrip("\n").split("\t")
    g, l, c = ms(f"GNU size: {label}"), ms(f"llvm-size: {label}"), ms(f"{cand}: {label}")
    rows.append([label, f"{int(members):,}", f"{int(size):,}", cell(g, "{:.1f}"),
                 cell(l, "{:.1f}"), cell(c, "{:.1f}"),
                 cell(g / c if c else None, "{:.2f}"),
                 cell(l / c if (l and c) else None, "{:.2f}"),
                 cell(c * 1000 / int(members) if int(members) else None, "{:.2f}")])
widths = [max(len(r[k]) for r in rows + [head]) for k in range(len(head))]
def show(r):
    cells = [r[0].ljust(widths[0])] + [r[k].rjust(widths[k]) for k in range(1, len(r))]
    print("  ".join(cells))
show(head)
for r in rows:
    show(r)
EOF

# 4. The writer's speed, when its Google Benchmark is built.
bench=${TILE_ARCHIVE_BENCH:-}
if [[ -z $bench ]]; then
  for b in "$(dirname "$candidate")/../bench/size/tile_archive_bench" \
    "$root"/build*/bench/size/tile_archive_bench; do
    if [[ -x $b ]]; then bench=$b; break; fi
  done
fi
if [[ -n $bench && -x $bench ]]; then
  "$bench" --benchmark_filter='BM_BuildTileArchive/tiles:23552/' --benchmark_format=json \
    2> /dev/null > "$tmp/writer.json"
  python3 - "$tmp/writer.json" << 'EOF'
import json, sys
times = {}
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    layout = "by-kind" if b["name"].endswith("by_kind:1") else "total-in-text"
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
    times[layout] = (b["real_time"] * scale, b["archive_bytes"])
print("writer: BuildTileArchive, 23,552 tiles: " + ", ".join(
    f"{t:.2f} ms ({layout}, {int(n):,} bytes)" for layout, (t, n) in sorted(times.items())))
EOF
else
  echo "writer: tile_archive_bench not built (cmake --build BUILD --target tile_archive_bench)"
fi
