"""Layered storage of one transcript line: a skeleton plus content-addressed blobs.

`split` cuts every long JSON string value (at least `BIG` bytes between its quotes) out of a
line's *bytes* and returns the rest (the skeleton) with a reference per cut: the offset in
the skeleton where the cut bytes go back, and the SHA-256 of those bytes. `join` puts them
back. The cut is made on bytes, never on a parsed value, so whatever the line holds (NULs,
``\\u0000`` escapes, invalid UTF-8, a torn record) comes back byte for byte; a line that is
not JSON only shares less.

Blobs are stored once by hash (the same file read in a hundred sessions, the same tool
output in ``message.content`` and ``toolUseResult``) and compressed by `encode_blob`:
zstd level 6, chosen by measurement on fixtures/real (README, "Session store"): on the
875 long strings of the 20 real fixtures (7.5 MB) zstd-3 gave 0.504 in 70 ms, zstd-9
0.487 in 285 ms, zlib-6 0.496 in 412 ms, lzma 0.485 in 4.8 s. Skeletons (every line,
small) use level 3, about twice as fast as 6 for 1% more bytes. A base64 string (an image,
a PDF) is stored decoded when encoding it again gives the very same bytes, which saves a
quarter before compression (images are compressed already).

Invariants: pure (bytes in, bytes out); ``join(split(b)) == b`` for every ``b``;
``decode_blob(*encode_blob(b)) == b``; a blob's hash is the SHA-256 of the exact bytes it
stands for, so equal bytes share a blob whatever codec stored them.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import zstandard

#: A JSON string value at least this long (bytes between its quotes) becomes a blob.
BIG = 1024
#: Skeletons at least this long are compressed (shorter ones gain nothing from zstd).
SKELETON_COMPRESS = 200
ZSTD_LEVEL = 6

# One JSON string literal, the unrolled-loop form (linear time). Scanned left to right from
# the start of a line, outside strings there is no `"`, so each match is one literal.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_B64 = re.compile(rb"^[A-Za-z0-9+/]+={0,2}$")

RAW, ZSTD, B64, B64_ZSTD = "raw", "zstd", "b64", "b64+zstd"


@dataclass(frozen=True, slots=True)
class Layered:
    """A line as stored: ``skeleton`` with ``refs`` ((offset, hash), ascending offsets)."""

    skeleton: bytes
    refs: tuple[tuple[int, str], ...]
    blobs: Mapping[str, bytes]


def digest(data: bytes) -> str:
    # Imported here: only writers hash, and loading OpenSSL cost every reader (`tt search
    # --store`, `tt ls --store`) ~3 ms of start-up.
    import hashlib

    return hashlib.sha256(data).hexdigest()


def split(line: bytes, big: int = BIG, *, json: bool = False) -> Layered:
    """The line's skeleton, refs and blobs. ``json``: a JSON parser accepted the line (the
    store's `records.facts_parsed` says so), so its strings are found with bytes methods,
    not the regex; the cuts are the same (``tests/store/test_layers.py``)."""
    if len(line) < big + 2:
        return Layered(line, (), {})
    if json:
        return _split_json(line, big)
    parts: list[bytes] = []
    refs: list[tuple[int, str]] = []
    blobs: dict[str, bytes] = {}
    pos = 0
    kept = 0
    for m in _STRING.finditer(line):
        a, b = m.start() + 1, m.end() - 1
        if b - a < big:
            continue
        piece = line[a:b]
        h = digest(piece)
        blobs[h] = piece
        parts.append(line[pos:a])
        kept += a - pos
        refs.append((kept, h))
        pos = b
    if not refs:
        return Layered(line, (), {})
    parts.append(line[pos:])
    return Layered(b"".join(parts), tuple(refs), blobs)


def _split_json(line: bytes, big: int) -> Layered:
    # In a JSON text every `"` outside an escape delimits a string and no backslash stands
    # outside a string. Escaped backslashes, then escaped quotes, are masked (left to right,
    # as a parser pairs them; same length), so the strings are the `"[^"]*"` runs of the
    # masked line, and one regex skips the short ones and stops at the next long one inside
    # the engine (`_long_string`: possessive, so it never backtracks), in C: the regex over
    # every literal costs ~6 ns a byte, splitting the masked line at its quotes ~3.7, this
    # ~2.3 (long lines of the `tt ls` bench set; the first push spent more here than anywhere else).
    masked = line.replace(b"\\\\", b"\0\0").replace(b'\\"', b"\0\0") if b"\\" in line else line
    find = _long_string(big).match
    m = find(masked)
    if m is None:
        return Layered(line, (), {})
    parts: list[bytes] = []
    refs: list[tuple[int, str]] = []
    blobs: dict[str, bytes] = {}
    pos = kept = 0
    while m is not None:
        a, b = m.span(1)
        piece = line[a:b]
        h = digest(piece)
        blobs[h] = piece
        parts.append(line[pos:a])
        kept += a - pos
        refs.append((kept, h))
        pos = b
        m = find(masked, b + 1)
    parts.append(line[pos:])
    return Layered(b"".join(parts), tuple(refs), blobs)


@cache
def _long_string(big: int) -> re.Pattern[bytes]:
    """From a position outside any string of a masked JSON text (`_split_json`): the next
    string of at least ``big`` bytes, its bytes as group 1, skipping the shorter ones."""
    return re.compile(rb'(?>[^"]*+(?:"[^"]{0,%d}+"[^"]*+)*+)"([^"]{%d,}+)"' % (big - 1, big))


def join(
    skeleton: bytes, refs: tuple[tuple[int, str], ...] | list[tuple[int, str]], blobs: Mapping[str, bytes]
) -> bytes:
    if not refs:
        return skeleton
    out: list[bytes] = []
    pos = 0
    for off, h in refs:
        out.append(skeleton[pos:off])
        out.append(blobs[h])
        pos = off
    out.append(skeleton[pos:])
    return b"".join(out)


def encode_refs(refs: tuple[tuple[int, str], ...]) -> str | None:
    """``"off:hash,off:hash"`` (None for no refs): text, so both engines store it alike."""
    return ",".join(f"{o}:{h}" for o, h in refs) or None


def decode_refs(text: str | None) -> tuple[tuple[int, str], ...]:
    if not text:
        return ()
    out = []
    for part in text.split(","):
        o, h = part.split(":", 1)
        out.append((int(o), h))
    return tuple(out)


#: Skeletons (every line) at zstd 3: about twice as fast as 6 at a few percent of size.
SKELETON_LEVEL = 3


@cache
def _zstd_codecs() -> tuple[zstandard.ZstdCompressor, zstandard.ZstdCompressor, zstandard.ZstdDecompressor]:
    """(blob compressor, skeleton compressor, decompressor), made at first use: a reader
    that meets no compressed bytes (a search of short lines, `tt ls --store`) never
    imports zstandard (~5 ms of its start-up)."""
    import zstandard

    return (
        zstandard.ZstdCompressor(level=ZSTD_LEVEL),
        zstandard.ZstdCompressor(level=SKELETON_LEVEL),
        zstandard.ZstdDecompressor(),
    )


def _zstd(data: bytes) -> bytes:
    return _zstd_codecs()[0].compress(data)


def encode_blob(data: bytes) -> tuple[str, bytes]:
    """The smallest faithful encoding of ``data``: (codec, payload)."""
    best = (RAW, data)
    if len(data) % 4 == 0 and len(data) >= 64 and _B64.match(data):
        try:
            raw = base64.b64decode(data, validate=True)
        except binascii.Error:
            raw = None
        if raw is not None and base64.b64encode(raw) == data:
            best = (B64, raw)
            z = _zstd(raw)
            if len(z) < len(raw) * 0.95:
                best = (B64_ZSTD, z)
            return best
    z = _zstd(data)
    if len(z) < len(data):
        best = (ZSTD, z)
    return best


def encode_skeleton(data: bytes) -> tuple[str, bytes]:
    if len(data) < SKELETON_COMPRESS:
        return RAW, data
    z = _zstd_codecs()[1].compress(data)
    return (ZSTD, z) if len(z) < len(data) else (RAW, data)


class Damaged(ValueError):
    """Stored bytes that cannot be decoded (a payload its codec refuses, an unknown codec):
    the store was damaged after it was written."""


def decode_blob(codec: str, payload: bytes) -> bytes:
    """`encode_blob`'s inverse; `Damaged` when the payload cannot be decoded."""
    if codec == RAW:
        return bytes(payload)
    if codec not in (ZSTD, B64, B64_ZSTD):
        raise Damaged(f"unknown codec {codec!r}")
    if codec == B64:
        return base64.b64encode(payload)
    decompressor = _zstd_codecs()[2]
    import zstandard  # (imported by `_zstd_codecs` already: its error class)

    try:
        raw = decompressor.decompress(payload)
    except zstandard.ZstdError as e:
        raise Damaged(f"{codec} payload: {e}") from e
    return base64.b64encode(raw) if codec == B64_ZSTD else raw
