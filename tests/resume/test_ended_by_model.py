"""A session the model ended (an ``ended-by-model`` record) is not continued.

Claude Code 2.1.332 appends ``{"type":"ended-by-model","timestamp","sessionId"}`` when a
model ends a conversation, and ``claude -p --resume`` of such a session sends nothing:
"Claude ended this conversation. Start a new session to continue." (exit 1). 2.1.197 does
not know the record and continues (both checked below with the real CLIs against the
stand-in). tt follows 2.1.332: ``tt resume`` refuses (exit 1, nothing sent, nothing
written) and ``tt doctor`` names it; a message that only mentions the type, or a record
for another session, ends nothing.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.doctor.test_doctor_claude import resume_probe
from tests.support import cli
from tests.support.claude_cli import Sandbox, find_cli
from tests.support.paths import CONFIG_332
from tests.support.sessions import generate_session, stage_config
from tests.support.standin import StandIn
from tests.support.trees import stage

SID = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
MESSAGE = "Claude ended this conversation. Start a new session to continue."


def _ended(sid: str) -> bytes:
    # The record as 2.1.332's writer makes it (its markSessionEndedByModel, bundled binary).
    return orjson.dumps({"type": "ended-by-model", "timestamp": "2026-12-01T11:00:00.000Z", "sessionId": sid})


def _config(tmp_path: Path, extra: bytes) -> tuple[Path, Path]:
    config = stage(CONFIG_332, tmp_path / "claude")
    path = next(config.glob(f"projects/*/{SID}.jsonl"))
    path.write_bytes(path.read_bytes() + extra)
    return config, path


def test_tt_resume_refuses_a_session_the_model_ended(tmp_path: Path) -> None:
    config, path = _config(tmp_path, _ended(SID) + b"\n")
    before = path.read_bytes()
    with StandIn() as api:
        done = cli.tt(
            "resume",
            SID,
            "-p",
            "Are you there?",
            config=config,
            env={"ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "sk-test"},
        )
        sent = [e for e in api.exchanges if e.request.is_messages]
    assert done.returncode == 1, done.stderr
    last = len(before.splitlines())  # the record is the last line
    assert MESSAGE in done.stderr and f"line {last}:" in done.stderr and "Traceback" not in done.stderr
    assert sent == [] and path.read_bytes() == before
    dry = cli.tt("resume", SID, "--dry-run", config=config)
    assert dry.returncode == 1 and MESSAGE in dry.stderr
    # A compaction appended after it (tt compact's boundary) does not hide it: Claude Code
    # keeps the record wherever it is in the file (its load table: "last-wins").
    done = cli.tt("compact", str(path), "--in-place", "--keep-tokens", "0", "--even-if-larger", config=config)
    assert done.returncode == 0, done.stderr
    assert path.read_bytes().count(b'"compact_boundary"') > before.count(b'"compact_boundary"')
    dry = cli.tt("resume", SID, "--dry-run", config=config)
    assert dry.returncode == 1 and MESSAGE in dry.stderr


def test_doctor_names_it_and_other_mentions_end_nothing(tmp_path: Path) -> None:
    config, path = _config(tmp_path, _ended(SID) + b"\n")
    doc = cli.tt("doctor", str(path), "--json", config=config)
    assert doc.returncode == 1, doc.stderr
    [finding] = [f for f in orjson.loads(doc.stdout)["files"][0]["findings"] if f["code"] == "ended-by-model"]
    assert MESSAGE in finding["message"] and finding["loads"] is False and finding["repair"] is False
    # The type named in a prompt's text, and a record of another session: nothing ended.
    other = tmp_path / "other"
    config, path = _config(other, _ended("00000000-0000-4000-8000-000000000000") + b"\n")
    lines = path.read_bytes().splitlines(keepends=True)
    at = max(i for i, ln in enumerate(lines) if b'"type":"user"' in ln and b'"content":"' in ln)
    rec = orjson.loads(lines[at])
    rec["message"]["content"] = 'what does {"type":"ended-by-model"} mean?'
    lines[at] = orjson.dumps(rec) + b"\n"
    path.write_bytes(b"".join(lines))
    dry = cli.tt("resume", SID, "--dry-run", config=config)
    assert dry.returncode == 0, dry.stderr
    doc = cli.tt("doctor", str(path), "--json", config=config)
    assert not [f for f in orjson.loads(doc.stdout)["files"][0]["findings"] if f["code"] == "ended-by-model"]


@pytest.mark.claude
def test_claude_code_2_1_332_refuses_it_and_2_1_197_continues(faketime: None) -> None:
    seen = {}
    for version in ("2.1.332", "2.1.197"):
        found = find_cli(version)
        assert found is not None, version
        with tempfile.TemporaryDirectory(prefix="tt-ended-") as scratch:
            root = Path(scratch)
            s = generate_session(found, root / "gen")
            config = stage_config(s.config_dir, root / "claude-config")
            t = next(config.glob(f"projects/*/{s.session_id}.jsonl"))
            t.write_bytes(t.read_bytes() + _ended(s.session_id) + b"\n")
            sandbox = Sandbox.create(root, config_dir=config)
            seen[version] = _said(resume_probe(found, sandbox, s.cwd, s.session_id))
            if version == "2.1.332":
                # A compaction appended after the record (tt compact's boundary) does not
                # hide it from 2.1.332 either.
                had = t.read_bytes().count(b'"compact_boundary"')
                done = cli.tt(
                    "compact", str(t), "--in-place", "--keep-tokens", "0", "--even-if-larger", config=config
                )
                assert done.returncode == 0, done.stderr
                assert t.read_bytes().count(b'"compact_boundary"') > had
                seen["2.1.332 compacted"] = _said(resume_probe(found, sandbox, s.cwd, s.session_id))
    for refused in ("2.1.332", "2.1.332 compacted"):
        (code, err), requests = seen[refused]
        assert code == 1 and MESSAGE in err and requests == 0, seen
    (code, _), requests = seen["2.1.197"]
    assert code == 0 and requests == 1, seen


def _said(probe: tuple[Any, list[Any], int]) -> tuple[tuple[int, str], int]:
    """((exit code, stderr), requests sent) of `test_doctor_claude.resume_probe`'s run."""
    run, _, requests = probe
    return (run.returncode, run.stderr), requests
