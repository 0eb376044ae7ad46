"""Real Claude Code (2.1.332, bundled in claude-agent-sdk 0.2.189) driven through the Agent SDK
with tt's store as ``ClaudeAgentOptions(session_store=…)``, against the stand-in: the SDK
mirrors the session into the store, and a store-backed resume (the local transcript gone)
brings the conversation back."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from tests.support.claude_cli import Sandbox, bundled_cli, clock_env
from tests.support.standin import StandIn
from transcript_tools.sessionstore.sdk import TTSessionStore
from transcript_tools.sessionstore.sqlite import open_sqlite
from transcript_tools.sessionstore.url import now_ms

pytestmark = pytest.mark.claude

AT = datetime(2026, 11, 30, 8, 0, tzinfo=timezone.utc)


def _run(prompt: str, options: Any) -> list[Any]:
    from claude_agent_sdk import query

    async def go() -> list[Any]:
        return [m async for m in query(prompt=prompt, options=options)]

    return asyncio.run(go())


def test_claude_code_mirrors_into_the_store_and_resumes_from_it(tmp_path: Path, standin: StandIn, faketime: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from claude_agent_sdk import ClaudeAgentOptions, ResultMessage

    cli = bundled_cli()
    if cli is None:
        pytest.skip("Claude Code 2.1.332 not found: install claude-agent-sdk==0.2.189")
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "CLAUDE")):
            monkeypatch.delenv(name)  # the SDK passes its own environment on: only the sandbox's
    sandbox = Sandbox.create(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    db = tmp_path / "store.sqlite3"
    store = TTSessionStore(lambda: open_sqlite(db, now_ms))
    env = {**sandbox.env(standin.base_url), **clock_env(AT)}

    def options(**kw: Any) -> Any:
        return ClaudeAgentOptions(cli_path=str(cli.path), cwd=str(work), env=env, session_store=store, allowed_tools=[], **kw)

    first = _run("remember the word PELICAN-7", options())
    sid = next(m.session_id for m in first if isinstance(m, ResultMessage))
    local = next(sandbox.config_dir.rglob(f"{sid}.jsonl"))
    key = {"project_key": local.parent.name, "session_id": sid}
    mirrored = asyncio.run(store.load(key))
    on_disk = [json.loads(x) for x in local.read_text().splitlines()]
    assert mirrored is not None and len(mirrored) >= 2
    # What the store holds is what Claude Code wrote, in order, less the records 2.1.332
    # does not mirror: its api-request / -shape / -blob diagnostics (seen in this test).
    left_out = [e for e in on_disk if e not in mirrored]
    assert [e for e in on_disk if e not in left_out] == mirrored
    assert {e["type"] for e in left_out} <= {"api-request", "api-request-shape", "api-request-blob"}
    assert any("PELICAN-7" in json.dumps(e) for e in mirrored if e.get("type") == "user")

    # The local copy gone, resume from the store.
    shutil.rmtree(sandbox.config_dir / "projects")
    n_before = len(standin.requests)
    second = _run("what was the word?", options(resume=sid))
    assert any(isinstance(m, ResultMessage) and not m.is_error for m in second)
    turn = [r for r in standin.requests[n_before:] if r.path.startswith("/v1/messages") and "count_tokens" not in r.path]
    sent = json.dumps([r.body for r in turn])
    assert "PELICAN-7" in sent and "what was the word?" in sent
    after = asyncio.run(store.load(key))
    assert after is not None and after[: len(mirrored)] == mirrored
    assert any("what was the word?" in json.dumps(e) for e in after[len(mirrored):])
