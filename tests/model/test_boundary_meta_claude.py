"""A compact boundary without ``compactMetadata``, with the real CLIs (issue 14).

On the session each pinned CLI has just written (it holds one ``/compact``), the
boundary's metadata is taken away. Both CLIs still resume it and the strict stand-in
accepts the request; the next ``/compact`` is what breaks: 2.1.197 fails with "Cannot
destructure property 'cumulativeDroppedTokens' from null or undefined value"
(omnigent-ai/omnigent#1955), 2.1.332 compacts. After ``tt repair`` both compact, and the
resume sends what it sent before the repair.
"""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path

import orjson
import pytest

from tests.model.test_api_rules_claude import CLOCK, resume_strict
from tests.support.claude_cli import ClaudeRunError, Sandbox, run_claude
from tests.support.oracle import conversation_blocks
from tests.support.sessions import GeneratedSession, stage_config
from tests.support.standin import StandIn
from transcript_tools.repair.files import repair_file

pytestmark = pytest.mark.claude

FAILS = "Cannot destructure property 'cumulativeDroppedTokens'"


def bare(data: bytes) -> bytes:
    out = []
    for line in data.splitlines(keepends=True):
        rec = orjson.loads(line)
        if rec.get("subtype") == "compact_boundary" and "compactMetadata" in rec:
            del rec["compactMetadata"]
            line = orjson.dumps(rec) + b"\n"
        out.append(line)
    return b"".join(out)


def compact(session: GeneratedSession, data: bytes) -> tuple[str, bytes]:
    """``/compact`` on a copy of ``session`` holding ``data``: what the CLI said, and the
    lines it appended."""
    with tempfile.TemporaryDirectory(prefix="tt-bare-") as scratch:
        root = Path(scratch)
        config = stage_config(session.config_dir, root / "claude-config")
        t = next(config.glob(f"projects/*/{session.session_id}.jsonl"))
        t.write_bytes(data)
        with StandIn(strict=True) as api:
            try:
                run = run_claude(
                    session.cli,
                    "/compact",
                    sandbox=Sandbox.create(root, config_dir=config),
                    cwd=session.cwd,
                    base_url=api.base_url,
                    resume=session.session_id,
                    clock=CLOCK,
                    check=False,
                )
                said = str(run.result.get("result") or run.stderr.strip() or "")
            except ClaudeRunError as e:
                said = str(e)
        return said, t.read_bytes()[len(data) :]


def repaired(data: bytes) -> bytes:
    with tempfile.TemporaryDirectory(prefix="tt-bare-") as scratch:
        p = Path(scratch) / "s.jsonl"
        p.write_bytes(data)
        repair_file(p, in_place=True, now="2026-12-01T12:00:00.000Z", new_id=lambda: str(uuid.uuid4()))
        return p.read_bytes()


def test_a_bare_boundary_resumes_breaks_197s_next_compact_and_repair_mends_it(
    generated_session: GeneratedSession, faketime: None
) -> None:
    s = generated_session
    damaged = bare(s.transcript.read_bytes())
    alone = resume_strict(s, damaged)
    assert alone.accepted, alone.error
    said, added = compact(s, damaged)
    if s.cli.version == "2.1.197":
        assert FAILS in said, said
        assert b'"compact_boundary"' not in added
    else:
        assert FAILS not in said, said
        assert b'"compact_boundary"' in added
    fixed = repaired(damaged)
    assert fixed != damaged
    said, added = compact(s, fixed)
    assert FAILS not in said and "Error during compaction" not in said, said
    assert b'"compact_boundary"' in added and b'"compactMetadata"' in added
    after = resume_strict(s, fixed)
    assert after.accepted, after.error
    # Repair adds metadata only: the resume sends exactly what it sent before it.
    assert conversation_blocks(after.messages) == conversation_blocks(alone.messages)
