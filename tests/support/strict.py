"""The Messages API's request rules, as the strict stand-in enforces them.

`refusal(body, raw)` is the 400 (413 for a body over 32 MB) the real API gives a ``/v1/messages`` request that
breaks one of the rules of tt's catalogue (a request past the context window included) (README "Requests the API refuses"), with the
status and error message users report in the public threads named there, or None. Only
the first broken rule is reported, as the API does.

Message positions (``messages.N.content.M``) count every message of the request, as
the API's do. ``role: "system"`` messages (Claude Code 2.1.332 sends its attachments that
way) are skipped when pairing calls with results.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from tests.support.wire import ApiError

MAX_IMAGE_BYTES = 5 * 1024 * 1024
#: The Messages API's request size limit (32 MB, its overview's "request size limits").
MAX_REQUEST_BYTES = 32 * 1000 * 1000
#: The context window the strict stand-in enforces (200k, the window of the models the
#: pinned CLIs' sessions name), in its own estimate: four characters a token over the
#: body, base64 image data left out (the API counts images by their pixels).
CONTEXT_TOKENS = 200_000


def _e(message: str) -> ApiError:
    return ApiError(400, message, error_type="invalid_request_error")


def refusal(body: Any, raw: bytes) -> ApiError | None:
    """The API's 400 for this request body, or None when the rules hold (a body over
    32 MB: its 413, before anything else is looked at)."""
    if len(raw) > MAX_REQUEST_BYTES:
        # The body users report (anthropics/claude-code#3335, #10314, #14567).
        return ApiError(413, "Request exceeds the maximum size", error_type="request_too_large")
    nul = raw.find(b"\\u0000")
    if nul >= 0 or (raw and body is None):
        # Claude Code cuts the body at the NUL (anthropics/claude-code#94055), wherever it
        # is: tool output, text, or a tool call's input (nul-in-tool-input).
        at = nul if nul >= 0 else len(raw)
        return _e(
            f"The request body is not valid JSON: unexpected end of data: line 1 column {at + 1} (char {at})"
        )
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return None
    msgs = body["messages"]
    seen: set[str] = set()
    for i, m in enumerate(msgs):
        if not isinstance(m, dict) or m.get("role") == "system":
            # 2.1.332's attachment messages (some empty): not part of the API's public shape.
            continue
        content = m.get("content")
        last = i == len(msgs) - 1
        if content == "" or content == []:
            if not (last and m.get("role") == "assistant"):
                return _e(
                    f"messages.{i}: all messages must have non-empty content except for the optional final assistant message"
                )
            continue
        if not isinstance(content, list):
            continue
        for j, b in enumerate(content):
            if not isinstance(b, dict):
                continue
            got = _block(i, j, b, seen)
            if got is not None:
                return got
    return _dimensions(msgs) or _pairing(msgs) or _window(msgs, raw)


def _block(i: int, j: int, b: dict[str, Any], seen: set[str]) -> ApiError | None:
    t = b.get("type")
    if t == "text":
        text = b.get("text")
        if not isinstance(text, str) or not text.strip():
            if "cache_control" in b:
                return _e(f"messages.{i}.content.{j}.text: cache_control cannot be set for empty text blocks")
            if not text:
                return _e("messages: text content blocks must be non-empty")
            return _e("messages: text content blocks must contain non-whitespace text")
    elif t == "thinking":
        sig = b.get("signature")
        if sig is None:
            return _e(f"messages.{i}.content.{j}.thinking.signature: Field required")
        if "thinking" not in b:
            # LibreChat-AI/agents#279 (a signed block replayed without its empty text)
            return _e(f"messages.{i}.content.{j}.thinking.thinking: Field required")
        if not isinstance(b["thinking"], str):
            return _e(f"messages.{i}.content.{j}.thinking.thinking: Input should be a valid string")
        if not isinstance(sig, str) or not sig or _cut(sig):
            # A cut one as well (anthropics/claude-code#21726: 24-character signatures).
            return _e(f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block")
    elif t == "tool_use":
        name = b.get("name")
        if isinstance(name, str) and len(name) > 200:
            return _e(f"messages.{i}.content.{j}.tool_use.name: String should have at most 200 characters")
        tid = b.get("id")
        bad = _tool_id(f"messages.{i}.content.{j}.tool_use.id", tid)
        if bad is not None:
            return bad
        if tid in seen:
            return _e(f"messages.{i}.content.{j}: `tool_use` ids must be unique")
        seen.add(tid)
    elif t == "tool_result" and (
        bad := _tool_id(f"messages.{i}.content.{j}.tool_result.tool_use_id", b.get("tool_use_id"))
    ):
        return bad
    elif t == "tool_result" and b.get("is_error") is True and not b.get("content"):
        # jlevy/markform#153
        return _e(f"messages.{i}.content.{j}.tool_result: content cannot be empty if `is_error` is true")
    elif t == "tool_result" and isinstance(b.get("content"), list):
        for k, x in enumerate(b["content"]):
            if isinstance(x, dict) and x.get("type") == "tool_reference":
                n = x.get("tool_name")
                if isinstance(n, str) and len(n) > 64:
                    return _e(
                        f"messages.{i}.content.{j}.tool_result.content.{k}.tool_reference.tool_name: String should have at most 64 characters"
                    )
            elif isinstance(x, dict) and x.get("type") == "image":
                got = _image(f"messages.{i}.content.{j}.tool_result.content.{k}", x)
                if got is not None:
                    return got
    elif t == "image":
        return _image(f"messages.{i}.content.{j}", b)
    return None


def _tool_id(where: str, value: Any) -> ApiError | None:
    """The API's id rule for ``tool_use.id`` and ``tool_result.tool_use_id``
    (maximhq/bifrost#5097, BlockRunAI/ClawRouter#17: ``String should match pattern``)."""
    if value is None:
        return _e(f"{where}: Field required")
    if not isinstance(value, str):
        return _e(f"{where}: Input should be a valid string")
    if not re.fullmatch(r"[a-zA-Z0-9_-]+", value):
        return _e(f"{where}: String should match pattern '^[a-zA-Z0-9_-]+$'")
    return None


def _cut(sig: str) -> bool:
    """The API verifies a signature with its key; the stand-in cannot, so it takes its own
    (``c3RhbmRpbg==``) and any whole base64 protobuf message (the shape of every signature
    the API issues) and refuses the rest: not base64, or a protobuf that ends mid-field."""
    if sig == "c3RhbmRpbg==":
        return False
    try:
        d = base64.b64decode(sig, validate=True)
    except ValueError:
        return True
    i, n = 0, len(d)
    while i < n:
        tag, i = _varint(d, i)
        wire = tag & 7
        if wire == 0:
            _, i = _varint(d, i)
        elif wire == 2:
            size, i = _varint(d, i)
            i += size
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        else:
            return True
    return i != n or n == 0


def _varint(d: bytes, i: int) -> tuple[int, int]:
    v = shift = 0
    while i < len(d):
        v |= (d[i] & 0x7F) << shift
        shift += 7
        i += 1
        if d[i - 1] < 0x80:
            return v, i
    return 0, len(d) + 1


def _image(where: str, b: dict[str, Any]) -> ApiError | None:
    src = b.get("source")
    if isinstance(src, dict) and src.get("type") == "base64" and isinstance(src.get("data"), str):
        size = len(src["data"]) * 3 // 4
        if size > MAX_IMAGE_BYTES:
            return _e(
                f"{where}.image.source.base64: image exceeds 5 MB maximum: {size} bytes > {MAX_IMAGE_BYTES} bytes"
            )
    return None


def _dimensions(msgs: list[Any]) -> ApiError | None:
    """8000 px a side; 2000 px when the request holds more than 20 images."""
    from transcript_tools.model.api_rules import image_size

    found: list[tuple[str, int]] = []
    for i, m in enumerate(msgs):
        content = m.get("content") if isinstance(m, dict) else None
        for j, b in enumerate(content if isinstance(content, list) else []):
            if not isinstance(b, dict):
                continue
            inner = b.get("content") if b.get("type") == "tool_result" else None
            items = (
                [(f"messages.{i}.content.{j}", b)]
                if b.get("type") == "image"
                else [
                    (f"messages.{i}.content.{j}.tool_result.content.{k}", x)
                    for k, x in enumerate(inner if isinstance(inner, list) else [])
                    if isinstance(x, dict) and x.get("type") == "image"
                ]
            )
            for where, img in items:
                dims = image_size(img)
                found.append((where, max(dims) if dims else 0))
    for where, side in found:
        if side > 8000:
            return _e(
                f"{where}.image.source.base64.data: At least one of the image dimensions exceed max allowed size: 8000 pixels"
            )
    if len(found) > 20:
        for where, side in found:
            if side > 2000:
                return _e(
                    f"{where}.image.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels"
                )
    return None


def _window(msgs: list[Any], raw: bytes) -> ApiError | None:
    """The request past the context window: the body users report (anthropics/claude-code#7866)."""
    size = len(raw)
    if size // 4 <= CONTEXT_TOKENS:
        return None
    for m in msgs:
        content = m.get("content") if isinstance(m, dict) else None
        for b in content if isinstance(content, list) else []:
            if not isinstance(b, dict):
                continue
            inner = b.get("content") if b.get("type") == "tool_result" else None
            for x in [b, *(inner if isinstance(inner, list) else [])]:
                src = x.get("source") if isinstance(x, dict) and x.get("type") == "image" else None
                if isinstance(src, dict) and isinstance(src.get("data"), str):
                    size -= len(src["data"])
    tokens = size // 4
    if tokens <= CONTEXT_TOKENS:
        return None
    return _e(f"prompt is too long: {tokens} tokens > {CONTEXT_TOKENS} maximum")


def _pairing(msgs: list[Any]) -> ApiError | None:
    """Every tool_use answered in the next (non-system) message; every tool_result
    answering a tool_use of the message before it."""
    convo = [(i, m) for i, m in enumerate(msgs) if isinstance(m, dict) and m.get("role") != "system"]
    prev_uses: set[str] = set()
    for k, (i, m) in enumerate(convo):
        content = m.get("content") if isinstance(m.get("content"), list) else []
        if m.get("role") == "user":
            for j, b in enumerate(content):
                if (
                    isinstance(b, dict)
                    and b.get("type") == "tool_result"
                    and b.get("tool_use_id") not in prev_uses
                ):
                    return _e(
                        f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {b.get('tool_use_id')}. "
                        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                    )
            prev_uses = set()
            continue
        uses = [b.get("id") for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
        if uses:
            nxt = convo[k + 1][1] if k + 1 < len(convo) else None
            nc = nxt.get("content") if nxt is not None else None
            answered = {
                b.get("tool_use_id")
                for b in (nc if isinstance(nc, list) else [])
                if isinstance(b, dict) and b.get("type") == "tool_result"
            }
            missing = [u for u in uses if u not in answered]
            if missing:
                return _e(
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {', '.join(map(str, missing))}. "
                    "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
                )
        prev_uses = {u for u in uses if isinstance(u, str)}
    return None
