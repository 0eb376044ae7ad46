"""What every tool of the QueryEngine is built on: the `Tool` seam, the values a call
takes and gives (`ToolContext`, `ToolOutcome`), the limits, and the small helpers the six
tools share (`schema`, `cap`, `shown`, `mtime`, `SKIP_DIRS`).

The tools import stack, one way only (a module never imports one above it):

    registry         allow/deny rules, input checks, denials
      builtin        Read, Write, Edit and `builtin()`, the default set of six
        bash         Bash
        search       Glob, Grep
          base       this module
            permissions  the pure path rules (working directories, allow rules)

`ToolOutcome` is defined in the pure `resume.outcome` (the engine builds one for an
interrupted call) and handed on from here.

Invariants: this module imports nothing else of tt's but the pure `permissions` and
`outcome`; it reads
and writes no file (`mtime` only stats one, `ToolContext.locate` resolves symlinks) and
runs no tool. A tool built on it keeps the
contract `tools.registry` relies on: it answers every call with a `ToolOutcome` (failures are
``is_error`` results, never exceptions, except KeyboardInterrupt) and caps its output.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..outcome import ToolOutcome
from .permissions import PathCheck

#: Claude Code's cap on a Bash result (BASH_MAX_OUTPUT_LENGTH default, 2.1.x).
BASH_MAX_OUTPUT = 30_000
#: Cap on any other tool's result text.
MAX_OUTPUT = 100_000
#: Seconds a Read/Glob/Grep may take; Bash has its own timeout (the call's, else this).
DEFAULT_TIMEOUT = 120.0
MAX_BASH_TIMEOUT = 600.0
#: Directories Glob and Grep never descend into (VCS metadata, dependencies, caches).
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__"})


@dataclass(slots=True)
class ToolContext:
    """Where and how tools run. ``files_read`` maps a resolved path to the ``st_mtime_ns``
    it had when last read or written by a tool of this engine (Edit and Write refuse a
    file not read first, or changed since, as Claude Code does)."""

    cwd: Path
    files_read: dict[str, int] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT
    max_output: int = MAX_OUTPUT
    bash_max_output: int = BASH_MAX_OUTPUT
    #: ``--add-dir`` directories: with the cwd, the working directories (`permissions`).
    add_dirs: tuple[Path, ...] = ()
    #: Where ``~`` points (None: the user's home).
    home: Path | None = None
    #: The environment Bash runs with (None: tt's own, credentials withheld; `tools.bash`).
    env: Mapping[str, str] | None = None

    def resolve(self, path: str) -> Path:
        """``path`` made absolute (``~`` expanded, relative to the cwd) with ``..``
        folded lexically; symlinks are not followed (see `locate`)."""
        if path == "~" or path.startswith("~/"):
            path = str(self.home_dir) + path[1:]
        p = Path(path).expanduser()
        return Path(os.path.normpath(p if p.is_absolute() else self.cwd / p))

    @property
    def home_dir(self) -> Path:
        return self.home if self.home is not None else Path.home()

    def locate(self, path: str | Path) -> PathCheck:
        """The adapter `permissions` needs: the requested path and where it really leads."""
        requested = self.resolve(str(path))
        return PathCheck(str(requested), os.path.realpath(requested))

    @property
    def work_dirs(self) -> tuple[str, ...]:
        """The working directories, each as given and as it really is (symlinks resolved)."""
        out: list[str] = []
        for d in (self.cwd, *self.add_dirs):
            for form in (os.path.normpath(d), os.path.realpath(d)):
                if form not in out:
                    out.append(form)
        return tuple(out)


class Tool(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def input_schema(self) -> Mapping[str, Any]: ...

    def run(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome: ...

    def subject(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str | None:
        """What a ``Name(pattern)`` rule is matched against (a command or a path)."""
        ...

    def paths(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> list[str] | None:
        """The paths a call would touch, as the model gave them (None: not a file tool)."""
        ...


# --- helpers the tools share ------------------------------------------------------------


def schema(props: Mapping[str, Any], required: tuple[str, ...]) -> dict[str, Any]:
    """A tool's ``input_schema``: an object of exactly these properties."""
    return {
        "type": "object",
        "properties": dict(props),
        "required": list(required),
        "additionalProperties": False,
    }


def cap(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how many were cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n\n... [{len(text) - limit} characters truncated] ..."


def shown(path: Path, cwd: Path) -> str:
    """``path`` as a result lists it: relative to the cwd when under it, else absolute."""
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def mtime(path: Path) -> int | None:
    """``st_mtime_ns``, or None when the path cannot be stat'ed."""
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None
