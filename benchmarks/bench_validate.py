"""`tt validate` against the floor: a plain ``orjson.loads`` per line over the same file.

Targets (issues 2 and 14): within 3x the floor on a 50 MB file; peak memory <= 150 MiB
whatever the file size (a 500 MB file too).

The floor and tt run in turn (floor, tt, floor, tt ...), so a drift in the machine's
speed moves both; each figure is the median of the runs. The ratio is taken on CPU
seconds (user + system of the finished process, from ``getrusage``): on a shared machine
wall time swings with the load, the work a process does much less. Wall seconds and
tt's peak memory (``/usr/bin/time -v``) are printed too.

    python benchmarks/bench_validate.py [--runs 7] [--big] [--no-schema]
    python benchmarks/bench_validate.py --stripped tool-heavy   # the work alone, in-process

``--stripped KIND`` times, in this process (no start-up), a loop that does only the work
every line costs, added one step at a time: the parse (the floor's), the schema check,
the chain index, the API facts of each message. It bounds what a tighter loop can gain.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from common import FLOOR, ROOT, compile_package, grown, run, tt


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


def stripped(kind: str, runs: int) -> None:
    import gc

    import orjson

    sys.path.insert(0, str(ROOT))  # this checkout's tt, not an installed one

    from transcript_tools.edge.reader import iter_raw
    from transcript_tools.model.active import facts_of
    from transcript_tools.model.chain import CHAIN_TYPES, ChainIndex
    from transcript_tools.validate.files_schema import default_checker

    path = grown(kind, 50)
    fast = default_checker().fast_validators
    loads = orjson.loads

    def loop(steps: int) -> None:
        ix = ChainIndex()
        facts = {}
        for number, _, data, _, _ in iter_raw(path):
            rec = loads(data)
            if steps < 1 or type(rec) is not dict:
                continue
            t = rec.get("type")
            fast[t].is_valid(rec)
            uuid = rec.get("uuid")
            if steps < 2 or t not in CHAIN_TYPES or type(uuid) is not str:
                continue
            parent = rec.get("parentUuid")
            i = ix.add(uuid, parent if type(parent) is str else None, number, 0)
            if steps >= 3 and i >= 0 and (t == "user" or t == "assistant"):
                facts[i] = facts_of(rec, len(data))

    gc.disable()
    print(f"| {kind} 50 MB, in-process CPU s (min of {runs}) | |")
    print("|---|---|")
    for steps, what in enumerate(["parse", "+ schema check", "+ chain index", "+ API facts"]):
        best = min(_cpu(lambda s=steps: loop(s)) for _ in range(runs))
        print(f"| {what} | {best:.3f} |", flush=True)


def _cpu(f: Callable[[], None]) -> float:
    t0 = time.process_time()
    f()
    return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--big", action="store_true", help="also a 500 MB file (memory bound)")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--no-schema", action="store_true", help="time without the JSON-Schema checks")
    ap.add_argument("--stripped", metavar="KIND", help="time only the per-line work, in-process (see above)")
    a = ap.parse_args()
    if a.stripped:
        stripped(a.stripped, a.runs)
        return
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
