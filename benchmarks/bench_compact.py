"""`tt compact` offline (extractive summary) on big transcripts: time and peak memory.

Each input is a real transcript grown to size (`grow.py`: one long conversation of fresh
copies). The command is the default one: a new session written to a scratch folder, the
last 40,000 tokens kept. The floor is a plain ``orjson.loads`` per line over the same file
(one pass; compaction makes two, plus tokenizing what it keeps and a sample of the rest).

    python benchmarks/bench_compact.py [--big] [--runs N]

``--big`` adds a 500 MB file: past the 50 MiB in-memory cap ten times over, it shows
memory growing with the number of entries, not with the bytes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from common import floor, grown, run, tt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--big", action="store_true", help="also a 500 MB file")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    sizes = [("tool-heavy", 50), ("large-lines", 50), ("tool-heavy", 120)] + (
        [("tool-heavy", 500)] if a.big else []
    )
    print(
        "| input | lines | floor s | tt compact s | peak MiB | tokens before → after (est.) | bytes after |"
    )
    print("|---|---|---|---|---|---|---|")
    for kind, mb in sizes:
        p = grown(kind, mb)
        out = Path(tempfile.mkdtemp(prefix="tt-bench-compact-"))
        try:
            runs = a.runs if mb <= 50 else 1
            f, _ = floor(p, runs)
            t, peak = run(tt("compact", str(p), "-o", str(out)), runs)
            report = json.loads(
                subprocess.run(
                    tt("compact", str(p), "--dry-run", "--json"), capture_output=True, text=True, check=True
                ).stdout
            )
        finally:
            shutil.rmtree(out, ignore_errors=True)
        with open(p, "rb") as fh:
            lines = sum(1 for _ in fh)
        tok = report["tokens"]
        print(
            f"| {kind} {mb} MB | {lines:,} | {f:.2f} | {t:.2f} | {peak:.0f} | {tok['before']:,} → {tok['after']:,} | {report['bytes']['after'] / 1024:,.0f} KiB |",
            flush=True,
        )


if __name__ == "__main__":
    main()
