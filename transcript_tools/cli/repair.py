"""``tt repair``: recover a crash-damaged transcript, losing nothing.

Parses, calls `repair.files_session` (the sessions named, each repaired with its subagent
files: the same path as the API's ``repair_session``) and renders the reports.

Exit codes: 0 repaired (or nothing to repair), 1 damage remains that repair cannot fix
(reported; what could be fixed was written), 2 usage, 3 not found, 4 unreadable,
6 write failed or the input changed while it was repaired.
"""

from __future__ import annotations

import uuid as _uuid
from pathlib import Path

import click

from ..edge import claude_dir as store
from ..edge.session_out import names_folder, session_dir
from ..edge.writer import iso_now
from ..model.errors import NotATranscript, UsageError
from ..repair.core import RepairOptions
from ..repair.files import FileReport
from ..repair.files_session import make_folder, repair_session, sessions_named
from .common import (
    console,
    emit_json,
    json_option,
    latest_session,
    max_bytes_option,
    one_output,
    require_transcript,
    sessions_options,
)


@click.command("repair")
@click.argument("targets", nargs=-1)
@sessions_options
@click.option(
    "-o",
    "--output",
    "output",
    metavar="PATH",
    help="Write the repaired copy here (never overwrites); a session's subagent files go beside it, in PATH-without-.jsonl/subagents/. An existing folder (or PATH/) holds the copy under the input's name.",
)
@click.option(
    "--in-place", is_flag=True, help="Replace the input atomically, keeping <file>.bak (unless --no-backup)."
)
@click.option(
    "--no-backup",
    is_flag=True,
    help="With --in-place: keep no .bak (the quarantine still holds every byte removed).",
)
@click.option("--dry-run", is_flag=True, help="Print the plan; write nothing.")
@click.option("--force", is_flag=True, help="Write even if the input changed while it was repaired.")
@click.option(
    "--drop-orphans", is_flag=True, help="Drop tool results whose call was lost (default: keep them as text)."
)
@click.option(
    "--strip-thinking",
    is_flag=True,
    help="Remove thinking blocks (their signatures fail after a model switch).",
)
@click.option(
    "--max-image-bytes",
    type=click.IntRange(min=1),
    help="Replace base64 images larger than N bytes with a placeholder.",
)
@click.option("--no-subagents", is_flag=True, help="For a session, leave its subagent files alone.")
@max_bytes_option
@json_option
def repair_command(
    targets: tuple[str, ...],
    latest: bool,
    project: str | None,
    all_: bool,
    output: str | None,
    in_place: bool,
    no_backup: bool,
    dry_run: bool,
    force: bool,
    drop_orphans: bool,
    strip_thinking: bool,
    max_image_bytes: int | None,
    no_subagents: bool,
    max_bytes: int,
    as_json: bool,
) -> int:
    """Repair TARGETS (files, session ids or id prefixes, directories; or -p DIR, --all):
    cut torn lines, split fused records, drop duplicates, relink broken parents, answer
    interrupted tool calls, and more. Everything removed or rewritten goes to
    <output>.quarantine.jsonl.

    A session (an id, or a main file's path) repairs the main file and its subagent
    files; with -o fixed.jsonl they go to fixed.jsonl and fixed/subagents/, Claude Code's
    own layout (--no-subagents: the main file only). Several sessions are repaired one by
    one, with a table at the end; -o then names a folder that holds each under its name.
    Exit 0 when repaired or nothing needed repair, 1 when damage remains that repair
    cannot fix, 6 when the output could not be written.
    """
    one_output(output, in_place, dry_run, required=True)
    if force and dry_run:
        raise click.UsageError("--force only applies when writing")
    if no_backup and not in_place:
        raise click.UsageError("--no-backup only applies with --in-place")
    targets = latest_session(targets, latest, all_, project)
    if not targets and not all_ and project is None:
        raise click.UsageError("name a file, a session id or a directory (or -p DIR, or --all)")
    mains = sessions_named(targets, all_, project)
    batch = (
        len(mains) > 1 or all_ or project is not None or any(Path(t).expanduser().is_dir() for t in targets)
    )
    if batch and output is not None and not names_folder(output):
        raise UsageError(
            f"-o {output}: several sessions go into a folder",
            hint="end the path with / (it is created), or name an existing folder",
        )
    if batch and output is not None:
        make_folder(Path(output).expanduser())
    opts = RepairOptions(
        drop_orphans=drop_orphans,
        strip_thinking=strip_thinking,
        max_image_bytes=max_image_bytes,
        cap=max_bytes,
    )
    sessions: list[tuple[store.SessionRef, list[FileReport], list[Path | None]]] = []
    skipped: list[NotATranscript] = []
    for ref in mains:
        # In a batch a file that is no transcript is noted and passed over, as `tt validate
        # -a` does, so one stray file neither stops the run half-way nor hides the table.
        # Named alone, it is the one error every command gives such a file (exit 4).
        if (not_one := _not_a_transcript(ref)) is not None:
            if not batch:
                raise not_one
            skipped.append(not_one)
            continue
        reports, outs = repair_session(
            ref,
            opts,
            subagents=not no_subagents,
            output=output,
            in_place=in_place,
            dry_run=dry_run,
            force=force,
            backup=not no_backup,
            now=iso_now,
            new_id=lambda: str(_uuid.uuid4()),
        )
        sessions.append((ref, reports, outs))
    every = [r for _, reports, _ in sessions for r in reports]
    if as_json:
        _emit(sessions, every, output, batch, skipped)
    else:
        from ..views.repair import render_batch, render_reports

        con = console()
        for e in skipped:
            click.echo(f"tt: {e.message}: skipped", err=True)
        if batch:
            render_batch(con, [(str(ref.path), reports) for ref, reports, _ in sessions])
        else:
            render_reports(con, every)
            outs = sessions[0][2]
            if output is not None and len(outs) > 1:
                con.print(_layout_note(outs))
    return 1 if any(r.remaining_errors for r in every) else 0


def _emit(
    sessions: list[tuple[store.SessionRef, list[FileReport], list[Path | None]]],
    every: list[FileReport],
    output: str | None,
    batch: bool,
    skipped: list[NotATranscript],
) -> None:
    doc: dict[str, object] = {
        "files": [r.to_dict() for r in every],
        "skipped": [e.message for e in skipped],
        "changed": sum(r.changed for r in every),
        "remaining_errors": sum(r.remaining_errors for r in every),
    }
    if batch:
        doc["sessions"] = [
            {
                "path": str(ref.path),
                "files": len(reports),
                "changed": sum(r.changed for r in reports),
                "actions": sum(len(r.actions) for r in reports),
                "remaining_errors": sum(r.remaining_errors for r in reports),
            }
            for ref, reports, _ in sessions
        ]
    else:
        outs = sessions[0][2]
        doc["subagents_dir"] = (
            str(session_dir(outs[0]) / "subagents")
            if output is not None and len(outs) > 1 and outs[0] is not None
            else None
        )
    emit_json(doc)


def _not_a_transcript(ref: store.SessionRef) -> NotATranscript | None:
    try:
        require_transcript(ref.path)
    except NotATranscript as e:
        return e
    return None


def _layout_note(outs: list[Path | None]) -> str:
    main = outs[0]
    assert main is not None
    return (
        f"{len(outs) - 1} subagent file(s) written beside {main} under {session_dir(main) / 'subagents'} "
        f"(Claude Code's layout: keep {main.name} and {session_dir(main).name}/ together; as <session-id>.jsonl "
        "and <session-id>/ in a project folder, claude --resume finds both)"
    )
