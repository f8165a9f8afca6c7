#!/usr/bin/python3
"""The schedule of engine/compiler/lower_sort_spread.cc sorts: P blocks of
equal length (the last may be shorter), each sorted, then P rounds of
merge-split, round r pairing blocks (i, i + 1) for i = r mod 2. The schedule
is oblivious, so by the 0-1 principle it sorts every input if it sorts every
input of 0s and 1s; this checks all of them for up to 5 blocks of up to 3
elements, and that blocks of unequal lengths elsewhere would not do (the
reason the compiler makes them equal)."""
import itertools
import sys


def spread_sort(values, sizes):
    blocks, at = [], 0
    for size in sizes:
        blocks.append(sorted(values[at:at + size]))
        at += size
    for r in range(len(blocks)):
        for a in range(r % 2, len(blocks) - 1, 2):
            merged = sorted(blocks[a] + blocks[a + 1])
            blocks[a], blocks[a + 1] = merged[:len(blocks[a])], merged[len(blocks[a]):]
    return [v for b in blocks for v in b]


def sorts_every_01_input(sizes):
    n = sum(sizes)
    return all(spread_sort(list(bits), sizes) == sorted(bits)
               for bits in itertools.product((0, 1), repeat=n))


def main():
    checked = 0
    for blocks in range(1, 6):
        for size in range(1, 4):
            for last in range(1, size + 1):
                sizes = [size] * (blocks - 1) + [last]
                if not sorts_every_01_input(sizes):
                    print(f"merge_split_check: blocks {sizes} are not sorted", file=sys.stderr)
                    return 1
                checked += 1
    # A short block in the middle breaks it: the check can fail.
    if sorts_every_01_input([5, 1, 5]):
        print("merge_split_check: blocks [5, 1, 5] should not sort every input", file=sys.stderr)
        return 1
    print(f"merge_split_check: {checked} block layouts sort every 0-1 input")
    return 0


if __name__ == "__main__":
    sys.exit(main())
