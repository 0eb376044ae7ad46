"""Reading a transcript for compaction: the outline pass, and records read back by position.

- `outline` streams a file once into a `skeleton.Skeleton` (the uuid graph and a few
  bytes a node), noting damaged pieces of lines and skipping them.
- `FileSource` reads back a node's record by its byte offset (``os.pread``) and streams
  the file again for a set of nodes (`FileSource.scan`), decoding only the lines that
  hold one of them; the usual line (one record, the whole line) takes a fast path.
- `memory_outline` / `MemorySource`: the same over entries already in memory, read
  through the repair fixes (`loader.load_session`), for damaged files within the cap.

Invariants: never writes; memory does not grow with what records hold (only the
outline's per-node bytes); OSError is translated into `errors` classes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from ..edge.reader import file_size, iter_lines, iter_raw
from ..model.errors import NotFound
from ..model.lines import Entry, decode_line
from .skeleton import Skeleton

#: Progress callback: (stage, bytes done, bytes in all).
Progress = Callable[[str, int, int], None]


class FileSource:
    """Records of a file read back by position (the streaming path)."""

    def __init__(self, path: Path, sk: Skeleton) -> None:
        self.path = path
        self.sk = sk
        try:
            self._fd = os.open(path, os.O_RDONLY)
        except OSError as e:
            raise NotFound(f"{path}: cannot open ({e.strerror})") from e

    def close(self) -> None:
        os.close(self._fd)

    def entry(self, i: int) -> Entry:
        sk = self.sk
        off, n, line = sk.offset[i], sk.length[i], sk.index.line[i]
        raw = os.pread(self._fd, n, off)
        return decode(raw, line, off)

    def scan(self, want: bytearray, progress: Progress | None = None) -> Iterator[tuple[int, Entry]]:
        """(node, entry) for every node with ``want[node]``, in file order, decoding only
        the lines that hold one."""
        sk = self.sk
        offsets, lengths, lines = sk.offset, sk.length, sk.index.line
        n = len(sk)
        j = 0
        total = file_size(self.path) if progress is not None else 0
        end = 0
        for number, offset, data, term, last in iter_raw(self.path):
            end = offset + len(data)
            if progress is not None and number % 4096 == 0:
                progress("digest", offset, total)
            if j >= n:
                break
            if offsets[j] >= end:
                continue
            k = j + 1
            while k < n and offsets[k] < end:
                k += 1
            if k == j + 1:
                # The usual line: one record, the whole line.
                if want[j]:
                    if offsets[j] == offset and lengths[j] == len(data):
                        yield j, decode(data, lines[j], offset)
                    else:
                        got = [
                            e
                            for e in decode_line(number, offset, data, term, is_last=last).entries
                            if e.offset == offsets[j]
                        ]
                        if got:
                            yield j, got[0]
            elif any(want[q] for q in range(j, k)):
                by_offset = {
                    e.offset: e for e in decode_line(number, offset, data, term, is_last=last).entries
                }
                for q in range(j, k):
                    if want[q]:
                        e = by_offset.get(offsets[q])
                        if e is not None:
                            yield q, e
            j = k
        if progress is not None:
            progress("digest", end, total)


class MemorySource:
    """Entries already in memory (the repaired path)."""

    def __init__(self, nodes: list[Entry], sk: Skeleton) -> None:
        self.nodes = nodes
        self.sk = sk

    def close(self) -> None:
        pass

    def entry(self, i: int) -> Entry:
        return self.nodes[i]

    def scan(self, want: bytearray, progress: Progress | None = None) -> Iterator[tuple[int, Entry]]:
        for i, e in enumerate(self.nodes):
            if want[i]:
                yield i, e


def decode(raw: bytes, line: int, offset: int) -> Entry:
    try:
        rec = orjson.loads(raw)
    except orjson.JSONDecodeError:
        rec = None
    if isinstance(rec, dict):
        return Entry(line, offset, raw, rec)
    got = decode_line(line, offset, raw, b"\n", is_last=False).entries
    if not got:
        raise NotFound(f"line {line}: the record at byte {offset} is gone (did the file change?)")
    return got[0]


def outline(path: Path, progress: Progress | None = None) -> Skeleton:
    """Pass 1 over a file (see module docstring)."""
    sk = Skeleton()
    total = file_size(path)
    for ln in iter_lines(path):
        sk.feed_line(ln)
        if progress is not None and ln.line % 4096 == 0:
            progress("outline", ln.offset, total)
    sk.finish()
    if progress is not None:
        progress("outline", total, total)
    return sk


def memory_outline(path: Path, max_bytes: int, result: Any) -> tuple[Skeleton, list[Entry]]:
    from ..edge.loader import load_session

    loaded = load_session(path, max_bytes=max_bytes)
    sk = Skeleton()
    nodes: list[Entry] = []
    for e in loaded.session.entries:
        if sk.feed(e) >= 0:
            nodes.append(e)
    sk.finish()
    result.repaired = True
    result.repair_actions = [
        f"{getattr(a, 'fix', '?')}: {getattr(a, 'detail', '')}".strip(": ") for a in loaded.actions
    ][:50]
    return sk, nodes
