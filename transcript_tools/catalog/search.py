"""Searching the text of sessions: prompts, replies, thinking, tool inputs and outputs.

`Matcher` is the pattern (a literal or a regex; case-sensitive, -insensitive or "smart":
insensitive unless the pattern has a capital). `search_lines` streams a file's raw lines
and yields a `Hit` for every matching text of a user or assistant record, and a
`SkippedLine` for each damaged piece of a line that could have matched.

Speed comes from a raw-bytes prefilter: Claude Code writes ``JSON.stringify`` output,
which escapes only ``"``, ``\\`` and control characters, so a literal pattern occurs in a
record's text only if its JSON-escaped bytes occur in the line. Lines (and, in
`catalog.files.search_files`, whole files) without them are never parsed. A regex cannot be
prefiltered that way; its lines are prefiltered by record type instead.

Invariants: pure (bytes in, values out); a hit's ``spans`` index its ``text``; the
prefilter never drops a line whose text matches a literal pattern, whether the file writes
a character as ``JSON.stringify`` does or as a ``\\uXXXX`` or ``\\/`` escape (other tools'
JSON writers do).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..model.lines import decode_line

if TYPE_CHECKING:
    from pathlib import PurePath

#: Characters of context on each side of a match in a snippet.
CONTEXT = 60

_TYPE_MARKS = (b'"type":"user"', b'"type":"assistant"', b'"type": "user"', b'"type": "assistant"')


@dataclass(frozen=True, slots=True)
class Matcher:
    pattern: str
    regex: bool
    ignore_case: bool
    compiled: re.Pattern[str]
    needle: re.Pattern[bytes] | None  # the raw-bytes prefilter; None: by record type only

    def may_match(self, raw: bytes) -> bool:
        if self.needle is not None:
            return self.needle.search(raw) is not None
        return any(m in raw for m in _TYPE_MARKS)

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [(m.start(), m.end()) for m in self.compiled.finditer(text) if m.end() > m.start()]


def make_matcher(pattern: str, *, regex: bool = False, case: str = "smart") -> Matcher:
    """``case``: "smart" (insensitive unless the pattern has a capital), "sensitive" or
    "insensitive". Raises ValueError for an empty pattern or a bad regex."""
    if not pattern:
        raise ValueError("empty pattern")
    try:
        pattern.encode("utf-8")
    except UnicodeEncodeError as e:  # a byte the terminal's encoding could not decode
        raise ValueError("the pattern is not valid UTF-8 text") from e
    ignore = case == "insensitive" or (case == "smart" and pattern == pattern.lower())
    flags = re.IGNORECASE if ignore else 0
    try:
        compiled = re.compile(pattern if regex else re.escape(pattern), flags)
    except re.error as e:
        raise ValueError(f"bad regular expression: {e}") from e
    needle: re.Pattern[bytes] | None = None
    if not regex and (not ignore or pattern.isascii()):
        # (bytes IGNORECASE folds ASCII only: a non-ASCII pattern ignoring case is
        # prefiltered by record type.)
        needle = re.compile(b"".join(_raw_forms(c) for c in pattern), re.IGNORECASE if ignore else 0)
    return Matcher(pattern, regex, ignore, compiled, needle)


def _raw_forms(c: str) -> bytes:
    """A regex of the bytes that can stand for character ``c`` inside a JSON string: the
    form ``JSON.stringify`` writes (Claude Code's: only ``"``, ``\\`` and control
    characters escaped), and for ``/`` and non-ASCII characters also the ``\\/`` and
    ``\\uXXXX`` escapes other writers use (Python's ``json.dumps``, for one)."""
    plain = re.escape(json.dumps(c, ensure_ascii=False)[1:-1].encode("utf-8"))
    if c == "/":
        return rb"(?:/|\\/)"
    if c.isascii():
        return plain
    units = json.dumps(c)[1:-1]  # "\\u00e9", or a surrogate pair for astral characters
    hexes = [units[i + 2 : i + 6] for i in range(0, len(units), 6)]
    escaped = b"".join(
        rb"\\u" + b"".join(b"[" + ch.lower().encode() + ch.upper().encode() + b"]" for ch in h) for h in hexes
    )
    return b"(?:" + plain + b"|" + escaped + b")"


@dataclass(frozen=True, slots=True)
class Hit:
    line: int
    uuid: str | None
    timestamp: str | None
    kind: str  # user, assistant, thinking, tool_input, tool_output, summary
    tool: str | None  # the tool, for tool_input / tool_output
    text: str  # the whole text searched
    spans: tuple[tuple[int, int], ...]
    sidechain: bool = False

    def snippet(self, context: int = CONTEXT) -> tuple[str, list[tuple[int, int]]]:
        """A one-line excerpt around the first match, and the match spans in it."""
        a, b = self.spans[0]
        start = max(0, a - context)
        end = min(len(self.text), b + context)
        prefix = "…" if start > 0 else ""
        suffix = "…" if end < len(self.text) else ""
        body = self.text[start:end]
        flat = prefix + body.replace("\r", " ").replace("\n", " ").replace("\t", " ") + suffix
        shift = len(prefix) - start
        spans = [(s + shift, e + shift) for s, e in self.spans if s >= start and e <= end]
        return flat, spans

    def to_dict(self) -> dict[str, Any]:
        snippet, spans = self.snippet()
        return {
            "line": self.line,
            "uuid": self.uuid,
            "timestamp": self.timestamp,
            "kind": self.kind,
            "tool": self.tool,
            "matches": len(self.spans),
            "snippet": snippet,
            "snippet_spans": spans,
            "sidechain": self.sidechain,
        }


@dataclass(frozen=True, slots=True)
class SkippedLine:
    line: int
    code: str


def search_lines(
    raw: Iterable[tuple[int, int, bytes, bytes, bool]], matcher: Matcher
) -> Iterator[Hit | SkippedLine]:
    """Hits in a file's lines (``reader.iter_raw`` tuples), in file order."""
    for number, offset, data, term, last in raw:
        if not matcher.may_match(data):
            continue
        ln = decode_line(number, offset, data, term, is_last=last)
        for p in ln.pieces:
            if p.code not in ("blank-line", "bom"):
                yield SkippedLine(number, p.code)
        for e in ln.entries:
            yield from record_hits(e.record, number, matcher)


def record_hits(rec: Mapping[str, Any], line: int, matcher: Matcher) -> Iterator[Hit]:
    """Hits in one record's texts (user and assistant records; progress copies of
    subagent messages are left to the subagent files)."""
    t = rec.get("type")
    if t not in ("user", "assistant"):
        return
    msg = rec.get("message")
    if not isinstance(msg, dict):
        return
    uuid = rec.get("uuid") if isinstance(rec.get("uuid"), str) else None
    ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
    side = rec.get("isSidechain") is True
    for kind, tool, text in texts_of(rec):
        spans = matcher.spans(text)
        if spans:
            yield Hit(line, uuid, ts, kind, tool, text, tuple(spans), side)


def texts_of(rec: Mapping[str, Any]) -> Iterator[tuple[str, str | None, str]]:
    """``(kind, tool, text)`` for every searchable text of a user/assistant record."""
    role = rec.get("type")
    msg = rec.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    base = "summary" if rec.get("isCompactSummary") is True else str(role)
    if isinstance(content, str):
        yield base, None, content
        return
    if not isinstance(content, list):
        return
    for b in content:
        if not isinstance(b, dict):
            continue
        bt = b.get("type")
        if bt == "text" and isinstance(b.get("text"), str):
            yield base, None, b["text"]
        elif bt == "thinking" and isinstance(b.get("thinking"), str):
            yield "thinking", None, b["thinking"]
        elif bt == "tool_use":
            # Each string of the input on its own: a match is always inside one JSON
            # string, which is what keeps the raw-bytes prefilter exact.
            name = b.get("name") if isinstance(b.get("name"), str) else None
            for s in _strings(b.get("input")):
                yield "tool_input", name, s
        elif bt == "tool_result":
            inner = b.get("content")
            if isinstance(inner, str):
                yield "tool_output", None, inner
            elif isinstance(inner, list):
                for x in inner:
                    if isinstance(x, dict) and isinstance(x.get("text"), str):
                        yield "tool_output", None, x["text"]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        if value:
            yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


@dataclass(slots=True)
class SessionHits:
    """A session's hits (`catalog.files.search_files`, `store.find.search_store`): here, with
    the matching, so that a search through the store imports no file-side code. ``path`` is
    a file's, or a name in a store (a ``PurePath``)."""

    path: PurePath
    title: str | None
    mtime_ms: int
    hits: list[tuple[str | None, Hit]] = field(default_factory=list)  # (subagent file stem, hit)
    more: int = 0  # hits past the per-session limit
    skipped: list[tuple[str, SkippedLine]] = field(default_factory=list)

    @property
    def session_id(self) -> str:
        return self.path.name[:-6] if self.path.name.endswith(".jsonl") else self.path.name
