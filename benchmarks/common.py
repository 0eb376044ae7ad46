"""Shared bits of the benchmark scripts: grown inputs, whole-process timing, peak memory.

Timing is of whole processes (what a user waits for), median of N runs after a warm-up;
peak memory is the maximum resident set size that ``/usr/bin/time -v`` reports.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
FIXTURES = ROOT / "fixtures" / "real"
SOURCES = {
    # many small lines (2.1.332, written by the real CLI)
    "small-lines": FIXTURES
    / "claude-config-2.1.332/projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl",
    # large lines (2.1.237, tool results with images)
    "large-lines": FIXTURES / "v2.1.237-attachments-chained-parallel-tools.jsonl",
    # 2.1.38, tool heavy
    "tool-heavy": FIXTURES / "v2.1.38-tool-heavy.jsonl",
}

FLOOR = (
    "import orjson,sys\n"
    "with open(sys.argv[1],'rb') as f:\n"
    "    for line in f:\n"
    "        try: orjson.loads(line)\n"
    "        except orjson.JSONDecodeError: pass\n"
)


def grown(kind: str, mb: int) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    p = OUT / f"{kind}-{mb}mb.jsonl"
    if not p.exists():
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from grow import grow

        grow(SOURCES[kind], p, mb * 1_000_000)
    return p


def run(cmd: list[str], runs: int = 5) -> tuple[float, float]:
    """(median wall seconds, peak RSS MiB) of a command, after one warm-up run (and with
    the package's bytecode written: `compile_package`)."""
    compile_package()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    walls: list[float] = []
    peaks: list[float] = []
    for _ in range(runs):
        t0 = time.perf_counter()
        r = subprocess.run(
            ["/usr/bin/time", "-v", *cmd],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
        walls.append(time.perf_counter() - t0)
        if r.returncode not in (0, 1) and "Command exited with non-zero status 1" not in r.stderr:
            raise SystemExit(f"{cmd} failed:\n{r.stderr[-2000:]}")
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
        peaks.append(int(m.group(1)) / 1024 if m else float("nan"))
    return statistics.median(walls), max(peaks)


def floor(path: Path, runs: int = 5) -> tuple[float, float]:
    return run([sys.executable, "-c", FLOOR, str(path)], runs)


def compile_package() -> None:
    """Write the package's bytecode, as installing a wheel does: an editable install in
    an environment with PYTHONDONTWRITEBYTECODE would otherwise compile every module on
    every run and time the compiler, not tt. Cheap when it is up to date."""
    import compileall

    compileall.compile_dir(str(ROOT / "transcript_tools"), quiet=1)


_compiled = False


def tt(*args: str) -> list[str]:
    """The command line of ``tt ARGS`` run from this checkout (its bytecode written first)."""
    global _compiled
    if not _compiled:
        compile_package()
        _compiled = True
    return [sys.executable, "-m", "transcript_tools", *args]
