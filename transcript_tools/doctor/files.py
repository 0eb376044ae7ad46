"""The file side of `doctor.core`: read a transcript (head and tail as the SDK does, then a full
scan) and diagnose it; a session or a directory of them.

A directory's files are its ``*.jsonl`` but subagent transcripts and tt's by-products: the
sessions (``<session-id>.jsonl``) and any other file a user put there, which /resume skips
for its name (``name-not-an-id``). Whether a file is a subagent of a session that is there
is `claude_dir.session_of_subagent`'s answer (`legacy_agents_of` for 2.0.x,
`subagent_files` for 2.1.x), never a second copy of those finders.

Invariant: only reads, never writes, and opens nothing but the transcripts named or
listed (`claude_dir` finds them).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..catalog.listing import LITE_READ_BYTES
from ..edge import claude_dir as store
from ..edge.reader import iter_lines, read_head_tail
from ..edge.writer import is_by_product
from ..model.errors import NotFound, Unreadable
from ..model.ids import is_session_id
from ..model.session import session_id_from_name
from ..model.titles import first_record_field, first_string_field
from .core import Diagnosis, Place, Scan, continued_in, diagnose, scan_records


def scan_file(path: Path) -> tuple[bytes, bytes, int, Scan]:
    """Read ``path`` once: its head and tail (as the SDK does) and a full scan."""
    head, tail, st = read_head_tail(path, LITE_READ_BYTES)
    size = st.st_size
    nul_only = size > 0

    def entries() -> Iterator[dict[str, Any]]:
        nonlocal nul_only
        for line in iter_lines(path):
            if nul_only and line.data.strip(b"\0\r\n"):
                nul_only = False
            for e in line.entries or ():
                yield e.record

    scan = scan_records(entries())
    return head, tail, size, replace(scan, nul_only=nul_only)  # known once the whole file is read


def doctor_file(path: Path) -> Diagnosis:
    head, tail, size, scan = scan_file(path)
    name_id = session_id_from_name(path.name)
    inner = None if name_id else first_string_field(head, "sessionId")
    # Where Claude Code looks: <config>/projects/<folder>/<id>.jsonl, in whichever config dir
    # the file is (a copy of one, a fixture's); anywhere else nothing finds it.
    in_project = path.parent.parent.name == "projects"
    # The full scan's first record that carries one (the head's bytes only when none does).
    cwd = scan.cwd or first_record_field(head, "cwd")
    place = Place(
        subagent_of=store.session_of_subagent(path) or _folder_owner(path),
        id_file_exists=is_session_id(inner) and (path.parent / f"{inner}.jsonl").is_file(),
        continued_in=_continued_beside(path, tail),
        in_project=in_project,
        home=None if in_project or not cwd else str(store.projects_dir() / store.project_dir_name(cwd)),
        cwd=cwd or None,
        moved_to=path.parent.name
        if in_project and cwd and not store.is_project_folder_of(path.parent.name, cwd)
        else None,
    )
    return diagnose(str(path), name_id, head, tail, size, scan, place)


def _folder_owner(path: Path) -> str | None:
    """The session whose folder (``<folder>/<id>/…``) holds ``path`` when ``<id>.jsonl`` is
    beside that folder: a workflow's ``journal.jsonl`` under ``subagents/`` is the session's
    file, not a stub to delete (a new user was told to `tt delete` it)."""
    for folder in list(path.parents)[:-1]:
        if is_session_id(folder.name) and (folder.parent / f"{folder.name}.jsonl").is_file():
            return folder.name
        if folder.parent.name == "projects":
            break
    return None


def _continued_beside(path: Path, tail: bytes) -> str | None:
    """The session a ``continued-in`` record names, when its file is beside ``path`` and holds
    messages: what the 2.1.332 picker checks before it shows that session instead."""
    target = continued_in(tail)
    if target is None:
        return None
    other = path.parent / f"{target}.jsonl"
    if not other.is_file():  # a pipe or a folder of that name would block or fail the read
        return None
    try:
        head, other_tail, _ = read_head_tail(other, LITE_READ_BYTES)
    except (NotFound, Unreadable):
        return None
    return target if b'"parentUuid":' in head or b'"parentUuid":' in other_tail else None


def transcripts_in(folder: Path) -> list[Path]:
    """The files of a project folder doctor reads, sorted: every ``*.jsonl`` but tt's
    by-products and the subagent transcripts of sessions that are there, and the subagent
    transcripts whose session's file is gone: a 2.0.x ``agent-*.jsonl`` beside the
    sessions that names a session with no file here, or a file of a 2.1.x
    ``<id>/subagents/`` folder with no ``<id>.jsonl`` beside it. /resume reaches a
    subagent only through its session, so such a file is a conversation no picker and no
    ``--resume`` will show (`core.diagnose`: ``all-sidechain``, with its fix). They were
    once left out with the rest of the agent files, silently (a new user's 2.0.28 agent
    file whose session was not copied)."""
    by_session = store.legacy_agents_by_session(folder)
    try:
        names = sorted(folder.iterdir())
    except OSError:
        return []
    here = {p.name[:-6] for p in names if p.name.endswith(".jsonl")}
    agents = {a for sid, files in by_session.items() if sid in here for a in files}
    out = [
        p
        for p in names
        if p.name.endswith(".jsonl") and p not in agents and not is_by_product(p.name) and p.is_file()
    ]
    for d in names:
        if is_session_id(d.name) and d.name not in here and d.is_dir():
            out.extend(store.subagent_files(d.with_name(f"{d.name}.jsonl")))
    return out


def doctor_path(spec: str, *, root: Path | None = None) -> list[Diagnosis]:
    """A session (path, id or prefix: `claude_dir.resolve`), or a directory: a project's folder,
    or a working directory whose sessions (with its worktrees') are diagnosed."""
    p = Path(spec).expanduser()
    if p.is_dir():
        # A project folder: one under projects/, or one holding sessions (`project_dirs`'
        # rule); any other directory is a working directory, whose own .jsonl files (data
        # of the project) are no sessions.
        projects = store.projects_dir() if root is None else root
        if p.parent.resolve() == projects.resolve() or store.session_files(p):
            files = transcripts_in(p)
        else:
            files = [f for d in store.session_folders(p, root) for f in transcripts_in(d)]
        return [doctor_file(f) for f in files]
    ref = store.resolve(spec, root=root)
    return [doctor_file(ref.path)]


def doctor_targets(
    specs: tuple[str, ...], *, all_: bool = False, project: str | None = None, root: Path | None = None
) -> list[Diagnosis]:
    """``tt doctor``'s files: the sessions of ``project`` / ``all_`` (the scope of tt validate,
    ls and stats: `catalog.files.project_dirs`), then each spec (`doctor_path`); each file once."""
    files: list[Path] = []
    if all_ or project is not None:
        from ..catalog.files_scope import project_dirs

        files = [f for d in project_dirs(project, all_=all_, root=root) for f in transcripts_in(d)]
    out = {str(f): doctor_file(f) for f in files}
    for spec in specs:
        for d in doctor_path(spec, root=root):
            out.setdefault(d.path, d)
    return list(out.values())
