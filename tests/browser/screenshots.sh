#!/usr/bin/env bash
# The screenshots of docs/view/: `tileprof view` pages of the demo's MNIST
# run (and compiled for 2 IPUs), samples/oom, a Compare of MNIST with the
# same step on half the tiles and one with the step run for ipu21 (as many
# tiles), each view at 1280x800 in headless Chromium (screenshots.mjs).
# Usage: tests/browser/screenshots.sh TILEPROF OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tileprof=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$(mkdir -p "$2" && cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
echo '{"json_report": "report.json", "profile_execution": "tile"}' > run.json
mkdir mnist half ipu21 ipus oom
inputs=$(/usr/bin/python3 "$root/samples/mnist/make_data.py" "$work/data")
(cd mnist && "$tileprof" run "$root/samples/mnist/mnist.hlo" --config ../run.json -o r.rep $inputs >/dev/null)
(cd half && "$tileprof" run "$root/samples/mnist/mnist.hlo" --tiles-per-ipu 736 --config ../run.json \
   -o r.rep $inputs >/dev/null)
(cd ipu21 && "$tileprof" run "$root/samples/mnist/mnist.hlo" --target ipu21 --config ../run.json \
   -o r.rep $inputs >/dev/null)
(cd ipus && "$tileprof" compile "$root/samples/mnist/mnist.hlo" --ipus 2 --progress=false \
   --config <(echo '{"json_report": "report.json"}') -o r.rep >/dev/null)
(cd oom && "$tileprof" compile "$root/samples/oom/model.hlo" --target ipu1 --allow-out-of-memory \
   --progress=false --config <(echo '{"json_report": "report.json"}') -o r.rep >/dev/null)
"$tileprof" view mnist/report.json -o mnist.html >/dev/null
"$tileprof" view oom/report.json -o oom.html >/dev/null
"$tileprof" view mnist/report.json --compare half/report.json -o compare.html >/dev/null
"$tileprof" view mnist/report.json --compare ipu21/report.json -o compare21.html >/dev/null
"$tileprof" view ipus/report.json -o ipus.html >/dev/null
node "$here/screenshots.mjs" "$work" "$out"
