"""compact_form: the boundary, the summary and the kept copies in Claude Code's form, the
summary wording, and pruning, with the inputs left untouched."""

from __future__ import annotations

import copy
import itertools
from typing import Any

from transcript_tools.compact.form import SUMMARY_PREAMBLE, compaction_records, summary_content
from transcript_tools.compact.plan import Prune
from transcript_tools.edge.writer import dumps

NOW = "2026-11-30T12:00:00.000Z"
ENV = {
    "cwd": "/w",
    "version": "2.1.332",
    "gitBranch": "main",
    "userType": "external",
    "entrypoint": "cli",
    "slug": "a-b-c",
    "sessionId": "old",
}


def ids() -> Any:
    c = itertools.count()
    return lambda: f"00000000-0000-4000-8000-{next(c):012d}"


def kept() -> list[dict[str, Any]]:
    return [
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": "x",
            "sessionId": "old",
            "slug": "a-b-c",
            "message": {"role": "user", "content": "do it"},
        },
        {
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "sessionId": "old",
            "requestId": "req_1",
            "message": {
                "id": "msg_1",
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": "hmm", "signature": "s"}],
                "usage": {"input_tokens": 9},
            },
        },
        {
            "type": "assistant",
            "uuid": "a2",
            "parentUuid": "a1",
            "sessionId": "old",
            "requestId": "req_1",
            "message": {
                "id": "msg_1",
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/w/f"}}],
                "usage": {"input_tokens": 9},
            },
        },
        {
            "type": "user",
            "uuid": "r1",
            "parentUuid": "a2",
            "sessionId": "old",
            "sourceToolAssistantUUID": "a2",
            "toolUseResult": {"file": {"content": "x" * 5000}},
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x" * 5000}],
            },
        },
        {
            "type": "user",
            "uuid": "r2",
            "parentUuid": "r1",
            "sessionId": "old",
            "sourceToolAssistantUUID": "gone",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": "A" * 4000},
                    },
                    {"type": "text", "text": "see"},
                ],
            },
        },
        {
            "type": "assistant",
            "uuid": "a3",
            "parentUuid": "r2",
            "sessionId": "old",
            "message": {"id": "msg_2", "role": "assistant", "content": [{"type": "text", "text": "done"}]},
        },
    ]


def build(records: list[dict[str, Any]], **kw: Any) -> Any:
    args: dict[str, Any] = {
        "session_id": "new-session",
        "new_id": ids(),
        "now": NOW,
        "envelope": ENV,
        "logical_parent": "leaf-uuid",
        "pre_tokens": 1000,
        "post_tokens": 100,
    }
    args.update(kw)
    return compaction_records(records, "SUMMARY", **args)


def test_claude_code_form() -> None:
    out = build(kept(), last_prompt="do it")
    boundary, summary, *copies, last_prompt = out.records
    assert boundary["parentUuid"] is None and boundary["logicalParentUuid"] == "leaf-uuid"
    assert boundary["type"] == "system" and boundary["subtype"] == "compact_boundary"
    assert boundary["content"] == "Conversation compacted" and boundary["timestamp"] == NOW
    # Claude Code 2.1.332's loader looks for the subtype in a line's first 256 bytes.
    assert dumps(boundary).find(b'"compact_boundary"') < 256
    md = boundary["compactMetadata"]
    assert md["trigger"] == "manual" and md["preTokens"] == 1000 and md["postTokens"] == 100
    assert md["preservedSegment"] == {
        "headUuid": copies[0]["uuid"],
        "anchorUuid": summary["uuid"],
        "tailUuid": copies[-1]["uuid"],
    }
    assert summary["parentUuid"] == boundary["uuid"] and summary["isCompactSummary"] is True
    assert summary["isVisibleInTranscriptOnly"] is True and summary["message"] == {
        "role": "user",
        "content": "SUMMARY",
    }
    assert {boundary["sessionId"], summary["sessionId"]} == {"new-session"}
    assert boundary["cwd"] == "/w" and boundary["slug"] == "a-b-c"
    # The copies: fresh uuids, chained onto the summary, ids the API and cost tools use kept.
    parent = summary["uuid"]
    originals = kept()
    for c, o in zip(copies, originals, strict=True):
        assert c["parentUuid"] == parent and c["uuid"] not in {x["uuid"] for x in originals}
        assert c["sessionId"] == "new-session"
        assert c["message"] == o["message"]
        parent = c["uuid"]
    assert copies[3]["sourceToolAssistantUUID"] == copies[2]["uuid"]
    assert "sourceToolAssistantUUID" not in copies[4]  # named an entry that is not copied
    assert copies[1]["requestId"] == "req_1"
    assert last_prompt == {
        "type": "last-prompt",
        "lastPrompt": "do it",
        "leafUuid": copies[-1]["uuid"],
        "sessionId": "new-session",
    }
    assert out.leaf_uuid == copies[-1]["uuid"] and out.copies == 6
    assert len({r.get("uuid") for r in out.records if "uuid" in r}) == 8


def test_new_session_drops_the_slug_and_relabels_metadata() -> None:
    out = build(
        kept(),
        new_session=True,
        logical_parent=None,
        metadata=[
            {"type": "custom-title", "customTitle": "T (compacted)", "sessionId": "old"},
            {"type": "mode", "mode": "normal", "sessionId": "old"},
        ],
    )
    assert all("slug" not in r for r in out.records)
    assert out.records[0]["logicalParentUuid"] is None
    assert out.records[-2:] == [
        {"type": "custom-title", "customTitle": "T (compacted)", "sessionId": "new-session"},
        {"type": "mode", "mode": "normal", "sessionId": "new-session"},
    ]


def test_no_kept_messages_no_preserved_segment() -> None:
    out = build([])
    assert "preservedSegment" not in out.records[0]["compactMetadata"]
    assert out.leaf_uuid == out.summary_uuid and len(out.records) == 2


def test_inputs_are_not_mutated() -> None:
    records = kept()
    before = copy.deepcopy(records)
    build(
        records,
        prunes=[
            (1, Prune(1, 0, "thinking", 1)),
            (3, Prune(3, 0, "tool-output", 1000)),
            (4, Prune(4, 0, "images", 1570)),
        ],
    )
    assert records == before


def test_prunes() -> None:
    out = build(
        kept(),
        prunes=[
            (1, Prune(1, 0, "thinking", 1)),
            (3, Prune(3, 0, "tool-output", 1000)),
            (4, Prune(4, 0, "images", 1570)),
        ],
    )
    copies = out.records[2:]
    # The thinking-only line is gone and the chain closes over it.
    assert out.dropped == 1 and len(copies) == 5
    assert copies[1]["message"]["content"][0]["type"] == "tool_use"
    assert copies[1]["parentUuid"] == copies[0]["uuid"]
    result = copies[2]
    block = result["message"]["content"][0]
    assert block["tool_use_id"] == "t1" and block["type"] == "tool_result"
    assert block["content"].startswith("[tool output pruned by tt compact: 5,000 characters]")
    assert "toolUseResult" not in result
    img = copies[3]["message"]["content"][0]
    assert img == {"type": "text", "text": "[image pruned by tt compact (image/png, 2 KB)]"}
    assert set(out.pruned_bytes) == {"thinking", "tool-output", "images"}
    assert out.pruned_bytes["tool-output"] > 9000 and out.pruned_bytes["images"] > 3000


def test_summary_wording() -> None:
    text = summary_content("S", transcript_path="/p/x.jsonl", kept=True)
    assert text.startswith(SUMMARY_PREAMBLE + "\n\nS\n\n")
    assert "read the full transcript at: /p/x.jsonl" in text
    assert (
        "Continue the conversation from where it left off without asking the user any further questions."
        in text
    )
    assert text.endswith("may already have happened in them.")
    assert "original request" in summary_content(
        "S", transcript_path=None, kept=True, first_request_kept=True
    )
    assert "kept verbatim" not in summary_content("S", transcript_path=None, kept=False)
