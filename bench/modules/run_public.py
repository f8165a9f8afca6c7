#!/usr/bin/python3
"""Runs every HLO module of the public collections on the tile simulator and checks
the ones that run against the NumPy oracle.

    bench/modules/run_public.py --tileprof PATH [--public DIR] [--corpus DIR]
        [--skip-public] [--skip-corpus] [--timeout S] [--compare-timeout S]
        [--no-oracle] [--rtol R --atol A] [--threads N] [--workdir DIR]
        [--markdown FILE] [--only SUBSTRING ...]

Sets (each with its own flag): bench/modules/public (--public, --skip-public)
and ../shared/corpus/hlo relative to the repository root (--corpus,
--skip-corpus). A file that holds several modules (separated by `// -----`
lines, or simply several `HloModule` headers) is split and each module is
run on its own, as `FILE#k`.

Each module: `tileprof run MODULE --outputs DIR -o REPORT` (zero inputs) with
a timeout (--timeout, default 300 s: a 0.9 MB module needs about 4 minutes on a
busy 2-core machine), classified as
  runs           exit 0 (detail: the cycles it printed)
  out of memory  "Out of memory" in the output (detail: Poplar's message, how
                 many tiles are over and the fullest tile, from the report, and
                 the module's custom-call targets: memory is checked before
                 executability, so one the simulator lacks is not reported)
  refused        "cannot run:" (detail: how many instructions, and the first
                 reason line, which names the instruction and its op)
  error          any other failure (detail: the first line of the message)
  timeout        no answer within --timeout seconds
Modules that run are then compared with the oracle:
`tests/oracle/compare.py MODULE --tileprof PATH --workdir FRESH --seed 1
--rounding-reference` (normal floats, integers in [0, 4), random preds; one
fresh workdir per module), giving PASS, PASS (rounding) (each output out of
tolerance has at most 4 times the error of the oracle's own evaluation with
f32 sums: the detail gives both errors),
MISMATCH (the failing leaves), ORACLE-UNSUPPORTED (the
oracle cannot evaluate an op or custom-call target: which), ORACLE-ERROR (the
oracle failed otherwise, or compare.py itself crashed), RANDOM-INPUT-FAILED (tileprof failed on the random
inputs compare.py feeds although it ran on zeros), ORACLE-TIMEOUT or SKIPPED
(compare.py exit 77: the binary has no `run`).

Prints a markdown table (file, module, status, oracle, detail), the refusal
reasons grouped by cause, and a summary line per set and overall with the
counts and the share of modules that run or are out of memory for a stated
reason. --markdown FILE writes the same text to FILE.
"""

import argparse
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
COMPARE = os.path.join(ROOT, "tests", "oracle", "compare.py")
HLO_SUFFIXES = (".hlo", ".hlotxt", ".txt")


def run_limited(cmd, timeout, cwd=None):
    """subprocess.run in its own process group, killed as a group on timeout.
    Returns (returncode or None on timeout, stdout, stderr, seconds)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, errors="replace", start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out, err, time.monotonic() - start
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        return None, out, err, time.monotonic() - start


def split_modules(text):
    """The modules of one file, verbatim: split at `// -----` lines when the file has
    more than one HloModule header (at each header when it has no such lines)."""
    headers = [m.start() for m in re.finditer(r"^[ \t]*HloModule[ \t]", text, re.M)]
    if len(headers) <= 1:
        return [text]
    parts = re.split(r"^//[ \t]*-----[^\n]*\n", text, flags=re.M)
    parts = [p for p in parts if re.search(r"^[ \t]*HloModule[ \t]", p, re.M)]
    if len(parts) == len(headers):
        return parts
    return [text[a:b] for a, b in zip(headers, headers[1:] + [len(text)])]


def module_name(text):
    m = re.search(r"^[ \t]*HloModule[ \t]+([^\s,:]+)", text, re.M)
    return m.group(1) if m else "?"


def first_line(s):
    for line in s.splitlines():
        if line.strip():
            return line.strip()
    return ""


def oom_detail(out, report):
    msg = ""
    for line in out.splitlines():
        if "Out of memory" in line:
            msg = line.strip()
            msg = re.sub(r"^tileprof: run: ", "", msg)
            msg = re.sub(r"\s*Profile saved to: .*$", "", msg)
            break
    extra = []
    try:
        with open(report, encoding="utf-8", errors="replace") as f:
            rep = f.read()
        m = re.search(r"([\d,]+) tile\(s\) out of memory", rep)
        if m:
            extra.append(f"{m.group(1)} tile(s) out of memory")
        m = re.search(r"Maximum \(Including Gaps\):\s*([\d,]+)[^\n]*?on tile (\d+)", rep)
        if m:
            extra.append(f"fullest tile {m.group(2)}: {m.group(1)} B")
        m = re.search(r"Memory Per-Tile:\s*([^\n]+)", rep)
        if m:
            extra.append(f"capacity {m.group(1).strip()} per tile")
    except OSError:
        pass
    return "; ".join([msg] + extra) if extra else msg


def refusal_detail(out):
    lines = [l.strip() for l in out.splitlines() if l.strip()]
    for i, line in enumerate(lines):
        if "cannot run:" in line:
            head = re.sub(r"^.*cannot run:\s*", "", line)
            first = lines[i + 1] if i + 1 < len(lines) else ""
            return head, first
    return "", first_line(out)


def refusal_cause(first):
    """A short cause for grouping refusal reasons."""
    m = re.search(r"\(custom-call ([^)]+)\)", first)
    if m:
        return f"custom-call {m.group(1)}"
    if "elided" in first or "values are unknown" in first:
        return "constant with unknown values (elided {...} or a type without arithmetic)"
    m = re.search(r"\((\S+)\):\s*tileprof::OpaqueOp<([^>]*)>", first)
    if m:
        op, types = m.group(1), m.group(2).split(",")
        return f"{op} {','.join(t.strip() for t in types[1:]) or ''}".strip()
    m = re.search(r"\((\S+)\)", first)
    return m.group(1) if m else first[:80]


def tileprof_run(tileprof, module, work, timeout, threads):
    outdir = os.path.join(work, "outputs")
    report = os.path.join(work, "report.rep")
    cmd = [tileprof, "run", module, "--outputs", outdir, "-o", report]
    if threads:
        cmd += ["--threads", str(threads)]
    rc, out, err, secs = run_limited(cmd, timeout, cwd=work)
    both = out + "\n" + err
    if rc is None:
        return "timeout", f"no answer in {timeout} s", secs
    if "Out of memory" in both:
        return "out of memory", oom_detail(both, report), secs
    if rc == 0:
        m = re.search(r"Cycles:\s*([\d,]+)", out)
        return "runs", (f"{m.group(1)} cycles" if m else "ran"), secs
    if "cannot run:" in both:
        head, first = refusal_detail(both)
        return "refused", f"{head}; first: {first}", secs
    return "error", first_line(err) or first_line(out) or f"exit {rc}", secs


def traceback_summary(text):
    """The exception line of a Python traceback and the innermost function it names."""
    tb = text[text.rindex("Traceback (most recent call last)"):]
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', tb)
    lines = [l.strip() for l in tb.splitlines() if l.strip()]
    exc = next((l for l in reversed(lines) if re.match(r"^[A-Za-z_.]*(Error|Exception)\b", l)), lines[-1])
    where = f" (in {os.path.basename(frames[-1][0])}:{frames[-1][1]} {frames[-1][2]})" if frames else ""
    return exc + where


def oracle_compare(tileprof, module, work, timeout, rtol=None, atol=None):
    cmp_dir = os.path.join(work, "compare")
    cmd = [sys.executable, COMPARE, module, "--tileprof", tileprof, "--workdir", cmp_dir, "--seed", "1",
           "--rounding-reference"]
    if rtol is not None:
        cmd += ["--rtol", str(rtol)]
    if atol is not None:
        cmd += ["--atol", str(atol)]
    rc, out, err, secs = run_limited(cmd, timeout, cwd=work)
    if rc is None:
        return "ORACLE-TIMEOUT", f"compare.py gave no answer in {timeout} s"
    if rc == 77:
        return "SKIPPED", first_line(out)
    if rc == 0:
        rounded = [l[len("ok   (rounding) "):].strip() for l in out.splitlines()
                   if l.startswith("ok   (rounding) ")]
        if rounded:
            return "PASS (rounding)", " | ".join(rounded)[:1500]
        return "PASS", ""
    both = out + "\n" + err
    unsupported = [l.strip() for l in both.splitlines() if "is not supported by the oracle" in l]
    if unsupported:
        return "ORACLE-UNSUPPORTED", re.sub(r"^hlo_numpy: ", "", unsupported[0])
    if "Traceback (most recent call last)" in both and "compare.py:" not in both:
        return "ORACLE-ERROR", "compare.py crashed: " + traceback_summary(both)
    if "compare.py: tileprof failed" in both:
        tail = both.split("compare.py: tileprof failed", 1)[1]
        return "RANDOM-INPUT-FAILED", "tileprof failed on compare.py's random inputs: " + first_line(
            tail.split("\n", 1)[1] if "\n" in tail else tail)
    if "compare.py: oracle failed" in both:
        tail = both.split("compare.py: oracle failed", 1)[1]
        if "Traceback (most recent call last)" in tail:
            return "ORACLE-ERROR", "the oracle crashed: " + traceback_summary(tail)
        lines = [l.strip() for l in tail.splitlines()[1:] if l.strip()]
        return "ORACLE-ERROR", re.sub(r"^hlo_numpy: ", "", lines[-1] if lines else "oracle failed")
    fails = [l.strip() for l in out.splitlines() if l.startswith("FAIL") or "MISSING" in l]
    if "MISMATCH" in out or fails:
        return "MISMATCH", " | ".join(fails)[:1500]
    return "ORACLE-ERROR", first_line(err) or first_line(out) or f"exit {rc}"


def collect(directory, only):
    files = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if not os.path.isfile(path) or not name.endswith(HLO_SUFFIXES) or name.upper().startswith("README"):
            continue
        if only and not any(s in name for s in only):
            continue
        files.append(path)
    return files


def md_cell(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--tileprof", default=os.environ.get("TILEPROF"),
                    help="the tileprof binary (default: $TILEPROF)")
    ap.add_argument("--public", default=os.path.join(ROOT, "bench", "modules", "public"))
    ap.add_argument("--corpus", default=os.path.normpath(os.path.join(ROOT, "..", "shared", "corpus", "hlo")))
    ap.add_argument("--skip-public", action="store_true", help="leave out the public collection")
    ap.add_argument("--skip-corpus", action="store_true", help="leave out the shared corpus")
    ap.add_argument("--timeout", type=float, default=300, help="seconds for one tileprof run (default 300)")
    ap.add_argument("--compare-timeout", type=float, default=900,
                    help="seconds for one compare.py (tileprof again + the oracle; default 900)")
    ap.add_argument("--threads", type=int, help="--threads for tileprof run")
    ap.add_argument("--no-oracle", action="store_true", help="do not run compare.py")
    ap.add_argument("--rtol", type=float, help="compare.py --rtol (default: the module's or compare.py's 1e-5)")
    ap.add_argument("--atol", type=float, help="compare.py --atol (default: the module's or compare.py's 1e-6)")
    ap.add_argument("--workdir", help="keep every module's outputs under DIR (default: a temporary directory)")
    ap.add_argument("--markdown", metavar="FILE", help="also write the table and summary to FILE")
    ap.add_argument("--only", nargs="*", help="only files whose names contain one of these strings")
    args = ap.parse_args()
    if not args.tileprof:
        ap.error("--tileprof PATH (or $TILEPROF) is required")
    args.tileprof = os.path.abspath(args.tileprof)

    sets = []
    if not args.skip_public:
        sets.append(("public", args.public))
    if not args.skip_corpus:
        sets.append(("corpus", args.corpus))
    base = os.path.abspath(args.workdir) if args.workdir else tempfile.mkdtemp(prefix="run-public-")
    os.makedirs(base, exist_ok=True)

    rows = []  # (set, file, module, status, oracle, detail, refusal_cause)
    for set_name, directory in sets:
        for path in collect(directory, args.only):
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            parts = split_modules(text)
            for k, part in enumerate(parts):
                label = os.path.basename(path) + (f"#{k}" if len(parts) > 1 else "")
                work = os.path.join(base, set_name, re.sub(r"[^A-Za-z0-9_.#=-]", "_", label))
                shutil.rmtree(work, ignore_errors=True)
                os.makedirs(work)
                if len(parts) > 1:
                    module = os.path.join(work, "module.hlo")
                    with open(module, "w", encoding="utf-8") as f:
                        f.write(part)
                else:
                    module = os.path.abspath(path)
                status, detail, secs = tileprof_run(args.tileprof, module, work, args.timeout, args.threads)
                oracle, cause = "", ""
                if status == "runs" and not args.no_oracle:
                    oracle, odetail = oracle_compare(args.tileprof, module, work, args.compare_timeout,
                                                   args.rtol, args.atol)
                    if odetail:
                        detail = f"{detail}; {odetail}"
                if status == "refused":
                    cause = refusal_cause(detail.split("; first: ", 1)[-1])
                if status == "out of memory":
                    # Memory is checked before executability: say which custom calls the module
                    # holds, since one the simulator cannot execute would refuse it once it fits.
                    targets = sorted(set(re.findall(r'custom_call_target="([^"]+)"', part)))
                    if targets:
                        detail += "; the module also holds custom calls: " + ", ".join(targets)
                rows.append((set_name, label, module_name(part), status, oracle, detail, cause))
                print(f"[{set_name}] {label}: {status} {oracle} ({secs:.1f} s) {detail[:200]}",
                      file=sys.stderr, flush=True)

    lines = ["| file | module | status | oracle | detail |", "| --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append("| " + " | ".join(md_cell(c) for c in (r[1], r[2], r[3], r[4], r[5])) + " |")
    lines.append("")

    causes = collections.Counter(r[6] for r in rows if r[3] == "refused")
    if causes:
        lines.append("Refusals by cause (first reason of each module):")
        lines.append("")
        for cause, n in causes.most_common():
            lines.append(f"- {cause}: {n} module(s)")
        lines.append("")

    def summary(name, sel):
        n = len(sel)
        c = collections.Counter(r[3] for r in sel)
        o = collections.Counter(r[4] for r in sel if r[4])
        ok = c["runs"] + c["out of memory"]
        pct = 100.0 * ok / n if n else 0.0
        states = ", ".join(f"{c[s]} {s}" for s in ("runs", "out of memory", "refused", "error", "timeout"))
        oracle = ", ".join(f"{v} {k}" for k, v in sorted(o.items()))
        return (f"{name}: {n} modules: {states}; oracle on those that run: {oracle or 'not run'}; "
                f"run or out of memory for a stated reason: {ok}/{n} = {pct:.1f}%")

    for set_name, _ in sets:
        lines.append(summary(set_name, [r for r in rows if r[0] == set_name]))
        lines.append("")
    if len(sets) > 1:
        lines.append(summary("all", rows))
        lines.append("")
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(text)
    if not args.workdir:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
