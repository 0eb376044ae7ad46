"""``tt compact``: summarise and truncate a session to a token budget, in Claude Code's form.

Resolve the session, check the options (and the API key, before any work, when a model
or ``--exact`` needs one), run `compact.files.compact_file`, render the report. The file
work (the model counted for, the folder ``-o DIR/`` names) is `compact.files`'; the source
is only read, except with ``--in-place``.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

import click

from ..compact.plan import DEFAULT_KEEP_TOKENS, PRUNE_KINDS, PlanOptions
from ..edge import claude_dir as store
from ..edge.session_out import names_folder
from ..model.errors import UsageError
from ..model.session import first_cwd
from .common import (
    console,
    continue_option,
    emit_json,
    json_option,
    max_bytes_option,
    named_session,
    one_output,
    require_transcript,
)

#: The --prune name for the records a resume never sends (the name a user tries first: issue 18).
UNSENT = "progress"
#: Show a progress bar for files from this size on.
PROGRESS_FROM = 20 * 1024 * 1024


@click.command("compact")
@click.argument("session", required=False)
@click.option(
    "-o",
    "--output",
    "out",
    metavar="PATH",
    help="Write the new session here (a file, or a directory). Default: a new session beside the original.",
)
@click.option(
    "--in-place",
    is_flag=True,
    help="Append the compaction to the session itself, as Claude Code's /compact does: the file keeps its history and grows "
    "(atomic, keeps a .bak). For a small file, add --drop-history.",
)
@click.option(
    "--drop-history",
    is_flag=True,
    help="With --in-place: replace the file by the compaction alone (same session id), so it is actually small; the history "
    "is kept in the .bak (so --no-backup is refused). Claude Code resumes it as it resumes the appended file.",
)
@click.option("--no-backup", is_flag=True, help="With --in-place: keep no .bak.")
@click.option("--dry-run", is_flag=True, help="Show the plan and the summary; write nothing.")
@click.option(
    "--keep-tokens",
    type=click.IntRange(min=0),
    default=DEFAULT_KEEP_TOKENS,
    show_default=True,
    help="Budget for the messages kept verbatim (the most recent ones, plus key messages).",
)
@click.option(
    "--keep", "keep", multiple=True, metavar="UUID", help="Always keep this message verbatim (repeatable)."
)
@click.option(
    "--no-first-request",
    is_flag=True,
    help="Do not keep the first request verbatim (it is still summarised).",
)
@click.option(
    "--prune",
    "prune",
    default="",
    metavar="KINDS",
    help="Shrink inside the kept messages first: tool-output, thinking, images (comma-separated). progress: when nothing is "
    "worth summarising, write the whole conversation without the records a resume never sends (progress lines, logs, dead "
    "branches; a compaction always leaves them out).",
)
@click.option(
    "--summarizer",
    type=click.Choice(["extractive", "anthropic"]),
    default="extractive",
    show_default=True,
    help="extractive: offline, deterministic; anthropic: a model writes it.",
)
@click.option(
    "--model", help="Model for --summarizer anthropic and --exact (default: the session's last model)."
)
@click.option("--instructions", help="What the model's summary should focus on (--summarizer anthropic).")
@click.option(
    "--exact",
    is_flag=True,
    help="Also count the result with the API's count_tokens endpoint (needs ANTHROPIC_API_KEY).",
)
@click.option(
    "--force", is_flag=True, help="With --in-place: replace the file even if it changed while tt worked."
)
@click.option(
    "--even-if-larger",
    is_flag=True,
    help="Write the compaction even when its request would not be smaller than the original's (by default it is not written).",
)
@continue_option
@max_bytes_option
@json_option
def compact_command(
    session: str | None,
    out: str | None,
    in_place: bool,
    drop_history: bool,
    no_backup: bool,
    dry_run: bool,
    keep_tokens: int,
    keep: tuple[str, ...],
    no_first_request: bool,
    prune: str,
    summarizer: str,
    model: str | None,
    instructions: str | None,
    exact: bool,
    force: bool,
    even_if_larger: bool,
    latest: bool,
    max_bytes: int,
    as_json: bool,
) -> int:
    """Make SESSION small and resumable: summarise all but the most recent messages.

    SESSION is a path, a session id or an id prefix. By default the result is a new session
    (new id) in the same project folder, so `claude --resume` and `tt resume` continue it;
    the original is not changed. Token counts are estimates (tiktoken, offline) of Claude's
    tokenizer; --exact asks the API.
    """
    from ..compact.files import Target, compact_file, make_output_folder
    from ..compact.files import resumes_on as resumes_on_at
    from ..edge.clock import system_clock
    from ..edge.reader import file_size
    from ..edge.tokenizer import TokenCounter

    one_output(out, in_place, dry_run)  # a dry run that also names a target is a mistake
    if (force or no_backup) and not in_place:
        raise UsageError("--force and --no-backup only apply to --in-place")
    if drop_history and not in_place:
        raise UsageError(
            "--drop-history only applies to --in-place (-o already writes a file with the compaction alone)"
        )
    if drop_history and no_backup:
        raise UsageError("--drop-history keeps the history only in the .bak: it cannot go with --no-backup")
    if instructions is not None and summarizer != "anthropic":
        raise UsageError("--instructions needs --summarizer anthropic")
    kinds = frozenset(k.strip() for k in prune.split(",") if k.strip())
    unknown = kinds - set(PRUNE_KINDS) - {UNSENT}
    if unknown:
        raise UsageError(
            f"--prune: unknown kind(s) {', '.join(sorted(unknown))}; choose from {', '.join([*PRUNE_KINDS, UNSENT])}"
        )
    drop_unsent = UNSENT in kinds
    kinds -= {UNSENT}
    # A dry run does not spend money on a model summary: it plans with the extractive one.
    model_summary = summarizer == "anthropic" and not dry_run
    client = _client() if model_summary or exact else None
    ref = named_session(session, latest)
    require_transcript(ref.path)
    mode = "dry-run" if dry_run else "in-place" if in_place else "new"
    if out and not dry_run and names_folder(out):
        make_output_folder(out)  # -o DIR/ (session_out): the folder to write into
    target = Target(
        mode, Path(out).expanduser() if out else None, force, backup=not no_backup, drop_history=drop_history
    )
    # The model a resume of the result will continue on (Claude Code's, at today's clock):
    # the budget counts only the thinking that model is sent, and a model summary is not
    # asked of a model the API has retired.
    resumes_on = resumes_on_at(ref.path, system_clock())
    summ = _summarizer(
        "anthropic" if model_summary else "extractive", client, model or resumes_on, instructions
    )
    progress = None
    bar: Any = None
    if not as_json and file_size(ref.path) >= PROGRESS_FROM:
        from rich.progress import Progress

        bar = Progress(console=console(stderr=True), transient=True)
        tasks: dict[str, Any] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done)

        bar.start()
    try:
        result = compact_file(
            ref.path,
            summ,
            target,
            PlanOptions(keep_tokens=keep_tokens, prune=kinds),
            keep=keep,
            keep_first_request=not no_first_request,
            max_bytes=max_bytes,
            progress=progress,
            even_if_larger=even_if_larger,
            drop_unsent=drop_unsent,
            counter=TokenCounter(model=resumes_on),
        )
        if exact and not result.nothing_to_do and not result.grows and not result.slim:
            from ..compact.files import exact_after

            result.tokens_after_exact = exact_after(result, client, model)
    finally:
        if bar is not None:
            bar.stop()
        if client is not None:
            client.close()
    if summarizer == "anthropic" and dry_run:
        result.notes.append(
            "dry run: the model was not asked; the sizes use the extractive summary in its place"
        )
    info = result.to_dict()
    info["continue"] = _continue(result, ref.project_dir, ref.path)
    if as_json:
        emit_json(info)
    else:
        from ..views.compact import render_compact

        render_compact(console(), info, summary=result.summary, records=result.records)
    return 0


def _client() -> Any:
    from ..edge.client import AnthropicClient, credentials_from_env

    return AnthropicClient(credentials_from_env(os.environ))


def _summarizer(name: str, client: Any, model: str, instructions: str | None) -> Any:
    from ..compact.summarizers import AnthropicSummarizer, Extractive

    if name == "extractive":
        return Extractive()
    return AnthropicSummarizer(client, model=model, instructions=instructions)


def _names_it(sid: str, path: Path) -> bool:
    """Whether the id alone finds ``path`` (not when a copy of the session is in another
    project: the id is ambiguous there, and the hint would fail)."""
    from ..model.errors import TTError

    try:
        return store.resolve(sid).path.resolve() == path.resolve()
    except TTError:
        return False


def _continue(result: Any, project_dir: Path, source: Path) -> list[str]:
    """Commands that continue the compacted session (``source``: the file compacted)."""
    if result.mode == "dry-run" or result.nothing_to_do or result.grows:
        return []
    sid = result.new_session_id or result.session_id
    if sid is None:
        return []
    # tt finds a session by id only in a project folder of the config dir; elsewhere, by
    # its path (issue 18: `tt resume <id>` of an `-o small.jsonl` exited 3).
    out = result.output
    written = source if out is None else out
    by_id = store.in_a_project(written) and _names_it(sid, written)
    cmds = [f"tt resume {sid if by_id else shlex.quote(str(written))}"]
    # `claude --resume <id>` finds only a file in the project folder of its directory.
    if out is not None and out.parent == project_dir and store.in_a_project(out):
        cwd = first_cwd(result.records)
        cmds.append(f"cd {shlex.quote(cwd)} && claude --resume {sid}" if cwd else f"claude --resume {sid}")
    return cmds
