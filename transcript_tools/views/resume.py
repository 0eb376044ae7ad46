"""The interactive session picker of ``tt resume`` (a terminal, no session named).

Shows the sessions `resume.files_pick.sessions_to_pick` found (newest first, with their
titles) and asks for a number on stderr. Presentation only: the rows are the library's,
loading is `cli.resume`'s.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from pathlib import Path

    from ..resume.files_pick import Pick


def pick_session(rows: list[Pick], con: Any) -> Path:
    """Show ``rows`` as a numbered table on ``con`` (the CLI passes stderr's console) and return the path of the one chosen."""
    from rich.table import Table

    table = Table(box=None, show_header=True, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column("modified")
    table.add_column("session")
    table.add_column("title", overflow="ellipsis", no_wrap=True)
    for i, r in enumerate(rows, 1):
        table.add_row(
            str(i), datetime.fromtimestamp(r.mtime).strftime("%Y-%m-%d %H:%M"), r.path.name[:8], r.title[:80]
        )
    con.print(table)
    n = click.prompt("Resume which session", type=click.IntRange(1, len(rows)), default=1, err=True)
    return rows[n - 1].path
