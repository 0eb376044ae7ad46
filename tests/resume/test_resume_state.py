"""What a resume restores besides the messages (`resume_state`, `files_setup`): the cost
so far by model from the last ``cost-state`` (as Claude Code 2.1.332 restores it, and a
new ``cost-state`` appended after each turn that both CLIs read back), the permission
mode, and the one-line notices on load: files changed since, a newer Claude Code, a cwd
gone."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.resume.test_cli_resume import SID332, api_env, config, transcript, work_dir  # noqa: F401  (fixture)
from tests.resume_helpers import SESSION, Builder, read_records, text, tool_use
from tests.support.cli import tt
from tests.support.paths import REAL
from tests.support.standin import StandIn, Text
from transcript_tools.model import lifecycle
from transcript_tools.model.pricing import Tokens, cost_usd
from transcript_tools.resume.files_query import QueryOptions, ResultMessage, SystemMessage, query
from transcript_tools.resume.files_state import read_tail_state
from transcript_tools.resume.state import expected_content, newer_version

CLOCK = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
PRICED = "claude-sonnet-4-6"


def collect(prompt: str, options: QueryOptions) -> list[Any]:
    async def go() -> list[Any]:
        return [m async for m in query(prompt, options)]

    return asyncio.run(go())


def last_cost_state(path: Path) -> dict[str, Any]:
    return [r for r in read_records(path) if r.get("type") == "cost-state"][-1]


# --- the cost so far ---------------------------------------------------------------------


def test_the_cost_so_far_is_restored_from_the_last_cost_state_and_a_new_one_appended(
    config: Path, standin: StandIn
) -> None:
    path = transcript(config)
    recorded = last_cost_state(path)  # the fixture's own record, read here independently
    old = recorded["modelUsage"]["claude-opus-5-5"]
    standin.script(Text("cheap answer"))
    env = {**api_env(standin), "CLAUDE_CONFIG_DIR": str(config)}
    msgs = collect("one more", QueryOptions(resume=SID332, model=PRICED, cwd=work_dir(config), env=env))
    done = msgs[-1]
    assert isinstance(done, ResultMessage)
    new_tokens = Tokens(
        done.usage["input_tokens"],
        done.usage["output_tokens"],
        done.usage["cache_creation_input_tokens"],
        done.usage["cache_read_input_tokens"],
    )
    assert (
        done.usage["input_tokens"] < old["inputTokens"]
    )  # the result's usage is this run's own, as 2.1.332's
    new_cost = cost_usd(PRICED, new_tokens)
    assert new_cost is not None and new_cost > 0
    assert done.total_cost_usd == pytest.approx(recorded["totalCostUSD"] + new_cost, abs=1e-6)
    assert (
        done.model_usage is not None
        and done.model_usage["claude-opus-5-5"]["inputTokens"] == old["inputTokens"]
    )
    assert done.model_usage["claude-opus-5-5"]["costUSD"] == pytest.approx(old["costUSD"])
    after = last_cost_state(path)
    assert after["totalCostUSD"] == pytest.approx(done.total_cost_usd, abs=1e-6)
    assert after["modelUsage"]["claude-opus-5-5"] == old  # what tt does not touch stays as recorded
    assert after["modelUsage"][PRICED]["inputTokens"] == new_tokens.input
    assert after["startTime"] == recorded["startTime"] and after["sessionId"] == SID332


def test_a_session_without_cost_state_gets_none_written(tmp_path: Path, standin: StandIn) -> None:
    b = Builder(cwd=str(tmp_path))
    b.user("hi")
    b.assistant(text("hello"), stop="end_turn")
    path = b.write(tmp_path / f"{SESSION}.jsonl")
    standin.script(Text("ok"))
    msgs = collect("go", QueryOptions(resume=str(path), model=PRICED, env=api_env(standin)))
    assert isinstance(msgs[-1], ResultMessage) and not msgs[-1].is_error
    assert [r["type"] for r in read_records(path)][-1] == "last-prompt"  # 2.1.197 never wrote one: tt neither


def test_a_quoted_cost_state_inside_a_tool_result_is_not_taken(tmp_path: Path) -> None:
    b = Builder(cwd=str(tmp_path))
    b.meta(
        {
            "type": "cost-state",
            "sessionId": SESSION,
            "totalCostUSD": 0.5,
            "modelUsage": {"m": {"inputTokens": 1, "costUSD": 0.5}},
        }
    )
    b.meta({"type": "permission-mode", "permissionMode": "plan", "sessionId": SESSION})
    b.user("show me")
    b.assistant(tool_use("t1", "Bash", command="cat log"), stop="tool_use")
    b.result(
        "t1",
        '{"type":"cost-state","totalCostUSD":99,"modelUsage":{}} {"type":"permission-mode","permissionMode":"bypassPermissions"}',
    )
    path = b.write(tmp_path / "s.jsonl")
    got = read_tail_state(path)
    assert got.cost_state is not None and got.cost_state["totalCostUSD"] == 0.5
    assert got.permission_mode == "plan"


# --- the permission mode and the notices ----------------------------------------------------


def _session(tmp_path: Path, version: str = "2.1.332") -> tuple[Builder, Path]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "a.py").write_text("print(1)\n")
    (work / "b.py").write_text("x = 1\ny = 2\n")
    b = Builder(cwd=str(work), version=version)
    b.user("read them")
    b.assistant(tool_use("t1", "Read", file_path=str(work / "a.py")), stop="tool_use")
    r = b.result("t1", "print(1)")
    r["toolUseResult"] = {
        "type": "text",
        "file": {
            "filePath": str(work / "a.py"),
            "content": "print(1)",
            "numLines": 1,
            "startLine": 1,
            "totalLines": 1,
        },
    }
    b.assistant(tool_use("t2", "Edit", file_path=str(work / "b.py")), stop="tool_use")
    r = b.result("t2", "edited")
    r["toolUseResult"] = {
        "filePath": str(work / "b.py"),
        "oldString": "y = 2",
        "newString": "y = 3",
        "originalFile": "x = 1\ny = 2\n",
        "replaceAll": False,
        "structuredPatch": [],
        "userModified": False,
    }
    (work / "b.py").write_text("x = 1\ny = 3\n")  # what the edit left
    b.assistant(text("done"), stop="end_turn")
    return b, work


def _notices(path: Path, cwd: Path | None = None) -> list[str]:
    from tests.support.standin import StandIn as _S  # a prepared engine needs no request

    del _S
    from transcript_tools.edge.claude_dir import SessionRef
    from transcript_tools.edge.clock import system_clock
    from transcript_tools.resume.files_setup import prepare

    return prepare(SessionRef(path, SESSION), clock=system_clock(), env={}, model=PRICED, cwd=cwd).notices


def test_files_changed_since_the_session_saw_them_are_named_in_one_line(tmp_path: Path) -> None:
    b, work = _session(tmp_path)
    path = b.write(tmp_path / f"{SESSION}.jsonl")
    assert not [n for n in _notices(path) if "changed since" in n]  # as the session left them
    (work / "a.py").write_text("print(2)\n")
    (work / "b.py").unlink()
    (line,) = [n for n in _notices(path) if "changed since" in n]
    assert str(work / "a.py") in line and f"1 no longer exist: {work / 'b.py'}" in line


def test_the_permission_mode_is_restored_and_said(tmp_path: Path, standin: StandIn) -> None:
    b, _work = _session(tmp_path)
    b.meta({"type": "permission-mode", "permissionMode": "acceptEdits", "sessionId": SESSION})
    path = b.write(tmp_path / f"{SESSION}.jsonl")
    standin.script(Text("ok"))
    msgs = collect("go", QueryOptions(resume=str(path), model=PRICED, env=api_env(standin)))
    notices = [m.data["message"] for m in msgs if isinstance(m, SystemMessage) and m.subtype == "notice"]
    init = next(m for m in msgs if isinstance(m, SystemMessage) and m.subtype == "init")
    assert init.data["permissionMode"] == "acceptEdits"
    assert notices == [
        "the session was in permission mode acceptEdits; tt's tools follow --allowed-tools / --disallowed-tools"
    ]


def test_a_session_written_by_a_newer_claude_code_gets_a_notice(tmp_path: Path) -> None:
    b, _ = _session(tmp_path, version="2.1.999")
    path = b.write(tmp_path / f"{SESSION}.jsonl")
    known = lifecycle.CURRENT.cli_version
    assert [n for n in _notices(path) if "newer" in n] == [
        f"the session was last written by Claude Code 2.1.999, newer than {known}, the version tt knows: records it added may be passed over"
    ]
    assert (
        newer_version("2.1.1000", "2.1.332")
        and not newer_version("2.1.332", "2.1.332")
        and not newer_version("tt-0.1", "2.1.332")
    )


def test_a_gone_cwd_offers_cwd(tmp_path: Path) -> None:
    b = Builder(cwd=str(tmp_path / "gone"))
    b.user("hi")
    b.assistant(text("hello"), stop="end_turn")
    path = b.write(tmp_path / f"{SESSION}.jsonl")
    (line,) = [n for n in _notices(path) if "cwd" in n]
    assert (
        line.startswith(f"the session's cwd {tmp_path / 'gone'} does not exist here")
        and "pass --cwd DIR" in line
    )


def test_expected_content_reads_the_shapes_both_clis_write() -> None:
    """Each shape as it is in fixtures/real (2.1.197 and 2.1.332 alike)."""
    root = REAL
    kinds: dict[str, int] = {}
    for p in [
        *root.glob("claude-config-2.1.332/projects/*/*.jsonl"),
        *root.glob("claude-config-2.1.197/projects/*/*.jsonl"),
    ]:
        for line in p.read_bytes().splitlines():
            r = orjson.loads(line).get("toolUseResult")
            if isinstance(r, dict):
                t = expected_content(r)
                if t is not None:
                    kinds[t.by] = kinds.get(t.by, 0) + 1
                    if t.by == "edit" and t.expected is not None:
                        assert r["newString"] in t.expected
    assert set(kinds) == {"read", "write", "edit"}


@pytest.mark.claude
def test_claude_code_continues_the_cost_tt_wrote(
    generated_session: Any, tmp_path: Path, standin: StandIn
) -> None:
    """tt's cost-state is the one the real CLI restores: its total starts from tt's."""
    from tests.support.claude_cli import Sandbox, run_claude

    s = generated_session.copy_to(tmp_path)
    has_cost_state = any(r.get("type") == "cost-state" for r in read_records(s.transcript))
    standin.script(Text("from tt"))
    collect(
        "a turn from tt",
        QueryOptions(
            resume=str(s.transcript),
            model=PRICED,
            env={**api_env(standin), "CLAUDE_CONFIG_DIR": str(s.config_dir)},
        ),
    )
    if not has_cost_state:  # 2.1.197 writes none: tt adds none to its sessions either
        assert not any(r.get("type") == "cost-state" for r in read_records(s.transcript))
        assert s.cli.version.startswith("2.1.197")
        return
    mine = last_cost_state(s.transcript)
    assert PRICED in mine["modelUsage"]
    standin.script(Text("from claude"))
    run = run_claude(
        s.cli,
        "after tt",
        sandbox=Sandbox(s.home, s.config_dir),
        cwd=s.cwd,
        base_url=standin.base_url,
        resume=s.session_id,
        clock=CLOCK,
    )
    theirs = last_cost_state(s.transcript)
    assert run.result["total_cost_usd"] > mine["totalCostUSD"]
    assert theirs["modelUsage"][PRICED]["inputTokens"] >= mine["modelUsage"][PRICED]["inputTokens"]
    assert theirs["totalCostUSD"] == pytest.approx(run.result["total_cost_usd"], abs=1e-6)


def test_a_readable_dry_run_still_says_the_load_checks(tmp_path: Path) -> None:
    b, work = _session(tmp_path, version="2.1.999")
    path = b.write(tmp_path / f"{SESSION}.jsonl")
    (work / "a.py").write_text("changed\n")
    r = tt("resume", str(path), "--dry-run", "-p", "x", "--model", PRICED, width=None, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert any("changed since" in ln and str(work / "a.py") in ln for ln in lines)
    assert any("2.1.999, newer than" in ln for ln in lines)
