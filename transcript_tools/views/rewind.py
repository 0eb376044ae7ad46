"""Rendering ``tt rewind``: the plan (one line per tracked file, with a unified diff for
each change), what was applied, and the fork when ``--conversation`` made one."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

_STYLE = {
    "restore": "yellow",
    "create": "green",
    "delete": "red",
    "unchanged": "dim",
    "backup-missing": "bold red",
    "outside-cwd": "magenta",
    "refused": "bold red",
    "not-checkpointed": "dim",
}


def render_plan(con: Any, plan: dict[str, Any], *, diffs: bool) -> None:
    def out(text: str) -> None:
        con.print(text, soft_wrap=True)

    out(
        f"Rewind files to message {escape(plan['target'])} [dim](checkpoint of prompt {escape(plan['snapshot'])})[/]"
    )
    if plan["note"]:
        out(f"  [dim]{escape(plan['note'])}[/]")
    out(f"  project {escape(plan['cwd'])}")
    if not plan["files"]:
        out("  no files are tracked by this session's checkpoints")
    for f in plan["files"]:
        style = _STYLE.get(f["action"], "bold")
        extra = f" ({escape(f['reason'])})" if f.get("reason") else ""
        out(f"  [{style}]{f['action']:15}[/] {escape(f['path'])}{extra}")
    if diffs:
        for f in plan["files"]:
            d = f.get("diff")
            if d:
                con.print(escape(d), end="", soft_wrap=True, highlight=False)


def render_rewind(con: Any, info: dict[str, Any]) -> None:
    def out(text: str) -> None:
        con.print(text, soft_wrap=True)

    plan = info.get("files")
    if plan is not None:
        render_plan(con, plan, diffs=info["dry_run"])
        applied = info.get("applied")
        if info["dry_run"]:
            out("[dim]dry run: no file changed[/]")
        elif applied is not None:
            done = [r for r in applied if r["done"]]
            out(
                f"[bold green]Rewound[/] {len(done)} file(s)"
                if done
                else "Nothing to change: the files are already in that state."
            )
            for r in applied:
                if not r["done"]:
                    out(f"  [bold red]not {r['action']}d[/] {escape(r['path'])}: {escape(str(r['reason']))}")
                elif r["kept"]:
                    out(f"  [dim]kept the previous content in {escape(r['kept'])}[/]")
    conv = info.get("conversation")
    if conv is not None:
        verb = "Forked" if conv["written"] else "Would fork"
        out(
            f"[bold green]{verb}[/] the conversation at {escape(str(conv['at']['uuid']))} → [bold]{escape(conv['session_id'])}[/]"
        )
        if conv["at"]["moved"]:
            out(f"  [yellow]cut moved {escape(conv['at']['moved'])}[/]")
        if conv["written"]:
            out("Continue it with:")
            for c in conv["continue"]:
                out(f"  {escape(c)}")


def render_checkpoints(con: Any, session_id: str, found: list[Any], why_none: str = "") -> None:
    """`tt rewind --list`: the checkpoints, oldest first, each with the uuid --at takes;
    ``why_none``: why there are none (`rewind.core.no_checkpoints_hint`)."""
    if not found:
        con.print(
            f"session {escape(session_id)} has no file checkpoints (no file-history-snapshot records on its "
            f"conversation): {escape(why_none)}",
            soft_wrap=True,
        )
        return
    for c in found:
        when = (c.timestamp or "")[:19].replace("T", " ")
        con.print(
            f"{escape(c.uuid)}  [dim]{when}  {c.files} file(s)[/]  {escape(c.prompt[:80])}",
            soft_wrap=True,
            highlight=False,
        )
    con.print(
        f"[dim]{len(found)} checkpoint(s): `tt rewind {escape(session_id[:8])} --at UUID --dry-run` shows what one restores[/]",
        soft_wrap=True,
    )
