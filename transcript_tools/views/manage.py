"""Rendering ``tt rename``, ``tt tag`` and ``tt delete`` results for people."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from ..manage.core import DeletePlan


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def render_plan(con: Any, plan: DeletePlan, *, deleted: bool) -> None:
    head = "Deleted" if deleted else "Would delete"
    if plan.subagent_of is not None:
        what = f"a subagent transcript of session {escape(plan.subagent_of)} (the session stays)"
    elif plan.session_id is None:
        what = "one file, not named by a session id (nothing beside it goes)"
    else:
        what = f"session {escape(plan.session_id)}"
    con.print(f"[bold]{head}[/] {what}: {plan.files} file(s), {_size(plan.bytes)}", soft_wrap=True)
    for t in plan.targets:
        what = f"{t.files} file(s), {_size(t.bytes)}" if t.is_dir else _size(t.bytes)
        con.print(
            f"  {t.kind:16} {escape(str(t.path))}{'/' if t.is_dir else ''}  [dim]{what}[/]", soft_wrap=True
        )


def render_record(con: Any, info: dict[str, Any]) -> None:
    verb = {"rename": "Renamed", "tag": "Tagged"}[info["action"]]
    if not info["written"]:
        verb = "Would append to"
    if info["action"] == "rename":
        what = f"title “{escape(info['title'])}”"
    elif info["tag"] is None:
        what = "tag cleared"
    else:
        what = f"tag “{escape(info['tag'])}”"
    con.print(f"{verb} {escape(info['session_id'])}: {what}", soft_wrap=True)
    if not info["written"]:
        con.print(f"  [dim]{escape(info['record'].rstrip())}[/]", soft_wrap=True)
