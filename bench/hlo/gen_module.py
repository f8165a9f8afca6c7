#!/usr/bin/env python3
"""Writes one large, valid HLO module built from a real XLA dump.

Usage: gen_module.py SOURCE.hlo TARGET_MB OUT.hlo

Every computation of SOURCE (a single-module dump) is copied K times with its
name, and every reference to it, given a `_cK` suffix; the copies' ENTRY
becomes an ordinary computation, so the result is one module whose text has
the shape of real dumps (metadata, constants, fusions, while loops), with the
original entry last. The parse benchmark uses it for the 100 MB figure.
"""
import re
import sys

source, target_mb, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
text = open(source).read()
header_end = text.index("\n") + 1
header, body = text[:header_end], text[header_end:]
names = re.findall(r"^(?:ENTRY )?%?([\w.\-]+)\s*[({]", body, re.M)
assert names, "no computations found"
pattern = re.compile(r"(?<![\w.\-%])(%?)(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + r")(?![\w.\-])")


def copy(k):
    def rename(m):
        return m.group(1) + m.group(2) + f"_c{k}"
    # Only computation headers and call sites name computations; instructions
    # have their own (per-computation) names, which may clash with a
    # computation name, so rename just those places.
    lines = []
    for line in body.splitlines(keepends=True):
        if re.match(r"^(ENTRY )?%?[\w.\-]+\s*[({]", line):
            line = pattern.sub(rename, line.replace("ENTRY ", "", 1), count=1)
        elif re.search(r"(to_apply|calls|body|condition|branch_computations|called_computations)=", line):
            line = re.sub(r"((?:to_apply|calls|body|condition|true_computation|false_computation)=)(%?)([\w.\-]+)",
                          lambda m: m.group(1) + m.group(2) + m.group(3) + f"_c{k}", line)
            line = re.sub(r"((?:branch_computations|called_computations)=\{)([^}]*)(\})",
                          lambda m: m.group(1) + ", ".join(n.strip() + f"_c{k}" for n in m.group(2).split(",")) + m.group(3),
                          line)
        elif re.search(r"(true_computation|false_computation)=", line):
            line = re.sub(r"((?:true_computation|false_computation)=)(%?)([\w.\-]+)",
                          lambda m: m.group(1) + m.group(2) + m.group(3) + f"_c{k}", line)
        lines.append(line)
    return "".join(lines)


target = int(target_mb * 1024 * 1024)
copies = max(0, target // len(body) - 1)
with open(out + ".tmp", "w") as f:
    f.write(header)
    for k in range(copies):
        f.write(copy(k))
        f.write("\n")
    f.write(body)
import os
os.replace(out + ".tmp", out)
print(f"{out}: {os.path.getsize(out):,} bytes, {copies} renamed copies plus the original", file=sys.stderr)
