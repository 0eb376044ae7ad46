"""The core of ``tt chat``: one resumed session, continued turn by turn from typed lines.

`Chat.handle(line)` takes what the person typed: a slash command, or a prompt that runs
one turn on the `engine.QueryEngine` (assembled by `files_setup.prepare`, as ``tt
resume`` and ``query()`` are). What is shown goes to a `View` (the CLI's is rich on a
terminal; tests use a list), so this module never prints and never reads a terminal.

Commands: ``/model NAME`` (the next turn uses it; the history is reloaded for that model,
so thinking blocks follow `lifecycle` rule 3 as on a resume), ``/cost`` (this session's
cost by model as ``tt stats`` counts it — the same figures, from the file as it is now,
and the same word, ``unpriced``, for a model tt has no price for — then, when the session
has a ``cost-state``, the running total Claude Code restores: its prices, not tt's), ``/rename TITLE`` and
``/tag TAG`` (the records ``tt rename`` / ``tt tag`` append), ``/fork`` (the session is
forked by ``tt fork``'s rules and the chat goes on in the fork), ``/rewind N|UUID`` (the
conversation as ``tt rewind --conversation`` forks it there; files are not restored),
``/compact`` (``tt compact --in-place``, as Claude Code's /compact appends a compaction to
the session; the chat goes on from it), ``/permission-mode MODE``, ``/help``, ``/exit``.

Permission modes (`CHAT_MODES`, Claude Code's names): a tool call no rule allows is asked
about in ``default``; ``acceptEdits`` lets Write and Edit through without asking (the
working-directory rules hold); ``plan`` answers no to every call it would ask about;
``bypassPermissions`` answers yes (deny rules hold). `mode_answer` is that table. A mode
restored from the session that tt does not apply (``auto``: Claude Code 2.1.332's default,
a classifier) is kept in the records and behaves as ``default``. The engine writes the
mode into each prompt and re-appends the ``permission-mode`` record after each turn
(`turns`), so a change is recorded with the next turn, as Claude Code 2.1.332 records it.

Ctrl-C (KeyboardInterrupt) in a turn takes the engine's path: the turn is closed in the
file, and the history is reloaded from it (`conversation` rule 7), so the next prompt
sends what a resume would. A soft notice is shown once when the session's cost passes
``cost_notice_usd`` (the seed's $5).

Invariant: the session file is only appended to, by the engine and the two record lines.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..model.errors import TTError

DEFAULT_COST_NOTICE_USD = 5.0

HELP = """\
/model NAME   continue on another model (the history is kept)
/cost         this session's cost by model
/rename TITLE set the session's title
/tag TAG      tag the session ("" clears it)
/fork         go on in a fork of this session (the original is not touched)
/rewind N     go on from the Nth message from the end (or a uuid), in a fork ending there
/compact      compact the session in place, as Claude Code's /compact (tt compact --in-place)
/permission-mode MODE  default (ask) | acceptEdits (edit without asking) | plan (ask nothing, allow nothing) | bypassPermissions
/help         this list
/exit         leave (Ctrl-D too; Ctrl-C twice at the prompt)
Ctrl-C during a turn stops it; the file stays one Claude Code resumes."""


#: The permission modes tt chat applies (Claude Code's names), in words.
CHAT_MODES = {
    "default": "tools no rule allows are asked about",
    "acceptEdits": "Write and Edit run without asking, in the working directories",
    "plan": "no tool that needs asking runs",
    "bypassPermissions": "every tool runs without asking (deny rules still hold)",
}


def mode_answer(mode: str, tool: str) -> str | None:
    """The answer ``mode`` gives for a call of ``tool`` no rule allows (None: ask the person)."""
    if mode == "bypassPermissions":
        return "yes"
    if mode == "plan":
        return "no"
    if mode == "acceptEdits" and tool in ("Write", "Edit"):
        return "yes"
    return None


class View(Protocol):
    def text(self, chunk: str) -> None: ...  # streamed model text
    def line(self, text: str, style: str = "") -> None: ...  # one whole line


@dataclass
class ListView:
    """A `View` that keeps what it was given (tests, scripts)."""

    lines: list[str] = field(default_factory=list)
    streamed: list[str] = field(default_factory=list)

    def text(self, chunk: str) -> None:
        self.streamed.append(chunk)

    def line(self, text: str, style: str = "") -> None:
        self.lines.append(text)


def tool_line(block: Mapping[str, Any]) -> str:
    """A tool call, folded to one line: ``Name(main argument)``."""
    inp = block.get("input") or {}
    arg = next((str(inp[k]) for k in ("file_path", "command", "pattern", "path", "url") if k in inp), "")
    if len(arg) > 60:
        arg = arg[:57] + "..."
    return f"⏺ {block.get('name')}({arg})"


def result_line(event: Mapping[str, Any]) -> str:
    blocks = event["message"].get("content") or []
    b = blocks[0] if blocks else {}
    c = b.get("content")
    body = c if isinstance(c, str) else " ".join(x.get("text", "") for x in c or [] if isinstance(x, Mapping))
    lines = body.splitlines() or [""]
    first = lines[0][:70]
    more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
    return f"  ⎿ {'error: ' if b.get('is_error') else ''}{first}{more}"


class Chat:
    def __init__(
        self,
        engine: Any,
        view: View,
        *,
        reload: Callable[[str], list[dict[str, Any]]],
        append_record: Callable[[bytes], object],  # what it returns is not used
        cost_notice_usd: float | None = DEFAULT_COST_NOTICE_USD,
        fork: Callable[[Any], tuple[Any, list[str]]] | None = None,
        choose_model: Callable[[str], tuple[str, str | None]] | None = None,
        rewind: Callable[[Any, str], tuple[Any, list[str]]] | None = None,
        compact: Callable[[Any], list[str]] | None = None,
        stats: Callable[[Any], Any] | None = None,
    ) -> None:
        self.engine = engine
        self._fork = fork  # the engine -> the fork's engine and its notices (`files_setup`)
        # a model asked for -> the model Claude Code would use and why not that one (`lifecycle`)
        self._choose = choose_model
        self._rewind = rewind  # (engine, message) -> the engine of a fork ending there, its notices
        self._compact = compact  # compacts the engine's file in place and reloads the engine; its lines
        self._stats = stats  # the engine -> `catalog.stats.Stats` of its file (what tt stats reads)
        self.view = view
        self._reload = reload  # model -> the messages a resume of the file sends it
        self._append = append_record
        self.cost_notice_usd = cost_notice_usd
        self._noticed = engine.total_cost_usd >= cost_notice_usd if cost_notice_usd is not None else True
        self._streaming = False
        engine.on_stream = self._on_stream

    # --- typed lines ---------------------------------------------------------------------

    def handle(self, line: str) -> bool:
        """Run one typed line; False when the chat should end."""
        text = line.strip()
        if not text:
            return True
        if text.startswith("/"):
            name, _, arg = text[1:].partition(" ")
            return self._command(name, arg.strip())
        self.turn(line)
        return True

    def _command(self, name: str, arg: str) -> bool:
        from ..manage.core import rename_line, tag_line

        if name in ("exit", "quit"):
            return False
        if name == "help":
            for ln in HELP.splitlines():
                self.view.line(ln)
        elif name == "cost":
            for ln in self.cost_lines():
                self.view.line(ln)
        elif name == "model":
            if not arg:
                self.view.line(f"model: {self.engine.model}")
            else:
                model, why = self._choose(arg) if self._choose is not None else (arg, None)
                if why:
                    self.view.line(f"tt: {why}", "yellow")
                self.engine.messages = self._reload(model)
                self.engine.model = model
                self.view.line(
                    f"the next turn uses {model} ({len(self.engine.messages)} messages of history)"
                )
        elif name == "permission-mode":
            if not arg:
                m = self.engine.permission_mode
                self.view.line(
                    f"permission mode {m}: {CHAT_MODES.get(m, 'not applied by tt: asked as in default')}"
                )
            elif arg not in CHAT_MODES:
                self.view.line(f"tt chat applies the permission modes {', '.join(CHAT_MODES)}", "red")
            else:
                self.engine.permission_mode = arg
                self.view.line(f"permission mode {arg}: {CHAT_MODES[arg]} (recorded with the next turn)")
        elif name in ("rename", "tag"):
            try:
                rec = (rename_line if name == "rename" else tag_line)(self.engine.session_id, arg)
            except TTError as e:
                self.view.line(f"tt: {e.message}", "red")
                return True
            try:
                self._append(rec.rstrip(b"\n"))
            except TTError as e:
                self.view.line(f"tt: {e.message}", "red")
                return True
            self.view.line(f"{'title' if name == 'rename' else 'tag'} set: {arg}" if arg else "tag cleared")
        elif (name == "fork" and self._fork is not None) or (name == "rewind" and self._rewind is not None):
            if name == "rewind" and not arg:
                self.view.line("/rewind N (the Nth message from the end) or /rewind UUID", "red")
                return True
            try:
                engine, notes = self._fork(self.engine) if name == "fork" else self._rewind(self.engine, arg)  # type: ignore[misc]
            except TTError as e:
                self.view.line(f"tt: {e.message}", "red")
                return True
            engine.on_stream = self._on_stream
            self.engine = engine
            for n in notes:
                self.view.line(f"tt: {n}", "yellow")
            self.view.line(f"now in the fork {engine.session_id} (the original is not touched)")
        elif name == "compact" and self._compact is not None:
            try:
                for ln in self._compact(self.engine):
                    self.view.line(ln)
            except TTError as e:
                self.view.line(f"tt: {e.message}", "red")
        elif name in ("compact", "fork", "rewind"):
            self.view.line(
                f"/{name} is not in tt chat yet: leave and run `tt {name} {self.engine.session_id}`", "yellow"
            )
        else:
            self.view.line(f"unknown command /{name} (/help lists them)", "red")
        return True

    def cost_lines(self) -> list[str]:
        """What /cost shows (see the module docstring)."""
        from ..model.pricing import prices_note, total_usd, usd

        out: list[str] = []
        if self._stats is not None:
            st = self._stats(self.engine)
            out.append(f"cost so far {total_usd(st.cost, bool(st.unpriced))} (as tt stats counts it)")
            out.extend(
                f"  {u.model}: {u.calls} calls, {u.tokens.total:,} tokens, {usd(u.cost)}"
                for u in st.by_model()
            )
            out.append(f"  {prices_note(st.unpriced)}")
        u = self.engine.usage
        if self.engine.cost_state is not None or self._stats is None:
            parts = [f"{m} {usd(u.cost_by_model.get(m))}" for m in u.by_model]
            out.append(
                f"cost-state (the running total Claude Code restores, at its prices): {total_usd(u.cost, not u.cost_known)}"
                + (f": {', '.join(parts)}" if parts else "")
            )
        return out

    # --- a turn ----------------------------------------------------------------------------

    def turn(self, prompt: str) -> dict[str, Any] | None:
        """Run one turn, showing it; Ctrl-C ends it (closed in the file) and is not raised."""
        result: dict[str, Any] | None = None
        try:
            for ev in self.engine.submit_message(prompt):
                result = ev if ev.get("type") == "result" else result
                self._show(ev)
        except KeyboardInterrupt:
            self._end_stream()
            self.view.line("interrupted (the turn is closed in the file)", "yellow")
            self.engine.messages = self._reload(self.engine.model)
        except TTError as e:
            self._end_stream()
            self.view.line(f"tt: {e.message}", "red")
        self.engine.interrupt_requested = False
        if (
            not self._noticed
            and self.cost_notice_usd is not None
            and self.engine.total_cost_usd >= self.cost_notice_usd
        ):
            self._noticed = True
            self.view.line(
                f"note: this session has cost ${self.engine.total_cost_usd:.2f} (past ${self.cost_notice_usd:g})",
                "yellow",
            )
        return result

    def _on_stream(self, event: Mapping[str, Any]) -> None:
        if event.get("type") == "content_block_delta":
            d = event.get("delta") or {}
            if d.get("type") == "text_delta":
                self._streaming = True
                self.view.text(str(d.get("text", "")))

    def _end_stream(self) -> None:
        if self._streaming:
            self.view.text("\n")
            self._streaming = False

    def _show(self, ev: Mapping[str, Any]) -> None:
        t = ev.get("type")
        if t == "assistant":
            block = ev["message"]["content"][0]
            if block.get("type") == "text":
                if not self._streaming:  # not streamed (a client without events): whole
                    self.view.text(block.get("text", ""))
                    self._streaming = True
                self._end_stream()
            elif block.get("type") == "tool_use":
                self._end_stream()
                self.view.line(tool_line(block), "cyan")
        elif (t == "user" and ev.get("tool_use_result") is not None) or (
            t == "user" and "tool_use_result" in ev
        ):
            self.view.line(result_line(ev), "dim")
        elif t == "result" and ev.get("is_error"):
            self._end_stream()
            self.view.line(f"{ev['subtype']}: {'; '.join(ev.get('errors') or [])}", "red")
