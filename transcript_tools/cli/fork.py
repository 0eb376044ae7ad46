"""``tt fork``: branch a session, whole or at a message, into a new session with fresh ids.

The edge around `fork.core.fork`: resolve the session, load it through the in-memory repair
(`loader.load_session`), fork, then write the new file exclusively (mode 0600) into the
same project folder (so ``claude --resume`` lists it) or at ``-o``, and the forked
subagent transcripts under ``<new id>/subagents/`` (`fork.files`, shared with ``tt
resume --fork`` and ``tt rewind --fork``). The original is only read. If any write
fails, what this run created is removed again.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import click

from ..edge import claude_dir as store
from ..edge.loader import Loaded, load_session
from ..edge.session_out import main_output, names_folder
from ..edge.writer import iso_now
from ..fork.branch import resolve_at
from ..fork.core import Fork, fork
from ..fork.files import UuidSource, copy_paths, plan_subagents, write_fork
from ..model.errors import UsageError, WriteFailed
from .common import console, continue_option, emit_json, json_option, max_bytes_option, require_transcript


def load(path: Path, max_bytes: int) -> Loaded:
    """`loader.load_session`: the capped read with the repair fixes in memory."""
    return load_session(path, max_bytes=max_bytes)


def _target(out: str | None, project_dir: Path, session_id: str) -> Path:
    """Beside the original, or where ``-o`` says (`session_out`: a file, or a folder)."""
    if out is None:
        return project_dir / f"{session_id}.jsonl"
    return main_output(out, f"{session_id}.jsonl")


def _mkdir(d: Path) -> None:
    try:
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as e:
        raise WriteFailed(f"{d}: cannot create the folder ({e.strerror})") from e


def _in_projects(path: Path) -> bool:
    """Whether ``claude --resume`` can find the file: directly in a project folder."""
    return path.parent.parent.resolve() == store.projects_dir().resolve()


@click.command("fork")
@click.argument("session", required=False)
@click.option(
    "--at",
    "at_spec",
    metavar="UUID|N",
    help="End the fork at this message: a uuid (or prefix), or N = the Nth message from the end (1 = the last).",
)
@click.option("--title", help='Title of the fork (default: the original\'s title + " (fork)").')
@click.option(
    "-o", "--output", "out", metavar="PATH", help="Write the fork here instead of beside the original."
)
@click.option("--dry-run", is_flag=True, help="Show what the fork would hold; write nothing.")
@continue_option
@max_bytes_option
@json_option
def fork_command(
    session: str | None,
    at_spec: str | None,
    title: str | None,
    out: str | None,
    dry_run: bool,
    latest: bool,
    max_bytes: int,
    as_json: bool,
) -> int:
    """Branch SESSION into a new session with fresh ids (the original is never changed).

    SESSION is a path, a session id or an id prefix. The fork goes into the same project
    folder, so `claude --resume` lists it. A cut that would part a tool call from its
    result moves to keep them together, and says so.
    """
    if title is not None and not title.strip():
        raise UsageError("--title is empty")
    ref = store.resolve(session, latest=latest)
    require_transcript(ref.path)
    loaded = load(ref.path, max_bytes)
    s = loaded.session
    source = ref.session_id or s.session_id or ref.path.name.removesuffix(".jsonl")
    at = resolve_at(s, at_spec) if at_spec is not None else None
    f = fork(s, source_session_id=source, at=at, title=title, now=iso_now(), new_id=UuidSource())
    path = _target(out, ref.project_dir, f.session_id)
    subs = plan_subagents(ref.path, f, s, max_bytes)
    sub_paths = copy_paths(path, subs)
    if not dry_run:
        if out is not None and names_folder(out):
            _mkdir(path.parent)  # -o DIR/: the folder to write into, made if new
        write_fork(path, f, subs)
    info = _info(f, ref.path, path, sub_paths, loaded, dry_run, s.first_cwd(), in_project=_in_projects(path))
    if as_json:
        emit_json(info)
    else:
        from ..views.fork import render_fork

        render_fork(console(), info)
    return 0


def _info(
    f: Fork,
    original: Path,
    path: Path,
    subs: list[Path],
    loaded: Loaded,
    dry_run: bool,
    cwd: str | None,
    *,
    in_project: bool,
) -> dict[str, Any]:
    return {
        "session_id": f.session_id,
        "path": str(path),
        "entries": f.entries,
        "forked_from": {"session_id": f.source_session_id, "message_uuid": f.cut.uuid, "path": str(original)},
        "title": f.title,
        "at": {"asked": f.cut.asked, "uuid": f.cut.uuid, "moved": f.cut.moved},
        "subagents": [str(p) for p in subs],
        "repairs": [{"fix": a.fix, "code": a.code, "line": a.line} for a in loaded.actions],
        "written": not dry_run,
        "in_project": in_project,
        "cwd": cwd,
        # tt finds a session by id only under the config dir; elsewhere, by its path.
        "continue": [
            f"tt resume {f.session_id if in_project else shlex.quote(str(path))}",
            (f"cd {shlex.quote(cwd)} && " if cwd else "") + f"claude --resume {f.session_id}",
        ],
    }
