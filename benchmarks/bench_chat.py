"""Benchmark: how soon ``tt chat`` shows its prompt on a compacted 50 MB session.

Grows the real 2.1.332 session (it holds a ``/compact``) to 50 MB (``grow.py``; each copy
carries the compaction, so the resume reads from the last boundary), puts it in a
throw-away config dir, and starts ``tt chat FILE`` in a pseudo-terminal: the time is from
the fork to the first ``>`` drawn after the ``tt chat:`` banner (the prompt), answering
the line editor's cursor-position query as a terminal does. No request is made (the API
address is a closed local port and nothing is typed); Ctrl-D then ends the chat.

Paired runs: with ``--baseline-rev REV`` (a git revision, checked out into a temporary
``git worktree``), each pair starts the baseline and this tree back to back, in
alternating order, so the load of a shared machine falls on both alike; the report gives
each side's median, the median of the per-pair differences and how many runs were under
the target (0.5 s). The load average is printed with the numbers: on a busy machine the
absolute times grow, the paired difference much less.

    python benchmarks/bench_chat.py                          # this tree only, 15 runs
    python benchmarks/bench_chat.py --baseline-rev HEAD~3 --pairs 20

Exit status 0 when this tree's median is under the target, 1 otherwise.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from common import grown  # noqa: E402

TARGET_S = 0.5
CPR_QUERY = b"\x1b[6n"  # "where is the cursor?": a terminal answers ESC [ row ; col R
BANNER = b"tt chat:"


def time_to_prompt(cmd: list[str], env: dict[str, str], cwd: Path, timeout: float = 30.0) -> float:
    """Seconds from the fork to the prompt drawn after the banner (see the docstring)."""
    t0 = time.monotonic()
    pid, fd = pty.fork()
    if pid == 0:  # the child: becomes the chat
        os.chdir(cwd)
        os.execvpe(cmd[0], cmd, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 150, 0, 0))
    seen = b""
    shown: float | None = None
    try:
        while time.monotonic() - t0 < timeout:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            if CPR_QUERY in data:
                os.write(fd, b"\x1b[1;1R")
            seen += data
            if shown is None and BANNER in seen:
                after = seen.split(BANNER, 1)[1]
                if b"\n" in after and b">" in after.split(b"\n", 1)[1]:
                    shown = time.monotonic() - t0
                    os.write(fd, b"\x04")  # Ctrl-D: leave
    finally:
        if shown is None:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    if shown is None:
        raise SystemExit(f"no prompt within {timeout:g}s; the terminal showed:\n{seen[-2000:]!r}")
    return shown


def setup(tmp: Path) -> tuple[Path, Path, Path]:
    """(config dir, the session file, the work dir)."""
    config = tmp / "config"
    work = tmp / "work"
    work.mkdir()
    session = config / "projects" / "bench" / "session.jsonl"
    session.parent.mkdir(parents=True)
    shutil.copyfile(grown("small-lines", 50), session)
    return config, session, work


def env_for(tree: Path, config: Path, home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
        "HOME": str(home),
        "PYTHONPATH": str(tree),
        "CLAUDE_CONFIG_DIR": str(config),
        "ANTHROPIC_API_KEY": "bench-never-sent",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",  # a closed port: nothing is asked of it
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=15, help="runs of each tree (default 15)")
    ap.add_argument("--baseline-rev", help="a git revision to compare with, run in pairs")
    args = ap.parse_args()
    import compileall

    with tempfile.TemporaryDirectory(prefix="tt-bench-chat-") as t:
        tmp = Path(t)
        config, session, work = setup(tmp)
        trees = {"this tree": ROOT}
        if args.baseline_rev:
            base = tmp / "baseline"
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), args.baseline_rev],
                check=True,
                capture_output=True,
            )
            trees = {f"baseline {args.baseline_rev}": base, "this tree": ROOT}
        try:
            for tree in trees.values():  # bytecode written, as an installed wheel has it
                compileall.compile_dir(str(tree / "transcript_tools"), quiet=1)
            cmd = [sys.executable, "-m", "transcript_tools", "chat", str(session), "--cwd", str(work)]
            names = list(trees)
            for name in names:  # a warm-up each (page cache, bytecode)
                time_to_prompt(cmd, env_for(trees[name], config, tmp), work)
            load_before = os.getloadavg()[0]
            times: dict[str, list[float]] = {n: [] for n in names}
            for i in range(args.pairs):
                order = names if i % 2 == 0 else names[::-1]
                for name in order:
                    times[name].append(time_to_prompt(cmd, env_for(trees[name], config, tmp), work))
            load_after = os.getloadavg()[0]
        finally:
            if args.baseline_rev:
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tmp / "baseline")],
                    check=False,
                    capture_output=True,
                )
    size = session.stat().st_size if session.exists() else 50_000_000
    print(f"tt chat on a compacted {size / 1e6:.0f} MB session: time to the prompt, {args.pairs} run(s) each")
    print(f"load average {load_before:.1f} before, {load_after:.1f} after ({os.cpu_count()} CPUs)")
    for name in names:
        ts = times[name]
        under = sum(t < TARGET_S for t in ts)
        print(
            f"  {name:<24} median {statistics.median(ts):.3f} s  min {min(ts):.3f}  max {max(ts):.3f}"
            f"  under {TARGET_S} s: {under}/{len(ts)}"
        )
    if len(names) == 2:
        diffs = [b - a for a, b in zip(times[names[0]], times[names[1]], strict=True)]
        print(f"  paired difference (this tree - baseline): median {statistics.median(diffs):+.3f} s")
    return 0 if statistics.median(times["this tree"]) < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
