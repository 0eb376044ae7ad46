"""The CPU side of storing lines: parse, split into skeleton and blobs, compress (pure).

`prepare_lines` turns a file's lines into rows ready for `engine.Store.insert_prepared`; it
can run before a write lock is taken, or in another process. The one question it asks of
the store, which blobs it holds already, comes in as ``known``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from . import layers, records


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


def prepare_lines(
    lines: Iterable[bytes], *, seq: int, offset: int, known: Callable[[Iterable[str]], set[str]]
) -> Prepared:
    """The CPU side of storing lines (parse, split, compress): pure but for ``known``, which
    says which blob hashes need not be encoded again."""
    rows: list[tuple[Any, ...]] = []
    texts: list[str | None] = []
    pieces: dict[str, bytes] = {}
    for raw in lines:
        f, parsed = records.facts_parsed(raw)
        lay = layers.split(raw, json=parsed)
        pieces.update(lay.blobs)
        codec, payload = layers.encode_skeleton(lay.skeleton)
        rows.append(
            (
                seq,
                offset,
                1 if raw.endswith(b"\n") else 0,
                f.type,
                f.uuid,
                f.parent_uuid,
                f.timestamp,
                codec,
                payload,
                layers.encode_refs(lay.refs),
            )
        )
        texts.append(clean_text(f.text) if f.text else None)
        seq += 1
        offset += len(raw)
    have = known(pieces) if pieces else set()
    blobs = {}
    for h, piece in pieces.items():
        if h not in have:
            codec, payload = layers.encode_blob(piece)
            blobs[h] = (codec, payload, len(piece))
    return Prepared(rows, texts, blobs, {h: pieces[h] for h in have}, seq, offset)


def clean_text(text: str) -> str:
    # PostgreSQL text cannot hold NUL; the index does not need it on either engine.
    return text.replace("\x00", " ")
