"""The outline of a transcript that compaction plans on: its uuid graph and a few bytes a node.

`Skeleton` is fed a transcript's records in file order, once, and keeps per conversation
entry only what the compaction planner needs to pick what to summarise and what to keep
before it has read any content: the `ChainIndex`, where the record's bytes are (offset
and length, so the few records the plan needs can be read back by position), a 64-bit
hash of the assistant ``message.id`` (split lines of one response share it, docs/format.md
§3.2.1), one of its tool id, and a byte of flags (calls tools, answers tools, is a
``progress`` line). Records themselves are never kept, so a file of any size outlines in
memory proportional to its number of entries (about 180 bytes each).

It also keeps the small things the output needs: the first human request (a key node
that compaction always keeps), the last metadata record of each kind that names the
session in the picker (``custom-title``, ``ai-title``, ``tag``, ...), and what was skipped
as damage (pieces of lines that are not records; docs/format.md §10).

`conversation()` is the order a resume sends (`active.conversation_nodes`: the active
chain, preserved segments spliced in, parallel tool calls recovered), computed from the
outline alone. Only entries from the conversation's root on take part in the recovery of
parallel calls (plus a preserved segment): what lies before a compact boundary is
history, as Claude Code 2.1.332 drops it on load, so copies of a message written after a
boundary (``tt compact --in-place``) are not mistaken for siblings of the originals.

Invariants:
- Node ``i`` of ``index`` is the ``i``-th entry accepted (the first occurrence of a uuid);
  ``offset[i]``/``length[i]`` address exactly its ``Entry.raw`` in the file.
- Pure: no I/O (the caller feeds lines or entries).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model.active import NodeFacts, conversation_nodes
from ..model.chain import BOUNDARY, CHAIN_TYPES, ChainIndex, node_flags
from ..model.lines import DecodedLine, Entry
from .digest import prompt_text

# Per-node kind bits.
CALLS = 1  # holds tool_use blocks
ANSWERS = 2  # holds tool_result blocks
PROGRESS = 8  # a progress line: never copied (the Agent SDK's fork drops them too)
LENIENT = 16  # decoded leniently (invalid UTF-8, lone surrogates)

#: Metadata records that name or label a session; the last of each kind wins
#: (docs/format.md §3.6, §9: the picker reads them last-wins from the tail).
METADATA_TYPES = (
    "custom-title",
    "ai-title",
    "tag",
    "agent-name",
    "mode",
    "permission-mode",
    "worktree-state",
    "pr-link",
)

MAX_DAMAGE_NOTED = 50


def message_hash(mid: str) -> int:
    """A non-zero 64-bit key for a message id (equal ids, equal keys, within a process)."""
    return hash(mid) or 1


@dataclass(frozen=True, slots=True)
class Damage:
    line: int
    offset: int
    length: int
    code: str


@dataclass(slots=True)
class Skeleton:
    index: ChainIndex = field(default_factory=ChainIndex)
    offset: array[int] = field(default_factory=lambda: array("q"))
    length: array[int] = field(default_factory=lambda: array("q"))
    msg: array[int] = field(default_factory=lambda: array("q"))
    kind: bytearray = field(default_factory=bytearray)
    #: per node: a hash of its (first) tool_use id, or of the tool_use id its (first)
    #: tool_result answers; 0 for none. Nodes with several: all of them in ``more_tools``.
    tool: array[int] = field(default_factory=lambda: array("q"))
    more_tools: dict[int, tuple[int, ...]] = field(default_factory=dict)
    preserved: dict[int, tuple[str | None, str | None, str | None]] = field(default_factory=dict)
    first_prompt: int | None = None
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    session_id: str | None = None
    lines: int = 0
    entries: int = 0
    damage: list[Damage] = field(default_factory=list)
    damage_count: int = 0
    damage_bytes: int = 0
    lenient: int = 0
    ends_without_newline: bool = False

    # --- feeding ----------------------------------------------------------------

    def feed_line(self, ln: DecodedLine) -> None:
        self.lines += 1
        for p in ln.pieces:
            if p.code == "blank-line":
                continue
            self.damage_count += 1
            self.damage_bytes += p.end - p.start
            if len(self.damage) < MAX_DAMAGE_NOTED:
                self.damage.append(Damage(ln.line, ln.offset + p.start, p.end - p.start, p.code))
        for e in ln.entries:
            self.feed(e)
        self.ends_without_newline = ln.terminator == b""

    def feed(self, e: Entry) -> int:
        """Add one record; returns its node index, or -1 when it is not a new node."""
        self.entries += 1
        rec = e.record
        t = rec.get("type")
        if e.lenient:
            self.lenient += 1
        if t in METADATA_TYPES:
            self.metadata[t] = rec
            return -1
        uuid = rec.get("uuid")
        if t not in CHAIN_TYPES or not isinstance(uuid, str):
            return -1
        if self.session_id is None and rec.get("isSidechain") is not True:
            sid = rec.get("sessionId")
            if isinstance(sid, str):
                self.session_id = sid
        flags = node_flags(rec)
        parent = rec.get("parentUuid")
        logical = rec.get("logicalParentUuid") if flags & BOUNDARY else None
        i = self.index.add(
            uuid,
            parent if isinstance(parent, str) else None,
            e.line,
            flags,
            logical if isinstance(logical, str) else None,
        )
        if i < 0:
            return -1
        self.offset.append(e.offset)
        self.length.append(len(e.raw))
        k = LENIENT if e.lenient else 0
        m = 0
        tools: list[int] = []
        if t == "progress":
            k |= PROGRESS
        elif t == "system":
            if flags & BOUNDARY:
                seg = _preserved(rec)
                if seg is not None:
                    self.preserved[i] = seg
        elif t in ("user", "assistant"):
            msg = rec.get("message")
            if isinstance(msg, dict):
                content = msg.get("content")
                if isinstance(content, list):
                    for b in content:
                        if isinstance(b, dict):
                            bt = b.get("type")
                            if bt == "tool_use":
                                k |= CALLS
                                tid = b.get("id")
                                if isinstance(tid, str):
                                    tools.append(message_hash(tid))
                            elif bt == "tool_result":
                                k |= ANSWERS
                                tid = b.get("tool_use_id")
                                if isinstance(tid, str):
                                    tools.append(message_hash(tid))
                if t == "assistant":
                    mid = msg.get("id")
                    if isinstance(mid, str):
                        m = message_hash(mid)
                elif self.first_prompt is None and not k & ANSWERS and rec.get("isSidechain") is not True:
                    if prompt_text(rec) is not None:
                        self.first_prompt = i
        self.msg.append(m)
        self.kind.append(k)
        self.tool.append(tools[0] if tools else 0)
        if len(tools) > 1:
            self.more_tools[i] = tuple(tools)
        return i

    def tool_ids(self, i: int) -> tuple[str, ...]:
        """The node's tool ids as comparable keys (hashes; equal ids, equal keys)."""
        more = self.more_tools.get(i)
        if more is not None:
            return tuple(map(str, more))
        t = self.tool[i]
        return (str(t),) if t else ()

    def finish(self) -> None:
        self.index.finish()

    def __len__(self) -> int:
        return len(self.offset)

    # --- the conversation -------------------------------------------------------

    def conversation(self) -> list[int]:
        """Node indexes in the order a resume sends them (module docstring)."""
        chain = self.index.active_chain()
        if not chain:
            return []
        return conversation_nodes(self.index, _Facts(self, chain), chain)

    def mark_history(self, root: int, mask: bytearray, value: int = 2) -> None:
        """Set ``mask[i] = value`` (where still 0) for the main chains behind the compact
        boundaries ``root`` starts from, following ``logicalParentUuid`` back (docs/format.md
        §4): the session's history before its compactions."""
        index = self.index
        roots = {root}
        while index.flags[root] & BOUNDARY:
            lp = index.logical.get(root)
            j = index.find(lp) if lp is not None else None
            if j is None:
                return
            for i in index.walk_up(j):
                if not mask[i]:
                    mask[i] = value
                root = i
            if root in roots:
                return
            roots.add(root)


def _preserved(rec: Mapping[str, Any]) -> tuple[str | None, str | None, str | None] | None:
    md = rec.get("compactMetadata")
    if not isinstance(md, dict):
        return None
    seg = md.get("preservedSegment")
    if not isinstance(seg, dict):
        return None
    return (_s(seg.get("headUuid")), _s(seg.get("anchorUuid")), _s(seg.get("tailUuid")))


def _s(v: Any) -> str | None:
    return v if isinstance(v, str) else None


class _Facts(Mapping[int, NodeFacts]):
    """`NodeFacts` made on demand from the outline, for `active.conversation_nodes`.

    Only nodes from the chain's root on (and a preserved segment before it) carry the
    message id and tool-result facts the parallel-call recovery groups on (module
    docstring)."""

    _EMPTY = NodeFacts()
    _ANSWERS = ("?",)  # a tool_result block without a tool_use_id

    def __init__(self, sk: Skeleton, chain: list[int]) -> None:
        self._sk = sk
        root = chain[0]
        self._floor = root if sk.index.flags[root] & BOUNDARY else 0
        self._extra: set[int] = set()
        seg = sk.preserved.get(root)
        if seg is not None and seg[0] is not None and seg[2] is not None:
            head, tail = sk.index.find(seg[0]), sk.index.find(seg[2])
            if head is not None and tail is not None:
                for i in sk.index.walk_up(tail):
                    self._extra.add(i)
                    if i == head:
                        break

    def __getitem__(self, i: int) -> NodeFacts:
        sk = self._sk
        if not 0 <= i < len(sk.offset):
            raise KeyError(i)
        seg = sk.preserved.get(i)
        if seg is not None:
            return NodeFacts(preserved=seg)
        if i < self._floor and i not in self._extra:
            return self._EMPTY
        m = sk.msg[i]
        k = sk.kind[i]
        if not m and not k & ANSWERS:
            return self._EMPTY
        ids = sk.tool_ids(i)
        return NodeFacts(
            message_id=str(m) if m else None,
            tool_uses=ids if k & CALLS else (),
            tool_results=(ids or self._ANSWERS) if k & ANSWERS else (),
        )

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self._sk.offset)))

    def items(self) -> Iterator[tuple[int, NodeFacts]]:  # type: ignore[override]
        """Only the nodes whose facts say something (the recovery skips the rest)."""
        sk = self._sk
        msg, kind = sk.msg, sk.kind
        for i in range(self._floor, len(sk.offset)):
            if msg[i] or kind[i] & ANSWERS or i in sk.preserved:
                yield i, self[i]
        for i in sorted(self._extra):
            if i < self._floor and (msg[i] or kind[i] & ANSWERS):
                yield i, self[i]

    def __len__(self) -> int:
        return len(self._sk.offset)
