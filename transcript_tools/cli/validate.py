"""``tt validate``: check transcripts and report every problem with a stable code."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..model.errors import NotATranscript
from ..validate.core import Report
from ..validate.files import files_named, validate_path
from ..views.diagnostics import by_code, plain_lines, render_reports
from .common import (
    console,
    emit_json,
    json_option,
    latest_session,
    leave_to_exit,
    max_bytes_option,
    prints_as_is,
    sessions_options,
)
from .from_store import no_local_scope, store_option


@click.command("validate")
@click.argument("targets", nargs=-1)
@sessions_options
@click.option("--no-subagents", is_flag=True, help="Skip the subagent files of a session.")
@click.option("--no-schema", is_flag=True, help="Skip the JSON-Schema checks.")
@click.option("-q", "--quiet", is_flag=True, help="Only the summary line.")
@click.option("--errors", "errors_only", is_flag=True, help="Only errors, and only the files that have some.")
@max_bytes_option
@store_option
@json_option
def validate_command(
    targets: tuple[str, ...],
    latest: bool,
    project: str | None,
    all_: bool,
    no_subagents: bool,
    no_schema: bool,
    quiet: bool,
    errors_only: bool,
    max_bytes: int,
    as_json: bool,
    store_url: str | None = None,
) -> int:
    """Check transcripts: TARGETS are files, session ids (or prefixes) or directories.

    Exit 0 when no errors (warnings allowed), 1 when errors were found. A file in which no
    line is a JSON object is not a transcript: named alone, exit 4; in a directory, counted
    apart ("N not a transcript"), not as errors. With --store, TARGETS are stored sessions'
    ids (or prefixes), named <project>/<id>.jsonl; the store's own stored diagnostics are
    `tt store log`'s.
    """
    if store_url is not None:
        # Imported here: it brings shutil and tempfile, which a local run does not need.
        from ..store.files_materialise import materialised

        no_local_scope(store_url, **{"-c": latest, "-p": project, "-a": all_})
        if not targets:
            raise click.UsageError("--store: name stored sessions by id (`tt ls --store URL` lists them)")
        with materialised(store_url, list(targets)) as m:
            paths = files_named(tuple(str(r.path) for r in m.refs), False, None, not no_subagents)
            return _run(paths, no_schema, quiet, errors_only, max_bytes, as_json)
    targets = latest_session(targets, latest, all_, project)
    if not targets and not all_ and project is None:
        raise click.UsageError("name a file, a session id or a directory (or -p DIR, or --all)")
    return _run(
        files_named(targets, all_, project, not no_subagents),
        no_schema,
        quiet,
        errors_only,
        max_bytes,
        as_json,
    )


def _run(
    paths: list[Path], no_schema: bool, quiet: bool, errors_only: bool, max_bytes: int, as_json: bool
) -> int:
    reports: list[Report] = []
    progress = len(paths) > 3 and not as_json
    if progress:
        from rich.progress import Progress

        with Progress(console=console(stderr=True), transient=True) as bar:
            task = bar.add_task("validating", total=len(paths))
            for p in paths:
                reports.append(_one(p, max_bytes, not no_schema, single=False))
                bar.advance(task)
    else:
        reports = [_one(p, max_bytes, not no_schema, single=len(paths) == 1) for p in paths]
    if as_json:
        shown = [_errors_only(r) for r in reports if r.errors] if errors_only else reports
        emit_json(
            {
                "files": [r.to_dict() for r in shown],
                "errors": sum(r.errors for r in reports),
                "warnings": sum(r.warnings for r in reports),
                "not_transcripts": sum(1 for r in reports if r.not_transcript is not None),
                "by_code": by_code(reports),
            }
        )
    elif (lines := plain_lines(reports, quiet=quiet, errors_only=errors_only)) is not None and all(
        map(prints_as_is, lines)
    ):
        # What rich prints to a pipe, without importing rich (~4% of a run on a 50 MB
        # file). Flushed here, as rich does, so a closed pipe ends as with rich.
        sys.stdout.write("".join(line + "\n" for line in lines))
        sys.stdout.flush()
    else:
        render_reports(console(), reports, quiet=quiet, errors_only=errors_only)
    return 1 if any(r.errors for r in reports) else 0


def _one(path: Path, cap: int, schema: bool, *, single: bool) -> Report:
    # One file: what the validator kept is left to the process's end (`leave_to_exit`);
    # many (a folder, --all) are freed file by file, so memory stays bounded.
    r = validate_path(path, cap=cap, schema=schema, keep=leave_to_exit if single else None)
    # Not a transcript (`validate.files.validate_path` decides, for every path alike): alone, it is
    # most likely the wrong file, so one error (exit 4); among others (a folder, --all) it
    # is counted apart in the summary, neither an error nor a clean file.
    if r.not_transcript is not None and single:
        raise NotATranscript(f"{path}: {r.not_transcript}; this is not a transcript")
    return r


def _errors_only(r: Report) -> Report:
    from dataclasses import replace

    from ..model.diagnostics import Severity

    return replace(r, diagnostics=[d for d in r.diagnostics if d.severity is Severity.ERROR])
