"""The values of a conversation as `tt show` displays it: `Message`s and `Marker`s (an
`Item` is either), a message's `Block`s, a tool call's `ToolResult`.

`show.core.build` makes them, `show.text` turns message content into blocks and exports
items (Markdown, JSON), `views.show` draws them with rich.

Invariants: plain data, no behaviour; imports nothing from this package, so every module
that makes or reads items can import it and the render modules stack one way on top of
it (items <- text <- subagents <- core). Text is kept whole here;
folding is for the views and exports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ToolResult:
    text: str
    is_error: bool = False
    images: int = 0


# Block and Message are not frozen: `show.core.build` fills them in as it reads on (a
# tool call gets its result and its subagent's items later; an assistant response
# written as several lines grows one block at a time).
@dataclass(slots=True)
class Block:
    """One content block: ``kind`` is text, thinking, tool_use, image or the raw type."""

    kind: str
    text: str = ""
    name: str = ""  # tool name
    tool_id: str = ""
    input: Any = None
    result: ToolResult | None = None
    children: list[Item] = field(default_factory=list)  # a subagent's items, under its call
    agent: str = ""  # the subagent's name (its file's stem), when ``children``


@dataclass(slots=True)
class Message:
    role: str  # "user" | "assistant"
    time: str | None
    uuid: str | None
    line: int
    depth: int = 0
    model: str | None = None
    blocks: list[Block] = field(default_factory=list)
    lines: int = 1  # how many file lines it was written as


@dataclass(frozen=True, slots=True)
class Marker:
    """Something that is not a message: ``kind`` is compact, microcompact, summary,
    command, command-output, queued, interrupted, api-error, system, attachment, earlier,
    history-joined, history-cut, or subagent-unlinked."""

    kind: str
    text: str
    time: str | None = None
    line: int | None = None
    depth: int = 0


Item = Message | Marker
