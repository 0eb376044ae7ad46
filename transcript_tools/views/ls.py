"""Rendering `tt ls` rows with rich: one table, newest first, damage noted below it."""

from __future__ import annotations

import re
from typing import Any

from rich.markup import escape
from rich.table import Table

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


def render_rows(
    con: Any, rows: list[Row], *, hidden: int = 0, show_project: bool = False, checked: bool = False
) -> None:
    if not rows:
        con.print(
            "[dim]no sessions[/]" + (f" [dim]({hidden} hidden: --hidden lists them)[/]" if hidden else "")
        )
        return
    # Every column the help promises at any width; only the project column (and the year
    # of the date) wait for room. Adjacent paddings collapse: one space between columns.
    wide = con.width >= 110
    # On a screen the title takes what the other columns leave (it is the one cut short);
    # to a pipe (cli.common.PIPE_WIDTH) every column keeps its natural width.
    screen = con.width < 1000
    t = Table(box=None, header_style="bold", pad_edge=False, expand=screen, collapse_padding=True)
    t.add_column("id", style="cyan", no_wrap=True)
    if show_project and wide:
        t.add_column("project", overflow="ellipsis", max_width=24, no_wrap=True)
    t.add_column("title", overflow="ellipsis", no_wrap=True, ratio=1, min_width=16)
    t.add_column("modified", no_wrap=True)
    t.add_column("size", justify="right", no_wrap=True)
    t.add_column("msgs", justify="right", no_wrap=True)
    t.add_column("cmp", justify="right", no_wrap=True)
    t.add_column("sub", justify="right", no_wrap=True)
    t.add_column("model", no_wrap=True, overflow="ellipsis", max_width=18 if wide else 10)
    t.add_column("health", no_wrap=True)
    for r in rows:
        lt = r.lite
        title = escape(lt.title or "")
        if lt.hidden:
            title = f"[dim]({lt.hidden})[/] " + title
        if lt.tag:
            title += f" [magenta]#{escape(lt.tag)}[/]"
        more = "" if r.counts.exact else "+"
        cells = [r.session_id[:8]]
        if show_project and wide:
            cells.append(escape(r.project))
        cells += [
            title,
            local_time(r.mtime_ms, wide) if r.mtime_ms else "-",
            human_size(r.size),
            f"{r.counts.messages}{more}",
        ]
        cells += [
            f"{r.counts.compactions}{more}",
            str(r.subagents) if r.subagents else "-",
            escape(short_model(lt.model)),
        ]
        cells.append(_health(r, checked))
        t.add_row(*cells)
    con.print(t)
    for r in rows:
        if r.unreadable:
            con.print(f"[red]{r.session_id[:8]}: {escape(r.unreadable)}[/]")
        for s in r.skipped[:5]:
            where = f"line {s.line}" if s.line is not None else f"byte {s.offset}"
            con.print(f"[yellow]{r.session_id[:8]}: {where} skipped ({s.code})[/]")
        if len(r.skipped) > 5:
            con.print(f"[yellow]{r.session_id[:8]}: … and {len(r.skipped) - 5} more skipped lines[/]")
    foot = f"{len(rows)} session(s)"
    if hidden:
        foot += f"; {hidden} hidden (sidechain-only or untitled: --hidden lists them)"
    if any(not r.counts.exact for r in rows):
        foot += "; N+ = at least, from the first and last 64 KiB (--check reads files whole)"
    con.print(f"[dim]{foot}[/]")


def _health(r: Row, checked: bool) -> str:
    if r.unreadable:
        return "[red]unreadable[/]"
    if r.health is None:
        return "[dim]?[/]"
    text = r.health
    if r.errors and r.health != "past-cap":
        text += f" ({r.errors})"
    return f"[{HEALTH_STYLE.get(r.health, 'white')}]{text}[/]"
