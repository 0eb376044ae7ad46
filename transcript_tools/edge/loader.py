"""Loading a session for the in-memory commands (show, fork, resume, compact's tail).

One path for all of them: the capped read (`reader.load`), then the `repair` fixes in
memory — so a damaged file reads as cleanly as its repaired copy would, and the file
on disk is never touched — then the chain (`session.Session`).

Invariants: never writes; refuses files past ``max_bytes`` (or loads only what follows
the last compact boundary when ``from_last_boundary`` and that part fits).
"""

from __future__ import annotations

import uuid as _uuid
from dataclasses import dataclass, field
from pathlib import Path

from ..model.session import Session
from .reader import MAX_TRANSCRIPT_READ_BYTES, load


@dataclass(slots=True)
class Loaded:
    session: Session
    #: What the in-memory repair did (`repair.model.Action` values); empty for a clean file.
    actions: list = field(default_factory=list)
    #: Byte offset reading started at (non-zero: only the part after the last boundary).
    start: int = 0
    size: int = 0


def load_session(
    path: Path | str,
    *,
    max_bytes: int = MAX_TRANSCRIPT_READ_BYTES,
    from_last_boundary: bool = False,
    repair: bool = True,
    session_id: str | None = None,
) -> Loaded:
    from ..repair.core import RepairOptions, repaired_entries
    from .writer import iso_now

    path = Path(path)
    t = load(path, max_bytes=max_bytes, from_last_boundary=from_last_boundary)
    if repair:
        from .siblings import found_elsewhere

        entries, actions = repaired_entries(
            t.lines,
            RepairOptions(partial_load=t.start > 0),
            now=iso_now(),
            new_id=lambda: str(_uuid.uuid4()),
            elsewhere=lambda keys: found_elsewhere(path, keys),
        )
    else:
        entries, actions = t.entries, []
    return Loaded(Session.from_entries(entries, path, session_id), list(actions), t.start, t.size)
