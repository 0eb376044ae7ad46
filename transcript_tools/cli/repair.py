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
from ..writer import iso_now
from .common import console, emit_json, json_option, max_bytes_option, one_output


@click.command("repair")
@click.argument("target")
@click.option("-o", "--output", "output", type=click.Path(path_type=Path), help="Write the repaired copy here (never overwrites).")
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
    output: Path | None,
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

    A session id repairs the main file and its subagent files (-o then names a folder).
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
    if as_json:
        emit_json(
            {
                "files": [r.to_dict() for r in reports],
                "changed": sum(r.changed for r in reports),
                "remaining_errors": sum(r.remaining_errors for r in reports),
            }
        )
    else:
        from ..views.repair import render_reports

        render_reports(console(), reports)
    return 1 if any(r.remaining_errors for r in reports) else 0


def _outputs(paths: list[Path], output: Path) -> list[Path | None]:
    main = paths[0]
    for p in paths:
        if _same(p, output):
            raise UsageError(
                f"{output}: that is the input itself; tt repair never writes over its input",
                hint="use --in-place to replace it atomically (a backup is kept), or choose another -o path",
            )
    if len(paths) == 1:
        if output.is_dir():
            out = output / main.name
            if _same(main, out):
                raise UsageError(f"{output}: is the input's own folder", hint="use --in-place, or another folder")
            return [out]
        return [output]
    # A session with subagents: -o names a folder; the layout under it is the session's.
    if output.exists() and not output.is_dir():
        raise UsageError(
            f"{output}: exists and is not a folder; this session has {len(paths) - 1} subagent file(s)",
            hint="name a folder with -o, or pass --no-subagents",
        )
    if output.suffix == ".jsonl" and not output.exists():
        raise UsageError(
            f"{output}: this session has {len(paths) - 1} subagent file(s), so -o names a folder",
            hint="give a folder path, or pass --no-subagents",
        )
    outs: list[Path | None] = []
    for p in paths:
        rel = p.relative_to(main.parent)
        out = output / rel
        if _same(p, out):
            raise UsageError(f"{output}: is the session's own project folder", hint="use --in-place, or another folder")
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise WriteFailed(f"{out.parent}: cannot create the folder ({e.strerror})") from e
        outs.append(out)
    return outs


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (b.exists() and a.samefile(b))
    except OSError:
        return False
