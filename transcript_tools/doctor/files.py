"""The file side of `doctor.core`: read a transcript (head and tail as the SDK does, then a full
scan) and diagnose it; a session or a directory of them.

Invariant: only reads, never writes, and opens nothing but the transcripts named or
listed (`claude_dir` finds them).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..catalog.listing import LITE_READ_BYTES
from ..edge import claude_dir as store
from ..edge.reader import iter_lines, read_head_tail
from ..model.session import session_id_from_name
from .core import Diagnosis, Scan, diagnose, scan_records


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
    return (
        head,
        tail,
        size,
        Scan(scan.records, scan.main_messages, scan.sidechain_messages, scan.other_types, nul_only),
    )


def doctor_file(path: Path) -> Diagnosis:
    head, tail, size, scan = scan_file(path)
    return diagnose(str(path), session_id_from_name(path.name), head, tail, size, scan)


def doctor_path(spec: str, *, root: Path | None = None) -> list[Diagnosis]:
    """A session (path, id or prefix: `claude_dir.resolve`), or a directory: a project's folder,
    or a working directory whose sessions (with its worktrees') are diagnosed."""
    p = Path(spec).expanduser()
    if p.is_dir():
        files = store.session_files(p)
        if not files:
            files = [f for d in store.session_folders(p, root) for f in store.session_files(d)]
        return [doctor_file(f) for f in files]
    ref = store.resolve(spec, root=root)
    return [doctor_file(ref.path)]
