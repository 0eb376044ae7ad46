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

    python benchmarks/bench_stats.py [--sessions 2000] [--runs 7] [--ccusage PATH]
"""

from __future__ import annotations

import argparse
import json
import os
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


def timed(cmd: list[str], config: Path) -> tuple[float, bytes]:
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(config)}
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, check=True)
    return time.perf_counter() - t0, r.stdout


def agreement(tt_out: bytes, cc_out: bytes) -> tuple[int, int]:
    """(sessions ccusage reports whose four token counts equal tt's, sessions it reports)."""
    tt = {Path(s["path"]).stem: s["totals"] for s in json.loads(tt_out)["sessions"]}
    cc = json.loads(cc_out)["session"]
    same = sum(1 for s in cc if s["period"] in tt and all(s[a] == tt[s["period"]][b] for a, b in KEYS))
    return same, len(cc)


def paired(config: Path, cc: str, runs: int, check: bool) -> None:
    tt_cmd = [sys.executable, "-m", "transcript_tools", "stats", "--all", "--json"]
    cc_cmd = [cc, "session", "--json", "--offline"]
    timed(tt_cmd, config)  # warm the page cache and the bytecode
    timed(cc_cmd, config)
    tts, ccs = [], []
    for i in range(runs):
        a, out_tt = timed(tt_cmd, config)
        b, out_cc = timed(cc_cmd, config)
        tts.append(a)
        ccs.append(b)
        line = f"  round {i + 1}: tt {a:.2f} s, ccusage {b:.2f} s, ratio {a / b:.2f}"
        if check:
            same, n = agreement(out_tt, out_cc)
            line += f"; token counts equal on {same}/{n} sessions ccusage reports"
        print(line, flush=True)
    mt, mc = statistics.median(tts), statistics.median(ccs)
    print(
        f"  median: tt {mt:.2f} s, ccusage {mc:.2f} s, tt/ccusage {mt / mc:.2f} (load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)"
    )


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
    a = ap.parse_args()
    cc = ccusage_bin(a.ccusage)
    compile_package()
    tmp = Path(tempfile.mkdtemp(prefix="tt-bench-stats-"))
    try:
        total = build(tmp / "bench", a.sessions)
        print(f"bench set: {a.sessions} sessions, {total / 2**20:.0f} MiB")
        paired(tmp / "bench", cc, a.runs, check=True)
        lay_out_fixtures(tmp / "fixtures")
        print("real fixtures, one project each:")
        paired(tmp / "fixtures", cc, a.runs, check=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
