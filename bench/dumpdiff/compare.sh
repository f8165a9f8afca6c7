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
# Change the first scalar f32 constant that has a printed value.
python3 - "$input" "$work/b.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r'(= f32\[\] constant\()([^)]*)(\))', text)
assert m, "no scalar f32 constant"
value = "7" if m.group(2) != "7" else "9"
open(sys.argv[2], "w").write(text[:m.start(2)] + value + text[m.end(2):])
print(f"changed constant {m.group(2)} -> {value} at offset {m.start(2)}", file=sys.stderr)
PY

"$tileprof" dumpdiff "$work/a.txt" "$work/b.txt" > "$work/explain.txt" || [ $? -eq 1 ]
grep -q "constant '" "$work/explain.txt" || { echo "dumpdiff did not name the constant" >&2; cat "$work/explain.txt" >&2; exit 1; }

hyperfine --warmup 3 --min-runs 20 -N --export-json "$work/times.json" \
  -n diff "diff $work/a.txt $work/b.txt" \
  -n dumpdiff "$tileprof dumpdiff $work/a.txt $work/b.txt" \
  --ignore-failure >/dev/null
python3 - "$work/times.json" "$(stat -c %s "$input")" <<'PY'
import json, sys
runs = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
d, t = runs["diff"]["mean"] * 1e3, runs["dumpdiff"]["mean"] * 1e3
print(f"input: {int(sys.argv[2]):,} bytes (2 files)")
print(f"GNU diff:          {d:8.2f} ms")
print(f"tileprof dumpdiff: {t:8.2f} ms   ratio dumpdiff/diff = {t / d:.2f} (goal <= 2.0)")
PY
