"""Redacting a transcript: every string of every record through `redact_rules`.

`redact_lines(lines)` takes decoded lines (`reader.iter_lines`) and yields, per line, the
bytes to write and the findings. What is searched: message text, tool inputs, tool results
with their nested blocks, ``toolUseResult``, attachments, system text — every string value
of every record — except the fields that are identifiers or opaque data the API checks
(`SKIPPED_KEYS`: uuids, ids, ``signature`` of thinking blocks, base64 image data):
changing those would break the chain or the resume without hiding anything.

Invariants:
- A line with no finding is written back byte for byte (its ``data + terminator``).
- A record with a finding is serialised again with `writer.dumps` (Claude Code's
  ``JSON.stringify`` form; keys in their order); the other records of the same physical
  line and its damaged pieces keep their bytes, apart from secrets found in a damaged
  piece, which are replaced in its raw text (the placeholder holds no JSON
  metacharacter, so the piece stays as (in)valid as it was).
- A `Finding` says where (line, JSON path) and what kind, never the secret itself.
- Idempotent: redacting a redacted transcript finds nothing more.
- Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from .lines import DecodedLine
from .redact_rules import redact_text
from .writer import dumps

#: Keys whose values are never searched (ids the chain and the API rely on, opaque blobs).
SKIPPED_KEYS = frozenset(
    {
        "uuid", "parentUuid", "logicalParentUuid", "leafUuid", "sessionId", "session_id",
        "messageId", "snapshotMessageId", "requestId", "promptId", "sourceToolAssistantUUID",
        "agentId", "tool_use_id", "toolUseId", "id", "signature", "timestamp", "backupTime",
        "backupFileName", "type", "role", "model", "version", "userType", "entrypoint",
        "stop_reason", "hash", "shapeHash", "base64", "media_type", "isSidechain", "slug",
    }
)


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


def redact_value(value: Any, path: str, found: list[tuple[str, str]]) -> Any:
    """``value`` with secrets replaced (the same object when nothing was found);
    appends ``(kind, path)`` for each secret to ``found``."""
    if isinstance(value, str):
        if len(value) < 8:
            return value
        new, kinds = redact_text(value)
        for k in kinds:
            found.append((k, path))
        return new
    if isinstance(value, dict):
        out: dict[str, Any] | None = None
        opaque = value.get("type") == "base64"  # an image/document source: data is the image
        for k, v in value.items():
            if k in SKIPPED_KEYS or (opaque and k == "data") or not isinstance(v, (str, dict, list)):
                continue
            nv = redact_value(v, f"{path}.{k}" if path else k, found)
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
            nv = redact_value(v, f"{path}[{i}]", found)
            if nv is not v:
                if lst is None:
                    lst = list(value)
                lst[i] = nv
        return value if lst is None else lst
    return value


def redact_record(record: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The record with secrets replaced (the same object when none), and (kind, path)s."""
    found: list[tuple[str, str]] = []
    new = redact_value(record, "", found)
    return new, found


def redact_line(ln: DecodedLine) -> RedactedLine:
    findings: list[Finding] = []
    replaced: list[tuple[int, int, bytes]] = []  # (start, end, bytes) within ln.data
    for e in ln.entries:
        new, found = redact_record(e.record)
        if not found:
            continue
        findings.extend(Finding(ln.line, k, w) for k, w in found)
        start = e.offset - ln.offset
        replaced.append((start, start + len(e.raw), dumps_lenient(new)))
    for p in ln.pieces:
        text = ln.data[p.start : p.end].decode("utf-8", "surrogateescape")
        new_text, kinds = redact_text(text)
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


def dumps_lenient(record: Any) -> bytes:
    try:
        return dumps(record)
    except orjson.JSONEncodeError:
        # Integers past 64 bits (decoded leniently from a damaged line): the standard
        # encoder writes them, with the same compact separators.
        return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")


def redact_lines(lines: Iterable[DecodedLine]) -> Iterator[RedactedLine]:
    """Each line redacted, in order (streams: one line at a time)."""
    for ln in lines:
        yield redact_line(ln)


def redact_bytes(data: bytes) -> tuple[bytes, list[str]]:
    """A text file's bytes (a file-history backup, say) with secrets replaced; bytes that
    are not UTF-8 pass through unchanged (surrogate escapes)."""
    text = data.decode("utf-8", "surrogateescape")
    new, kinds = redact_text(text)
    if not kinds:
        return data, []
    return new.encode("utf-8", "surrogateescape"), kinds
