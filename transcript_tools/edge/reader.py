"""Reading transcripts from disk: streaming, and capped in-memory loads.

`iter_lines` streams a file in binary, one physical line at a time, and hands each to
`lines.decode_line`. It holds one line (plus one of look-ahead, to know which line is
the last) whatever the file's size, so validate, repair and compact run in bounded
memory on files of any size.

`load` reads a whole transcript into memory for the commands that need the
conversation at hand (resume, show, fork). It refuses files past
``MAX_TRANSCRIPT_READ_BYTES`` (50 MiB) with `TranscriptTooLarge`, before reading a byte:
Claude Code slows down and has run out of memory on such files, and so would we.
`load(..., from_last_boundary=True)` may instead keep only what follows the last
compact boundary (from the first line of its preserved segment, `preserved_start`:
the part a resume sends), when that part fits.

Invariants:
- Bytes round-trip: the concatenation of every line's ``data + terminator`` is the file.
- OSError is translated here, once, into `NotFound` / `Unreadable`.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..model.errors import NotFound, TranscriptTooLarge, Unreadable
from ..model.lines import MAX_TRANSCRIPT_READ_BYTES, DecodedLine, Entry, decode_line, split_terminator

_BUFFER = 1 << 20


class Buffer(Protocol):
    """Bytes, or a memory mapping of them: what `last_boundary` and `preserved_start` search."""

    def __len__(self) -> int: ...
    def __getitem__(self, key: slice, /) -> bytes: ...
    def find(self, sub: bytes, start: int = ..., end: int = ..., /) -> int: ...
    def rfind(self, sub: bytes, start: int = ..., end: int = ..., /) -> int: ...


def file_size(path: Path) -> int:
    try:
        st = path.stat()
    except FileNotFoundError as e:
        raise NotFound(f"{path}: no such file") from e
    except OSError as e:
        raise Unreadable(f"{path}: cannot read ({e.strerror})") from e
    if path.is_dir():
        raise Unreadable(f"{path}: is a directory, not a transcript file")
    return st.st_size


def _open(path: Path, buffering: int = _BUFFER):
    try:
        return open(path, "rb", buffering=buffering)
    except FileNotFoundError as e:
        raise NotFound(f"{path}: no such file") from e
    except IsADirectoryError as e:
        raise Unreadable(f"{path}: is a directory, not a transcript file") from e
    except OSError as e:
        raise Unreadable(f"{path}: cannot read ({e.strerror})") from e


@contextmanager
def lines_of(path: Path) -> Iterator[Any]:
    """The file open for reading its physical lines, terminators included (iterating it
    gives them: the chunks `validate.core.Validator.feed_chunks` takes), with a 1 MiB
    buffer; a read that fails while the block runs is `Unreadable`, as in `iter_raw`."""
    with _open(path) as f:
        try:
            yield f
        except OSError as e:
            try:
                at = f" near byte {f.tell()}"
            except (OSError, ValueError):
                at = ""
            raise Unreadable(f"{path}: read failed{at} ({e.strerror})") from e


def iter_raw(path: Path, start: int = 0) -> Iterator[tuple[int, int, bytes, bytes, bool]]:
    """Yield ``(line_number, offset, data, terminator, is_last)`` for each physical line.

    The hot loop of validate/repair/compact: kept flat on purpose (local names, the
    terminator split inline) since it runs once per line of multi-gigabyte files.
    Line numbers start at 1 at ``start``.
    """
    with _open(path) as f:
        if start:
            f.seek(start)
        offset = start
        number = 0
        prev: bytes | None = None
        try:
            for chunk in f:
                if prev is not None:
                    number += 1
                    if prev[-2:] == b"\r\n":
                        yield number, offset, prev[:-2], b"\r\n", False
                    else:
                        yield number, offset, prev[:-1], b"\n", False
                    offset += len(prev)
                prev = chunk
        except OSError as e:
            raise Unreadable(f"{path}: read failed at byte {offset} ({e.strerror})") from e
        if prev is not None:
            data, term = split_terminator(prev)
            yield number + 1, offset, data, term, True


def iter_lines(path: Path, start: int = 0) -> Iterator[DecodedLine]:
    """Stream decoded lines. Any size, bounded memory."""
    decode = decode_line
    for number, offset, data, term, last in iter_raw(path, start):
        yield decode(number, offset, data, term, is_last=last)


@dataclass(slots=True)
class Transcript:
    """A transcript in memory: its decoded lines, in file order."""

    path: Path
    size: int
    lines: list[DecodedLine] = field(default_factory=list)
    #: Byte offset where reading began (non-zero when only the part after the last
    #: compact boundary was loaded).
    start: int = 0

    @property
    def entries(self) -> list[Entry]:
        return [e for ln in self.lines for e in ln.entries]


def load(
    path: Path | str, *, max_bytes: int = MAX_TRANSCRIPT_READ_BYTES, from_last_boundary: bool = False
) -> Transcript:
    """Read a whole transcript into memory, refusing files past ``max_bytes`` (``path``: a
    `Path` or a string).

    With ``from_last_boundary``, a file past the cap is loaded from its last compact
    boundary on when that part fits (what a resume needs); otherwise it is refused.
    """
    path = Path(path)
    size = file_size(path)
    start: int | None  # None: no boundary to read from (then refused)
    start = 0
    if size > max_bytes:
        if not from_last_boundary:
            raise TranscriptTooLarge(str(path), size, max_bytes)
        part = _boundary_start(path)
        if part is None or size - part > max_bytes:
            raise TranscriptTooLarge(str(path), size if part is None else size - part, max_bytes)
        start = part
    t = Transcript(path, size, start=start)
    t.lines.extend(iter_lines(path, start))
    return t


_BOUNDARY_MARK = b'"subtype":"compact_boundary"'


def find_last_boundary_offset(path: Path) -> int | None:
    """Byte offset of the line holding the last ``compact_boundary`` record (`last_boundary`)."""
    with mapped(path) as mm:
        found = None if mm is None else last_boundary(mm)
    return None if found is None else found[0]


def last_boundary(buf: Buffer) -> tuple[int, dict[str, Any]] | None:
    """The last ``compact_boundary`` record of a file's bytes and the offset of its line.

    Searched from the end for the raw marker (Claude Code writes compact JSON, so
    ``"subtype":"compact_boundary"`` appears verbatim; inside a string value its quotes
    would be escaped); each candidate line is confirmed by decoding it as `iter_lines`
    would (`decode_line`, so a damaged line's records count too), else the search goes on
    further back. Only the pages around the candidates are read.
    """
    end = len(buf)
    while True:
        pos = buf.rfind(_BOUNDARY_MARK, 0, end)
        if pos < 0:
            return None
        start = buf.rfind(b"\n", 0, pos) + 1
        stop = buf.find(b"\n", pos)
        last = stop < 0
        data, term = split_terminator(buf[start:] if last else buf[start : stop + 1])
        # The line number only matters to a BOM, which only line 1 may carry.
        line = decode_line(1 if start == 0 else 0, start, data, term, is_last=last)
        found = [e for e in line.entries if e.is_compact_boundary]
        if found:
            return start, found[-1].record
        end = start  # the marker inside some other record, or no record: look further back


def _boundary_start(path: Path) -> int | None:
    """`preserved_start` of the last boundary, or None when there is none."""
    with mapped(path) as mm:
        found = None if mm is None else last_boundary(mm)
        return None if mm is None or found is None else preserved_start(mm, *found)


def preserved_start(buf: Buffer, boundary_offset: int, boundary: Mapping[str, Any]) -> int:
    """Where the part after a compact boundary begins: the first line of the messages
    its ``compactMetadata`` kept verbatim (the preserved segment, written before the
    boundary; docs/format.md §11), or the boundary's own line (``boundary_offset``).

    ``buf`` is the file's bytes (or a mapping of them); the segment's entries are found
    by a raw search for ``"uuid":"<id>"`` (Claude Code writes compact JSON) before the
    boundary.
    """
    md = boundary.get("compactMetadata")
    kept: list[str] = []
    if isinstance(md, dict):
        seg = md.get("preservedSegment")
        if isinstance(seg, dict):
            # Not the anchor: it is spliced after only when on the chain from the boundary,
            # so it is never needed from before it (2.1.332 writes it after the boundary,
            # and searching the whole history for it would read the whole file).
            kept += [seg[k] for k in ("headUuid", "tailUuid") if isinstance(seg.get(k), str)]
        pm = md.get("preservedMessages")
        if isinstance(pm, dict) and isinstance(pm.get("uuids"), list):
            kept += [u for u in pm["uuids"] if isinstance(u, str)]
    first = boundary_offset
    for u in kept:
        p = buf.rfind(b'"uuid":"' + u.encode("utf-8", "replace") + b'"', 0, boundary_offset)
        if p >= 0:
            first = min(first, buf.rfind(b"\n", 0, p) + 1)
    return first


@contextmanager
def mapped(path: Path) -> Iterator[mmap.mmap | None]:
    """``path`` mapped into memory, read-only (None for an empty file): only the pages
    searched or scanned are read, and no line is copied twice (a read() would copy the
    whole file once more).

    Claude Code only ever appends, so the mapped length is a prefix of the file as it
    grows; a file truncated by another process while mapped would fault (SIGBUS), which
    nothing that writes transcripts does (tt itself replaces files by renaming).
    """
    file_size(path)  # a missing file or a directory: its own clear error
    try:
        f = open(path, "rb")  # noqa: SIM115 (a `with` follows; opened apart for its own error message)
    except OSError as e:
        raise Unreadable(f"{path}: cannot read ({e.strerror})") from e
    with f:
        try:
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if os.fstat(f.fileno()).st_size else None
        except ValueError:
            mm = None  # emptied between the size check and the mapping: an empty file
        except OSError as e:
            raise Unreadable(f"{path}: cannot read ({e.strerror})") from e
        if mm is None:
            yield None
            return
        with mm:
            yield mm


def read_head_tail(path: Path, size: int = 64 * 1024) -> tuple[bytes, bytes, os.stat_result]:
    """The first and last ``size`` bytes of a file, as the Agent SDK's lite listing reads."""
    with _open(path) as f:
        try:
            st = os.fstat(f.fileno())
            head = f.read(size)
            if st.st_size > size:
                f.seek(st.st_size - size)
                tail = f.read(size)
            else:
                tail = head
        except OSError as e:
            raise Unreadable(f"{path}: cannot read ({e.strerror})") from e
    return head, tail, st
