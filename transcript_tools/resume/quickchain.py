"""The active conversation of a clean transcript in one cheap pass (the resume fast path).

`Session.conversation()` (a `chain.ChainIndex`, `active.NodeFacts` for every node, the
preserved-segment splice and parallel-call recovery of `active`) costs tens of
microseconds an entry; the in-memory repair before it, more. A resume of a large file
that needs no repair can skip both: `quick_conversation` computes the same entries in
the same order from the records alone, with dict and set operations, at a few
microseconds an entry — close to the cost of decoding the lines (the "orjson floor").

It answers None — "take the full path" — whenever the input is not one it can vouch
for: a uuid written twice, a ``parentUuid`` naming no entry (allowed only before the
first compact boundary of a partial read, where the history was cut on purpose), a
parent written after its child (the only way a ``parentUuid`` loop can form), a
sidechain entry on the main chain. The API-level checks (unpaired calls, orphan
results, a response torn apart, oversized images) are made on the rebuilt messages by
the caller (`resume.files`), which also falls back when one fires, so whatever
`repair` would change sends the file down the full path.

Semantics (each the same as the reference, which tests/model/test_conversation.py checks on
every real fixture and on generated sessions):
- nodes: ``user``/``assistant``/``system``/``progress``/``attachment`` records with a
  string ``uuid`` (`chain.CHAIN_TYPES`);
- active leaf (`chain.ChainIndex.active_leaf`): from each node nobody names as parent,
  the nearest user/assistant at or above it; prefer those neither sidechain nor
  ``isMeta``/``teamName``; the latest in file order;
- chain: the ``parentUuid`` walk from the leaf, root first;
- preserved segment and parallel tool calls: `active.conversation_nodes` itself, run on
  a light view of the graph (flags, parents, lookups) and `active.NodeFacts` built only
  for the nodes it reads (assistants with a message id, users with tool results, compact
  boundaries).

The entries may be streamed (a generator): only the nodes are kept, so the caller
never holds the records of the other lines (`resume.files` decodes a file line by line
into it).

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, cast

from ..model.active import NodeFacts, conversation_nodes, facts_of
from ..model.chain import (
    ASSISTANT,
    BOUNDARY,
    CHAIN_TYPES,
    COMMAND,
    LEAF_KINDS,
    META,
    SIDECHAIN,
    USER,
    ChainIndex,
)
from ..model.lines import Entry


@dataclass(frozen=True, slots=True)
class QuickChain:
    #: The conversation entries in order (what `Session.conversation` returns).
    chain: list[Entry]
    #: All nodes in file order and their parent index (-1: a root), for the leaf search.
    nodes: list[Entry]
    parent: list[int]
    session_id: str | None
    #: uuid -> node index.
    index: dict[str, int]


class _Facts:
    """The `active.NodeFacts` fields `active.conversation_nodes` reads, for a message node.

    A plain slotted class: a frozen dataclass costs ~2.5 us to build (``object.__setattr__``
    per field), a few percent of a 50 MB resume for nothing.
    """

    __slots__ = ("message_id", "preserved", "tool_results", "tool_uses")

    def __init__(
        self, message_id: str | None, tool_uses: tuple[str, ...], tool_results: tuple[str, ...]
    ) -> None:
        self.message_id = message_id
        self.tool_uses = tool_uses
        self.tool_results = tool_results
        self.preserved = None


class _View:
    """The part of `chain.ChainIndex` that `active.conversation_nodes` reads."""

    __slots__ = ("_index", "flags", "parent")

    def __init__(self, flags: bytearray, parent: list[int], index: dict[str, int]) -> None:
        self.flags = flags
        self.parent = parent
        self._index = index

    def find(self, uuid: str) -> int | None:
        return self._index.get(uuid)

    def walk_up(self, i: int) -> Iterator[int]:
        seen: set[int] = set()
        while i >= 0 and i not in seen:
            seen.add(i)
            yield i
            i = self.parent[i]


class Outside(Exception):
    """A partial read's entry after the boundary names a parent before the part (a
    rewind into the older history): the whole file must be read (`resume.files`)."""


def quick_conversation(entries: Iterable[Entry], *, partial: bool = False) -> QuickChain | None:
    """The conversation of ``entries`` (file order), or None when the full path must decide.

    ``partial``: the entries start at a compact boundary's preserved segment (a read from
    the last boundary on); parents before the first boundary may point outside them.
    ``entries`` is consumed once and may be a generator: only the nodes are kept, so a
    caller streaming the lines of a file never holds the records of the others.
    Raises `Outside` (partial reads only) when an entry after the boundary, not a
    sidechain one, names a parent outside the part.
    """
    index: dict[str, int] = {}
    nodes: list[Entry] = []
    parent: list[int] = []
    # Per node: USER/ASSISTANT/BOUNDARY for `active`, plus SIDECHAIN and META (isMeta or
    # teamName: not a candidate for the main leaf) for the leaf search.
    flags = bytearray()
    has_child = bytearray()
    facts: dict[int, NodeFacts | _Facts] = {}
    cut: set[str] = set()  # parents named before the first boundary of a partial read, not in it
    session_id: str | None = None
    seen_boundary = not partial
    get = index.get
    add = nodes.append
    add_parent = parent.append
    add_flags = flags.append
    add_child = has_child.append
    chain_types = CHAIN_TYPES
    # One pass, everything the leaf search and `active` need. A parent must already be
    # known: Claude Code writes parents first, and a parent written later is the only way
    # a parentUuid loop can form, so that goes to the full path. (Written for speed: this
    # loop runs once a line, 50,000 times on a 50 MB session.)
    for e in entries:
        rec = e.record
        if session_id is None:
            sid = rec.get("sessionId")
            if isinstance(sid, str) and rec.get("isSidechain") is not True:
                session_id = sid
        t = rec.get("type")
        if t not in chain_types:
            continue
        u = rec.get("uuid")
        if type(u) is not str:
            continue
        if u in index:
            return None
        i = len(nodes)
        p = rec.get("parentUuid")
        j = -1
        side = rec.get("isSidechain") is True
        if p is not None:
            if type(p) is not str:
                return None
            found = get(p)
            if found is None:
                if seen_boundary:
                    if partial and not side:
                        raise Outside(p)
                    return None
                cut.add(p)  # history cut on purpose before the boundary: a root here
            else:
                j = found
                has_child[j] = 1
        index[u] = i
        add(e)
        add_parent(j)
        add_child(0)
        f = SIDECHAIN if side else 0
        if t == "assistant":
            f |= ASSISTANT
            m = rec.get("message")
            if type(m) is dict:
                mid = m.get("id")
                if type(mid) is str and mid:
                    # The byte test first: a C search, and most lines make no call.
                    facts[i] = _Facts(mid, _ids(m, "tool_use", "id") if b'"tool_use"' in e.raw else (), ())
        elif t == "user":
            f |= USER
            if b'"tool_result"' in e.raw:
                results = _ids(rec.get("message"), "tool_result", "tool_use_id")
                if results:
                    facts[i] = _Facts(None, (), results)
        elif t == "system" and rec.get("subtype") == "compact_boundary":
            f |= BOUNDARY
            facts[i] = facts_of(rec, len(e.raw))
            seen_boundary = True
        elif t == "system" and rec.get("subtype") == "local_command":
            f |= COMMAND
        # As `chain.node_flags` marks it, on every kind a leaf may be (a meta slash-command
        # output is no main leaf either: review of round 8, 2,473 of 20,000 random trees
        # continued another branch than `ChainIndex.active_leaf`).
        if f & LEAF_KINDS and (rec.get("isMeta") is True or rec.get("teamName")):
            f |= META
        add_flags(f)
    if cut and not cut.isdisjoint(index):
        return None  # a parent written after its child, before the boundary
    leaf = _active_leaf(flags, parent, has_child)
    if leaf is None:
        return QuickChain([], nodes, parent, session_id, index)
    chain: list[int] = []
    i = leaf
    while i >= 0:
        chain.append(i)
        i = parent[i]
    chain.reverse()
    if not flags[leaf] & SIDECHAIN and any(flags[i] & SIDECHAIN for i in chain):
        return None
    # The preserved-segment splice and parallel-call recovery are `active`'s own code.
    ordered = conversation_nodes(
        cast(ChainIndex, _View(flags, parent, index)), cast("dict[int, NodeFacts]", facts), chain
    )
    return QuickChain([nodes[i] for i in ordered], nodes, parent, session_id, index)


def _ids(message: Any, kind: str, key: str) -> tuple[str, ...]:
    content = message.get("content") if type(message) is dict else None
    if type(content) is not list:
        return ()
    return tuple(
        b[key] for b in content if type(b) is dict and b.get("type") == kind and isinstance(b.get(key), str)
    )


def _active_leaf(flags: bytearray, parent: list[int], has_child: bytearray) -> int | None:
    best_main = -1
    best_any = -1
    msg = LEAF_KINDS
    for t in range(len(flags) - 1, -1, -1):
        if has_child[t]:
            continue
        i = t
        while i >= 0 and not flags[i] & msg:
            i = parent[i]
        if i < 0:
            continue
        if i > best_any:
            best_any = i
        if i > best_main and not flags[i] & (SIDECHAIN | META):
            best_main = i
    if best_main >= 0:
        return best_main
    return best_any if best_any >= 0 else None
