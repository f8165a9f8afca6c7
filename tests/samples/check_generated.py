#!/usr/bin/python3
"""Checks that a committed sample module equals its generator's output.

Usage: check_generated.py GENERATOR COMMITTED [GENERATOR ARGS...]
The samples' .hlo files are generated (samples/*/gen_*.py); editing one by
hand, or changing a generator without regenerating, fails this test with the
first differing lines and the command that regenerates the file.
"""

import difflib
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    generator, committed = sys.argv[1], sys.argv[2]
    r = subprocess.run([sys.executable, generator] + sys.argv[3:], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"{generator} failed (exit {r.returncode}):\n{r.stderr}")
        return 1
    with open(committed, encoding="utf-8") as f:
        want = f.read()
    if r.stdout == want:
        print(f"{committed} equals the output of {generator}")
        return 0
    diff = difflib.unified_diff(want.splitlines(), r.stdout.splitlines(), committed, "generator output", lineterm="")
    for i, line in enumerate(diff):
        if i == 40:
            print("...")
            break
        print(line[:200])
    print(f"{committed} differs from its generator; regenerate with: {generator} -o {committed}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
