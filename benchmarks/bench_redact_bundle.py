"""`tt redact` and `tt export` / `tt import` on ~50 MB real-shaped sessions.

For each grown input (``common.grown``: a real fixture grown to ~50 MB with ``grow.py``):

- the *floor*: ``orjson.loads`` of every line (``common.floor``);
- ``tt redact FILE --json`` (report: every string of every record through the detectors);
- ``tt redact FILE -o OUT`` (the redacted copy written);
- ``tt export`` of a session made of that file (redacted, zip) and ``tt import`` of the
  bundle under another cwd (checks, sha256, path relocation);

wall time (median of N after a warm-up) and peak RSS (``/usr/bin/time -v``).

    python benchmarks/bench_redact_bundle.py [--runs 3]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import floor, grown, run, tt

SID = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"


def timed(cmd: list[str], env: dict[str, str], runs: int, setup=None) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Like ``common.run`` but with an environment and a per-run setup (for commands
    that refuse to overwrite what the previous run wrote)."""
    import os
    import re
    import statistics

    walls: list[float] = []
    peaks: list[float] = []
    for i in range(runs + 1):
        if setup is not None:
            setup()
        t0 = time.perf_counter()
        r = subprocess.run(
            ["/usr/bin/time", "-v", *cmd],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **env},
        )
        if r.returncode != 0:
            raise SystemExit(f"{cmd} failed:\n{r.stderr[-2000:]}")
        if i == 0:
            continue  # warm-up
        walls.append(time.perf_counter() - t0)
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
        peaks.append(int(m.group(1)) / 1024 if m else float("nan"))
    return statistics.median(walls), max(peaks)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--mb", type=int, default=50)
    args = ap.parse_args()
    rows: list[tuple[str, str, float, float]] = []
    for kind in ("small-lines", "large-lines"):
        src = grown(kind, args.mb)
        size = src.stat().st_size / 1e6
        rows.append((kind, f"floor (orjson.loads per line), {size:.0f} MB", *floor(src, args.runs)))
        rows.append((kind, "tt redact --json (report)", *run(tt("redact", str(src), "--json"), args.runs)))
        with tempfile.TemporaryDirectory(prefix="tt-bench-") as d:
            tmp = Path(d)
            out = tmp / "red.jsonl"
            rows.append(
                (
                    kind,
                    "tt redact -o OUT",
                    *timed(
                        tt("redact", str(src), "-o", str(out)),
                        {},
                        args.runs,
                        lambda: out.unlink(missing_ok=True),
                    ),
                )
            )
            config = tmp / "src-config"
            proj = config / "projects" / "-home-dev-demo-app"
            proj.mkdir(parents=True)
            shutil.copyfile(src, proj / f"{SID}.jsonl")
            bundle = tmp / "b.zip"
            env = {"CLAUDE_CONFIG_DIR": str(config)}
            rows.append(
                (
                    kind,
                    "tt export (redacted zip)",
                    *timed(
                        tt("export", SID, "-o", str(bundle)),
                        env,
                        args.runs,
                        lambda: bundle.unlink(missing_ok=True),
                    ),
                )
            )
            # The last timed run left the bundle in place.
            dest = tmp / "dst"
            work = tmp / "work"
            work.mkdir()
            rows.append(
                (
                    kind,
                    f"tt import (bundle {bundle.stat().st_size / 1e6:.1f} MB)",
                    *timed(
                        tt("import", str(bundle), "--cwd", str(work)),
                        {"CLAUDE_CONFIG_DIR": str(dest)},
                        args.runs,
                        lambda: shutil.rmtree(dest, ignore_errors=True),
                    ),
                )
            )
    print(f"{'input':12} {'what':44} {'wall s':>8} {'peak MiB':>9}")
    for kind, what, wall, peak in rows:
        print(f"{kind:12} {what:44} {wall:8.2f} {peak:9.0f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
