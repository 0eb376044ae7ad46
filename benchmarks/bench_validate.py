"""`tt validate` against the floor: a plain ``orjson.loads`` per line over the same file.

Targets (issues 2 and 14): within 3x the floor on a 50 MB file; peak memory <= 150 MiB
whatever the file size (a 500 MB file too).

The floor and tt run in turn (floor, tt, floor, tt ...), so a drift in the machine's
speed moves both; each figure is the median of the runs. The ratio is taken on CPU
seconds (user + system of the finished process, from ``getrusage``): on a shared machine
wall time swings with the load, the work a process does much less. Wall seconds and
tt's peak memory (``/usr/bin/time -v``) are printed too.

    python benchmarks/bench_validate.py [--runs 7] [--big] [--no-schema]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time

from common import FLOOR, compile_package, grown, run, tt


def cpu_wall(cmd: list[str]) -> tuple[float, float]:
    """(user + system CPU seconds, wall seconds) of one run of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def paired(
    a: list[str], b: list[str], runs: int
) -> tuple[list[float], list[float], list[float], list[float]]:
    """CPU and wall seconds of ``a`` and ``b``, run in turn ``runs`` times after a warm-up each."""
    cpu_wall(a)
    cpu_wall(b)
    ca, wa, cb, wb = [], [], [], []
    for _ in range(runs):
        c, w = cpu_wall(a)
        ca.append(c)
        wa.append(w)
        c, w = cpu_wall(b)
        cb.append(c)
        wb.append(w)
    return ca, wa, cb, wb


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--big", action="store_true", help="also a 500 MB file (memory bound)")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--no-schema", action="store_true", help="time without the JSON-Schema checks")
    a = ap.parse_args()
    extra = ["--no-schema"] if a.no_schema else []
    compile_package()
    med = statistics.median
    print("| input | floor CPU s | tt validate CPU s | ratio (CPU) | floor / tt wall s | tt peak MiB |")
    print("|---|---|---|---|---|---|")
    sizes = [("small-lines", 50), ("large-lines", 50), ("tool-heavy", 50)] + (
        [("small-lines", 500)] if a.big else []
    )
    for kind, mb in sizes:
        p = grown(kind, mb)
        runs = a.runs if mb <= 50 else 1
        cmd = tt("validate", "-q", *extra, str(p))
        floor_cmd = [sys.executable, "-c", FLOOR, str(p)]
        fc, fw, tc, tw = paired(floor_cmd, cmd, runs)
        _, peak = run(cmd, 1)
        print(
            f"| {kind} {mb} MB | {med(fc):.3f} | {med(tc):.3f} | {med(tc) / med(fc):.2f}x "
            f"| {med(fw):.2f} / {med(tw):.2f} | {peak:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
