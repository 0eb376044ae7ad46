"""The disk side of `tt show`: a session, its subagents, and what reading them skipped.

The main file goes through `loader.load_session` (the capped read, then `repair`'s
fixes in memory, so a damaged file shows as its repaired copy would, without touching
it); what the repair did is kept (`Action`s name the lines skipped or changed).
Without ``full``, a file past the cap is read from its last compact boundary on (what a
resume reads). Subagent files are loaded the same way and linked to the calls that
spawned them (`subagents.link_subagents`), using their ``.meta.json`` sidecars.

Invariants: never writes; a subagent file that cannot be read is reported, not fatal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..catalog.files_scope import agent_files
from ..edge.loader import load_session
from ..edge.reader import MAX_TRANSCRIPT_READ_BYTES
from ..model.errors import NotFound, TranscriptTooLarge, Unreadable
from ..model.session import Session
from .subagents import Sub, link_subagents


@dataclass(slots=True)
class Shown:
    path: Path
    session: Session
    subagents: dict[str, Sub] = field(default_factory=dict)  # tool_use id -> transcript
    unlinked: list[tuple[str, Session]] = field(default_factory=list)
    #: (file, repair action) for every file read: what was skipped or fixed in memory.
    actions: list[tuple[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    start: int = 0  # non-zero: read from the last compact boundary on


def load_for_show(
    path: Path, *, max_bytes: int = MAX_TRANSCRIPT_READ_BYTES, full: bool = False, subagents: bool = True
) -> Shown:
    loaded = load_session(path, max_bytes=max_bytes, from_last_boundary=not full)
    shown = Shown(path, loaded.session, start=loaded.start)
    actions = loaded.actions
    if loaded.start:
        shown.notes.append(
            f"{path} is past the {max_bytes / 2**20:.1f} MiB cap: read from its last compaction on "
            f"(byte {loaded.start}; line numbers count from there)"
        )
        # Read from the boundary, its logicalParentUuid points before the read: not damage.
        actions = [a for a in actions if not (a.code == "dangling-logical-parent" and a.line == 1)]
    shown.actions.extend((str(path), a) for a in actions)
    if not subagents:
        return shown
    subs: list[tuple[str, Session, str | None]] = []
    for f in agent_files(path):
        try:
            got = load_session(f, max_bytes=max_bytes)
        except (TranscriptTooLarge, Unreadable, NotFound) as e:
            shown.notes.append(f"subagent {f.name} not shown: {e.message}")
            continue
        shown.actions.extend((str(f), a) for a in got.actions)
        subs.append((f.stem, got.session, _meta_tool_use(f)))
    shown.subagents, shown.unlinked = link_subagents(loaded.session, subs)
    return shown


def _meta_tool_use(transcript: Path) -> str | None:
    """``toolUseId`` from ``agent-<id>.meta.json`` beside a subagent file (2.1.x)."""
    meta = transcript.with_name(transcript.stem + ".meta.json")
    try:
        value = orjson.loads(meta.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None  # no sidecar (older versions) or a damaged one: link by other means
    tid = value.get("toolUseId") if isinstance(value, dict) else None
    return tid if isinstance(tid, str) else None
