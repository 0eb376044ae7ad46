"""skeleton: the outline compaction plans on agrees with the in-memory `Session` on every
real fixture, addresses each record's exact bytes, and keeps copies written after a
compact boundary apart from their originals."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.damage import KINDS
from tests.support.paths import REAL
from transcript_tools.compact.skeleton import ANSWERS, CALLS, PROGRESS, Skeleton, message_hash
from transcript_tools.edge.reader import iter_lines, load
from transcript_tools.model.session import Session

CLEAN_332 = (
    REAL
    / "claude-config-2.1.332"
    / "projects"
    / "-home-dev-demo-app"
    / "4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
)
FILES = sorted(
    p for p in REAL.rglob("*.jsonl") if "subagents" not in p.parts and not p.name.startswith("agent-")
)


def outline(path: Path) -> Skeleton:
    sk = Skeleton()
    for ln in iter_lines(path):
        sk.feed_line(ln)
    sk.finish()
    return sk


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_conversation_matches_the_in_memory_session(path: Path) -> None:
    sk = outline(path)
    s = Session.from_entries(load(path).entries, path)
    assert len(sk) == len(s.nodes)
    assert [sk.index.uuid(i) for i in sk.conversation()] == [e.uuid for e in s.conversation()]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_offsets_address_each_record_exactly(path: Path) -> None:
    sk = outline(path)
    data = path.read_bytes()
    s = Session.from_entries(load(path).entries, path)
    for i, e in enumerate(s.nodes):
        assert data[sk.offset[i] : sk.offset[i] + sk.length[i]] == e.raw
        assert sk.index.line[i] == e.line


def test_node_kinds_and_message_hashes() -> None:
    sk = outline(CLEAN_332)
    s = Session.from_entries(load(CLEAN_332).entries, CLEAN_332)
    for i, e in enumerate(s.nodes):
        content = e.content if isinstance(e.content, list) else []
        types = {b.get("type") for b in content if isinstance(b, dict)}
        assert bool(sk.kind[i] & CALLS) == ("tool_use" in types)
        assert bool(sk.kind[i] & ANSWERS) == ("tool_result" in types)
        assert bool(sk.kind[i] & PROGRESS) == (e.type == "progress")
        if e.type == "assistant" and e.message_id:
            assert sk.msg[i] == message_hash(e.message_id)
        else:
            assert sk.msg[i] == 0
    assert sk.first_prompt is not None
    first = s.nodes[sk.first_prompt]
    assert first.content == "Project kickoff 13000: we work on app.py"
    # Metadata records: the last of each kind.
    assert set(sk.metadata) >= {"mode"}
    assert sk.session_id == "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"


def test_damage_is_noted_and_skipped(tmp_path: Path) -> None:
    for kind in ("fused-records", "nul-run", "torn-tail", "garbage"):
        d = KINDS[kind](CLEAN_332.read_bytes())
        p = tmp_path / f"{kind}.jsonl"
        p.write_bytes(d.data)
        sk = outline(p)
        assert sk.damage_count >= 1 and sk.damage[0].code in (
            kind,
            "truncated-record",
            "fused-records",
            "torn-tail",
        )
        assert sk.damage_bytes > 0
        assert sk.conversation()  # what survives still outlines


def test_copies_after_a_boundary_are_not_siblings_of_their_originals(tmp_path: Path) -> None:
    """A message copied after a compact boundary (tt compact --in-place) keeps its
    message.id; the originals before the boundary must not come back as parallel calls."""
    import uuid

    import orjson

    s = Session.from_entries(load(CLEAN_332).entries, CLEAN_332)
    msgs = s.messages()
    tail = msgs[-4:]
    b = str(uuid.uuid4())
    sm = str(uuid.uuid4())
    lines = [
        {
            "parentUuid": None,
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": b,
            "compactMetadata": {"trigger": "manual", "preTokens": 1},
        },
        {
            "parentUuid": b,
            "type": "user",
            "isCompactSummary": True,
            "uuid": sm,
            "message": {"role": "user", "content": "summary"},
        },
    ]
    parent = sm
    for e in tail:
        r = dict(e.record)
        r["uuid"] = str(uuid.uuid4())
        r["parentUuid"] = parent
        parent = r["uuid"]
        lines.append(r)
    p = tmp_path / "x.jsonl"
    p.write_bytes(CLEAN_332.read_bytes() + b"".join(orjson.dumps(r) + b"\n" for r in lines))
    sk = outline(p)
    conv = sk.conversation()
    assert [sk.index.uuid(i) for i in conv] == [r["uuid"] for r in lines]


def test_parallel_results_hung_off_progress_lines_are_recovered_as_in_memory(tmp_path: Path) -> None:
    """A result whose parent is a progress line under its call (2.1.1x) is found through
    its tool id, as the in-memory session finds it."""
    import orjson

    def line(uuid: str, parent: str | None, **rec: object) -> dict[str, object]:
        return {"uuid": uuid, "parentUuid": parent, "sessionId": "s", **rec}

    def call(tid: str) -> dict[str, object]:
        return {
            "role": "assistant",
            "id": "msg_1",
            "content": [{"type": "tool_use", "id": tid, "name": "Bash", "input": {}}],
        }

    def res(tid: str) -> dict[str, object]:
        return {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": tid, "content": "ok"}],
        }

    records = [
        line("u0", None, type="user", message={"role": "user", "content": "go"}),
        line("a1", "u0", type="assistant", message=call("X")),
        line("p1", "a1", type="progress", data={"type": "bash_progress"}),
        line("rx", "p1", type="user", message=res("X")),
        line("a2", "a1", type="assistant", message=call("Y")),
        line("ry", "a2", type="user", message=res("Y")),
        line(
            "t",
            "ry",
            type="assistant",
            message={"role": "assistant", "id": "msg_2", "content": [{"type": "text", "text": "done"}]},
        ),
    ]
    p = tmp_path / "p.jsonl"
    p.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    sk = outline(p)
    s = Session.from_entries(load(p).entries, p)
    got = [sk.index.uuid(i) for i in sk.conversation()]
    assert got == [e.uuid for e in s.conversation()]
    assert "rx" in got and got.index("rx") > got.index("a1")
