"""The nodes a resume sends, in order: the active chain as Claude Code rebuilds it.

Starting from `ChainIndex.active_chain` (leaf back to the last root), two corrections
make it the conversation Claude Code actually sends (docs/format.md §11, §3.2.1; the Agent
SDK's ``_recover_orphaned_parallel_tool_results``):

1. *Preserved segment* (2.1.x compaction): a compact boundary may name
   ``compactMetadata.preservedSegment{headUuid, anchorUuid, tailUuid}``. Those messages
   stay before the boundary in the file, with their old parents; on resume they are
   spliced in after the anchor (the summary): boundary → anchor → head…tail → the rest.
2. *Parallel tool calls*: one response with N tool calls is N assistant lines sharing a
   ``message.id``; each tool result's parent is its own call's line, so the file forks
   and the parentUuid walk keeps only one branch. The response's other lines and their
   results are put back right after the response's last line on the chain.

Works on `NodeFacts` (small per-node summaries), so the streaming validator can use it
without holding records, and the in-memory conversation builder uses the same code.

Invariants: every node appears at most once; a tool result never precedes its call's
line when both are present. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from .api_rules import (
    ALL_GONE,
    BAD_TOOL_ID,
    BLANK_TEXT,
    EMPTY_ERROR_RESULT,
    IMAGES_SHIFT,
    LONG_TOOL_NAME,
    MAX_TOOL_NAME,
    NUL_CHAR,
    NUL_IN_INPUT,
    _image_bad,
    _result_bad,
    content_problems,
    nul_in,
    thinking_bad,
    tool_id_ok,
)
from .chain import ASSISTANT, BOUNDARY, USER, ChainIndex
from .lines import json_size

#: The API's limit for one image (base64 data decoded), Messages API docs.
MAX_IMAGE_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class NodeFacts:
    """What the ordering and the API checks need to know of one conversation entry."""

    message_id: str | None = None
    tool_uses: tuple[str, ...] = ()
    tool_results: tuple[str, ...] = ()
    preserved: tuple[str | None, str | None, str | None] | None = None  # head, anchor, tail
    empty: bool = False
    plain: bool = False  # content other than tool_result blocks (a string, text, images)
    big_images: int = 0
    size: int = 0  # bytes of the API message (for user/assistant), else of the line
    bad: int = 0  # `api_rules` bits: block-level rules of the API the content breaks


def _fast_constructor() -> Callable[..., NodeFacts]:
    """`NodeFacts(...)` with every field given positionally, at a fifth of the cost.

    The frozen dataclass's ``__init__`` goes through ``object.__setattr__`` by name for
    each field (~2 us); `facts_of` runs once per message of files of any size. So the
    object is built as a twin class with the same slots and a plain ``__init__`` (slot
    stores, ~0.4 us), which then gives it its real class: CPython allows the ``__class__``
    assignment because the two layouts are the same slots. The result is an ordinary,
    equal, frozen `NodeFacts` (tests/model/test_active_facts.py)."""
    cls = NodeFacts
    names = (
        "message_id",
        "tool_uses",
        "tool_results",
        "preserved",
        "empty",
        "plain",
        "big_images",
        "size",
        "bad",
    )
    assert tuple(f for f in cls.__dataclass_fields__) == names
    assert cls.__slots__ == names

    class _Twin:
        __slots__ = names

        def __init__(
            self,
            message_id: str | None,
            tool_uses: tuple[str, ...],
            tool_results: tuple[str, ...],
            preserved: tuple[str | None, str | None, str | None] | None,
            empty: bool,
            plain: bool,
            big_images: int,
            size: int,
            bad: int,
        ) -> None:
            self.message_id = message_id
            self.tool_uses = tool_uses
            self.tool_results = tool_results
            self.preserved = preserved
            self.empty = empty
            self.plain = plain
            self.big_images = big_images
            self.size = size
            self.bad = bad
            self.__class__ = cls  # type: ignore[assignment]

    return cast("Callable[..., NodeFacts]", _Twin)


_make_facts = _fast_constructor()


def facts_of(record: Mapping[str, Any], size: int) -> NodeFacts:
    """Extract `NodeFacts` from one record (any shape; never raises on odd values).

    Runs once per message of files of any size (validate, resume): for a message whose
    content is a string or a list, one pass over the blocks finds both the facts and the
    `api_rules.content_problems` bits (the two loops of `facts_of_plain`, fused: a third
    of the cost); anything else takes `facts_of_plain`."""
    t = record.get("type")
    msg = record.get("message")
    if (t != "user" and t != "assistant") or type(msg) is not dict:
        return facts_of_plain(record, size)
    content = msg.get("content")
    big = bad = 0
    if type(content) is str:
        # The common prompt: no blocks to walk.
        mid = msg.get("id") if t == "assistant" else None
        if size > 4096 and "toolUseResult" in record:
            size = json_size(msg, size)
        return _make_facts(
            mid if isinstance(mid, str) else None,
            (),
            (),
            None,
            content == "",
            True,
            0,
            size,
            NUL_CHAR if "\x00" in content else 0,
        )
    if type(content) is not list:
        return facts_of_plain(record, size)
    uses: list[str] = []
    results: list[str] = []
    empty = not content
    plain = False
    assistant = t == "assistant"
    images = kept = 0
    for b in content:
        if type(b) is not dict:
            if isinstance(b, dict):
                return facts_of_plain(record, size)
            continue
        bt = b.get("type")
        if bt == "tool_result":
            i = b.get("tool_use_id")
            if isinstance(i, str):
                results.append(i)
            if type(i) is not str or not tool_id_ok(i):
                bad |= BAD_TOOL_ID
            inner = b.get("content")
            if not inner and b.get("is_error") is True:
                bad |= EMPTY_ERROR_RESULT
            elif type(inner) is str:
                if "\x00" in inner:
                    bad |= NUL_CHAR
            else:
                if isinstance(inner, list):
                    for x in inner:
                        if isinstance(x, dict) and x.get("type") == "image":
                            big += _big_image(x)
                r = _result_bad(b)
                bad |= r & 0xFFFF
                images += r >> IMAGES_SHIFT
            kept += 1
            continue
        plain = True
        if bt == "tool_use":
            i = b.get("id")
            if isinstance(i, str):
                uses.append(i)
            if type(i) is not str or not tool_id_ok(i):
                bad |= BAD_TOOL_ID
            n = b.get("name")
            if type(n) is str and len(n) > MAX_TOOL_NAME:
                bad |= LONG_TOOL_NAME
            inp = b.get("input")
            if inp and nul_in(inp):
                bad |= NUL_IN_INPUT
            kept += 1
        elif bt == "text":
            text = b.get("text")
            if type(text) is str and text and not text.isspace():
                if "\x00" in text:
                    bad |= NUL_CHAR
                kept += 1
            else:
                if text == "" and len(content) == 1:
                    empty = True
                if not assistant:
                    bad |= BLANK_TEXT
        elif bt == "thinking":
            r = thinking_bad(b)
            bad |= r
            kept += not r
        elif bt == "image":
            big += _big_image(b)
            bad |= _image_bad(b)
            images += 1
            kept += 1
        else:
            kept += 1
    if bad and not kept:
        bad |= ALL_GONE
    if images:
        bad |= min(images, 255) << IMAGES_SHIFT
    mid = msg.get("id") if assistant else None
    if size > 4096 and "toolUseResult" in record:
        size = json_size(msg, size)  # the message, not the line (`facts_of_plain`)
    return _make_facts(
        mid if isinstance(mid, str) else None,
        tuple(uses) if uses else (),
        tuple(results) if results else (),
        None,
        empty,
        plain,
        big,
        size,
        bad,
    )


def facts_of_plain(record: Mapping[str, Any], size: int) -> NodeFacts:
    """`facts_of`, written plainly: the facts loop, then `api_rules.content_problems`.

    The statement of what `facts_of` computes (and its path for odd shapes: content
    neither a string nor a list, dict subclasses); `facts_of` fuses the two loops for the
    common shapes and must give an equal `NodeFacts` for every record
    (tests/model/test_active_facts.py)."""
    t = record.get("type")
    if t == "system":
        md = record.get("compactMetadata")
        if isinstance(md, dict):
            seg = md.get("preservedSegment")
            if isinstance(seg, dict):
                return NodeFacts(
                    preserved=(_s(seg.get("headUuid")), _s(seg.get("anchorUuid")), _s(seg.get("tailUuid"))),
                    size=size,
                )
        return NodeFacts(size=size)
    msg = record.get("message")
    if t not in ("user", "assistant") or not isinstance(msg, dict):
        return NodeFacts(size=size)
    content = msg.get("content")
    uses: list[str] = []
    results: list[str] = []
    big = 0
    empty = content == "" or content == [] or content is None
    plain = isinstance(content, str)
    if isinstance(content, list):
        for b in content:
            if not isinstance(b, dict):
                continue
            bt = b.get("type")
            if bt != "tool_result":
                plain = True
            if bt == "tool_use" or bt == "server_tool_use":
                i = b.get("id")
                if isinstance(i, str) and bt == "tool_use":
                    uses.append(i)
            elif bt == "tool_result":
                i = b.get("tool_use_id")
                if isinstance(i, str):
                    results.append(i)
                inner = b.get("content")
                if isinstance(inner, list):
                    for x in inner:
                        if isinstance(x, dict) and x.get("type") == "image":
                            big += _big_image(x)
            elif bt == "image":
                big += _big_image(b)
            elif bt == "text" and b.get("text") == "" and len(content) == 1:
                empty = True
    mid = msg.get("id") if t == "assistant" else None
    # What the request carries is the message, not the line: toolUseResult and the
    # envelope stay home (they often double a Read's file contents). Measured only for
    # big lines with a toolUseResult; for the rest the line length is close enough.
    if size > 4096 and "toolUseResult" in record:
        size = json_size(msg, size)
    return _make_facts(
        mid if isinstance(mid, str) else None,
        tuple(uses),
        tuple(results),
        None,
        empty,
        plain,
        big,
        size,
        content_problems(content, t == "assistant") if content else 0,
    )


def _s(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _big_image(block: Any) -> int:
    if not isinstance(block, dict) or block.get("type") != "image":
        return 0
    src = block.get("source")
    if not isinstance(src, dict) or src.get("type") != "base64":
        return 0
    data = src.get("data")
    return int(isinstance(data, str) and len(data) * 3 // 4 > MAX_IMAGE_BYTES)


def conversation_nodes(
    index: ChainIndex, facts: Mapping[int, NodeFacts], chain: list[int] | None = None
) -> list[int]:
    """The active chain with preserved segments spliced in and parallel calls recovered."""
    nodes = index.active_chain() if chain is None else list(chain)
    nodes = _splice_preserved(index, facts, nodes)
    return _recover_parallel(index, facts, nodes)


def _splice_preserved(index: ChainIndex, facts: Mapping[int, NodeFacts], nodes: list[int]) -> list[int]:
    if not nodes or not index.flags[nodes[0]] & BOUNDARY:
        return nodes
    f = facts.get(nodes[0])
    if f is None or f.preserved is None:
        return nodes
    head, anchor, tail = f.preserved
    if head is None or tail is None:
        return nodes
    h, t = index.find(head), index.find(tail)
    a = index.find(anchor) if anchor is not None else None
    if h is None or t is None:
        return nodes
    segment: list[int] = []
    for i in index.walk_up(t):
        segment.append(i)
        if i == h:
            break
    else:
        return nodes  # head is not above tail: the metadata is stale; keep the plain chain
    segment.reverse()
    on = set(nodes)
    segment = [i for i in segment if i not in on]
    pos = nodes.index(a) + 1 if a is not None and a in on else 1
    return nodes[:pos] + segment + nodes[pos:]


def _recover_parallel(index: ChainIndex, facts: Mapping[int, NodeFacts], nodes: list[int]) -> list[int]:
    on = set(nodes)
    by_msg: dict[str, list[int]] = {}
    call_owner: dict[str, int] = {}  # tool_use id -> the assistant line that made the call
    result_nodes: list[int] = []
    # What lies before the chain's compact boundary is history: Claude Code 2.1.332 drops
    # it on load unless preserved. Copies written after a boundary (tt compact --in-place
    # keeps their message.id and tool ids) must not pull the originals back in.
    floor = nodes[0] if nodes and index.flags[nodes[0]] & BOUNDARY else 0
    f: NodeFacts | None  # the loops below look facts up, and may find none
    flags = index.flags
    owner_of = call_owner.setdefault
    # Once per message of the conversation (validate, resume): plain dict operations only.
    for i, f in facts.items():
        if i < floor and i not in on:
            continue
        fl = flags[i]
        if fl & ASSISTANT and f.message_id:
            group = by_msg.get(f.message_id)
            if group is None:
                by_msg[f.message_id] = [i]
            else:
                group.append(i)
            for u in f.tool_uses:
                owner_of(u, i)
        elif fl & USER and f.tool_results:
            result_nodes.append(i)
    # Nothing to recover when every line of a split response and every result is on the
    # chain already (the usual case: a long session pays only these checks).
    stray = [r for r in result_nodes if r not in on]
    needy = {m for m, v in by_msg.items() if len(v) > 1 and not on.issuperset(v)}
    if not stray and not needy:
        return nodes
    # A result belongs under its parent and under the line that made its call: the
    # second finds results whose parent is a progress line hanging off the call
    # (as the Agent SDK's _recover_orphaned_parallel_tool_results does). Only results off
    # the chain can be added, so only they are placed.
    results_by_owner: dict[int, list[int]] = {}
    parent = index.parent
    for r in stray:
        owners = [parent[r]]
        for t in facts[r].tool_results:
            o = call_owner.get(t)
            if o is not None and o not in owners:
                owners.append(o)
        for o in owners:
            if o >= 0:
                results_by_owner.setdefault(o, []).append(r)
                f = facts.get(o)
                if f is not None and f.message_id:
                    needy.add(f.message_id)  # a response with a result to gain
    answered: set[str] = set()
    for f in map(facts.get, nodes):
        if f is not None and f.tool_results:
            answered.update(f.tool_results)
    position = dict(zip(nodes, range(len(nodes)), strict=True))
    inserts: dict[int, list[int]] = {}
    done: set[str] = set()
    # The chain's assistant lines of a needy response are exactly its by_msg members on
    # the chain (a node on the chain is never left out of by_msg): look them up by node,
    # and visit them in chain order (a few thousand, where the chain has tens of thousands).
    needy_of = {g: m for m in needy for g in by_msg.get(m, ())}
    for _, i in sorted((position[g], g) for g in needy_of if g in position):
        m = needy_of[i]
        if m in done:
            continue
        done.add(m)
        group = sorted(by_msg.get(m, [i]))
        members = set(group)
        anchor = max((g for g in group if g in position), key=position.__getitem__, default=i)
        extra = [g for g in group if g not in on]
        results: list[int] = []
        for g in group:
            for r in results_by_owner.get(g, ()):
                if r in on or r in results:
                    continue
                # A result hung elsewhere (a stray) comes back only to answer a call
                # the chain left unanswered.
                if index.parent[r] in members or any(t not in answered for t in facts[r].tool_results):
                    results.append(r)
        if extra or results:
            # Keep each call before its result: file order within the response.
            add = sorted(set(extra) | set(results))
            inserts[anchor] = add
            on.update(add)
            for r in results:
                answered.update(facts[r].tool_results)
    if not inserts:
        return nodes
    # Each anchor's additions right after it: the chain copied in slices between anchors
    # (a few thousand inserts in a chain of tens of thousands of nodes).
    out: list[int] = []
    prev = 0
    for anchor in sorted(inserts, key=position.__getitem__):
        cut = position[anchor] + 1
        out += nodes[prev:cut]
        out += inserts[anchor]
        prev = cut
    out += nodes[prev:]
    return out
