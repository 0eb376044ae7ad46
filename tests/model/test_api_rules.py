"""The API's request rules (issue 14, README "Requests the API refuses"), on real records.

Each damage shape of `tests.damage.API_KINDS` is applied to a real Claude Code 2.1.332
transcript (fixtures/real/claude-config-2.1.332): ``tt validate`` names it with its
code; the strict stand-in's rules (`tests.support.strict.refusal`) refuse the damaged
conversation; ``tt repair`` fixes it by default with the original line quarantined and
loses no other block; and the conversation ``tt resume`` sends from the damaged file is
one the strict rules accept. The real CLIs against the strict stand-in are in
tests/model/test_api_rules_claude.py.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import orjson
import pytest

from tests.damage import API_KINDS, check_accounting, decoded, repair_bytes, validate_bytes
from tests.support.cli import TT
from tests.support.oracle import conversation_blocks
from tests.support.paths import ROOT
from tests.support.strict import refusal
from transcript_tools.model import api_rules
from transcript_tools.model.conversation import build
from transcript_tools.model.session import Session
from transcript_tools.resume.files import load_for_resume

REAL = next((ROOT / "fixtures/real/claude-config-2.1.332/projects").glob("*/*.jsonl"))
TOOL_HEAVY = ROOT / "fixtures/real/v2.1.38-tool-heavy.jsonl"


def _request(messages: list[dict]) -> tuple[dict, bytes]:
    body = {"model": "claude-x", "messages": [*messages, {"role": "user", "content": "next"}]}
    return body, json.dumps(body).encode()


def _sent(path: Path) -> list[dict]:
    return load_for_resume(path).conversation.messages


@pytest.mark.parametrize("kind", sorted(API_KINDS))
def test_each_shape_is_named_refused_repaired_and_resumed(kind: str, tmp_path: Path) -> None:
    src = REAL.read_bytes()
    d = API_KINDS[kind](src)
    # tt validate names it, as an error.
    report = validate_bytes(d.data)
    assert set(d.codes) <= {x.code for x in report.diagnostics}, [x.to_dict() for x in report.diagnostics]
    assert report.errors > 0
    # The records as they are break the strict rules (what a client sending them gets).
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(d.data)
    raw_msgs = [
        {"role": e.record["message"]["role"], "content": e.record["message"]["content"]}
        for e in Session.from_entries([e for ln in decoded(d.data) for e in ln.entries]).messages()
    ]
    body, raw = _request(raw_msgs)
    assert refusal(body, raw) is not None
    # tt resume on the damaged file sends what the strict rules accept.
    body, raw = _request(_sent(damaged))
    assert refusal(body, raw) is None, refusal(body, raw)
    # tt repair fixes it by default, quarantines the original line, and loses no block
    # but the edited records' own.
    fixed = repair_bytes(d.data)
    check_accounting(d.data, fixed)
    assert validate_bytes(fixed.data).errors == 0
    assert {a.code for a in fixed.plan.actions} >= set(d.codes)
    assert {c for q in fixed.quarantine for r in q["reasons"] for c in [r["code"]]} >= set(d.codes)
    out = tmp_path / "fixed.jsonl"
    out.write_bytes(fixed.data)
    body, raw = _request(_sent(out))
    assert refusal(body, raw) is None
    before = conversation_blocks(_sent_clean(src, tmp_path))
    after = conversation_blocks(body["messages"])
    edited = set(d.destroyed)
    keep = [b for b in before if not _from(b, src, edited)]
    missing = [b for b in keep if b not in after]
    assert missing == [], missing


def _sent_clean(src: bytes, tmp_path: Path) -> list[dict]:
    p = tmp_path / "clean.jsonl"
    p.write_bytes(src)
    return _sent(p)


def _from(block: object, src: bytes, uuids: set[str]) -> bool:
    """Is ``block`` one of the blocks of the records ``uuids``?"""
    for line in src.splitlines():
        rec = orjson.loads(line)
        if rec.get("uuid") in uuids and isinstance(rec.get("message"), dict):
            m = rec["message"]
            if block in conversation_blocks([{"role": m.get("role"), "content": m.get("content")}]):
                return True
    return False


def test_assistant_blank_text_lines_are_not_reported_the_clis_drop_them() -> None:
    # fixtures/real/v2.1.38-tool-heavy.jsonl: responses open with a "\n\n" text line;
    # both CLIs leave it out of the request (probed with the oracle), so it is no finding.
    assert not [
        d for d in validate_bytes(TOOL_HEAVY.read_bytes()).diagnostics if d.code == "empty-text-block"
    ]
    assert api_rules.content_problems([{"type": "text", "text": "\n\n"}], assistant=True) == 0
    assert api_rules.content_problems([{"type": "text", "text": "\n\n"}]) & api_rules.BLANK_TEXT


def test_fixes_clear_their_bits_and_never_mutate_the_input() -> None:
    content = [
        {"type": "text", "text": " "},
        {"type": "thinking", "thinking": "x", "signature": ""},
        {"type": "text", "text": "a\x00b"},
        {"type": "tool_use", "id": "t1", "name": "n" * 201, "input": {"a": 1}},
        {
            "type": "tool_result",
            "tool_use_id": "t0",
            "content": [{"type": "tool_reference", "tool_name": "m" * 65}],
        },
    ]
    snapshot = json.dumps(content)
    bits = api_rules.content_problems(content)
    assert bits & ~api_rules.ALL_GONE == 31
    fixed = api_rules.fix_content(content, bits)
    assert json.dumps(content) == snapshot
    assert api_rules.content_problems(fixed) == 0
    assert fixed[0] == {"type": "text", "text": "a\u2400b"}
    assert fixed[1]["type"] == "text" and "n" * 201 in fixed[1]["text"] and '{"a":1}' in fixed[1]["text"]
    assert fixed[2]["content"] == [{"type": "text", "text": "[tt: tool reference " + "m" * 65 + "]"}]


def test_nul_in_a_tool_input_is_replaced_where_it_is_and_the_call_stays() -> None:
    call = {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "Write",
        "input": {"file_path": "/x", "content": "a\x00b", "opts": [{"k\x00": ["\x00", 3, None]}]},
    }
    content = [call, {"type": "text", "text": "ok"}]
    snapshot = json.dumps(content)
    bits = api_rules.content_problems(content)
    assert bits == api_rules.NUL_IN_INPUT
    fixed = api_rules.fix_content(content, bits)
    assert json.dumps(content) == snapshot and api_rules.content_problems(fixed) == 0
    assert fixed[0] == {
        **call,
        "input": {"file_path": "/x", "content": "a\u2400b", "opts": [{"k\u2400": ["\u2400", 3, None]}]},
    }
    assert fixed[1] is content[1]
    clean = [
        {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls", "n": [1, {"a": "b"}]}}
    ]
    assert api_rules.content_problems(clean) == 0


def test_a_signed_thinking_block_without_its_text_field_is_dropped_an_empty_text_is_not() -> None:
    sig = "EgRhYmNkGAE="  # whole, of the API's shape
    missing = {"type": "thinking", "signature": sig}
    content = [
        missing,
        {"type": "thinking", "thinking": None, "signature": sig},
        {"type": "text", "text": "a"},
    ]
    bits = api_rules.content_problems(content, assistant=True)
    assert bits == api_rules.NO_THINKING_TEXT
    assert api_rules.fix_content(content, bits) == [{"type": "text", "text": "a"}]
    omitted = [{"type": "thinking", "thinking": "", "signature": sig}, {"type": "text", "text": "a"}]
    assert api_rules.content_problems(omitted, assistant=True) == 0
    body, raw = _request([{"role": "user", "content": "hi"}, {"role": "assistant", "content": content[::2]}])
    got = refusal(body, raw)
    assert got is not None and got.message == "messages.1.content.0.thinking.thinking: Field required"


def test_omitted_display_thinking_of_a_real_session_is_not_judged() -> None:
    """fixtures/real/v2.1.237-attachments-chained-parallel-tools.jsonl (claude-fable-5):
    signed thinking blocks with empty text, as the API issues them when a model's thinking
    display is omitted; the API took them back (the next response of the same tool loop
    follows them), so tt reports nothing and neither does the strict stand-in."""
    src = ROOT / "fixtures/real/v2.1.237-attachments-chained-parallel-tools.jsonl"
    recs = [json.loads(x) for x in src.read_bytes().splitlines()]
    hollow = [
        r
        for r in recs
        if r.get("type") == "assistant"
        and any(
            b.get("type") == "thinking" and b.get("thinking") == "" and b.get("signature")
            for b in r["message"]["content"]
        )
    ]
    assert len(hollow) == 15
    kids: dict[str, list[dict]] = {}
    for r in recs:
        kids.setdefault(r.get("parentUuid"), []).append(r)

    def answered(r: dict) -> bool:
        todo, mid = list(kids.get(r["uuid"], [])), r["message"].get("id")
        while todo:
            x = todo.pop(0)
            if x.get("type") == "assistant" and x["message"].get("id") != mid:
                return True
            todo.extend(kids.get(x["uuid"], []))
        return False

    assert sum(map(answered, hollow)) == 14
    codes = {d.code for d in validate_bytes(src.read_bytes()).diagnostics}
    assert "thinking-text-missing" not in codes and "thinking-unsigned" not in codes
    for r in hollow:
        body, raw = _request(
            [{"role": "user", "content": "hi"}, {"role": "assistant", "content": r["message"]["content"]}]
        )
        assert refusal(body, raw) is None


def test_strict_refusals_have_the_bodies_users_report() -> None:
    def msg(content: list[dict]) -> str:
        body, raw = _request([{"role": "user", "content": content}])
        r = refusal(body, raw)
        assert r is not None and r.status == 400 and r.type == "invalid_request_error"
        return r.message

    assert msg([{"type": "text", "text": ""}]) == "messages: text content blocks must be non-empty"
    assert (
        msg([{"type": "text", "text": " \n"}])
        == "messages: text content blocks must contain non-whitespace text"
    )
    assert (
        msg([{"type": "text", "text": "", "cache_control": {"type": "ephemeral"}}])
        == "messages.0.content.0.text: cache_control cannot be set for empty text blocks"
    )
    assert msg([{"type": "text", "text": "a\x00"}]).startswith(
        "The request body is not valid JSON: unexpected end of data"
    )
    body, raw = _request(
        [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "t", "signature": ""},
                    {"type": "text", "text": "ok"},
                ],
            },
        ]
    )
    assert refusal(body, raw).message == "messages.1.content.0: Invalid `signature` in `thinking` block"
    body["messages"][1]["content"][0]["signature"] = "EogDCkYIBRgCKkAbFspga3DT"  # cut short (#21726)
    assert refusal(body, json.dumps(body).encode()).message == (
        "messages.1.content.0: Invalid `signature` in `thinking` block"
    )
    use = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}
    res = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}
    body, raw = _request(
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [res]},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [res]},
        ]
    )
    assert refusal(body, raw).message == "messages.3.content.0: `tool_use` ids must be unique"
    body, raw = _request(
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [{**res, "content": "", "is_error": True}]},
        ]
    )
    assert (
        refusal(body, raw).message
        == "messages.2.content.0.tool_result: content cannot be empty if `is_error` is true"
    )
    body, raw = _request(
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{**use, "name": "x" * 201}]},
            {"role": "user", "content": [res]},
        ]
    )
    assert (
        refusal(body, raw).message
        == "messages.1.content.0.tool_use.name: String should have at most 200 characters"
    )


def test_real_signatures_are_whole_and_their_cut_prefixes_are_not() -> None:
    """Every signature the API issued in fixtures/real (Claude Code 2.0 to 2.1.332) passes;
    each cut to 24 characters (#21726) or to half its length is caught, and the strict
    stand-in refuses it."""
    sigs = {
        m.group(1).decode()
        for p in (ROOT / "fixtures/real").rglob("*.jsonl")
        for m in re.finditer(rb'"signature":"([A-Za-z0-9+/=]{40,})"', p.read_bytes())
    }
    assert len(sigs) > 200
    for sig in sigs:
        assert not api_rules.signature_cut(sig), sig
        for cut in (sig[:24], sig[: len(sig) // 2]):
            assert api_rules.signature_cut(cut), cut
            body, raw = _request(
                [{"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": cut}]}]
            )
            assert refusal(body, raw) is not None
    # Of every prefix, all but those ending exactly on a field boundary are caught.
    prefixes = [sig[:k] for sig in sigs for k in range(1, len(sig))]
    missed = sum(1 for p in prefixes if not api_rules.signature_cut(p))
    assert missed / len(prefixes) < 0.001, (missed, len(prefixes))
    # Signatures of another shape than the API's are not judged: the stand-in's own, a
    # fixture's placeholder.
    assert not api_rules.signature_cut("c3RhbmRpbg==")
    assert not api_rules.signature_cut("[trimmed for fixture]")


def test_resume_conversation_renames_a_duplicate_id_with_its_result() -> None:
    d = API_KINDS["tool-use-id-duplicate"](REAL.read_bytes())
    conv = build(Session.from_entries([e for ln in decoded(d.data) for e in ln.entries]))
    ids = [
        b["id"]
        for m in conv.messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_use"
    ]
    assert len(ids) == len(set(ids)) and any(i.endswith("_dup2") for i in ids)
    answered = {
        b["tool_use_id"]
        for m in conv.messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    }
    assert set(ids) <= answered


def _ids(messages: list[dict]) -> tuple[list[str], list[str]]:
    """(every tool_use id, every tool_result tool_use_id) of a request, in order."""
    blocks = [b for m in messages if isinstance(m["content"], list) for b in m["content"]]
    return (
        [b["id"] for b in blocks if b.get("type") == "tool_use"],
        [b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"],
    )


def test_valid_tool_id_keeps_ids_apart_and_is_a_function_of_the_id() -> None:
    ok = api_rules.tool_id_ok
    got = {
        old: api_rules.valid_tool_id(old) for old in ["functions.Bash:0", "functions.Bash_0", "a b", "", "é"]
    }
    assert all(ok(new) for new in got.values()) and len(set(got.values())) == len(got)
    assert (
        got["functions.Bash:0"] == "functions_Bash_0_" + hashlib.sha256(b"functions.Bash:0").hexdigest()[:8]
    )
    assert ok("toolu_01AbC-9") and not ok("functions.Bash:0") and not ok("") and not ok("tool\n")
    bits = api_rules.content_problems
    assert bits([{"type": "tool_use", "id": "toolu_1", "name": "n", "input": {}}], True) == 0
    assert bits([{"type": "tool_use", "id": "a:1", "name": "n", "input": {}}], True) & api_rules.BAD_TOOL_ID
    assert bits([{"type": "tool_use", "name": "n", "input": {}}], True) & api_rules.BAD_TOOL_ID
    assert bits([{"type": "tool_result", "tool_use_id": "a.1", "content": "x"}]) & api_rules.BAD_TOOL_ID


def test_an_invalid_id_used_twice_is_renamed_and_told_apart_in_repair_and_resume(tmp_path: Path) -> None:
    # Both rules on the same calls: the duplicate's rename names the old id, so the
    # pattern's rename comes last (in repair's record edit and in the resume alike); each
    # call keeps its own result.
    d = API_KINDS["tool-use-id-duplicate"](REAL.read_bytes())
    [dup] = [x for x in validate_bytes(d.data).diagnostics if x.code == "tool-use-id-duplicate"]
    old = dup.message.split()[2]  # "tool_use id <id> is used by an earlier call too"
    assert d.data.count(old.encode()) == 4  # two calls, two results
    data = d.data.replace(old.encode(), b"functions.Read:1")
    report = validate_bytes(data)
    assert {"tool-use-id-duplicate", "tool-use-id-invalid"} <= {x.code for x in report.diagnostics}
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(data)
    fixed = repair_bytes(data)
    check_accounting(data, fixed)
    assert validate_bytes(fixed.data).errors == 0
    out = tmp_path / "fixed.jsonl"
    out.write_bytes(fixed.data)
    for sent in (_sent(damaged), _sent(out)):
        body, raw = _request(sent)
        assert refusal(body, raw) is None, refusal(body, raw)
        uses, results = _ids(sent)
        assert len(uses) == len(set(uses)) and set(uses) == set(results), (uses, results)
        # The readable part with "_", then 8 hex digits of the old id's SHA-256 (README).
        for old_id, readable in (
            ("functions.Read:1", "functions_Read_1"),
            ("functions.Read:1_dup2", "functions_Read_1_dup2"),
        ):
            digest = hashlib.sha256(old_id.encode()).hexdigest()[:8]
            assert f"{readable}_{digest}" in uses, (old_id, uses)


def test_a_call_or_a_result_without_an_id_is_kept_as_text(tmp_path: Path) -> None:
    # No id at all (a hand-made or another tool's record): the API says "Field required".
    # No result can answer a call without an id: the call is kept as text, as is a result
    # that names no call.
    src = REAL.read_bytes()
    lines = src.splitlines(keepends=True)
    at = max(i for i, ln in enumerate(lines) if b'"type":"tool_use"' in ln)  # the last: on the chain sent
    rec = orjson.loads(lines[at])
    call = next(b for b in rec["message"]["content"] if b["type"] == "tool_use")
    tid = call.pop("id")
    lines[at] = orjson.dumps(rec) + b"\n"
    answer = next(i for i, ln in enumerate(lines) if f'"tool_use_id":"{tid}"'.encode() in ln)
    rec = orjson.loads(lines[answer])
    next(b for b in rec["message"]["content"] if b.get("tool_use_id") == tid).pop("tool_use_id")
    lines[answer] = orjson.dumps(rec) + b"\n"
    data = b"".join(lines)
    codes = [x.code for x in validate_bytes(data).diagnostics if x.severity.value == "error"]
    assert "tool-use-id-invalid" in codes
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(data)
    fixed = repair_bytes(data)
    check_accounting(data, fixed)
    out = tmp_path / "fixed.jsonl"
    out.write_bytes(fixed.data)
    assert not [x for x in validate_bytes(fixed.data).diagnostics if x.code == "tool-use-id-invalid"]
    for sent in (_sent(damaged), _sent(out)):
        body, raw = _request(sent)
        assert refusal(body, raw) is None, refusal(body, raw)
        texts = [b.get("text", "") for m in sent if isinstance(m["content"], list) for b in m["content"]]
        assert any(
            t.startswith("[tt: a tool call without an id to a tool named " + call["name"]) for t in texts
        )
        assert any(t.startswith("[tt: result of a tool call it names by no id") for t in texts)


def _ends_on_a_call(call_id: str, earlier: bool = False) -> tuple[bytes, str]:
    """The real session cut right after its last call (the session ended mid-tool), that
    call's id set to ``call_id``; with ``earlier``, an earlier call of the conversation
    sent takes the same id (a reused id). Returns (data, the call's original id)."""
    lines = REAL.read_bytes().splitlines(keepends=True)
    calls = [i for i, ln in enumerate(lines) if b'"type":"tool_use"' in ln]
    last = calls[-1]
    old = next(
        b["id"] for b in orjson.loads(lines[last])["message"]["content"] if b.get("type") == "tool_use"
    )
    kept = lines[: last + 1]
    kept[last] = kept[last].replace(old.encode(), call_id.encode())
    if earlier:
        prev = calls[-2]
        prior = next(
            b["id"] for b in orjson.loads(lines[prev])["message"]["content"] if b.get("type") == "tool_use"
        )
        kept = [ln.replace(prior.encode(), call_id.encode()) for ln in kept]
    return b"".join(kept), old


@pytest.mark.parametrize("reused", [False, True])
@pytest.mark.parametrize("call_id", ["functions.Grep:0", "toolu_same"])
def test_an_unanswered_call_is_answered_under_the_id_it_is_written_with(call_id: str, reused: bool) -> None:
    # Review of round 9: the result repair adds for an unanswered call named the call's old
    # id when the call's id was renamed (an id of another provider's shape, or a reused one
    # renamed `_dup2` in the same round): an orphan, and the call unanswered again.
    data, _ = _ends_on_a_call(call_id, earlier=reused)
    report = validate_bytes(data)
    codes = {x.code for x in report.diagnostics}
    assert "tool-use-unpaired" in codes
    assert ("tool-use-id-duplicate" in codes) == reused
    assert ("tool-use-id-invalid" in codes) == (call_id != "toolu_same")
    fixed = repair_bytes(data)
    check_accounting(data, fixed)
    assert validate_bytes(fixed.data).errors == 0, [
        x.to_dict() for x in validate_bytes(fixed.data).diagnostics
    ]
    added = [a for a in fixed.plan.actions if a.fix == "add-interrupted-result"]
    assert len(added) == 1, added
    last_call, answer = (orjson.loads(x) for x in fixed.data.splitlines()[-2:])
    [call] = [b for b in last_call["message"]["content"] if b.get("type") == "tool_use"]
    assert api_rules.tool_id_ok(call["id"]) and answer["message"]["content"][0]["tool_use_id"] == call["id"]


def test_two_calls_of_one_message_sharing_an_id_keep_their_results_apart(tmp_path: Path) -> None:
    # Review of round 9 (an older bug): repair renamed both calls of the message each round
    # (`_dup2_dup2…`, 32 rounds, the duplicate left), and resume gave both results the new id.
    # The first call keeps the id and its result; the second, and its result, get `_dup2`.
    lines = REAL.read_bytes().splitlines(keepends=True)
    at = max(i for i, ln in enumerate(lines) if ln.count(b'"type":"tool_use"') == 1)
    call = orjson.loads(lines[at])
    [block] = [b for b in call["message"]["content"] if b.get("type") == "tool_use"]
    twin = {**block, "input": {**block["input"], "twin": True}}
    call["message"]["content"].append(twin)
    lines[at] = orjson.dumps(call) + b"\n"
    answer = next(i for i in range(at + 1, len(lines)) if block["id"].encode() in lines[i])
    res = orjson.loads(lines[answer])
    [got] = [b for b in res["message"]["content"] if b.get("tool_use_id") == block["id"]]
    res["message"]["content"].append({**got, "content": "the twin's output"})
    lines[answer] = orjson.dumps(res) + b"\n"
    data = b"".join(lines)
    assert "tool-use-id-duplicate" in {x.code for x in validate_bytes(data).diagnostics}
    fixed = repair_bytes(data)
    check_accounting(data, fixed)
    assert validate_bytes(fixed.data).errors == 0
    assert (
        len([a for a in fixed.plan.actions if a.fix == "rename-duplicate-tool-id"]) == 2
    )  # one call, one result
    damaged, out = tmp_path / "damaged.jsonl", tmp_path / "fixed.jsonl"
    damaged.write_bytes(data)
    out.write_bytes(fixed.data)
    new = block["id"] + "_dup2"
    for sent in (_sent(damaged), _sent(out)):
        body, raw = _request(sent)
        assert refusal(body, raw) is None, refusal(body, raw)
        blocks = [b for m in sent if isinstance(m["content"], list) for b in m["content"]]
        calls = {b["id"]: b["input"] for b in blocks if b.get("type") == "tool_use"}
        outputs = {b["tool_use_id"]: b["content"] for b in blocks if b.get("type") == "tool_result"}
        assert calls[block["id"]] == block["input"] and calls[new] == twin["input"]
        assert outputs[block["id"]] == got["content"] and outputs[new] == "the twin's output"


# --- item 4: raw line separators inside JSON strings ------------------------------------

_SEPARATORS = "\u2028\u2029\u0085"


def _with_separators(src: bytes) -> tuple[bytes, int, str]:
    """The real transcript with a user prompt's text holding raw U+2028, U+2029, U+0085
    (as JSON.stringify writes them: unescaped). Returns (data, line number, the text)."""
    lines = src.splitlines(keepends=True)
    for n in reversed(range(len(lines))):  # the last prompt: on the chain a resume sends
        line = lines[n]
        rec = orjson.loads(line)
        if (
            rec.get("type") == "user"
            and isinstance(rec.get("message", {}).get("content"), str)
            and not rec.get("isMeta")
        ):
            text = (
                rec["message"]["content"]
                + f" one{_SEPARATORS[0]}two{_SEPARATORS[1]}three{_SEPARATORS[2]}four"
            )
            rec["message"]["content"] = text
            new = orjson.dumps(rec)
            assert "\u2028".encode() in new  # written raw, not escaped
            lines[n] = new + b"\n"
            return b"".join(lines), n + 1, text
    raise AssertionError("no user prompt")


def test_a_record_with_raw_line_separators_is_never_split(tmp_path: Path) -> None:
    src = REAL.read_bytes()
    data, line, text = _with_separators(src)
    # The known reader that splits there: Python's str.splitlines.
    assert len(data.decode().splitlines()) == len(src.decode().splitlines()) + 3
    # tt's reader: the same records, the text whole.
    entries = [e for ln in decoded(data) for e in ln.entries]
    assert len(entries) == len([e for ln in decoded(src) for e in ln.entries])
    assert any(e.record.get("message", {}).get("content") == text for e in entries)
    # tt validate: one warning where such a reader would split, nothing else.
    report = validate_bytes(data)
    assert [(d.code, d.line) for d in report.diagnostics] == [("line-separator", line)]
    assert report.errors == 0 and "U+2028/U+2029/U+0085" in report.diagnostics[0].message
    # tt repair: nothing to fix, byte for byte.
    assert repair_bytes(data).data == data
    # tt resume: the prompt is sent whole.
    p = tmp_path / "s.jsonl"
    p.write_bytes(data)
    assert text in _texts(_sent(p))


def _texts(messages: list[dict]) -> list[str]:
    return [
        t
        for m in messages
        for t in (
            [m["content"]]
            if isinstance(m["content"], str)
            else [x.get("text") for x in m["content"] if isinstance(x, dict)]
        )
        if isinstance(t, str)
    ]


@pytest.mark.claude
def test_claude_code_reads_a_record_with_raw_line_separators_whole(
    claude_332: object, faketime: None, tmp_path: Path
) -> None:
    """Claude Code 2.1.332 sends that prompt whole too: it and tt agree on one record."""
    from tests.model.test_conversation import CLOCKS, _oracle_request

    data, _, text = _with_separators(REAL.read_bytes())
    p = tmp_path / REAL.name
    p.write_bytes(data)
    request = _oracle_request(claude_332, p, "Separator probe", CLOCKS["2026-12-01"])
    assert any(text in t for t in _texts(request.messages))


def test_image_sizes_are_read_from_png_gif_jpeg_and_webp_headers() -> None:
    import base64
    import struct

    from tests.damage import png

    def block(data: bytes) -> dict:
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": "x", "data": base64.b64encode(data).decode()},
        }

    assert api_rules.image_size(block(png(2100, 7))) == (2100, 7)
    assert api_rules.image_size(block(b"GIF89a" + struct.pack("<HH", 300, 40) + b"\0" * 20)) == (300, 40)
    # JPEG: SOI, an APP0 segment, then SOF0 with height 500 and width 9000.
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0" + b"\0" * 9
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, 500, 9000, 1) + b"\x01\x11\x00"
    assert api_rules.image_size(block(b"\xff\xd8" + app0 + sof0 + b"\xff\xd9")) == (9000, 500)
    vp8x = (
        b"RIFF"
        + b"\0" * 4
        + b"WEBPVP8X"
        + b"\0" * 8
        + (2999).to_bytes(3, "little")
        + (99).to_bytes(3, "little")
    )
    assert api_rules.image_size(block(vp8x)) == (3000, 100)
    assert api_rules.image_size(block(b"not an image at all")) is None
    assert (
        api_rules.content_problems([block(png(8100, 2))]) & api_rules.RULE_MASK
        == api_rules.HUGE_IMAGE | api_rules.WIDE_IMAGE
    )
    assert api_rules.content_problems([block(png(2100, 2))]) >> api_rules.IMAGES_SHIFT == 1


def test_many_wide_images_are_refused_only_past_twenty() -> None:
    import base64

    from tests.damage import png

    img = {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": "image/png",
            "data": base64.b64encode(png(2100, 2)).decode(),
        },
    }
    for n, refused in ((20, False), (21, True)):
        body, raw = _request([{"role": "user", "content": [{"type": "text", "text": "look"}, *([img] * n)]}])
        r = refusal(body, raw)
        assert (r is not None) == refused
        if refused:
            assert r.message.endswith(
                "At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels"
            )
        report = validate_bytes(_one_prompt(REAL.read_bytes(), [img] * n))
        assert ("image-dimensions-too-large" in {d.code for d in report.diagnostics}) == refused


def _one_prompt(src: bytes, images: list[dict]) -> bytes:
    lines = src.splitlines(keepends=True)
    for n in reversed(range(len(lines))):
        rec = orjson.loads(lines[n])
        c = rec.get("message", {}).get("content") if rec.get("type") == "user" else None
        if isinstance(c, str) and not rec.get("isMeta"):
            rec["message"]["content"] = [{"type": "text", "text": c}, *images]
            lines[n] = orjson.dumps(rec) + b"\n"
            return b"".join(lines)
    raise AssertionError("no prompt")


def test_strict_stand_in_answers_over_http_as_the_api_does() -> None:
    import anthropic

    from tests.support.standin import StandIn

    with StandIn(strict=True) as api:
        client = anthropic.Anthropic(base_url=api.base_url, api_key="k", max_retries=0)
        with pytest.raises(anthropic.BadRequestError) as e:
            client.messages.create(
                model="claude-x",
                max_tokens=10,
                messages=[
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": ""}],
                    }
                ],
            )
        assert e.value.status_code == 400
        assert e.value.body == {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "messages: text content blocks must be non-empty",
            },
            "request_id": e.value.body["request_id"],
        }
        ok = client.messages.create(
            model="claude-x", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
        assert ok.content
        assert len(api.message_requests) == 2


def tt_resume_strict(data: bytes, scratch: Path) -> tuple[list[str], int, str]:
    """``tt resume FILE -p "Go on"`` on a session file holding ``data``, against the strict
    stand-in, at a pinned clock: (the 400 messages it got, exit code, stdout)."""
    import os
    import subprocess

    from tests.support.standin import ApiError, StandIn

    sid = next(
        (
            r["sessionId"]
            for r in map(orjson.loads, data.splitlines()[:50])
            if isinstance(r.get("sessionId"), str)
        ),
        "s",
    )
    p = scratch / f"{sid}.jsonl"
    p.write_bytes(data)
    work = scratch / "work"
    work.mkdir(exist_ok=True)
    with StandIn(strict=True) as api:
        env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "k",
            "ANTHROPIC_BASE_URL": api.base_url,
            "PYTHONPATH": str(ROOT),
            "TT_NOW": "2026-12-01T12:00:00Z",
        }
        r = subprocess.run(
            [
                *TT,
                "resume",
                str(p),
                "-p",
                "Go on",
                "--output-format",
                "json",
                "--cwd",
                str(work),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        refused = [e.reply.message for e in api.exchanges if isinstance(e.reply, ApiError)]
        if not api.message_requests:
            refused.append(f"no request sent: {r.stderr.strip()[-300:]}")
    return refused, r.returncode, r.stdout


@pytest.mark.parametrize("kind", sorted(API_KINDS))
def test_tt_resume_of_each_damaged_shape_is_accepted_by_the_strict_stand_in(
    kind: str, tmp_path: Path
) -> None:
    """End to end: ``tt resume FILE -p ...`` on the damaged file, against the strict
    stand-in: every request it sends is accepted and the turn completes."""
    refused, code, out = tt_resume_strict(API_KINDS[kind](REAL.read_bytes()).data, tmp_path)
    assert refused == []
    assert code == 0 and json.loads(out)["is_error"] is False


def test_repair_of_many_wide_images_beside_another_rule_leaves_nothing_refused(tmp_path: Path) -> None:
    import base64

    from tests.damage import png

    img = {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": "image/png",
            "data": base64.b64encode(png(2100, 2)).decode(),
        },
    }
    data = _one_prompt(REAL.read_bytes(), [{"type": "text", "text": ""}, *([img] * 21)])
    assert {"empty-text-block", "image-dimensions-too-large"} <= {
        d.code for d in validate_bytes(data).diagnostics
    }
    fixed = repair_bytes(data)
    check_accounting(data, fixed)
    assert validate_bytes(fixed.data).errors == 0
    out = tmp_path / "f.jsonl"
    out.write_bytes(fixed.data)
    body, raw = _request(_sent(out))
    assert refusal(body, raw) is None


@pytest.mark.claude
@pytest.mark.parametrize("version", ["2.1.332", "2.1.197"])
def test_both_clis_leave_blank_assistant_text_out_of_the_request(version: str, faketime: None) -> None:
    """Why `api_rules.content_problems` does not report blank text in assistant messages:
    fixtures/real/v2.1.38-tool-heavy.jsonl has responses opening with a "\\n\\n" text line,
    and neither CLI sends such a block."""
    from tests.conftest import require_cli
    from tests.model.test_conversation import CLOCKS, _oracle_request

    assert b'"text":"\\n\\n"' in TOOL_HEAVY.read_bytes()
    request = _oracle_request(require_cli(version), TOOL_HEAVY, "Blank probe", CLOCKS["2026-12-01"])
    blanks = [
        b
        for m in request.messages
        if m["role"] == "assistant" and isinstance(m["content"], list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "text" and not str(b.get("text", "")).strip()
    ]
    assert request.messages and blanks == []
