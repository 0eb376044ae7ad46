"""A forked subagent's transcript continues its parent's context (`api_checks.FORK_CONTEXT_REF`).

Claude Code 2.1.332 writes a fork's file as a ``fork-context-ref`` record (the parent's first
``contextLength`` messages, up to ``parentLastUuid``, which the file does not copy) and then
what came after them, beginning with the result of the parent's call that spawned the fork.
That result's ``tool_use`` is in the parent's context: a link, not an orphan. A new user
found `tt validate` calling it an error and `tt repair` rewriting it (the public agtrace
fixture below, shaped on 2.1.281; the record type and its fields are read from the 2.1.332
binary, which writes ``{type:"fork-context-ref", agentId, parentSessionId, parentLastUuid,
contextLength}``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson

from tests.support.paths import PUBLIC
from transcript_tools.repair.files import repair_file
from transcript_tools.validate.files import validate_path

FORK = PUBLIC / "fork/00000000-0000-4000-8000-000000000001/subagents/agent-a0000000000000002.jsonl"


def _codes(p: Path) -> list[str]:
    return [d.code for d in validate_path(p).diagnostics]


def _copy(tmp_path: Path, lines: list[bytes]) -> Path:
    d = tmp_path / "00000000-0000-4000-8000-000000000001" / "subagents"
    d.mkdir(parents=True, exist_ok=True)
    p = d / FORK.name
    p.write_bytes(b"".join(lines))
    return p


def test_a_fork_s_first_result_answers_the_parent_s_call(tmp_path: Path) -> None:
    assert _codes(FORK) == []  # no orphan, and the record type is known (no unknown-type)
    out = tmp_path / "out.jsonl"
    r = repair_file(FORK, out=out, now="2026-12-01T00:00:00.000Z", new_id=lambda: "x")
    assert not r.changed and not r.actions
    assert out.read_bytes() == FORK.read_bytes()


def test_without_the_record_the_same_result_is_an_orphan(tmp_path: Path) -> None:
    lines = FORK.read_bytes().splitlines(keepends=True)
    assert orjson.loads(lines[0])["type"] == "fork-context-ref"
    assert "tool-result-orphan" in _codes(_copy(tmp_path, lines[1:]))


def test_a_result_after_the_fork_s_first_response_is_still_an_orphan(tmp_path: Path) -> None:
    lines = FORK.read_bytes().splitlines(keepends=True)
    last = orjson.loads(lines[-1])
    late = {
        **orjson.loads(lines[1]),
        "uuid": "00000000-0000-4000-8000-000000000d03",
        "parentUuid": last["uuid"],
        "timestamp": "2026-09-20T10:00:16.000Z",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_nowhere", "content": "x"}],
        },
    }
    p = _copy(tmp_path, [*lines, orjson.dumps(late) + b"\n"])
    codes = _codes(p)
    assert codes.count("tool-result-orphan") == 1
    shutil.rmtree(p.parent.parent)
