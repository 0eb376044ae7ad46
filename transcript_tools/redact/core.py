"""Redacting a transcript: every string of every record through `redact.rules`.

`redact_lines(lines, known)` takes decoded lines (`reader.iter_lines`) and yields, per
line, the bytes to write and the findings. What is searched: message text, tool inputs,
tool results with their nested blocks, ``toolUseResult``, attachments, system text — every
string value of every record — except the *structural fields* Claude Code writes
(`STRUCTURAL_KEYS`: uuids and parent links, ``sessionId``, ``toolUseID`` /
``parentToolUseID`` / ``sourceToolUseID``, ``requestId``, ``message.id``, ``tool_use.id``,
``tool_result.tool_use_id``, ``agentId``, ``promptId``, thinking ``signature`` fields,
file-history backup names, compaction anchors, ...; base64 image data too): changing them
would break the chain or the resume without hiding anything. They are skipped where Claude
Code puts them — in records, messages, content blocks, progress records nested in
``data``, snapshots, metadata — but not inside what a tool or the user wrote (a tool
``input``; ``toolUseResult`` below its own top level): an ``"id"`` or a ``"signature"``
there is data like any other.

A file is redacted in two passes, so that a value is redacted everywhere in it or
nowhere: `collect` reads it once and returns a `Known` — the span texts found in its
structural fields (ids: left alone wherever they occur, e.g. an ``agent_msg_01…`` quoted in
a hook's output) and the values found as secrets (replaced at every occurrence, e.g. a key
seen in a ``.env`` read and again, without its ``KEY=``, in a ``curl`` command). Without a
`Known` each line is judged alone (the old behaviour, for a single record).

Invariants:
- A line with no finding is written back byte for byte (its ``data + terminator``).
- A record with a finding is serialised again with `wire.dumps` (Claude Code's
  ``JSON.stringify`` form; keys in their order); the other records of the same physical
  line and its damaged pieces keep their bytes, apart from secrets found in a damaged
  piece, which are replaced in its raw text (the placeholder holds no JSON
  metacharacter, so the piece stays as (in)valid as it was).
- A `Finding` says where (line, JSON path) and what kind, never the secret itself.
- Idempotent: redacting a redacted transcript finds nothing more.
- Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..model.lines import DecodedLine
from ..model.wire import dumps_lenient
from .rules import NOTHING_KNOWN, Known, find_secrets, redact_text

#: Structural fields: ids the chain and the API rely on, and opaque blobs. Found in the
#: real fixtures (1.0.51 to 2.1.332) and in public real sessions (2.1.39 to 2.1.73):
#: ``toolUseID``/``parentToolUseID`` on progress records (``agent_msg_01…`` in 2.1.17 to
#: 2.1.73), ``sourceToolUseID`` on tool-result records, ``compactMetadata``'s anchors,
#: ``microcompactMetadata.compactedToolIds``, file-history ``backupFileName``s.
STRUCTURAL_KEYS = frozenset(
    {
        "uuid",
        "parentUuid",
        "logicalParentUuid",
        "leafUuid",
        "sessionId",
        "session_id",
        "messageId",
        "snapshotMessageId",
        "requestId",
        "request_id",
        "promptId",
        "sourceToolAssistantUUID",
        "agentId",
        "tool_use_id",
        "toolUseId",
        "toolUseID",
        "parentToolUseID",
        "parent_tool_use_id",
        "sourceToolUseID",
        "id",
        "signature",
        "timestamp",
        "backupTime",
        "backupFileName",
        "type",
        "role",
        "model",
        "version",
        "userType",
        "entrypoint",
        "stop_reason",
        "hash",
        "shapeHash",
        "base64",
        "media_type",
        "isSidechain",
        "slug",
        "headUuid",
        "tailUuid",
        "anchorUuid",
        "compactedToolIds",
        "requestRef",
        "requestDigest",
        "digests",
    }
)
#: The former name (kept for callers).
SKIPPED_KEYS = STRUCTURAL_KEYS
#: Keys whose value is what a tool or the user wrote: below them no key is structural.
_FREE_KEYS = frozenset({"input"})
#: ``toolUseResult`` is the tool's own output: structural keys count at its top level only.
_TOOL_RESULT_KEY = "toolUseResult"


@dataclass(frozen=True, slots=True)
class Finding:
    line: int
    kind: str
    where: str  # JSON path of the string, e.g. ``message.content[0].input.command``

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "kind": self.kind, "where": self.where}


@dataclass(frozen=True, slots=True)
class RedactedLine:
    line: int
    chunk: bytes  # what to write: data + terminator
    findings: tuple[Finding, ...]

    @property
    def changed(self) -> bool:
        return bool(self.findings)


# Structure levels of the walk: STRUCT (Claude Code's own objects: structural keys are
# skipped), TOP (the top level of a toolUseResult: skipped there, free below), FREE.
STRUCT, TOP, FREE = 0, 1, 2


def _child_level(level: int, key: str) -> int:
    if level != STRUCT:
        return FREE
    if key in _FREE_KEYS:
        return FREE
    return TOP if key == _TOOL_RESULT_KEY else STRUCT


def _skipped(value: dict[str, Any], k: str, level: int) -> bool:
    if level != FREE and k in STRUCTURAL_KEYS:
        return True
    if k != "data":
        return False
    # An image/document source: its data is the image, in any position. A
    # redacted_thinking block's data is the API's encrypted thinking (like a signature).
    return value.get("type") == "base64" or (level != FREE and value.get("type") == "redacted_thinking")


def redact_value(
    value: Any, path: str, found: list[tuple[str, str]], known: Known = NOTHING_KNOWN, level: int = STRUCT
) -> Any:
    """``value`` with secrets replaced (the same object when nothing was found);
    appends ``(kind, path)`` for each secret to ``found``."""
    if isinstance(value, str):
        if len(value) < 8:
            return value
        new, kinds = redact_text(value, known)
        for k in kinds:
            found.append((k, path))
        return new
    if isinstance(value, dict):
        out: dict[str, Any] | None = None
        for k, v in value.items():
            if not isinstance(v, (str, dict, list)) or _skipped(value, k, level):
                continue
            nv = redact_value(v, f"{path}.{k}" if path else k, found, known, _child_level(level, k))
            if nv is not v:
                if out is None:
                    out = dict(value)
                out[k] = nv
        return value if out is None else out
    if isinstance(value, list):
        lst: list[Any] | None = None
        for i, v in enumerate(value):
            if not isinstance(v, (str, dict, list)):
                continue
            nv = redact_value(v, f"{path}[{i}]", found, known, FREE if level == TOP else level)
            if nv is not v:
                if lst is None:
                    lst = list(value)
                lst[i] = nv
        return value if lst is None else lst
    return value


def redact_record(
    record: dict[str, Any], known: Known = NOTHING_KNOWN
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The record with secrets replaced (the same object when none), and (kind, path)s."""
    found: list[tuple[str, str]] = []
    new = redact_value(record, "", found, known)
    return new, found


def structural_values(value: Any, level: int = STRUCT) -> Iterator[str]:
    """The strings of ``value`` that sit in a structural field (see the module doc)."""
    if isinstance(value, dict):
        for k, v in value.items():
            if level != FREE and k in STRUCTURAL_KEYS:
                yield from _strings(v)
            elif isinstance(v, (dict, list)):
                yield from structural_values(v, _child_level(level, k))
    elif isinstance(value, list):
        for v in value:
            if isinstance(v, (dict, list)):
                yield from structural_values(v, FREE if level == TOP else level)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)


def _free_strings(value: Any, level: int = STRUCT) -> Iterator[str]:
    """The strings `redact_value` searches."""
    if isinstance(value, str):
        if len(value) >= 8:
            yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, (str, dict, list)) and not _skipped(value, k, level):
                yield from _free_strings(v, _child_level(level, k))
    elif isinstance(value, list):
        for v in value:
            yield from _free_strings(v, FREE if level == TOP else level)


def collect(lines: Iterable[DecodedLine]) -> Known:
    """First pass over a file: its ids (span texts found in structural fields) and its
    secrets (values found elsewhere, less the ids). See the module doc."""
    ids: set[str] = set()
    found: dict[str, str] = {}
    flagged: set[int] = set()
    seen: set[str] = set()  # structural values already looked at (sessionId is on every line)
    for ln in lines:
        texts: list[str] = []
        for e in ln.entries:
            for v in structural_values(e.record):
                if len(v) >= 8 and v not in seen:
                    seen.add(v)
                    ids.update(v[s.start : s.end] for s in find_secrets(v))
            texts.extend(_free_strings(e.record))
        texts.extend(ln.data[p.start : p.end].decode("utf-8", "surrogateescape") for p in ln.pieces)
        for t in texts:
            for s in find_secrets(t):
                found.setdefault(t[s.start : s.end], s.kind)
                flagged.add(ln.line)
    return Known(
        ids=frozenset(ids),
        secrets=tuple((v, k) for v, k in found.items() if v not in ids),
        lines=frozenset(flagged),
    )


def redact_line(ln: DecodedLine, known: Known = NOTHING_KNOWN) -> RedactedLine:
    if known.lines is not None and ln.line not in known.lines and not known.in_bytes(ln.data):
        # Nothing found here in the first pass, and no known secret in its bytes: the
        # second pass cannot find anything either (ids only ever remove findings).
        return RedactedLine(ln.line, ln.data + ln.terminator, ())
    findings: list[Finding] = []
    replaced: list[tuple[int, int, bytes]] = []  # (start, end, bytes) within ln.data
    for e in ln.entries:
        new, found = redact_record(e.record, known)
        if not found:
            continue
        findings.extend(Finding(ln.line, k, w) for k, w in found)
        start = e.offset - ln.offset
        replaced.append((start, start + len(e.raw), dumps_lenient(new)))
    for p in ln.pieces:
        text = ln.data[p.start : p.end].decode("utf-8", "surrogateescape")
        new_text, kinds = redact_text(text, known)
        if kinds:
            findings.extend(Finding(ln.line, k, "(damaged bytes)") for k in kinds)
            replaced.append((p.start, p.end, new_text.encode("utf-8", "surrogateescape")))
    if not replaced:
        return RedactedLine(ln.line, ln.data + ln.terminator, ())
    replaced.sort()
    out: list[bytes] = []
    pos = 0
    for a, b, data in replaced:
        out.append(ln.data[pos:a])
        out.append(data)
        pos = b
    out.append(ln.data[pos:])
    out.append(ln.terminator)
    return RedactedLine(ln.line, b"".join(out), tuple(findings))


def redact_lines(lines: Iterable[DecodedLine], known: Known = NOTHING_KNOWN) -> Iterator[RedactedLine]:
    """Each line redacted, in order (streams: one line at a time), with what `collect`
    found in the whole file."""
    for ln in lines:
        yield redact_line(ln, known)


def redact_bytes(data: bytes) -> tuple[bytes, list[str]]:
    """A text file's bytes (a file-history backup, say) with secrets replaced; bytes that
    are not UTF-8 pass through unchanged (surrogate escapes)."""
    text = data.decode("utf-8", "surrogateescape")
    new, kinds = redact_text(text)
    if not kinds:
        return data, []
    return new.encode("utf-8", "surrogateescape"), kinds
