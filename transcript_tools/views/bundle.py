"""Rendering ``tt export`` and ``tt import`` for people: what went in or out, and the
commands that continue the session."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.markup import escape


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n:.1f} GiB"


def render_export(con: Any, info: dict[str, Any]) -> None:
    def out(text: str) -> None:
        con.print(text, soft_wrap=True)

    roles = Counter(f["role"] for f in info["files"])
    if info.get("dry_run"):
        taken = (
            " [yellow](exists: a real export would refuse to overwrite it)[/]" if info.get("exists") else ""
        )
        out(
            f"[bold]Would export[/] {escape(info['session_id'])} → [bold]{escape(info['path'])}[/] ({_size(info['bytes'])}){taken}; nothing written"
        )
    else:
        out(
            f"[bold green]Exported[/] {escape(info['session_id'])} → [bold]{escape(info['path'])}[/] ({_size(info['bytes'])})"
        )
    out("  holds    " + ", ".join(f"{n} {r}" for r, n in sorted(roles.items())))
    out(f"  cwd      {escape(str(info['cwd']))}")
    out(f"  versions {escape(', '.join(info['claude_code_versions']) or '?')}")
    if info["redacted"]:
        red = info["redactions"]
        what = ", ".join(f"{k} {n}" for k, n in red.items()) if red else "none found"
        out(f"  redacted {sum(red.values())} secret(s) ({escape(what)})")
    else:
        out("  [yellow]not redacted: the bundle holds everything, secrets included[/]")
    for s in info["skipped"]:
        out(f"  [dim]skipped {escape(s)} (not a regular file)[/]")
    if not info.get("dry_run"):  # no zip was written to import
        out(f"Import it elsewhere with: tt import {escape(info['path'])} --cwd <project folder>")


def render_import(con: Any, info: dict[str, Any]) -> None:
    def out(text: str) -> None:
        con.print(text, soft_wrap=True)

    if not info["written"]:
        out(
            f"[bold]Bundle OK[/] {escape(info['archive'])}: session {escape(info['session_id'])}, {len(info['files'])} file(s)"
        )
        out(f"  from cwd {escape(str(info['original_cwd']))}; would go under {escape(info['cwd'])}")
        if info.get("exists"):
            out(
                f"  [yellow]exists already: {escape(info['exists'][0])}: a real import would refuse "
                "(tt never overwrites; `tt delete` it first if the bundle should replace it)[/]"
            )
        out("  [dim]dry run: nothing extracted[/]")
        return
    out(f"[bold green]Imported[/] {escape(info['session_id'])} → {escape(info['path'])}")
    out(
        f"  cwd      {escape(info['cwd'])}"
        + (
            f" [dim](was {escape(str(info['original_cwd']))})[/]"
            if info["original_cwd"] != info["cwd"]
            else ""
        )
    )
    out(f"  files    {len(info['files'])}; {info['relocated_lines']} line(s) with paths rewritten")
    # Said only when a secret was replaced (found by a new user: said of a bundle whose
    # export found none).
    if info["redacted"] and (n := sum(info["redactions"].values())):
        out(f"  [dim]the bundle was redacted: {n} secret(s) read [REDACTED:<kind>][/]")
    out("Continue it with:")
    for c in info["continue"]:
        out(f"  {escape(c)}")
