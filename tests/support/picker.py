"""The real CLI's interactive ``/resume`` picker, run in a pseudo-terminal and read from its debug log.

``claude -p --resume <id>`` and the Agent SDK's ``list_sessions`` answer whether a session
loads and whether the SDK lists it; neither is the picker a user sees after ``claude
--resume``. Claude Code 2.1.197 and 2.1.332 log why the picker leaves a session out
(``--debug-file``: ``Session <id> filtered from /resume: <reason>``, then ``/resume:
enriched N sessions, F filtered out, V visible``), so the picker itself can be the oracle:
it is started in a pty (it needs a terminal), given the sandbox's onboarding, API-key and
folder-trust answers so no dialog comes first, read until it has listed the sessions, and
killed. No request is made (the API is a closed port).

Invariants: only the sandbox is touched (its ``.claude.json`` gains the three answers); the
CLI and everything it started are killed before `picker_probe` returns.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .claude_cli import ClaudeCLI, ClaudeRunError, Sandbox

_FOUND = re.compile(r"/resume: found (\d+) session files on disk")
_FILTERED = re.compile(r"Session (\S+) filtered from /resume: (.*)$")
_ANSI = re.compile(rb"\x1b\[[0-9;?>=]*[A-Za-z~]|\x1b\][^\x07]*\x07|\x1b[()][A-Za-z0-9]")


@dataclass(frozen=True, slots=True)
class PickerRun:
    found: int  # session files of the folder the picker read
    filtered: Mapping[str, str]  # session id -> the reason the CLI logged for leaving it out
    screen: str  # what it drew, escapes and whitespace taken out

    def lists(self, session_id: str) -> bool:
        return session_id not in self.filtered


def _answer_dialogs(sandbox: Sandbox, cwd: Path) -> None:
    # What a user has answered once: onboarding done, the sandbox's API key ("test-key",
    # kept by its last 20 characters) approved, the folder trusted.
    path = sandbox.config_dir / ".claude.json"
    config = json.loads(path.read_text()) if path.is_file() else {}
    config["hasCompletedOnboarding"] = True
    config.setdefault("theme", "dark")
    config["customApiKeyResponses"] = {"approved": ["test-key"], "rejected": []}
    config.setdefault("projects", {}).setdefault(str(cwd), {})["hasTrustDialogAccepted"] = True
    path.write_text(json.dumps(config))


def picker_probe(
    cli: ClaudeCLI,
    sandbox: Sandbox,
    cwd: Path,
    *,
    extra_env: Mapping[str, str] | None = None,
    timeout: float = 60.0,
) -> PickerRun:
    """``claude --resume`` (no id) in ``cwd``: which of the folder's sessions its picker left out, and why."""
    _answer_dialogs(sandbox, cwd)
    log = sandbox.home / "tmp" / f"picker-{time.monotonic_ns()}.log"
    env = sandbox.env("http://127.0.0.1:9", extra={"TERM": "xterm-256color", **(extra_env or {})})
    args = [str(cli.path), "--resume", "--debug-file", str(log)]
    pid, fd = pty.fork()
    if pid == 0:  # the child: a new session with the pty as its terminal
        try:
            os.chdir(cwd)
            os.execve(args[0], args, env)
        finally:
            os._exit(127)
    out = b""
    text = screen = ""
    done_at: float | None = None
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    out += os.read(fd, 65536)
                except OSError:
                    break  # the CLI exited
            text = log.read_text(errors="replace") if log.is_file() else ""
            screen = re.sub(rb"\s+", b"", _ANSI.sub(b"", out)).decode("utf-8", "replace")
            # The list drawn (2.1.332 "Enter to resume", 2.1.197 "Space to preview"), or none
            # left to draw (2.1.332 "No sessions…", 2.1.197 "No conversations found…"), or the
            # log's count of the ones left out.
            listed = "enriched" in text or any(
                s in screen for s in ("Entertoresume", "Spacetopreview", "Nosessions", "Noconversationsfound")
            )
            if done_at is None and _FOUND.search(text) and listed:
                done_at = time.monotonic() + 0.5  # a last look for late log lines
            if done_at is not None and time.monotonic() >= done_at:
                break
    finally:
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        os.close(fd)
    text = log.read_text(errors="replace") if log.is_file() else text  # its last lines too
    found = _FOUND.search(text)
    if found is None or done_at is None:
        raise ClaudeRunError(
            f"the /resume picker did not list the sessions in {timeout:g}s:\n{text[-1500:]}\n--- screen\n{screen[-800:]}"
        )
    filtered = {m.group(1): m.group(2) for m in map(_FILTERED.search, text.splitlines()) if m}
    return PickerRun(int(found.group(1)), filtered, screen)
