"""What `tt ls` knows of a session from the 64 KiB head and tail of its file.

The title is resolved exactly as the Agent SDK's ``list_sessions`` does
(``_parse_session_info_from_lite`` in claude_agent_sdk/_internal/sessions.py, 0.2.189;
docs/format.md §9), on the same bytes (head and tail decoded with ``errors="replace"``) and
with the same raw string scans, so tt shows the titles the SDK shows (the interactive
``/resume`` picker has rules of its own: it shows a file without a title as "(session)",
and leaves out other files, `doctor.core.picker_reasons`):

    last customTitle (tail, then head) → last aiTitle (tail, then head)
    → last lastPrompt (tail) → last summary (tail) → first real prompt (head)

The first real prompt skips tool results, ``isMeta``, ``isCompactSummary``,
``<local-command-stdout>``, ``<session-start-hook>``, ``<tick>``, ``<goal>``,
interrupt markers and pure ``<ide_opened_file>``/``<ide_selection>`` prompts; a
``<command-name>`` prompt is kept only as the fallback; 200 characters at most.
A file whose first line is a sidechain, or with no title at all, is one the SDK does
not list: `Lite.hidden` says why.

Counts (messages, compactions) are exact when head and tail cover the file; for larger
files they are what the head and tail hold, a lower bound (``Counts.exact`` is False:
estimating from line density was tried and was off by up to 10x on the real fixtures,
where a few lines carry images or long tool output). `count_entries` gives exact counts
from a full read (``tt ls --check``).

Invariants:
- Pure: takes bytes and records, returns values; no I/O, never raises on any bytes.
- Title fields are byte-for-byte what the SDK extracts (a test compares them with the
  real ``list_sessions`` on every real fixture).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..model.diagnostics import Severity
from ..model.lines import Entry, decode_line
from ..model.titles import (
    first_prompt,
    first_record_field,
    first_string_field,
    has_spaced,
    last_string_field,
    last_titles,
    marker_lines,
)
from ..validate.core import Report

#: How much of each end of a file the SDK (and `tt ls`) reads.
LITE_READ_BYTES = 64 * 1024

# --- values ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Skipped:
    """A line that could not be read as records. ``line`` is None in the tail of a file
    larger than the head and tail together (its number is unknown without a full read)."""

    line: int | None
    offset: int
    code: str

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "offset": self.offset, "code": self.code}


@dataclass(frozen=True, slots=True)
class Counts:
    messages: int = 0  # user and assistant lines outside sidechains
    compactions: int = 0  # compact boundaries + 1.0.x summary roots (no boundary)
    exact: bool = True


@dataclass(frozen=True, slots=True)
class Lite:
    """One session as the SDK's listing sees it, plus what tt adds from the same bytes."""

    session_id: str
    title: str | None
    title_source: str | None
    custom_title: str | None = None
    ai_title: str | None = None
    first_prompt: str | None = None
    git_branch: str | None = None
    cwd: str | None = None
    tag: str | None = None
    created_at: str | None = None  # the first "timestamp" in the head, as written
    model: str | None = None  # the last real model in the tail
    counts: Counts = field(default_factory=Counts)
    #: Why the SDK does not list it (the interactive picker has rules of its own:
    #: `doctor.core.picker_reasons`): "sidechain", "no-title", "empty", "not-a-transcript"
    #: (`catalog.files.read_row`: no Claude Code record at all); None when it is listed.
    hidden: str | None = None
    skipped: tuple[Skipped, ...] = ()

    @property
    def sdk_custom_title(self) -> str | None:
        """The SDK's ``custom_title`` field: a custom title, else the AI title."""
        return self.custom_title or self.ai_title


def parse_lite(session_id: str, head: bytes, tail: bytes, size: int) -> Lite:
    """Parse a session from its head and tail (as ``reader.read_head_tail`` returns them:
    the same object twice when the file fits in the head)."""
    if not head:
        return Lite(session_id, None, None, hidden="empty")
    # The SDK's view: head and tail apart, even when they overlap.
    h, t = head, tail
    hs = has_spaced(h)
    ts = hs if t is h else has_spaced(t)
    nl = h.find(b"\n")
    first_line = h[: nl if nl >= 0 else len(h)]
    sidechain = b'"isSidechain":true' in first_line or b'"isSidechain": true' in first_line

    custom, ai = last_titles(t, ts)
    if not custom and t is not h:
        head_custom, head_ai = last_titles(h, hs)
        custom, ai = custom or head_custom, ai or head_ai
    prompt = first_prompt(h, hs) or None
    # Precedence as the SDK's; lastPrompt and summary are read only when they decide.
    title, source = (custom, "custom-title") if custom else (ai, "ai-title") if ai else (None, None)
    if title is None:
        for src, key in (("last-prompt", "lastPrompt"), ("summary", "summary")):
            value = last_string_field(t, key, ts)
            if value:
                title, source = value, src
                break
        else:
            title, source = (prompt, "first-prompt") if prompt else (None, None)

    tag: str | None = None
    if b'{"type":"tag"' in t:
        tag_line = next((ln for ln in reversed(t.split(b"\n")) if ln.startswith(b'{"type":"tag"')), None)
        if tag_line is not None:
            tag = last_string_field(tag_line, "tag") or None

    counts, model, skipped = _scan(head, tail, size, hs, ts)
    return Lite(
        session_id,
        title,
        source,
        custom_title=custom or None,
        ai_title=ai or None,
        first_prompt=prompt,
        git_branch=last_string_field(t, "gitBranch", ts) or first_string_field(h, "gitBranch") or None,
        cwd=first_record_field(h, "cwd") or None,
        tag=tag,
        created_at=first_string_field(h, "timestamp") or None,
        model=model,
        counts=counts,
        hidden="sidechain" if sidechain else None if title else "no-title",
        skipped=tuple(skipped),
    )


def created_at_ms(value: str | None) -> int | None:
    """The SDK's ``created_at``: epoch milliseconds of an ISO timestamp, or None."""
    if not value:
        return None
    try:
        return int(
            datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value).timestamp()
            * 1000
        )
    except ValueError:
        return None


# --- counting ----------------------------------------------------------------------------
#
# Lite counts read byte patterns of Claude Code's compact JSON (no parse: 2,000 files in
# about a second): a line with a top-level ``"type":"user"``/``"assistant"`` is a message
# unless it is a sidechain or a ``progress`` line (agent_progress lines carry copies of a
# subagent's messages); tests check they equal `count_entries` on every real fixture
# that fits in head and tail.


@dataclass(slots=True)
class _Tally:
    messages: int = 0
    compactions: int = 0
    model: str | None = None

    def add(self, rec: dict[str, Any]) -> None:
        t = rec.get("type")
        if t == "system":
            if rec.get("subtype") == "compact_boundary":
                self.compactions += 1
            return
        if t not in ("user", "assistant") or rec.get("isSidechain") is True:
            return
        self.messages += 1
        if t == "user" and rec.get("isCompactSummary") is True and rec.get("parentUuid") is None:
            # 1.0.x compaction: a summary root with no boundary record before it.
            self.compactions += 1
        elif t == "assistant":
            m = rec.get("message")
            model = m.get("model") if isinstance(m, dict) else None
            if isinstance(model, str) and model and model != "<synthetic>":
                self.model = model

    def add_line(self, data: bytes, ls: int, le: int, at: int, spaced: bool) -> int:
        """Count one line whose first marker is at ``at``; returns 1 for a main
        assistant line (whose model is wanted if it is the last)."""
        find = data.find
        # Top-level keys come before nested objects in every version seen (1.0.51 to
        # 2.1.332): a progress line says so before its data (where the copied messages
        # are), and isSidechain is the second key; the first marker is the line's type.
        if find(_PROGRESS[0], ls, at) >= 0 or find(_SIDECHAIN[0], ls, min(le, ls + 512)) >= 0:
            return 0
        if spaced and (find(_PROGRESS[1], ls, at) >= 0 or find(_SIDECHAIN[1], ls, min(le, ls + 512)) >= 0):
            return 0
        if data.startswith(_BOUNDARY[0], at) or data.startswith(_BOUNDARY[1], at):
            self.compactions += 1
            return 0
        self.messages += 1
        if find(_ROOT[0], ls, min(le, ls + 64)) >= 0 and (
            find(_SUMMARY[0], ls, le) >= 0 or find(_SUMMARY[1], ls, le) >= 0
        ):
            self.compactions += 1  # a 1.0.x compaction: a summary root, no boundary
        return 1 if data.startswith(_ASSISTANT[0], at) or data.startswith(_ASSISTANT[1], at) else 0


def _pat(key: str, value: str) -> tuple[bytes, bytes]:
    """A key-value pair as Claude Code writes it, and spaced (as other tools do)."""
    return (f'"{key}":{value}'.encode(), f'"{key}": {value}'.encode())


_USER, _ASSISTANT, _SYSTEM = _pat("type", '"user"'), _pat("type", '"assistant"'), _pat("type", '"system"')
_PROGRESS, _BOUNDARY = _pat("type", '"progress"'), _pat("subtype", '"compact_boundary"')
_SIDECHAIN, _SUMMARY, _ROOT = (
    _pat("isSidechain", "true"),
    _pat("isCompactSummary", "true"),
    _pat("parentUuid", "null"),
)
_MARKS = (_USER[0], _ASSISTANT[0], _BOUNDARY[0])
_MARKS_SPACED = (*_MARKS, _USER[1], _ASSISTANT[1], _BOUNDARY[1])


def _scan(
    head: bytes, tail: bytes, size: int, hs: bool, ts: bool
) -> tuple[Counts, str | None, list[Skipped]]:
    skipped: list[Skipped] = []
    if tail is head or size <= len(head):
        whole: bytes | None = head
    elif size <= len(head) + len(tail):
        whole = head + tail[len(head) - (size - len(tail)) :]  # they overlap: join them
    else:
        whole = None
    if whole is not None:
        tally = _scan_region(whole, 0, len(whole), hs or ts)
        _damage(whole, 0, size, True, skipped)
        return Counts(tally.messages, tally.compactions, True), tally.model, skipped
    # The head's last line and the tail's first are cut by the 64 KiB bounds.
    head_end = head.rfind(b"\n") + 1
    nl = tail.find(b"\n")
    tail_start = len(tail) if nl < 0 else nl + 1
    head_tally = _scan_region(head, 0, head_end, hs)
    tail_tally = _scan_region(tail, tail_start, len(tail), ts)
    _damage(head[:head_end], 0, size, True, skipped)
    _damage(tail[tail_start:], size - len(tail) + tail_start, size, False, skipped)
    return (
        Counts(
            head_tally.messages + tail_tally.messages, head_tally.compactions + tail_tally.compactions, False
        ),
        tail_tally.model or head_tally.model,
        skipped,
    )


def _scan_region(data: bytes, start: int, stop: int, spaced: bool) -> _Tally:
    tally = _Tally()
    last_assistant: tuple[int, int] | None = None
    for ls, le, at in marker_lines(data, _MARKS_SPACED if spaced else _MARKS, start, stop):
        if tally.add_line(data, ls, le, at, spaced):
            last_assistant = (ls, le)
    if last_assistant is not None:
        model = first_string_field(data[last_assistant[0] : last_assistant[1]], "model", spaced)
        if model and model != "<synthetic>":
            tally.model = model
    return tally


def _damage(data: bytes, base: int, size: int, numbered: bool, skipped: list[Skipped]) -> None:
    """What a lite read can see of damage without parsing every line: NUL runs, and a
    last line that is not a whole record (a torn tail). `tt ls --check` sees the rest."""
    spots: list[int] = []
    i = data.find(b"\x00")
    if i >= 0:
        spots.append(data.rfind(b"\n", 0, i) + 1)
    if base + len(data) == size and data and not data.endswith(b"\n"):
        spots.append(data.rfind(b"\n") + 1)
    for ls in sorted(set(spots)):
        le = data.find(b"\n", ls)
        le = len(data) if le < 0 else le
        number = data.count(b"\n", 0, ls) + 1 if numbered else None
        last = base + le == size
        line = data[ls:le]
        for p in decode_line(number or 0, base + ls, line, b"" if last else b"\n", is_last=last).pieces:
            if p.code != "blank-line":
                skipped.append(Skipped(number, base + ls + p.start, p.code))


def count_entries(entries: Iterable[Entry]) -> Counts:
    """Exact counts from every record of a file (a full read)."""
    tally = _Tally()
    for e in entries:
        tally.add(e.record)
    return Counts(tally.messages, tally.compactions, True)


# --- health ---------------------------------------------------------------------------------

HEALTH = ("clean", "repairable", "damaged", "past-cap")


def health_of(report: Report) -> str:
    """``clean`` (no errors), ``repairable`` (every error has a `tt repair` fix),
    ``damaged`` (errors repair leaves alone), ``not a transcript`` (no JSON record at all:
    `validate.files.settle_not_transcript`), ``past-cap`` (too big to load; takes
    precedence: nothing else matters until it is compacted)."""
    if report.past_cap:
        return "past-cap"
    if report.not_transcript:
        return "not a transcript"
    errors = [d for d in report.diagnostics if d.severity is Severity.ERROR]
    if not errors:
        return "clean"
    return "repairable" if all(d.fix for d in errors) else "damaged"


# --- rows of `tt ls` --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Row:
    """One line of `tt ls`: the lite parse plus what the file system and a check add."""

    path: str
    project: str  # the project folder name
    mtime_ms: int
    size: int
    lite: Lite
    subagents: int = 0
    counts: Counts = field(default_factory=Counts)  # lite counts, or exact ones after --check
    health: str | None = None  # one of HEALTH after --check, else None ("past-cap" is known from the size)
    errors: int = 0
    warnings: int = 0
    codes: tuple[str, ...] = ()  # the distinct error codes found by --check
    skipped: tuple[Skipped, ...] = ()
    unreadable: str | None = None  # why the file could not be read at all
    #: The session's subagent files with errors (--check: their errors are counted in the row's).
    damaged_subagents: tuple[str, ...] = ()

    @property
    def damaged(self) -> bool:
        """Damage was seen: lines skipped in the part read, an unreadable file, or errors
        found by --check."""
        return bool(self.skipped or self.unreadable or self.errors)

    @property
    def session_id(self) -> str:
        return self.lite.session_id

    def to_dict(self) -> dict[str, Any]:
        lt = self.lite
        return {
            "session_id": lt.session_id,
            "path": self.path,
            "project": self.project,
            "title": lt.title,
            "title_source": lt.title_source,
            "custom_title": lt.custom_title,
            "ai_title": lt.ai_title,
            "first_prompt": lt.first_prompt,
            "git_branch": lt.git_branch,
            "cwd": lt.cwd,
            "tag": lt.tag,
            "created_at": lt.created_at,
            "modified_ms": self.mtime_ms,
            "size": self.size,
            "messages": self.counts.messages,
            "compactions": self.counts.compactions,
            "counts_exact": self.counts.exact,
            "subagents": self.subagents,
            "model": lt.model,
            "health": self.health,
            "errors": self.errors,
            "warnings": self.warnings,
            "error_codes": list(self.codes),
            "hidden": lt.hidden,
            "skipped": [s.to_dict() for s in self.skipped],
            "unreadable": self.unreadable,
            "damaged_subagents": list(self.damaged_subagents),
        }


def sort_rows(rows: Iterable[Row]) -> list[Row]:
    """Newest first, and one row per session id (the newest), as the SDK lists them."""
    best: dict[str, Row] = {}
    for r in rows:
        cur = best.get(r.session_id)
        if cur is None or r.mtime_ms > cur.mtime_ms:
            best[r.session_id] = r
    return sorted(best.values(), key=lambda r: r.mtime_ms, reverse=True)
