"""`tt validate` against the floor: a plain ``orjson.loads`` per line over the same file.

Targets (issue 2): within 3x the floor on a 50 MB file; peak memory <= 150 MiB whatever
the file size (a 500 MB file too).

    python benchmarks/bench_validate.py [--big]
"""

from __future__ import annotations

import argparse

from common import floor, grown, run, tt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--big", action="store_true", help="also a 500 MB file (memory bound)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--no-schema", action="store_true", help="time without the JSON-Schema checks")
    a = ap.parse_args()
    extra = ["--no-schema"] if a.no_schema else []
    print("| input | floor s | tt validate s | ratio | tt peak MiB |")
    print("|---|---|---|---|---|")
    sizes = [("small-lines", 50), ("large-lines", 50), ("tool-heavy", 50)] + (
        [("small-lines", 500)] if a.big else []
    )
    for kind, mb in sizes:
        p = grown(kind, mb)
        runs = a.runs if mb <= 50 else 1
        f, _ = floor(p, runs)
        t, peak = run(tt("validate", "-q", *extra, str(p)), runs)
        print(f"| {kind} {mb} MB | {f:.2f} | {t:.2f} | {t / f:.1f}x | {peak:.0f} |", flush=True)


if __name__ == "__main__":
    main()
