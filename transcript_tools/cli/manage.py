"""``tt rename``, ``tt tag``, ``tt delete``: a session's title, tag and removal.

Rename and tag append one record, the bytes the Agent SDK writes (`manage.core.rename_line`,
`manage.core.tag_line`), with one ``write`` on an O_APPEND descriptor (`writer.append_records`),
so a Claude Code process still writing the session cannot interleave with it. Delete
surveys what belongs to the session, shows it, asks (or takes ``--yes``), then removes
folders first and the transcript last: a run that fails half-way leaves the session
listed, to be deleted again.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import click

from ..edge import claude_dir as store
from ..edge.reader import file_size
from ..edge.writer import append_records
from ..manage.core import DeletePlan, Found, is_session_id, plan_delete, rename_line, tag_line
from ..model.errors import NotFound, Unreadable, UsageError, WriteFailed
from .common import console, emit_json, json_option, require_transcript


def _session_id(ref: store.SessionRef) -> str:
    return store.session_id_of(ref)


def _append(ref: store.SessionRef, line: bytes) -> None:
    if file_size(ref.path) == 0:
        # The SDK treats an empty file as "no session here" too.
        raise Unreadable(f"{ref.path}: empty file, not a session")
    append_records(ref.path, [line.rstrip(b"\n")])


def _record_command(
    action: str, spec: str, line_of: Callable[[str, str], bytes], value: str, dry_run: bool, as_json: bool
) -> int:
    ref = store.resolve(spec)
    sid = _session_id(ref)
    line = line_of(sid, value)
    if not dry_run:
        _append(ref, line)
    info: dict[str, object] = {
        "action": action,
        "session_id": sid,
        "path": str(ref.path),
        "record": line.decode("ascii"),
        "written": not dry_run,
    }
    if action == "rename":
        info["title"] = value.strip()
    else:
        info["tag"] = _tag_value(line)
    if as_json:
        emit_json(info)
    else:
        from ..views.manage import render_record

        render_record(console(), info)
    return 0


def _tag_value(line: bytes) -> str | None:
    tag = json.loads(line)["tag"]
    return tag or None


@click.command("rename")
@click.argument("session")
@click.argument("title")
@click.option("--dry-run", is_flag=True, help="Show the record; append nothing.")
@json_option
def rename_command(session: str, title: str, dry_run: bool, as_json: bool) -> int:
    """Set SESSION's title (shown by `claude --resume` and the Agent SDK's list_sessions)."""
    return _record_command("rename", session, rename_line, title, dry_run, as_json)


@click.command("tag")
@click.argument("session")
@click.argument("tag")
@click.option("--dry-run", is_flag=True, help="Show the record; append nothing.")
@json_option
def tag_command(session: str, tag: str, dry_run: bool, as_json: bool) -> int:
    """Tag SESSION; an empty TAG ("") clears it."""
    return _record_command("tag", session, tag_line, tag, dry_run, as_json)


# --- delete -------------------------------------------------------------------


def _found(p: Path) -> Found | None:
    """What is at ``p`` (never following a symlink), or None."""
    try:
        st = p.lstat()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise Unreadable(f"{p}: cannot read ({e.strerror})") from e
    if p.is_symlink() or not p.is_dir():
        return Found(p, False, 1, st.st_size)
    files = size = 0
    for root, _dirs, names in os.walk(p):
        for n in names:
            files += 1
            try:
                size += os.lstat(os.path.join(root, n)).st_size
            except OSError:
                pass
    return Found(p, True, files, size)


def _inside(p: Path, root: Path) -> bool:
    try:
        p.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def _legacy_agents(project: Path, sid: str) -> list[Found]:
    found = (_found(p) for p in store.legacy_agents_by_session(project).get(sid, []))
    return [f for f in found if f is not None]


def survey(ref: store.SessionRef) -> DeletePlan:
    main = _found(ref.path)
    if main is None:
        raise NotFound(f"{ref.path}: no such file")
    stem = ref.path.name.removesuffix(".jsonl")
    if not is_session_id(stem):
        return plan_delete(main)
    # file-history/<id>/ belongs to the config dir's session of that id: only when the
    # transcript named is that session's (not a copy elsewhere) is it part of the plan.
    ours = _inside(ref.path, store.projects_dir())
    return plan_delete(
        main,
        session_folder=_found(ref.path.parent / stem),
        file_history=_found(store.file_history_dir(stem)) if ours else None,
        legacy_subagents=_legacy_agents(ref.path.parent, stem) if ours else (),
    )


def _remove(plan: DeletePlan) -> None:
    for t in sorted(plan.targets, key=lambda t: t.kind == "transcript"):
        try:
            if t.is_dir:
                shutil.rmtree(t.path)
            else:
                t.path.unlink()
        except FileNotFoundError:
            continue
        except OSError as e:
            raise WriteFailed(
                f"{t.path}: could not delete ({e.strerror}); the transcript is still there"
                if t.kind != "transcript"
                else f"{t.path}: could not delete ({e.strerror})"
            ) from e


@click.command("delete")
@click.argument("session")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--dry-run", is_flag=True, help="List what would be deleted; delete nothing.")
@json_option
def delete_command(session: str, yes: bool, dry_run: bool, as_json: bool) -> int:
    """Delete SESSION: its transcript, its subagents folder and its file-history backups."""
    from ..views.manage import render_plan

    ref = store.resolve(session)
    require_transcript(ref.path)
    plan = survey(ref)
    if dry_run:
        if as_json:
            emit_json({**plan.to_dict(), "deleted": False})
        else:
            render_plan(console(), plan, deleted=False)
        return 0
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError(
                "refusing to delete without a confirmation",
                hint="pass --yes (or --dry-run to see what would go)",
            )
        render_plan(console(stderr=True), plan, deleted=False)
        if not click.confirm("Delete these for good?", default=False, err=True):
            click.echo("tt: nothing deleted", err=True)
            return 1
    _remove(plan)
    if as_json:
        emit_json({**plan.to_dict(), "deleted": True})
    else:
        render_plan(console(), plan, deleted=True)
    return 0
