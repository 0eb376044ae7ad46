"""The parsed form of a stored line: the columns a store can query, and its search text.

`facts` reads one line's bytes (without its terminator) and returns what is indexed beside
the raw bytes: ``type``, ``uuid``, ``parentUuid``, ``timestamp``, ``sessionId`` and the text
that full-text search sees (prompts, replies, thinking, tool inputs and outputs: the same
texts as `tt search`, `search.texts_of`). A line that is not a JSON object (torn, NULs,
invalid UTF-8, a bare value) has no facts but is stored all the same.

`split_lines` cuts a file's bytes into physical lines exactly as `reader.iter_raw` does
(``\\n`` ends a line; ``\\r\\n`` stays part of it), each with its terminator, so that the
concatenation of the pieces is the input.

Invariants: pure; ``b"".join(split_lines(b)) == b``; `facts` never raises on any bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from ..catalog.search import texts_of


@dataclass(frozen=True, slots=True)
class Facts:
    type: str | None = None
    uuid: str | None = None
    parent_uuid: str | None = None
    timestamp: str | None = None
    session_id: str | None = None
    text: str = ""


NO_FACTS = Facts()


def _s(v: Any) -> str | None:
    # A NUL inside an id is damage; PostgreSQL text cannot hold it (the raw bytes keep it).
    return v if isinstance(v, str) and "\x00" not in v else None


def facts_of(rec: Any) -> Facts:
    if not isinstance(rec, dict):
        return NO_FACTS
    texts = [t for _, _, t in texts_of(rec)] if rec.get("type") in ("user", "assistant") else []
    for key in ("summary", "customTitle", "aiTitle", "lastPrompt", "content"):
        v = rec.get(key)
        if isinstance(v, str) and rec.get("type") not in ("user", "assistant"):
            texts.append(v)
    return Facts(
        _s(rec.get("type")),
        _s(rec.get("uuid")),
        _s(rec.get("parentUuid")),
        _s(rec.get("timestamp")),
        _s(rec.get("sessionId")),
        "\n".join(texts),
    )


def facts(line: bytes) -> Facts:
    return facts_parsed(line)[0]


def facts_parsed(line: bytes) -> tuple[Facts, bool]:
    """`facts`, and whether the line is one JSON text (orjson accepted it)."""
    body = line.rstrip(b"\r\n")
    if not body.startswith(b"{"):
        return NO_FACTS, False
    try:
        rec = orjson.loads(body)
    except orjson.JSONDecodeError:
        return NO_FACTS, False
    return facts_of(rec), True


def split_lines(data: bytes) -> list[bytes]:
    """Physical lines with their ``\\n`` (the last one may have none: a torn tail)."""
    out = data.split(b"\n")
    last = out.pop()
    lines = [x + b"\n" for x in out]
    if last:
        lines.append(last)
    return lines
