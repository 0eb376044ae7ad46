"""The disk side of `tt stats`: stream a session's files into `stats.Collector`.

Invariants:
- Streams every file (any size, bounded memory: the collector keeps one small record per
  API call and tool call, never the lines).
- Damage never raises: unreadable pieces of lines are reported as `stats.SkippedLine`s
  and the rest of the file is counted.
- Same numbers on every path: a line orjson reads as one object goes straight to the
  collector (the fast path: no `Entry` built); any other line goes through
  `lines.decode_line`, as every reader of tt does, so what is counted and what is skipped
  does not depend on the path taken, nor on how many processes read.
- Many sessions are read by `PARALLEL_FROM` on in several processes, one session per
  job; their statistics are combined in the order of ``paths`` (`stats.combine`), so the
  result is the one a single process gives.

Measured (`benchmarks/bench_stats.py`, issue 18 item 16; cProfile first): on the 1.3 GB
`tt ls` bench set one process spends ~0.5 s iterating lines, ~1.4 s in `orjson.loads`
and ~1.1 s in the collector. Every line is decoded because the user lines (two thirds of
the bytes) carry the turns, the tool errors and the time span. A byte prefilter that
spared orjson the tool-result lines (proving from the bytes alone that a line is a
user tool result with no error and one timestamp) was tried and was slower: its four or
five searches through each large line cost more than orjson's one decoding pass.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from ..edge.reader import _open, split_terminator
from ..model.errors import Unreadable
from ..model.lines import decode_line
from ..model.session import session_id_from_name
from .files import LegacyAgents, agent_files
from .stats import Collector, Stats, combine


def session_stats(
    path: Path, *, subagents: bool = True, agents: Callable[[Path], list[Path]] = agent_files
) -> Stats:
    """Statistics of one session: its main file and (by default) its subagent files."""
    c = Collector(session_id_from_name(path.name) or path.name)
    c.feed_records(_records(path, c))
    if subagents:
        for sub in agents(path):
            c.feed_records(_records(sub, c), subagent=True)
    return c.stats()


#: From how many sessions `many_stats` spreads them over processes (starting a worker
#: costs ~30 ms; a session ~2 ms on the `tt ls` bench set).
PARALLEL_FROM = 200


def sessions_in(dirs: list[Path]) -> list[Path]:
    """The session files of the project folders ``dirs``, oldest first (by mtime);
    `NotFound` when there are none."""
    from ..edge import claude_dir as store
    from ..model.errors import NotFound

    paths = [p for d in dirs for p in store.session_files(d)]
    if not paths:
        raise NotFound("no sessions in " + ", ".join(str(d) for d in dirs))
    return sorted(paths, key=lambda p: p.stat().st_mtime)


def many_stats(
    paths: Iterable[Path], *, subagents: bool = True, workers: int | None = None
) -> tuple[list[Stats], Stats]:
    """Each session's statistics and their total (calls shared by files counted once).

    ``workers``: processes to read with; by default one per CPU (up to 4) from
    `PARALLEL_FROM` sessions on, else this process (decoding JSON holds the GIL, so
    threads would not help)."""
    paths = list(paths)
    if workers is None:
        workers = min(os.cpu_count() or 1, 4) if len(paths) >= PARALLEL_FROM else 1
    if workers <= 1:
        agents = LegacyAgents()
        each = [session_stats(p, subagents=subagents, agents=agents) for p in paths]
    else:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=workers) as pool:
            each = list(
                pool.map(
                    partial(_job, subagents=subagents), paths, chunksize=max(1, len(paths) // (workers * 8))
                )
            )
    return each, combine(each)


_AGENTS: LegacyAgents | None = None


def _job(path: Path, *, subagents: bool) -> Stats:
    global _AGENTS  # one per worker process: a project's legacy agent files read once
    if _AGENTS is None:
        _AGENTS = LegacyAgents()
    return session_stats(path, subagents=subagents, agents=_AGENTS)


def _records(path: Path, c: Collector) -> Iterator[dict[str, Any]]:
    # reader.iter_raw, flattened: orjson takes the line with its terminator (trailing
    # whitespace is allowed JSON), so a clean line costs one `loads`; only the others are
    # split and decoded as every reader does. A line without terminator can only be the
    # last, which is all `is_last` tells `decode_line`.
    loads, bad = orjson.loads, orjson.JSONDecodeError
    number = offset = 0
    with _open(path) as f:
        try:
            for chunk in f:
                number += 1
                try:
                    rec = loads(chunk)
                except bad:
                    rec = None
                if type(rec) is dict:
                    yield rec
                else:
                    data, term = split_terminator(chunk)
                    ln = decode_line(number, offset, data, term, is_last=not term)
                    for p in ln.pieces:
                        if p.code != "blank-line":
                            c.skipped(str(path), number, p.code)
                    for e in ln.entries:
                        yield e.record
                offset += len(chunk)
        except OSError as e:
            raise Unreadable(f"{path}: read failed at byte {offset} ({e.strerror})") from e
