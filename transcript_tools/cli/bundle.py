"""``tt export`` and ``tt import``: move a session to another machine (or folder).

Export writes one zip bundle (`bundle.core`, `bundle.files_export`, `bundle.files_import`):
the transcript, its subagents, its file-history backups and a manifest with checksums —
redacted by default. Import checks the archive before extracting anything, places the
session under the project folder of ``--cwd`` (default: the current directory) in this
machine's Claude config dir, rewrites the paths under the old cwd to the new one, never
overwrites, and prints how to continue.

Exit codes: 0 done, 2 usage, 3 not found, 4 unreadable or refused (unsafe or damaged
archive), 6 write failed or the session exists already.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import click

from ..bundle.core import MAX_MEMBER_BYTES, MAX_TOTAL_BYTES, Limits
from ..bundle.files_export import ExportReport, export_to
from ..bundle.files_import import Imported, existing, import_bundle, import_cwd, read_manifest
from ..edge import claude_dir as store
from .common import console, continue_option, emit_json, json_option, named_session, require_transcript


def _export_info(e: ExportReport) -> dict[str, Any]:
    m = e.manifest
    info: dict[str, Any] = {
        "path": str(e.path),
        "bytes": e.bytes,
        "session_id": m.session_id,
        "cwd": m.cwd,
        "claude_code_versions": list(m.claude_code_versions),
        "redacted": m.redacted,
        "redactions": dict(m.redactions),
        "files": [x.to_dict() for x in m.members],
        "skipped": e.skipped,
    }
    if not e.written:
        info["dry_run"], info["exists"] = True, e.exists
    return info


@click.command("export")
@click.argument("session", required=False)
@continue_option
@click.option(
    "-o",
    "--output",
    "output",
    type=click.Path(path_type=Path),
    help="The bundle to write (default: <session id>.zip here).",
)
@click.option("--no-redact", is_flag=True, help="Keep everything, secrets included.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Show what the bundle would hold (files, sizes, redactions); write nothing.",
)
@json_option
def export_command(
    session: str | None, latest: bool, output: Path | None, no_redact: bool, dry_run: bool, as_json: bool
) -> int:
    """Pack SESSION into one zip bundle: transcript, subagents, file-history backups and
    a manifest (versions, original cwd, sha256 checksums). Secrets are replaced by
    placeholders unless --no-redact. `tt import` unpacks it on another machine."""
    ref = named_session(session, latest)
    # Random bytes, other JSON: exit 4, as every command; a subagent's file: exit 2.
    require_transcript(ref.path, session_verb="export")
    info = _export_info(export_to(ref, output, redact=not no_redact, dry_run=dry_run))
    if as_json:
        emit_json(info)
    else:
        from ..views.bundle import render_export

        render_export(console(), info)
    return 0


def _import_info(i: Imported, archive: Path) -> dict[str, Any]:
    m = i.manifest
    return {
        "archive": str(archive),
        "session_id": i.session_id,
        "path": str(i.path),
        "cwd": i.cwd,
        "original_cwd": m.cwd,
        "claude_code_versions": list(m.claude_code_versions),
        "redacted": m.redacted,
        "redactions": dict(m.redactions),
        "files": [str(p) for p in i.files],
        "relocated_lines": i.relocated_lines,
        "continue": [
            f"tt resume {i.session_id}",
            f"cd {shlex.quote(i.cwd)} && claude --resume {i.session_id}",
        ],
    }


@click.command("import")
@click.argument("archive", type=click.Path(path_type=Path))
@click.option(
    "--cwd",
    "cwd",
    metavar="DIR",  # as `-p/--project DIR` and `tt store from --cwd DIR`
    type=click.Path(path_type=Path),
    help="The project folder to continue in (default: the current directory).",
)
@click.option("--dry-run", is_flag=True, help="Check the bundle and show its manifest; extract nothing.")
@click.option(
    "--max-bytes",
    type=click.IntRange(min=1),
    default=None,
    help=f"Refuse bundles that unpack to more bytes.  [default: {MAX_TOTAL_BYTES}]",
)
# The old spelling: still accepted (scripts keep working), not shown; the vocabulary is
# --max-bytes everywhere (CONTRIBUTING.md, "Flags").
@click.option("--max-size", type=click.IntRange(min=1), default=None, hidden=True)
@json_option
def import_command(
    archive: Path, cwd: Path | None, dry_run: bool, max_bytes: int | None, max_size: int | None, as_json: bool
) -> int:
    """Unpack a bundle written by `tt export` into this machine's Claude config dir, under
    the project folder of --cwd, rewriting paths under the original cwd. Refuses unsafe
    archives (paths escaping the target, links, devices, oversized members), bad
    checksums, and a session id that exists already."""
    if max_bytes is not None and max_size is not None and max_bytes != max_size:
        raise click.UsageError("--max-size is the old name of --max-bytes: give one")
    if archive.is_dir():  # as every command says of a directory where a file goes (exit 2)
        raise click.UsageError(f"{archive}: is a directory; name a bundle (.zip) that tt export wrote")
    cap = max_bytes or max_size or MAX_TOTAL_BYTES
    limits = Limits(member_bytes=min(MAX_MEMBER_BYTES, cap), total_bytes=cap)
    target = import_cwd(cwd)
    if dry_run:
        m = read_manifest(archive, limits=limits)
        info: dict[str, Any] = {
            "archive": str(archive),
            "session_id": m.session_id,
            "original_cwd": m.cwd,
            "cwd": store.canonical_cwd(target),
            "claude_code_versions": list(m.claude_code_versions),
            "redacted": m.redacted,
            "redactions": dict(m.redactions),
            "files": [x.to_dict() for x in m.members],
            "written": False,
            # What the real import would refuse to write over (it exits 6 then).
            "exists": [str(p) for p in existing(m.session_id)],
        }
    else:
        info = {**_import_info(import_bundle(archive, target, limits=limits), archive), "written": True}
    if as_json:
        emit_json(info)
    else:
        from ..views.bundle import render_import

        render_import(console(), info)
    return 0
