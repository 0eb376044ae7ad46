"""Rendering ``tt doctor`` diagnoses for people: one block per file with a finding, one line
per subagent transcript (not meant for /resume, so not a finding)."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from ..doctor.core import Diagnosis


def _header(d: Diagnosis) -> str:
    # The path once: a file not named by a session id has no other name.
    if d.session_id is None:
        return f"[bold]{escape(d.path)}[/]"
    return f"[bold]{escape(d.session_id)}[/]  [dim]{escape(d.path)}[/]"


def _where(cwd: str, moved_to: str | None) -> str:
    # /resume and `claude --resume <id>` look only in the project folder of the directory
    # claude runs in: the first thing to check for a session that "is gone".
    if moved_to:
        return (
            f"  [dim]its directory: {escape(cwd)} (recorded); its file is in {escape(moved_to)}, "
            "another directory's project folder: claude lists it in that directory[/]"
        )
    return f"  [dim]its directory: {escape(cwd)} (where claude lists and loads it)[/]"


def render(con: Any, diagnoses: list[Diagnosis], *, named: bool = False) -> None:
    """``named``: the user named these sessions one by one: a session with nothing wrong
    gets its own line too (where claude finds it), not only a count."""
    bad = [d for d in diagnoses if d.findings]
    agents = [d for d in diagnoses if d.subagent_of is not None]
    if named:
        for d in diagnoses:
            if d.findings or d.subagent_of is not None:
                continue
            con.print(_header(d), soft_wrap=True)
            sid = escape(d.session_id or "<id>")
            if d.cwd and d.moved_to:
                con.print(
                    f"  nothing hides it: `claude --resume` lists it when run in the directory whose "
                    f"project folder is {escape(d.moved_to)}, not in {escape(d.cwd)}, the directory it "
                    f"recorded; `claude --resume {sid}` loads it from either",
                    soft_wrap=True,
                )
            elif d.cwd:
                cwd = escape(d.cwd)
                con.print(
                    f"  nothing hides it: `claude --resume` run in {cwd} lists it, and "
                    f"`claude --resume {sid}` run there loads it",
                    soft_wrap=True,
                )
            else:
                con.print(
                    f"  nothing hides it from /resume or `claude --resume {sid}` (it records no directory)",
                    soft_wrap=True,
                )
    for d in bad:
        con.print(_header(d), soft_wrap=True)
        for f in d.findings:
            # The picker's verdict first (what a user sees); the SDK's when it differs.
            where = ("listed" if f.in_picker else "not listed") + " by /resume"
            if f.in_picker != f.listed:
                where += ", listed by the SDK" if f.listed else ", not by the SDK"
            where += ", loads" if f.loads else ", does not load"
            con.print(f"  [bold red]{f.code}[/] ({where}): {escape(f.message)}", soft_wrap=True)
            repair = "tt repair applies it" if f.repair else "not a tt repair fix"
            con.print(f"    fix: {escape(f.fix)}  [dim]({repair})[/]", soft_wrap=True)
        if d.cwd:
            con.print(_where(d.cwd, d.moved_to), soft_wrap=True)
    for d in agents:
        sid = escape(d.subagent_of or "")
        con.print(_header(d), soft_wrap=True)
        con.print(
            f"  a subagent transcript of session {sid}: not meant to be listed by /resume nor loaded "
            f"alone; `claude --resume {sid}` resumes its session. Nothing to fix.",
            soft_wrap=True,
        )
    ok = len(diagnoses) - len(bad) - len(agents)
    tail = f", {len(agents)} subagent transcript(s)" if agents else ""
    # Sessions the SDK lists and `--resume` loads, which only the interactive picker hides
    # (a `claude -p` session): "0 listed and loadable" alone read as broken (new-user pass).
    picker_only = sum(1 for d in bad if all(f.listed and f.loads and not f.in_picker for f in d.findings))
    of_them = (
        f" ({picker_only} of them listed by the SDK and loadable: hidden from the /resume picker only)"
        if picker_only
        else ""
    )
    con.print(
        f"{len(diagnoses)} file(s): {len(bad)} with a reason{of_them}, {ok} listed and loadable{tail}",
        soft_wrap=True,
    )
