"""Real Claude Code (2.1.332, bundled in claude-agent-sdk 0.2.189) driven through the Agent SDK
with tt's store as ``ClaudeAgentOptions(session_store=…)``, against the stand-in: the SDK
mirrors the session into the store, and a store-backed resume (the local transcript gone)
brings the conversation back."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.support.claude_cli import Sandbox, bundled_cli, clock_env
from tests.support.cli import tt
from tests.support.paths import CONFIG_332
from tests.support.standin import StandIn
from tests.support.trees import stage
from transcript_tools.edge.store_sqlite import open_sqlite
from transcript_tools.edge.store_url import now_ms
from transcript_tools.store.sdk import TTSessionStore

pytestmark = pytest.mark.claude

AT = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


def _run(prompt: str, options: Any) -> list[Any]:
    from claude_agent_sdk import query

    async def go() -> list[Any]:
        return [m async for m in query(prompt=prompt, options=options)]

    return asyncio.run(go())


def test_claude_code_mirrors_into_the_store_and_resumes_from_it(
    tmp_path: Path, standin: StandIn, faketime: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from claude_agent_sdk import ClaudeAgentOptions, ResultMessage

    cli = bundled_cli()
    if cli is None:
        pytest.skip("Claude Code 2.1.332 not found: install claude-agent-sdk==0.2.189")
    for name in list(os.environ):
        # The SDK passes its own environment on: only the sandbox's. libfaketime's variables
        # too (a suite run under a shifted clock): the CLI's clock is pinned by clock_env, and
        # an inherited FAKETIME_SHARED names a shared-memory clock the CLI cannot open.
        if name.startswith(("ANTHROPIC_", "CLAUDE", "FAKETIME")) or name == "LD_PRELOAD":
            monkeypatch.delenv(name)
    sandbox = Sandbox.create(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    db = tmp_path / "store.sqlite3"
    store = TTSessionStore(lambda: open_sqlite(db, now_ms))
    env = {**sandbox.env(standin.base_url), **clock_env(AT)}

    def options(**kw: Any) -> Any:
        return ClaudeAgentOptions(
            cli_path=str(cli.path), cwd=str(work), env=env, session_store=store, allowed_tools=[], **kw
        )

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
    turn = [
        r
        for r in standin.requests[n_before:]
        if r.path.startswith("/v1/messages") and "count_tokens" not in r.path
    ]
    sent = json.dumps([r.body for r in turn])
    assert "PELICAN-7" in sent and "what was the word?" in sent
    after = asyncio.run(store.load(key))
    assert after is not None and after[: len(mirrored)] == mirrored
    assert any("what was the word?" in json.dumps(e) for e in after[len(mirrored) :])


def test_a_pulled_session_resumes_in_claude_code_on_another_machine(
    tmp_path: Path, standin: StandIn, claude_332: Any, faketime: None
) -> None:
    """Push from one config dir, pull into another under a different cwd (`--cwd`), and
    `claude -p --resume` there sends the earlier conversation."""

    from tests.support.claude_cli import run_claude

    src = CONFIG_332
    sid = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
    here = tmp_path / "here"
    stage(src, here)
    db = tmp_path / "store.sqlite3"
    sandbox = Sandbox.create(tmp_path / "there")
    work = tmp_path / "there" / "app"
    work.mkdir()
    for cfg, args in ((here, ["push", sid]), (sandbox.config_dir, ["pull", sid, "--cwd", str(work)])):
        r = tt("store", *args, "--store", f"sqlite:///{db}", config=cfg, width=None)
        assert r.returncode == 0, r.stderr
    records = [
        json.loads(x)
        for x in (src / "projects" / "-home-dev-demo-app" / f"{sid}.jsonl").read_text().splitlines()
    ]
    # The session was compacted: a resume sends the summary and what follows it, so the
    # last prompt typed before this test's is what must come back.
    last_prompt = [
        r["message"]["content"]
        for r in records
        if r.get("type") == "user"
        and not r.get("isMeta")
        and isinstance(r.get("message", {}).get("content"), str)
        and not r["message"]["content"].startswith("<")
    ][-1]
    n = len(standin.requests)
    run_claude(
        claude_332, "and now?", sandbox=sandbox, cwd=work, base_url=standin.base_url, resume=sid, clock=AT
    )
    sent = json.dumps([q.body for q in standin.requests[n:]])
    assert json.dumps(last_prompt)[1:-1][:60] in sent and "and now?" in sent
