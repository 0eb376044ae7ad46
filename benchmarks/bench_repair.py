"""`tt repair` against the floor: a plain ``orjson.loads`` per line over the same file.

Target (issue 4): a 50 MB repair within 5x the floor; memory bounded whatever the size
(``--big`` adds a 500 MB file). Each input is repaired as it is (nothing to fix: the
output is a byte-for-byte copy) and after damage of several kinds (`tests.damage`: a
torn tail, a NUL run, garbage, a duplicate, a deleted middle line, a deleted tool call,
bad UTF-8), and in the worst case for the writer, every line ending in CRLF (every line
rewritten and quarantined). The tool-heavy file is also taken at 30 MB, under the size at
which its conversation passes the API's 32 MB request limit and repair compacts it.

    python benchmarks/bench_repair.py [--big] [--runs N]
"""

from __future__ import annotations

import argparse
import re
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

from common import FLOOR, OUT, ROOT, grown, tt

sys.path.insert(0, str(ROOT))

from tests import damage

MIXED = (
    "nul_run",
    "garbage",
    "duplicate_uuid",
    "dangling_parent",
    "tool_result_orphan",
    "invalid_utf8",
    "torn_tail",
)


def damaged(src: Path, kinds: tuple[str, ...], name: str) -> Path:
    p = OUT / f"{src.stem}-{name}.jsonl"
    if not p.exists():
        data = src.read_bytes()
        for k in kinds:
            data = getattr(damage, k)(data).data
        p.write_bytes(data)
    return p


def repair_cmd(src: Path) -> list[str]:
    out = OUT / f"{src.stem}.repaired.jsonl"
    # A fresh output each run (tt never overwrites); exec so /usr/bin/time sees tt itself.
    rm = f"rm -f {shlex.quote(str(out))} {shlex.quote(str(out))}.quarantine.jsonl"
    return [
        "sh",
        "-c",
        f"{rm}; exec {shlex.join(tt('repair', str(src), '-o', str(out), '--json'))} >/dev/null",
    ]


def measure(cmd: list[str], runs: int) -> tuple[float, float, float]:
    """(median wall s, median CPU s = user + sys, peak RSS MiB) from ``/usr/bin/time -v``,
    after a warm-up run. CPU time is what the ratio uses: this machine is shared, and
    wall time under load says more about the neighbours than about tt."""
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    walls, cpus, peaks = [], [], []
    for _ in range(runs):
        r = subprocess.run(
            ["/usr/bin/time", "-v", *cmd],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
        if r.returncode not in (0, 1) and "exited with non-zero status 1" not in r.stderr:
            raise SystemExit(f"{cmd} failed:\n{r.stderr[-2000:]}")

        def field(name: str) -> float:
            m = re.search(name + r": ([\d.:]+)", r.stderr)
            assert m, name
            v = m.group(1)
            if ":" in v:  # h:mm:ss or m:ss.cc
                parts = [float(x) for x in v.split(":")]
                return sum(x * 60**i for i, x in enumerate(reversed(parts)))
            return float(v)

        walls.append(field(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\)"))
        cpus.append(field(r"User time \(seconds\)") + field(r"System time \(seconds\)"))
        peaks.append(field(r"Maximum resident set size \(kbytes\)") / 1024)
    return statistics.median(walls), statistics.median(cpus), max(peaks)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--big", action="store_true", help="also a 500 MB file (memory bound)")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    print("| input | floor CPU s (wall) | tt repair CPU s (wall) | ratio (CPU) | tt peak MiB |")
    print("|---|---|---|---|---|")
    # tool-heavy at 30 MB too: at 50 MB its conversation is over the API's 32 MB request
    # limit, so repair appends an offline compaction (request-too-large) that dwarfs the rest.
    sizes = [("small-lines", 50), ("large-lines", 50), ("tool-heavy", 50), ("tool-heavy", 30)] + (
        [("small-lines", 500)] if a.big else []
    )
    for kind, mb in sizes:
        clean = grown(kind, mb)
        runs = a.runs if mb <= 50 else 1
        cases = [("clean", clean), ("7 damages", damaged(clean, MIXED, "mixed"))]
        if mb <= 50:
            cases.append(("all CRLF", damaged(clean, ("crlf",), "crlf")))
        for label, p in cases:
            fw, fc, _ = measure([sys.executable, "-c", FLOOR, str(p)], runs)
            tw, tc, peak = measure(repair_cmd(p), runs)
            print(
                f"| {kind} {mb} MB, {label} | {fc:.2f} ({fw:.2f}) | {tc:.2f} ({tw:.2f}) | {tc / fc:.1f}x | {peak:.0f} |",
                flush=True,
            )
            for q in OUT.glob(f"{p.stem}.repaired.jsonl*"):
                q.unlink()


if __name__ == "__main__":
    main()
