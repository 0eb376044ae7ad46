"""The compatibility bench itself: the stand-in against the real ``anthropic`` client,
the scripted policy, the history normaliser, and (marked ``claude``) the real CLIs:
a generated session's shape and what Claude Code rebuilds when resuming real files."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anthropic
import pytest

from tests.support.claude_cli import ClaudeCLI
from tests.support.oracle import (
    Block,
    compare_histories,
    conversation_blocks,
    resume_request,
    resume_with_cli,
)
from tests.support.paths import REAL
from tests.support.policy import claude_code_policy, is_main_turn
from tests.support.sessions import GeneratedSession, stage_config
from tests.support.standin import ApiError, Blocks, RecordedRequest, StandIn, Text, ToolUse

MODEL = "claude-standin-1"
HELLO: list[Any] = [{"role": "user", "content": "Hello"}]  # list[Any]: the client wants its TypedDicts


@pytest.fixture
def client(standin: StandIn) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url=standin.base_url, api_key="k", max_retries=0) as c:
        yield c


def _events(client: anthropic.Anthropic, **kwargs: Any) -> list[Any]:
    with client.messages.create(model=MODEL, max_tokens=100, stream=True, **kwargs) as stream:
        return list(stream)


# --- the stand-in through the real anthropic client -------------------------------------


def test_plain_json_text_reply_and_recorded_request(standin: StandIn, client: anthropic.Anthropic) -> None:
    standin.script(Text("Hi there"))
    message = client.messages.create(model=MODEL, max_tokens=100, messages=HELLO, system="be brief")
    assert [b.type for b in message.content] == ["text"]
    assert message.content[0].text == "Hi there"  # type: ignore[union-attr]
    assert message.stop_reason == "end_turn" and message.model == MODEL
    assert message.usage.input_tokens > 0
    [request] = standin.requests
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert request.body["messages"] == HELLO and request.system_text == "be brief"
    # anthropic 2.x sends the key as a bearer token; 0.x and Claude Code as x-api-key.
    assert "k" in (
        request.headers.get("x-api-key"),
        request.headers.get("authorization", "").removeprefix("Bearer "),
    )
    assert not request.stream


def test_streaming_text_comes_in_several_deltas(standin: StandIn, client: anthropic.Anthropic) -> None:
    text = "A streamed answer that is longer than one delta of sixteen characters."
    standin.script(Text(text))
    events = _events(client, messages=HELLO)
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    deltas = [e.delta.text for e in events if e.type == "content_block_delta"]
    assert len(deltas) > 1 and "".join(deltas) == text
    assert events[-2].delta.stop_reason == "end_turn" and events[-2].usage.output_tokens > 0
    assert standin.requests[0].stream


def test_stream_helper_accumulates_the_final_message(standin: StandIn, client: anthropic.Anthropic) -> None:
    standin.script(Text("the answer", thinking="let me think about this for a while"))
    with client.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
        final = stream.get_final_message()
    assert [b.type for b in final.content] == ["thinking", "text"]
    assert final.content[0].thinking == "let me think about this for a while"  # type: ignore[union-attr]
    assert final.content[0].signature  # type: ignore[union-attr]
    assert final.content[1].text == "the answer"  # type: ignore[union-attr]


def test_tool_use_reply_json_and_streamed_input_json_delta(
    standin: StandIn, client: anthropic.Anthropic
) -> None:
    tool_input = {"city": "Paris", "days": [1, 2, 3], "units": "metric", "note": "ünïcode"}
    standin.script(ToolUse("get_weather", tool_input, id="toolu_fixed1", text="Checking."))
    message = client.messages.create(model=MODEL, max_tokens=100, messages=HELLO)
    assert message.stop_reason == "tool_use"
    assert [b.type for b in message.content] == ["text", "tool_use"]
    tool = message.content[1]
    assert (tool.id, tool.name, tool.input) == ("toolu_fixed1", "get_weather", tool_input)  # type: ignore[union-attr]

    standin.script(ToolUse("get_weather", tool_input))
    events = _events(client, messages=HELLO)
    partial = [e.delta.partial_json for e in events if e.type == "content_block_delta"]
    assert len(partial) > 2 and json.loads("".join(partial)) == tool_input
    with client.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
        final = stream.get_final_message()  # the policy answers: no TOOL: line -> ACK text
    assert final.content[0].text == "ACK n=1 last=Hello"  # type: ignore[union-attr]
    standin.script(ToolUse("get_weather", tool_input, id="toolu_fixed2"))
    with client.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
        final = stream.get_final_message()
    assert final.content[0].input == tool_input and final.content[0].id == "toolu_fixed2"  # type: ignore[union-attr]


def test_blocks_reply_is_sent_as_given(standin: StandIn, client: anthropic.Anthropic) -> None:
    blocks: list[dict[str, Any]] = [
        {"type": "text", "text": "one"},
        {"type": "tool_use", "id": "toolu_x", "name": "t", "input": {}},
    ]
    standin.script(Blocks(blocks, stop_reason="tool_use"))
    message = client.messages.create(model=MODEL, max_tokens=100, messages=HELLO)
    assert [b.model_dump(exclude_none=True) for b in message.content] == blocks


def test_429_carries_retry_after_and_the_api_error_body(
    standin: StandIn, client: anthropic.Anthropic
) -> None:
    standin.script(ApiError.rate_limited(retry_after=2))
    with pytest.raises(anthropic.RateLimitError) as caught:
        client.messages.create(model=MODEL, max_tokens=100, messages=HELLO)
    assert caught.value.status_code == 429
    assert caught.value.response.headers["retry-after"] == "2"
    assert caught.value.response.headers["request-id"].startswith("req_")
    body = json.loads(caught.value.response.text)
    assert body["type"] == "error" and body["error"]["type"] == "rate_limit_error"


def test_client_retries_429_then_succeeds(standin: StandIn) -> None:
    standin.script(
        ApiError.rate_limited(retry_after=0.01), ApiError.overloaded(retry_after=0.01), Text("finally")
    )
    with anthropic.Anthropic(base_url=standin.base_url, api_key="k", max_retries=2) as client:
        message = client.messages.create(model=MODEL, max_tokens=100, messages=HELLO)
    assert message.content[0].text == "finally"  # type: ignore[union-attr]
    assert len(standin.message_requests) == 3 and standin.pending == 0


@pytest.mark.parametrize(
    ("error", "status", "kind"),
    [(ApiError.server_error(), 500, "api_error"), (ApiError.overloaded(), 529, "overloaded_error")],
    ids=["500", "529-overloaded"],
)
def test_server_errors(
    standin: StandIn, client: anthropic.Anthropic, error: ApiError, status: int, kind: str
) -> None:
    standin.script(error)
    with pytest.raises(anthropic.InternalServerError) as caught:
        client.messages.create(model=MODEL, max_tokens=100, messages=HELLO)
    assert caught.value.status_code == status
    body = json.loads(caught.value.response.text)
    assert body["type"] == "error" and body["error"]["type"] == kind and body["request_id"].startswith("req_")
    # The same error before a stream starts is an HTTP error too.
    standin.script(error)
    with pytest.raises(anthropic.APIStatusError) as streamed:
        _events(client, messages=HELLO)
    assert streamed.value.status_code == status


def test_overloaded_mid_stream_is_an_sse_error_event(standin: StandIn, client: anthropic.Anthropic) -> None:
    standin.script(ApiError(529, "Overloaded", mid_stream=True))
    with pytest.raises(anthropic.APIStatusError, match="overloaded_error"):
        _events(client, messages=HELLO)


def test_count_tokens_and_unknown_paths(standin: StandIn, client: anthropic.Anthropic) -> None:
    counted = client.messages.count_tokens(model=MODEL, messages=HELLO)
    assert counted.input_tokens > 0
    assert standin.requests[-1].path == "/v1/messages/count_tokens"
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(urllib.request.Request(standin.base_url + "/v1/nope", data=b"{}"), timeout=5)
    with caught.value as response:
        assert response.status == 404
        assert json.loads(response.read())["error"]["type"] == "not_found_error"


def test_concurrent_requests_are_all_answered_and_recorded(standin: StandIn) -> None:
    with anthropic.Anthropic(base_url=standin.base_url, api_key="k", max_retries=0) as client:

        def ask(i: int) -> str:
            message = client.messages.create(
                model=MODEL, max_tokens=10, stream=False, messages=[{"role": "user", "content": f"q{i}"}]
            )
            return message.content[0].text  # type: ignore[union-attr]

        with ThreadPoolExecutor(max_workers=8) as pool:
            answers = list(pool.map(ask, range(16)))
    assert answers == [f"ACK n=1 last=q{i}" for i in range(16)]
    assert sorted(r.index for r in standin.requests) == list(range(16))
    assert standin.errors == []


def test_scripted_reply_with_matcher_skips_other_requests(
    standin: StandIn, client: anthropic.Anthropic
) -> None:
    tools = [{"name": "Read", "description": "read", "input_schema": {"type": "object"}}]
    standin.script(Text("for the main turn"), match=is_main_turn)
    side = client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)  # no tools: a side call
    main = client.messages.create(model=MODEL, max_tokens=10, messages=HELLO, tools=tools)  # type: ignore[arg-type]
    assert side.content[0].text == "ACK n=1 last=Hello"  # type: ignore[union-attr]
    assert main.content[0].text == "for the main turn"  # type: ignore[union-attr]


# --- the policy and the normaliser (pure) --------------------------------------------


def _request(messages: list[dict[str, Any]], tools: bool = True) -> RecordedRequest:
    body: dict[str, Any] = {"model": MODEL, "messages": messages}
    if tools:
        body["tools"] = [{"name": "Read", "input_schema": {"type": "object"}}]
    return RecordedRequest(0, "POST", "/v1/messages", "", {}, body, b"")


def test_policy_plays_the_recorded_protocol() -> None:
    reminder = {"type": "text", "text": "<system-reminder>\nToday is a day.\n</system-reminder>"}
    tool_prompt = {"type": "text", "text": 'TOOL:Read {"file_path": "/x/app.py"}'}
    assert claude_code_policy(_request([{"role": "user", "content": [reminder, tool_prompt]}])) == ToolUse(
        "Read", {"file_path": "/x/app.py"}
    )
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}
    assert claude_code_policy(
        _request([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, result])
    ) == Text("TOOL-RESULT-SEEN n=3")
    assert claude_code_policy(_request([{"role": "user", "content": "plain\nsecond line"}])) == Text(
        "ACK n=1 last=plain"
    )
    compact = {
        "role": "user",
        "content": "CRITICAL: ...\nYour task is to create a detailed summary of the conversation",
    }
    reply = claude_code_policy(
        _request([{"role": "user", "content": "kickoff"}, {"role": "assistant", "content": "ok"}, compact])
    )
    assert isinstance(reply, Text) and reply.text.startswith("<summary>") and "last=kickoff" in reply.text
    no_tools = [{"role": "user", "content": 'TOOL:Read {"file_path": "/x"}'}]
    assert claude_code_policy(_request(no_tools, tools=False)) == Text(
        'ACK n=1 last=TOOL:Read {"file_path": "/x"}'
    )
    titled = _request(HELLO, tools=False)
    schema = {
        "type": "object",
        "properties": {"title": {"type": "string"}, "new": {"type": "boolean"}},
        "required": ["title", "new"],
    }
    titled.body["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
    assert claude_code_policy(titled) == Text('{"title": "Stand-in", "new": false}')


def test_conversation_blocks_drop_runtime_renderings() -> None:
    messages: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<system-reminder>\nAs you answer...\n</system-reminder>"},
                {
                    "type": "text",
                    "text": "Summary: <system-reminder>\ntools\n</system-reminder>\nkept",
                    "cache_control": {"type": "ephemeral"},
                },
            ],
        },
        {"role": "system", "content": [{"type": "text", "text": "# Environment ..."}]},
        {"role": "user", "content": "second prompt\n"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"a": 1}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]},
    ]
    assert conversation_blocks(messages) == [
        Block("user", "text", "Summary: \nkept"),
        Block("user", "text", "second prompt"),
        Block("assistant", "tool_use", "toolu_1 Read"),
        Block("user", "tool_result", "toolu_1"),
    ]
    merged: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Summary: \nkept"},
                {"type": "text", "text": "second prompt"},
            ],
        }
    ]
    assert compare_histories(messages[:3], merged) == ""
    diff = compare_histories(messages, messages[:3], labels=("tt", "claude"))
    assert "--- tt" in diff and "-assistant tool_use    'toolu_1 Read'" in diff


# --- the real Claude Code CLIs ------------------------------------------------------


def _main_file_records(session: GeneratedSession) -> list[dict[str, Any]]:
    return [json.loads(line) for line in session.transcript.read_text().splitlines() if line.strip()]


@pytest.mark.claude
def test_generated_session_has_the_expected_shape(generated_session: GeneratedSession) -> None:
    s = generated_session
    assert s.transcript.is_file(), s.transcript
    records = _main_file_records(s)
    assert {r.get("sessionId") for r in records if "sessionId" in r} == {s.session_id}
    assert {r["version"] for r in records if "version" in r} == {s.cli.version}
    tools = [
        b["name"]
        for r in records
        if r.get("type") == "assistant"
        for b in r["message"]["content"]
        if b.get("type") == "tool_use"
    ]
    assert {"Read", "Bash", "Write", "Edit", "Glob", "Grep", "Agent"} <= set(tools)
    boundaries = [i for i, r in enumerate(records) if r.get("subtype") == "compact_boundary"]
    assert len(boundaries) == 1
    after = records[boundaries[0] + 1 :]
    assert any(r.get("isCompactSummary") for r in after)
    prompts = [
        r["message"]["content"]
        for r in after
        if r.get("type") == "user" and isinstance(r["message"]["content"], str)
    ]
    assert "After compaction, turn 1" in prompts and "After compaction, turn 2" in prompts
    agents = sorted((s.session_dir / "subagents").glob("agent-*.jsonl"))
    assert agents and all(a.with_suffix(".meta.json").is_file() for a in agents)
    entries = [json.loads(line) for line in agents[0].read_text().splitlines()]
    assert all(e["isSidechain"] for e in entries if "uuid" in e)  # 2.1.332 adds uuid-less api-request records
    assert (s.config_dir / "file-history" / s.session_id).is_dir()


@pytest.mark.claude
def test_copy_to_leaves_the_shared_session_alone(real_session: GeneratedSession, tmp_path: Path) -> None:
    copy = real_session.copy_to(tmp_path)
    assert copy.transcript != real_session.transcript
    assert copy.transcript.read_bytes() == real_session.transcript.read_bytes()
    copy.transcript.write_text("")
    assert real_session.transcript.stat().st_size > 0


def _fixture_config(version: str) -> Path:
    # The project ships these config dirs (fixtures/README.md): missing is a broken checkout.
    path = REAL / f"claude-config-{version}"
    assert path.is_dir(), f"fixtures/real/claude-config-{version} is missing"
    return path


@pytest.mark.claude
def test_resume_of_shipped_2_1_332_fixture(claude_332: ClaudeCLI, tmp_path: Path) -> None:
    cwd = tmp_path / "demo-app"
    cwd.mkdir()
    config = stage_config(
        _fixture_config("2.1.332"), tmp_path / "config", recorded_cwd="/home/dev/demo-app", cwd=cwd.resolve()
    )
    before = (config / "projects").rglob("4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl")
    transcript = next(before)
    size = transcript.stat().st_size
    messages = resume_with_cli(
        claude_332, config, "4cd0c8e6-36cd-4af9-9a2d-9191b504fada", cwd.resolve(), probe="probe 1"
    )
    assert transcript.stat().st_size == size  # the oracle resumed a copy
    blocks = conversation_blocks(messages)
    texts = [b.value for b in blocks if b.kind == "text"]
    # Only the chain from the compact boundary on: the summary first, then the preserved
    # segment (the last pre-compaction answer), then the turns after it, then the probe.
    assert blocks[0].role == "user" and blocks[0].value.startswith("This session is being continued")
    assert blocks[1] == Block("assistant", "text", "ACK n=30 last=")
    assert not any("Project kickoff" in t for t in texts)
    after = [t for t in texts if t.startswith("After compaction")]
    assert after == [
        "After compaction, turn 1 (25758)",
        "After compaction, turn 2 (20963)",
        "After compaction, turn 3 (5695)",
    ]
    tool_ids = [b.value for b in blocks if b.kind in ("tool_use", "tool_result")]
    assert tool_ids == [
        "toolu_733c23016d2f4acea4ee6bbb Bash",
        "toolu_733c23016d2f4acea4ee6bbb",
        "toolu_58c6db6427db42318d7cd8ad Read",
        "toolu_58c6db6427db42318d7cd8ad",
        "toolu_be664747bacd42f49700be7f Grep",
        "toolu_be664747bacd42f49700be7f",
    ]
    assert blocks[-1] == Block("user", "text", "probe 1")


@pytest.mark.claude
def test_resume_of_shipped_2_1_197_fixture(claude_197: ClaudeCLI, tmp_path: Path) -> None:
    cwd = tmp_path / "demo-app"
    cwd.mkdir()
    config = stage_config(
        _fixture_config("2.1.197"), tmp_path / "config", recorded_cwd="/home/dev/demo-app", cwd=cwd.resolve()
    )
    blocks = conversation_blocks(
        resume_with_cli(claude_197, config, "8c2f9135-4610-4218-97b1-bc3e03643255", cwd.resolve())
    )
    assert blocks[0].value.startswith("This session is being continued")
    # When the turn after /compact resumed, 2.1.197 took the session for interrupted and
    # wrote this filler pair into the file; it is part of the history from then on.
    texts = [b.value for b in blocks if b.kind == "text"]
    assert "Continue from where you left off." in texts and "No response requested." in texts
    assert [b.value.split()[0] for b in blocks if b.kind == "tool_use"] == [
        "toolu_51e54117c80a4631aafa9e5b",
        "toolu_9418855f9d0c467b89c13e26",
        "toolu_3e976bc9215048a3a06ab294",
    ]


@pytest.mark.claude
def test_resume_of_generated_session_matches_what_the_cli_sent_live(
    generated_session: GeneratedSession,
) -> None:
    """The oracle's rebuilt history equals the last live request (plus its answer): the
    normaliser drops exactly the runtime renderings, nothing of the conversation."""
    s = generated_session
    probe = "Oracle probe"
    request = resume_request(s.cli, s.config_dir, s.session_id, s.cwd, probe)
    live = [r for r in s.requests if r.is_messages and is_main_turn(r) and r.messages]
    last_live = live[-1]
    reply = claude_code_policy(last_live)
    assert isinstance(reply, Text)
    expected = [
        *last_live.messages,
        {"role": "assistant", "content": reply.text},
        {"role": "user", "content": probe},
    ]
    assert compare_histories(expected, request.messages, labels=("live", "resumed")) == ""
