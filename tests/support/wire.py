"""The Messages API wire, as the stand-in speaks it: recorded requests, scripted replies,
and their rendering as the API's JSON body or SSE event stream.

No sockets, no threads (ids are random). Shapes follow the public API (docs.anthropic.com,
"Messages" and "Streaming Messages"): ``message_start`` carries the message with empty
content and ``stop_reason: null``; each block is ``content_block_start``, one or more
deltas (``text_delta``; ``input_json_delta`` opening with an empty ``partial_json``;
``thinking_delta`` then ``signature_delta``), ``content_block_stop``; then
``message_delta`` (``stop_reason``, usage) and ``message_stop``. Errors use the API's body
``{"type": "error", "error": {"type", "message"}, "request_id"}``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

JSON = Any  # a parsed JSON value; the wire is loosely typed and tests inspect it freely

# ---------------------------------------------------------------------------------------
# Recorded requests


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as the stand-in received it (bodies that are not JSON: ``body=None``)."""

    index: int
    method: str
    path: str  # without the query string (Claude Code adds ``?beta=true``)
    query: str
    headers: Mapping[str, str]  # names lower-cased
    body: JSON
    raw: bytes

    @property
    def is_messages(self) -> bool:
        return self.method == "POST" and self.path == "/v1/messages"

    @property
    def messages(self) -> list[dict[str, JSON]]:
        if isinstance(self.body, dict) and isinstance(self.body.get("messages"), list):
            return list(self.body["messages"])
        return []

    @property
    def model(self) -> str:
        if isinstance(self.body, dict) and isinstance(self.body.get("model"), str):
            return str(self.body["model"])
        return "claude-standin"

    @property
    def stream(self) -> bool:
        return isinstance(self.body, dict) and self.body.get("stream") is True

    @property
    def system_text(self) -> str:
        """The system prompt flattened to text ("" when there is none)."""
        system = self.body.get("system") if isinstance(self.body, dict) else None
        if isinstance(system, str):
            return system
        if isinstance(system, list):
            return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))
        return ""

    @property
    def tool_names(self) -> list[str]:
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        if not isinstance(tools, list):
            return []
        return [t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]


# ---------------------------------------------------------------------------------------
# Replies


@dataclass(frozen=True, slots=True)
class Text:
    """A text answer, optionally preceded by a thinking block."""

    text: str
    thinking: str | None = None
    stop_reason: str = "end_turn"


@dataclass(frozen=True, slots=True)
class ToolUse:
    """A ``tool_use`` block (``id`` generated when None), optionally after a text block."""

    name: str
    input: Mapping[str, JSON]
    id: str | None = None
    text: str | None = None


@dataclass(frozen=True, slots=True)
class Blocks:
    """Any content blocks, sent as given (tool_use ids are kept)."""

    content: Sequence[Mapping[str, JSON]]
    stop_reason: str = "end_turn"


# The API's error ``type`` for each status it uses (docs.anthropic.com, "Errors").
ERROR_TYPES: Mapping[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass(frozen=True, slots=True)
class ApiError:
    """An error answer. ``mid_stream`` (streaming requests only): HTTP 200, then an SSE
    ``error`` event after ``message_start``, as the API does when it fails mid-answer."""

    status: int
    message: str = "scripted error"
    error_type: str | None = None  # from ERROR_TYPES when None
    retry_after: float | None = None  # seconds, sent as the ``retry-after`` header
    should_retry: bool | None = None  # the ``x-should-retry`` header, when set
    mid_stream: bool = False

    @classmethod
    def rate_limited(cls, retry_after: float = 0.01) -> ApiError:
        return cls(429, "Number of request tokens has exceeded your rate limit.", retry_after=retry_after)

    @classmethod
    def server_error(cls) -> ApiError:
        return cls(500, "Internal server error")

    @classmethod
    def overloaded(cls, retry_after: float | None = 0.01) -> ApiError:
        return cls(529, "Overloaded", retry_after=retry_after)

    @property
    def type(self) -> str:
        return self.error_type or ERROR_TYPES.get(self.status, "api_error")

    def body(self, request_id: str) -> dict[str, JSON]:
        return {
            "type": "error",
            "error": {"type": self.type, "message": self.message},
            "request_id": request_id,
        }


Reply = Text | ToolUse | Blocks | ApiError
Policy = Callable[[RecordedRequest], Reply]
Matcher = Callable[[RecordedRequest], bool]


@dataclass(frozen=True, slots=True)
class Exchange:
    """A request and what the stand-in answered (None: not a ``/v1/messages`` call)."""

    request: RecordedRequest
    reply: Reply | None


# ---------------------------------------------------------------------------------------
# Wire rendering (pure)


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def estimate_tokens(body: JSON) -> int:
    """About four characters a token, over the whole request: a stand-in, not a tokenizer."""
    return max(1, len(json.dumps(body, ensure_ascii=False)) // 4)


def content_of(reply: Text | ToolUse | Blocks) -> tuple[list[dict[str, JSON]], str]:
    """The content blocks and stop_reason of a reply, with fresh ids where none were given."""
    if isinstance(reply, Text):
        blocks: list[dict[str, JSON]] = []
        if reply.thinking is not None:
            # Opaque to clients; Claude Code keeps it with the thinking block in the transcript.
            blocks.append({"type": "thinking", "thinking": reply.thinking, "signature": "c3RhbmRpbg=="})
        blocks.append({"type": "text", "text": reply.text})
        return blocks, reply.stop_reason
    if isinstance(reply, ToolUse):
        blocks = [] if reply.text is None else [{"type": "text", "text": reply.text}]
        blocks.append(
            {
                "type": "tool_use",
                "id": reply.id or new_id("toolu"),
                "name": reply.name,
                "input": dict(reply.input),
            }
        )
        return blocks, "tool_use"
    return [dict(b) for b in reply.content], reply.stop_reason


def _usage(input_tokens: int, output_tokens: int) -> dict[str, JSON]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }


def message_json(
    request: RecordedRequest, blocks: list[dict[str, JSON]], stop_reason: str
) -> dict[str, JSON]:
    """The non-streaming answer body."""
    return {
        "id": new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": request.model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": _usage(estimate_tokens(request.body), estimate_tokens(blocks)),
    }


def _chunks(text: str, size: int) -> list[str]:
    # Several deltas per block, so clients really have to join them.
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _sse(event: str, data: Mapping[str, JSON]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def sse_events(
    request: RecordedRequest,
    blocks: list[dict[str, JSON]],
    stop_reason: str,
    *,
    error: ApiError | None = None,
    request_id: str = "",
) -> Iterator[bytes]:
    """The streaming answer, event by event, as the API sends it. With ``error`` the
    stream stops after ``message_start`` with an ``error`` event."""
    input_tokens = estimate_tokens(request.body)
    start = message_json(request, [], "")
    start.update(stop_reason=None, usage=_usage(input_tokens, 1))
    yield _sse("message_start", {"type": "message_start", "message": start})
    if error is not None:
        yield _sse("error", error.body(request_id))
        return
    yield _sse("ping", {"type": "ping"})
    for index, block in enumerate(blocks):
        kind = block.get("type")
        if kind == "text":
            yield _sse("content_block_start", _block_start(index, {"type": "text", "text": ""}))
            for part in _chunks(str(block["text"]), 16):
                yield _sse("content_block_delta", _delta(index, {"type": "text_delta", "text": part}))
        elif kind == "thinking":
            yield _sse(
                "content_block_start",
                _block_start(index, {"type": "thinking", "thinking": "", "signature": ""}),
            )
            for part in _chunks(str(block["thinking"]), 16):
                yield _sse("content_block_delta", _delta(index, {"type": "thinking_delta", "thinking": part}))
            signature = {"type": "signature_delta", "signature": block.get("signature", "")}
            yield _sse("content_block_delta", _delta(index, signature))
        elif kind == "tool_use":
            head = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            yield _sse("content_block_start", _block_start(index, head))
            # The API opens with an empty partial_json, then the JSON in pieces.
            pieces = ["", *_chunks(json.dumps(block.get("input", {}), ensure_ascii=False), 12)]
            for part in pieces:
                yield _sse(
                    "content_block_delta", _delta(index, {"type": "input_json_delta", "partial_json": part})
                )
        else:
            # Blocks without a delta form (e.g. redacted_thinking) arrive whole in the start.
            yield _sse("content_block_start", _block_start(index, block))
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
    usage = _usage(input_tokens, estimate_tokens(blocks))
    del usage["service_tier"]
    delta = {"stop_reason": stop_reason, "stop_sequence": None}
    yield _sse("message_delta", {"type": "message_delta", "delta": delta, "usage": usage})
    yield _sse("message_stop", {"type": "message_stop"})


def _block_start(index: int, block: Mapping[str, JSON]) -> dict[str, JSON]:
    return {"type": "content_block_start", "index": index, "content_block": dict(block)}


def _delta(index: int, delta: Mapping[str, JSON]) -> dict[str, JSON]:
    return {"type": "content_block_delta", "index": index, "delta": dict(delta)}


def error_headers(error: ApiError) -> dict[str, str]:
    headers = {}
    if error.retry_after is not None:
        # The API sends whole seconds; the anthropic client also takes fractions, which
        # keeps retry tests fast.
        headers["retry-after"] = f"{error.retry_after:g}"
    if error.should_retry is not None:
        headers["x-should-retry"] = "true" if error.should_retry else "false"
    return headers
