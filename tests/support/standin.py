"""A local stand-in for the Anthropic Messages API, for tests.

``StandIn`` is a threaded HTTP server on 127.0.0.1 (ephemeral port) that speaks the wire
shapes of the real API closely enough for the real ``anthropic`` Python client and the
real Claude Code CLI:

- ``POST /v1/messages``: a JSON message, or with ``"stream": true`` an SSE stream
  (``message_start``, ``content_block_start`` / ``content_block_delta`` (``text_delta``,
  ``input_json_delta``, ``thinking_delta`` + ``signature_delta``) / ``content_block_stop``,
  ``message_delta`` with ``stop_reason`` and usage, ``message_stop``), sent chunked;
- ``POST /v1/messages/count_tokens``: ``{"input_tokens": N}``, a rough estimate;
- anything else: 404 with the API's JSON error body.

What a ``/v1/messages`` request gets: the first scripted reply whose matcher accepts it
(FIFO; ``api.script(...)``), else the policy's answer (``policy.claude_code_policy`` by
default: it plays the scripted model Claude Code's own runs were recorded with).
Replies are ``Text``, ``ToolUse``, ``Blocks`` (any content) or ``ApiError`` (429, 500,
529 ..., with ``retry-after`` and the API's error body; optionally mid-stream).

Invariants:
- It binds 127.0.0.1 only and never opens a connection anywhere.
- Every request is recorded (method, path, lower-cased headers, parsed JSON body) before
  it is answered, in arrival order; ``api.requests`` is a snapshot copy.
- It is safe under concurrent requests (Claude Code sends several at once): the queue and
  the record share one lock; each connection has its own thread.
- Every response closes its connection, so no idle keep-alive socket outlives a test
  (``filterwarnings = error`` turns a leaked socket into a failure).
- Leaving the ``with`` block stops the server and joins its threads. It never prints.
"""

from __future__ import annotations

import json
import sys
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Union

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


Reply = Union[Text, ToolUse, Blocks, ApiError]
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
            # The signature is opaque to clients; Claude Code stores and resends it.
            blocks.append({"type": "thinking", "thinking": reply.thinking, "signature": "c3RhbmRpbg=="})
        blocks.append({"type": "text", "text": reply.text})
        return blocks, reply.stop_reason
    if isinstance(reply, ToolUse):
        blocks = [] if reply.text is None else [{"type": "text", "text": reply.text}]
        blocks.append(
            {"type": "tool_use", "id": reply.id or new_id("toolu"), "name": reply.name, "input": dict(reply.input)}
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


def message_json(request: RecordedRequest, blocks: list[dict[str, JSON]], stop_reason: str) -> dict[str, JSON]:
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
            yield _sse("content_block_start", _block_start(index, {"type": "thinking", "thinking": "", "signature": ""}))
            for part in _chunks(str(block["thinking"]), 16):
                yield _sse("content_block_delta", _delta(index, {"type": "thinking_delta", "thinking": part}))
            signature = {"type": "signature_delta", "signature": block.get("signature", "")}
            yield _sse("content_block_delta", _delta(index, signature))
        elif kind == "tool_use":
            head = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            yield _sse("content_block_start", _block_start(index, head))
            # The API opens with an empty partial_json, then the JSON in pieces.
            pieces = [""] + _chunks(json.dumps(block.get("input", {}), ensure_ascii=False), 12)
            for part in pieces:
                yield _sse("content_block_delta", _delta(index, {"type": "input_json_delta", "partial_json": part}))
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


# ---------------------------------------------------------------------------------------
# The server


def _default_policy(request: RecordedRequest) -> Reply:
    # Imported late: policy imports this module for the reply types.
    from tests.support.policy import claude_code_policy

    return claude_code_policy(request)


class StandIn:
    """The stand-in server. Use it as a context manager::

        with StandIn() as api:
            api.script(ToolUse("Read", {"file_path": "/x"}), Text("done"))
            client = anthropic.Anthropic(base_url=api.base_url, api_key="k")
            ...
            assert api.message_requests[0].messages == [...]
    """

    def __init__(self, policy: Policy | None = None) -> None:
        self.policy: Policy = policy or _default_policy
        self._lock = threading.Lock()
        self._queue: deque[tuple[Matcher | None, Reply]] = deque()
        self._exchanges: list[Exchange] = []
        self._counter = 0
        self._errors: list[BaseException] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle

    def __enter__(self) -> StandIn:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> None:
        if self._server is not None:
            raise RuntimeError("stand-in already started")
        self._server = _Server(("127.0.0.1", 0), _Handler, self)
        self._thread = threading.Thread(target=self._server.serve_forever, name="standin", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        # server_close also joins the per-connection threads (block_on_close).
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()
        self._server = None
        self._thread = None

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("stand-in not started")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- scripting and inspection

    def script(self, *replies: Reply, match: Matcher | None = None) -> None:
        """Queue replies for the next ``/v1/messages`` requests that ``match`` accepts
        (every one when None). Unused ones stay queued; see ``pending``."""
        with self._lock:
            self._queue.extend((match, r) for r in replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def exchanges(self) -> list[Exchange]:
        with self._lock:
            return list(self._exchanges)

    @property
    def requests(self) -> list[RecordedRequest]:
        return [e.request for e in self.exchanges]

    @property
    def message_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.is_messages]

    def clear(self) -> None:
        """Forget the record (not the queue), e.g. between two CLI runs."""
        with self._lock:
            self._exchanges.clear()

    # -- called by the handler threads

    def _answer(self, request: RecordedRequest) -> Reply | None:
        reply: Reply | None = None
        if request.is_messages:
            with self._lock:
                for i, (match, queued) in enumerate(self._queue):
                    if match is None or match(request):
                        reply = queued
                        del self._queue[i]
                        break
            if reply is None:
                reply = self.policy(request)
        with self._lock:
            self._exchanges.append(Exchange(request, reply))
        return reply

    def _next_index(self) -> int:
        with self._lock:
            self._counter += 1
            return self._counter - 1

    def _record_error(self, error: BaseException) -> None:
        with self._lock:
            self._errors.append(error)

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised while serving (e.g. a client that hung up mid-stream)."""
        with self._lock:
            return list(self._errors)


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # so server_close() joins the handler threads
    block_on_close = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], owner: StandIn) -> None:
        self.owner = owner
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # socketserver prints the traceback to stderr; keep it for the test instead.
        # Clients abort requests (Claude Code cancels side calls), so this is not fatal.
        error = sys.exc_info()[1]
        if error is not None:
            self.owner._record_error(error)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # A socket timeout, so a client that connects and never sends (a pre-connect) cannot
    # keep stop() waiting on its handler thread for ever.
    timeout = 10
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        # The default writes to stderr; the record is in StandIn.exchanges instead.
        return

    def do_POST(self) -> None:
        self._handle()

    def do_GET(self) -> None:
        self._handle()

    def do_HEAD(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def _read_body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(parts)
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _handle(self) -> None:
        self.close_connection = True
        raw = self._read_body()
        try:
            body: JSON = json.loads(raw) if raw else None
        except (ValueError, UnicodeDecodeError):
            body = None
        path, _, query = self.path.partition("?")
        request = RecordedRequest(
            index=self.server.owner._next_index(),
            method=self.command,
            path=path,
            query=query,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            raw=raw,
        )
        reply = self.server.owner._answer(request)
        request_id = new_id("req")
        if request.method == "POST" and path == "/v1/messages/count_tokens":
            self._send_json(200, {"input_tokens": estimate_tokens(body)}, request_id)
        elif reply is None:
            error = ApiError(404, f"Not found: {self.command} {path}")
            self._send_json(404, error.body(request_id), request_id)
        elif isinstance(reply, ApiError) and not (reply.mid_stream and request.stream):
            self._send_json(reply.status, reply.body(request_id), request_id, _error_headers(reply))
        elif isinstance(reply, ApiError):
            self._send_stream(sse_events(request, [], "", error=reply, request_id=request_id), request_id)
        else:
            blocks, stop_reason = content_of(reply)
            if request.stream:
                self._send_stream(sse_events(request, blocks, stop_reason), request_id)
            else:
                self._send_json(200, message_json(request, blocks, stop_reason), request_id)

    def _send_json(
        self, status: int, payload: JSON, request_id: str, extra: Mapping[str, str] | None = None
    ) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("request-id", request_id)
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(data)))
        self.send_header("connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _send_stream(self, events: Iterator[bytes], request_id: str) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", request_id)
        self.send_header("transfer-encoding", "chunked")
        self.send_header("connection", "close")
        self.end_headers()
        for event in events:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _error_headers(error: ApiError) -> dict[str, str]:
    headers = {}
    if error.retry_after is not None:
        # The API sends whole seconds; the anthropic client also takes fractions, which
        # keeps retry tests fast.
        headers["retry-after"] = f"{error.retry_after:g}"
    if error.should_retry is not None:
        headers["x-should-retry"] = "true" if error.should_retry else "false"
    return headers
