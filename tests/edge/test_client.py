"""`client`: the real ``anthropic`` client against the local stand-in — streaming,
retries with retry-after, every error translated — and the pure stream accumulator."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.standin import ApiError as Scripted
from tests.support.standin import Blocks, StandIn, Text, ToolUse, closed_port
from transcript_tools.edge.client import (
    AnthropicClient,
    Credentials,
    ModelRequest,
    StreamAccumulator,
    backoff,
    credentials_from_env,
    retry_after,
)
from transcript_tools.model.errors import ApiError, CredentialsError

MODEL = "claude-standin-1"


def request(content: str = "Hello") -> ModelRequest:
    tools = [{"name": "Read", "description": "read", "input_schema": {"type": "object", "properties": {}}}]
    return ModelRequest(MODEL, [{"role": "user", "content": content}], 256, "be brief", tools)


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, s: float) -> None:
        self.calls.append(s)


def client_for(api: StandIn, retries: int = 3) -> tuple[AnthropicClient, Sleeps]:
    sleeps = Sleeps()
    c = AnthropicClient(
        Credentials("test-key", None, api.base_url), max_retries=retries, sleep=sleeps, rand=lambda: 0.0
    )
    return c, sleeps


# --- credentials -------------------------------------------------------------------------


def test_credentials_come_from_the_environment() -> None:
    c = credentials_from_env({"ANTHROPIC_API_KEY": " sk-x ", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    assert (c.api_key, c.base_url, c.source) == ("sk-x", "http://127.0.0.1:9", "ANTHROPIC_API_KEY")
    assert credentials_from_env({"ANTHROPIC_AUTH_TOKEN": "tok"}).source == "ANTHROPIC_AUTH_TOKEN"
    with pytest.raises(CredentialsError, match="ANTHROPIC_API_KEY is not set") as e:
        credentials_from_env({"ANTHROPIC_API_KEY": "  "})
    assert e.value.exit_code == 5


# --- streaming through the real client ---------------------------------------------------


def test_streamed_text_is_assembled_with_usage_and_request_id(standin: StandIn) -> None:
    answer = "A streamed answer longer than one sixteen-character delta."
    standin.script(Text(answer, thinking="first, think"))
    c, _ = client_for(standin)
    with c:
        r = c.create(request())
    m = r.message
    assert m["content"] == [
        {"type": "thinking", "thinking": "first, think", "signature": "c3RhbmRpbg=="},
        {"type": "text", "text": answer},
    ]
    assert m["stop_reason"] == "end_turn" and m["model"] == MODEL and m["id"].startswith("msg_")
    assert m["usage"]["input_tokens"] > 0 and m["usage"]["output_tokens"] > 0
    assert None not in m["usage"].values()
    assert r.request_id and r.request_id.startswith("req_") and r.attempts == 1
    (sent,) = standin.message_requests
    assert sent.stream and sent.body["system"] == "be brief" and sent.tool_names == ["Read"]
    assert sent.body["messages"] == [{"role": "user", "content": "Hello"}]


def test_tool_use_input_is_joined_from_json_deltas(standin: StandIn) -> None:
    tool_input = {"file_path": "/x/ünï.py", "offset": 3, "nested": {"a": [1, 2]}}
    standin.script(ToolUse("Read", tool_input, id="toolu_fixed", text="Reading."))
    events: list[dict[str, Any]] = []
    c, _ = client_for(standin)
    with c:
        r = c.create(request(), events.append)
    assert r.message["content"] == [
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "toolu_fixed", "name": "Read", "input": tool_input},
    ]
    assert r.message["stop_reason"] == "tool_use"
    assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
    assert sum(1 for e in events if e.get("delta", {}).get("type") == "input_json_delta") > 2


def _a_model_the_sdk_deprecates() -> str:
    # The SDK's own list moves with its releases (2.15.0 dropped claude-sonnet-4-5, retired
    # on 2026-11-30, and CI went red on it): take a model from the installed SDK's list, the
    # one its `messages.create` consults, so the test is of tt's handling, not of the list.
    from anthropic._data import DEPRECATED_MODELS

    assert DEPRECATED_MODELS, "the installed anthropic SDK deprecates no model: nothing to warn about"
    return next(iter(DEPRECATED_MODELS))


def test_sdk_warnings_become_notices(standin: StandIn) -> None:
    standin.script(Text("ok"))
    c, _ = client_for(standin)
    model = _a_model_the_sdk_deprecates()
    deprecated = ModelRequest(model, [{"role": "user", "content": "hi"}], 16)
    with c:
        c.create(deprecated)
    assert len(c.notices) == 1 and "deprecated" in c.notices[0] and model in c.notices[0]


def test_blocks_without_deltas_arrive_whole(standin: StandIn) -> None:
    standin.script(Blocks([{"type": "redacted_thinking", "data": "opaque"}, {"type": "text", "text": "ok"}]))
    c, _ = client_for(standin)
    with c:
        assert c.create(request()).message["content"][0] == {"type": "redacted_thinking", "data": "opaque"}


# --- retries -----------------------------------------------------------------------------


def test_429_then_529_then_success_honours_retry_after(standin: StandIn) -> None:
    standin.script(
        Scripted.rate_limited(retry_after=2), Scripted.overloaded(retry_after=0.5), Text("finally")
    )
    c, sleeps = client_for(standin)
    with c:
        r = c.create(request())
    assert r.message["content"] == [{"type": "text", "text": "finally"}] and r.attempts == 3
    assert sleeps.calls == [2.0, 0.5]
    assert len(standin.message_requests) == 3


def test_500_and_a_mid_stream_overload_are_retried_with_backoff(standin: StandIn) -> None:
    standin.script(Scripted.server_error(), Scripted(529, "Overloaded", mid_stream=True), Text("ok"))
    c, sleeps = client_for(standin)
    with c:
        r = c.create(request())
    assert r.attempts == 3 and sleeps.calls == [backoff(0, 0.5), backoff(1, 0.5)] == [0.5, 1.0]


def test_retries_run_out_into_one_api_error(standin: StandIn) -> None:
    standin.script(*[Scripted.overloaded(retry_after=0.01)] * 3)
    c, sleeps = client_for(standin, retries=2)
    with c, pytest.raises(ApiError, match="HTTP 529 overloaded_error: Overloaded") as e:
        c.create(request())
    assert e.value.exit_code == 5 and len(sleeps.calls) == 2
    assert isinstance(e.value.__cause__, Exception)  # the anthropic error, chained


def test_x_should_retry_false_is_final(standin: StandIn) -> None:
    standin.script(Scripted(529, "Overloaded", should_retry=False), Text("never"))
    c, sleeps = client_for(standin)
    with c, pytest.raises(ApiError):
        c.create(request())
    assert sleeps.calls == [] and standin.pending == 1


@pytest.mark.parametrize(
    ("status", "error", "hint"),
    [
        (400, ApiError, "tt validate"),
        (404, ApiError, "--model"),
        (401, CredentialsError, "ANTHROPIC_API_KEY"),
        (403, CredentialsError, "ANTHROPIC_API_KEY"),
    ],
)
def test_client_errors_are_not_retried(
    standin: StandIn, status: int, error: type[Exception], hint: str
) -> None:
    standin.script(Scripted(status, "nope"))
    c, sleeps = client_for(standin)
    with c, pytest.raises(error) as e:
        c.create(request())
    assert sleeps.calls == [] and hint in str(e.value) and "nope" in str(e.value)


def test_an_unreachable_api_is_retried_then_one_clear_error() -> None:
    sleeps = Sleeps()
    base = f"http://127.0.0.1:{closed_port()}"
    c = AnthropicClient(Credentials("k", None, base), max_retries=2, sleep=sleeps, rand=lambda: 0.0)
    with c, pytest.raises(ApiError, match=f"cannot reach the API at {base}") as e:
        c.create(request())
    assert len(sleeps.calls) == 2 and "ANTHROPIC_BASE_URL" in str(e.value)


# --- pure pieces -------------------------------------------------------------------------


def test_retry_after_forms() -> None:
    assert retry_after({"retry-after-ms": "1500"}) == 1.5
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0) == 10.0
    assert retry_after({"retry-after": "soon"}) is None and retry_after({}) is None
    assert [backoff(k) for k in range(6)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert backoff(0, jitter=1.0) == 0.375


def test_accumulator_refuses_an_unfinished_stream() -> None:
    acc = StreamAccumulator()
    acc.feed(
        {
            "type": "message_start",
            "message": {
                "id": "m",
                "model": "x",
                "content": [],
                "usage": {"input_tokens": 3, "service_tier": None},
            },
        }
    )
    acc.feed(
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t", "name": "Read", "input": {}, "caller": None},
        }
    )
    acc.feed(
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"a"'},
        }
    )
    with pytest.raises(ApiError, match="ended before it was complete"):
        acc.result()
    acc.feed(
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": ": 1}"},
        }
    )
    acc.feed({"type": "content_block_stop", "index": 0})
    acc.feed({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}})
    acc.feed({"type": "message_stop"})
    m = acc.result()
    assert m["content"] == [{"type": "tool_use", "id": "t", "name": "Read", "input": {"a": 1}}]
    assert m["usage"] == {"input_tokens": 3, "output_tokens": 9} and m["stop_reason"] == "tool_use"
