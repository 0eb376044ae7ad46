"""What a resume restores besides the messages, and the checks it makes on load.

Claude Code 2.1.332 appends a ``cost-state`` record at the end of each run — the
session's cumulative ``totalCostUSD`` and ``modelUsage`` by model (tokens and
``costUSD``) — and a resumed run starts from the last one: resuming a session whose last
``cost-state`` said $0.099676 with one more turn reported ``total_cost_usd`` $0.15416 and
cumulative tokens in ``modelUsage`` (its ``usage`` stays the run's own), and appended a new ``cost-state`` with those totals (probed with the
stand-in; `tests/resume/test_resume_state.py` runs it). The session's permission mode is the
last ``permission-mode`` record (docs/format.md §3.6: re-appended with ``last-prompt`` and ``mode``).

`tail_state` finds both from the end of the file's bytes (``rfind`` on a memory map,
each hit parsed and checked: a tool result quoting the text does not count), so a 50 MB
session costs a search, not a parse. `touched` gathers, from the tool results after the
resume's start, what each file the session read, wrote or edited last held;
`file_notices` compares that with what a reader says the files hold now. `newer_version`
says when the file was last written by a Claude Code newer than the one tt's tables were
read from.

Pure: bytes (or a memory map) and a reader are handed in; `files_state` maps the
transcript and reads the files named. No clock.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    import mmap


@dataclass(frozen=True, slots=True)
class TailState:
    #: The last ``cost-state`` record, as written (None: the session has none).
    cost_state: dict[str, Any] | None = None
    #: The last ``permission-mode`` record's mode.
    permission_mode: str | None = None


def _record_before(
    mm: bytes | mmap.mmap, needle: bytes, end: int, want: str
) -> tuple[dict[str, Any] | None, int]:
    """The last record of type ``want`` whose line contains ``needle`` before ``end``."""
    while True:
        at = mm.rfind(needle, 0, end)
        if at < 0:
            return None, -1
        start = mm.rfind(b"\n", 0, at) + 1
        stop = mm.find(b"\n", at)
        line = mm[start : stop if stop >= 0 else len(mm)]
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            rec = None
        if isinstance(rec, dict) and rec.get("type") == want:
            return rec, start
        end = start  # the text inside another record: look further back


def tail_state(mm: bytes | mmap.mmap) -> TailState:
    """The last ``cost-state`` and ``permission-mode`` records in the file's bytes ``mm``."""
    cost, _ = _record_before(mm, b'"cost-state"', len(mm), "cost-state")
    perm, _ = _record_before(mm, b'"permission-mode"', len(mm), "permission-mode")
    mode = perm.get("permissionMode") if perm else None
    return TailState(
        cost if cost and isinstance(cost.get("modelUsage"), dict) else None,
        mode if isinstance(mode, str) else None,
    )


# --- files the session touched -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Touched:
    path: str
    #: What the session last saw or left in the file (None: unknown, e.g. a partial read).
    expected: str | None
    by: str  # "read" | "write" | "edit"


def expected_content(result: Mapping[str, Any]) -> Touched | None:
    """What a Read, Write or Edit ``toolUseResult`` says the file held after it (pure).

    Shapes as both pinned CLIs write them (fixtures/real): Read ``{"type": "text", "file":
    {"filePath", "content", "startLine", "numLines", "totalLines"}}`` (whole when it starts
    at line 1 and covers every line); Write ``{"type": "create"|"update", "filePath",
    "content"}``; Edit ``{"filePath", "oldString", "newString", "originalFile",
    "replaceAll"}`` (the original with the edit applied).
    """
    f = result.get("file")
    if isinstance(f, Mapping) and isinstance(f.get("filePath"), str) and isinstance(f.get("content"), str):
        whole = f.get("startLine") == 1 and f.get("numLines") == f.get("totalLines")
        return Touched(f["filePath"], f["content"] if whole else None, "read")
    fp = result.get("filePath")
    if not isinstance(fp, str):
        return None
    if result.get("type") in ("create", "update") and isinstance(result.get("content"), str):
        return Touched(fp, result["content"], "write")
    old, new, orig = result.get("oldString"), result.get("newString"), result.get("originalFile")
    if isinstance(old, str) and isinstance(new, str):
        if isinstance(orig, str) and old and old in orig:
            after = orig.replace(old, new) if result.get("replaceAll") else orig.replace(old, new, 1)
            return Touched(fp, after, "edit")
        return Touched(fp, None, "edit")
    return None


def _tool_results(mm: bytes | mmap.mmap, start: int) -> Iterator[dict[str, Any]]:
    needle = b'"toolUseResult"'
    at = mm.find(needle, start)
    while at >= 0:
        ls = mm.rfind(b"\n", 0, at) + 1
        le = mm.find(b"\n", at)
        le = le if le >= 0 else len(mm)
        try:
            rec = orjson.loads(mm[ls:le])
        except orjson.JSONDecodeError:
            rec = None
        if isinstance(rec, dict) and isinstance(rec.get("toolUseResult"), dict):
            yield rec["toolUseResult"]
        at = mm.find(needle, le)


def touched(mm: bytes | mmap.mmap, start: int = 0) -> dict[str, Touched]:
    """The last touch of each file by the session's tool results in ``mm`` from byte ``start`` on."""
    out: dict[str, Touched] = {}
    for result in _tool_results(mm, start):
        t = expected_content(result)
        if t is not None:
            out[t.path] = t
    return out


def _same(expected: str, actual: str) -> bool:
    # Claude Code's Read reports lines without the file's last newline.
    return expected == actual or expected.rstrip("\n") == actual.rstrip("\n")


def file_notices(touched: Mapping[str, Touched], read: Callable[[str], str | None]) -> str | None:
    """One line naming the files that changed (or vanished) since the session last saw them.
    ``read(name)``: the file's text now, None when it is gone (`files_state.file_notices`
    reads the disk)."""
    changed: list[str] = []
    gone: list[str] = []
    for name, t in sorted(touched.items()):
        if t.expected is None:
            continue
        now = read(name)
        if now is None:
            gone.append(name)
        elif not _same(t.expected, now):
            changed.append(name)
    if not changed and not gone:
        return None
    parts = []
    if changed:
        parts.append(
            f"{len(changed)} file(s) the session read or edited changed since: {', '.join(_short(changed))}"
        )
    if gone:
        parts.append(f"{len(gone)} no longer exist: {', '.join(_short(gone))}")
    return "; ".join(parts) + " (the model's view of them is out of date)"


def _short(names: list[str], most: int = 5) -> list[str]:
    return names if len(names) <= most else [*names[:most], f"and {len(names) - most} more"]


# --- versions ---------------------------------------------------------------------------

_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)")


def version_key(v: str) -> tuple[int, int, int] | None:
    m = _VERSION.match(v)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def newer_version(written_by: str | None, known: str) -> bool:
    """True when ``written_by`` is a Claude Code version past ``known`` (pure)."""
    a, b = version_key(written_by or ""), version_key(known)
    return a is not None and b is not None and a > b
