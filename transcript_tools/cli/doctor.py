"""``tt doctor``: why a session is missing from /resume (`transcript_tools.doctor.core`).

Exit codes: 0 nothing wrong, 1 findings, 3 not found, 4 unreadable.
"""

from __future__ import annotations

import click

from ..doctor.files import doctor_path
from ..model.errors import NotFound
from ..views.doctor import render
from .common import console, emit_json, json_option


@click.command("doctor")
@click.argument("target", metavar="SESSION|DIR")
@json_option
def doctor_command(target: str, as_json: bool) -> int:
    """Why a session is missing from the /resume picker or does not load with
    `claude --resume`: each reason with its fix.

    SESSION is a path, an id or an id prefix; DIR is a project folder or a working
    directory (its sessions and its worktrees').
    """
    diagnoses = doctor_path(target)
    if not diagnoses:
        raise NotFound(f"{target}: no sessions found")
    if as_json:
        emit_json({"files": [d.to_dict() for d in diagnoses]})
    else:
        render(console(), diagnoses)
    return 1 if any(d.findings for d in diagnoses) else 0
