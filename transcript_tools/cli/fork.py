"""``tt fork``: branch a session, whole or at a message, into a new session with fresh ids.

Resolve the session and hand it to `fork.files.fork_session`, the one fork workflow
(shared with ``tt resume --fork``, ``tt rewind --conversation`` and the API): it loads
the session through the in-memory repair, forks it, and writes the new file exclusively
(mode 0600) into the same project folder (so ``claude --resume`` lists it) or at ``-o``,
with the forked subagent transcripts under ``<new id>/subagents/``. The original is only
read. If any write fails, what this run created is removed again.
"""

from __future__ import annotations

import click

from ..edge.writer import iso_now
from ..fork.files import fork_session
from ..model.errors import UsageError
from .common import (
    console,
    continue_option,
    emit_json,
    json_option,
    max_bytes_option,
    named_session,
    require_transcript,
)


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
    ref = named_session(session, latest)
    require_transcript(ref.path, session_verb="fork")
    forked = fork_session(
        ref.path,
        now=iso_now(),
        source_session_id=ref.session_id,
        at=at_spec,
        title=title,
        output=out,
        dry_run=dry_run,
        max_bytes=max_bytes,
    )
    from ..views.fork import fork_info

    info = fork_info(forked)
    if as_json:
        emit_json(info)
    else:
        from ..views.fork import render_fork

        render_fork(console(), info)
    return 0
