"""Rendering repair reports with rich: what was found, what was done, where it went."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from ..repair.plan import LEFT_WHY
from .diagnostics import STYLE

if TYPE_CHECKING:
    from ..repair.files import FileReport

#: How many actions of one fix to list per file before folding the rest.
FOLD = 8


def render_reports(con: Any, reports: list[FileReport]) -> None:
    for r in reports:
        _render(con, r)
    changed = sum(r.changed for r in reports)
    dry = bool(reports) and reports[0].mode == "dry-run"
    verb = "would change" if dry else "changed"
    con.print(
        f"{len(reports)} file(s): {changed} {verb}, {len(reports) - changed} unchanged" + _tally(reports, dry)
    )


def _tally(reports: list[FileReport], dry: bool) -> str:
    """What repair fixed and what it leaves, by code, for the summary line (the rich
    markup included): "0 left" only when `tt validate` would find no error either."""
    # A compaction repair did not write (it would not shrink the request) is no repair.
    fixes = sum(
        1 for r in reports for a in r.actions if not (a.fix == "compact-history" and r.compacted is False)
    )
    left: Counter[str] = Counter()
    for r in reports:
        left.update(r.left_by_code)
    done = f"; {fixes} repair(s){' planned' if dry else ''}"
    if not left:
        return f"[green]{done}; 0 error(s) left[/]"
    codes = ", ".join(f"{n} {code}" for code, n in left.most_common())
    return f"[green]{done}[/][red]; {sum(left.values())} error(s) left that repair does not fix ({codes})[/]"


def _render(con: Any, r: FileReport) -> None:
    if not r.changed and not r.remaining:
        note = "nothing to repair" + ("" if r.mode != "output" else f"; copied to {r.output}")
        con.print(f"[bold]{escape(str(r.path))}[/]  [green]{escape(note)}[/]")
        return
    con.print(f"[bold]{escape(str(r.path))}[/]  [dim]{r.lines} lines, {r.entries} records[/]")
    shown: Counter[str] = Counter()
    for a in r.actions:
        shown[a.fix] += 1
        if shown[a.fix] > FOLD:
            continue
        where = str(a.line) if a.line is not None else "-"
        code = f" [dim]({a.code})[/]" if a.code else ""
        undone = " [yellow](not done)[/]" if a.fix == "compact-history" and r.compacted is False else ""
        con.print(f"  {where:>6}  [cyan]{a.fix}[/]{code}{undone}  {escape(a.detail)}")
    for fix, n in shown.items():
        if n > FOLD:
            con.print(f"  [dim]… and {n - FOLD} more {fix}[/]")
    left: Counter[str] = Counter()
    for d in r.remaining:
        left[d.code] += 1
        if left[d.code] > FOLD:
            continue
        where = str(d.line) if d.line is not None else "-"
        con.print(
            f"  {where:>6}  [{STYLE[d.severity]}]{d.severity.value} {d.code}[/]  {escape(d.message)} [dim](not repaired)[/]"
        )
    for code, n in left.items():
        if n > FOLD:
            con.print(f"  [dim]… and {n - FOLD} more {code}[/]")
        if code in LEFT_WHY:
            con.print(f"  [dim]{code} left: {escape(LEFT_WHY[code])}[/]")
    if not r.api_checked:
        con.print(
            "  [yellow]past the cap with no compact boundary: the conversation checks (tool pairing, split messages) were skipped[/]"
        )
    if r.mode == "dry-run":
        con.print("  [dim]dry run: nothing written[/]")
        return
    if r.compacted is False:
        con.print(
            "  [yellow]compact-history: no compaction written (the error above says why)"
            + ("; the file is unchanged" if not r.written else "")
            + "[/]"
        )
    if r.written:
        if r.compacted and not r.lines_out:  # in place, nothing rewritten: the compaction alone
            parts = [f"an offline compaction appended to {escape(str(r.output))}"]
        else:
            parts = [f"{r.lines_out} lines to {escape(str(r.output))}"]
            if r.compacted:
                parts.append("an offline compaction appended")
        if r.records_added:
            parts.append(f"{r.records_added} record(s) added")
        if r.quarantine is not None:
            parts.append(
                f"{r.lines_quarantined} line(s), {r.bytes_quarantined} bytes quarantined in {escape(str(r.quarantine))}"
            )
        if r.backup is not None:
            parts.append(f"original kept as {escape(str(r.backup))}")
        con.print("  [green]" + "; ".join(parts) + "[/]")


def render_batch(con: Any, sessions: list[tuple[str, list[FileReport]]]) -> None:
    """Several sessions: the details of those repair changed or could not mend, then one
    table of them all and the totals."""
    from rich.table import Table

    for _, reports in sessions:
        for r in reports:
            if r.changed or r.remaining:
                _render(con, r)
    t = Table(box=None, header_style="bold", pad_edge=False)
    t.add_column("session")
    t.add_column("files", justify="right")
    t.add_column("changed", justify="right")
    t.add_column("repairs", justify="right")
    t.add_column("left", justify="right")
    for path, reports in sessions:
        left = sum(r.remaining_errors for r in reports)
        changed = sum(r.changed for r in reports)
        t.add_row(
            escape(path),
            str(len(reports)),
            str(changed) if changed else "[dim]0[/]",
            str(sum(len(r.actions) for r in reports)),
            f"[red]{left}[/]" if left else "[dim]0[/]",
        )
    con.print(t)
    every = [r for _, reports in sessions for r in reports]
    changed = sum(r.changed for r in every)
    dry = bool(every) and every[0].mode == "dry-run"
    con.print(
        f"{len(sessions)} session(s), {len(every)} file(s): {changed} {'would change' if dry else 'changed'}, "
        f"{len(every) - changed} unchanged" + _tally(every, dry)
    )
