"""Repair's core on real transcripts: each damage kind found, fixed by the fix its
validate code names, nothing lost, and a clean file left alone.

Damage is applied to real transcripts by `tests.damage`; the checks run the core on
bytes (`damage.repair_bytes`), the same code ``tt repair`` streams files through.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests import damage
from tests.damage import (
    KINDS,
    NOW,
    check_accounting,
    decoded,
    id_source,
    raw_lines,
    repair_bytes,
    validate_bytes,
)
from tests.support.paths import REAL
from transcript_tools.edge.loader import load_session
from transcript_tools.model.conversation import INTERRUPTED_TOOL_RESULT
from transcript_tools.model.diagnostics import CODES
from transcript_tools.repair.core import RepairOptions, original_bytes, repaired_entries

S332 = REAL / "claude-config-2.1.332/projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
S197 = REAL / "claude-config-2.1.197/projects/-home-dev-demo-app/8c2f9135-4610-4218-97b1-bc3e03643255.jsonl"
S2028 = REAL / "v2.0.28-project/-Users-zawakin-agent-sample/7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9.jsonl"
PARALLEL = REAL / "v2.1.237-attachments-chained-parallel-tools.jsonl"
TOOL_HEAVY = REAL / "v2.1.38-tool-heavy.jsonl"
IMAGE = REAL / "v2.1.29-user-image-partial-copy.jsonl"

#: Real transcripts the damage matrix runs on (2.0.28 has responses of several lines
#: followed by a prompt, which the split-message damage needs).
MATRIX = {
    "cc-2.1.332": S332,
    "cc-2.1.197": S197,
    "cc-2.1.237": PARALLEL,
    "cc-2.1.38": TOOL_HEAVY,
    "cc-2.0.28": S2028,
}

#: Fixes other than CODES[code].fix that resolve a code (a torn record with no whole one
#: after it, e.g. a destroyed line's child relinked by its own fix).
_ALSO = {"tool-result-orphan": {"orphan-result-to-text"}}


def _records(data: bytes) -> list[dict[str, Any]]:
    return [e.record for ln in decoded(data) for e in ln.entries]


def _errors(report: Any) -> list[tuple[str, int | None]]:
    return [(d.code, d.line) for d in report.diagnostics if d.severity.value == "error"]


def _applicable() -> list[tuple[str, str]]:
    out = []
    for kind, fn in KINDS.items():
        for name, path in MATRIX.items():
            try:
                fn(path.read_bytes())
            except ValueError:
                continue  # e.g. no compact boundary in that transcript
            out.append((kind, name))
    return out


APPLICABLE = _applicable()


def test_every_damage_kind_has_real_transcripts_to_damage() -> None:
    assert {k for k, _ in APPLICABLE} == set(KINDS)


@pytest.mark.parametrize(("kind", "source"), APPLICABLE, ids=[f"{k}-{s}" for k, s in APPLICABLE])
def test_damage_is_found_fixed_and_nothing_is_lost(kind: str, source: str) -> None:
    d = KINDS[kind](MATRIX[source].read_bytes())
    found = {x.code for x in validate_bytes(d.data).diagnostics}
    assert set(d.codes) <= found, f"validate missed {set(d.codes) - found}"
    r = repair_bytes(d.data)
    fixes = {a.fix for a in r.plan.actions}
    for code in d.codes:
        assert CODES[code].fix in fixes or fixes & _ALSO.get(code, set()), (code, fixes)
    assert _errors(validate_bytes(r.data)) == []
    assert r.plan.remaining == []
    check_accounting(d.data, r)
    again = repair_bytes(r.data)
    assert again.plan.identity and again.data == r.data and again.quarantine == []


def test_every_action_names_a_code_and_its_fix() -> None:
    for kind, fn in KINDS.items():
        try:
            d = fn(S332.read_bytes())
        except ValueError:
            continue
        for a in repair_bytes(d.data).plan.actions:
            assert a.code in CODES, (kind, a)
            assert a.fix == CODES[a.code].fix or a.fix in _ALSO.get(a.code, ()), (kind, a)


# --- each fix, looked at closely --------------------------------------------------------


def test_torn_tail_is_cut_to_quarantine() -> None:
    src = S332.read_bytes()
    d = damage.torn_tail(src)
    r = repair_bytes(d.data)
    (q,) = r.quarantine
    torn = d.data[d.data.rindex(b"\n") + 1 :]
    assert (q["reason"], q["fix"], q["text"].encode(), q["output_lines"]) == (
        "torn-tail",
        "cut-torn-tail",
        torn,
        [],
    )
    assert q["offset"] == len(d.data) - len(torn)
    assert r.data == d.data[: q["offset"]]


def test_fused_line_keeps_the_whole_record_byte_for_byte() -> None:
    # A message line torn, and the metadata record after it written straight on.
    src = S332.read_bytes()
    lines = src.splitlines(keepends=True)
    i = next(
        k
        for k in range(150, len(lines))
        if b'"type":"assistant"' in lines[k] and b'"type":"last-prompt"' in lines[k + 1]
    )
    torn = lines[i][: len(lines[i]) // 2]
    data = b"".join([*lines[:i], torn + lines[i + 1], *lines[i + 2 :]])
    r = repair_bytes(data)
    assert lines[i + 1] in r.data.splitlines(keepends=True)
    q = next(q for q in r.quarantine if q["line"] == i + 1)
    assert q["reasons"][0] == {
        "code": "fused-records",
        "fix": "split-fused",
        "offset": len(b"".join(lines[:i])),
        "length": len(torn),
    }
    assert original_bytes(q) == torn + lines[i + 1]
    check_accounting(data, r)


def test_fused_tool_call_keeps_its_result_as_text() -> None:
    # The torn record was a tool call: its result, kept, becomes plain text (FORMAT §0a:
    # Claude Code itself loses both without a word).
    d = damage.fused_records(S332.read_bytes())
    (ln,) = [ln for ln in decoded(d.data) if ln.pieces]
    (whole,) = ln.entries
    out = next(x for x in _records(repair_bytes(d.data).data) if x.get("uuid") == whole.uuid)
    (text,) = out["message"]["content"]
    assert text["type"] == "text" and text["text"].startswith("[tt repair: result of tool call")


def test_nul_run_goes_and_the_record_after_it_stays() -> None:
    d = damage.nul_run(S332.read_bytes())
    r = repair_bytes(d.data)
    assert b"\x00" not in r.data
    assert r.data == S332.read_bytes()
    (q,) = r.quarantine
    assert q["reasons"][0] == {
        "code": "nul-run",
        "fix": "quarantine-bytes",
        "offset": q["offset"],
        "length": damage.NUL_RUN,
    }


@pytest.mark.parametrize("kind", ["garbage", "not-object", "crlf", "bom", "duplicate-line", "duplicate-uuid"])
def test_line_damage_repairs_back_to_the_original_bytes(kind: str) -> None:
    src = S332.read_bytes()
    r = repair_bytes(KINDS[kind](src).data)
    assert r.data == src
    assert r.quarantine


def test_garbage_quarantine_keeps_the_bytes_in_base64() -> None:
    d = damage.garbage(S332.read_bytes())
    (q,) = repair_bytes(d.data).quarantine
    assert "text" not in q and base64.b64decode(q["base64"]) == damage.GARBAGE


@pytest.mark.parametrize("kind", ["invalid-utf8", "lone-surrogate"])
def test_bad_text_becomes_replacement_characters_in_claude_code_form(kind: str) -> None:
    src = S332.read_bytes()
    d = KINDS[kind](src)
    r = repair_bytes(d.data)
    (q,) = r.quarantine
    changed = r.data.splitlines()[q["output_lines"][0] - 1]
    rec = orjson.loads(changed)
    assert "\ufffd" in changed.decode("utf-8")
    assert changed == orjson.dumps(rec)  # compact, as JSON.stringify writes it
    # Only that line changed; the rest is byte for byte.
    assert len(r.data.splitlines()) == len(src.splitlines())
    assert sum(a != b for a, b in zip(r.data.splitlines(), src.splitlines(), strict=True)) == 1
    if kind == "invalid-utf8":
        assert base64.b64decode(q["base64"]) == d.data.splitlines(keepends=True)[q["line"] - 1]


def test_duplicate_uuid_keeps_the_first() -> None:
    d = damage.duplicate_uuid(S332.read_bytes())
    r = repair_bytes(d.data)
    (q,) = r.quarantine
    assert q["reason"] == "duplicate-uuid" and q["output_lines"] == []
    assert b"-other" in q["text"].encode() and b"-other" not in r.data


def _parent_map(data: bytes) -> dict[str, Any]:
    return {r["uuid"]: r.get("parentUuid") for r in _records(data) if isinstance(r.get("uuid"), str)}


def test_dangling_parent_takes_the_previous_entry_of_its_chain() -> None:
    src = S332.read_bytes()
    d = damage.dangling_parent(src)
    (gone,) = d.destroyed
    before = _parent_map(src)
    (orphan,) = [u for u, p in before.items() if p == gone]
    r = repair_bytes(d.data)
    after = _parent_map(r.data)
    assert after[orphan] == before[gone]  # the deleted line's own parent: the line before it
    (a,) = [a for a in r.plan.actions if a.fix == "relink-parent"]
    assert a.uuid == orphan and gone in a.detail


def test_dangling_logical_parent_is_relinked() -> None:
    d = damage.dangling_logical_parent(S332.read_bytes())
    r = repair_bytes(d.data)
    (b,) = [x for x in _records(r.data) if x.get("subtype") == "compact_boundary"]
    assert b["logicalParentUuid"] in _parent_map(r.data)
    assert {a.fix for a in r.plan.actions} == {"relink-logical-parent"}


def test_cycle_is_broken_back_to_the_original_link() -> None:
    src = S332.read_bytes()
    r = repair_bytes(damage.cycle(src).data)
    assert _parent_map(r.data) == _parent_map(src)


def test_interrupted_tool_call_gets_the_result_claude_code_writes() -> None:
    d = damage.tool_use_unpaired(S332.read_bytes())
    r = repair_bytes(d.data)
    recs = _records(r.data)
    call, added = recs[-2], recs[-1]
    (use,) = call["message"]["content"]
    expected: dict[str, Any] = {
        "parentUuid": call["uuid"],
        "isSidechain": False,
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "content": INTERRUPTED_TOOL_RESULT,
                    "is_error": True,
                    "tool_use_id": use["id"],
                }
            ],
        },
        "uuid": added["uuid"],
        "timestamp": call["timestamp"],  # its neighbour's time, not the clock (issue 18.3)
        # 2.1.332's words for a call the session ended in (not 1.0.51's "[Request interrupted
        # by user for tool use]", which is Esc pressed mid-tool): what it writes on resume,
        # tests/repair/test_interrupted_claude.py.
        "toolUseResult": INTERRUPTED_TOOL_RESULT,
        "toolDenialKind": "interrupted",
        "sourceToolAssistantUUID": call["uuid"],
        **{
            k: call[k]
            for k in ("userType", "entrypoint", "cwd", "sessionId", "version", "gitBranch", "slug")
            if k in call
        },
    }
    assert added == expected
    assert added["uuid"] not in _parent_map(d.data)
    assert r.data.startswith(d.data)  # the input untouched, the result appended
    assert r.quarantine == []


def test_interrupted_call_mid_file_is_chained_in() -> None:
    # A tool result line destroyed mid-file: the call is unanswered, and what came after
    # the result must now come after the added one (or a resume would drop it).
    src = S332.read_bytes()
    lines = src.splitlines(keepends=True)
    recs = _records(src)
    i = next(
        k for k, rec in enumerate(recs) if rec.get("type") == "user" and "toolUseResult" in rec and k > 150
    )
    data = b"".join(lines[:i] + lines[i + 1 :])
    r = repair_bytes(data)
    fixes = [a.fix for a in r.plan.actions]
    assert fixes.count("add-interrupted-result") == 2  # the result added, the next line relinked
    out = _records(r.data)
    added = next(x for x in out if x.get("toolUseResult") == INTERRUPTED_TOOL_RESULT)
    assert added["parentUuid"] == recs[i]["parentUuid"]
    child = next(x for x in out if x.get("parentUuid") == added["uuid"])
    assert child["uuid"] == next(x["uuid"] for x in recs if x.get("parentUuid") == recs[i]["uuid"])
    assert _errors(validate_bytes(r.data)) == []


def test_orphan_result_kept_as_text_or_dropped() -> None:
    src = S332.read_bytes()
    d = damage.tool_result_orphan(src)
    (gone,) = d.destroyed
    result = next(x for x in _records(src) if x.get("parentUuid") == gone and "toolUseResult" in x)
    (block,) = result["message"]["content"]
    kept = next(x for x in _records(repair_bytes(d.data).data) if x.get("uuid") == result["uuid"])
    (text,) = kept["message"]["content"]
    assert text == {
        "type": "text",
        "text": f"[tt repair: result of tool call {block['tool_use_id']}, whose tool_use was lost]\n{block['content']}",
    }
    dropped = repair_bytes(d.data, RepairOptions(drop_orphans=True))
    assert result["uuid"] not in _parent_map(dropped.data)
    assert "drop-orphan-result" in {a.fix for a in dropped.plan.actions}
    assert _errors(validate_bytes(dropped.data)) == []
    check_accounting(d.data, dropped)


def test_split_response_is_regrouped_to_its_original_links() -> None:
    src = S2028.read_bytes()
    d = damage.split_message(src)
    r = repair_bytes(d.data)
    assert {a.fix for a in r.plan.actions} == {"regroup-split-message"}
    assert _parent_map(r.data) == _parent_map(src)


# --- opt-in fixes -------------------------------------------------------------------------


def test_strip_thinking_removes_thinking_and_relinks_around_emptied_lines() -> None:
    src = PARALLEL.read_bytes()
    r = repair_bytes(src, RepairOptions(strip_thinking=True))
    recs = _records(r.data)
    kinds = {b.get("type") for x in recs if x.get("type") == "assistant" for b in x["message"]["content"]}
    assert "thinking" not in kinds and "text" in kinds
    assert _errors(validate_bytes(r.data)) == []
    check_accounting(src, r)
    assert all(a.code is None and a.fix == "strip-thinking" for a in r.plan.actions)


def test_max_image_bytes_replaces_big_images_with_a_placeholder() -> None:
    src = IMAGE.read_bytes()
    r = repair_bytes(src, RepairOptions(max_image_bytes=1000))
    assert b'"type":"image"' in src and b'"type":"image"' not in r.data
    assert b"[tt repair: a image/png image of" in r.data
    assert {a.fix for a in r.plan.actions} >= {"shrink-image"}
    check_accounting(src, r)


# --- the in-memory API (loader, resume, fork, show) -----------------------------------------


def test_repaired_entries_on_a_clean_file_are_the_input_entries() -> None:
    lines = decoded(S332.read_bytes())
    entries, actions = repaired_entries(lines, now=NOW, new_id=id_source())
    assert actions == []
    assert [id(e) for e in entries] == [id(e) for ln in lines for e in ln.entries]


def test_repaired_entries_match_what_tt_repair_writes() -> None:
    d = damage.tool_use_unpaired(damage.fused_records(S332.read_bytes()).data)
    entries, actions = repaired_entries(iter(decoded(d.data)), now=NOW, new_id=id_source())
    written = repair_bytes(d.data)
    assert [e.raw for e in entries] == [x[2] for x in raw_lines(written.data)]
    assert actions == written.plan.actions


def test_loader_resumes_a_damaged_file_as_repaired(tmp_path: Path) -> None:
    p = tmp_path / "4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
    p.write_bytes(damage.tool_use_unpaired(S332.read_bytes()).data)
    loaded = load_session(p)
    last = loaded.session.messages()[-1]
    assert last.record["toolUseResult"] == INTERRUPTED_TOOL_RESULT
    assert [a.fix for a in loaded.actions] == ["add-interrupted-result"]
    assert p.read_bytes() == damage.tool_use_unpaired(S332.read_bytes()).data  # never written


@pytest.mark.parametrize(
    "name",
    [
        "handwritten-2.1.80-2.1.220-trimmed-composite.jsonl",
        "handwritten-edge-cases-not-object-lines.jsonl",
        "v2.0.76-compact-boundary-partial-copy.jsonl",
        "v2.1.17-agent-progress-ends-mid-tool.jsonl",
        "v1.0.71-summaries-sdk-ends-mid-tool.jsonl",
        "v2.1.29-user-image-partial-copy.jsonl",
    ],
)
def test_real_files_with_errors_come_out_clean(name: str) -> None:
    src = (REAL / name).read_bytes()
    assert _errors(validate_bytes(src))
    r = repair_bytes(src)
    assert _errors(validate_bytes(r.data)) == []
    check_accounting(src, r)
    assert repair_bytes(r.data).plan.identity


def test_a_request_over_32_mb_is_planned_as_a_compaction() -> None:
    # A conversation over the API's 32 MB: the plan leaves it to the file side's
    # compaction (compact-history); what is left after it (a kept tail still over the
    # limit) is reported as remaining there:
    # tests/model/test_request_too_large.py::test_a_kept_tail_over_the_limit_is_said_and_not_sent.
    src = S332.read_bytes()
    lines = src.splitlines(keepends=True)
    i = max(k for k, ln in enumerate(lines) if b'"type":"user"' in ln and b'"tool_result"' not in ln)
    rec = orjson.loads(lines[i])
    rec["message"]["content"] = "x" * 33_000_000
    lines[i] = orjson.dumps(rec) + b"\n"
    r = repair_bytes(b"".join(lines))
    assert [(a.fix, a.code) for a in r.plan.actions] == [("compact-history", "request-too-large")]
    assert r.plan.compact and r.plan.remaining == []


def test_an_empty_message_is_dropped_and_its_child_relinked() -> None:
    src = S332.read_bytes()
    lines = src.splitlines(keepends=True)
    parents = {orjson.loads(ln).get("parentUuid") for ln in lines}
    i = max(
        k
        for k, ln in enumerate(lines)
        if b'"type":"assistant"' in ln and b'"tool_use"' not in ln and orjson.loads(ln)["uuid"] in parents
    )
    rec = orjson.loads(lines[i])
    rec["message"]["content"] = []
    lines[i] = orjson.dumps(rec) + b"\n"
    damaged = b"".join(lines)
    r = repair_bytes(damaged)
    assert r.plan.remaining == []
    first = r.plan.actions[0]
    assert (first.fix, first.code, first.line) == (
        "drop-empty-message",
        "empty-content",
        i + 1,
    )
    # The message's line and the old line of each child relinked go to the quarantine.
    codes = [q["reasons"][0]["code"] for q in r.quarantine]
    assert set(codes) == {"empty-content"} and len(codes) >= 2
    check_accounting(damaged, r)
    out = [orjson.loads(x) for x in r.data.splitlines()]
    assert [x for x in out if x.get("uuid") == rec["uuid"]] == []
    # Its children now name its parent.
    was = [orjson.loads(x).get("uuid") for x in lines if orjson.loads(x).get("parentUuid") == rec["uuid"]]
    assert was and [x.get("parentUuid") for x in out if x.get("uuid") in was] == [rec["parentUuid"]] * len(
        was
    )


def test_a_load_from_the_last_boundary_is_not_damage() -> None:
    data = S332.read_bytes()
    start = data.rindex(b"\n", 0, data.index(b'"subtype":"compact_boundary"')) + 1
    tail = decoded(data[start:])
    _, actions = repaired_entries(tail, now=NOW, new_id=id_source())
    assert [a.fix for a in actions] == ["relink-logical-parent"]  # as a file, it is a dangling link
    entries, actions = repaired_entries(tail, RepairOptions(partial_load=True), now=NOW, new_id=id_source())
    assert actions == [] and [e.raw for e in entries] == [e.raw for ln in tail for e in ln.entries]


# --- new user report 2, finding 1: a NUL run inside a record --------------------------------

LOST = b'"uuid":"810d105d-3a26-4794-8c8d-9fbcba8df4b3"'  # a 2.1.332 answer with a child


def _nul_damaged(src: bytes, *, replace: bool) -> tuple[bytes, int]:
    """S332 with 200 NULs inserted into (or written over) the answer's line, 586 bytes in,
    inside its usage object (as the user's file had them); and that line's index."""
    lines = src.splitlines(keepends=True)
    (i,) = [k for k, ln in enumerate(lines) if LOST in ln]
    ln = lines[i]
    lines[i] = ln[:586] + b"\x00" * 200 + ln[586 + (200 if replace else 0) :]
    return b"".join(lines), i


def test_a_nul_run_inserted_inside_a_record_keeps_the_record() -> None:
    src = S332.read_bytes()
    damaged, i = _nul_damaged(src, replace=False)
    # One damage, one diagnostic (it was three: truncated-record, nul-run, garbage).
    assert _errors(validate_bytes(damaged)) == [("nul-run-in-record", i + 1)]
    assert CODES["nul-run-in-record"].fix == "drop-nul-run"
    r = repair_bytes(damaged)
    assert r.data == src  # the record comes back exactly as Claude Code wrote it
    (q,) = r.quarantine
    assert (q["line"], q["reason"], q["fix"], q["output_lines"]) == (
        i + 1,
        "nul-run-in-record",
        "drop-nul-run",
        [i + 1],
    )
    assert original_bytes(q) == damaged.splitlines(keepends=True)[i]
    assert [(a.fix, a.code, a.line) for a in r.plan.actions] == [("drop-nul-run", "nul-run-in-record", i + 1)]
    assert "200 NUL bytes" in r.plan.actions[0].detail
    check_accounting(damaged, r)


def test_a_nul_run_inside_a_record_passes_the_schema_like_any_record() -> None:
    from transcript_tools.validate.files_schema import default_checker

    damaged, i = _nul_damaged(S332.read_bytes(), replace=False)
    (e,) = decoded(damaged)[i].entries
    assert e.lenient == ("nul-run-in-record",) and default_checker().check(e.record) == []


def test_a_recovered_record_whose_uuid_is_taken_is_a_duplicate_like_any_record() -> None:
    src = S332.read_bytes()
    lines = src.splitlines(keepends=True)
    (i,) = [k for k, ln in enumerate(lines) if LOST in ln]
    copy = lines[i][:586] + b"\x00" * 200 + lines[i][586:]
    damaged = b"".join([*lines, copy])
    r = repair_bytes(damaged)
    assert r.data == src
    (q,) = r.quarantine
    assert [x["code"] for x in q["reasons"]] == [
        "nul-run-in-record",
        "duplicate-uuid",
    ]  # its bytes differ: the NULs
    assert q["output_lines"] == []


def test_nuls_that_replaced_bytes_of_a_record_are_quarantined_as_before() -> None:
    src = S332.read_bytes()
    damaged, i = _nul_damaged(src, replace=True)
    codes = {c for c, _ in _errors(validate_bytes(damaged))}
    assert "nul-run-in-record" not in codes and {"nul-run", "dangling-parent"} <= codes
    r = repair_bytes(damaged)
    assert LOST not in r.data  # the record was destroyed: its line goes to the quarantine
    assert [q["line"] for q in r.quarantine if q["output_lines"] == []] == [i + 1]
    assert "relink-parent" in [a.fix for a in r.plan.actions]
    check_accounting(damaged, r)
