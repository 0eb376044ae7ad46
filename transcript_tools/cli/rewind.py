"""``tt rewind``: put the files a session edited back to their state at a message, and/or
fork the conversation there.

Files (the default, or ``--files``): the plan (`rewind.core.plan_rewind`) from the session's
``file-history-snapshot`` / ``file-history-delta`` records and its backups in
``<config dir>/file-history/<session id>/``; ``--dry-run`` shows it with a unified diff
per file; otherwise it asks (or takes ``--yes``) and applies it (`rewind.files`).
Conversation (``--conversation``): a fork of the session ending at that message, written
beside it, exactly as ``tt fork --at`` does (`fork.core.fork`).

Exit codes: 0 done (or nothing to change), 1 some files were left alone (backup missing,
refused, outside the project, or a write failed), 2 usage, 3 not found, 4 unreadable,
6 write failed.
"""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from ..edge import claude_dir as store
from ..edge.loader import load_session
from ..model.errors import UsageError
from ..rewind.core import RewindPlan, checkpoints, resolve_target, summary, unified_diff
from ..rewind.files import FileResult, apply_plan, plan_files
from .common import (
    console,
    continue_option,
    emit_json,
    json_option,
    max_bytes_option,
    named_session,
    require_transcript,
)


def _plan_info(plan: RewindPlan, diffs: bool) -> dict[str, Any]:
    return {
        "target": plan.target,
        "snapshot": plan.snapshot,
        "cwd": plan.cwd,
        "note": plan.note,
        "summary": dict(summary(plan)),
        "files": [
            {
                "path": f.path,
                "tracking_path": f.tracking_path,
                "action": f.action,
                "backup": f.backup,
                "reason": f.reason,
                **({"diff": unified_diff(f)} if diffs and f.changes else {}),
            }
            for f in plan.files
        ],
    }


def _results(results: list[FileResult]) -> list[dict[str, Any]]:
    return [
        {"path": r.path, "action": r.action, "done": r.done, "reason": r.reason, "kept": r.kept}
        for r in results
    ]


@click.command("rewind")
@click.argument("session", required=False)
@click.option(
    "--at",
    "to",
    metavar="UUID|N",
    help="The message: a uuid (or prefix), or N = the Nth message from the end (as `tt fork --at`).",
)
@click.option(
    "--list",
    "list_",
    is_flag=True,
    help="List the session's file checkpoints (the prompts --at can name), and change nothing.",
)
@click.option(
    "--files",
    "files_flag",
    is_flag=True,
    help="Restore the files (the default when --conversation is not given).",
)
@click.option("--conversation", is_flag=True, help="Fork the session at that message (as `tt fork --at`).")
@click.option(
    "--cwd",
    "cwd",
    metavar="DIR",  # as `-p/--project DIR` and `tt store from --cwd DIR`
    type=click.Path(path_type=Path),
    help="The project folder the files live in (default: the session's cwd).",
)
@click.option("--allow-outside", is_flag=True, help="Also restore tracked files outside the project folder.")
@click.option(
    "--no-backup",
    is_flag=True,
    help="Save no copy of the files it changes (by default each one's current content is kept as <file>.tt-rewind.bak first).",
)
# The old spelling, from when backups were opt-in: still accepted (scripts keep working), not
# shown; the vocabulary is --no-backup everywhere (CONTRIBUTING.md, "Flags").
@click.option("--backup", "backup_alias", is_flag=True, hidden=True)
@click.option("--dry-run", is_flag=True, help="Show the plan and a diff per file; change nothing.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@continue_option
@max_bytes_option
@json_option
def rewind_command(
    session: str | None,
    to: str | None,
    list_: bool,
    files_flag: bool,
    conversation: bool,
    cwd: Path | None,
    allow_outside: bool,
    no_backup: bool,
    backup_alias: bool,
    dry_run: bool,
    yes: bool,
    latest: bool,
    max_bytes: int,
    as_json: bool,
) -> int:
    """Restore the files SESSION changed to their state at message --at (from Claude
    Code's file checkpoints), and/or fork the conversation there (--conversation).

    A prompt's uuid names the state when that prompt was sent; another message, the state
    when the next prompt was sent (if no file was edited in between). Files that did not
    exist then are deleted, as Claude Code's /rewind does.
    """
    if no_backup and backup_alias:
        raise click.UsageError("--backup and --no-backup contradict each other")
    if (to is None) == (not list_):
        raise click.UsageError("name the message with --at UUID|N, or --list the checkpoints (not both)")
    keep = not no_backup
    do_files = files_flag or not conversation
    ref = named_session(session, latest)
    # Random bytes, other JSON: exit 4, as every command; a subagent's file: exit 2.
    require_transcript(ref.path, session_verb="rewind")
    loaded = load_session(ref.path, max_bytes=max_bytes)
    s = loaded.session
    sid = ref.session_id or s.session_id
    if sid is None:
        raise UsageError(f"{ref.path}: no session id; cannot find its file-history backups")
    if list_:
        from ..rewind.files import checkpoint_origin

        found = checkpoints(s)
        origin = checkpoint_origin(s) if not found else None
        if as_json:
            # Where the checkpoints are when this session (a fork) has none.
            emit_json(
                {"session_id": sid, "checkpoints": [asdict(c) for c in found], "checkpoints_in": origin}
            )
        else:
            from ..rewind.core import no_checkpoints_hint
            from ..views.rewind import render_checkpoints

            render_checkpoints(console(), sid, found, no_checkpoints_hint(s, origin))
        return 0
    assert to is not None  # one of the two, checked above
    target = resolve_target(s, to)
    info: dict[str, Any] = {"session_id": sid, "dry_run": dry_run}
    code = 0
    plan: RewindPlan | None = None
    if do_files:
        plan, backups = plan_files(ref.path, s, sid, target, cwd=cwd, allow_outside=allow_outside)
        info["files"] = _plan_info(plan, diffs=dry_run or not as_json)
        if plan.problems:
            code = 1
    # Overwriting or deleting files asks first; a fork only adds a new session file.
    if not dry_run and not yes and plan is not None and plan.changes:
        if not sys.stdin.isatty():
            raise UsageError(
                "refusing to rewind without a confirmation",
                hint="pass --yes (or --dry-run to see what would change)",
            )
        if plan is not None:
            from ..views.rewind import render_plan

            render_plan(console(stderr=True), info["files"], diffs=True)
        if not click.confirm("Apply this rewind?", default=False, err=True):
            click.echo("tt: nothing changed", err=True)
            return 1
    if plan is not None and not dry_run:
        results = apply_plan(plan, backups, keep=keep)
        info["applied"] = _results(results)
        if any(not r.done for r in results):
            code = 1
    if conversation:
        info["conversation"] = _fork_at(ref, loaded, sid, to, dry_run, max_bytes)
    if as_json:
        emit_json(info)
    else:
        from ..views.rewind import render_rewind

        render_rewind(console(), info)
    return code


def _fork_at(
    ref: store.SessionRef, loaded: Any, sid: str, at: str, dry_run: bool, max_bytes: int
) -> dict[str, Any]:
    # The same code path as `tt fork --at` (`fork.files.fork_session`), so the two never disagree.
    from ..edge.writer import iso_now
    from ..fork.files import fork_session
    from ..views.fork import fork_info

    forked = fork_session(
        ref.path,
        now=iso_now(),
        source_session_id=sid,
        at=at,
        dry_run=dry_run,
        max_bytes=max_bytes,
        loaded=loaded,
    )
    return fork_info(forked)
