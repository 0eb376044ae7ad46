"""`fork`: the new session's lines, checked against the Agent SDK's own fork, the real
fixtures, hand-built trees (rewinds, compaction, parallel calls) and random sessions
(hypothesis: fork keeps content with all-new ids)."""

from __future__ import annotations

import copy
import itertools
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.paths import REAL
from transcript_tools.edge.reader import load
from transcript_tools.fork.branch import message_units, resolve_at
from transcript_tools.fork.core import DROPPED_FIELDS, Fork, derive_title, fork
from transcript_tools.fork.subagents import fork_subagent, remap_meta, subagent_wanted
from transcript_tools.model.active import conversation_nodes
from transcript_tools.model.errors import NotFound, UsageError
from transcript_tools.model.lines import decode_line
from transcript_tools.model.session import Session
from transcript_tools.validate.files import validate_path

S332 = REAL / "claude-config-2.1.332/projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
S197 = REAL / "claude-config-2.1.197/projects/-home-dev-demo-app/8c2f9135-4610-4218-97b1-bc3e03643255.jsonl"
CLEAN_REAL = [
    S332,
    S197,
    REAL / "v1.0.51-inline-sidechains-two-compactions.jsonl",
    REAL / "v1.0.51-rejected-tool-interrupt.jsonl",
    REAL / "v1.0.71-summaries-sdk-ends-mid-tool.jsonl",
    REAL / "v2.0.76-compact-boundary-partial-copy.jsonl",
    REAL / "v2.1.14-microcompact-partial-copy.jsonl",
    REAL / "v2.1.17-agent-progress-ends-mid-tool.jsonl",
    REAL / "v2.1.237-attachments-chained-parallel-tools.jsonl",
    REAL / "v2.1.29-user-image-partial-copy.jsonl",
    REAL / "v2.1.38-tool-heavy.jsonl",
]
NOW = "2030-01-02T03:04:05.678Z"


def ids() -> Iterator[str]:
    for k in itertools.count():
        yield f"f0000000-0000-4000-8000-{k:012d}"


def new_id_fn() -> Any:
    it = ids()
    return lambda: next(it)


def session_of(path: Path) -> Session:
    return Session.from_entries(load(path).entries, path)


def records_to_session(records: list[dict[str, Any]]) -> Session:
    entries = [
        e
        for k, r in enumerate(records)
        for e in decode_line(k + 1, 0, json.dumps(r).encode(), b"\n", is_last=False).entries
    ]
    return Session.from_entries(entries)


def lines_to_session(lines: tuple[bytes, ...]) -> Session:
    return Session.from_entries(
        e for k, ln in enumerate(lines) for e in decode_line(k + 1, 0, ln, b"\n", is_last=False).entries
    )


def do_fork(s: Session, at: int | None = None, **kw: Any) -> Fork:
    return fork(s, source_session_id=s.session_id or "src", at=at, now=NOW, new_id=new_id_fn(), **kw)


def original_uuids(s: Session) -> set[str]:
    return {e.record["uuid"] for e in s.entries if isinstance(e.record.get("uuid"), str)}


def strings(v: Any, skip_forked_from: bool = True) -> Iterator[str]:
    if isinstance(v, str):
        yield v
    elif isinstance(v, list):
        for x in v:
            yield from strings(x, skip_forked_from)
    elif isinstance(v, dict):
        for k, x in v.items():
            if skip_forked_from and k == "forkedFrom":
                continue
            yield from strings(x, skip_forked_from)


def conversation_at(s: Session, node: int) -> list[str]:
    """The original's messages as a resume would send them were ``node`` the leaf."""
    chain = list(s.index.walk_up(node))
    chain.reverse()
    return [
        s.nodes[i].record["uuid"]
        for i in conversation_nodes(s.index, s.facts, chain)
        if s.nodes[i].type in ("user", "assistant")
    ]


def forked_messages(f: Fork) -> list[str]:
    return [e.record["forkedFrom"]["messageUuid"] for e in lines_to_session(f.lines).messages()]


# --- the whole session -------------------------------------------------------------


@pytest.mark.parametrize("path", CLEAN_REAL, ids=lambda p: p.name[:40])
def test_whole_fork_keeps_the_conversation_with_new_ids(path: Path) -> None:
    s = session_of(path)
    snapshot = copy.deepcopy([e.record for e in s.entries])
    f = do_fork(s)
    records = [json.loads(ln) for ln in f.lines]
    fs = lines_to_session(f.lines)
    # Same messages, same order, same content.
    assert [e.record["message"] for e in fs.messages()] == [e.record["message"] for e in s.messages()]
    assert not original_uuids(s) & set(itertools.chain.from_iterable(strings(r) for r in records))
    for r in records:
        assert r.get("sessionId", f.session_id) == f.session_id  # summary records have none
        if r["type"] in ("user", "assistant", "system", "attachment"):
            assert r["forkedFrom"]["sessionId"] == f.source_session_id
            assert r["isSidechain"] is False and not set(DROPPED_FIELDS) & set(r)
    assert not any(r["type"] == "progress" for r in records)
    assert records[-1] == {
        "type": "custom-title",
        "sessionId": f.session_id,
        "customTitle": f.title,
        "uuid": records[-1]["uuid"],
        "timestamp": NOW,
    }
    assert f.title.endswith(" (fork)")
    # Every copied entry keeps its time (issue 18.3): only the fork's title, new activity, is now.
    when = {e.record["uuid"]: e.record.get("timestamp") for e in s.nodes}
    copied = [r for r in records if "forkedFrom" in r]
    assert copied and all(
        r["timestamp"] == when[r["forkedFrom"]["messageUuid"]]
        for r in copied
        if when[r["forkedFrom"]["messageUuid"]]
    )
    assert f.cut.uuid == s.nodes[s.index.active_leaf()].record["uuid"]  # type: ignore[index]
    assert [e.record for e in s.entries] == snapshot  # the input is never changed


@pytest.mark.parametrize("path", [S332, S197], ids=["2.1.332", "2.1.197"])
def test_whole_fork_of_a_real_config_session_validates_clean(path: Path, tmp_path: Path) -> None:
    f = do_fork(session_of(path))
    out = tmp_path / f"{f.session_id}.jsonl"
    out.write_bytes(b"".join(f.chunks()))
    report = validate_path(out)
    assert report.errors == 0 and report.warnings == 0, [d.to_dict() for d in report.diagnostics]


def test_compact_metadata_ids_point_into_the_fork() -> None:
    f = do_fork(session_of(S332))
    records = [json.loads(ln) for ln in f.lines]
    by_uuid = {r["uuid"]: r for r in records if "uuid" in r}
    boundary = next(r for r in records if r.get("subtype") == "compact_boundary")
    seg = boundary["compactMetadata"]["preservedSegment"]
    kept = boundary["compactMetadata"]["preservedMessages"]
    for u in (
        seg["headUuid"],
        seg["anchorUuid"],
        seg["tailUuid"],
        kept["anchorUuid"],
        *kept["uuids"],
        *kept["allUuids"],
    ):
        assert u in by_uuid
    assert by_uuid[seg["anchorUuid"]]["isCompactSummary"] is True
    assert by_uuid[seg["headUuid"]]["forkedFrom"]["messageUuid"] == "ff44c48a-10bc-4e6a-8229-9e9c8bf05269"
    assert boundary["logicalParentUuid"] == seg["tailUuid"]
    # The resume of the fork splices the preserved answer after the summary, as the original's.
    fs = lines_to_session(f.lines)
    assert [e.record["message"] for e in fs.messages()][:2] == [
        e.record["message"] for e in session_of(S332).messages()
    ][:2]


def test_last_prompt_records_are_kept_remapped_and_file_history_is_not() -> None:
    s = session_of(S332)
    f = do_fork(s)
    records = [json.loads(ln) for ln in f.lines]
    kinds = {r["type"] for r in records}
    assert "last-prompt" in kinds
    assert not kinds & {
        "file-history-snapshot",
        "file-history-delta",
        "api-request",
        "queue-operation",
        "cost-state",
        "mode",
    }
    uuids = {r["uuid"] for r in records if "uuid" in r}
    for r in records:
        if r["type"] == "last-prompt":
            assert r["leafUuid"] in uuids and r["sessionId"] == f.session_id


# --- matching the Agent SDK's own fork ---------------------------------------------------


def _shape(records: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Records with uuids replaced by their position, so two forks compare."""
    pos = {r["uuid"]: k for k, r in enumerate(records) if "uuid" in r}
    out = []
    for r in records:
        rest = {
            k: v
            for k, v in r.items()
            if k
            not in ("uuid", "parentUuid", "logicalParentUuid", "sessionId", "timestamp", "compactMetadata")
        }
        out.append(
            (
                pos.get(r.get("parentUuid")),
                pos.get(r.get("logicalParentUuid")),
                json.dumps(rest, sort_keys=True),
                list(r),
            )
        )
    return out


@pytest.mark.parametrize(
    "path",
    [
        REAL / "v2.1.38-tool-heavy.jsonl",
        REAL / "v2.1.17-agent-progress-ends-mid-tool.jsonl",
        REAL / "v1.0.51-inline-sidechains-two-compactions.jsonl",
        S332,
    ],
    ids=lambda p: p.name[:30],
)
def test_entries_match_the_sdk_fork(path: Path) -> None:
    from claude_agent_sdk._internal.session_mutations import _build_fork_lines, _parse_fork_transcript

    s = session_of(path)
    sid = s.session_id or "src"
    transcript, repl = _parse_fork_transcript(path.read_bytes(), sid)
    _sdk_id, sdk_lines = _build_fork_lines(transcript, repl, sid, None, "T", lambda: None)
    ours = do_fork(s, title="T")
    theirs = [json.loads(ln) for ln in sdk_lines]
    mine = [json.loads(ln) for ln in ours.lines]
    # tt also keeps last-prompt/summary records (remapped); the SDK drops them.
    mine = [r for r in mine if r["type"] not in ("last-prompt", "summary")]
    assert len(mine) == len(theirs)
    for a, b in zip(_shape(mine[:-1]), _shape(theirs[:-1]), strict=True):
        assert a == b
    assert mine[-1]["customTitle"] == theirs[-1]["customTitle"] == "T"
    assert list(mine[-1]) == list(theirs[-1])


# --- forking at a message --------------------------------------------------------------


@pytest.mark.parametrize("path", CLEAN_REAL, ids=lambda p: p.name[:40])
def test_fork_at_every_message_sends_the_conversation_up_to_it(path: Path) -> None:
    s = session_of(path)
    for unit in message_units(s):
        for at in unit:
            f = do_fork(s, at=at)
            got = forked_messages(f)
            cut = s.index.find(f.cut.uuid)  # type: ignore[arg-type]
            assert cut is not None
            assert got == conversation_at(s, cut)
            assert f.cut.asked == s.nodes[at].record["uuid"]
            assert (f.cut.moved is None) == (f.cut.uuid == f.cut.asked) or (f.cut.moved or "").startswith(
                "back"
            )
            assert not original_uuids(s) & set(
                itertools.chain.from_iterable(strings(json.loads(ln)) for ln in f.lines)
            )


def test_cut_between_tool_use_and_result_moves_forward_and_says_so() -> None:
    s = session_of(S332)
    call = s.index.find("2119681b-b435-4aea-86ef-4ec8785e73a5")  # the Grep tool_use
    f = do_fork(s, at=call)
    assert f.cut.uuid == "7407daaa-ff9d-41c6-beef-f74e849fbcc6"  # its tool_result
    assert f.cut.moved and "tool call" in f.cut.moved
    assert forked_messages(f)[-2:] == [
        "2119681b-b435-4aea-86ef-4ec8785e73a5",
        "7407daaa-ff9d-41c6-beef-f74e849fbcc6",
    ]


def test_cut_at_a_call_without_result_moves_back() -> None:
    s = session_of(REAL / "v1.0.71-summaries-sdk-ends-mid-tool.jsonl")
    last = message_units(s)[-1][-1]
    f = do_fork(s, at=last)
    assert f.cut.moved and f.cut.moved.startswith("back")
    fs = lines_to_session(f.lines)
    uses = {
        b["id"]
        for e in fs.messages()
        for b in (e.content or [])
        if isinstance(b, dict) and b.get("type") == "tool_use"
    }
    results = {
        b["tool_use_id"]
        for e in fs.messages()
        for b in (e.content or [])
        if isinstance(b, dict) and b.get("type") == "tool_result"
    }
    assert uses <= results


def _msg(uid: str, parent: str | None, role: str, text: str, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": text}
    if role == "assistant":
        message = {
            "id": f"msg_{uid[-4:]}",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [{"type": "text", "text": text}],
        }
    return {
        "type": role,
        "uuid": uid,
        "parentUuid": parent,
        "isSidechain": False,
        "sessionId": "s0000000-0000-4000-8000-000000000000",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": message,
        **extra,
    }


def U(k: int) -> str:
    return f"a0000000-0000-4000-8000-{k:012d}"


def test_fork_at_a_message_on_a_dead_branch() -> None:
    # u1 → a1 → u2 → a2 (then rewound:) a1 → u3 → a3 (the active branch)
    recs = [
        _msg(U(1), None, "user", "first"),
        _msg(U(2), U(1), "assistant", "one"),
        _msg(U(3), U(2), "user", "wrong turn"),
        _msg(U(4), U(3), "assistant", "bad answer"),
        _msg(U(5), U(2), "user", "better turn"),
        _msg(U(6), U(5), "assistant", "good answer"),
    ]
    s = records_to_session(recs)
    assert s.nodes[s.index.active_leaf()].uuid == U(6)  # type: ignore[index]
    f = do_fork(s, at=resolve_at(s, U(4)))
    assert forked_messages(f) == [U(1), U(2), U(3), U(4)]
    assert f.cut.moved is None and f.entries == 4 + 1
    # The whole fork keeps the dead branch too (as the SDK's fork does), leaf unchanged.
    whole = do_fork(s)
    assert forked_messages(whole) == [U(1), U(2), U(5), U(6)] and whole.entries == 6 + 1


def test_fork_at_a_message_after_compaction_crosses_the_boundary() -> None:
    s = session_of(S332)
    at = s.index.find("886f247e-dc88-462d-96d6-d8a381728a8f")
    f = do_fork(s, at=at)
    fs = lines_to_session(f.lines)
    froms = [e.record["forkedFrom"]["messageUuid"] for e in fs.nodes]
    # The history before the boundary is kept (reached through logicalParentUuid) ...
    assert "f4c86b1a-e3df-4fec-a7e9-9410414aebef" in froms
    # ... and what a resume sends starts at the summary, as for the original.
    assert forked_messages(f)[0] == "ec92c508-6add-49a8-b824-678d43f18709"
    assert forked_messages(f)[-1] == "886f247e-dc88-462d-96d6-d8a381728a8f"


def test_resolve_at() -> None:
    s = session_of(S332)
    units = message_units(s)
    assert resolve_at(s, "1") == units[-1][-1]
    assert resolve_at(s, str(len(units))) == units[0][-1]
    assert resolve_at(s, "886f247e") == s.index.find("886f247e-dc88-462d-96d6-d8a381728a8f")
    assert resolve_at(s, "886F247E-DC88-462D-96D6-D8A381728A8F") == s.index.find(
        "886f247e-dc88-462d-96d6-d8a381728a8f"
    )
    for bad in ("0", "ab"):
        with pytest.raises(UsageError):
            resolve_at(s, bad)
    # A message the session does not have is not found (exit 3), by number or by uuid.
    for missing in (str(len(units) + 1), "ffffffff-0000"):
        with pytest.raises(NotFound):
            resolve_at(s, missing)


def test_resolve_at_refuses_sidechain_and_ambiguous_prefixes() -> None:
    recs = [
        _msg(U(1), None, "user", "hi"),
        _msg("a0000000-1111-4000-8000-000000000002", U(1), "assistant", "yo"),
        {**_msg("b0000000-0000-4000-8000-000000000003", None, "user", "side"), "isSidechain": True},
    ]
    s = records_to_session(recs)
    with pytest.raises(UsageError, match="matches 2"):
        resolve_at(s, "a0000000")
    with pytest.raises(UsageError, match="sidechain"):
        resolve_at(s, "b0000000")


# --- titles, content-replacement ---------------------------------------------------------


def test_title_precedence_and_explicit_title() -> None:
    base = [
        _msg(U(1), None, "user", "<command-name>/model</command-name>"),
        _msg(U(2), U(1), "user", "  real\nprompt "),
        _msg(U(3), U(2), "assistant", "ok"),
    ]
    assert derive_title(records_to_session(base).entries) == "real prompt"
    assert derive_title(records_to_session(base[:1]).entries) == "/model"
    ai = [*base, {"type": "ai-title", "aiTitle": "AI", "sessionId": "x"}]
    assert derive_title(records_to_session(ai).entries) == "AI"
    custom = [
        *ai,
        {"type": "custom-title", "customTitle": "Mine", "sessionId": "x"},
        {"type": "ai-title", "aiTitle": "AI2", "sessionId": "x"},
    ]
    assert derive_title(records_to_session(custom).entries) == "Mine"
    assert do_fork(records_to_session(custom)).title == "Mine (fork)"
    assert do_fork(records_to_session(custom), title="  Exact  ").title == "Exact"
    assert do_fork(records_to_session([_msg(U(3), None, "assistant", "ok")])).title == "Forked session (fork)"
    long = "x" * 300
    assert derive_title(records_to_session([_msg(U(1), None, "user", long)]).entries) == "x" * 200 + "\u2026"


def test_content_replacements_are_merged_with_the_new_session_id() -> None:
    recs = [
        _msg(U(1), None, "user", "hi"),
        {
            "type": "content-replacement",
            "sessionId": "s0000000-0000-4000-8000-000000000000",
            "replacements": [{"a": 1}],
        },
        {"type": "content-replacement", "sessionId": "other", "replacements": [{"b": 2}]},
        {
            "type": "content-replacement",
            "sessionId": "s0000000-0000-4000-8000-000000000000",
            "replacements": [{"c": 3}],
        },
    ]
    f = do_fork(records_to_session(recs))
    cr = [json.loads(ln) for ln in f.lines if b"content-replacement" in ln]
    assert (
        len(cr) == 1 and cr[0]["replacements"] == [{"a": 1}, {"c": 3}] and cr[0]["sessionId"] == f.session_id
    )


def test_newer_reference_fields_are_remapped() -> None:
    recs = [
        _msg(U(1), None, "user", "hi"),
        {**_msg(U(2), U(1), "assistant", "yo"), "supersedesUuids": [U(1), U(99)]},
        {
            "type": "attachment",
            "uuid": U(3),
            "parentUuid": U(2),
            "isSidechain": False,
            "sessionId": "s",
            "timestamp": "t",
            "attachment": {"type": "x", "source_uuid": U(1)},
        },
    ]
    f = do_fork(records_to_session(recs))
    rs = [json.loads(ln) for ln in f.lines]
    new1 = rs[0]["uuid"]
    assert rs[1]["supersedesUuids"][0] == new1 and rs[1]["supersedesUuids"][1] not in (U(99), new1)
    assert rs[2]["attachment"]["source_uuid"] == new1


# --- subagents ------------------------------------------------------------------------


def test_subagent_fork_uses_the_same_mapping_and_new_session_id() -> None:
    s = session_of(S332)
    f = do_fork(s)
    sub_path = next(S332.with_suffix("").glob("subagents/agent-*.jsonl"))
    sub = load(sub_path).entries
    meta_raw = sub_path.with_name(sub_path.name.replace(".jsonl", ".meta.json")).read_bytes()
    assert subagent_wanted(sub, json.loads(meta_raw), s, f)
    lines = fork_subagent(sub, f)
    recs = [json.loads(ln) for ln in lines]
    assert recs and all(
        r["sessionId"] == f.session_id and r["isSidechain"] is True and r["agentId"] == "a57f9afd470043d69"
        for r in recs
    )
    orig = {e.record["uuid"] for e in sub if "uuid" in e.record}
    assert not orig & set(itertools.chain.from_iterable(strings(r) for r in recs))
    assert {r["uuid"] for r in recs} == {f.remap.mapping[u] for u in orig}
    assert remap_meta(meta_raw, f) == meta_raw  # names no entry: byte-identical
    named = json.dumps({"toolUseId": "toolu_x", "parentUuid": next(iter(orig))}).encode()
    assert json.loads(remap_meta(named, f))["parentUuid"] == f.remap.mapping[next(iter(orig))]


def test_subagent_is_left_out_of_a_fork_cut_before_its_launch() -> None:
    s = session_of(S332)
    sub_path = next(S332.with_suffix("").glob("subagents/agent-*.jsonl"))
    sub = load(sub_path).entries
    meta = json.loads(sub_path.with_name(sub_path.name.replace(".jsonl", ".meta.json")).read_bytes())
    early = do_fork(s, at=resolve_at(s, "9f610d91"))  # an answer before the Agent call
    assert not subagent_wanted(sub, meta, s, early)
    late = do_fork(s, at=resolve_at(s, "1"))
    assert subagent_wanted(sub, meta, s, late)
    # Without a sidecar, the start time decides.
    assert not subagent_wanted(sub, None, s, early) and subagent_wanted(sub, None, s, late)


# --- hypothesis: fork keeps content with all-new ids -----------------------------------

SID = "5e551000-0000-4000-8000-000000000000"


@st.composite
def sessions(draw: st.DrawFn) -> list[dict[str, Any]]:
    counter = itertools.count(1)

    def uid() -> str:
        return f"0000{next(counter):04d}-0000-4000-8000-{draw(st.integers(0, 9)):012d}"

    recs: list[dict[str, Any]] = []
    messages: list[str] = []  # user/assistant main nodes so far
    # Where a rewind may go back to: prompts, answers and results, not a tool_use line
    # (Claude Code rewinds to a prompt; a branch off a call line whose result hangs
    # under a progress line is a case tt's active.py does not recover like the SDK).
    rewind_to: list[str] = []
    leaf: str | None = None
    tool = itertools.count(1)

    def entry(kind: str, parent: str | None, **extra: Any) -> str:
        u = uid()
        recs.append(
            {
                "type": kind,
                "uuid": u,
                "parentUuid": parent,
                "isSidechain": False,
                "sessionId": SID,
                "timestamp": "2026-01-01T00:00:00.000Z",
                **extra,
            }
        )
        if kind in ("user", "assistant") and not extra.get("isSidechain"):
            messages.append(u)
            content = extra["message"]["content"]
            if not (isinstance(content, list) and content[0].get("type") == "tool_use"):
                rewind_to.append(u)
        return u

    def assistant(parent: str | None, mid: str, block: dict[str, Any]) -> str:
        return entry(
            "assistant",
            parent,
            message={"id": mid, "role": "assistant", "type": "message", "model": "m", "content": [block]},
        )

    def result(parent: str | None, tid: str) -> str:
        return entry(
            "user",
            parent,
            message={
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": tid, "content": "ok"}],
            },
        )

    steps = draw(
        st.lists(
            st.sampled_from(
                [
                    "prompt",
                    "text",
                    "tool",
                    "parallel",
                    "chained",
                    "attachment",
                    "meta",
                    "rewind",
                    "compact",
                    "sidechain",
                    "metadata",
                ]
            ),
            min_size=1,
            max_size=25,
        )
    )
    for step in steps:
        n = next(tool)
        if step == "prompt":
            leaf = entry(
                "user", leaf, message={"role": "user", "content": f"prompt {n} " + draw(st.text(max_size=8))}
            )
        elif step == "text":
            leaf = assistant(leaf, f"msg_{n}", {"type": "text", "text": f"answer {n}"})
        elif step == "tool":
            a = assistant(
                leaf, f"msg_{n}", {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash", "input": {}}
            )
            p = entry("progress", a, data={"type": "bash_progress"}) if draw(st.booleans()) else a
            leaf = result(p, f"toolu_{n}")
        elif step == "parallel":  # A1 → A2; results on each call line
            a1 = assistant(
                leaf, f"msg_{n}", {"type": "tool_use", "id": f"toolu_{n}a", "name": "Read", "input": {}}
            )
            a2 = assistant(
                a1, f"msg_{n}", {"type": "tool_use", "id": f"toolu_{n}b", "name": "Read", "input": {}}
            )
            result(a1, f"toolu_{n}a")
            leaf = result(a2, f"toolu_{n}b")
        elif step == "chained":  # A1 → R1 → A2 → R2 (2.1.23x)
            a1 = assistant(
                leaf, f"msg_{n}", {"type": "tool_use", "id": f"toolu_{n}a", "name": "Read", "input": {}}
            )
            r1 = result(a1, f"toolu_{n}a")
            a2 = assistant(
                r1, f"msg_{n}", {"type": "tool_use", "id": f"toolu_{n}b", "name": "Read", "input": {}}
            )
            leaf = result(a2, f"toolu_{n}b")
        elif step == "attachment":
            leaf = entry("attachment", leaf, attachment={"type": "date"})
        elif step == "meta":
            leaf = entry("user", leaf, isMeta=True, message={"role": "user", "content": f"<meta {n}>"})
        elif step == "rewind" and rewind_to:
            leaf = draw(st.sampled_from(rewind_to))
        elif step == "compact" and leaf is not None:
            b = uid()
            s_uid = uid()
            tail = leaf
            recs.append(
                {
                    "type": "system",
                    "subtype": "compact_boundary",
                    "uuid": b,
                    "parentUuid": None,
                    "logicalParentUuid": leaf,
                    "isSidechain": False,
                    "sessionId": SID,
                    "timestamp": "t",
                    "compactMetadata": {
                        "trigger": "manual",
                        "preservedSegment": {"headUuid": tail, "anchorUuid": s_uid, "tailUuid": tail},
                        "preservedMessages": {"anchorUuid": s_uid, "uuids": [tail]},
                    },
                }
            )
            recs.append(
                {
                    "type": "user",
                    "uuid": s_uid,
                    "parentUuid": b,
                    "isSidechain": False,
                    "sessionId": SID,
                    "timestamp": "t",
                    "isCompactSummary": True,
                    "message": {"role": "user", "content": f"summary {n}"},
                }
            )
            messages.append(s_uid)
            leaf = s_uid
        elif step == "sidechain":
            root = uid()
            recs.append(
                {
                    "type": "user",
                    "uuid": root,
                    "parentUuid": None,
                    "isSidechain": True,
                    "sessionId": SID,
                    "timestamp": "t",
                    "message": {"role": "user", "content": "side"},
                }
            )
            recs.append(
                {
                    "type": "assistant",
                    "uuid": uid(),
                    "parentUuid": root,
                    "isSidechain": True,
                    "sessionId": SID,
                    "timestamp": "t",
                    "message": {
                        "id": f"msg_s{n}",
                        "role": "assistant",
                        "content": [{"type": "text", "text": "s"}],
                    },
                }
            )
        elif step == "metadata" and leaf is not None:
            recs.append({"type": "last-prompt", "lastPrompt": "p", "leafUuid": leaf, "sessionId": SID})
            recs.append(
                {
                    "type": "file-history-snapshot",
                    "messageId": leaf,
                    "snapshot": {"messageId": leaf, "trackedFileBackups": {}},
                }
            )
            recs.append({"type": "custom-title", "customTitle": f"title {n}", "sessionId": SID})
    return recs


def _sessions_with_messages(recs: list[dict[str, Any]]) -> Session | None:
    s = records_to_session(recs)
    # A file of sidechain entries only is no session (docs/format.md §11): fork refuses it.
    return s if any(not e.is_sidechain for e in s.messages()) else None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), st.data())
def test_property_fork_keeps_content_with_all_new_ids(
    recs: list[dict[str, Any]], data: st.DataObject
) -> None:
    s = _sessions_with_messages(recs)
    if s is None:
        return
    snapshot = copy.deepcopy(recs)
    olds = original_uuids(s)
    f = do_fork(s)
    fork_recs = [json.loads(ln) for ln in f.lines]
    assert not olds & set(itertools.chain.from_iterable(strings(r) for r in fork_recs))
    assert {r["forkedFrom"]["messageUuid"] for r in fork_recs if "forkedFrom" in r} <= olds
    fs = lines_to_session(f.lines)
    assert [e.record["message"] for e in fs.messages()] == [e.record["message"] for e in s.messages()]
    # At any main message, dead branches included: the conversation up to the cut.
    candidates = [i for i, e in enumerate(s.nodes) if e.type in ("user", "assistant") and not e.is_sidechain]
    at = data.draw(st.sampled_from(candidates))
    g = do_fork(s, at=at)
    g_recs = [json.loads(ln) for ln in g.lines]
    assert not olds & set(itertools.chain.from_iterable(strings(r) for r in g_recs))
    cut = s.index.find(g.cut.uuid)  # type: ignore[arg-type]
    assert cut is not None
    assert forked_messages(g) == conversation_at(s, cut)
    gs = lines_to_session(g.lines)
    leaf = gs.index.active_leaf()
    assert leaf is not None and gs.nodes[leaf].record["forkedFrom"]["messageUuid"] == g.cut.uuid
    blocks = [b for e in gs.messages() for b in (e.content or []) if isinstance(b, dict)]
    assert {b["id"] for b in blocks if b.get("type") == "tool_use"} <= {
        b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"
    }
    assert recs == snapshot


def test_new_ids_are_uuid4_by_default() -> None:
    s = session_of(S332)
    f = fork(s, source_session_id="x", now=NOW, new_id=lambda: str(uuid.uuid4()))
    assert uuid.UUID(f.session_id).version == 4


# --- damaged sessions fork clean (read through the in-memory repair) ---------------------

DAMAGED = REAL.parent / "damaged"


@pytest.mark.parametrize("path", sorted(DAMAGED.glob("*.jsonl")), ids=lambda p: p.stem)
def test_fork_of_a_damaged_session_validates_clean(path: Path, tmp_path: Path) -> None:
    from transcript_tools.edge.loader import load_session

    before = path.read_bytes()
    loaded = load_session(path)
    assert loaded.actions  # the file is damaged: the repair did something
    f = do_fork(loaded.session)
    out = tmp_path / f"{f.session_id}.jsonl"
    out.write_bytes(b"".join(f.chunks()))
    report = validate_path(out)
    assert report.errors == 0 and report.warnings == 0, [d.to_dict() for d in report.diagnostics]
    assert [e.record["message"] for e in lines_to_session(f.lines).messages()] == [
        e.record["message"] for e in loaded.session.messages()
    ]
    assert path.read_bytes() == before
