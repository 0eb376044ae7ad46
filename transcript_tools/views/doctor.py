"""Rendering ``tt doctor`` diagnoses for people: one block per file with a finding."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from ..doctor.core import Diagnosis


def render(con: Any, diagnoses: list[Diagnosis]) -> None:
    bad = [d for d in diagnoses if d.findings]
    for d in bad:
        con.print(f"[bold]{escape(d.session_id or d.path)}[/]  [dim]{escape(d.path)}[/]", soft_wrap=True)
        for f in d.findings:
            where = (
                ("listed" if f.listed else "not listed")
                + " by /resume, "
                + ("loads" if f.loads else "does not load")
            )
            con.print(f"  [bold red]{f.code}[/] ({where}): {escape(f.message)}", soft_wrap=True)
            repair = "tt repair applies it" if f.repair else "not a tt repair fix"
            con.print(f"    fix: {escape(f.fix)}  [dim]({repair})[/]", soft_wrap=True)
    ok = len(diagnoses) - len(bad)
    con.print(f"{len(diagnoses)} file(s): {len(bad)} with a reason, {ok} listed and loadable", soft_wrap=True)
