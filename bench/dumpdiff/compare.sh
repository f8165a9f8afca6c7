#!/usr/bin/env bash
# Times `tileprof dumpdiff` against GNU diff on the 2 MB corpus dump and a copy
# of it with one printed constant changed, in one hyperfine run, and prints
# the ratio. Goal: no slower than 2x diff (which shows lines and explains
# nothing). Usage: bench/dumpdiff/compare.sh [TILEPROF_BINARY]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tileprof=${1:-"$root/build/cli/tileprof"}
corpus="$root/../shared/corpus/hlo"
input="$corpus/1648647409115717.module_0337.jit_loss.9581.before_optimizations.txt"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cp "$input" "$work/a.txt"
# Change the first scalar f32 constant that has a printed value (b.txt; it
# lies in a 196 KB loop body) and, for the worst case of dumpdiff's skipping
# of computations that are the same bytes, the first one in the 776 KB
# entry computation (entry.txt).
python3 - "$input" "$work/b.txt" "$work/entry.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def change(out, start):
    m = re.compile(r'(= f32\[\] constant\()([^)]*)(\))').search(text, start)
    assert m, "no scalar f32 constant"
    value = "7" if m.group(2) != "7" else "9"
    open(out, "w").write(text[:m.start(2)] + value + text[m.end(2):])
    print(f"changed constant {m.group(2)} -> {value} at offset {m.start(2)}", file=sys.stderr)
change(sys.argv[2], 0)
change(sys.argv[3], text.index("\nENTRY "))
PY

"$tileprof" dumpdiff "$work/a.txt" "$work/b.txt" > "$work/explain.txt" || [ $? -eq 1 ]
grep -q "constant '" "$work/explain.txt" || { echo "dumpdiff did not name the constant" >&2; cat "$work/explain.txt" >&2; exit 1; }

hyperfine --warmup 3 --min-runs 20 -N --export-json "$work/times.json" \
  -n diff "diff $work/a.txt $work/b.txt" \
  -n dumpdiff "$tileprof dumpdiff $work/a.txt $work/b.txt" \
  -n diff-entry "diff $work/a.txt $work/entry.txt" \
  -n dumpdiff-entry "$tileprof dumpdiff $work/a.txt $work/entry.txt" \
  --ignore-failure >/dev/null
python3 - "$work/times.json" "$(stat -c %s "$input")" <<'PY'
import json, sys
runs = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
d, t = runs["diff"]["mean"] * 1e3, runs["dumpdiff"]["mean"] * 1e3
print(f"input: {int(sys.argv[2]):,} bytes (2 files)")
print(f"GNU diff:          {d:8.2f} ms")
print(f"tileprof dumpdiff: {t:8.2f} ms   ratio dumpdiff/diff = {t / d:.2f} (goal <= 2.0)")
d, t = runs["diff-entry"]["mean"] * 1e3, runs["dumpdiff-entry"]["mean"] * 1e3
print(f"constant in the entry computation instead: diff {d:.2f} ms, dumpdiff {t:.2f} ms, ratio {t / d:.2f}")
PY
