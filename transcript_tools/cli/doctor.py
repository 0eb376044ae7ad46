"""``tt doctor``: why a session is missing from /resume (`transcript_tools.doctor.core`).

TARGETS, ``-c``, ``-p DIR`` and ``-a`` name sessions as in ``tt validate`` (the same options,
the same scope: `catalog.files.project_dirs`).

Exit codes: 0 nothing wrong, 1 findings, 2 usage, 3 not found, 4 unreadable.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from ..doctor.files import doctor_targets
from ..model.errors import NotFound
from ..views.doctor import render
from .common import console, emit_json, json_option, latest_session, sessions_options


@click.command("doctor")
@click.argument("targets", nargs=-1, metavar="[SESSION|DIR]...")
@sessions_options
@json_option
def doctor_command(
    targets: tuple[str, ...], latest: bool, project: str | None, all_: bool, as_json: bool
) -> int:
    """Why a session is missing from the /resume picker or does not load with
    `claude --resume`: each reason with its fix.

    SESSION is a path, an id or an id prefix; DIR is a project folder or a working
    directory (its sessions and its worktrees'). -c, -p and -a name sessions as in
    `tt validate`.
    """
    targets = latest_session(targets, latest, all_, project)
    if not targets and not all_ and project is None:
        raise click.UsageError("name a session or a directory (or -c, -p DIR, or --all)")
    diagnoses = doctor_targets(targets, all_=all_, project=project)
    if not diagnoses and targets:
        # A folder of copied transcripts (not a project folder, none named by a session id)
        # is read as a working directory, whose own .jsonl files are data (a new user's
        # folder of downloaded sessions got "no sessions found" and nothing else).
        from ..edge.writer import is_by_product

        loose = [
            t
            for t in targets
            if os.path.isdir(t)
            and Path(t).resolve().parent.name != "projects"
            and any(not is_by_product(p.name) for p in Path(t).glob("*.jsonl"))
        ]
        hint = (
            f"{loose[0]} holds .jsonl files but is no project folder and names no session: "
            "name a file to diagnose it (tt doctor FILE), or check them all with tt validate DIR"
            if loose
            else None
        )
        raise NotFound(f"{' '.join(targets)}: no sessions found", hint=hint)
    if as_json:
        emit_json({"files": [d.to_dict() for d in diagnoses]})
    else:
        # Sessions named one by one (no directory, -p or -a): each gets a line, clean or not.
        named = not all_ and project is None and not any(os.path.isdir(t) for t in targets)
        render(console(), diagnoses, named=named)
    return 1 if any(d.findings for d in diagnoses) else 0
