"""Rendering `tt search` hits with rich: one block per session, matches highlighted."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.text import Text

from ..catalog.search import SessionHits
from .times import Clock, local_time

KIND_LABEL = {
    "user": "user",
    "assistant": "assistant",
    "thinking": "thinking",
    "tool_input": "tool call",
    "tool_output": "tool output",
    "summary": "summary",
}


def render_session_hits(con: Any, sh: SessionHits) -> None:
    title = escape(sh.title or "(untitled)")
    p = sh.path
    if p.parent.name == "subagents" and len(p.parts) > 3:
        # A subagent file whose session's file is gone: named by its path in the project
        # folder (`<session>/subagents/agent-….jsonl`), not as a session.
        name, project = f"{p.parent.parent.name[:8]}…/{p.name}", p.parents[2].name
    else:
        name, project = sh.session_id[:8], p.parent.name
    con.print(
        f"[bold cyan]{escape(name)}[/] [bold]{title}[/]  [dim]{local_time(sh.mtime_ms)} · {escape(project)}[/]"
    )
    clock = Clock()
    for agent, h in sh.hits:
        snippet, spans = h.snippet()
        text = Text(snippet)
        for a, b in spans:
            text.stylize("bold black on yellow", a, b)
        where = KIND_LABEL.get(h.kind, h.kind) + (f" {h.tool}" if h.tool else "")
        if agent:
            where += f" · {agent}"
        elif h.sidechain:
            where += " · sidechain"
        head = Text.assemble(
            ("  ", ""), (f"{clock(h.timestamp)} ", "dim"), (f"{where} ", "magenta"), (f"line {h.line}", "dim")
        )
        con.print(head)
        con.print(Text("    ") + text)
    if sh.more:
        con.print(f"  [dim]… and {sh.more} more match(es) in this session[/]")
    for path, s in sh.skipped[:5]:
        con.print(
            f"  [yellow]{escape(_name(path))}:{s.line} skipped ({s.code}): a match there could not be read[/]"
        )
    con.print()


def _name(path: str) -> str:
    """A path's last part (the file's name), from the string the search reported."""
    return path.rstrip("/").rsplit("/", 1)[-1]
