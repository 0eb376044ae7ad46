"""``prompt-too-long``: a session whose last request Claude Code saved as its "Prompt is
too long" error (the record as 2.1.332 writes it: tests/model/test_prompt_too_long_claude.py
produces it with both pinned CLIs). ``tt validate`` names it, ``tt repair`` appends an
offline compaction (nothing removed), and ``tt resume`` appends the same compaction
before its turn (as Claude Code's auto-compaction, ``trigger: auto``) and sends the
compacted conversation, which the strict stand-in accepts where it would answer the
history the API's 400; ``--dry-run`` writes nothing and shows the compacted request."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.damage import prompt_too_long, validate_bytes
from tests.model.test_api_rules import tt_resume_strict
from tests.support.strict import refusal
from transcript_tools.repair.files import repair_file
from transcript_tools.resume.files import load_for_resume

ROOT = Path(__file__).resolve().parents[2]
REAL = {
    v: next((ROOT / f"fixtures/real/claude-config-{v}/projects").glob("*/*.jsonl"))
    for v in ("2.1.332", "2.1.197")
}


def _request(path: Path) -> tuple[dict, bytes]:
    body = {"model": "claude-x", "messages": load_for_resume(path).conversation.messages}
    return body, json.dumps(body).encode()


@pytest.mark.parametrize("version", sorted(REAL))
def test_named_compacted_by_repair_and_never_sent_by_resume(version: str, tmp_path: Path) -> None:
    src = REAL[version].read_bytes()
    d = prompt_too_long(src)
    report = validate_bytes(d.data)
    assert [x.code for x in report.diagnostics if x.severity.value == "error"] == ["prompt-too-long"]
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(d.data)
    body, raw = _request(damaged)
    got = refusal(body, raw)
    assert got is not None and got.message.startswith("prompt is too long: ")
    # tt resume: compacts first, then sends a request the strict stand-in accepts.
    (tmp_path / "resume").mkdir()
    refused, code, out = tt_resume_strict(d.data, tmp_path / "resume")
    assert refused == [] and code == 0 and json.loads(out)["is_error"] is False
    resumed = next((tmp_path / "resume").glob("*.jsonl")).read_bytes()
    assert resumed.startswith(d.data)  # nothing removed: a compaction and the turn appended
    new = [json.loads(x) for x in resumed[len(d.data) :].splitlines()]
    assert new[0]["subtype"] == "compact_boundary" and new[0]["compactMetadata"]["trigger"] == "auto"
    assert new[1]["isCompactSummary"] is True and new[1]["parentUuid"] == new[0]["uuid"]
    # The refused prompt was carried over (a kept copy), and the turn answered after it.
    assert any(r.get("message", {}).get("content") == "Now summarise every failure in that log." for r in new)
    turn = [k for k, r in enumerate(new) if r.get("type") == "user" and r["message"]["content"] == "Go on"]
    assert turn and any(r.get("type") == "assistant" for r in new[turn[0] :])
    assert validate_bytes(resumed).errors == 0
    # tt repair: the file keeps every byte it had, plus a compaction after them.
    fixed = tmp_path / "fixed.jsonl"
    fixed.write_bytes(d.data)
    r = repair_file(fixed, in_place=True, now="2026-12-01T12:00:00.000Z", new_id=lambda: str(uuid.uuid4()))
    assert [a.code for a in r.actions] == ["prompt-too-long"] and not r.remaining
    out = fixed.read_bytes()
    assert out.startswith(d.data) and len(out) > len(d.data)
    assert Path(str(fixed) + ".bak").read_bytes() == d.data
    assert validate_bytes(out).errors == 0
    body, raw = _request(fixed)
    assert refusal(body, raw) is None
    # The prompt the API refused is still there for the next turn to answer.
    assert "Now summarise every failure in that log." in raw.decode()


def test_a_refusal_after_a_compaction_counts_and_its_kept_copy_does_not(tmp_path: Path) -> None:
    """After tt repair's compaction the kept copy of the error (older than the boundary)
    is not a refusal; a new refusal written after the boundary is."""
    d = prompt_too_long(REAL["2.1.332"].read_bytes())
    p = tmp_path / "s.jsonl"
    p.write_bytes(d.data)
    repair_file(p, in_place=True, now="2026-12-01T12:00:00.000Z", new_id=lambda: str(uuid.uuid4()))
    assert not [x for x in validate_bytes(p.read_bytes()).diagnostics if x.code == "prompt-too-long"]
    lines = p.read_bytes().splitlines()
    err = json.loads(next(x for x in reversed(lines) if b'"isApiErrorMessage":true' in x))
    err = {**err, "uuid": str(uuid.uuid4()), "timestamp": "2026-12-01T12:00:05.000Z"}
    again = p.read_bytes() + json.dumps(err).encode() + b"\n"
    assert [x.code for x in validate_bytes(again).diagnostics if x.code == "prompt-too-long"] == [
        "prompt-too-long"
    ]


def test_resume_dry_run_writes_nothing_and_shows_the_compacted_request(tmp_path: Path) -> None:
    """``--dry-run`` (prepare(dry_run=True)): the file is untouched, the conversation is the
    compaction's, in memory, the same messages the real resume then sends from the file
    it appended to, and the load says a compaction would be appended."""
    from datetime import UTC, datetime

    from transcript_tools.edge.claude_dir import SessionRef
    from transcript_tools.model.lifecycle import Clock
    from transcript_tools.resume.files_setup import prepare

    d = prompt_too_long(REAL["2.1.332"].read_bytes())
    p = tmp_path / "s.jsonl"
    p.write_bytes(d.data)
    clock = Clock.fixed(datetime(2026, 12, 1, 12, tzinfo=UTC))
    dry = prepare(SessionRef(p, None), clock=clock, env={}, cwd=tmp_path, dry_run=True)
    assert p.read_bytes() == d.data
    assert [m for m in dry.got.mended if "would be appended" in m], dry.got.mended
    body = {"model": "claude-x", "messages": dry.conv.messages}
    assert refusal(body, json.dumps(body).encode()) is None
    wet = prepare(SessionRef(p, None), clock=clock, env={}, cwd=tmp_path)
    assert p.read_bytes().startswith(d.data) and len(p.read_bytes()) > len(d.data)
    assert any("appended to" in n for n in wet.notices), wet.notices
    assert wet.conv.messages == dry.conv.messages
    assert "prompt-too-long" not in {n.code for n in wet.conv.notes}


def test_resume_writes_no_compaction_when_the_file_changed_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line another writer appends while tt compacts would be left behind the boundary:
    nothing is written and the error says so (exit 6)."""
    from datetime import UTC, datetime

    import transcript_tools.compact.files as compact_files
    from transcript_tools.edge.claude_dir import SessionRef
    from transcript_tools.model.errors import FileChanged
    from transcript_tools.model.lifecycle import Clock
    from transcript_tools.resume.files_setup import prepare

    d = prompt_too_long(REAL["2.1.332"].read_bytes())
    p = tmp_path / "s.jsonl"
    p.write_bytes(d.data)
    real = compact_files.compact_file
    extra = b'{"type":"last-prompt","lastPrompt":"x","sessionId":"s"}\n'

    def racing(*a, **k):  # type: ignore[no-untyped-def]
        out = real(*a, **k)
        with open(p, "ab") as f:
            f.write(extra)
        return out

    monkeypatch.setattr(compact_files, "compact_file", racing)
    clock = Clock.fixed(datetime(2026, 12, 1, 12, tzinfo=UTC))
    with pytest.raises(FileChanged) as e:
        prepare(SessionRef(p, None), clock=clock, env={}, cwd=tmp_path)
    assert e.value.exit_code == 6 and "changed while tt compacted it" in str(e.value)
    assert p.read_bytes() == d.data + extra
