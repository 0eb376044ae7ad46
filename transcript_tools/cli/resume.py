"""``tt resume``: continue a session headlessly, from its repaired conversation.

The edge around `engine.QueryEngine`: resolve the session (path, id, prefix, ``-c``,
or a picker on a terminal), check the API key (before anything is written), load what a
resume sends (`resume.files.load_for_resume`: the in-memory repair when the file needs it;
the file itself is only ever appended to), optionally fork the whole session into a new
one first (``tt fork``'s rules and files: `fork.core.fork`, `fork.files`, subagent transcripts
included), then run one turn and print it as ``claude -p`` does: ``text`` (the final
answer), ``json`` (the result object) or ``stream-json`` (every event, one JSON object a
line).

The file tools stay in the working directories (the cwd and each ``--add-dir``) unless
an allow rule names a path; a denied call is an ``is_error`` tool result and an entry of
the result's ``permission_denials``, not an exit code (`permissions`).

``--input-format stream-json`` (`cli.stream_input`) reads user messages from stdin instead
of -p and runs each as a turn, through `query.Query` (the same bridge as the Python API).

Exit codes: 0 success; 1 the turn ended in error (streaming: the last turn, or an input
line was rejected) (max turns, budget, interrupted
tool use reported in the result); 2 usage; 3 no such session; 4 unreadable or past
--max-bytes; 5 no API key or the API failed; 6 the transcript could not be appended
to; 130 Ctrl-C (the turn is closed in the file first).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import orjson

from ..edge import claude_dir as store
from ..model.errors import UsageError
from ..resume.files import ForResume

if TYPE_CHECKING:
    from ..model.conversation import Conversation
from ..model.wire import dumps_lenient
from .common import (
    console,
    continue_option,
    json_option,
    leave_to_exit,
    max_bytes_option,
    require_transcript,
    tool_options,
)
from .from_store import store_option

FORMATS = ("text", "json", "stream-json")


def _read_prompt(prompt: str | None, dry_run: bool) -> str | None:
    if prompt == "-":
        text = sys.stdin.read()
        if not text.strip():
            raise UsageError("the prompt read from stdin is empty")
        return text
    if prompt is None and not dry_run:
        raise UsageError("give the prompt with -p PROMPT (or -p - to read it from stdin)")
    if prompt is not None and not prompt.strip():
        raise UsageError("the prompt is empty")
    return prompt


def _pick(spec: str | None, latest: bool) -> store.SessionRef:
    if spec is not None or latest:
        return store.resolve(spec, latest=latest)
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        raise UsageError("name a session (path, id or prefix), or use -c for the latest one here")
    from ..resume.files_pick import sessions_to_pick
    from ..views.resume import pick_session

    path = pick_session(sessions_to_pick(), console(stderr=True))
    return store.SessionRef(path, path.name[:-6])


@click.command("resume")
@click.argument("session", required=False)
@click.option(
    "-p", "--prompt", metavar="PROMPT", help="The prompt to continue with ('-' reads it from stdin)."
)
@continue_option
@click.option(
    "--output-format", type=click.Choice(FORMATS), default="text", show_default=True, help="As `claude -p`."
)
@click.option(
    "--input-format",
    type=click.Choice(("text", "stream-json")),
    default="text",
    show_default=True,
    help="stream-json: read user messages from stdin, one JSON object a line, as `claude -p --input-format stream-json` (needs --output-format stream-json).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Say what would be sent (model, messages, size, tools, repairs) and exit; with --json, the request itself.",
)
@click.option(
    "--max-turns", type=click.IntRange(min=1), help="Stop after this many model calls (error_max_turns)."
)
@click.option(
    "--max-budget-usd", type=click.FloatRange(min=0, min_open=True), help="Stop once this much is spent."
)
@click.option(
    "--model",
    help="Model to use (default: the model the session last used, unless Claude Code retires or remaps it on this date: then its default model).",
)
@click.option("--system-prompt", help="Replace tt's system prompt.")
@click.option("--append-system-prompt", help="Append to the system prompt.")
@click.option(
    "--fork",
    "fork_",
    is_flag=True,
    help="Continue into a new session (a fork, with fresh ids); the original is not touched.",
)
@click.option("--max-tokens", type=click.IntRange(min=1), default=None, help="max_tokens of each model call.")
@click.option(
    "--max-retries",
    type=click.IntRange(min=0),
    default=None,
    help="Retries on 429/5xx/overloaded (default 4).",
)
@click.option(
    "--include-partial-messages", is_flag=True, help="stream-json: also print the raw stream events."
)
@max_bytes_option
@store_option
@json_option
@tool_options
def resume_command(
    session: str | None,
    prompt: str | None,
    latest: bool,
    output_format: str,
    input_format: str,
    dry_run: bool,
    max_turns: int | None,
    max_budget_usd: float | None,
    model: str | None,
    system_prompt: str | None,
    append_system_prompt: str | None,
    allowed: tuple[str, ...],
    disallowed: tuple[str, ...],
    fork_: bool,
    add_dirs: tuple[Path, ...],
    cwd_opt: Path | None,
    max_tokens: int | None,
    max_retries: int | None,
    include_partial_messages: bool,
    max_bytes: int,
    as_json: bool,
    store_url: str | None = None,
) -> int:
    """Continue SESSION headlessly through the Anthropic API and append the turn to it.

    SESSION is a path, a session id or an id prefix (or -c, or a picker on a terminal).
    The file is read through tt's in-memory repair, so a damaged session resumes; it is
    only ever appended to, in Claude Code's format, so `claude --resume` continues it.
    Needs ANTHROPIC_API_KEY (ANTHROPIC_BASE_URL is honoured) unless --dry-run.
    With --store, SESSION is a stored session's id: the turn is appended to a private
    copy and pushed to the store (the same version, extended; --fork: a new session).
    """
    from ..edge.clock import system_clock
    from ..model import conversation
    from ..model.request import DEFAULT_MAX_TOKENS, ModelRequest
    from ..resume.files_setup import prepare
    from ..resume.tools.registry import ToolRegistry

    streaming = input_format == "stream-json"
    if streaming:
        if output_format != "stream-json" or as_json:
            raise UsageError("--input-format stream-json needs --output-format stream-json")
        if prompt is not None or dry_run:
            raise UsageError("--input-format stream-json reads the prompts from stdin: drop -p and --dry-run")
        text = None
    else:
        text = _read_prompt(prompt, dry_run)
    registry = ToolRegistry(allowed, disallowed)  # bad rules are a usage error before anything else
    clock = system_clock()  # a bad TT_NOW too
    with ExitStack() as stack:
        if store_url is not None:
            if latest or session is None:
                raise UsageError("--store: name a stored session by its id (`tt ls --store URL` lists them)")
            from ..store.files_materialise import materialised

            # The turn is appended to a private copy, then pushed to the store (`store.files_materialise`).
            ref = stack.enter_context(materialised(store_url, [session], chdir=False)).refs[0]
        else:
            ref = _pick(session, latest)
        # Random bytes, other JSON: exit 4, as every command; a subagent's file: exit 2.
        require_transcript(ref.path, session_verb="resume")
        creds = None
        if not dry_run:  # a dry run needs neither the client nor the engine: not even imported
            from ..edge.client import DRY_RUN_HINT, credentials_from_env

            creds = credentials_from_env(os.environ, hint=DRY_RUN_HINT)  # before anything is written
        # The same assembly as query() and the streaming mode (`files_setup`).
        prep = prepare(
            ref,
            clock=clock,
            env=os.environ,
            model=model,
            max_budget_usd=max_budget_usd,
            fork=fork_,
            cwd=cwd_opt,
            system_prompt=system_prompt,
            append_system_prompt=append_system_prompt,
            max_bytes=max_bytes,
            dry_run=dry_run,
        )
        got, conv, path, cwd = prep.got, prep.conv, prep.path, prep.cwd
        readable = dry_run and not as_json  # a dry run for a person: one summary on stdout says it all
        for note in prep.state_notices if readable else prep.notices:  # the summary says the rest
            click.echo(f"tt: {note}", err=True)
        tokens = max_tokens or DEFAULT_MAX_TOKENS
        if dry_run:
            extra = [conversation.user_message(text)] if text is not None else []
            req = ModelRequest(
                prep.model, [*conv.messages, *extra], tokens, prep.system, registry.definitions()
            )
            body = dumps_lenient(req.params(), orjson.OPT_APPEND_NEWLINE)
            if as_json:
                sys.stdout.buffer.write(body)
                sys.stdout.flush()
                _summary(got, conv, path)
            else:
                _render_dry_run(got, conv, path, req, len(body), cwd, prep.model_note, text)
            leave_to_exit(got)
            return 0
        if as_json:
            output_format = "json"
        assert creds is not None and (text is not None or streaming)
        if got.actions or got.mended or conv.mended:
            _summary(got, conv, path)  # say what was mended in memory: damage is never silent
        from ..edge.client import DEFAULT_MAX_RETRIES, AnthropicClient

        client = AnthropicClient(
            creds, max_retries=DEFAULT_MAX_RETRIES if max_retries is None else max_retries
        )
        from ..edge.interrupts import answer_interrupts

        answer_interrupts()  # SIGINT closes the turn even when the launcher ignored it
        engine = prep.engine(
            client,
            registry,
            max_turns=max_turns,
            max_budget_usd=max_budget_usd,
            max_tokens=tokens,
            include_partial_messages=include_partial_messages,
            add_dirs=add_dirs,
        )
        try:
            with client:
                if streaming:
                    from .stream_input import run_stream_input

                    return run_stream_input(engine, sys.stdin.buffer, sys.stdout.buffer)
                assert text is not None
                return _emit(engine.submit_message(text), output_format)
        finally:
            for note in client.notices:
                click.echo(f"tt: note: {note}", err=True)


def _render_dry_run(
    got: ForResume,
    conv: Conversation,
    path: Path,
    req: Any,
    size: int,
    cwd: Path,
    model_note: str | None,
    prompt: str | None,
) -> None:
    from ..views.dry_run import DryRun, render

    repairs = (
        [
            f"{len(got.actions)} repair(s): "
            + ", ".join(sorted({str(getattr(a, "fix", a)) for a in got.actions}))
        ]
        if got.actions
        else []
    )
    repairs += got.mended
    if conv.mended:
        repairs.append(
            f"{len(conv.mended)} unanswered call(s) or orphan result(s) handled as Claude Code does"
        )
    render(
        console(),
        DryRun(
            path=str(path),
            session_id=conv.session_id,
            version=conv.version,
            model=req.model,
            model_note=model_note,
            messages=len(req.messages),
            request_bytes=size,
            tools=[t["name"] for t in req.tools],
            cwd=str(cwd),
            recorded_cwd=conv.cwd,
            start=got.start,
            repairs=repairs,
            notes=sorted({n.code for n in conv.notes}),
            prompt=prompt,
        ),
    )


def _summary(got: ForResume, conv: Conversation, path: Path) -> None:
    parts = [
        f"{len(conv.messages)} messages from {path}"
        + (f" (read from byte {got.start}, the last compact boundary)" if got.start else "")
    ]
    if got.actions:
        fixes = ", ".join(sorted({a.fix for a in got.actions}))
        parts.append(f"{len(got.actions)} repair(s) applied in memory: {fixes} (the file is unchanged)")
    parts.extend(got.mended)
    if conv.mended:
        parts.append(f"{len(conv.mended)} unanswered call(s) or orphan result(s) handled as Claude Code does")
    if conv.notes:
        # Labelled: a new user read the codes after the repairs as the repairs' names.
        parts.append("notes: " + ", ".join(sorted({n.code for n in conv.notes})))
    click.echo("tt: " + "; ".join(parts), err=True)


def _emit(events: Iterator[dict[str, Any]], fmt: str) -> int:
    """Print the turn as `claude -p` does; the exit code from the result."""
    out = sys.stdout.buffer
    result: dict[str, Any] | None = None
    try:
        for ev in events:
            if ev.get("type") == "result":
                result = ev
            if fmt == "stream-json":
                out.write(orjson.dumps(ev) + b"\n")
                out.flush()
    finally:
        # The result is printed even when an error or Ctrl-C follows it.
        if result is not None and fmt != "stream-json":
            if fmt == "json":
                out.write(orjson.dumps(result) + b"\n")
            elif not result["is_error"]:
                out.write(str(result.get("result", "")).encode("utf-8") + b"\n")
            out.flush()
    if result is None:
        return 1
    if result["is_error"] and fmt == "text":
        click.echo(f"tt: {'; '.join(result.get('errors', [result['subtype']]))}", err=True)
    return 1 if result["is_error"] else 0
