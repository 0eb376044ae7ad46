"""`query()`: the Python API over the QueryEngine, against the stand-in — the Agent SDK's
message types in order, the same assembly as ``tt resume`` (model, fork, cwd), streaming
input (turns in order, an interrupt control message), `Query.interrupt()` mid-request
leaving a file tt and (marked ``claude``) both real CLIs resume, and the README's script."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.resume.test_cli_resume import SID332, api_env, config, transcript, work_dir  # noqa: F401  (fixture)
from tests.resume_helpers import check_api_shape, read_records, text
from tests.support.paths import ROOT
from tests.support.standin import RecordedRequest, StandIn, Text, ToolUse
from transcript_tools.model.errors import UsageError
from transcript_tools.resume import turns
from transcript_tools.resume.files import load_for_resume
from transcript_tools.resume.files_query import (
    AssistantMessage,
    QueryOptions,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    query,
)

#: The date real-CLI runs are pinned to (a test gives the same verdict on any day).
CLOCK = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def collect(prompt: Any, options: QueryOptions) -> list[Any]:
    async def go() -> list[Any]:
        return [m async for m in query(prompt, options)]

    return asyncio.run(go())


def opts(config: Path, api: StandIn, **kw: Any) -> QueryOptions:
    env = {**api_env(api), "CLAUDE_CONFIG_DIR": str(config)}
    return QueryOptions(resume=kw.pop("resume", SID332[:8]), cwd=work_dir(config), env=env, **kw)


def test_a_turn_with_a_tool_call_yields_the_sdks_messages_in_order(config: Path, standin: StandIn) -> None:
    standin.script(ToolUse("Read", {"file_path": "app.py"}), Text("It prints hello world."))
    path = transcript(config)
    size = path.stat().st_size
    msgs = collect("What does app.py print?", opts(config, standin))
    assert [type(m).__name__ for m in msgs] == [
        "SystemMessage",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
        "ResultMessage",
    ]
    init, call, result, answer, done = msgs
    assert isinstance(init, SystemMessage) and init.subtype == "init" and init.data["session_id"] == SID332
    assert init.data["cwd"] == work_dir(config)
    assert (
        isinstance(call, AssistantMessage)
        and isinstance(call.content[0], ToolUseBlock)
        and call.content[0].name == "Read"
    )
    assert call.model == "claude-opus-5-5"  # the model the session last used, as tt resume picks it
    assert isinstance(result, UserMessage) and isinstance(result.content[0], ToolResultBlock)
    assert "hello world" in str(result.content[0].content)
    assert isinstance(answer, AssistantMessage) and answer.content == [TextBlock("It prints hello world.")]
    assert isinstance(done, ResultMessage) and done.subtype == "success" and not done.is_error
    assert done.result == "It prints hello world." and done.num_turns == 2 and done.session_id == SID332
    assert done.usage is not None and done.usage["output_tokens"] > 0
    assert done.model_usage is not None and set(done.model_usage) == {"claude-opus-5-5"}
    # The turn is appended to the session, and it resumes.
    new = [json.loads(x) for x in path.read_bytes()[size:].splitlines()]
    assert new[0]["message"]["content"] == "What does app.py print?" and [r["type"] for r in new[-2:]] == [
        "last-prompt",
        "cost-state",
    ]
    check_api_shape(load_for_resume(path).conversation.messages)
    assert (
        standin.message_requests[0].messages[:-1]
        == load_for_resume(path)
        .conversation.for_model("claude-opus-5-5")
        .messages[: len(standin.message_requests[0].messages) - 1]
    )


def test_options_model_max_turns_allowed_tools_and_fork(config: Path, standin: StandIn) -> None:
    standin.script(ToolUse("Bash", {"command": "echo hi"}))
    path = transcript(config)
    before = path.read_bytes()
    msgs = collect(
        "go",
        opts(
            config,
            standin,
            model="claude-haiku-4-5",
            max_turns=1,
            allowed_tools=["Bash(echo:*)"],
            fork_session=True,
        ),
    )
    notices = [m for m in msgs if isinstance(m, SystemMessage) and m.subtype == "notice"]
    assert len(notices) == 1 and notices[0].data["message"].startswith(f"forked {SID332} into ")
    init = next(m for m in msgs if isinstance(m, SystemMessage) and m.subtype == "init")
    assert init.data["session_id"] != SID332  # the fork's id
    assert standin.message_requests[0].model == "claude-haiku-4-5"
    ran = next(m for m in msgs if isinstance(m, UserMessage))
    assert not ran.content[0].is_error and "hi" in str(ran.content[0].content)  # allowed: it ran
    done = msgs[-1]
    assert isinstance(done, ResultMessage) and done.subtype == "error_max_turns" and done.num_turns == 2
    assert path.read_bytes() == before  # the original is not touched
    assert (path.parent / f"{init.data['session_id']}.jsonl").is_file()


def test_a_budget_on_an_unpriced_model_and_no_session_are_usage_errors(
    config: Path, standin: StandIn
) -> None:
    # claude-haiku-5-5: Claude Code 2.1.332 knows it, tt leaves it unpriced (model/pricing.py)
    with pytest.raises(UsageError, match="no price is known"):
        collect("go", opts(config, standin, max_budget_usd=0.01, model="claude-haiku-5-5"))
    with pytest.raises(UsageError, match="resume="):
        collect("go", QueryOptions(env=api_env(standin)))
    assert standin.message_requests == []


def test_query_refuses_a_subagent_s_file_and_a_file_that_is_no_transcript_as_tt_resume_does(
    config: Path, standin: StandIn, tmp_path: Path
) -> None:
    # A review's find: query(resume=<agent file>) said "no conversation to resume" (exit 4)
    # where tt resume names the session (exit 2), and a binary file was not said to be one.
    from transcript_tools.model.errors import NotATranscript

    [agent] = sorted(config.rglob("subagents/agent-*.jsonl"))[:1]
    with pytest.raises(UsageError, match="tt resume works on a session") as e:
        collect("go", opts(config, standin, resume=str(agent)))
    assert e.value.exit_code == 2 and e.value.hint == f"tt resume {SID332}"
    binary = tmp_path / "00000000-0000-4000-8000-00000000b1a5.jsonl"
    binary.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(NotATranscript, match="this is not a transcript"):
        collect("go", opts(config, standin, resume=str(binary)))
    assert standin.message_requests == []


def test_streaming_input_runs_each_message_as_a_turn_in_order(config: Path, standin: StandIn) -> None:
    standin.script(Text("one"), Text("two"), Text("three"))
    answered = [asyncio.Event() for _ in range(3)]
    q = query(_waiting(answered), opts(config, standin))

    async def go() -> list[Any]:
        out = []
        async for m in q:
            out.append(m)
            if isinstance(m, ResultMessage):
                answered[sum(isinstance(x, ResultMessage) for x in out) - 1].set()
        return out

    msgs = asyncio.run(go())
    results = [m for m in msgs if isinstance(m, ResultMessage)]
    assert [r.result for r in results] == ["one", "two", "three"]
    sent = [r.messages[-1]["content"] for r in standin.message_requests]
    assert [turns.prompt_text(c) for c in sent] == ["first", "second", "third"]
    # each turn sees the previous ones: the history grows by prompt + answer
    assert [len(r.messages) for r in standin.message_requests] == [
        len(standin.message_requests[0].messages) + 2 * k for k in range(3)
    ]


async def _waiting(answered: list[asyncio.Event]) -> AsyncIterator[dict[str, Any]]:
    """first, second (as blocks), third: each sent once the turn before it is answered."""
    for i, word in enumerate(["first", "second", "third"]):
        if i:
            await answered[i - 1].wait()
        content: Any = word if i != 1 else [{"type": "text", "text": word}]
        yield {"type": "user", "message": {"role": "user", "content": content}}


def test_messages_queued_while_a_turn_runs_are_one_turn_as_claude_code_joins_them(config: Path) -> None:
    arrived, release = threading.Event(), threading.Event()
    with StandIn(_slow_first(arrived, release)) as api:

        async def messages() -> AsyncIterator[dict[str, Any]]:
            yield {"type": "user", "message": {"role": "user", "content": "first"}}
            assert await asyncio.to_thread(arrived.wait, 30)
            yield {"type": "user", "message": {"role": "user", "content": "queued-a"}}
            yield {"type": "user", "message": {"role": "user", "content": "queued-b"}}
            await asyncio.sleep(0.2)
            release.set()

        msgs = collect(messages(), opts(config, api))
        requests = api.message_requests
    assert [m.result for m in msgs if isinstance(m, ResultMessage)] == ["too late", "after the interrupt"]
    assert requests[1].messages[-1]["content"] == "queued-a\nqueued-b"


def test_merge_prompts_joins_strings_and_blocks_as_2_1_332() -> None:
    from transcript_tools.resume.files_query import merge_prompts

    # what the real CLI wrote (probed with the stand-in): see merge_prompts' docstring
    assert merge_prompts(["queued-a", "two"]) == "queued-a\ntwo"
    assert merge_prompts([[{"type": "text", "text": "two"}], "three"]) == [
        {"type": "text", "text": "two\n"},
        {"type": "text", "text": "three"},
    ]
    img = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    assert merge_prompts([[img], "see?"]) == [img, {"type": "text", "text": "see?"}]
    assert merge_prompts(["only"]) == "only"


def _slow_first(arrived: threading.Event, release: threading.Event):  # type: ignore[no-untyped-def]
    calls = []

    def policy(req: RecordedRequest) -> Text:
        calls.append(req)
        if len(calls) == 1:
            arrived.set()
            release.wait(30)
            return Text("too late")
        return Text("after the interrupt")

    return policy


def test_interrupt_mid_request_closes_the_turn_and_the_file_resumes(config: Path) -> None:
    arrived, release = threading.Event(), threading.Event()
    path = transcript(config)
    before = path.read_bytes()
    with StandIn(_slow_first(arrived, release)) as api:

        async def go() -> list[Any]:
            q = query("slow one", opts(config, api))

            async def interrupter() -> None:
                assert await asyncio.to_thread(arrived.wait, 30)
                q.interrupt()
                release.set()

            task = asyncio.create_task(interrupter())
            out = [m async for m in q]
            await task
            return out

        msgs = asyncio.run(go())
    done = msgs[-1]
    # as Claude Code 2.1.332 answers an interrupt control request: the marker, then the result
    assert isinstance(done, ResultMessage) and done.terminal_reason == "aborted_streaming" and done.is_error
    assert isinstance(msgs[-2], UserMessage) and msgs[-2].content == [TextBlock(turns.INTERRUPTED)]
    assert not any(isinstance(m, AssistantMessage) for m in msgs)  # the late answer is not written
    new = [json.loads(x) for x in path.read_bytes()[len(before) :].splitlines()]
    assert [r["type"] for r in new] == ["user", "user", "last-prompt", "cost-state"]
    assert new[1]["message"]["content"] == [text(turns.INTERRUPTED)]
    check_api_shape(load_for_resume(path).conversation.messages)


def test_an_interrupt_control_message_stops_the_turn_and_the_next_message_runs(config: Path) -> None:
    arrived, release = threading.Event(), threading.Event()
    with StandIn(_slow_first(arrived, release)) as api:

        async def messages() -> AsyncIterator[dict[str, Any]]:
            yield {"type": "user", "message": {"role": "user", "content": "slow one"}}
            assert await asyncio.to_thread(arrived.wait, 30)
            yield {"type": "control_request", "request_id": "r1", "request": {"subtype": "interrupt"}}
            yield {"type": "user", "message": {"role": "user", "content": "next one"}}
            await asyncio.sleep(0.2)  # the interrupt is read before the first answer comes
            release.set()

        msgs = collect(messages(), opts(config, api))
        requests = api.message_requests
    results = [m for m in msgs if isinstance(m, ResultMessage)]
    assert [r.terminal_reason for r in results] == ["aborted_streaming", "completed"]
    assert results[1].result == "after the interrupt"
    # the second turn carries the closed first one: the prompt, then the interrupt marker
    sent = requests[1].messages
    assert sent[-1]["content"] == "next one" or turns.prompt_text(sent[-1]["content"]).endswith("next one")
    check_api_shape(sent)


def test_a_malformed_streamed_message_is_a_usage_error(config: Path, standin: StandIn) -> None:
    async def messages() -> AsyncIterator[dict[str, Any]]:
        yield {"type": "user", "message": {"role": "user", "content": 7}}

    with pytest.raises(UsageError, match="content"):
        collect(messages(), opts(config, standin))


def test_the_readme_script_runs(config: Path, standin: StandIn, tmp_path: Path) -> None:
    """The README's query() example, taken from the README itself and run as a script."""
    readme = (ROOT / "README.md").read_text()
    m = re.search(r"<!-- query-example -->\n```python\n(.*?)```", readme, re.S)
    assert m is not None, "the README's query() example is missing"
    script = tmp_path / "example.py"
    script.write_text(m.group(1))
    standin.script(Text("Nothing is left to do."))
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(ROOT),
        **api_env(standin),
        "CLAUDE_CONFIG_DIR": str(config),
        "HOME": str(tmp_path),
    }
    r = subprocess.run(
        [sys.executable, str(script), SID332[:8]],
        env=env,
        cwd=work_dir(config),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "Nothing is left to do." in r.stdout and "$" in r.stdout


@pytest.mark.claude
def test_both_clis_resume_a_query_interrupted_mid_request(generated_session: Any, tmp_path: Path) -> None:
    from tests.support.oracle import conversation_blocks, resume_with_cli

    s = generated_session.copy_to(tmp_path)
    arrived, release = threading.Event(), threading.Event()
    with StandIn(_slow_first(arrived, release)) as api:

        async def go() -> None:
            q = query(
                "a prompt cut short",
                QueryOptions(
                    resume=str(s.transcript), env={**api_env(api), "CLAUDE_CONFIG_DIR": str(s.config_dir)}
                ),
            )

            async def interrupter() -> None:
                assert await asyncio.to_thread(arrived.wait, 30)
                q.interrupt()
                release.set()

            task = asyncio.create_task(interrupter())
            [m async for m in q]
            await task

        asyncio.run(go())
    blocks = conversation_blocks(
        resume_with_cli(s.cli, s.config_dir, s.session_id, s.cwd, "after the cut", clock=CLOCK)
    )
    kinds = [(b.role, b.kind, b.value) for b in blocks[-2:]]
    assert kinds[-1] == ("user", "text", "after the cut")
    assert any(b.value == "a prompt cut short" for b in blocks)
    recs = [r for r in read_records(s.transcript) if r.get("type") == "user"]
    k = next(i for i, r in enumerate(recs) if r["message"]["content"] == "a prompt cut short")
    assert recs[k + 1]["message"]["content"] == [text(turns.INTERRUPTED)]  # the turn tt closed


def test_an_unreachable_api_yields_the_error_result_then_raises(config: Path) -> None:
    from tests.support.standin import closed_port
    from transcript_tools.model.errors import ApiError

    env = {
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{closed_port()}",
        "CLAUDE_CONFIG_DIR": str(config),
    }
    seen: list[Any] = []

    async def go() -> None:
        async for m in query(
            "hello?", QueryOptions(resume=SID332, cwd=work_dir(config), env=env, max_retries=0)
        ):
            seen.append(m)

    with pytest.raises(ApiError, match="cannot reach the API"):
        asyncio.run(go())
    assert (
        isinstance(seen[-1], ResultMessage)
        and seen[-1].subtype == "error_during_execution"
        and seen[-1].terminal_reason == "api_error"
    )
