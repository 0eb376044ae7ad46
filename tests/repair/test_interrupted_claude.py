"""The result repair writes for a call the session ended in is the one Claude Code 2.1.332
writes for it (`repair.records.interrupted_result`, docs/format.md §5).

2.1.332 makes a session whose last line is a ``Bash`` call; the call's result and what
followed are cut off (the client killed mid-tool). Then, on a copy each: ``tt repair``
answers the call, and 2.1.332 resumes the file and answers it itself. The two records
must agree on everything but their own uuid, timestamp and 2.1.332's ``promptId``
(a field of its turn), in the same key order. Then the request 2.1.332 sends when it
resumes the repaired file holds that result as written, and tt's resume sends it too.
"""

from __future__ import annotations

import json
import shutil
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.support.claude_cli import ClaudeCLI, Sandbox, run_claude
from tests.support.standin import StandIn
from transcript_tools.model.conversation import INTERRUPTED_TOOL_RESULT
from transcript_tools.repair.files import repair_file
from transcript_tools.resume.files import load_for_resume

pytestmark = pytest.mark.claude

CLOCK = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
OWN = ("uuid", "timestamp", "promptId")


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_bytes().splitlines() if x.strip()]


def _answer(records: list[dict[str, Any]], tool_use_id: str) -> dict[str, Any]:
    (rec,) = [
        r
        for r in records
        if r.get("type") == "user"
        and isinstance(r["message"]["content"], list)
        and any(b.get("tool_use_id") == tool_use_id for b in r["message"]["content"])
    ]
    return rec


def test_repair_writes_the_result_claude_code_writes_for_a_call_the_session_ended_in(
    claude_332: ClaudeCLI, tmp_path: Path
) -> None:
    sandbox = Sandbox.create(tmp_path / "cc")
    cwd = (tmp_path / "demo").resolve()
    cwd.mkdir()
    sid = str(uuid.uuid4())
    with StandIn() as api:
        run_claude(
            claude_332,
            'TOOL:Bash {"command": "echo hi", "description": "say hi"}',
            sandbox=sandbox,
            cwd=cwd,
            base_url=api.base_url,
            session_id=sid,
            clock=CLOCK,
        )
        path = next((sandbox.config_dir / "projects").rglob(f"{sid}.jsonl"))
        lines = path.read_bytes().splitlines(keepends=True)
        recs = [json.loads(x) for x in lines]
        k = max(
            i
            for i, r in enumerate(recs)
            if r.get("type") == "assistant"
            and any(b.get("type") == "tool_use" for b in r["message"]["content"])
        )
        (use,) = [b for b in recs[k]["message"]["content"] if b.get("type") == "tool_use"]
        crashed = b"".join(lines[: k + 1])  # the call is the last line: its result never written
        path.write_bytes(crashed)

        repaired = tmp_path / "repaired.jsonl"
        (tmp_path / "crashed.jsonl").write_bytes(crashed)
        repair_file(
            tmp_path / "crashed.jsonl",
            out=repaired,
            now="2026-12-01T12:00:00.000Z",
            new_id=lambda: str(uuid.uuid4()),
        )
        ours = _answer(_records(repaired), use["id"])

        run_claude(
            claude_332, "go on", sandbox=sandbox, cwd=cwd, base_url=api.base_url, resume=sid, clock=CLOCK
        )
        theirs = _answer(_records(path), use["id"])

        # 2.1.332 resumes the repaired file as it is: the request holds tt's result.
        shutil.copyfile(repaired, path)
        api.clear()
        run_claude(
            claude_332, "again", sandbox=sandbox, cwd=cwd, base_url=api.base_url, resume=sid, clock=CLOCK
        )
        sent = next(e.request.messages for e in api.exchanges if e.request.is_messages)

    assert theirs["message"]["content"][0]["content"] == INTERRUPTED_TOOL_RESULT
    assert [k for k in ours if k not in OWN] == [k for k in theirs if k not in OWN]
    assert {k: v for k, v in ours.items() if k not in OWN} == {
        k: v for k, v in theirs.items() if k not in OWN
    }
    results = [
        b
        for m in sent
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("tool_use_id") == use["id"]
    ]
    assert [b for b in results if b.get("type") == "tool_result"] == [ours["message"]["content"][0]]
    # tt resume, on the crashed file, sends the same result.
    (tmp_path / "again.jsonl").write_bytes(crashed)
    got = load_for_resume(tmp_path / "again.jsonl")
    assert [
        b
        for m in got.conversation.messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ] == [ours["message"]["content"][0]]
