"""How fast `tt ls` lists 2,000 sessions (the issue's promise: about a second).

Builds a temp Claude config dir with N sessions spread over 20 projects. Each session is
a real fixture (round robin over the main-session files in fixtures/real, 3 KB to
3.4 MB) with its session id rewritten to a fresh one and its own mtime. Then it times:

- ``tt ls --all --json`` as a user runs it (a new process: interpreter start, imports,
  listing, JSON out), best and median of several runs, with the peak RSS of the child;
- the library call ``catalog.list_sessions`` in this process, with tracemalloc's peak.

    python benchmarks/bench_ls.py [--sessions 2000] [--runs 5] [--keep DIR]

Page cache is warm after the first run (what a user sees on the second `tt ls`); the
first run's time is printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "real"


def main_sessions() -> list[Path]:
    out = []
    for p in sorted(FIXTURES.rglob("*.jsonl")):
        if p.name.startswith("agent-") or "subagents" in p.parts:
            continue
        with open(p, "rb") as f:
            first = f.readline()
        if b'"isSidechain":true' in first:
            continue
        out.append(p)
    return out


def build(config: Path, n: int, projects: int = 20) -> int:
    sources = [(p, p.read_bytes()) for p in main_sessions()]
    total = 0
    now = time.time()
    for i in range(n):
        _src, data = sources[i % len(sources)]
        proj = config / "projects" / f"-home-dev-project-{i % projects:02d}"
        proj.mkdir(parents=True, exist_ok=True)
        sid = str(uuid.uuid4())
        old = _session_id(data)
        body = data.replace(old.encode(), sid.encode()) if old else data
        out = proj / f"{sid}.jsonl"
        out.write_bytes(body)
        os.utime(out, (now - i * 60, now - i * 60))
        total += len(body)
    return total


def _session_id(data: bytes) -> str | None:
    i = data.find(b'"sessionId":"')
    if i < 0:
        return None
    j = data.find(b'"', i + 13)
    return data[i + 13 : j].decode()


def time_cli(config: Path, runs: int) -> tuple[list[float], int, int]:
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(config)}
    tt = Path(sys.executable).parent / "tt"
    times = []
    listed = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        out = subprocess.run([str(tt), "ls", "--all", "--json"], env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - t0)
        listed = len(json.loads(out.stdout)["sessions"])
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return times, listed, peak_kb


def time_library(config: Path, workers: int) -> tuple[float, float, int]:
    """Best wall and CPU time of three in-process runs with this many processes."""
    os.environ["CLAUDE_CONFIG_DIR"] = str(config)
    from transcript_tools.catalog.files import list_sessions, project_dirs

    best = (1e9, 1e9)
    n = 0
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        n = len(list_sessions(project_dirs(all_=True), workers=workers))
        best = min(best, (time.perf_counter() - t0, time.process_time() - c0))
    return best[0], best[1], n


def peak_memory(config: Path) -> int:
    """tracemalloc's peak for one single-process listing (tracemalloc slows it ~3x)."""
    from transcript_tools.catalog.files import list_sessions, project_dirs

    tracemalloc.start()
    list_sessions(project_dirs(all_=True), workers=1)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep", type=Path, help="build the config dir here and keep it")
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from benchmarks.common import compile_package

    compile_package()
    tmp = a.keep or Path(tempfile.mkdtemp(prefix="tt-bench-ls-"))
    try:
        t0 = time.perf_counter()
        total = build(tmp, a.sessions)
        print(
            f"built {a.sessions} sessions, {total / 2**20:.0f} MiB, in {time.perf_counter() - t0:.1f} s ({tmp})"
        )
        times, listed, peak_kb = time_cli(tmp, a.runs)
        print(
            f"tt ls --all --json: first {times[0]:.2f} s, best {min(times):.2f} s, median {statistics.median(times):.2f} s "
            f"over {a.runs} runs; {listed} sessions listed; peak RSS {peak_kb / 1024:.0f} MiB"
        )
        for w in (1, 2):
            wall, cpu, rows = time_library(tmp, w)
            print(
                f"catalog.list_sessions, {w} process(es): best {wall:.2f} s wall ({cpu:.2f} s CPU in this process) for {rows} rows"
            )
        print(f"tracemalloc peak (1 process): {peak_memory(tmp) / 2**20:.1f} MiB")
        print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s)")
    finally:
        if a.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
