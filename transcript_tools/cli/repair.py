"""``tt repair``: recover a crash-damaged transcript, losing nothing.

Exit codes: 0 repaired (or nothing to repair), 1 damage remains that repair cannot fix
(reported; what could be fixed was written), 2 usage, 3 not found, 4 unreadable,
6 write failed or the input changed while it was repaired.
"""

from __future__ import annotations

import uuid as _uuid
from pathlib import Path

import click

from .. import store
from ..errors import UsageError, WriteFailed
from ..repair import RepairOptions
from ..repair_files import FileReport, repair_file
from ..fork_files import sidecar
from ..session_out import session_dir, session_outputs
from ..writer import write_new
from ..writer import iso_now
from .common import console, emit_json, json_option, max_bytes_option, one_output


@click.command("repair")
@click.argument("target")
@click.option(
    "-o", "--output", "output", metavar="PATH",
    help="Write the repaired copy here (never overwrites); a session's subagent files go beside it, in PATH-without-.jsonl/subagents/. An existing folder (or PATH/) holds the copy under the input's name.",
)
@click.option("--in-place", is_flag=True, help="Replace the input atomically, keeping <file>.bak.")
@click.option("--dry-run", is_flag=True, help="Print the plan; write nothing.")
@click.option("--force", is_flag=True, help="Write even if the input changed while it was repaired.")
@click.option("--drop-orphans", is_flag=True, help="Drop tool results whose call was lost (default: keep them as text).")
@click.option("--strip-thinking", is_flag=True, help="Remove thinking blocks (their signatures fail after a model switch).")
@click.option("--max-image-bytes", type=click.IntRange(min=1), help="Replace base64 images larger than N bytes with a placeholder.")
@click.option("--no-subagents", is_flag=True, help="For a session, leave its subagent files alone.")
@max_bytes_option
@json_option
def repair_command(
    target: str,
    output: str | None,
    in_place: bool,
    dry_run: bool,
    force: bool,
    drop_orphans: bool,
    strip_thinking: bool,
    max_image_bytes: int | None,
    no_subagents: bool,
    max_bytes: int,
    as_json: bool,
) -> int:
    """Repair TARGET (a file, a session id or an id prefix): cut torn lines, split fused
    records, drop duplicates, relink broken parents, answer interrupted tool calls, and
    more. Everything removed or rewritten goes to <output>.quarantine.jsonl.

    A session (an id, or a main file's path) repairs the main file and its subagent
    files; with -o fixed.jsonl they go to fixed.jsonl and fixed/subagents/, Claude Code's
    own layout (--no-subagents: the main file only).
    Exit 0 when repaired or nothing needed repair, 1 when damage remains that repair
    cannot fix, 6 when the output could not be written.
    """
    one_output(output, in_place, dry_run, required=True)
    if force and dry_run:
        raise click.UsageError("--force only applies when writing")
    ref = store.resolve(target)
    paths = [ref.path]
    if ref.session_id is not None and not no_subagents:
        paths.extend(store.subagent_files(ref.path))
    outs = _outputs(paths, output) if output is not None else [None] * len(paths)
    opts = RepairOptions(drop_orphans=drop_orphans, strip_thinking=strip_thinking, max_image_bytes=max_image_bytes, cap=max_bytes)
    reports: list[FileReport] = []
    for path, out in zip(paths, outs):
        reports.append(
            repair_file(
                path, opts, out=out, in_place=in_place, dry_run=dry_run, force=force,
                now=iso_now(), new_id=lambda: str(_uuid.uuid4()),
            )
        )
    if output is not None:
        _copy_sidecars(paths[1:], outs[1:])
    if as_json:
        emit_json(
            {
                "files": [r.to_dict() for r in reports],
                "subagents_dir": str(session_dir(outs[0]) / "subagents") if output is not None and len(outs) > 1 else None,
                "changed": sum(r.changed for r in reports),
                "remaining_errors": sum(r.remaining_errors for r in reports),
            }
        )
    else:
        from ..views.repair import render_reports

        con = console()
        render_reports(con, reports)
        if output is not None and len(outs) > 1:
            con.print(_layout_note(outs))
    return 1 if any(r.remaining_errors for r in reports) else 0


def _outputs(paths: list[Path], output: str) -> list[Path | None]:
    """Where each file goes (`session_out`: the main file at ``-o``, or in it when it is a
    folder; subagent files beside it in Claude Code's layout, ``<name>/subagents/…``)."""
    outs = session_outputs(paths, output)
    for p, out in zip(paths, outs):
        if _same(p, out):
            raise UsageError(
                f"{out}: that is the input itself; tt repair never writes over its input",
                hint="use --in-place to replace it atomically (a backup is kept), or choose another -o path",
            )
    for out in outs[1:]:
        try:
            out.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as e:
            raise WriteFailed(f"{out.parent}: cannot create the folder ({e.strerror})") from e
    return list(outs)


def _copy_sidecars(paths: list[Path], outs: list[Path | None]) -> None:
    """A subagent's ``agent-<id>.meta.json`` goes beside its repaired copy, as it was beside
    the original (Claude Code reads the agent's type and description there)."""
    for p, out in zip(paths, outs):
        meta = sidecar(p)
        if out is None or not meta.is_file():
            continue
        try:
            data = meta.read_bytes()
        except OSError as e:
            raise WriteFailed(f"{meta}: cannot read the subagent's sidecar ({e.strerror})") from e
        write_new(sidecar(out), [data], exclusive=True)


def _layout_note(outs: list[Path | None]) -> str:
    main = outs[0]
    assert main is not None
    return (
        f"{len(outs) - 1} subagent file(s) written beside {main} under {session_dir(main) / 'subagents'} "
        f"(Claude Code's layout: keep {main.name} and {session_dir(main).name}/ together; as <session-id>.jsonl "
        "and <session-id>/ in a project folder, claude --resume finds both)"
    )


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (b.exists() and a.samefile(b))
    except OSError:
        return False
