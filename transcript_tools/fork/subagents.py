"""Forking a session's subagent transcripts along with it.

Claude Code 2.1.x writes each subagent to ``<session>/subagents/**/agent-<id>.jsonl`` with
an optional ``agent-<id>.meta.json`` sidecar (docs/format.md §6). A fork copies them under
its own ``<new id>/subagents/``, with the fork's uuid mapping (`fork.core.Remap`) and session
id, so the fork is whole. The Agent SDK's ``fork_session`` does not copy them; issue 7
asks for it.

Invariants: the same transform as the main file (`fork.core.fork_entry`: new uuids, parents
re-linked past progress lines, ``sessionId`` the fork's), except that the lines stay
sidechain lines and keep their timestamps; a sidecar that names no entry uuid is copied
byte for byte. Pure: no I/O (`fork.files` reads and writes the files).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from ..model.chain import SIDECHAIN
from ..model.lines import Entry
from ..model.session import Session
from ..model.wire import dumps_lenient
from .core import Fork, fork_entry, parent_in


def subagent_wanted(entries: Sequence[Entry], meta: Mapping[str, Any] | None, main: Session, f: Fork) -> bool:
    """Whether a subagent transcript belongs to the fork: always for a whole fork; at a
    cut, when the fork holds the tool call that launched it (``.meta.json``
    ``toolUseId``), else when it started before the cut."""
    if f.cut.asked is None:
        return True
    tool_use = meta.get("toolUseId") if meta else None
    if isinstance(tool_use, str):
        for u in f.kept:
            i = main.index.find(u)
            if i is not None and tool_use in main.facts[i].tool_uses:
                return True
        return False
    cut = main.node(f.cut.uuid) if f.cut.uuid else None
    end = cut.record.get("timestamp") if cut is not None else None
    first = next(
        (e.record.get("timestamp") for e in entries if isinstance(e.record.get("timestamp"), str)), None
    )
    return isinstance(end, str) and isinstance(first, str) and first <= end


def fork_subagent(entries: Iterable[Entry], f: Fork) -> tuple[bytes, ...]:
    """A subagent transcript of the fork: the same transform as the main file, with the
    fork's mapping and session id; the lines stay sidechain lines (``isSidechain``,
    ``agentId`` kept); timestamps are kept."""
    sub = Session.from_entries(entries)
    ix = sub.index
    is_progress = [e.type == "progress" for e in sub.nodes]
    kept = set(range(len(sub.nodes)))
    for e in sub.nodes:
        f.remap.new(e.record["uuid"])
    node_of = {id(e): i for i, e in enumerate(sub.nodes)}
    out: list[bytes] = []
    for e in sub.entries:
        i = node_of.get(id(e))
        if i is None or is_progress[i]:
            continue
        parent = parent_in(sub, i, kept, is_progress)
        rec = fork_entry(
            e.record,
            f.remap,
            session_id=f.session_id,
            source_session_id=f.source_session_id,
            parent=None if parent is None else f.remap.known(sub.nodes[parent].record["uuid"]),
            timestamp=e.record.get("timestamp"),
            sidechain=bool(ix.flags[i] & SIDECHAIN),
        )
        out.append(dumps_lenient(rec))
    return tuple(out)


def remap_meta(raw: bytes, f: Fork) -> bytes:
    """A subagent's ``.meta.json`` with any entry uuid it names remapped (byte-identical
    when it names none: today's sidecars hold agent and tool-use ids only)."""
    try:
        meta = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw
    changed = [False]

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            got = f.remap.known(v)
            if got is not None:
                changed[0] = True
                return got
            return v
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        return v

    out = walk(meta)
    return dumps_lenient(out) if changed[0] else raw
