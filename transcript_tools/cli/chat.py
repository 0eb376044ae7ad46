"""``tt chat``: continue a session, or start one, interactively (the edge around `resume.chat.Chat`).

With no SESSION (and no -c), a new session is started (`resume.files_setup.new_session`): its
file is created under the config dir's project folder for the cwd with the first prompt,
in the lines Claude Code 2.1.332 writes, so ``claude --resume <id>`` continues it.

The session is assembled by `files_setup.prepare`, as ``tt resume`` assembles it (the
same model choice, fork, cwd, restored cost and notices); the line editor is
prompt_toolkit (history within the run, Esc-Enter for a new line), the output plain
terminal colours.
A tool call no --allowed-tools rule allows is asked about at the prompt (yes, always for
this session, no), as Claude Code asks; --disallowed-tools still denies without asking.
Ctrl-C during a turn stops the turn (closed in the file, which both CLIs resume); at the
prompt, a second Ctrl-C in a row (or Ctrl-D, or /exit) leaves.

Exit codes: 0 left normally; 2 usage; 3 no such session; 4 unreadable; 5 no API key.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from ..model.errors import UsageError
from .common import continue_option, json_option, max_bytes_option, require_transcript, tool_options

#: The styles the chat's lines use, as terminal colour codes (SGR).
_STYLES = {"dim": "2", "yellow": "33", "red": "31", "cyan": "36", "green": "32", "bold": "1"}


class _TerminalView:
    """The chat's `View` on a terminal: streamed text as it comes, whole lines in a colour.
    Plain escape codes, not rich: importing rich's console cost the start-up ~0.1 s of a
    0.5 s budget (benchmarks/bench_chat.py), and these lines need nothing of it."""

    def text(self, chunk: str) -> None:
        sys.stdout.write(chunk)
        sys.stdout.flush()

    def line(self, text: str, style: str = "") -> None:
        code = _STYLES.get(style)
        sys.stdout.write(f"\x1b[{code}m{text}\x1b[0m\n" if code else f"{text}\n")
        sys.stdout.flush()


@click.command("chat")
@click.argument("session", required=False)
@continue_option
@click.option("--model", help="Model to continue on (default: as tt resume chooses).")
@click.option(
    "--fork", "fork_", is_flag=True, help="Chat in a fork of the session; the original is not touched."
)
@click.option(
    "--cost-notice-usd",
    type=click.FloatRange(min=0),
    default=5.0,
    show_default=True,
    help="Say so once when the session's cost passes this.",
)
@click.option(
    "--permission-mode",
    "permission_mode",
    type=click.Choice(("default", "acceptEdits", "plan", "bypassPermissions")),
    help="Start in this mode (default: the session's own, else default); /permission-mode changes it.",
)
@max_bytes_option
@json_option
@tool_options
def chat_command(
    session: str | None,
    latest: bool,
    model: str | None,
    allowed: tuple[str, ...],
    disallowed: tuple[str, ...],
    add_dirs: tuple[Path, ...],
    cwd_opt: Path | None,
    fork_: bool,
    cost_notice_usd: float,
    permission_mode: str | None,
    max_bytes: int,
    as_json: bool,
) -> int:
    """Continue SESSION interactively (path, id, prefix, or -c for the latest one here);
    without one, start a new session in this directory (or --cwd), as `claude` does.

    Slash commands: /model NAME, /cost, /compact, /rename, /tag, /fork, /rewind N, /permission-mode MODE, /help, /exit. Needs ANTHROPIC_API_KEY.
    With --json: say what the chat would continue (session, model, messages, cwd, notices)
    as one JSON object and exit, with no terminal, no key and nothing written.
    """
    if not as_json and not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError(
            "tt chat needs a terminal", hint="use tt resume -p (or --input-format stream-json) from a script"
        )
    if not as_json:
        # The line editor's import (the largest part of the start-up) overlaps the
        # session's loading, from the first line on (benchmarks/bench_chat.py).
        import threading

        threading.Thread(target=_preload, name="tt-preload", daemon=True).start()
    from ..edge.client import AnthropicClient, credentials_from_env
    from ..edge.clock import system_clock
    from ..edge.writer import append_records
    from ..resume.chat import CHAT_MODES, Chat, mode_answer
    from ..resume.files import load_for_resume
    from ..resume.files_setup import prepare
    from ..resume.tools.registry import ToolRegistry
    from .resume import _pick

    def ask(name: str, tool_input: object) -> str:  # the chat's permission mode first
        return mode_answer(chat.engine.permission_mode, name) or _ask(name, tool_input)

    registry = ToolRegistry(allowed, disallowed, ask=None if as_json else ask)
    clock = system_clock()
    new = session is None and not latest
    if new and fork_:
        raise UsageError("--fork needs a SESSION to fork (without one, tt chat starts a new session)")

    def start() -> Any:  # a new session: nothing is written before the first prompt
        import time
        import uuid

        from ..edge.claude_dir import projects_dir
        from ..resume.files_setup import new_session

        return new_session(
            projects_dir(dict(os.environ)),
            session_id=str(uuid.uuid4()),
            start_ms=int(time.time() * 1000),
            clock=clock,
            env=os.environ,
            model=model,
            cwd=cwd_opt,
        )

    ref = None if new else _pick(session, latest)
    if ref is not None:
        # Random bytes, other JSON: exit 4, as every command; a subagent's file: exit 2.
        require_transcript(ref.path, session_verb="chat")

    def load(*, dry_run: bool) -> Any:  # the session to chat in; a dry run forks nothing
        if ref is None:
            return start()
        return prepare(
            ref,
            clock=clock,
            env=os.environ,
            model=model,
            fork=fork_ and not dry_run,
            cwd=cwd_opt,
            max_bytes=max_bytes,
            dry_run=dry_run,
            applied_modes=CHAT_MODES,
        )

    if as_json:
        import orjson

        p = load(dry_run=True)
        out = {
            "session_id": p.session_id,
            "new": p.new,
            "path": str(p.path),
            "model": p.model,
            "messages": len(p.conv.messages),
            "cwd": str(p.cwd),
            "notices": p.notices,
        }
        sys.stdout.buffer.write(orjson.dumps(out) + b"\n")
        return 0
    creds = credentials_from_env(
        os.environ, hint="export ANTHROPIC_API_KEY=... (or tt chat --json to see what it would continue)"
    )
    prep = load(dry_run=False)
    view = _TerminalView()
    for note in prep.notices:
        view.line(f"tt: {note}", "yellow")
    client = AnthropicClient(creds)
    from ..edge.interrupts import answer_interrupts

    answer_interrupts()  # Ctrl-C stops a turn even when the launcher ignored SIGINT
    engine = prep.engine(
        client, registry, add_dirs=add_dirs, interactive=True, permission_mode=permission_mode
    )

    def path() -> Path:  # the file of the engine in use (a /fork changes it)
        return chat.engine.transcript.path

    def reload(m: str) -> list[dict[str, object]]:
        if not path().exists():  # a new session before its first prompt
            return []
        return list(load_for_resume(path(), max_bytes=max_bytes).conversation.for_model(m).messages)

    def append(rec: bytes) -> None:
        if not path().exists():
            raise UsageError("the session has no file yet: send a prompt first")
        append_records(path(), [rec])

    def fork(current: object) -> tuple[object, list[str]]:
        from ..edge.claude_dir import SessionRef

        cur: Any = current  # a QueryEngine
        p = prepare(
            SessionRef(path(), cur.session_id),
            clock=clock,
            env=os.environ,
            model=cur.model,
            fork=True,
            cwd=cur.cwd,
            max_bytes=max_bytes,
            applied_modes=CHAT_MODES,
        )
        mode = cur.permission_mode
        return p.engine(
            client, registry, add_dirs=add_dirs, interactive=True, permission_mode=mode
        ), p.notices

    def rewind(current: object, at: str) -> tuple[object, list[str]]:
        from ..edge.claude_dir import SessionRef
        from ..resume.files_setup import fork_at

        cur: Any = current  # a QueryEngine
        out, line = fork_at(path(), cur.session_id, at, max_bytes)
        p = prepare(
            SessionRef(out, out.stem),
            clock=clock,
            env=os.environ,
            model=cur.model,
            cwd=cur.cwd,
            max_bytes=max_bytes,
            applied_modes=CHAT_MODES,
        )
        mode = cur.permission_mode
        engine = p.engine(client, registry, add_dirs=add_dirs, interactive=True, permission_mode=mode)
        return engine, [line, *p.notices]

    def choose(asked: str) -> tuple[str, str | None]:
        from ..resume.files_setup import switch_model

        return switch_model(asked, clock, os.environ)

    chat = Chat(
        engine,
        view,
        reload=reload,
        append_record=append,
        cost_notice_usd=cost_notice_usd,
        fork=fork,
        choose_model=choose,
        rewind=rewind,
        compact=lambda cur: compact_in_place(cur, max_bytes),
        stats=session_cost,
    )
    view.line(
        f"tt chat: new session {prep.session_id} on {engine.model} in {prep.cwd} · /help"
        if prep.new
        else f"tt chat: {prep.session_id} on {engine.model} ({len(engine.messages)} messages) · /help",
        "dim",
    )
    _loop(chat)
    return 0


def session_cost(engine: Any) -> Any:
    """/cost's figures: `tt stats SESSION` of the engine's file (subagent files included)."""
    from ..catalog.files_usage import session_stats
    from ..catalog.stats import Stats

    if not engine.transcript.path.exists():  # a new session before its first prompt
        return Stats()
    return session_stats(engine.transcript.path, subagents=True)


def compact_in_place(engine: Any, max_bytes: int) -> list[str]:
    """/compact: ``tt compact --in-place`` on the engine's file (its plan, summary and
    safety checks, as Claude Code's /compact appends a compaction), then the engine goes
    on from the compacted conversation."""
    from ..model.errors import TTError
    from ..resume.files import load_for_resume
    from .compact import compact_command

    path = engine.transcript.path
    code = compact_command.main(
        [str(path), "--in-place", "--max-bytes", str(max_bytes)],
        prog_name="tt compact",
        standalone_mode=False,
    )
    if code not in (0, None):
        raise TTError("the session was not compacted")
    conv = load_for_resume(path, max_bytes=max_bytes).conversation
    engine.messages = list(conv.for_model(engine.model).messages)
    engine.leaf_uuid = conv.leaf_uuid
    return [f"compacted: the next turn sends {len(engine.messages)} messages"]


def _ask(name: str, tool_input: object) -> str:
    """Ask the person about a tool call no rule allows (remembered with "always")."""
    from prompt_toolkit import prompt

    from ..resume.chat import tool_line

    shown = tool_line({"name": name, "input": tool_input}).removeprefix("⏺ ")
    sys.stdout.write("\n")
    while True:
        try:
            answer = prompt(f"Allow {shown}? [y]es / [a]lways this session / [n]o: ").strip().lower()
        except (KeyboardInterrupt, EOFError):
            return "no"
        if answer in ("y", "yes"):
            return "yes"
        if answer in ("a", "always"):
            return "always"
        if answer in ("n", "no", ""):
            return "no"


def _preload() -> None:
    import prompt_toolkit.shortcuts  # noqa: F401


def _loop(chat: object) -> None:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import InMemoryHistory
    from prompt_toolkit.key_binding import KeyBindings

    keys = KeyBindings()

    @keys.add("escape", "enter")
    def _newline(event: object) -> None:
        event.current_buffer.insert_text("\n")  # type: ignore[attr-defined]

    editor: PromptSession[str] = PromptSession(history=InMemoryHistory(), key_bindings=keys)
    armed = False  # a Ctrl-C at the prompt: the next one leaves
    while True:
        try:
            line = editor.prompt("> ")
        except KeyboardInterrupt:
            if armed:
                return
            armed = True
            chat.view.line("(Ctrl-C again to leave)", "dim")  # type: ignore[attr-defined]
            continue
        except EOFError:
            return
        armed = False
        if not chat.handle(line):  # type: ignore[attr-defined]
            return
