"""``request-too-large``: a session whose conversation is over the API's 32 MB request
limit (the API answers 413 ``request_too_large`` to every turn; anthropics/claude-code#10314,
#14567). ``tt validate`` names it, ``tt repair`` appends the offline compaction it
appends for ``prompt-too-long`` (``compact-history``; nothing removed, so the original
bytes stay a prefix), and ``tt resume`` compacts before its turn and sends a request
under the limit; when the messages the compaction must keep are over the limit
themselves, both say so and nothing is sent. The damaged files are real 2.1.332 and
2.1.197 sessions with one tool result grown to 33 MB (`tests.damage.request_too_large`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.damage import _copy, _edit, _Transcript, request_too_large, validate_bytes
from tests.model.test_api_rules import tt_resume_strict
from tests.support.strict import refusal
from transcript_tools.repair.files import repair_file
from transcript_tools.resume.files import load_for_resume

ROOT = Path(__file__).resolve().parents[2]
REAL = {
    v: next((ROOT / f"fixtures/real/claude-config-{v}/projects").glob("*/*.jsonl"))
    for v in ("2.1.332", "2.1.197")
}
NOW = "2026-12-01T12:00:00.000Z"


def _request(path: Path) -> bytes:
    body = {"model": "claude-x", "messages": load_for_resume(path).conversation.messages}
    return json.dumps(body).encode()


def _errors(data: bytes) -> list[str]:
    return [x.code for x in validate_bytes(data).diagnostics if x.severity.value == "error"]


def _dry_run(path: Path) -> bytes:
    """The request body ``tt resume --dry-run --json`` prints."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TT_NOW": "2026-12-01T12:00:00Z"}
    r = subprocess.run(
        [sys.executable, "-m", "transcript_tools", "resume", str(path), "--dry-run", "--json", "-p", "Go on"],
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr.decode()
    assert b"over the API's 32 MB request limit: compacted offline" in r.stderr
    return r.stdout


@pytest.mark.parametrize("version", sorted(REAL))
def test_named_compacted_by_repair_and_never_sent_by_resume(version: str, tmp_path: Path) -> None:
    d = request_too_large(REAL[version].read_bytes())
    assert 32_000_000 < len(d.data) < 35_000_000  # just over the limit
    assert _errors(d.data) == ["request-too-large"]
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(d.data)
    raw = _request(damaged)
    assert len(raw) > 32_000_000
    got = refusal(json.loads(raw), raw)
    assert got is not None and (got.status, got.type) == (413, "request_too_large")
    # tt resume --dry-run --json: the request it would send is under the limit, and the
    # file is untouched.
    sent = _dry_run(damaged)
    assert len(sent) < 1_000_000 and refusal(json.loads(sent), sent) is None
    assert json.loads(sent)["messages"][-1]["content"] == "Go on"
    assert damaged.read_bytes() == d.data
    # tt repair: every byte it had, then a compaction (trigger manual, as tt compact's).
    fixed = tmp_path / "fixed.jsonl"
    fixed.write_bytes(d.data)
    r = repair_file(fixed, in_place=True, now=NOW, new_id=lambda: str(uuid.uuid4()))
    assert [(a.fix, a.code) for a in r.actions] == [("compact-history", "request-too-large")]
    assert not r.remaining
    out = fixed.read_bytes()
    assert out.startswith(d.data) and 0 < len(out) - len(d.data) < 1_000_000
    assert Path(str(fixed) + ".bak").read_bytes() == d.data
    new = [json.loads(x) for x in out[len(d.data) :].splitlines()]
    assert new[0]["subtype"] == "compact_boundary" and new[1]["isCompactSummary"] is True
    assert _errors(out) == []
    raw = _request(fixed)
    assert len(raw) < 1_000_000 and refusal(json.loads(raw), raw) is None
    # Repaired once, nothing left to do.
    again = repair_file(fixed, in_place=True, now=NOW, new_id=lambda: str(uuid.uuid4()))
    assert again.actions == [] and fixed.read_bytes() == out


def test_resume_compacts_and_the_strict_stand_in_accepts(tmp_path: Path) -> None:
    d = request_too_large(REAL["2.1.332"].read_bytes())
    refused, code, out = tt_resume_strict(d.data, tmp_path)
    assert refused == [] and code == 0 and json.loads(out)["is_error"] is False
    resumed = next(tmp_path.glob("*.jsonl")).read_bytes()
    assert resumed.startswith(d.data)  # nothing removed: a compaction and the turn appended
    new = [json.loads(x) for x in resumed[len(d.data) :].splitlines()]
    assert new[0]["subtype"] == "compact_boundary" and new[0]["compactMetadata"]["trigger"] == "auto"
    assert any(r.get("type") == "assistant" for r in new[2:])
    assert _errors(resumed) == []


def test_a_kept_tail_over_the_limit_is_said_and_not_sent(tmp_path: Path) -> None:
    """The last response itself is 33 MB: the compaction must keep it, so the request
    stays over the limit; repair leaves the error (and the file), resume exits 4."""
    t = _Transcript(REAL["2.1.332"].read_bytes())
    i = t.messages()[-1]
    rec = _copy(t, i)
    block = next(b for b in rec["message"]["content"] if b.get("type") == "text")
    block["text"] = "the whole generated file, pasted back: 0123456789\n" * 660_000
    data = b"".join(_edit(t, i, rec))
    assert _errors(data) == ["request-too-large"]
    p = tmp_path / "s.jsonl"
    p.write_bytes(data)
    r = repair_file(p, in_place=True, now=NOW, new_id=lambda: str(uuid.uuid4()))
    assert [d.code for d in r.remaining] == ["request-too-large"]
    assert "--prune images,tool-output" in r.remaining[0].message
    assert p.read_bytes() == data
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    got = subprocess.run(
        [sys.executable, "-m", "transcript_tools", "resume", str(p), "--dry-run", "--json", "-p", "Go on"],
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert got.returncode == 4 and got.stdout == b""
    assert b"over the API's 32 MB request limit" in got.stderr and b"Traceback" not in got.stderr
    assert p.read_bytes() == data
