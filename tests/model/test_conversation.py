"""`conversation`: the API messages a resume sends, rule by rule (hand-built sessions),
as invariants (hypothesis), on every real fixture (the fast and the reference load agree),
and against the real CLIs (marked ``claude``: the oracle's request after ``--resume``)."""

from __future__ import annotations

import copy
import json
import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.resume_helpers import (
    MODEL,
    NOT_A_CHAIN,
    REAL_FILES,
    S332,
    SESSION,
    Builder,
    blocks,
    check_api_shape,
    entries_of,
    roles,
    text,
    thinking,
    tool_use,
)
from transcript_tools.edge.loader import load_session
from transcript_tools.edge.reader import load
from transcript_tools.model import conversation, lifecycle
from transcript_tools.model.conversation import (
    INTERRUPTED_TOOL_RESULT,
    NO_CONTENT,
    NO_RESPONSE_REQUESTED,
    api_messages,
)
from transcript_tools.model.session import Session
from transcript_tools.resume.files import load_for_resume, resume_start
from transcript_tools.resume.quickchain import Outside, quick_conversation

SETTINGS = settings(
    max_examples=int(os.environ.get("TT_HYPOTHESIS_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def build(b: Builder) -> conversation.Conversation:
    return conversation.build(Session.from_entries(b.entries()))


def msgs(b: Builder) -> list[dict[str, Any]]:
    return build(b).messages


# --- rules, one by one ---------------------------------------------------------------


def test_split_lines_of_one_response_become_one_message() -> None:
    b = Builder()
    b.user("hi")
    b.assistant(thinking("plan"), text("answer"), mid="msg_a", stop="end_turn")
    m = msgs(b)
    assert m == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [thinking("plan"), text("answer")]},
    ]


def test_parallel_calls_with_results_between_their_lines() -> None:
    # 2.1.2xx: call a, result a, call b, result b, all one response (docs/format.md §3.2.1).
    b = Builder()
    b.user("go")
    (_a,) = b.assistant(tool_use("t_a"), mid="msg_p")
    b.result("t_a", "A")
    (_c,) = b.assistant(tool_use("t_b", "Glob", pattern="*"), mid="msg_p")
    b.result("t_b", "B")
    b.assistant(text("done"), mid="msg_q")
    m = msgs(b)
    assert roles(m) == ["user", "assistant", "user", "assistant"]
    assert [x["id"] for x in m[1]["content"]] == ["t_a", "t_b"]
    assert [x["tool_use_id"] for x in m[2]["content"]] == ["t_a", "t_b"]
    check_api_shape(m)


def test_parallel_results_on_sibling_branches_are_recovered() -> None:
    # Each result's parent is its own call's line, so the file forks (active.py point 2).
    b = Builder()
    b.user("go")
    a, c = b.assistant(tool_use("t_a"), tool_use("t_b"), mid="msg_p")
    b.result("t_a", "A", parent=a["uuid"])
    b.result("t_b", "B", parent=c["uuid"])
    b.assistant(text("done"))
    m = msgs(b)
    assert [x["tool_use_id"] for x in m[2]["content"]] == ["t_a", "t_b"]
    check_api_shape(m)


def test_consecutive_user_entries_merge_with_results_first() -> None:
    b = Builder()
    b.user("go")
    b.assistant(tool_use("t_late"))
    b.user("an interjection")
    b.result("t_late", "late")
    b.assistant(text("ok"))
    m = msgs(b)
    assert m[2]["content"] == [
        {"tool_use_id": "t_late", "type": "tool_result", "content": "late"},
        text("an interjection"),
    ]


def test_caller_is_dropped_and_task_renamed_without_touching_the_records() -> None:
    b = Builder()
    b.user("go")
    b.assistant({**tool_use("t1", "Task", prompt="p"), "caller": {"type": "direct"}})
    b.result("t1")
    before = copy.deepcopy(b.records)
    m = msgs(b)
    assert m[1]["content"] == [{"type": "tool_use", "id": "t1", "name": "Agent", "input": {"prompt": "p"}}]
    assert b.records == before


def test_dangling_call_gets_claude_codes_interrupted_result_then_the_sentinel() -> None:
    b = Builder()
    b.user("go")
    b.assistant(text("reading"), tool_use("t1"))
    c = build(b)
    assert c.messages[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "content": INTERRUPTED_TOOL_RESULT, "is_error": True, "tool_use_id": "t1"}
        ],
    }
    assert c.messages[3] == {"role": "assistant", "content": [text(NO_RESPONSE_REQUESTED)]}
    assert [n.code for n in c.notes] == ["synthetic-tool-result", "no-response-sentinel"]
    assert [n.code for n in c.mended] == ["synthetic-tool-result"]


def test_call_answered_only_after_a_plain_prompt_is_answered_synthetically() -> None:
    b = Builder()
    b.user("go")
    b.assistant(tool_use("t1"))
    b.assistant(text("second response"), mid="msg_other")
    m = msgs(b)
    assert roles(m) == ["user", "assistant", "user", "assistant"]
    assert m[2]["content"][0]["content"] == INTERRUPTED_TOOL_RESULT
    check_api_shape(m)


def test_orphan_result_is_dropped_and_an_emptied_message_says_no_content() -> None:
    b = Builder()
    b.user("first")
    b.assistant(text("one"))
    b.result("toolu_nowhere", "x")
    b.assistant(text("two"))
    b.user([text("keep me"), {"type": "tool_result", "tool_use_id": "toolu_other", "content": "y"}])
    c = build(b)
    assert c.messages[2] == {"role": "user", "content": [text(NO_CONTENT)]}
    assert c.messages[4] == {"role": "user", "content": [text("keep me")]}
    assert [n.code for n in c.notes].count("orphan-tool-result") == 2


def test_thinking_only_and_blank_answers_are_dropped_and_neighbours_merge() -> None:
    b = Builder()
    b.user("p1")
    b.assistant(thinking())
    b.user("p2")
    b.assistant(text("  \n"))
    b.user("p3")
    b.assistant(text("real"))
    m = msgs(b)
    assert m == [
        {"role": "user", "content": [text("p1"), text("p2"), text("p3")]},
        {"role": "assistant", "content": [text("real")]},
    ]


def test_empty_assistant_is_no_content_and_empty_user_is_dropped() -> None:
    b = Builder()
    b.user("p1")
    b.assistant(text("a1"))
    b.user("")
    b.assistant(mid="msg_empty")  # no blocks: no line at all
    b.records.append(
        {
            **b.records[-2],
            "uuid": b.uid(),
            "type": "assistant",
            "parentUuid": b.last,
            "message": {"id": "msg_e", "role": "assistant", "model": MODEL, "content": []},
        }
    )
    m = api_messages(b.entries())[0]
    assert m[-1] == {"role": "assistant", "content": [text(NO_CONTENT)]}
    assert {"role": "user", "content": ""} not in m


def test_api_errors_are_not_sent_meta_and_synthetic_answers_are() -> None:
    b = Builder()
    b.user("<local-command-caveat>Caveat</local-command-caveat>", isMeta=True)
    b.user("p1")
    b.assistant(text("API Error: 500"), model="<synthetic>", isApiErrorMessage=True)
    b.user("p2")
    b.assistant(text(NO_RESPONSE_REQUESTED), model="<synthetic>")
    b.user("p3")
    b.assistant(text("a3"))
    c = build(b)
    assert c.messages[0]["content"][0]["text"].startswith("<local-command-caveat>")
    assert not any("API Error" in json.dumps(x) for x in c.messages)
    assert {"role": "assistant", "content": [text(NO_RESPONSE_REQUESTED)]} in c.messages
    assert c.model == MODEL  # the last real model, not <synthetic>


def test_system_progress_and_attachments_are_not_sent_except_commands_and_queued_prompts() -> None:
    b = Builder()
    b.user("p1")
    b.system("local_command", content="<command-name>/mcp</command-name>")
    b.system("turn_duration", durationMs=5)
    b.add({**b._env(..., type="progress", data={"type": "hook_progress"})})
    b.attachment({"type": "skill_listing", "content": "skills..."})
    b.assistant(tool_use("t1"))
    b.result("t1")
    b.attachment({"type": "queued_command", "prompt": "also do X", "commandMode": "prompt"})
    b.assistant(text("done"))
    m = msgs(b)
    assert m[0]["content"] == [text("p1"), text("<command-name>/mcp</command-name>")]
    assert m[2]["content"][1]["text"].startswith(
        "<system-reminder>\nThe user sent a new message while you were working:\nalso do X"
    )
    assert "skills..." not in json.dumps(m) and "hook_progress" not in json.dumps(m)


def test_sentinel_only_when_the_conversation_ends_with_a_user_turn() -> None:
    b = Builder()
    b.user("p1")
    b.assistant(text("a1"))
    assert build(b).messages[-1] == {"role": "assistant", "content": [text("a1")]}
    b.user("p2")
    c = build(b)
    assert c.messages[-1]["content"] == [text(NO_RESPONSE_REQUESTED)] and not c.ends_with_user


def test_continuation_leaf_is_the_last_entry_written_after_the_active_leaf() -> None:
    b = Builder()
    b.user("p1")
    (a,) = b.assistant(text("a1"), stop="end_turn")
    att = b.attachment({"type": "prompt_snapshot"})
    c = build(b)
    assert c.leaf_uuid == att["uuid"]
    assert c.entries[-1].uuid == a["uuid"]  # the chain itself ends at the message


def test_continuation_leaf_skips_what_only_the_in_memory_repair_added() -> None:
    b = Builder()
    b.user("p1")
    (a,) = b.assistant(tool_use("t1"))
    repaired = b.result("t1", "interrupted")  # stands for repair's added result
    on_disk = {r["uuid"] for r in b.records if r is not repaired}
    c = conversation.build(Session.from_entries(b.entries()), on_disk=on_disk)
    assert c.leaf_uuid == a["uuid"]


def test_envelope_facts_come_from_the_chain() -> None:
    b = Builder(cwd="/srv/app", version="2.1.197")
    b.user("p1")
    b.assistant(text("a1"))
    c = build(b)
    assert (c.cwd, c.version, c.git_branch, c.session_id, c.model) == (
        "/srv/app",
        "2.1.197",
        "main",
        SESSION,
        MODEL,
    )


# --- invariants ------------------------------------------------------------------------

STEP = st.one_of(
    st.tuples(st.just("user"), st.text(min_size=0, max_size=8)),
    st.tuples(
        st.just("answer"),
        st.lists(st.sampled_from(["text", "blank", "thinking", "call"]), min_size=0, max_size=4),
    ),
    st.tuples(st.just("results"), st.lists(st.sampled_from(["answer", "skip", "orphan", "dup"]), max_size=3)),
    st.tuples(st.just("noise"), st.sampled_from(["attachment", "system", "progress", "api_error", "meta"])),
)


def _session(steps: list[tuple[str, Any]]) -> Builder:
    b = Builder()
    open_calls: list[str] = []
    for n, (kind, arg) in enumerate(steps, 1):
        if kind == "user":
            b.user(arg)
        elif kind == "answer":
            blocks = []
            for k, what in enumerate(arg):
                if what == "text":
                    blocks.append(text(f"t{n}.{k}"))
                elif what == "blank":
                    blocks.append(text(" "))
                elif what == "thinking":
                    blocks.append(thinking())
                else:
                    tid = f"toolu_{n}_{k}"
                    open_calls.append(tid)
                    blocks.append(tool_use(tid))
            if blocks:
                b.assistant(*blocks)
        elif kind == "results":
            for what in arg:
                if what == "answer" and open_calls:
                    b.result(open_calls.pop(0))
                elif what == "orphan":
                    b.result(f"toolu_orphan_{n}")
                elif what == "dup" and n > 1:
                    b.result(f"toolu_{n - 1}_0")
        elif arg == "attachment":
            b.attachment({"type": "date", "content": "x"})
        elif arg == "system":
            b.system("turn_duration")
        elif arg == "progress":
            b.add(b._env(..., type="progress", data={"type": "hook_progress"}))
        elif arg == "api_error":
            b.assistant(text("API Error"), model="<synthetic>", isApiErrorMessage=True)
        else:
            b.user("<meta>", isMeta=True)
    return b


@SETTINGS
@given(st.lists(STEP, min_size=1, max_size=14))
def test_any_session_rebuilds_into_a_request_the_api_accepts(steps: list[tuple[str, Any]]) -> None:
    b = _session(steps)
    if not any(r["type"] in ("user", "assistant") for r in b.records):
        return
    before = copy.deepcopy(b.records)
    c = build(b)
    assert b.records == before  # records are never mutated
    if c.messages:
        check_api_shape(c.messages)
        assert c.messages[-1]["role"] == "assistant"  # the sentinel when it ended on a user turn
    # The fast path either declines or agrees with the reference.
    q = quick_conversation(b.entries())
    if q is not None:
        fast = conversation.assemble(q.chain, None, q.session_id)
        assert fast.messages == c.messages


@SETTINGS
@given(
    st.lists(st.sampled_from(["user", "answer", "call", "result", "attachment"]), min_size=1, max_size=20),
    st.randoms(use_true_random=False),
)
def test_fast_chain_equals_the_reference_chain_on_branching_sessions(kinds: list[str], rnd: Any) -> None:
    # Random trees: each entry's parent is any earlier entry (rewinds, forks, dead branches).
    b = Builder()
    uuids: list[str] = []
    calls: list[str] = []
    for k, kind in enumerate(kinds):
        parent = rnd.choice(uuids) if uuids and rnd.random() < 0.3 else (uuids[-1] if uuids else None)
        if kind == "user":
            r = b.user(f"u{k}", parent=parent)
        elif kind == "answer":
            r = b.assistant(text(f"a{k}"), parent=parent)[-1]
        elif kind == "call":
            calls.append(f"toolu_{k}")
            r = b.assistant(tool_use(calls[-1]), mid=f"msg_{k // 3}", parent=parent)[-1]
        elif kind == "result" and calls:
            r = b.result(rnd.choice(calls), parent=parent)
        else:
            r = b.attachment({"type": "date"}, parent=parent)
        uuids.append(r["uuid"])
    entries = b.entries()
    q = quick_conversation(entries)
    assert q is not None  # clean trees: every parent exists and comes first
    ref = Session.from_entries(entries).conversation()
    assert [e.uuid for e in q.chain] == [e.uuid for e in ref]


def test_fast_path_declines_what_it_cannot_vouch_for() -> None:
    b = Builder()
    b.user("p1")
    b.assistant(text("a1"))
    dup = copy.deepcopy(b.records)
    dup.append(copy.deepcopy(b.records[0]))
    assert quick_conversation(entries_of(dup)) is None  # a uuid written twice
    dangling = copy.deepcopy(b.records)
    dangling[1]["parentUuid"] = "00000000-0000-4000-8000-999999999999"
    assert quick_conversation(entries_of(dangling)) is None
    forward = copy.deepcopy(b.records)
    forward[0]["parentUuid"] = forward[1]["uuid"]  # a loop needs a parent written later
    assert quick_conversation(entries_of(forward)) is None


def test_fast_chain_streams_and_says_when_a_partial_read_is_not_enough() -> None:
    b = Builder()
    u1 = b.user("before the compaction")
    b.system("compact_boundary", parent=None, compactMetadata={"trigger": "manual"})
    b.user("rewound", parent=u1["uuid"])
    partial = b.entries()[1:]  # read from the boundary on: the rewind names a parent before it
    with pytest.raises(Outside):
        quick_conversation(iter(partial), partial=True)
    # Streamed (a generator) or listed, the same chain; only the nodes are kept.
    whole = b.entries()
    q = quick_conversation(e for e in whole)
    assert q is not None
    assert [e.uuid for e in q.chain] == [e.uuid for e in Session.from_entries(whole).conversation()]
    assert q.index == {e.uuid: i for i, e in enumerate(q.nodes)}


# --- real fixtures ---------------------------------------------------------------------


@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: p.name[:40])
def test_resume_load_equals_the_reference_load(path: Path) -> None:
    ref = conversation.build(load_session(path).session)
    got = load_for_resume(path)
    if path.name in NOT_A_CHAIN:
        pytest.skip("every uuid is '[trimmed for fixture]': no chain to compare")
    # A call the file never answered gets Claude Code 2.1.332's result on both paths
    # (conversation's rule 5 on the fast one, repair's add-interrupted-result on the other).
    assert got.conversation.messages == ref.messages
    assert got.conversation.model == ref.model
    if got.conversation.messages:
        check_api_shape(got.conversation.messages)


@pytest.mark.parametrize("marked", [{"isMeta": True}, {"teamName": "t"}], ids=["meta", "team"])
def test_a_meta_command_output_is_no_main_leaf_on_either_path(tmp_path: Path, marked: dict[str, Any]) -> None:
    # Review of round 8: once a slash command's output could be the leaf, the resume's quick
    # path marked META on user and assistant lines only, and continued a meta output's
    # branch where the reference (and Claude Code's) leaf is the prompt beside it.
    b = Builder()
    b.user("p1")
    [a] = b.assistant(text("a1"))
    b.user("p2 on one branch")
    b.system(
        "local_command", parent=a["uuid"], content="<local-command-stdout>x</local-command-stdout>", **marked
    )
    path = b.write(tmp_path / f"{SESSION}.jsonl")
    ref = conversation.build(load_session(path).session)
    got = load_for_resume(path)
    assert got.fast and got.conversation.messages == ref.messages
    assert [m["role"] for m in ref.messages][-2:] == ["user", "assistant"]  # p2, then the sentinel
    assert got.conversation.leaf_uuid == ref.leaf_uuid


def test_for_model_keeps_the_sentinel_before_a_command_output() -> None:
    # Review of round 8: `for_model` rebuilt "with the sentinel" only when the messages did
    # not end on a user message; with a slash command's output after the sentinel they do,
    # and the rebuild merged the prompt with the output.
    b = Builder()
    b.user("p1")
    b.assistant(thinking("by another model"), text("a1"))
    b.user("p2 never answered")
    b.system("local_command", content="<local-command-stdout>out</local-command-stdout>", level="info")
    conv = build(b)
    rebuilt = conv.for_model("claude-some-other-model")
    assert rebuilt.thinking_not_sent == 1
    assert [m["role"] for m in rebuilt.messages] == [m["role"] for m in conv.messages]
    assert rebuilt.messages[-2] == {
        "role": "assistant",
        "content": [text(conversation.NO_RESPONSE_REQUESTED)],
    }


def test_resume_reads_from_the_last_boundary_and_keeps_the_preserved_segment() -> None:
    start = resume_start(S332)
    data = S332.read_bytes()
    assert 0 < start < len(data) and data[start - 1 : start] == b"\n"
    first = json.loads(data[start:].split(b"\n", 1)[0])
    assert first["uuid"] == "ff44c48a-10bc-4e6a-8229-9e9c8bf05269"  # the preserved head, before the boundary
    got = load_for_resume(S332)
    assert got.fast and got.start == start
    assert got.conversation.messages[1] == {"role": "assistant", "content": [text("ACK n=30 last=")]}


def test_resume_reads_the_whole_file_when_the_part_is_not_self_contained(tmp_path: Path) -> None:
    b = Builder()
    u1 = b.user("before the compaction")
    b.assistant(text("old answer"))
    b.system("compact_boundary", parent=None, compactMetadata={"trigger": "manual"})
    b.user("This session is being continued ...", isCompactSummary=True)
    b.assistant(text("after"))
    b.user(
        "rewound to before the compaction", parent=u1["uuid"]
    )  # the active leaf's chain skips the boundary
    b.assistant(text("on the old branch"))
    path = b.write(tmp_path / "s.jsonl")
    got = load_for_resume(path)
    assert got.start == 0
    texts = [b["text"] for m in got.conversation.messages for b in blocks(m)]
    assert texts == ["before the compaction", "rewound to before the compaction", "on the old branch"]


def _crashed(tmp_path: Path) -> tuple[Path, Builder]:
    b = Builder()
    b.user("p1")
    b.assistant(text("a1"))
    b.user("p2")
    b.assistant(tool_use("t_crash"))
    return b.write(tmp_path / "s.jsonl"), b


def test_a_torn_tail_and_a_dangling_call_resume_on_the_fast_path(tmp_path: Path) -> None:
    path, b = _crashed(tmp_path)
    torn = b'{"parentUuid":"00000000-0000-4000-8000-00000000000'
    with open(path, "ab") as f:
        f.write(torn)
    before = path.read_bytes()
    got = load_for_resume(path)
    assert got.fast and got.mended == [
        f"left out the torn last line ({len(torn)} bytes), as `tt repair` cuts it"
    ]
    check_api_shape(got.conversation.messages)
    assert got.conversation.messages[-2]["content"][0]["content"] == INTERRUPTED_TOOL_RESULT
    # the continuation chains onto the file's own call line
    assert got.conversation.leaf_uuid == b.records[-1]["uuid"]
    assert path.read_bytes() == before


def test_damage_inside_the_file_goes_through_the_in_memory_repair(tmp_path: Path) -> None:
    path, b = _crashed(tmp_path)
    data = path.read_bytes().split(b"\n")
    data.insert(2, b"\x00\x00\x00garbage")
    path.write_bytes(b"\n".join(data))
    before = path.read_bytes()
    got = load_for_resume(path)
    assert not got.fast and {a.fix for a in got.actions} >= {"quarantine-line", "add-interrupted-result"}
    check_api_shape(got.conversation.messages)
    # repair's result for the dangling call exists only in memory: chain onto the call
    assert got.conversation.leaf_uuid == b.records[-1]["uuid"]
    assert path.read_bytes() == before


# --- the real CLIs (the oracle) ------------------------------------------------------

#: Where Claude Code 2.1.197 rebuilds differently from 2.1.332, and so from tt (which
#: follows 2.1.332): it drops a dangling call instead of answering it, adds "Continue from
#: where you left off." after an interrupted turn, and re-renders background-task notices.
DIFFERS_IN_197 = {
    "v1.0.51-inline-sidechains-two-compactions.jsonl",
    "v1.0.71-summaries-sdk-ends-mid-tool.jsonl",
    "v2.1.17-agent-progress-ends-mid-tool.jsonl",
    "v2.1.38-tool-heavy.jsonl",
    # Ends on a /clear's own lines: 2.1.197 puts "No response requested." after the command
    # (before its output); 2.1.332, which tt follows, puts none (conversation rule 7).
    "v2.1.266-clear-then-hook-root-excerpt.jsonl",
}


#: The clocks every comparison with a real CLI runs at: the day before Claude Code 2.1.332
#: retires Claude Sonnet 4.5 (2026-11-30, `lifecycle`), and a day after. Pinned, so the
#: verdict is the same on any day the suite runs.
CLOCKS = {
    "2026-11-29": datetime(2026, 11, 29, 12, 0, tzinfo=UTC),
    "2026-12-01": datetime(2026, 12, 1, 12, 0, tzinfo=UTC),
}


def _oracle_request(cli: Any, path: Path, probe: str, clock: datetime) -> Any:
    from tests.support.oracle import resume_request
    from tests.support.sessions import project_folder_name

    sid = _session_id(path)
    with tempfile.TemporaryDirectory(prefix="tt-parity-") as tmp:
        root = Path(tmp)
        cwd = (root / "work").resolve()
        cwd.mkdir()
        project = root / "config" / "projects" / project_folder_name(cwd)
        project.mkdir(parents=True)
        shutil.copy(path, project / f"{sid}.jsonl")
        return resume_request(cli, root / "config", sid, cwd, probe, clock=clock)


def _oracle_messages(
    cli: Any, path: Path, probe: str, clock: datetime = CLOCKS["2026-12-01"]
) -> list[dict[str, Any]]:
    return list(_oracle_request(cli, path, probe, clock).messages)


def _as_sent(
    conv: conversation.Conversation, table: lifecycle.ModelTable, clock: datetime
) -> conversation.Conversation:
    """``conv`` as a resume at ``clock`` sends it: the model `lifecycle` picks, its thinking only."""
    choice = lifecycle.resume_model(table, conv.model, None, lifecycle.Clock.fixed(clock))
    return conv.for_model(choice.model) if choice.model else conv


def _session_id(path: Path) -> str:
    return Session.from_entries(load(path).entries).session_id or ""


PARITY_FILES = [p for p in REAL_FILES if p.name not in NOT_A_CHAIN and "edge-cases" not in p.name]


@pytest.mark.claude
@pytest.mark.parametrize("when", sorted(CLOCKS))
@pytest.mark.parametrize("path", PARITY_FILES, ids=lambda p: p.name[:40])
def test_first_request_carries_the_same_blocks_as_claude_code_2_1_332(
    claude_332: Any, faketime: None, path: Path, when: str
) -> None:
    from tests.support.oracle import compare_histories, conversation_blocks

    probe = "Parity probe"
    clock = CLOCKS[when]
    request = _oracle_request(claude_332, path, probe, clock)
    theirs = request.messages
    # The rebuild itself, on the file's entries as they are: exactly Claude Code's blocks,
    # to the model Claude Code picks at that clock.
    built = _as_sent(
        conversation.build(Session.from_entries(load(path).entries)), lifecycle.CLAUDE_CODE_2_1_332, clock
    )
    assert request.model == built.model
    plain = [*built.messages, {"role": "user", "content": probe}]
    assert compare_histories(plain, theirs, labels=("tt", "claude")) == ""
    # What tt sends after its in-memory repair: the same, or more where repair relinked a
    # broken parentUuid and so recovered history Claude Code silently cut off.
    got = load_for_resume(path)
    mine = [
        *_as_sent(got.conversation, lifecycle.CLAUDE_CODE_2_1_332, clock).messages,
        {"role": "user", "content": probe},
    ]
    if any(a.fix == "relink-parent" for a in got.actions) and got.start == 0:
        ours, cc = conversation_blocks(mine), conversation_blocks(theirs)
        assert ours[-len(cc) :] == cc
    else:
        assert compare_histories(mine, theirs, labels=("tt", "claude")) == ""


@pytest.mark.claude
@pytest.mark.parametrize(
    "path", [p for p in PARITY_FILES if p.name not in DIFFERS_IN_197], ids=lambda p: p.name[:40]
)
def test_first_request_carries_the_same_blocks_as_claude_code_2_1_197(
    claude_197: Any, faketime: None, path: Path
) -> None:
    from tests.support.oracle import compare_histories

    probe = "Parity probe"
    clock = CLOCKS["2026-12-01"]
    request = _oracle_request(claude_197, path, probe, clock)
    # 2.1.197's own table: Sonnet 4.5 is not retired there, so it keeps that model and its thinking.
    built = _as_sent(
        conversation.build(Session.from_entries(load(path).entries)), lifecycle.CLAUDE_CODE_2_1_197, clock
    )
    assert request.model == built.model
    plain = [*built.messages, {"role": "user", "content": probe}]
    assert compare_histories(plain, request.messages, labels=("tt", "claude")) == ""


def _probe_sessions() -> dict[str, Builder]:
    """Edge cases the fixtures lack, each checked against the CLI (rules 2, 5, 6 and 1)."""
    out: dict[str, Builder] = {}
    b = Builder()
    b.user("first prompt")
    b.assistant(text("answer one"))
    b.result("toolu_orphan1", "orphan content")
    b.assistant(text("answer two"))
    b.user("third prompt")
    b.assistant(text("  \n"))
    b.user("fourth prompt")
    b.assistant(text("answer four"))
    b.user("fifth prompt")
    b.assistant(text("API Error: 500 boom"), model="<synthetic>", isApiErrorMessage=True)
    b.user("sixth prompt")
    b.assistant(thinking())
    out["orphans-blank-api-error-thinking"] = b
    b = Builder()
    b.user("p1")
    b.assistant(tool_use("toolu_late"))
    b.user("p7 interjection")
    b.result("toolu_late", "late result")
    b.assistant(text("a8"))
    b.user([text("p4 text"), {"type": "tool_result", "tool_use_id": "toolu_orph", "content": "x"}])
    b.assistant(thinking("mid thinking"))
    b.user("p5")
    b.assistant(text("a5"))
    out["late-result-mixed-orphan-mid-thinking"] = b
    b = Builder()
    b.user("p1")
    b.assistant(tool_use("toolu_q1"))
    b.result("toolu_q1", "res")
    b.attachment({"type": "queued_command", "prompt": "QUEUED PROMPT TEXT", "commandMode": "prompt"})
    b.assistant(text("a2"))
    out["queued-command"] = b
    out["thinking-of-other-models"] = thinking_of_other_models()
    # Slash commands (rules 1 and 7), in the lines a 2.1.266 session holds (fixture
    # v2.1.266-clear-then-hook-root-excerpt.jsonl): the meta caveat, the command, its
    # output as a system/local_command line.
    caveat = (
        "<local-command-caveat>Caveat: The messages below were generated by the user while running "
        "local commands. DO NOT respond to these messages or otherwise consider them in your "
        "response unless the user explicitly asks you to.</local-command-caveat>"
    )
    command = (
        "<command-name>/cost</command-name>\n            <command-message>cost</command-message>\n"
        "            <command-args></command-args>"
    )

    def after_a_cost_command() -> Builder:
        b = Builder()
        b.user("p1")
        b.assistant(text("a1"))
        b.user(caveat, isMeta=True)
        b.user(command)
        b.system(
            "local_command",
            content="<local-command-stdout>Total cost: $0.01</local-command-stdout>",
            level="info",
        )
        return b

    out["ends-on-a-slash-command"] = after_a_cost_command()
    b = after_a_cost_command()
    b.user("p2")
    b.assistant(text("a2"))
    out["slash-command-mid-session"] = b
    b = Builder()
    b.user("p1")
    b.assistant(text("a1"))
    b.user("p2 never answered")
    b.system(
        "local_command", content="<local-command-stdout>output after it</local-command-stdout>", level="info"
    )
    out["unanswered-prompt-then-command-output"] = b
    return out


def thinking_of_other_models() -> Builder:
    """Thinking alone in a message, beside a call, redacted, in a message with no model,
    and written by another model than the one the resume continues on (rule 4)."""
    b = Builder()
    b.user("p0")
    b.assistant(thinking("lonely thought"))
    b.assistant(text("answer B"))
    b.user("p1")
    b.assistant(thinking("t2"), tool_use("toolu_1"))
    b.result("toolu_1", "res")
    b.assistant(thinking("t3"))
    b.user("p2")
    b.assistant(
        {"type": "redacted_thinking", "data": "abc"}, text("after redacted"), model="claude-opus-4-5-20251101"
    )
    b.user("p3")
    b.assistant(thinking("by opus 4.5"), text("opus text"), model="claude-opus-4-5-20251101")
    b.user("p4")
    for rec in b.assistant(thinking("no model field"), text("no-model text")):
        del rec["message"]["model"]
    return b


@pytest.mark.claude
@pytest.mark.parametrize("when", sorted(CLOCKS))
@pytest.mark.parametrize("name", sorted(_probe_sessions()))
def test_edge_cases_match_claude_code_2_1_332(
    claude_332: Any, faketime: None, name: str, when: str, tmp_path: Path
) -> None:
    from tests.support.oracle import compare_histories

    b = _probe_sessions()[name]
    path = b.write(tmp_path / f"{SESSION}.jsonl")
    request = _oracle_request(claude_332, path, "probe", CLOCKS[when])
    built = _as_sent(build(b), lifecycle.CLAUDE_CODE_2_1_332, CLOCKS[when])
    assert request.model == built.model
    mine = [*built.messages, {"role": "user", "content": "probe"}]
    assert compare_histories(mine, request.messages, labels=("tt", "claude")) == ""
