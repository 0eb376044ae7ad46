"""``tt validate``: check transcripts and report every problem with a stable code."""

from __future__ import annotations

from pathlib import Path

import click

from .. import store
from ..check import validate_path
from ..errors import NotFound, Unreadable
from ..validate import Report
from ..writer import is_by_product
from ..views.diagnostics import render_reports
from .common import console, emit_json, json_option, max_bytes_option


def _targets(specs: tuple[str, ...], all_: bool, subagents: bool) -> list[Path]:
    out: list[Path] = []
    if all_:
        root = store.projects_dir()
        if not root.is_dir():
            raise NotFound(f"no Claude config dir with projects at {root}", hint="set CLAUDE_CONFIG_DIR")
        specs = specs + (str(root),)
    for spec in specs:
        p = Path(spec).expanduser()
        if p.is_dir():
            # tt's own side files (backups, quarantines: writer.by_product) are not transcripts.
            found = sorted(q for q in p.rglob("*.jsonl") if q.is_file() and not is_by_product(q.name))
            if not subagents:
                found = [q for q in found if not q.name.startswith("agent-")]
            if not found:
                raise NotFound(f"{spec}: no .jsonl transcripts in this directory")
            out.extend(found)
            continue
        ref = store.resolve(spec)
        out.append(ref.path)
        if subagents and ref.session_id is not None:
            out.extend(store.subagent_files(ref.path))
    # One report per file, in the order given.
    return list(dict.fromkeys(out))


@click.command("validate")
@click.argument("targets", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Every session under the Claude config dir.")
@click.option("--no-subagents", is_flag=True, help="Skip the subagent files of a session.")
@click.option("--no-schema", is_flag=True, help="Skip the JSON-Schema checks.")
@click.option("-q", "--quiet", is_flag=True, help="Only the summary line.")
@max_bytes_option
@json_option
def validate_command(
    targets: tuple[str, ...], all_: bool, no_subagents: bool, no_schema: bool, quiet: bool, max_bytes: int, as_json: bool
) -> int:
    """Check transcripts: TARGETS are files, session ids (or prefixes) or directories.

    Exit 0 when no errors (warnings allowed), 1 when errors were found. A file in which no
    line is a JSON object is not a transcript: named alone, exit 4; in a directory, counted
    apart ("N not a transcript"), not as errors.
    """
    if not targets and not all_:
        raise click.UsageError("name a file, a session id or a directory (or --all)")
    paths = _targets(targets, all_, not no_subagents)
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
        emit_json(
            {
                "files": [r.to_dict() for r in reports],
                "errors": sum(r.errors for r in reports),
                "warnings": sum(r.warnings for r in reports),
                "not_transcripts": sum(1 for r in reports if r.not_transcript is not None),
            }
        )
    else:
        render_reports(console(), reports, quiet=quiet)
    return 1 if any(r.errors for r in reports) else 0


def _one(path: Path, cap: int, schema: bool, *, single: bool) -> Report:
    r = validate_path(path, cap=cap, schema=schema)
    # Not a transcript (`check.validate_path` decides, for every path alike): alone, it is
    # most likely the wrong file, so one error (exit 4); among others (a folder, --all) it
    # is counted apart in the summary, neither an error nor a clean file.
    if r.not_transcript is not None and single:
        raise Unreadable(f"{path}: {r.not_transcript}; this is not a transcript")
    return r
