"""The model client: the one place tt talks to the Messages API (through ``anthropic``).

`AnthropicClient.create(request)` sends one streaming request and returns the whole
answer as plain dicts (`ModelResponse`), assembled from the raw stream events by
`StreamAccumulator` (pure, so tests feed it events directly). It retries what the API
says is worth retrying — HTTP 408, 409, 429, 5xx and 529, an ``overloaded_error`` /
``api_error`` event in the middle of a stream, a connection that failed — with
exponential backoff, honouring ``retry-after-ms`` / ``retry-after`` and
``x-should-retry``. Nothing is written while a request is in flight, so a retry resends
the same request and a failed stream leaves no half answer behind.

Credentials come from ``ANTHROPIC_API_KEY`` (or ``ANTHROPIC_AUTH_TOKEN``) and the
endpoint from ``ANTHROPIC_BASE_URL``; `credentials_from_env` checks them before anything
is written (the CLI calls it first).

Invariants:
- ``anthropic`` is imported here and only here, lazily, so ``tt ls`` never loads it.
- Every anthropic error is translated once, here, into `errors.ApiError` (or
  `errors.CredentialsError`), with ``raise ... from``; KeyboardInterrupt passes through.
- The SDK's own retries are off (``max_retries=0``): this module owns the policy, so a
  mid-stream overload is retried like an HTTP 529.
"""

from __future__ import annotations

import json
import random
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..model.errors import ApiError, CredentialsError
from ..model.request import ModelRequest

DEFAULT_MAX_RETRIES = 4
DEFAULT_TIMEOUT = 600.0
#: Retry-after values past this are capped (a server asking for minutes is waited on in slices).
MAX_RETRY_AFTER = 60.0
_RETRY_STATUS = frozenset({408, 409, 429})
_RETRY_TYPES = frozenset({"overloaded_error", "rate_limit_error", "api_error", "timeout_error"})

Event = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Credentials:
    api_key: str | None
    auth_token: str | None
    base_url: str | None

    @property
    def source(self) -> str:
        """``apiKeySource`` as the Agent SDK's init message names it."""
        return "ANTHROPIC_API_KEY" if self.api_key else "ANTHROPIC_AUTH_TOKEN"


#: What to do without a key, for the commands that can show their request instead.
DRY_RUN_HINT = "export ANTHROPIC_API_KEY=... (or use --dry-run to see the request without sending it)"


def credentials_from_env(
    env: Mapping[str, str], *, hint: str = "export ANTHROPIC_API_KEY=... (or ANTHROPIC_AUTH_TOKEN)"
) -> Credentials:
    """The key and endpoint to use, or `CredentialsError` when there is no key (``hint``:
    the CLI's commands name their own way out, a library caller gets the variables)."""
    key = env.get("ANTHROPIC_API_KEY", "").strip() or None
    token = env.get("ANTHROPIC_AUTH_TOKEN", "").strip() or None
    if key is None and token is None:
        raise CredentialsError(
            "no API key: ANTHROPIC_API_KEY is not set",
            hint=hint,
        )
    base = env.get("ANTHROPIC_BASE_URL", "").strip() or None
    return Credentials(key, token, base)


@dataclass(frozen=True, slots=True)
class ModelResponse:
    #: The assistant message: id, type, role, model, content, stop_reason, stop_sequence, usage.
    message: dict[str, Any]
    request_id: str | None
    attempts: int = 1
    duration_ms: int = 0


class ModelClient(Protocol):
    def create(
        self, request: ModelRequest, on_event: Callable[[Event], None] | None = None
    ) -> ModelResponse: ...


# --- assembling a streamed answer (pure) ------------------------------------------------


class StreamAccumulator:
    """Raw Messages-API stream events (as dicts) -> the final message dict."""

    def __init__(self) -> None:
        self.message: dict[str, Any] | None = None
        self._json: dict[int, str] = {}
        self.done = False

    def feed(self, event: Event) -> None:
        t = event.get("type")
        if t == "message_start":
            self.message = dict(event["message"])
            self.message["content"] = list(self.message.get("content") or [])
            return
        if self.message is None:
            return
        content: list[dict[str, Any]] = self.message["content"]
        if t == "content_block_start":
            block = _ordered({k: v for k, v in dict(event["content_block"]).items() if v is not None})
            index = int(event["index"])
            while len(content) <= index:
                content.append({})
            content[index] = block
            if block.get("type") in ("tool_use", "server_tool_use"):
                self._json[index] = ""
        elif t == "content_block_delta":
            index = int(event["index"])
            block = content[index]
            d = event["delta"]
            dt = d.get("type")
            if dt == "text_delta":
                block["text"] = block.get("text", "") + d.get("text", "")
            elif dt == "input_json_delta":
                self._json[index] = self._json.get(index, "") + d.get("partial_json", "")
            elif dt == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + d.get("thinking", "")
            elif dt == "signature_delta":
                block["signature"] = d.get("signature", "")
            elif dt == "citations_delta":
                block.setdefault("citations", []).append(d.get("citation"))
        elif t == "content_block_stop":
            index = int(event["index"])
            if index in self._json:
                raw = self._json.pop(index)
                try:
                    content[index]["input"] = json.loads(raw) if raw.strip() else {}
                except ValueError:
                    content[index]["input"] = {}
        elif t == "message_delta":
            d = event.get("delta") or {}
            for k in ("stop_reason", "stop_sequence"):
                if k in d:
                    self.message[k] = d[k]
            usage = event.get("usage") or {}
            merged = dict(self.message.get("usage") or {})
            merged.update({k: v for k, v in usage.items() if v is not None})
            self.message["usage"] = merged
        elif t == "message_stop":
            self.done = True

    def result(self) -> dict[str, Any]:
        if self.message is None or not self.done:
            raise ApiError("the API's answer ended before it was complete", hint="try again")
        m = self.message
        return {
            "id": m.get("id"),
            "type": "message",
            "role": "assistant",
            "model": m.get("model"),
            "content": m["content"],
            "stop_reason": m.get("stop_reason"),
            "stop_sequence": m.get("stop_sequence"),
            "usage": {k: v for k, v in (m.get("usage") or {}).items() if v is not None},
        }


#: Key order of the blocks Claude Code writes (the API's own order; pydantic dumps sort them).
_BLOCK_KEYS = {
    "text": ("type", "text", "citations"),
    "tool_use": ("type", "id", "name", "input"),
    "server_tool_use": ("type", "id", "name", "input"),
    "thinking": ("type", "thinking", "signature"),
    "redacted_thinking": ("type", "data"),
}


def _ordered(block: dict[str, Any]) -> dict[str, Any]:
    order = _BLOCK_KEYS.get(block.get("type"), ("type",))  # type: ignore[arg-type]
    out = {k: block[k] for k in order if k in block}
    out.update((k, v) for k, v in block.items() if k not in out)
    return out


# --- retry policy (pure) ----------------------------------------------------------------


def retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds the server asks us to wait (``retry-after-ms``, ``retry-after`` as seconds
    or an HTTP date), or None."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    ra = headers.get("retry-after")
    if not ra:
        return None
    try:
        return max(0.0, float(ra))
    except ValueError:
        pass
    import email.utils

    try:
        when = email.utils.parsedate_to_datetime(ra).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def backoff(attempt: int, base: float = 0.5, cap: float = 8.0, jitter: float = 0.0) -> float:
    """Exponential backoff for retry ``attempt`` (0-based), reduced by up to 25% jitter."""
    return min(cap, base * (1 << attempt)) * (1 - 0.25 * jitter)


# --- the adapter ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Failure:
    retryable: bool
    wait: float | None
    error: ApiError


class AnthropicClient:
    """`ModelClient` over the real ``anthropic`` client."""

    def __init__(
        self,
        credentials: Credentials,
        *,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float = DEFAULT_TIMEOUT,
        base_delay: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.credentials = credentials
        self.max_retries = max_retries
        self.timeout = timeout
        self.base_delay = base_delay
        self._sleep = sleep
        self._rand = rand
        self._client: Any = None
        #: Seconds slept between attempts, for tests and the result's duration_api_ms.
        self.waits: list[float] = []
        #: What the SDK warned about (a deprecated model ...), once each.
        self.notices: list[str] = []

    def _sdk(self) -> Any:
        if self._client is None:
            import anthropic

            self._client = anthropic.Anthropic(
                api_key=self.credentials.api_key,
                auth_token=self.credentials.auth_token if not self.credentials.api_key else None,
                base_url=self.credentials.base_url,
                max_retries=0,
                timeout=self.timeout,
            )
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> AnthropicClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def create(self, request: ModelRequest, on_event: Callable[[Event], None] | None = None) -> ModelResponse:
        started = time.monotonic()
        attempt = 0
        while True:
            try:
                message, request_id = self._once(request, on_event)
            except _Retry as r:
                f = r.failure
                if not f.retryable or attempt >= self.max_retries:
                    raise f.error from r.__cause__
                wait = (
                    f.wait if f.wait is not None else backoff(attempt, self.base_delay, jitter=self._rand())
                )
                wait = min(wait, MAX_RETRY_AFTER)
                self.waits.append(wait)
                self._sleep(wait)
                attempt += 1
                continue
            return ModelResponse(message, request_id, attempt + 1, int((time.monotonic() - started) * 1000))

    def _once(
        self, request: ModelRequest, on_event: Callable[[Event], None] | None
    ) -> tuple[dict[str, Any], str | None]:
        import anthropic

        acc = StreamAccumulator()
        try:
            # The SDK warns about deprecated models with a DeprecationWarning; keep it as a
            # notice for the CLI to show once, instead of a warning in library code.
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                stream = self._sdk().messages.create(**request.params(), stream=True)
            for w in caught:
                msg = " ".join(str(w.message).split())
                if msg not in self.notices:
                    self.notices.append(msg)
            request_id = stream.response.headers.get("request-id")
            with stream:
                for raw in stream:
                    event = raw.model_dump(mode="json")
                    acc.feed(event)
                    if on_event is not None:
                        on_event(event)
        except anthropic.APIStatusError as e:
            raise _Retry(_status_failure(e, self.credentials)) from e
        except anthropic.APIConnectionError as e:
            where = self.credentials.base_url or "https://api.anthropic.com"
            timed_out = isinstance(e, anthropic.APITimeoutError)
            msg = (
                f"the API at {where} did not answer in time"
                if timed_out
                else f"cannot reach the API at {where}: {e}"
            )
            raise _Retry(
                _Failure(True, None, ApiError(msg, hint="check ANTHROPIC_BASE_URL and the network"))
            ) from e
        except anthropic.APIError as e:
            raise _Retry(_Failure(False, None, ApiError(f"the API's answer could not be read: {e}"))) from e
        return acc.result(), request_id


class _Retry(Exception):
    def __init__(self, failure: _Failure) -> None:
        super().__init__(failure.error.message)
        self.failure = failure


def _status_failure(e: Any, creds: Credentials) -> _Failure:
    status: int = e.status_code
    kind = getattr(e, "type", None) or ""
    api_message = getattr(e, "api_message", None) or str(e)
    headers = e.response.headers if getattr(e, "response", None) is not None else {}
    rid = getattr(e, "request_id", None)
    where = f" (request {rid})" if rid else ""
    if status in (401, 403):
        what = "the API refused the key" if status == 401 else "the key may not use this"
        return _Failure(
            False, None, CredentialsError(f"{what}: {api_message}{where}", hint="check ANTHROPIC_API_KEY")
        )
    should = headers.get("x-should-retry")
    if should in ("true", "false"):
        retryable = should == "true"
    else:
        # Status 200 with an error type: the stream failed after it started.
        retryable = status in _RETRY_STATUS or status >= 500 or (status < 300 and kind in _RETRY_TYPES)
    hint = {
        404: "check the model name (--model)",
        413: "the conversation is too large for one request; shrink it with `tt compact`",
        400: "the API rejected the request; `tt validate` shows what in the session it may refuse",
    }.get(status)
    label = f"HTTP {status}" if status >= 300 else "stream error"
    return _Failure(
        retryable,
        retry_after(headers),
        ApiError(f"the API answered {label} {kind}: {api_message}{where}".replace("  ", " "), hint=hint),
    )
