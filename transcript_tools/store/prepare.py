"""The CPU side of storing lines: parse, split into skeleton and blobs, compress (pure).

`parse_lines` cuts a file's bytes into physical lines exactly as `reader.iter_raw` reads a
file (``\\n`` ends a line; a ``\\r`` before it is part of the terminator; the last line, torn
or not, is ``is_last``) and decodes each once: the same tuples `validate.core.Validator`'s
`feed_parsed` takes, so a push checks the lines it stores without parsing them again.
`Preparer` turns lines into rows ready for `engine.Store.insert_prepared`; it can run before
a write lock is taken, or in another process. The one question it asks of the store, which
blobs it holds already, comes in as ``known``.

Invariants: pure; the bytes of a line's row (skeleton and blobs) are the line with its
terminator, exactly; a line is a JSON record for the store (columns, search text) when it
starts with ``{`` and parses, as `records.facts_parsed` decides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from . import layers, records

#: ``(number, offset, data, terminator, is_last, rec)``: `reader.iter_raw`'s tuple and what
#: ``orjson.loads(data)`` returned (None where it raised).
Parsed = tuple[int, int, bytes, bytes, bool, Any]


def raw_lines(data: bytes, start: int = 0) -> Iterator[tuple[int, int, bytes, bytes, bool]]:
    """`reader.iter_raw` over bytes in memory: the same tuples for the same bytes (numbers
    from 1 at ``start``, offsets from the start of ``data``)."""
    pieces = (data[start:] if start else data).split(b"\n")
    tail = pieces.pop()
    last = len(pieces) - (0 if tail else 1)
    offset = start
    for i, p in enumerate(pieces):
        n = len(p) + 1
        if p[-1:] == b"\r":
            yield i + 1, offset, p[:-1], b"\r\n", i == last
        else:
            yield i + 1, offset, p, b"\n", i == last
        offset += n
    if tail:
        yield len(pieces) + 1, offset, tail, b"", True


def parse_lines(data: bytes, start: int = 0) -> Iterator[Parsed]:
    """`raw_lines` with each line decoded once (``rec``: None where orjson refused it)."""
    loads = orjson.loads
    error = orjson.JSONDecodeError
    for number, offset, body, term, last in raw_lines(data, start):
        try:
            rec = loads(body)
        except error:
            rec = None
        yield number, offset, body, term, last, rec


@dataclass(frozen=True, slots=True)
class Prepared:
    """Lines ready to insert: rows ``(seq, offset, complete, type, uuid, parent, ts, codec,
    skeleton, refs)``, their search texts, new blobs encoded, and the blobs the store was
    seen to hold (kept raw: `Store.insert_prepared` stores them if they went meanwhile)."""

    rows: list[tuple[Any, ...]]
    texts: list[str | None]
    blobs: dict[str, tuple[str, bytes, int]]
    maybe_known: dict[str, bytes]
    end_seq: int
    end_offset: int


class Preparer:
    """Rows for lines given one at a time (`add`), in file order from ``seq`` at byte
    ``offset``; `done` encodes the blobs the store does not hold."""

    def __init__(self, *, seq: int, offset: int) -> None:
        self.seq = seq
        self.offset = offset
        self.rows: list[tuple[Any, ...]] = []
        self.texts: list[str | None] = []
        self.pieces: dict[str, bytes] = {}

    def add(self, body: bytes, term: bytes, rec: Any) -> None:
        """One line: its bytes without and with its terminator, and its decoded record
        (anything but a dict where the line is not one)."""
        raw = body + term
        if type(rec) is dict and body[:1] == b"{":
            f = records.facts_of(rec)
            lay = layers.split(raw, json=True)
        else:
            f = records.NO_FACTS
            lay = layers.split(raw)
        if lay.blobs:
            self.pieces.update(lay.blobs)
        codec, payload = layers.encode_skeleton(lay.skeleton)
        self.rows.append(
            (
                self.seq,
                self.offset,
                1 if term else 0,
                f.type,
                f.uuid,
                f.parent_uuid,
                f.timestamp,
                codec,
                payload,
                layers.encode_refs(lay.refs),
            )
        )
        self.texts.append(clean_text(f.text) if f.text else None)
        self.seq += 1
        self.offset += len(raw)

    def done(self, known: Callable[[Iterable[str]], set[str]]) -> Prepared:
        """``known``: which of the blob hashes the store (or an earlier job) holds already."""
        pieces = self.pieces
        have = known(pieces) if pieces else set()
        blobs = {}
        for h, piece in pieces.items():
            if h not in have:
                codec, payload = layers.encode_blob(piece)
                blobs[h] = (codec, payload, len(piece))
        return Prepared(self.rows, self.texts, blobs, {h: pieces[h] for h in have}, self.seq, self.offset)


def prepare_lines(
    lines: Iterable[bytes], *, seq: int, offset: int, known: Callable[[Iterable[str]], set[str]]
) -> Prepared:
    """The CPU side of storing lines, each with its terminator (the last maybe without):
    pure but for ``known``, which says which blob hashes need not be encoded again."""
    p = Preparer(seq=seq, offset=offset)
    loads = orjson.loads
    for raw in lines:
        body, term = (
            (raw[:-2], raw[-2:])
            if raw.endswith(b"\r\n")
            else ((raw[:-1], b"\n") if raw.endswith(b"\n") else (raw, b""))
        )
        rec = None
        if body[:1] == b"{":
            try:
                rec = loads(body)
            except orjson.JSONDecodeError:
                rec = None
        p.add(body, term, rec)
    return p.done(known)


def clean_text(text: str) -> str:
    # PostgreSQL text cannot hold NUL; the index does not need it on either engine.
    return text.replace("\x00", " ")
