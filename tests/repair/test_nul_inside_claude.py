"""New user report 2, finding 1, against the real client: a record with a NUL run inserted
inside it, repaired by ``tt repair`` (the NULs dropped, the record kept), is sent again by
Claude Code 2.1.332 when it resumes the repaired file.

The damage is the user's (200 NULs inserted into a real 2.1.332 answer, inside its usage
object), on an answer of the shipped ``claude-config-2.1.332`` session that a resume sends:
the user's record (line 107, "TOOL-RESULT-SEEN n=28") lies before the session's compact
boundary, which no resume sends; this one ("TOOL-RESULT-SEEN n=8", line 157) follows it.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.support.claude_cli import ClaudeCLI
from tests.support.oracle import Block, conversation_blocks, resume_with_cli
from tests.support.paths import REAL
from tests.support.sessions import stage_config
from transcript_tools.repair.files import repair_file

pytestmark = pytest.mark.claude

SID = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
LOST = b'"uuid":"9b497493-'
TEXT = "TOOL-RESULT-SEEN n=8"


def test_claude_code_resumes_the_record_repair_recovered_from_a_nul_run(
    claude_332: ClaudeCLI, tmp_path: Path
) -> None:
    cwd = (tmp_path / "demo-app").resolve()
    cwd.mkdir()
    config = stage_config(
        REAL / "claude-config-2.1.332", tmp_path / "config", recorded_cwd="/home/dev/demo-app", cwd=cwd
    )
    (path,) = (config / "projects").rglob(f"{SID}.jsonl")
    lines = path.read_bytes().splitlines(keepends=True)
    (i,) = [k for k, ln in enumerate(lines) if LOST in ln]
    assert TEXT.encode() in lines[i]
    lines[i] = lines[i][:586] + b"\x00" * 200 + lines[i][586:]
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(b"".join(lines))
    repaired = tmp_path / "repaired.jsonl"
    repair_file(damaged, out=repaired, now="2026-12-01T12:00:00.000Z", new_id=lambda: str(uuid.uuid4()))
    path.write_bytes(repaired.read_bytes())

    sent = conversation_blocks(resume_with_cli(claude_332, config, SID, cwd))
    assert Block("assistant", "text", TEXT) in sent
