"""``tt rename``, ``tt tag``, ``tt delete``: a session's title, tag and removal.

Rename and tag append one record, the bytes the Agent SDK writes (`manage.rename_line`,
`manage.tag_line`), through `manage.files.append_record`. Delete surveys what belongs to
the session (`manage.files.survey`), shows it, asks (or takes ``--yes``), then removes it
(`manage.files.remove`: folders first, the transcript last). The file side is the
library's, shared with the Python API; this module parses, asks and renders.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

import click

from ..edge import claude_dir as store
from ..manage.core import rename_line, tag_line
from ..manage.files import append_record, remove, survey
from ..model.errors import UsageError
from .common import console, emit_json, json_option, require_transcript


def _session_id(ref: store.SessionRef) -> str:
    return store.session_id_of(ref)


def _record_command(
    action: str, spec: str, line_of: Callable[[str, str], bytes], value: str, dry_run: bool, as_json: bool
) -> int:
    ref = store.resolve(spec)
    # Random bytes, other JSON: exit 4, as every command; a subagent's file: a usage error
    # naming its session (the title went into the subagent's file, and none lists it there).
    require_transcript(ref.path, session_verb=action)
    sid = _session_id(ref)
    line = line_of(sid, value)
    if not dry_run:
        append_record(ref, line)
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
        from ..manage.files import blocked

        # What the real run would refuse, said now (a new user's dry run said nothing).
        refused = blocked(plan)
        if as_json:
            emit_json({**plan.to_dict(), "deleted": False, "would_fail": refused})
        else:
            render_plan(console(), plan, deleted=False)
            if refused is not None:
                click.echo(
                    f"tt: the delete would fail: {refused.removesuffix('; nothing was deleted')}", err=True
                )
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
    remove(plan)
    if as_json:
        emit_json({**plan.to_dict(), "deleted": True})
    else:
        render_plan(console(), plan, deleted=True)
    return 0
