"""`active.facts_of` (the fused hot path) against `active.facts_of_plain` (the facts loop
then `api_rules.content_problems`, as written before the fusion), and the fast
`NodeFacts` constructor and `api_rules.signature_cut` against their plain forms.

The validator computes facts for every message of files of any size: the fast forms
must give equal facts on every real record and on any content shape.
"""

from __future__ import annotations

import base64
import dataclasses
import re
from collections.abc import Mapping
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.paths import FIXTURES
from transcript_tools.model.active import NodeFacts, _make_facts, _recover_parallel, facts_of, facts_of_plain
from transcript_tools.model.api_rules import signature_cut
from transcript_tools.model.chain import ASSISTANT, BOUNDARY, USER, ChainIndex


def _records() -> list[tuple[str, int, dict[str, Any]]]:
    out = []
    for path in sorted(FIXTURES.rglob("*.jsonl")):
        for n, line in enumerate(path.read_bytes().split(b"\n"), 1):
            try:
                rec = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(rec, dict):
                out.append((str(path.relative_to(FIXTURES)), n, rec))
    return out


RECORDS = _records()


def test_fixtures_hold_every_block_type_the_fast_path_special_cases() -> None:
    seen = set()
    for _, _, rec in RECORDS:
        msg = rec.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        if isinstance(content, str):
            seen.add("str")
        elif isinstance(content, list):
            seen.update(b.get("type") for b in content if isinstance(b, dict))
    assert {"str", "text", "tool_use", "tool_result", "thinking", "image"} <= seen
    assert len(RECORDS) > 1000


def test_facts_of_equals_the_plain_form_on_every_fixture_record() -> None:
    differ = [
        (where, n)
        for where, n, rec in RECORDS
        for size in (100, 5000)
        if facts_of(rec, size) != facts_of_plain(rec, size)
    ]
    assert differ == []


# Values a JSON field can hold, biased to the ones the rules look at.
_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 3),
    st.sampled_from(["", " ", "\n\n", "x", "a\x00b", "\x00", "toolu_1", "x" * 201, "E" * 8]),
)
_value = st.recursive(
    _scalar,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "\x00k", "type"]), inner, max_size=3)
    ),
    max_leaves=6,
)
_PNG_BIG = "iVBORw0KGgoAAAANSUhEUgAAH0EAAAABCAYAAAA"  # 8001 x 1 PNG header
_image = st.fixed_dictionaries(
    {"type": st.just("image")},
    optional={
        "source": st.one_of(
            _value,
            st.fixed_dictionaries(
                {"type": st.sampled_from(["base64", "url"]), "data": st.sampled_from(["", _PNG_BIG, "AAAA"])}
            ),
        )
    },
)
_block = st.one_of(
    _image,
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(
                ["text", "tool_use", "tool_result", "thinking", "server_tool_use", "other"]
            )
        },
        optional={
            "text": _value,
            "id": _value,
            "name": _value,
            "input": _value,
            "tool_use_id": _value,
            "is_error": _value,
            "content": st.one_of(_value, st.lists(st.one_of(_image, _value), max_size=3)),
            "signature": st.one_of(_value, st.sampled_from(["EqQBCkgIARABGAIiQG", "CAISAQ==", "Eg=="])),
            "thinking": _value,
        },
    ),
    _value,
)


@settings(max_examples=400, deadline=None)
@given(
    t=st.sampled_from(["user", "assistant", "system"]),
    content=st.one_of(_value, st.lists(_block, max_size=4)),
    mid=_value,
    extra=st.booleans(),
    size=st.sampled_from([10, 5000]),
)
def test_facts_of_equals_the_plain_form_on_any_content(
    t: str, content: Any, mid: Any, extra: bool, size: int
) -> None:
    rec: dict[str, Any] = {"type": t, "message": {"role": t, "content": content, "id": mid}}
    if extra:
        rec["toolUseResult"] = {"stdout": "x"}
    assert facts_of(rec, size) == facts_of_plain(rec, size)


def _png(width: int, height: int) -> str:
    head = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + width.to_bytes(4, "big") + height.to_bytes(4, "big")
    return base64.b64encode(head + b"\x08\x06\x00\x00\x00").decode()


def _grid_blocks() -> list[Any]:
    """Every block shape the rules tell apart, field by field (a grid, not a sample: a
    random one rarely hits, say, an error result with empty content)."""
    sig = next(s for s in _signatures() if s.startswith("E"))
    images: list[Any] = [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": d}}
        for d in (_png(10, 10), _png(2500, 10), _png(9000, 10), "A" * 7_000_000, "")
    ]
    images += [{"type": "image"}, {"type": "image", "source": {"type": "url", "url": "u"}}]
    blocks: list[Any] = list(images)
    blocks += [{"type": "text", "text": t} for t in ("", " ", "x", "a\x00b", None, 5)] + [{"type": "text"}]
    for i in ("t1", None, 3):
        for name in ("Bash", "x" * 201, None):
            for inp in ({}, {"c": "a\x00"}, {"\x00": 1}, None, {"a": ["\x00"]}, {"a": 1}):
                blocks.append({"type": "tool_use", "id": i, "name": name, "input": inp})
    blocks.append({"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}})
    inners: list[Any] = ["", "x", "a\x00", [], None, {"a": 1}, 5]
    inners += [[{"type": "text", "text": t}] for t in ("a\x00", "ok", "")]
    inners += [[im] for im in images[:4]] + [[images[0], images[1]]]
    inners += [[{"type": "tool_reference", "tool_name": n}] for n in ("x" * 65, "Read")]
    for tid in ("t1", None):
        for err in (True, False, None, "missing"):
            for inner in inners:
                b: dict[str, Any] = {"type": "tool_result", "tool_use_id": tid, "content": inner}
                if err != "missing":
                    b["is_error"] = err
                blocks.append(b)
        blocks.append({"type": "tool_result", "tool_use_id": tid, "is_error": True})
    for sg in (None, "", sig, sig[:40], "other", "missing"):
        for th in ("", "t", None, "missing"):
            b = {"type": "thinking"}
            if sg != "missing":
                b["signature"] = sg
            if th != "missing":
                b["thinking"] = th
            blocks.append(b)
    blocks += [{"type": "redacted_thinking", "data": "x"}, {"type": "other"}, {}, "str", 5, None, []]
    return blocks


def test_facts_of_equals_the_plain_form_on_a_grid_of_block_shapes() -> None:
    blocks = _grid_blocks()
    partners: list[Any] = [{"type": "text", "text": ""}, {"type": "text", "text": "x"}, blocks[0]]
    contents: list[Any] = ["", "x", "a\x00", [], None, {"a": 1}, 5]
    contents += (
        [[b] for b in blocks]
        + [[b, p] for b in blocks for p in partners]
        + [[p, b] for b in blocks for p in partners]
    )
    n = 0
    for t in ("user", "assistant"):
        for content in contents:
            for extra in (False, True):
                rec: dict[str, Any] = {"type": t, "message": {"role": t, "id": "msg_1", "content": content}}
                if extra:
                    rec["toolUseResult"] = {"stdout": "x"}
                assert facts_of(rec, 5000) == facts_of_plain(rec, 5000), (
                    t,
                    content if len(repr(content)) < 300 else "big",
                )
                n += 1
    assert n > 3000


def test_facts_of_takes_the_plain_path_for_odd_shapes() -> None:
    class D(dict):  # type: ignore[type-arg]
        pass

    odd = [
        {"type": "user", "message": "not a dict"},
        {"type": "user", "message": {"content": {"a": 1}}},
        {"type": "user", "message": {"content": [D(type="text", text="")]}},
        {"type": "system", "compactMetadata": {"preservedSegment": {"headUuid": "h", "tailUuid": "t"}}},
        {"type": "progress"},
    ]
    for rec in odd:
        assert facts_of(rec, 7) == facts_of_plain(rec, 7)
    assert facts_of(odd[2], 7).empty  # the subclass block is read, as the plain form reads it


def test_the_fast_constructor_makes_ordinary_frozen_node_facts() -> None:
    f = _make_facts("m", ("a",), ("b",), None, False, True, 1, 99, 4)
    assert type(f) is NodeFacts
    assert f == NodeFacts(
        message_id="m", tool_uses=("a",), tool_results=("b",), plain=True, big_images=1, size=99, bad=4
    )
    assert hash(f) == hash(dataclasses.replace(f))
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.size = 1  # type: ignore[misc]


_B64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def _signature_cut_before(sig: str) -> bool:
    """`api_rules.signature_cut` as it was written before its character pass was dropped."""
    from transcript_tools.model.api_rules import _whole_protobuf

    raw = sig.encode("ascii", "replace")
    if raw[:1] not in (b"C", b"E") or not _B64.issuperset(raw[:4]):
        return False
    if len(raw) < 4:
        return True
    if raw[:4] not in (b"CAIS",) and raw[:1] == b"C":
        return False
    if len(raw) % 4 or not _B64.issuperset(raw):
        return True
    try:
        d = base64.b64decode(raw, validate=True)
    except ValueError:
        return True
    if not d or d[0] not in (0x08, 0x12):
        return False
    return not _whole_protobuf(d)


def _signatures() -> list[str]:
    found = set()
    for path in sorted(FIXTURES.rglob("*.jsonl")):
        found.update(re.findall(r'"signature":"([^"]+)"', path.read_text(encoding="utf-8", errors="replace")))
    return sorted(found)


def test_signature_cut_gives_the_verdict_of_its_plain_form() -> None:
    sigs = _signatures()
    assert len(sigs) > 20
    tried = 0
    for sig in sigs:
        variants = {sig[:k] for k in range(0, len(sig) + 1, 3)}
        for k in (4, len(sig) // 2, len(sig) - 2):
            for ch in ("-", "_", "=", "é", " ", "\x00", "A"):
                variants.add(sig[:k] + ch + sig[k + 1 :])
        for v in variants:
            tried += 1
            assert signature_cut(v) == _signature_cut_before(v), v
    assert tried > 1000


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ é\x00", max_size=24)
)
def test_signature_cut_gives_the_verdict_of_its_plain_form_on_any_text(tail: str) -> None:
    for sig in ("E" + tail, "CAIS" + tail, "C" + tail, tail):
        assert signature_cut(sig) == _signature_cut_before(sig)


# --- active._recover_parallel against its previous form --------------------------------
# (the form before its loops were tightened, kept here as the statement it must match)


def _recover_parallel_before(
    index: ChainIndex, facts: Mapping[int, NodeFacts], nodes: list[int]
) -> list[int]:
    on = set(nodes)
    by_msg: dict[str, list[int]] = {}
    call_owner: dict[str, int] = {}  # tool_use id -> the assistant line that made the call
    result_nodes: list[int] = []
    # What lies before the chain's compact boundary is history: Claude Code 2.1.332 drops
    # it on load unless preserved. Copies written after a boundary (tt compact --in-place
    # keeps their message.id and tool ids) must not pull the originals back in.
    floor = nodes[0] if nodes and index.flags[nodes[0]] & BOUNDARY else 0
    f: NodeFacts | None  # the loops below look facts up, and may find none
    for i, f in facts.items():
        if i < floor and i not in on:
            continue
        fl = index.flags[i]
        if fl & ASSISTANT and f.message_id:
            by_msg.setdefault(f.message_id, []).append(i)
            for u in f.tool_uses:
                call_owner.setdefault(u, i)
        elif fl & USER and f.tool_results:
            result_nodes.append(i)
    # Nothing to recover when every line of a split response and every result is on the
    # chain already (the usual case: a long session pays only these checks).
    stray = [r for r in result_nodes if r not in on]
    needy = {m for m, v in by_msg.items() if len(v) > 1 and any(g not in on for g in v)}
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
    answered = {t for i in nodes for t in (facts[i].tool_results if i in facts else ())}
    position = {n: k for k, n in enumerate(nodes)}
    inserts: dict[int, list[int]] = {}
    done: set[str] = set()
    for i in nodes:
        f = facts.get(i)
        if f is None or f.message_id not in needy or f.message_id in done or not index.flags[i] & ASSISTANT:
            continue
        done.add(f.message_id)
        group = sorted(by_msg.get(f.message_id, [i]))
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
    out: list[int] = []
    for i in nodes:
        out.append(i)
        out.extend(inserts.get(i, ()))
    return out


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_recover_parallel_gives_the_order_of_its_previous_form(data: st.DataObject) -> None:
    """Random forests of user/assistant/progress lines with split responses (shared
    message ids), tool calls and results hung under calls, progress lines or elsewhere,
    and boundaries: the same conversation order from every node taken as the leaf."""
    n = data.draw(st.integers(1, 30))
    ix = ChainIndex()
    facts: dict[int, NodeFacts] = {}
    for i in range(n):
        kind = data.draw(st.sampled_from(["user", "assistant", "assistant", "progress", "boundary"]))
        parent = data.draw(st.one_of(st.none(), st.integers(0, i - 1))) if i else None
        flags = {"user": USER, "assistant": ASSISTANT, "progress": 0, "boundary": BOUNDARY}[kind]
        if kind == "boundary":
            parent = None
        ix.add(f"n{i}", None if parent is None else f"n{parent}", i + 1, flags)
        ids = st.sampled_from(["t0", "t1", "t2", "t3"])
        if kind == "assistant":
            facts[i] = NodeFacts(
                message_id=data.draw(st.sampled_from([None, "m0", "m1", "m2"])),
                tool_uses=tuple(data.draw(st.lists(ids, max_size=2))),
            )
        elif kind == "user":
            facts[i] = NodeFacts(
                tool_results=tuple(data.draw(st.lists(ids, max_size=2))), plain=data.draw(st.booleans())
            )
        elif kind == "boundary":
            facts[i] = NodeFacts()
    ix.finish()
    for leaf in range(n):
        chain = list(ix.walk_up(leaf))[::-1]
        assert _recover_parallel(ix, facts, list(chain)) == _recover_parallel_before(ix, facts, list(chain))
