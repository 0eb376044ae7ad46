"""Rendering validation reports with rich: grouped by file, coloured by severity."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.markup import escape
from rich.table import Table

from ..diagnostics import Severity
from ..validate import Report

STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "dim"}

#: How many diagnostics of one code to show per file before folding the rest.
FOLD = 10


def render_reports(con: Any, reports: list[Report], *, quiet: bool = False) -> None:
    if len(reports) > 1 and not quiet:
        con.print(_table(reports))
    for r in reports:
        if quiet or not r.diagnostics:
            continue
        con.print(f"[bold]{escape(r.path)}[/]  [dim]{r.lines} lines, {r.entries} records[/]")
        shown: Counter[str] = Counter()
        for d in r.diagnostics:
            shown[d.code] += 1
            if shown[d.code] > FOLD:
                continue
            where = f"{d.line}" if d.line is not None else "-"
            fix = f" [dim](repair: {d.fix})[/]" if d.fix else ""
            con.print(
                f"  [{STYLE[d.severity]}]{d.severity.value:7}[/] {where:>6}  [cyan]{d.code}[/]  {escape(d.message)}{fix}"
            )
        for code, n in shown.items():
            if n > FOLD:
                con.print(f"  [dim]… and {n - FOLD} more {code}[/]")
    files = len(reports)
    errs = sum(r.errors for r in reports)
    warns = sum(r.warnings for r in reports)
    bad = sum(1 for r in reports if r.errors)
    others = sum(1 for r in reports if r.not_transcript is not None)
    colour = "red" if errs else "yellow" if warns or others else "green"
    con.print(
        f"[{colour}]{files} file(s) checked: {errs} error(s), {warns} warning(s)"
        + (f"; {bad} file(s) with errors" if bad else "")
        + (f"; {others} not a transcript" if others else "")
        + "[/]"
    )


def _table(reports: list[Report]) -> Table:
    t = Table(box=None, show_header=True, header_style="bold")
    t.add_column("file", overflow="fold")
    t.add_column("lines", justify="right")
    t.add_column("errors", justify="right")
    t.add_column("warnings", justify="right")
    t.add_column("status")
    for r in reports:
        if r.not_transcript is not None:
            status = f"[magenta]not a transcript[/] ({escape(r.not_transcript)})"
        else:
            status = "[red]errors[/]" if r.errors else "[yellow]warnings[/]" if r.warnings else "[green]clean[/]"
        if r.past_cap:
            status += " [magenta]past cap[/]"
        t.add_row(escape(r.path), str(r.lines), str(r.errors), str(r.warnings), status)
    return t
