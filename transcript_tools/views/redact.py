"""Rendering ``tt redact`` results: one line per finding (file:line, kind, where), then a
summary by kind. Never a secret: findings do not carry one."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from rich.markup import escape

if TYPE_CHECKING:
    from ..redact.files import FileResult


def render_redact(con: Any, results: list[FileResult], *, written: bool) -> None:
    def out(text: str) -> None:
        con.print(text, soft_wrap=True)

    kinds: Counter[str] = Counter()
    for r in results:
        for f in r.findings:
            kinds[f.kind] += 1
            out(f"{escape(str(r.path))}:{f.line}  [bold red]{f.kind}[/]  [dim]{escape(f.where)}[/]")
    total = sum(kinds.values())
    files = sum(1 for r in results if r.findings)
    if not total:
        out(f"[green]No secrets found[/] in {len(results)} file(s).")
        return
    out(
        f"{total} secret(s) in {files} of {len(results)} file(s): "
        + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
    )
    if not written:
        out("[dim]Nothing written. Write a redacted copy with -o OUT, or redact in place with --in-place.[/]")
        return
    for r in results:
        if r.written is None:
            continue
        line = f"  wrote {escape(str(r.written))} ({r.changed_lines} line(s) changed)"
        if r.backup is not None:
            line += (
                f"; the original is kept in {escape(str(r.backup))} [yellow](it still holds the secrets)[/]"
            )
        out(line)
