"""The interactive session picker of ``tt resume`` (a terminal, no session named).

Lists this directory's sessions, its git worktrees' too (`claude_dir.session_folders`), newest
first, titled as the ``/resume`` picker and the Agent SDK title them (`listing.parse_lite`
over the 64 KiB head and tail), and asks for a number on stderr. Presentation only:
choosing is the user's, loading is `cli.resume`'s.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import click

from ..catalog.listing import parse_lite
from ..edge import claude_dir as store
from ..edge.reader import read_head_tail
from ..model.errors import NotFound

MAX_ROWS = 20


def _rows(projects: list[Path]) -> list[tuple[Path, str, float]]:
    out: list[tuple[Path, str, float]] = []
    for p in (f for project in projects for f in store.session_files(project)):
        head, tail, st = read_head_tail(p)
        lite = parse_lite(p.name[:-6], head, tail, st.st_size)
        if lite.hidden == "sidechain" or lite.hidden == "empty":
            continue
        out.append((p, (lite.title or "(untitled)").replace("\n", " "), st.st_mtime))
    out.sort(key=lambda r: -r[2])
    # A session copied into two worktrees' folders is listed once: its newest copy.
    newest: dict[str, tuple[Path, str, float]] = {}
    for r in out:
        newest.setdefault(r[0].name, r)
    return list(newest.values())[:MAX_ROWS]


def pick_session() -> store.SessionRef:
    from rich.table import Table

    from ..cli.common import console

    here = store.canonical_cwd(os.getcwd())
    rows = _rows(store.session_folders(here))  # with the repository's other worktrees, as /resume
    if not rows:
        raise NotFound(f"no sessions for {here}", hint="name a session (path, id or prefix)")
    table = Table(box=None, show_header=True, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column("modified")
    table.add_column("session")
    table.add_column("title", overflow="ellipsis", no_wrap=True)
    for i, (p, title, mtime) in enumerate(rows, 1):
        table.add_row(
            str(i), datetime.fromtimestamp(mtime).strftime("%Y-%m-%d %H:%M"), p.name[:8], title[:80]
        )
    console(stderr=True).print(table)
    n = click.prompt("Resume which session", type=click.IntRange(1, len(rows)), default=1, err=True)
    path = rows[n - 1][0]
    return store.SessionRef(path, path.name[:-6])
