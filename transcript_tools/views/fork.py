"""Rendering what ``tt fork`` did (or would do): the new session, where it came from,
where the cut fell, and the commands that continue it."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from rich.markup import escape

if TYPE_CHECKING:
    from ..fork.files import Forked


def fork_info(forked: Forked) -> dict[str, Any]:
    """What ``tt fork --json`` prints (and `render_fork` shows): the fork's report, where it
    is, and the commands that continue it."""
    sid, path, cwd = forked.session_id, forked.path, forked.cwd
    return {
        **forked.to_dict(),
        "in_project": forked.in_project,
        "cwd": cwd,
        # tt finds a session by id only under the config dir; elsewhere, by its path.
        "continue": [
            f"tt resume {sid if forked.in_project else shlex.quote(str(path))}",
            (f"cd {shlex.quote(cwd)} && " if cwd else "") + f"claude --resume {sid}",
        ],
    }


def render_fork(con: Any, info: dict[str, Any]) -> None:
    # Ids, paths and commands are never wrapped: they are meant to be copied.
    def out(text: str) -> None:
        con.print(text, soft_wrap=True)

    verb = "Forked" if info["written"] else "Would fork"
    src = info["forked_from"]
    out(f"[bold green]{verb}[/] {escape(src['session_id'])} → [bold]{escape(info['session_id'])}[/]")
    out(f"  title    {escape(info['title'])}")
    out(f"  path     {escape(info['path'])}")
    out(f"  entries  {info['entries']}")
    at = info["at"]
    if at["asked"] is not None:
        out(
            f"  at       {escape(str(at['uuid']))}"
            + ("" if at["uuid"] == at["asked"] else f" [dim](asked {escape(at['asked'])})[/]")
        )
    else:
        out(f"  at       {escape(str(at['uuid']))} [dim](the whole session)[/]")
    if at["moved"]:
        out(f"  [yellow]cut moved {escape(at['moved'])}[/]")
    if info["subagents"]:
        out(f"  subagents {len(info['subagents'])} forked")
    if info["repairs"]:
        codes = sorted({str(r["code"]) for r in info["repairs"]})
        out(
            f"  [yellow]read through {len(info['repairs'])} in-memory repair(s)[/] ({escape(', '.join(codes))}); the original is unchanged"
        )
    if not info["written"]:
        out("  [dim]dry run: nothing written[/]")
        return
    out("Continue it with:")
    tt, claude = info["continue"]
    out(f"  {escape(tt)}")
    if info["in_project"]:
        out(f"  {escape(claude)}")
    else:
        out("  [dim](outside the Claude config dir: `claude --resume` will not find it there)[/]")
