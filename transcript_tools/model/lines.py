"""Decoding one physical line of a transcript into records and damaged pieces.

Claude Code appends one JSON object per line (``JSON.stringify`` + ``\\n``). Crashes,
full disks and parallel writers leave lines that are not that: a torn record with the
next record fused onto it, runs of NUL bytes, invalid UTF-8, lone surrogate escapes
(Claude Code 2.1.132 changelog), CRLF from editors, a BOM.

`decode_line` turns the bytes of one line into

- ``entries``: whole records, each with the exact bytes it came from, and
- ``pieces``: the byte ranges that are not a whole record, each with a diagnostic code.

Invariants:
- Every byte of the line belongs to exactly one entry or one piece, in order
  (``accounted_bytes`` checks it); the terminator is separate.
- A line that ``orjson`` parses to a dict is one entry and nothing else (the fast path).
- Records decoded leniently (invalid UTF-8 bytes, lone surrogates) have those characters
  replaced with U+FFFD in ``Entry.record`` and carry the code in ``Entry.lenient``;
  ``Entry.raw`` keeps the original bytes untouched.
- A run of NUL bytes *inside* a line (not at its start or end) whose removal leaves one
  JSON object shaped as a record (a string ``type`` and a record key, as a fused record
  must have, with its uuids and timestamp well formed) is that record, decoded leniently
  with ``nul-run-in-record``: NULs were
  inserted into the line (found on a real 2.1.332 line with 200 NULs inserted), nothing
  of it was lost. NULs that *replaced* bytes (a torn write zero-filled) leave JSON that
  does not parse (or fuses two values into a malformed id), and the line is pieces as
  before (``truncated-record``, ``nul-run``...). Bytes replaced inside one string value
  cannot be told from inserted NULs: the quarantine keeps the line as it was. The record
  then meets every check any record meets (schema, duplicate uuid, chain).
- Pure: no I/O. The reader (`reader`) feeds it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import orjson

BOM = b"\xef\xbb\xbf"

#: Keys of which a real top-level record has at least one; content blocks have none.
#: Used to tell a fused record from an object nested in a torn one.
_RECORD_KEYS = ("uuid", "sessionId", "session_id", "leafUuid", "messageId", "parentUuid", "agentId")

_decoder = json.JSONDecoder(parse_constant=lambda name: _reject_constant(name))
_SURROGATE = re.compile("[\ud800-\udfff]")

#: The in-memory cap: a transcript past this many bytes is not loaded whole (`reader.load`
#: refuses it with `TranscriptTooLarge`; commands that stream have no cap). A plain number,
#: here so the pure modules that carry a cap (repair's plan) need not import the reader.
MAX_TRANSCRIPT_READ_BYTES = 50 * 1024 * 1024

#: The deepest nesting orjson reads (a line nested deeper is no JSON to it, and damage to
#: tt): every walker over a record must take this depth (`cli.main` sets the recursion
#: limit for it).
MAX_JSON_DEPTH = 1024


def _reject_constant(name: str) -> Any:
    # JavaScript's JSON.stringify never writes NaN/Infinity; treat them as damage.
    raise ValueError(f"JSON constant {name} is not allowed")


class Entry:
    """One record of a transcript, with the bytes it came from.

    ``raw`` is the exact byte string of the record (the whole line without its terminator
    in the normal case). ``line`` is 1-based; ``offset`` is the byte offset of ``raw`` in
    the file.
    """

    __slots__ = ("lenient", "line", "offset", "raw", "record")

    def __init__(
        self, line: int, offset: int, raw: bytes, record: dict[str, Any], lenient: tuple[str, ...] = ()
    ) -> None:
        self.line = line
        self.offset = offset
        self.raw = raw
        self.record = record
        self.lenient = lenient

    # Common fields, read on demand. Records are dicts of the wire format (see `records`).
    @property
    def type(self) -> str | None:
        t = self.record.get("type")
        return t if isinstance(t, str) else None

    @property
    def uuid(self) -> str | None:
        u = self.record.get("uuid")
        return u if isinstance(u, str) else None

    @property
    def parent_uuid(self) -> str | None:
        p = self.record.get("parentUuid")
        return p if isinstance(p, str) else None

    @property
    def is_sidechain(self) -> bool:
        return self.record.get("isSidechain") is True

    @property
    def message(self) -> dict[str, Any] | None:
        m = self.record.get("message")
        return m if isinstance(m, dict) else None

    @property
    def message_id(self) -> str | None:
        m = self.message
        if m is None:
            return None
        i = m.get("id")
        return i if isinstance(i, str) else None

    @property
    def content(self) -> list[Any] | str | None:
        m = self.message
        if m is None:
            return None
        c = m.get("content")
        return c if isinstance(c, (list, str)) else None

    @property
    def subtype(self) -> str | None:
        s = self.record.get("subtype")
        return s if isinstance(s, str) else None

    @property
    def is_compact_boundary(self) -> bool:
        return self.type == "system" and self.subtype == "compact_boundary"

    def __repr__(self) -> str:
        return f"Entry(line={self.line}, type={self.type!r}, uuid={self.uuid!r})"


@dataclass(frozen=True, slots=True)
class Piece:
    """Bytes of a line that are not a whole record. ``start``/``end`` index the line's data."""

    start: int
    end: int
    code: str  # a diagnostic code of the line family
    detail: str = ""


class DecodedLine:
    """One physical line: its whole records (``entries``) and its damaged ``pieces``."""

    __slots__ = ("data", "entries", "line", "offset", "pieces", "terminator")

    def __init__(
        self,
        line: int,
        offset: int,
        data: bytes,
        terminator: bytes,
        entries: list[Entry] | None = None,
        pieces: list[Piece] | None = None,
    ) -> None:
        self.line = line  # 1-based
        self.offset = offset  # byte offset of the line in the file
        self.data = data  # the line without its terminator
        self.terminator = terminator  # b"\n", b"\r\n" or b"" (last line without newline)
        self.entries: list[Entry] = [] if entries is None else entries
        self.pieces: list[Piece] = [] if pieces is None else pieces

    @property
    def clean(self) -> bool:
        """One whole record, nothing else, LF-terminated or final."""
        return (
            not self.pieces
            and len(self.entries) == 1
            and not self.entries[0].lenient
            and self.terminator != b"\r\n"
        )

    def accounted_bytes(self) -> int:
        return sum(len(e.raw) for e in self.entries) + sum(p.end - p.start for p in self.pieces)

    def __repr__(self) -> str:
        return f"DecodedLine({self.line}, entries={len(self.entries)}, pieces={self.pieces!r})"


def split_terminator(chunk: bytes) -> tuple[bytes, bytes]:
    """A physical line's bytes and its terminator (``\\r\\n``, ``\\n`` or none)."""
    if chunk.endswith(b"\r\n"):
        return chunk[:-2], b"\r\n"
    if chunk.endswith(b"\n"):
        return chunk[:-1], b"\n"
    return chunk, b""


def decode_line(number: int, offset: int, data: bytes, terminator: bytes, *, is_last: bool) -> DecodedLine:
    """Decode one physical line. Never raises on any input bytes."""
    try:
        rec = _loads(data)
    except _JSONDecodeError:
        pass
    else:
        if type(rec) is dict:
            return DecodedLine(number, offset, data, terminator, [Entry(number, offset, data, rec)])
    out = DecodedLine(number, offset, data, terminator)
    _salvage(out, is_last=is_last)
    return out


_loads = orjson.loads
_JSONDecodeError = orjson.JSONDecodeError


def json_size(value: Any, otherwise: int) -> int:
    """The length of ``value`` as compact JSON (``orjson.dumps``); ``otherwise`` where
    orjson cannot write it: it writes 254 levels of nesting, and reads 1024 (a record
    with a deeply nested tool result is read, and must be measured without a traceback)."""
    try:
        return len(orjson.dumps(value))
    except TypeError:
        return otherwise


def _salvage(out: DecodedLine, *, is_last: bool) -> None:
    data = out.data
    start = 0
    if not data.strip(b" \t"):
        out.pieces.append(Piece(0, len(data), "blank-line"))
        return
    if out.line == 1 and data.startswith(BOM):
        out.pieces.append(Piece(0, 3, "bom"))
        start = 3
    text = data[start:].decode("utf-8", "surrogateescape")
    whole = _whole_object(text)
    if whole is not None:
        # One object after all: orjson refused it for a lone surrogate, invalid UTF-8
        # inside a string, a number past 64 bits, or a BOM.
        raw = data[start:]
        record, lenient = _clean_record(whole, raw)
        out.entries.append(Entry(out.line, out.offset + start, raw, record, lenient))
        return
    inside = _nul_inside(text)
    if inside is not None:
        raw = data[start:]
        record, lenient = _clean_record(inside, raw)
        out.entries.append(Entry(out.line, out.offset + start, raw, record, ("nul-run-in-record", *lenient)))
        return
    # Byte offset of each char boundary we report, computed lazily: only damaged lines
    # come here, so the cost does not matter.
    spans: list[tuple[int, int, str | None, Any]] = []  # (char_start, char_end, code|None, record)
    n = len(text)
    i = 0
    while i < n:
        ch = text[i]
        if ch == "\x00":
            j = i
            while j < n and text[j] == "\x00":
                j += 1
            spans.append((i, j, "nul-run", None))
            i = j
            continue
        if ch == "{":
            got = _try_record(text, i)
            if got is not None:
                rec, end = got
                spans.append((i, end, None, rec))
                i = end
                continue
        j = _next_start(text, i + 1)
        code: str | None  # None, in `named` below, for a whole record
        if ch == "{":
            code = "truncated-record"
        else:
            # Valid JSON that is not an object ([] / null / 42) is its own kind.
            code = "not-object" if _is_json(text[i:j]) else "garbage"
        spans.append((i, j, code, None))
        i = j
    # Name torn pieces for what they are, now that we know their neighbours.
    named: list[tuple[int, int, str | None, Any]] = []
    for k, (a, b, code, rec) in enumerate(spans):
        if code == "truncated-record":
            if any(s[2] is None for s in spans[k + 1 :]):
                code = "fused-records"
            elif b == n and is_last and out.terminator == b"":
                code = "torn-tail"
        named.append((a, b, code, rec))
    pos_bytes = start
    for a, b, code, rec in named:  # spans are contiguous: each starts where the last ended
        length = len(text[a:b].encode("utf-8", "surrogateescape"))
        bstart, bend = pos_bytes, pos_bytes + length
        if code is None:
            raw = data[bstart:bend]
            record, lenient = _clean_record(rec, raw)
            out.entries.append(Entry(out.line, out.offset + bstart, raw, record, lenient))
        else:
            out.pieces.append(Piece(bstart, bend, code))
        pos_bytes = bend


def _try_record(text: str, i: int) -> tuple[dict[str, Any], int] | None:
    try:
        rec, end = _decoder.raw_decode(text, i)
    except (ValueError, RecursionError):
        return None
    # Every real record has a string `type` and one of _RECORD_KEYS (all fixtures, 1.0.51
    # to 2.1.332); content blocks nested in a torn record have `type` but none of those.
    if not isinstance(rec, dict) or not isinstance(rec.get("type"), str):
        return None
    if not any(k in rec for k in _RECORD_KEYS):
        return None
    # A whole record ends the line or is followed by another record start (fused) or NULs.
    j = end
    while j < len(text) and text[j] in " \t":
        j += 1
    if j < len(text) and text[j] not in "{\x00":
        return None
    return rec, j


def _whole_object(text: str) -> dict[str, Any] | None:
    try:
        rec = _decoder.decode(text)
    except (ValueError, RecursionError):
        return None
    return rec if isinstance(rec, dict) else None


def _nul_inside(text: str) -> dict[str, Any] | None:
    """The record a line holds once the NULs inside it are dropped, or None.

    Only NULs strictly inside the line: NULs before or after a whole record are a
    ``nul-run`` piece beside it (the record is kept either way), and a line of two records
    joined by NULs does not decode as one object.
    """
    if "\x00" not in text or text[0] == "\x00" or text[-1] == "\x00":
        return None
    rec = _whole_object(text.replace("\x00", ""))
    if rec is None or not isinstance(rec.get("type"), str) or not any(k in rec for k in _RECORD_KEYS):
        return None
    # NULs that replaced bytes across a value leave its neighbours fused (a uuid running
    # into the next key's value); the ids and the timestamp must still have their form.
    for key in _UUID_KEYS:
        v = rec.get(key)
        if v is not None and (not isinstance(v, str) or not _UUID.fullmatch(v)):
            return None
    ts = rec.get("timestamp")
    if ts is not None and (not isinstance(ts, str) or not _TIMESTAMP.fullmatch(ts)):
        return None
    return rec


_UUID_KEYS = ("uuid", "parentUuid", "logicalParentUuid", "leafUuid")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
#: As `schemas/defs.schema.json` has it.
_TIMESTAMP = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})"
)


def _next_start(text: str, i: int) -> int:
    """The next position at or after ``i`` where a NUL run or a whole record begins."""
    attempts = 0
    n = len(text)
    while i < n:
        nul = text.find("\x00", i)
        brace = text.find("{", i)
        cands = [p for p in (nul, brace) if p != -1]
        if not cands:
            return n
        p = min(cands)
        if text[p] == "\x00":
            return p
        attempts += 1
        if attempts > 512:
            return n
        if _try_record(text, p) is not None:
            return p
        i = p + 1
    return n


def _is_json(s: str) -> bool:
    try:
        _decoder.decode(s)
    except (ValueError, RecursionError):
        return False
    return True


def _clean_record(rec: dict[str, Any], raw: bytes) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Replace surrogates (from invalid bytes or lone escapes) with U+FFFD."""
    codes: list[str] = []
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        codes.append("invalid-utf8")
    found = [False]
    cleaned = _replace_surrogates(rec, found)
    if found[0] and (not codes or _has_lone_escape(raw)):
        codes.append("lone-surrogate")
    return cleaned, tuple(codes)


_ESCAPE = re.compile(rb"\\u([dD][89a-fA-F][0-9a-fA-F]{2})")


def _has_lone_escape(raw: bytes) -> bool:
    """True when a \\uD800-\\uDFFF escape in ``raw`` is not a high+low pair."""
    found = list(_ESCAPE.finditer(raw))
    i = 0
    while i < len(found):
        v = int(found[i].group(1), 16)
        if (
            v <= 0xDBFF
            and i + 1 < len(found)
            and found[i + 1].start() == found[i].end()
            and int(found[i + 1].group(1), 16) >= 0xDC00
        ):
            i += 2
            continue
        return True
    return False


def _replace_surrogates(value: Any, found: list[bool]) -> Any:
    if isinstance(value, str):
        if _SURROGATE.search(value):
            found[0] = True
            return _SURROGATE.sub("\ufffd", value)
        return value
    if isinstance(value, dict):
        return {_replace_surrogates(k, found): _replace_surrogates(v, found) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_surrogates(v, found) for v in value]
    return value


#: How much of a file `looks_like` reads: enough to see a pretty-printed object's first
#: lines or a binary header, small enough to cost nothing next to the validation pass.
LOOKS_LIKE_BYTES = 8192


def looks_like(head: bytes, size: int) -> str:
    """What a file in which no line is a whole JSON object looks like, from its first bytes.

    Such a file is not a transcript (Claude Code writes one JSON object per line); this names
    it for the message, so a user sees at once that it is another tool's file (e.g. the
    pretty-printed JSON other agents keep their sessions in, archived beside Claude Code's)
    rather than a damaged session. ``head`` is the first `LOOKS_LIKE_BYTES` of the file.
    """
    if size == 0:
        return "an empty file"
    if not head.strip(b"\0"):
        return "NUL bytes only"
    if b"\0" in head:
        return "binary data"
    text = head.decode("utf-8", errors="replace")
    # The head may end inside a multi-byte character: one replacement at the very end is that.
    if "\ufffd" in text.rstrip("\ufffd") or text.count("\ufffd") > 3:
        return "binary data"
    lines = [ln for ln in text.removeprefix("\ufeff").splitlines() if ln.strip()]
    if not lines:
        return "blank lines only"
    first = lines[0].strip()
    if first[0] in "{[":
        # A value spread over lines: the first line opens it alone, or the next is indented.
        if len(lines) > 1 and (first in ("{", "[") or lines[1][:1] in (" ", "\t")):
            return "pretty-printed JSON" if first[0] == "{" else "a pretty-printed JSON array"
        if first[0] == "[" and _is_json(first):
            return "a JSON array" if len(lines) == 1 else "JSON arrays, one a line"
        # One line that starts a value and never ends it: a record torn by a crash.
        return f"an incomplete JSON {'object' if first[0] == '{' else 'array'}"
    if _is_json(first):
        return "JSON values that are not objects"
    return "text that is not JSON"
