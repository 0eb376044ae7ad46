"""`tt fork` on ~50 MB real-shaped sessions, against the floor and the Agent SDK's own fork.

For each grown input (``common.grown``: a real fixture grown to ~50 MB with ``grow.py``):

- the *floor*: ``orjson.loads`` of every line (``common.floor``, wall time);
- ``tt fork FILE -o DIR --json`` as a fresh process (load, in-memory repair, chain,
  fork, exclusive write), wall time (median of N after a warm-up) and peak RSS
  (``/usr/bin/time -v``);
- the Agent SDK's ``fork_session`` on the same file (claude-agent-sdk's pure-Python
  fork, what an SDK user would run), same measurements, when the SDK is installed.

    python benchmarks/bench_fork.py [--runs 3]
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import floor, grown, tt


def run(cmd: list[str], runs: int) -> tuple[float, float, float]:
    """(median wall s, median CPU s = user + system, peak RSS MiB) after a warm-up run.

    CPU time is reported too: on a shared machine the wall time swings with the load,
    the CPU time much less."""
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    walls: list[float] = []
    cpus: list[float] = []
    peaks: list[float] = []
    for _ in range(runs):
        r = subprocess.run(
            ["/usr/bin/time", "-v", *cmd],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
        if r.returncode != 0:
            raise SystemExit(f"{cmd} failed:\n{r.stderr[-2000:]}")

        def field(name: str) -> str:
            m = re.search(rf"{re.escape(name)}: ([0-9.:]+)", r.stderr)
            assert m, name
            return m.group(1)

        h_m_s = [float(x) for x in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")]
        walls.append(sum(v * 60**k for k, v in enumerate(reversed(h_m_s))))
        cpus.append(float(field("User time (seconds)")) + float(field("System time (seconds)")))
        peaks.append(int(field("Maximum resident set size (kbytes)")) / 1024)
    return statistics.median(walls), statistics.median(cpus), max(peaks)


SDK_FORK = "import sys\nfrom claude_agent_sdk import fork_session\nfork_session(sys.argv[1])\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    print(
        "| input | MB | floor s | tt fork wall s | tt CPU s | tt peak MiB | SDK fork_session wall s | SDK CPU s | SDK peak MiB |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for kind in ("small-lines", "large-lines", "tool-heavy"):
        src = grown(kind, 50)
        with tempfile.TemporaryDirectory(prefix="tt-bench-fork-") as tmp:
            # The SDK finds sessions by id under CLAUDE_CONFIG_DIR; give the grown file one.
            sid = "b0000000-0000-4000-8000-000000000000"
            project = Path(tmp) / "config" / "projects" / "-bench"
            project.mkdir(parents=True)
            path = project / f"{sid}.jsonl"
            shutil.copy(src, path)
            out = Path(tmp) / "out"
            out.mkdir()
            f, _ = floor(path, a.runs)
            t, cpu, peak = run(tt("fork", str(path), "-o", str(out), "--json"), a.runs)
            sdk_t = sdk_cpu = sdk_peak = float("nan")
            try:
                import claude_agent_sdk  # noqa: F401
            except ImportError:
                pass
            else:
                sdk_t, sdk_cpu, sdk_peak = run(
                    ["env", f"CLAUDE_CONFIG_DIR={Path(tmp) / 'config'}", sys.executable, "-c", SDK_FORK, sid],
                    a.runs,
                )
            mb = path.stat().st_size / 1e6
            print(
                f"| {kind} | {mb:.0f} | {f:.2f} | {t:.2f} | {cpu:.2f} | {peak:.0f} | {sdk_t:.2f} | {sdk_cpu:.2f} | {sdk_peak:.0f} |"
            )


if __name__ == "__main__":
    main()
