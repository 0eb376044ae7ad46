"""Rendering `tt ls` rows with rich: one table, newest first, damage noted below it."""

from __future__ import annotations

import re
from typing import Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..catalog.listing import Row
from .times import local_time

HEALTH_STYLE = {"clean": "green", "repairable": "yellow", "damaged": "bold red", "past-cap": "magenta"}
_DATE_SUFFIX = re.compile(r"-\d{8}$")


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "K", "M", "G"):
        if size < 1024 or unit == "G":
            return f"{size:.0f}{unit}" if unit == "B" or size >= 10 else f"{size:.1f}{unit}"
        size /= 1024
    return f"{n}B"


def short_model(model: str | None) -> str:
    if not model:
        return "-"
    m = _DATE_SUFFIX.sub("", model)
    return m[len("claude-") :] if m.startswith("claude-") else m


#: The title keeps at least this many columns (fewer when every title is shorter): on a
#: narrow terminal the other columns wait for room first, in `WAIT_ORDER`.
TITLE_MIN = 20
#: The columns that give way to the title, least useful first (``health`` only when it says
#: nothing: without --check every row's is "?", else near the end). id and title always stay.
WAIT_ORDER = ("project", "cmp", "sub", "health?", "size", "msgs", "model", "health", "modified")


def _id_width(ids: set[str]) -> int:
    """8 characters of each id, or as many more as tell the listed ids apart: a prefix two
    listed sessions share cannot be pasted back as an id (`tt show` calls it ambiguous).
    Only the listed ones: a session of a project not listed may still share a prefix."""
    n = 8
    while n < max(map(len, ids), default=0) and len({i[:n] for i in ids}) < len(ids):
        n += 1
    return n


def render_rows(
    con: Any, rows: list[Row], *, hidden: int = 0, show_project: bool = False, checked: bool = False
) -> None:
    if not rows:
        con.print(
            "[dim]no sessions[/]" + (f" [dim]({hidden} hidden: --hidden lists them)[/]" if hidden else "")
        )
        return
    # Every column the help promises at 80 columns and more; the project column (and the
    # year of the date) wait for 110. Adjacent paddings collapse: one space between columns.
    wide = con.width >= 110
    # On a screen the title takes what the other columns leave (it is the one cut short);
    # to a pipe (cli.common.PIPE_WIDTH) every column keeps its natural width.
    screen = con.width < 1000
    cells: dict[str, list[str]] = {name: [] for name in _COLUMNS}
    n = _id_width({r.session_id for r in rows})
    for r in rows:
        lt = r.lite
        # One line a row: a title set with line breaks (`tt rename ID "$(printf 'a\nb')"`)
        # split its row and put every column after it out of line.
        title = escape(" ".join((lt.title or "").split()))
        if lt.hidden:
            title = f"[dim]({lt.hidden})[/] " + title
        if lt.tag:
            title += f" [magenta]#{escape(lt.tag)}[/]"
        more = "" if r.counts.exact else "+"
        for name, value in (
            ("id", r.session_id[:n]),
            ("project", escape(r.project)),
            ("title", title),
            ("modified", local_time(r.mtime_ms, wide) if r.mtime_ms else "-"),
            ("size", human_size(r.size)),
            ("msgs", f"{r.counts.messages}{more}"),
            ("cmp", f"{r.counts.compactions}{more}"),
            ("sub", str(r.subagents) if r.subagents else "-"),
            ("model", escape(short_model(lt.model))),
            ("health", _health(r, checked)),
        ):
            cells[name].append(value)
    shown = _fit(con.width if screen else None, cells, show_project=show_project and wide, checked=checked)
    t = Table(box=None, header_style="bold", pad_edge=False, expand=screen, collapse_padding=True)
    for name in shown:
        t.add_column(name, **(_COLUMNS[name] | ({"max_width": 18} if name == "model" and wide else {})))
    title_min = min(TITLE_MIN, _width("title", cells["title"]))
    t.columns[shown.index("title")].min_width = title_min
    for k in range(len(rows)):
        t.add_row(*(cells[name][k] for name in shown))
    con.print(t)
    for r in rows:
        if r.unreadable:
            con.print(f"[red]{r.session_id[:8]}: {escape(r.unreadable)}[/]")
        for a in r.damaged_subagents:
            con.print(
                f"[red]{r.session_id[:8]}: subagent file {escape(a)} has errors (`tt validate` it)[/]",
                soft_wrap=True,
            )
        for s in r.skipped[:5]:
            where = f"line {s.line}" if s.line is not None else f"byte {s.offset}"
            con.print(f"[yellow]{r.session_id[:8]}: {where} skipped ({s.code})[/]")
        if len(r.skipped) > 5:
            con.print(f"[yellow]{r.session_id[:8]}: … and {len(r.skipped) - 5} more skipped lines[/]")
    foot = f"{len(rows)} session(s)"
    if hidden:
        # Files that are no session's (another name, a subagent's whose session is gone) are
        # looked for only with --hidden or --check: not in this count (new-user pass).
        foot += (
            f"; {hidden} hidden (sidechain-only, untitled or not a transcript: --hidden lists them, "
            "and files that are no session's)"
        )
    if any(not r.counts.exact for r in rows):
        foot += "; N+ = at least, from the first and last 64 KiB (--check reads files whole)"
    con.print(f"[dim]{foot}[/]")


_COLUMNS: dict[str, dict[str, Any]] = {
    "id": {"style": "cyan", "no_wrap": True},
    "project": {"overflow": "ellipsis", "max_width": 24, "no_wrap": True},
    "title": {"overflow": "ellipsis", "no_wrap": True, "ratio": 1},
    "modified": {"no_wrap": True},
    "size": {"justify": "right", "no_wrap": True},
    "msgs": {"justify": "right", "no_wrap": True},
    "cmp": {"justify": "right", "no_wrap": True},
    "sub": {"justify": "right", "no_wrap": True},
    "model": {"no_wrap": True, "overflow": "ellipsis", "max_width": 10},  # 18 from 110 columns
    "health": {"no_wrap": True},
}


def _width(name: str, values: list[str]) -> int:
    cap = _COLUMNS[name].get("max_width")
    w = max([len(name), *(Text.from_markup(v).cell_len for v in values)])
    return min(w, cap) if cap else w


def _fit(width: int | None, cells: dict[str, list[str]], *, show_project: bool, checked: bool) -> list[str]:
    """The columns shown: all that fit with the title at its minimum (`TITLE_MIN`), the
    others waiting for room in `WAIT_ORDER`; ``width`` None (a pipe): all of them."""
    shown = [n for n in _COLUMNS if n != "project" or show_project]
    if width is None:
        return shown
    title_min = min(TITLE_MIN, _width("title", cells["title"]))
    for wait in WAIT_ORDER:
        need = sum(_width(n, cells[n]) for n in shown if n != "title") + title_min + len(shown) - 1
        if need <= width:
            break
        name = wait.rstrip("?")
        if wait.endswith("?") and checked:
            continue
        if name in shown:
            shown.remove(name)
    return shown


def _health(r: Row, checked: bool) -> str:
    if r.unreadable:
        return "[red]unreadable[/]"
    if r.health is None:
        return "[dim]?[/]"
    text = r.health
    if r.errors and r.health != "past-cap":
        text += f" ({r.errors})"
    return f"[{HEALTH_STYLE.get(r.health, 'white')}]{text}[/]"
