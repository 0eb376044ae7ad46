"""Run tt as a user does: ``python -m transcript_tools ARGS`` in a child process, so a test sees
the real exit code, stdout and stderr (no traceback may reach them) and nothing of pytest's.

The code run is this checkout's (its root first on ``PYTHONPATH``, whatever the cwd and
whatever is installed). The environment is the test's own plus ``NO_COLOR=1`` (no escape codes to compare),
``TT_WIDTH`` (a fixed terminal width; ``width=None`` leaves it unset) and, with ``config``,
``CLAUDE_CONFIG_DIR``; ``drop`` removes inherited variables by prefix (``"ANTHROPIC_"``: no real
credentials reach a test), and ``env`` is applied last. stdin is empty unless ``input`` is given,
so no run waits on a terminal.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tests.support.paths import ROOT

TT = (sys.executable, "-m", "transcript_tools")


def tt_env(
    config: Path | None = None,
    *,
    width: int | None = 200,
    env: Mapping[str, str] | None = None,
    drop: Iterable[str] = (),
) -> dict[str, str]:
    """The environment `tt` and `tt_popen` run tt in (module docstring)."""
    prefixes = tuple(drop)
    out = {k: v for k, v in os.environ.items() if not (prefixes and k.startswith(prefixes))}
    out["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), out.get("PYTHONPATH")) if p)
    out["NO_COLOR"] = "1"
    # tt honours COLUMNS; the width a test sees is TT_WIDTH's, never the shell's.
    out.pop("COLUMNS", None)
    if width is not None:
        out["TT_WIDTH"] = str(width)
    if config is not None:
        out["CLAUDE_CONFIG_DIR"] = str(config)
    out.update(env or {})
    return out


def tt(
    *args: str,
    config: Path | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    input: str | None = None,
    width: int | None = 200,
    drop: Iterable[str] = (),
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``tt ARGS`` to completion: ``.returncode``, ``.stdout`` and ``.stderr`` (UTF-8 text)."""
    return subprocess.run(
        [*TT, *args],
        env=tt_env(config, width=width, env=env, drop=drop),
        cwd=cwd,
        input=input,
        stdin=subprocess.DEVNULL if input is None else None,
        capture_output=True,
        encoding="utf-8",
        timeout=timeout,
        check=False,
    )


def tt_popen(
    *args: str,
    config: Path | None = None,
    env: Mapping[str, str] | None = None,
    width: int | None = 200,
    drop: Iterable[str] = (),
    **popen: Any,
) -> subprocess.Popen[bytes]:
    """``tt ARGS`` started, not awaited (several at once, or a reader that goes away): stdin
    empty and stdout/stderr piped unless ``popen`` says otherwise."""
    popen.setdefault("stdin", subprocess.DEVNULL)
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    return subprocess.Popen([*TT, *args], env=tt_env(config, width=width, env=env, drop=drop), **popen)


def sigint_as(disposition: str) -> Any:
    """A ``preexec_fn`` that starts the child with SIGINT at ``disposition``: ``"default"``
    (a terminal's foreground job), ``"ignored"`` (what a launcher without job control
    passes on: ``cmd &`` in a script, nohup, some CI runners) or ``"blocked"`` (in the
    signal mask, which survives exec). A test of Ctrl-C names the one it means, so its
    verdict does not depend on how pytest itself was started, nor on what an earlier test
    left in the test process's own mask."""
    import signal

    def start() -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, {signal.SIGINT} if disposition == "blocked" else set())
        signal.signal(signal.SIGINT, signal.SIG_IGN if disposition == "ignored" else signal.SIG_DFL)

    return start
