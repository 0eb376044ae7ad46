"""`tt stats --all --json` against `ccusage session --json --offline` on the same folder.

Paired runs: each round runs tt, then ccusage, on the same Claude config dir, so both
see the same load (the machine is shared); the ratio reported is of the medians, with
each round's own ratio beside it. Folders:

- ``bench``: the `tt ls` bench set (`bench_ls.build`: 2,000 sessions copied round robin
  from the real fixtures, ~1.3 GB);
- ``fixtures``: the real fixtures laid out as `tests/catalog/test_stats.py` does (a few MB: the
  time of starting each tool).

Agreement is checked on every run of the bench set: for each session ccusage reports,
its four token counts equal tt's (ccusage counts a call in the first session that holds
it, so sessions whose calls all appeared in an earlier copy are not reported by it; the
few whose calls are split between copies are counted and printed, not hidden).

Each round also gives the CPU time (user + system) of each process and its children, which
the load of a shared machine changes less than the wall time, and the load average.
``--compare DIR`` runs a second checkout of tt (e.g. ``git worktree add --detach DIR REV``)
in each round too, between the two, for paired old/new numbers; ``--folder DIR`` times a
Claude config dir of your own (e.g. ``~/.claude``) as well.

    python benchmarks/bench_stats.py [--sessions 2000] [--runs 7] [--ccusage PATH]
        [--compare DIR] [--folder DIR]
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
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ls import build
from common import ROOT, compile_package

KEYS = (
    ("inputTokens", "input_tokens"),
    ("outputTokens", "output_tokens"),
    ("cacheCreationTokens", "cache_creation_tokens"),
    ("cacheReadTokens", "cache_read_tokens"),
)


def ccusage_bin(given: str | None) -> str:
    cache = Path(os.environ.get("TT_CACHE") or ROOT / ".cache")
    for cand in (
        given,
        os.environ.get("TT_CCUSAGE"),
        str(cache / "ccusage/node_modules/.bin/ccusage"),
        shutil.which("ccusage"),
    ):
        if cand and Path(cand).exists():
            return cand
    raise SystemExit("ccusage not found: run tests/support/install_ccusage.sh (or --ccusage PATH)")


def timed(cmd: list[str], config: Path, root: Path = ROOT) -> tuple[float, float, bytes]:
    """(wall seconds, CPU seconds of the process and its children, stdout)."""
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(config), "PYTHONPATH": str(root)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, cwd=root, capture_output=True, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, r.stdout


def agreement(tt_out: bytes, cc_out: bytes) -> tuple[int, int]:
    """(sessions ccusage reports whose four token counts equal tt's, sessions it reports)."""
    tt = {Path(s["path"]).stem: s["totals"] for s in json.loads(tt_out)["sessions"]}
    cc = json.loads(cc_out)["session"]
    same = sum(1 for s in cc if s["period"] in tt and all(s[a] == tt[s["period"]][b] for a, b in KEYS))
    return same, len(cc)


def paired(config: Path, cc: str, runs: int, check: bool, compare: Path | None = None) -> None:
    tt_cmd = [sys.executable, "-m", "transcript_tools", "stats", "--all", "--json"]
    cc_cmd = [cc, "session", "--json", "--offline"]
    tools: list[tuple[str, list[str], Path]] = [("tt", tt_cmd, ROOT)]
    if compare is not None:
        tools.append(("tt (--compare)", tt_cmd, compare))
    tools.append(("ccusage", cc_cmd, ROOT))
    for _, cmd, root in tools:  # warm the page cache and the bytecode
        timed(cmd, config, root)
    walls: dict[str, list[float]] = {name: [] for name, _, _ in tools}
    cpus: dict[str, list[float]] = {name: [] for name, _, _ in tools}
    loads = []
    for i in range(runs):
        outs = {}
        for name, cmd, root in tools:
            wall, cpu, outs[name] = timed(cmd, config, root)
            walls[name].append(wall)
            cpus[name].append(cpu)
        loads.append(os.getloadavg()[0])
        cc_wall = walls["ccusage"][-1]
        line = f"  round {i + 1}: " + ", ".join(
            f"{name} {walls[name][-1]:.2f} s ({cpus[name][-1]:.2f} s CPU)" for name, _, _ in tools
        )
        line += "; tt/ccusage " + " ".join(
            f"{walls[name][-1] / cc_wall:.2f}" for name, _, _ in tools if name != "ccusage"
        )
        if compare is not None and outs["tt"] != outs["tt (--compare)"]:
            line += "; the two tt outputs DIFFER"
        if check:
            same, n = agreement(outs["tt"], outs["ccusage"])
            line += f"; token counts equal on {same}/{n} sessions ccusage reports"
        line += f" (load {loads[-1]:.1f})"
        print(line, flush=True)
    mc = statistics.median(walls["ccusage"])
    for name, _, _ in tools:
        ratios = [a / b for a, b in zip(walls[name], walls["ccusage"], strict=True)]
        print(
            f"  median {name}: {statistics.median(walls[name]):.2f} s, "
            f"{statistics.median(cpus[name]):.2f} s CPU"
            + (
                ""
                if name == "ccusage"
                else f"; /ccusage {statistics.median(walls[name]) / mc:.2f} (rounds {min(ratios):.2f}-{max(ratios):.2f})"
            )
        )
    print(f"  load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs")


def lay_out_fixtures(dest: Path) -> None:
    real = ROOT / "fixtures" / "real"
    for i, p in enumerate(sorted(real.glob("*.jsonl"))):
        if p.name.startswith("handwritten"):
            continue
        d = dest / "projects" / f"-p{i:02d}"
        d.mkdir(parents=True)
        shutil.copy(p, d / f"{uuid.uuid5(uuid.NAMESPACE_URL, p.name)}.jsonl")  # named as a session


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--ccusage")
    ap.add_argument("--compare", type=Path, help="another checkout of tt to time in each round")
    ap.add_argument(
        "--folder", type=Path, action="append", default=[], help="a Claude config dir to time too"
    )
    a = ap.parse_args()
    cc = ccusage_bin(a.ccusage)
    compile_package()
    if a.compare is not None:
        import compileall

        compileall.compile_dir(str(a.compare / "transcript_tools"), quiet=1)
    tmp = Path(tempfile.mkdtemp(prefix="tt-bench-stats-"))
    try:
        total = build(tmp / "bench", a.sessions)
        print(f"bench set: {a.sessions} sessions, {total / 2**20:.0f} MiB")
        paired(tmp / "bench", cc, a.runs, check=True, compare=a.compare)
        lay_out_fixtures(tmp / "fixtures")
        print("real fixtures, one project each:")
        paired(tmp / "fixtures", cc, a.runs, check=False, compare=a.compare)
        for folder in a.folder:
            print(f"{folder}:")
            paired(folder.expanduser(), cc, a.runs, check=True, compare=a.compare)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
