"""Benchmark: rebuilding a resume request from a 50 MB transcript, tt vs the real CLI.

Grows a real transcript to about 50 MB (``grow.py``), then, in one run on the same
machine:

- the *orjson floor*: a Python process that does ``orjson.loads`` of every line and
  nothing else (``common.floor``, the floor of every benchmark here);
- ``tt resume FILE --dry-run -p PROBE`` as a fresh process (``/usr/bin/time -v``: wall
  time and peak RSS), i.e. load, in-memory repair, chain, conversation, request JSON;
  both the median of N runs after a warm-up (``common.run``);
- the real Claude Code CLI's own resume of the same file (``claude -p PROBE --resume
  ID`` against the local stand-in, so no network), same measurements.

Targets (issue 5): tt within 3x the floor, and at least 10x faster than the CLI.

    python benchmarks/bench_resume.py                      # 2.1.332 fixture (with /compact), both checks
    python benchmarks/bench_resume.py --source fixtures/real/v2.1.17-agent-progress-ends-mid-tool.jsonl
                                                           # no compact boundary: the whole file is the conversation
    python benchmarks/bench_resume.py --no-cli             # tt and the floor only

Exit status 0 when both targets are met, 1 otherwise (the CLI target is skipped when
the CLI is not installed).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from common import compile_package, run  # noqa: E402
from common import floor as process_floor  # noqa: E402
from grow import grow  # noqa: E402

DEFAULT_SOURCE = (
    ROOT
    / "fixtures/real/claude-config-2.1.332/projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
)
PROBE = "Benchmark probe: what do you remember?"


def timed(
    args: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None
) -> tuple[float, int, str]:
    """Wall seconds, peak RSS (KiB) and stdout of one process, via GNU time."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        started = time.perf_counter()
        p = subprocess.run(
            ["/usr/bin/time", "-v", "-o", tf.name, *args],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=600,
        )
        wall = time.perf_counter() - started
        report = tf.read()
    if p.returncode != 0:
        raise SystemExit(f"{args[0]} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", report)
    return wall, int(m[1]) if m else 0, p.stdout


def session_id_of(path: Path) -> str:
    with open(path, "rb") as f:
        for line in f:
            rec = orjson.loads(line)
            if isinstance(rec, dict) and isinstance(rec.get("sessionId"), str):
                return str(rec["sessionId"])
    raise SystemExit(f"{path}: no sessionId")


def bench_tt(path: Path, runs: int) -> tuple[float, int]:
    """Median wall seconds and peak RSS (KiB) of ``tt resume --dry-run``, after checking
    once that it prints the request with the probe as its last message."""
    args = [sys.executable, "-m", "transcript_tools", "resume", str(path), "--dry-run", "--json", "-p", PROBE]
    _, _, stdout = timed(args)
    request = orjson.loads(stdout)
    assert request["messages"][-1]["content"] == PROBE
    wall, peak_mib = run(args, runs)
    return wall, int(peak_mib * 1024)


def bench_cli(path: Path, runs: int) -> list[tuple[float, int]] | None:
    from tests.support.claude_cli import ALLOWED_TOOLS, BUNDLED_VERSION, Sandbox, find_cli
    from tests.support.sessions import project_folder_name
    from tests.support.standin import StandIn

    cli = find_cli(BUNDLED_VERSION)
    if cli is None:
        print(f"claude {BUNDLED_VERSION} not installed: CLI comparison skipped")
        return None
    sid = session_id_of(path)
    out = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="tt-bench-") as tmp:
            root = Path(tmp)
            sandbox = Sandbox.create(root)
            cwd = (root / "work").resolve()
            cwd.mkdir()
            project = sandbox.config_dir / "projects" / project_folder_name(cwd)
            project.mkdir(parents=True)
            shutil.copy(path, project / f"{sid}.jsonl")
            with StandIn() as api:
                args = [
                    str(cli.path),
                    "-p",
                    PROBE,
                    "--resume",
                    sid,
                    "--output-format",
                    "json",
                    "--allowedTools",
                    ALLOWED_TOOLS,
                ]
                wall, rss, _ = timed(args, env=sandbox.env(api.base_url), cwd=cwd)
                sent = [r for r in api.message_requests if r.tool_names]
                assert sent, "the CLI sent no conversation request"
            out.append((wall, rss))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    ap.add_argument(
        "--mb", type=float, default=47.6, help="size to grow to, MiB (47.6 MiB = 50 MB, under the 50 MiB cap)"
    )
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-cli", action="store_true")
    a = ap.parse_args()
    compile_package()
    with tempfile.TemporaryDirectory(prefix="tt-bench-resume-") as tmp:
        path = Path(tmp) / "grown.jsonl"
        grow(a.source, path, int(a.mb * 1024 * 1024))
        size = path.stat().st_size
        with open(path, "rb") as f:
            lines = sum(1 for _ in f)
        print(f"file: {size / 1e6:.1f} MB, {lines} lines, grown from {a.source.name}")
        fl, _ = process_floor(path, a.runs)
        tt_wall, tt_rss = bench_tt(path, a.runs)
        cli = None if a.no_cli else bench_cli(path, a.runs)
    print(f"orjson floor (a process decoding each line, median of {a.runs}): {fl:.3f} s")
    print(
        f"tt resume --dry-run (median of {a.runs}, whole process): {tt_wall:.3f} s, peak RSS {tt_rss / 1024:.0f} MiB"
    )
    ok = True
    ratio = tt_wall / fl
    print(f"  tt / floor = {ratio:.2f}x (target <= 3x): {'PASS' if ratio <= 3 else 'FAIL'}")
    ok &= ratio <= 3
    if cli is not None:
        cli_wall = statistics.median(w for w, _ in cli)
        cli_rss = max(r for _, r in cli)
        print(
            f"claude 2.1.332 -p --resume (median of {a.runs}): {cli_wall:.3f} s, peak RSS {cli_rss / 1024:.0f} MiB"
            f"  runs: {', '.join(f'{w:.2f}' for w, _ in cli)}"
        )
        speedup = cli_wall / tt_wall
        print(f"  claude / tt = {speedup:.1f}x (target >= 10x): {'PASS' if speedup >= 10 else 'FAIL'}")
        ok &= speedup >= 10
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.setdefault("NO_COLOR", "1")
    raise SystemExit(main())
