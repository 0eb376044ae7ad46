"""The file side of `state`: map the transcript, read the files a session touched.

`read_tail_state` and `touched_files` memory-map the transcript (read only; an empty file
has nothing to map) and hand the bytes to `state.tail_state` / `state.touched`;
`file_notices` reads each file named (relative names from ``cwd``) for `state.file_notices`.

Invariants: reads only, never writes; a file that is gone reads as None, one that cannot
be read as "" (not the content it was).
"""

from __future__ import annotations

import mmap
from collections.abc import Mapping
from pathlib import Path

from . import state
from .state import TailState, Touched


def read_tail_state(path: Path) -> TailState:
    """The last ``cost-state`` and ``permission-mode`` records of ``path``."""
    with path.open("rb") as f:
        try:
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # an empty file
            return TailState()
        with mm:
            return state.tail_state(mm)


def touched_files(path: Path, start: int = 0) -> dict[str, Touched]:
    """The last touch of each file by the session's tool results from byte ``start`` on."""
    with path.open("rb") as f:
        try:
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:
            return {}
        with mm:
            return state.touched(mm, start)


def file_notices(touched: Mapping[str, Touched], cwd: Path) -> str | None:
    """`state.file_notices` on the files as they are on disk now."""

    def read(name: str) -> str | None:
        p = Path(name) if Path(name).is_absolute() else cwd / name
        try:
            return p.read_text(encoding="utf-8", errors="replace")
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError:
            return ""  # unreadable: not the content it was

    return state.file_notices(touched, read)
