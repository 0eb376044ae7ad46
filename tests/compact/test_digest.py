"""digest: the facts of summarised messages (requests, files from toolUseResult, commands,
errors and fixes, todos, earlier summaries), bounded whatever the input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.paths import REAL
from transcript_tools.compact.digest import (
    MAX_COMMANDS,
    MAX_ERRORS,
    MAX_FILES,
    TAIL_REQUESTS,
    Digest,
    prompt_text,
    unwrap_summary,
)

CLEAN_332 = (
    REAL
    / "claude-config-2.1.332"
    / "projects"
    / "-home-dev-demo-app"
    / "4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
)


def records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in path.read_bytes().splitlines() if x.strip()]


def u(content: Any, **kw: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": content}, **kw}


def a(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"type": "assistant", "message": {"role": "assistant", "content": list(blocks)}}


def use(tid: str, name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": name, "input": inp}


def res(tid: str, content: Any, *, error: bool = False, tur: Any = None) -> dict[str, Any]:
    b: dict[str, Any] = {"type": "tool_result", "tool_use_id": tid, "content": content}
    if error:
        b["is_error"] = True
    r = u([b])
    if tur is not None:
        r["toolUseResult"] = tur
    return r


def test_prompt_text() -> None:
    assert prompt_text(u("fix the bug")) == "fix the bug"
    assert (
        prompt_text(u([{"type": "text", "text": "look"}, {"type": "image", "source": {}}])) == "look\n[image]"
    )
    assert prompt_text(u("x", isMeta=True)) is None
    assert prompt_text(u("x", isCompactSummary=True)) is None
    assert prompt_text(u([{"type": "tool_result", "tool_use_id": "t", "content": "x"}])) is None
    assert prompt_text(u("<local-command-stdout>done</local-command-stdout>")) is None
    assert prompt_text(u("[Request interrupted by user]")) is None
    assert (
        prompt_text(u("<command-name>/review</command-name><command-args>PR 12</command-args>"))
        == "/review PR 12"
    )
    assert prompt_text(u("<command-name>/compact</command-name>")) is None
    assert prompt_text({"type": "assistant", "message": {"content": "x"}}) is None


def test_files_commands_errors_and_fixes() -> None:
    d = Digest()
    for r in [
        u("first: make the tests pass"),
        a(use("1", "Read", file_path="/p/a.py")),
        res("1", "code", tur={"type": "text", "file": {"filePath": "/p/a.py", "content": "code"}}),
        a(use("2", "Edit", file_path="/p/a.py", old_string="x", new_string="y")),
        res("2", "String not found", error=True, tur="Error: String to replace not found"),
        a(use("3", "Edit", file_path="/p/a.py", old_string="z", new_string="y")),
        res("3", "ok", tur={"filePath": "/p/a.py", "oldString": "z"}),
        a(use("4", "Write", file_path="/p/new.py", content="...")),
        res("4", "created", tur={"type": "create", "filePath": "/p/new.py"}),
        a(use("5", "Bash", command="pytest -q")),
        res("5", "Exit code 1\n2 failed", error=True),
        a(use("6", "Bash", command="ls")),
        res("6", "a.py"),
        a(use("7", "TodoWrite", todos=[])),
        res(
            "7",
            "ok",
            tur={
                "newTodos": [
                    {"content": "fix tests", "status": "in_progress"},
                    {"content": "docs", "status": "completed"},
                ]
            },
        ),
        a({"type": "text", "text": "Two tests still fail."}),
        u("second request"),
    ]:
        d.feed(r)
    assert d.requests == 2 and d.first_requests == ["first: make the tests pass", "second request"]
    assert list(d.files["read"]) == ["/p/a.py"]
    assert list(d.files["edited"]) == ["/p/a.py"]
    assert list(d.files["written"]) == ["/p/new.py"]
    assert d.command_count == 2 and d.failed_count == 1
    assert [c.text for c in d.failed_commands] == ["pytest -q"]
    edit_error, bash_error = list(d.errors)
    assert edit_error.tool == "Edit" and edit_error.fixed_by is not None and "Edit" in edit_error.fixed_by
    assert bash_error.tool == "Bash" and bash_error.fixed_by is None
    assert d.pending_todos == [("fix tests", "in_progress")]
    assert d.last_text == "Two tests still fail."
    assert d.last_request == "second request" and not d.answered
    assert d.tools["Edit"] == 2


def test_earlier_summaries_are_unwrapped() -> None:
    recs = records(CLEAN_332)
    d = Digest()
    for r in recs:
        d.feed(r)
    assert len(d.summaries) == 1
    assert d.summaries[0].startswith("ACK n=32")
    assert "If you need specific details" not in d.summaries[0]
    assert unwrap_summary("plain text") == "plain text"


def test_real_session_digest() -> None:
    d = Digest()
    for r in records(CLEAN_332):
        d.feed(r)
    assert d.first_requests[0] == "Project kickoff 13000: we work on app.py"
    assert "/home/dev/demo-app/util.py" in d.files["written"]
    assert "/home/dev/demo-app/app.py" in d.files["edited"]
    assert "/home/dev/demo-app/util.py" in d.files["read"]
    assert d.command_count == 2


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 3000))
def test_memory_is_bounded(n: int) -> None:
    d = Digest()
    for k in range(n):
        d.feed(u(f"request {k}"))
        d.feed(a(use(f"e{k}", "Edit", file_path=f"/f/{k}.py")))
        d.feed(res(f"e{k}", "nope", error=True))
        d.feed(a(use(f"b{k}", "Bash", command=f"make {k}")))
        d.feed(res(f"b{k}", "ok"))
        d.feed(a(use(f"r{k}", "Read", file_path=f"/f/{k}.py")))
        d.feed(res(f"r{k}", "ok"))
    assert d.requests == n and len(d.first_requests) + len(d.last_requests) <= 12 + TAIL_REQUESTS
    last = d.last_requests[-1] if d.last_requests else d.first_requests[-1]
    assert last == f"request {n - 1}" and d.first_requests[0] == "request 0"
    assert len(d.commands) <= MAX_COMMANDS and d.command_count == n
    assert len(d.errors) <= MAX_ERRORS and d.error_count == n
    assert len(d.files["read"]) <= MAX_FILES
    assert len(d._calls) == 0  # every call was answered
