"""Loading what a resume needs from a transcript, as fast as the file allows.

Two savings, each falling back to the reference path when it cannot vouch for the result:

1. **Only the part after the last compact boundary.** A resume sends the active chain
   from the last compact boundary on (docs/format.md §11): the boundary's ``parentUuid`` is
   null, so nothing before it is reached, except the *preserved segment* its
   ``compactMetadata`` names (messages kept verbatim across the compaction, written
   before the boundary). So only ``[first line of the preserved segment, or the
   boundary] ... end of file`` is read (`reader.preserved_start`, which `reader.load`
   uses too, so a fork or a show past the cap starts at the same line). The boundary is
   `reader.last_boundary`'s, found from the end of the file with a raw byte search
   (the same one `reader.load` uses). If an entry after the boundary names a parent outside that part
   (a rewind into the older history), the whole file is read instead (when it is under
  ``max_bytes``; past it, the part is all there is, as with `reader.load`).
2. **No repair pass when the entries are whole and the chain is sound.** When every line
   read is one whole JSON object (but for a torn last line, which is left out exactly as
   `repair`'s cut-torn-tail does), `quickchain.quick_conversation` vouches for the chain
   (unique uuids, every parent present and earlier, no sidechain on the main chain) and
   no response is split apart and no image is over the API's limit, the messages come
   straight from the records; an unanswered call or an orphan result is then answered
   or dropped by `conversation`'s rules, as Claude Code 2.1.332 does (the reference path
   gets the same result from `repair`'s add-interrupted-result).
   Otherwise the lines go through the in-memory repair (`repair.core.repaired_entries`, as
   `loader.load_session`) and `session.Session`, the reference path.

The fast path is one streaming pass (`_entries` into `quickchain.quick_conversation`)
over the file mapped into memory: each line is decoded once and
dropped at once unless it is a chain node; the nodes' records are trimmed of what a
resume never sends (a user line's ``toolUseResult``; of a progress line, everything
but its chain fields), so a 50 MB file is not held as dicts twice over. Every byte is
still decoded: a line that is not valid JSON is one Claude Code drops, so the fast path
must see it to decline. Measured (benchmarks/bench_resume.py): what is left above the
orjson floor is Python's start-up and imports (~0.1 s), keeping the conversation's
objects (the floor frees each line's at once), and the Python work per node; decoding
only parts of lines (envelope of progress lines, user lines without ``toolUseResult``,
cut out of the raw bytes) was tried and was slower than orjson decoding the whole line.

Invariants:
- Never writes. Reads at most the whole file; refuses what is past ``max_bytes``
  (`errors.TranscriptTooLarge`) unless the part after the last boundary fits.
- The conversation equals the reference path's (`loader.load_session` of the whole file,
  then `conversation.build`) whenever a saving is taken; tests/model/test_conversation.py
  checks both ways on every real fixture and on generated sessions.
- The continuation leaf is an entry that is in the file (`ForResume.conversation`).
- On the fast path, ``conversation.entries`` carry trimmed records (above); their
  ``raw`` is the exact bytes of the line.
"""

from __future__ import annotations

import gc
import mmap
import uuid as _uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..edge.reader import MAX_TRANSCRIPT_READ_BYTES, iter_lines, last_boundary, mapped, preserved_start
from ..model import conversation
from ..model.active import MAX_IMAGE_BYTES, facts_of
from ..model.errors import ConversationEnded, TranscriptTooLarge
from ..model.lines import DecodedLine, Entry
from ..model.session import Session, session_id_from_name
from .quickchain import Outside, QuickChain, quick_conversation


@dataclass(frozen=True, slots=True)
class ForResume:
    conversation: conversation.Conversation
    #: The in-memory repair's actions (`repair.model.Action`); empty on the fast path.
    actions: list[Any] = field(default_factory=list)
    #: Byte offset reading began at (non-zero: from the last compact boundary).
    start: int = 0
    size: int = 0
    #: True when no repair pass was needed (point 2 of the module docstring).
    fast: bool = False
    #: The session the reference path built, else None.
    session: Session | None = None
    #: What the fast path mended itself (a torn last line left out), in words.
    mended: list[str] = field(default_factory=list)


@contextmanager
def _no_gc() -> Iterator[None]:
    # Decoding builds millions of small dicts and lists that all stay alive; the cyclic
    # collector would scan them again and again for nothing (about 40% of the load time
    # on a 50 MB file). Reference counting still frees everything as usual.
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # Everything allocated meanwhile sits in the youngest generation: the first
        # collection after `enable` would traverse all of it (0.1-0.2 s on a 50 MB file),
        # and the next one again. freeze+unfreeze moves every tracked object into the
        # oldest generation without a traversal; a full collection still finds any cycle.
        gc.freeze()
        gc.unfreeze()
        if was:
            gc.enable()


def resume_start(path: Path) -> int:
    """Byte offset where the part a resume needs begins (0: the whole file)."""
    with mapped(path) as mm:
        return 0 if mm is None else _start(mm)


def _start(mm: mmap.mmap) -> int:
    found = last_boundary(mm)
    return 0 if found is None else preserved_start(mm, *found)


#: The fields of a progress line a resume reads (`quickchain`, `conversation`).
_PROGRESS_KEPT = ("type", "uuid", "parentUuid", "isSidechain", "sessionId", "cwd", "gitBranch", "version")


class _Decline(Exception):
    """A line that is not exactly one JSON object: the reference path decides."""


def _entries(data: mmap.mmap, start: int, torn: list[int]) -> Iterator[Entry]:
    """Every line of ``data`` from byte ``start`` on as one `Entry`, streamed.

    Raises `_Decline` when a line is not exactly one JSON object ending in LF, but for a
    torn last line, which is left out (its size goes to ``torn``) as `repair`'s
    cut-torn-tail does. The records are trimmed of what a resume never sends and the
    file often doubles (a user line's ``toolUseResult``; of a progress line, all but
    `_PROGRESS_KEPT`):
    the caller keeps the entries of the conversation, and a 50 MB file would otherwise
    stay in memory as dicts twice over. ``raw`` stays the exact bytes.
    """
    loads = orjson.loads
    find = data.find
    end = len(data)
    pos = start
    number = 0
    while pos < end:
        nl = find(b"\n", pos)
        last = nl < 0
        stop = end if last else nl
        raw = data[pos:stop]
        number += 1
        try:
            rec = loads(raw)
        except orjson.JSONDecodeError:
            # A torn tail: `repair` cuts it (cut-torn-tail); so do we. Bytes that do not
            # even start like a record are something else: the reference path decides.
            if last and raw.startswith(b"{") and b"\x00" not in raw:
                torn.append(len(raw))
                return
            raise _Decline from None
        if type(rec) is not dict:
            raise _Decline
        t = rec.get("type")
        if t == "user":
            rec.pop("toolUseResult", None)
        elif t == "progress":
            # Only what the chain and the continuation read: the rest (``data``, often
            # half the file) is not kept, so it is freed at once and its memory reused.
            g = rec.get
            rec = {k: g(k) for k in _PROGRESS_KEPT if k in rec}
        yield Entry(number, pos, raw, rec)
        pos = stop + 1


def _scan(data: mmap.mmap, start: int) -> tuple[QuickChain | None, int]:
    """`quick_conversation` of the lines of ``data`` from ``start`` on, and the size of a
    torn last line left out (0: none). None: a line the fast path cannot take."""
    torn: list[int] = []
    try:
        q = quick_conversation(_entries(data, start, torn), partial=start > 0)
    except _Decline:
        return None, 0
    return q, sum(torn)


def _self_contained(entries: list[Entry]) -> bool:
    """Every conversation entry after the (first) boundary names a parent in the part."""
    seen: set[str] = set()
    after = False
    for e in entries:
        rec = e.record
        u = rec.get("uuid")
        if not after and rec.get("type") == "system" and rec.get("subtype") == "compact_boundary":
            after = True
        elif after and rec.get("type") in ("user", "assistant", "attachment", "system", "progress"):
            p = rec.get("parentUuid")
            if isinstance(p, str) and p not in seen and rec.get("isSidechain") is not True:
                return False
        if isinstance(u, str):
            seen.add(u)
    return True


#: No line shorter than this can hold an image past the API's limit (base64: 4 bytes per 3).
_BIG_IMAGE_LINE = MAX_IMAGE_BYTES * 4 // 3


def _big_image(chain: list[Entry]) -> bool:
    return any(
        len(e.raw) > _BIG_IMAGE_LINE
        and b'"type":"image"' in e.raw
        and facts_of(e.record, len(e.raw)).big_images
        for e in chain
    )


def _crlf(data: mmap.mmap, start: int) -> bool:
    # A one-byte search is a memchr, ten times the speed of the two-byte one; a CR can only
    # be a terminator or damage (JSON strings escape it), so it is almost never there.
    return data.find(b"\r", start) >= 0 and data.find(b"\r\n", start) >= 0


def load_for_resume(path: Path, *, max_bytes: int = MAX_TRANSCRIPT_READ_BYTES) -> ForResume:
    """What a resume of ``path`` sends and where it continues (see the module docstring).
    A session the model ended is refused (`errors.ConversationEnded`), as Claude Code
    2.1.332 refuses it (`conversation.ended_by_model`)."""
    with mapped(path) as mm:
        size = 0 if mm is None else len(mm)
        start = 0 if mm is None else _start(mm)
        if mm is not None:
            # The whole file, not only the part a resume reads: Claude Code keeps the record
            # wherever it is ("last-wins", not cleared by a boundary), and `tt compact` may
            # append a boundary after it.
            line = _ended_at(mm, session_id_from_name(path.name))
            if line is not None:
                raise ConversationEnded(
                    f"{path}: {conversation.ENDED_MESSAGE}",
                    hint=f"the model ended it (line {line}: an ended-by-model record); Claude Code 2.1.332 "
                    "refuses to continue it too",
                )
        if start and size - start > max_bytes:
            start = 0  # the part does not fit either: refused below
        if start == 0 and size > max_bytes:
            raise TranscriptTooLarge(str(path), size, max_bytes)
        with _no_gc():
            fast = None if mm is None else _fast(mm, start, size, max_bytes)
    if fast is not None:
        return fast
    # The mapping is gone by now: the reference path streams the file itself.
    with _no_gc():
        return _reference(path, start, size, max_bytes)


def _ended_at(data: mmap.mmap, session_id: str | None) -> int | None:
    """The line of a record that ends the session (`conversation.ended_by_model`), or None.
    A byte search for the type finds the candidates (the text of a message can name it
    too), each line decoded to judge it: one pass at memory speed (13 ms for 50 MB)."""
    needle = b'"' + conversation.ENDED_BY_MODEL.encode() + b'"'
    at = data.find(needle)
    while at >= 0:
        begin = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        try:
            rec = orjson.loads(data[begin:end])
        except orjson.JSONDecodeError:
            rec = None
        if conversation.ended_by_model(rec, session_id):
            return data[:begin].count(b"\n") + 1
        at = data.find(needle, end)
    return None


def _fast(data: mmap.mmap, start: int, size: int, max_bytes: int) -> ForResume | None:
    # One streaming pass: each line is decoded once, only the conversation's entries are
    # kept (`quickchain`), then the messages are built from those alone.
    if _crlf(data, start):
        return None
    try:
        q, torn = _scan(data, start)
    except Outside:
        # A rewind into the history before the boundary: the whole file gives the chain
        # Claude Code would follow; past the cap, the reference path reads the part anyway.
        if size > max_bytes or _crlf(data, 0):
            return None
        start = 0
        q, torn = _scan(data, 0)
    if q is None:
        return None
    nodes = q.nodes
    leaf = conversation.continuation_leaf(
        q.chain,
        q.parent,
        lambda i: nodes[i].record["uuid"],
        lambda i: nodes[i].record.get("type") in ("user", "assistant"),
        q.index.get,
    )
    conv = conversation.assemble(q.chain, leaf, q.session_id)
    if any(n.code == "split-message" for n in conv.notes) or _big_image(q.chain):
        return None  # what only `repair` mends (regroup-split-message, shrink-image)
    mended = [f"left out the torn last line ({torn} bytes), as `tt repair` cuts it"] if torn else []
    return ForResume(conv, [], start, size, fast=True, mended=mended)


def _reference(path: Path, start: int, size: int, max_bytes: int) -> ForResume:
    lines: list[DecodedLine] = list(iter_lines(path, start))
    if start and size <= max_bytes and not _self_contained([e for ln in lines for e in ln.entries]):
        # Past the cap the part is all there is to read (as `reader.load` does); under
        # it, the whole file gives the chain Claude Code would follow.
        start = 0
        lines = list(iter_lines(path))
    from ..edge.writer import iso_now
    from ..repair.core import RepairOptions, repaired_entries

    entries, actions = repaired_entries(
        lines, RepairOptions(), now=iso_now(), new_id=lambda: str(_uuid.uuid4())
    )
    s = Session.from_entries(entries, path)
    on_disk = {e.record["uuid"] for ln in lines for e in ln.entries if isinstance(e.record.get("uuid"), str)}
    return ForResume(
        conversation.build(s, on_disk=on_disk), list(actions), start, size, fast=False, session=s
    )
