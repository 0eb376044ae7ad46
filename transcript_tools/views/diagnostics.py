"""Rendering validation reports with rich: grouped by file, coloured by severity.

rich is imported only where a report is drawn with it: the summary line alone
(`summary`, what ``tt validate -q`` prints) is plain text, and the CLI writes it without
rich when the output is no terminal (`cli.common.plain_width`), sparing every such run
rich's ~20 ms of imports.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from ..model.diagnostics import Severity
from ..validate.core import Report

if TYPE_CHECKING:
    from rich.table import Table

STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "dim"}

#: How many diagnostics of one code to show per file before folding the rest.
FOLD = 10


def by_code(reports: list[Report]) -> dict[str, dict[str, Any]]:
    """Per diagnostic code: its severity, how many findings, in how many files."""
    out: dict[str, dict[str, Any]] = {}
    for r in reports:
        seen: set[str] = set()
        for d in r.diagnostics:
            row = out.setdefault(d.code, {"severity": d.severity.value, "count": 0, "files": 0})
            row["count"] += 1
            if d.code not in seen:
                seen.add(d.code)
                row["files"] += 1
    return dict(sorted(out.items(), key=lambda kv: (kv[1]["severity"] != "error", -kv[1]["count"], kv[0])))


def render_reports(
    con: Any, reports: list[Report], *, quiet: bool = False, errors_only: bool = False
) -> None:
    """Reports grouped by file (a table first when there are several, then a summary per
    code); ``errors_only``: only the files with errors, and only their errors."""
    from rich.markup import escape

    many = len(reports) > 1
    listed = [r for r in reports if r.errors] if errors_only else reports
    if many and not quiet and listed:
        con.print(_table(listed))
    for r in listed:
        if quiet or not r.diagnostics:
            continue
        con.print(f"[bold]{escape(r.path)}[/]  [dim]{r.lines} lines, {r.entries} records[/]")
        shown: Counter[str] = Counter()
        for d in r.diagnostics:
            if errors_only and d.severity is not Severity.ERROR:
                continue
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
    if many and not quiet:
        _codes(con, reports, errors_only)
    text, colour = summary(reports)
    con.print(f"[{colour}]{text}[/]")


def summary_only(reports: list[Report], *, quiet: bool = False, errors_only: bool = False) -> bool:
    """Does `render_reports` print the `summary` line and nothing else?"""
    if quiet:
        return True
    listed = [r for r in reports if r.errors] if errors_only else reports
    return len(reports) == 1 and not any(r.diagnostics for r in listed)


def summary(reports: list[Report]) -> tuple[str, str]:
    """The last line `render_reports` prints, as plain text, and its colour.

    Only digits and fixed words: no rich markup, emoji code or line break (the CLI
    writes it as is when the output is no terminal; tests/validate/test_cli_validate.py
    pins it to rich's rendering)."""
    errs = sum(r.errors for r in reports)
    warns = sum(r.warnings for r in reports)
    bad = sum(1 for r in reports if r.errors)
    others = sum(1 for r in reports if r.not_transcript is not None)
    colour = "red" if errs else "yellow" if warns or others else "green"
    text = (
        f"{len(reports)} file(s) checked: {errs} error(s), {warns} warning(s)"
        + (f"; {bad} file(s) with errors" if bad else "")
        + (f"; {others} not a transcript" if others else "")
    )
    return text, colour


def _table(reports: list[Report]) -> Table:
    from rich.markup import escape
    from rich.table import Table

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
            status = (
                "[red]errors[/]" if r.errors else "[yellow]warnings[/]" if r.warnings else "[green]clean[/]"
            )
        if r.past_cap:
            status += " [magenta]past cap[/]"
        t.add_row(escape(r.path), str(r.lines), str(r.errors), str(r.warnings), status)
    return t


def _codes(con: Any, reports: list[Report], errors_only: bool) -> None:
    from rich.table import Table

    rows = [(c, v) for c, v in by_code(reports).items() if not errors_only or v["severity"] == "error"]
    if not rows:
        return
    t = Table(
        box=None,
        show_header=True,
        header_style="bold",
        title="by code",
        title_justify="left",
        title_style="bold",
    )
    t.add_column("code", style="cyan")
    t.add_column("severity")
    t.add_column("findings", justify="right")
    t.add_column("files", justify="right")
    for code, v in rows:
        sev = Severity(v["severity"])
        t.add_row(code, f"[{STYLE[sev]}]{sev.value}[/]", str(v["count"]), str(v["files"]))
    con.print(t)
