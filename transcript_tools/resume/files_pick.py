"""The sessions ``tt resume``'s picker offers (a terminal, no session named): this
directory's, its git worktrees' too (`store.session_folders`), newest first, titled as
the ``/resume`` picker and the Agent SDK title them (`listing.parse_lite` over the 64 KiB
head and tail).

Invariants: reads only (each file's head and tail); never prints or asks (`views.resume`
shows the rows and asks). Sessions the ``/resume`` picker hides (sidechain-only, empty)
are left out; a session copied into two worktrees' folders is offered once, its newest
copy; at most `MAX_ROWS`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..catalog.listing import parse_lite
from ..edge import claude_dir as store
from ..edge.reader import read_head_tail
from ..model.errors import NotFound

MAX_ROWS = 20


@dataclass(frozen=True, slots=True)
class Pick:
    """One session the picker offers."""

    path: Path
    #: the title the ``/resume`` picker shows, on one line ("(untitled)" when none)
    title: str
    #: the file's modification time (seconds since the epoch)
    mtime: float


def sessions_to_pick(cwd: str | None = None) -> list[Pick]:
    """The sessions of ``cwd`` (default: the process's) and its repository's other
    worktrees, newest first; `NotFound` when there are none."""
    here = store.canonical_cwd(os.getcwd() if cwd is None else cwd)
    rows = _rows(store.session_folders(here))  # with the repository's other worktrees, as /resume
    if not rows:
        raise NotFound(f"no sessions for {here}", hint="name a session (path, id or prefix)")
    return rows


def _rows(projects: list[Path]) -> list[Pick]:
    out: list[Pick] = []
    for p in (f for project in projects for f in store.session_files(project)):
        head, tail, st = read_head_tail(p)
        lite = parse_lite(p.name[:-6], head, tail, st.st_size)
        if lite.hidden == "sidechain" or lite.hidden == "empty":
            continue
        out.append(Pick(p, (lite.title or "(untitled)").replace("\n", " "), st.st_mtime))
    out.sort(key=lambda r: -r.mtime)
    # A session copied into two worktrees' folders is listed once: its newest copy.
    newest: dict[str, Pick] = {}
    for r in out:
        newest.setdefault(r.path.name, r)
    return list(newest.values())[:MAX_ROWS]
