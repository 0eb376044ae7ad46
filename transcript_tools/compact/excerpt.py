"""A plain-text rendering of a stretch of conversation, for a model to summarise.

`render` turns one record into text (user and assistant text, tool calls with their
input, tool results clipped); `Excerpt` keeps the first request and the most recent
part of a stretch within a character budget, dropping the middle as it streams.

Invariants: bounded memory (the budget); deterministic; pure (no I/O).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from .digest import FIRST_REQUEST_CHARS, clip, prompt_text, result_text


def render(record: Mapping[str, Any], *, result_chars: int = 2000, input_chars: int = 600) -> str:
    """One record as plain text (``""`` for records a summary does not need)."""
    t = record.get("type")
    msg = record.get("message")
    if t not in ("user", "assistant") or not isinstance(msg, Mapping):
        return ""
    if record.get("isCompactSummary") is True:
        return "[earlier summary]\n" + result_text(msg.get("content")).strip()
    content = msg.get("content")
    if isinstance(content, str):
        return f"[{t}] {content.strip()}" if content.strip() else ""
    if not isinstance(content, list):
        return ""
    out: list[str] = []
    for b in content:
        if not isinstance(b, Mapping):
            continue
        bt = b.get("type")
        if bt == "text" and isinstance(b.get("text"), str) and b["text"].strip():
            out.append(f"[{t}] {b['text'].strip()}")
        elif bt == "tool_use":
            out.append(f"[assistant calls {b.get('name')}] {clip(_dump(b.get('input')), input_chars)}")
        elif bt == "tool_result":
            err = " (error)" if b.get("is_error") is True else ""
            out.append(f"[tool result{err}] {clip(result_text(b.get('content')), result_chars)}")
        elif bt == "image":
            out.append(f"[{t}] [image]")
    return "\n".join(out)


def _dump(v: Any) -> str:
    try:
        return orjson.dumps(v).decode("utf-8")
    except TypeError:
        return str(v)


@dataclass(slots=True)
class Excerpt:
    """The first request and the most recent text of a stretch, within ``budget`` chars."""

    budget: int
    head: str = ""
    _tail: deque[str] = field(default_factory=deque)
    _size: int = 0
    dropped: int = 0

    def feed(self, record: Mapping[str, Any]) -> None:
        text = render(record)
        if not text:
            return
        if not self.head and prompt_text(record) is not None:
            self.head = clip(text, min(FIRST_REQUEST_CHARS * 2, self.budget // 4))
            return
        text = clip(text, max(1000, self.budget // 8))
        self._tail.append(text)
        self._size += len(text) + 1
        while self._size > self.budget - len(self.head) and len(self._tail) > 1:
            self._size -= len(self._tail.popleft()) + 1
            self.dropped += 1

    def text(self) -> str:
        parts = [self.head] if self.head else []
        if self.dropped:
            parts.append(f"[... {self.dropped} messages left out here to fit the summariser's input ...]")
        parts.extend(self._tail)
        return "\n\n".join(parts)
