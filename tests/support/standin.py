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
With ``StandIn(strict=True)`` a request that breaks one of the API's request rules
gets the real API's 400 instead (`tests.support.strict`).
Replies are ``Text``, ``ToolUse``, ``Blocks`` (any content) or ``ApiError`` (429, 500,
529 ..., with ``retry-after`` and the API's error body; optionally mid-stream); they and
their rendering live in ``wire`` and are re-exported here.

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
import socket
import sys
import threading
from collections import deque
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from tests.support.policy import claude_code_policy
from tests.support.strict import refusal
from tests.support.wire import (
    JSON,
    ApiError,
    Blocks,
    Exchange,
    Matcher,
    Policy,
    RecordedRequest,
    Reply,
    Text,
    ToolUse,
    content_of,
    error_headers,
    estimate_tokens,
    message_json,
    new_id,
    sse_events,
)

# The reply types are part of this module's API: tests write
# ``from tests.support.standin import StandIn, Text, ToolUse, ApiError``.
__all__ = ["ApiError", "Blocks", "Exchange", "RecordedRequest", "Reply", "StandIn", "Text", "ToolUse"]


# ---------------------------------------------------------------------------------------
# The server


class StandIn:
    """The stand-in server, used as a context manager.

    Example::

        with StandIn() as api:
            api.script(ToolUse("Read", {"file_path": "/x"}), Text("done"))
            client = anthropic.Anthropic(base_url=api.base_url, api_key="k")
            ...
            assert api.message_requests[0].messages == [...]
    """

    def __init__(self, policy: Policy | None = None, *, strict: bool = False) -> None:
        """``strict``: a ``/v1/messages`` request that breaks one of the API's request
        rules gets the real API's 400 (`tests.support.strict.refusal`), as the real
        API would give it, before any script or policy is consulted."""
        self.policy: Policy = policy or claude_code_policy
        self.strict = strict
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
        # A short poll interval: shutdown() waits up to one interval (default 0.5 s).
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="standin", daemon=True
        )
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
        if request.is_messages and self.strict:
            reply = refusal(request.body, request.raw)
        if request.is_messages and reply is None:
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

    def __init__(
        self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], owner: StandIn
    ) -> None:
        self.owner = owner
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # socketserver prints the traceback to stderr; keep it for the test instead
        # (StandIn.errors). It can be a client hanging up mid-answer, or a policy bug; the
        # session generator and the oracle fail when there is any.
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
            self._send_json(reply.status, reply.body(request_id), request_id, error_headers(reply))
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


def closed_port() -> int:
    """A local port nothing listens on (bound, then let go): an API that cannot be reached."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return int(port)
