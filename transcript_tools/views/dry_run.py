"""``tt resume --dry-run``: what a resume would send, for a person (``--json``: the request).

Presentation only: `DryRun` is filled by ``cli.resume`` from values it already has; this
module measures nothing on disk and sends nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.markup import escape

#: Characters per token of a request's JSON, for the size line (the estimate tt prints
#: elsewhere tokenizes; a dry run of a 50 MB session must not pay for that).
CHARS_PER_TOKEN = 3.5


@dataclass(frozen=True, slots=True)
class DryRun:
    path: str
    session_id: str | None
    version: str | None  # the Claude Code version that last wrote the session
    model: str
    #: why the model is not the session's own (`lifecycle.ModelChoice.explain`), if it is not
    model_note: str | None
    messages: int
    request_bytes: int
    tools: list[str]
    cwd: str
    recorded_cwd: str | None
    start: int  # byte the session was read from (non-zero: the last compact boundary)
    repairs: list[str] = field(default_factory=list)  # what was mended in memory, in words
    #: the rebuild's notes (`conversation.Note` codes; shown in words, `note_words`)
    notes: list[str] = field(default_factory=list)
    prompt: str | None = None


def render(con: Any, d: DryRun) -> None:
    con.print(f"[bold]Dry run[/] of {escape(d.path)}: nothing sent, nothing written")
    rows: list[tuple[str, str]] = [
        (
            "session",
            escape(d.session_id or "-") + (f"  (Claude Code {escape(d.version)})" if d.version else ""),
        )
    ]
    if d.recorded_cwd and d.recorded_cwd != d.cwd:
        rows.append(
            ("cwd", f"{escape(d.recorded_cwd)} [yellow]is not here: tools would run in {escape(d.cwd)}[/]")
        )
    else:
        rows.append(("cwd", escape(d.cwd)))
    rows.append(
        ("model", escape(d.model) + (f"  [yellow]({escape(d.model_note)})[/]" if d.model_note else ""))
    )
    read_from = f", read from byte {d.start} (the last compact boundary)" if d.start else ""
    tokens = int(d.request_bytes / CHARS_PER_TOKEN)
    rows.append(
        (
            "request",
            f"{d.messages} messages, {_size(d.request_bytes)} (~{tokens:,} tokens by size){read_from}",
        )
    )
    rows.append(("tools", ", ".join(d.tools) or "none"))
    rows.append(
        (
            "in memory",
            "; ".join(escape(r) for r in d.repairs)
            if d.repairs
            else "nothing repaired (the file is never changed)",
        )
    )
    rows.extend(("note", escape(note_words(n))) for n in d.notes)
    if d.prompt is not None:
        shown = d.prompt if len(d.prompt) <= 70 else d.prompt[:69] + "…"
        rows.append(("prompt", escape(repr(shown))))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        con.print(f"  [dim]{k:<{width}}[/]  {v}", soft_wrap=True)
    con.print("[dim]--json prints the request itself.[/]")


#: What each note of the rebuild (`conversation.Note`) means, for a person. ``--json`` keeps
#: the codes (on stderr, next to the request on stdout).
NOTE_WORDS = {
    # conversation rule 7: both CLIs (2.1.197 and 2.1.332) do the same
    "no-response-sentinel": "the session ends on a user message (a prompt or a tool's result) with no answer: an assistant "
    '"No response requested." is put after it, as Claude Code does, so a new message starts a turn '
    "of its own",
    "synthetic-tool-result": "a tool call with no recorded result is answered as interrupted",
    "orphan-tool-result": "a tool result whose call is not in the message before is left out",
    "split-message": "parts of one answer written on separate lines are sent as one message",
    "empty-message": "a message with nothing to send is left out",
    "orphan-thinking": "an answer of thinking only is left out",
    "thinking-not-sent": "thinking written by another model is not sent",
    "queued-command-dropped": "commands queued after your last message are not sent",
    "prompt-too-long": 'the session ends on the API\'s "Prompt is too long": the request is compacted first',
}


def note_words(code: str) -> str:
    """A rebuild note in words (`NOTE_WORDS`; the code itself for a request rule fixed, as
    ``tt validate`` names it)."""
    return NOTE_WORDS.get(code) or f"fixed what the API refuses ({code}, as tt repair fixes it)"


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"
