#!/usr/bin/env bash
# Writes `tileprof view` pages of the demo's MNIST training step (run,
# profiled per tile; and compiled for 2 IPUs), of samples/oom (out of memory on ipu1) and Compares
# of the MNIST report with the adder's and with the same step on half the
# tiles, then drives them in headless
# Chromium (view_test.mjs), and the MNIST page served by `tileprof view
# --serve 0`. Run by ctest as `browser_view`.
# Usage: tests/browser/view_test.sh TILEPROF [SCREENSHOT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tileprof=$1
[ -d "$here/node_modules/playwright-core" ] ||
  { echo "view_test.sh: playwright-core is not installed (scripts/setup test runs npm ci in tests/browser)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
echo '{"json_report": "report.json", "profile_execution": "tile"}' > run.json
mkdir mnist mnist_half mnist_ipus adder oom
inputs=$(/usr/bin/python3 "$root/samples/mnist/make_data.py" "$work/data")
(cd mnist && "$tileprof" run "$root/samples/mnist/mnist.hlo" --config ../run.json -o report.rep $inputs >/dev/null)
# The same step on half the tiles: every operation has a namesake to compare.
(cd mnist_half && "$tileprof" run "$root/samples/mnist/mnist.hlo" --tiles-per-ipu 736 \
   --config ../run.json -o report.rep $inputs >/dev/null)
# Two IPUs: the Liveness view charts each.
(cd mnist_ipus && "$tileprof" compile "$root/samples/mnist/mnist.hlo" --ipus 2 --progress=false \
   --config <(echo '{"json_report": "report.json"}') -o report.rep >/dev/null)
(cd adder && "$tileprof" run "$root/samples/adder.hlo" --config ../run.json -o report.rep >/dev/null)
(cd oom && "$tileprof" compile "$root/samples/oom/model.hlo" --target ipu1 --allow-out-of-memory \
   --progress=false --config <(echo '{"json_report": "report.json"}') -o report.rep >/dev/null)
"$tileprof" view mnist/report.json -o mnist.html >/dev/null
"$tileprof" view oom/report.json -o oom.html >/dev/null
"$tileprof" view mnist_ipus/report.json -o mnist_ipus.html >/dev/null
"$tileprof" view oom/report.rep -o oom_text.html >/dev/null
"$tileprof" view mnist/report.json --compare adder/report.json -o compare.html >/dev/null
"$tileprof" view mnist/report.json --compare mnist_half/report.json -o compare_half.html >/dev/null
SCREENSHOTS=${2:-} node "$here/view_test.mjs" --serve "$tileprof" mnist/report.json \
  mnist.html oom.html oom_text.html compare.html compare_half.html mnist_ipus.html
