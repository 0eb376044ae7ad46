"""Rendering validation reports with rich: grouped by file, coloured by severity.

rich is imported only where a report is drawn with it. The lines of one file's report
and the summary line are made as runs of (text, style) (`report_lines`), never as rich
markup: rich prints them with `Text.assemble` (no markup, no ``:emoji:`` codes read in a
message or a path), and the CLI writes the same texts itself when the output is no
terminal and rich would print them as they are (`cli.common.prints_as_is`), sparing such a
run rich's ~20 ms of imports (4% of `tt validate` on a 50 MB file). Several files' reports
have tables: rich draws them.
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


#: One output line: runs of (text, rich style), "" for none.
Line = list[tuple[str, str]]


def render_reports(
    con: Any, reports: list[Report], *, quiet: bool = False, errors_only: bool = False
) -> None:
    """Reports grouped by file (a table first when there are several, then a summary per
    code); ``errors_only``: only the files with errors, and only their errors."""
    from rich.text import Text

    many = len(reports) > 1
    listed = [r for r in reports if r.errors] if errors_only else reports
    if many and not quiet and listed:
        base = _common_folder([r.path for r in listed])
        if base:
            con.print(Text.assemble(("files under ", "dim"), (base, "bold")), soft_wrap=True)
        con.print(_table(listed, base, con.width))
    if not quiet:
        for r in listed:
            for line in report_lines(r, errors_only=errors_only):
                con.print(Text.assemble(*line))
    if many and not quiet:
        _codes(con, reports, errors_only)
    text, colour = summary(reports)
    con.print(Text(text, colour))


def plain_lines(reports: list[Report], *, quiet: bool = False, errors_only: bool = False) -> list[str] | None:
    """The texts of the lines `render_reports` prints, when it prints no table (one file,
    or only the summary); None when it does."""
    if len(reports) > 1 and not quiet:
        return None
    listed = [r for r in reports if r.errors] if errors_only else reports
    lines = (
        []
        if quiet
        else ["".join(t for t, _ in ln) for r in listed for ln in report_lines(r, errors_only=errors_only)]
    )
    lines.append(summary(reports)[0])
    return lines


def report_lines(r: Report, *, errors_only: bool = False) -> list[Line]:
    """One file's lines: its name, then each finding (`FOLD` of a code at most, then how
    many more); nothing for a file without findings."""
    if not r.diagnostics:
        return []
    out: list[Line] = [[(r.path, "bold"), ("  ", ""), (f"{r.lines} lines, {r.entries} records", "dim")]]
    shown: Counter[str] = Counter()
    for d in r.diagnostics:
        if errors_only and d.severity is not Severity.ERROR:
            continue
        shown[d.code] += 1
        if shown[d.code] > FOLD:
            continue
        where = f"{d.line}" if d.line is not None else "-"
        line: Line = [
            ("  ", ""),
            (f"{d.severity.value:7}", STYLE[d.severity]),
            (f" {where:>6}  ", ""),
            (d.code, "cyan"),
            ("  " + d.message, ""),
        ]
        if d.fix:
            line += [(" ", ""), (f"(repair: {d.fix})", "dim")]
        out.append(line)
    for code, n in shown.items():
        if n > FOLD:
            out.append([("  ", ""), (f"… and {n - FOLD} more {code}", "dim")])
    return out


def summary(reports: list[Report]) -> tuple[str, str]:
    """The last line `render_reports` prints, as plain text, and its colour.

    Only digits and fixed words: no line break (the CLI writes it as is when the output
    is no terminal; tests/validate/test_cli_validate.py pins it to rich's rendering)."""
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


def _common_folder(paths: list[str]) -> str:
    """The folder every path is in ("" when they share none but the root): the table names
    each file from there, so that long absolute paths do not fill it (a new user's table at
    120 columns wrapped every path over two or three lines). Paths as the reports hold
    them, cut at ``/``."""
    folders = [p.split("/")[:-1] for p in paths]
    common: list[str] = []
    for parts in zip(*folders, strict=False):  # as deep as the shallowest
        if any(x != parts[0] for x in parts):
            break
        common.append(parts[0])
    return "/".join(common) if any(common) else ""


def _table(reports: list[Report], base: str = "", width: int = 0) -> Table:
    from rich.markup import escape
    from rich.table import Table

    t = Table(box=None, show_header=True, header_style="bold")
    names = [r.path[len(base) + 1 :] if base else r.path for r in reports]
    # The names whole where the width allows: the status column wraps first (its longest
    # texts are explanations), and the numbers and a status word take ~40 columns.
    t.add_column("file", overflow="fold", min_width=min(max(map(len, names)), max(width - 40, 20)))
    t.add_column("lines", justify="right")
    t.add_column("errors", justify="right")
    t.add_column("warnings", justify="right")
    t.add_column("status", overflow="fold")
    for r, name in zip(reports, names, strict=True):
        if r.not_transcript is not None:
            status = f"[magenta]not a transcript[/] ({escape(r.not_transcript)})"
        else:
            status = (
                "[red]errors[/]" if r.errors else "[yellow]warnings[/]" if r.warnings else "[green]clean[/]"
            )
        if r.past_cap:
            status += " [magenta]past cap[/]"
        t.add_row(escape(name), str(r.lines), str(r.errors), str(r.warnings), status)
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
