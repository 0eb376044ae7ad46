"""Bash, as Claude Code shapes it (see `tools.builtin` for where they were observed).

The command runs with ``bash -c`` in the session's cwd, stdin closed, in its own process
group, killed whole on timeout or Ctrl-C. Output is stdout then stderr, trailing newlines
trimmed, capped at ``ToolContext.bash_max_output``; a failure reads ``Exit code N`` +
output (an ``is_error`` result and an ``"Error: ..."`` toolUseResult).

Two choices that differ from Claude Code, on purpose (issue 19):
- The environment is tt's own minus the API credentials (`WITHHELD_ENV`: the variables
  tt and Claude Code authenticate with). Claude Code 2.1.332 hands its whole
  environment to Bash, ``ANTHROPIC_API_KEY`` included (``env`` in a Bash call showed
  it); a command the model runs — maybe on a prompt injection — has no use for the key.
  A caller that wants another environment passes ``ToolContext.env``.
- At most `MAX_HELD_BYTES` of each stream is kept in memory (the rest is read and
  dropped), so ``yes`` until the timeout cannot flood memory; the result says how much
  was dropped.

It builds on `tools.base` alone; `tools.builtin` puts it in the default set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..outcome import ToolOutcome
from .base import MAX_BASH_TIMEOUT, ToolContext, cap, schema

#: Never handed to Bash: the credentials tt (and Claude Code) call the API with.
WITHHELD_ENV = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_ADMIN_KEY",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "CLAUDE_API_KEY",
    }
)
#: Bytes of stdout (and of stderr) kept from one command; the result shows far fewer.
MAX_HELD_BYTES = 1024 * 1024


def bash_env(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without the API credentials (`WITHHELD_ENV`)."""
    return {k: v for k, v in environ.items() if k not in WITHHELD_ENV}


class Bash:
    name = "Bash"
    description = (
        "Run a bash command in the session's working directory and return its output. "
        f"timeout is in milliseconds (at most {int(MAX_BASH_TIMEOUT * 1000)})."
    )
    input_schema = schema(
        {
            "command": {"type": "string", "description": "The command to execute"},
            "timeout": {"type": "number", "description": "Optional timeout in milliseconds"},
            "description": {"type": "string", "description": "What the command does, in 5-10 words"},
        },
        ("command",),
    )

    def subject(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str | None:
        return str(tool_input["command"]).strip()

    def paths(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> list[str] | None:
        return None  # not a file tool: its rules match the command (see `tools.registry`)

    def run(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        # Imported here: a --dry-run needs the tool definitions, not the machinery.
        import subprocess

        ms = tool_input.get("timeout")
        limit = min(MAX_BASH_TIMEOUT, ms / 1000 if isinstance(ms, (int, float)) and ms > 0 else ctx.timeout)
        try:
            proc = subprocess.Popen(
                ["bash", "-c", tool_input["command"]],
                cwd=ctx.cwd,
                env=dict(ctx.env) if ctx.env is not None else bash_env(os.environ),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as e:
            return ToolOutcome.error(f"Could not run bash: {e.strerror}", wrap=False)
        interrupted = False
        import time

        readers = [_Held(proc.stdout), _Held(proc.stderr)]
        deadline = time.monotonic() + limit
        try:
            proc.wait(timeout=limit)
            # As communicate(): done when the pipes close too (a child in the background
            # may hold them), within the same timeout.
            for r in readers:
                r.thread.join(max(0.0, deadline - time.monotonic()))
            if any(r.thread.is_alive() for r in readers):
                raise subprocess.TimeoutExpired(proc.args, limit)
        except subprocess.TimeoutExpired:
            _kill(proc)
            proc.wait()
            interrupted = True
        except KeyboardInterrupt:
            _kill(proc)
            proc.wait()
            for r in readers:
                r.join()
            raise
        stdout, stderr = (r.join() for r in readers)
        both = "\n".join(x for x in (stdout, stderr) if x)
        both = cap(both, ctx.bash_max_output)
        result = {
            "stdout": stdout,
            "stderr": stderr,
            "interrupted": interrupted,
            "isImage": False,
            "noOutputExpected": False,
        }
        if interrupted:
            text = f"Command timed out after {limit:g}s" + (f"\n{both}" if both else "")
            return ToolOutcome(text, result, is_error=True)
        if proc.returncode != 0:
            return ToolOutcome.error(
                f"Exit code {proc.returncode}" + (f"\n{both}" if both else ""), wrap=False
            )
        return ToolOutcome(both or "(Bash completed with no output)", result, explicit_ok=True)


class _Held:
    """Reads one pipe to its end on a thread, keeping the first `MAX_HELD_BYTES`."""

    def __init__(self, pipe: Any) -> None:
        import threading

        self.pipe = pipe
        self.kept = bytearray()
        self.dropped = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            while chunk := self.pipe.read1(65536):
                room = MAX_HELD_BYTES - len(self.kept)
                self.kept += chunk[:room]
                self.dropped += max(0, len(chunk) - room)
        except (OSError, ValueError):
            pass
        finally:
            self.pipe.close()

    def join(self) -> str:
        self.thread.join()
        text = self.kept.decode("utf-8", "replace").rstrip("\n")
        return text + (f"\n... [{self.dropped} bytes of output dropped] ..." if self.dropped else "")


def _kill(proc: Any) -> None:
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
