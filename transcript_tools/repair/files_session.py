"""The file side of repairing whole sessions, for ``tt repair`` and the API's
``repair_session`` alike: which sessions a command names, where each of a session's
files goes, and the repair of them all (`repair.files.repair_file` each).

A session is its main file and, when the file is named by a session id, its subagent
transcripts (``<id>/subagents/**``). With an output (``-o``), the main file goes there
and its subagent files beside it in Claude Code's layout (`session_out.session_outputs`),
each subagent's ``.meta.json`` sidecar copied beside its repaired copy
(`fork.files.copy_sidecar`).

Invariants:
- No output is the input itself (`UsageError` before anything is written); an output is
  never written over (`repair_file` writes exclusively).
- Folders are made with mode 0700; a failure is `WriteFailed`.
- Never prints; the reports are returned for the caller to render.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ..edge import claude_dir as store
from ..edge.session_out import first_taken, session_outputs
from ..edge.writer import is_by_product
from ..fork.files import copy_sidecar
from ..model.errors import NotFound, UsageError, WriteFailed
from .core import RepairOptions
from .files import FileReport, repair_file

#: How to repair a file named as its own output instead (the CLI's words; the API passes its own).
SAME_INPUT_HINT = "use --in-place to replace it atomically (a backup is kept), or choose another -o path"


def sessions_named(targets: Sequence[str], all_: bool, project: str | None) -> list[store.SessionRef]:
    """The sessions named: each target resolved (a directory: every transcript in it that is
    not a subagent's or a by-product), then those of ``project`` / ``all_``; each once, in
    order."""
    refs: list[store.SessionRef] = []
    specs = list(targets)
    if all_ or project is not None:
        from ..catalog.files_scope import project_dirs

        specs += [str(d) for d in project_dirs(project, all_=all_)]
    for spec in specs:
        p = Path(spec).expanduser()
        if p.is_dir():
            found = sorted(
                q
                for q in p.rglob("*.jsonl")
                if q.is_file()
                and not is_by_product(q.name)
                and not q.name.startswith("agent-")
                and "subagents" not in q.parts
            )
            if not found and not (all_ or project is not None):
                raise NotFound(f"{spec}: no .jsonl transcripts in this directory")
            refs.extend(store.resolve(str(q)) for q in found)
            continue
        refs.append(store.resolve(spec))
    return list({ref.path: ref for ref in refs}.values())


def make_folder(path: Path) -> None:
    """The folder ``-o DIR/`` names for several sessions, made if new."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise WriteFailed(f"{path}: cannot create the folder ({e.strerror})") from e


def outputs(
    paths: list[Path], output: str, *, main_parent: bool = False, hint: str = SAME_INPUT_HINT
) -> list[Path]:
    """Where each file goes (`session_out`: the main file at ``output``, or in it when it
    is a folder; subagent files beside it in Claude Code's layout, ``<name>/subagents/…``),
    their folders made (the main file's too with ``main_parent``)."""
    outs = session_outputs(paths, output)
    for p, out in zip(paths, outs, strict=True):
        if _same(p, out):
            raise UsageError(
                f"{out}: that is the input itself; tt repair never writes over its input", hint=hint
            )
    taken = first_taken(paths, outs)
    if taken is not None:
        raise WriteFailed(f"{taken}: already exists; tt never overwrites (nothing was written)", hint=hint)
    for out in outs if main_parent else outs[1:]:
        try:
            out.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as e:
            raise WriteFailed(f"{out.parent}: cannot create the folder ({e.strerror})") from e
    return outs


def repair_session(
    ref: store.SessionRef,
    options: RepairOptions,
    *,
    subagents: bool = True,
    output: str | None = None,
    in_place: bool = False,
    dry_run: bool = False,
    force: bool = False,
    backup: bool = True,
    now: Callable[[], str],
    new_id: Callable[[], str],
    main_parent: bool = False,
    hint: str = SAME_INPUT_HINT,
) -> tuple[list[FileReport], list[Path | None]]:
    """Repair a session's files (`session_files`), each by `repair_file` (exactly one of
    ``output``, ``in_place``, ``dry_run``); the reports and where each file went.
    ``now`` is read once a file."""
    paths = store.main_and_subagent_files(ref, subagents)
    outs: list[Path | None] = (
        list(outputs(paths, output, main_parent=main_parent, hint=hint))
        if output is not None
        else [None] * len(paths)
    )
    reports = [
        repair_file(
            path,
            options,
            out=out,
            in_place=in_place,
            dry_run=dry_run,
            force=force,
            backup=backup,
            now=now(),
            new_id=new_id,
        )
        for path, out in zip(paths, outs, strict=True)
    ]
    if output is not None:
        for p, out in zip(paths[1:], outs[1:], strict=True):
            if out is not None:
                copy_sidecar(p, out)
    return reports, outs


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (b.exists() and a.samefile(b))
    except OSError:
        return False
