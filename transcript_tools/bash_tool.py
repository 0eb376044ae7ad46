"""Bash, as Claude Code shapes it (see `builtin_tools` for where they were observed).

The command runs with ``bash -c`` in the session's cwd, stdin closed, in its own process
group, killed whole on timeout or Ctrl-C. Output is stdout then stderr, trailing newlines
trimmed, capped at ``ToolContext.bash_max_output``; a failure reads ``Exit code N`` +
output (an ``is_error`` result and an ``"Error: ..."`` toolUseResult).

It builds on `tool_base` alone; `builtin_tools` puts it in the default set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .tool_base import MAX_BASH_TIMEOUT, ToolContext, ToolOutcome, cap, schema


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

    def run(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        # Imported here: a --dry-run needs the tool definitions, not the machinery.
        import subprocess

        ms = tool_input.get("timeout")
        limit = min(MAX_BASH_TIMEOUT, ms / 1000 if isinstance(ms, (int, float)) and ms > 0 else ctx.timeout)
        try:
            proc = subprocess.Popen(
                ["bash", "-c", tool_input["command"]],
                cwd=ctx.cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as e:
            return ToolOutcome.error(f"Could not run bash: {e.strerror}", wrap=False)
        interrupted = False
        try:
            out, err = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            _kill(proc)
            out, err = proc.communicate()
            interrupted = True
        except KeyboardInterrupt:
            _kill(proc)
            proc.communicate()
            raise
        stdout = out.decode("utf-8", "replace").rstrip("\n")
        stderr = err.decode("utf-8", "replace").rstrip("\n")
        both = "\n".join(x for x in (stdout, stderr) if x)
        both = cap(both, ctx.bash_max_output)
        result = {"stdout": stdout, "stderr": stderr, "interrupted": interrupted, "isImage": False, "noOutputExpected": False}
        if interrupted:
            text = f"Command timed out after {limit:g}s" + (f"\n{both}" if both else "")
            return ToolOutcome(text, result, is_error=True)
        if proc.returncode != 0:
            return ToolOutcome.error(f"Exit code {proc.returncode}" + (f"\n{both}" if both else ""), wrap=False)
        return ToolOutcome(both or "(Bash completed with no output)", result, explicit_ok=True)


def _kill(proc: Any) -> None:
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
