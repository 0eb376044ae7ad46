"""A transcript in memory with its chain: what show, fork, compact and resume work on.

`Session` ties the decoded entries of one file to a `ChainIndex` over them: node ``i``
of the index is ``session.nodes[i]``. It is built from entries (normally the output of
``repair.core.repaired_entries``, so damage is already dealt with) and is read-only.

Invariants:
- ``nodes[i]`` is the entry the index's node ``i`` came from; duplicates of a uuid are
  not nodes (the first occurrence owns the uuid).
- Built in one pass over entries already in memory (the caller enforced the cap).
- Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .active import NodeFacts, conversation_nodes, facts_of
from .chain import BOUNDARY, CHAIN_TYPES, ChainIndex, node_flags
from .ids import is_session_id
from .lines import Entry

if TYPE_CHECKING:
    from pathlib import Path


def session_id_from_name(name: str) -> str | None:
    """The session id a main transcript's file name implies (``<uuid>.jsonl``)."""
    stem = name[:-6] if name.endswith(".jsonl") else name
    return stem if is_session_id(stem) else None


def first_cwd(records: Iterable[Mapping[str, Any]]) -> str | None:
    """The session's working directory: the first non-empty ``cwd`` of a record that is
    not on a sidechain (whose lines are a subagent's)."""
    for r in records:
        c = r.get("cwd")
        if isinstance(c, str) and c and r.get("isSidechain") is not True:
            return c
    return None


@dataclass(slots=True)
class Session:
    path: Path | None
    entries: list[Entry]
    index: ChainIndex = field(default_factory=ChainIndex)
    nodes: list[Entry] = field(default_factory=list)
    facts: dict[int, NodeFacts] = field(default_factory=dict)
    session_id: str | None = None

    @classmethod
    def from_entries(
        cls, entries: Iterable[Entry], path: Path | None = None, session_id: str | None = None
    ) -> Session:
        s = cls(path, list(entries), session_id=session_id)
        for e in s.entries:
            rec = e.record
            if s.session_id is None and isinstance(rec.get("sessionId"), str) and not rec.get("isSidechain"):
                s.session_id = rec["sessionId"]
            uuid = rec.get("uuid")
            if rec.get("type") not in CHAIN_TYPES or not isinstance(uuid, str):
                continue
            parent = rec.get("parentUuid")
            flags = node_flags(rec)
            logical = rec.get("logicalParentUuid") if flags & BOUNDARY else None
            i = s.index.add(
                uuid,
                parent if isinstance(parent, str) else None,
                e.line,
                flags,
                logical if isinstance(logical, str) else None,
            )
            if i >= 0:
                s.nodes.append(e)
                s.facts[i] = facts_of(rec, len(e.raw))
        s.index.finish()
        return s

    def node(self, uuid: str) -> Entry | None:
        i = self.index.find(uuid)
        return None if i is None else self.nodes[i]

    def active_chain(self) -> list[Entry]:
        """The parentUuid walk from the active leaf, root first (no splicing)."""
        return [self.nodes[i] for i in self.index.active_chain()]

    def conversation(self) -> list[Entry]:
        """Every chain entry a resume sends, in order: preserved segments spliced in,
        parallel tool calls recovered (see `active`). Includes system, attachment and
        progress entries on the chain; filter by type for messages."""
        return [self.nodes[i] for i in conversation_nodes(self.index, self.facts)]

    def messages(self) -> list[Entry]:
        return [e for e in self.conversation() if e.type in ("user", "assistant")]

    def first_cwd(self) -> str | None:
        """The working directory the session started in (`first_cwd` of its entries)."""
        return first_cwd(e.record for e in self.entries)

    def last_boundary(self) -> Entry | None:
        b = self.index.boundaries()
        return self.nodes[b[-1]] if b else None
