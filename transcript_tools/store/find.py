"""`tt search --store URL`: the search of `catalog.files.search_files`, answered by a store's index.

The engine's full-text index (FTS5 / ``tsvector``) finds the stored lines holding every word
of the pattern; each is then read back and matched exactly as `tt search` matches a file
(`search.record_hits`: the same texts, the same case rules), so a hit here is a hit there.
What the index cannot find: a pattern that is part of a word (``ADM`` in ``README``), and
regular expressions — the CLI refuses ``--regex`` with ``--store``.

Sessions come newest pushed first, as `SessionHits` (``path`` is ``<project>/<id>.jsonl``
inside the store, a name, not a file; the title is the one `tt ls --store` shows, from the
lite parse kept with the version); the current version of each stream is searched.
`tt store search` is this search too (its CLI calls `tt search --store`'s).

Invariants: reads the store only; a line that is not a JSON object is never a hit.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

import orjson

from ..catalog.search import Hit, Matcher, SessionHits, record_hits
from .model import LEGACY_AGENT, StreamInfo, StreamKey, Version

if TYPE_CHECKING:  # imported where used: `tt search --store` starts without the listing's code
    from ..catalog.listing import Lite, Row
    from .engine import Store

#: Lines asked of the index at most (the CLI's --limit cuts sessions after).
MAX_LINES = 20_000


def search_store(
    store: Store,
    pattern: str,
    matcher: Matcher,
    *,
    per_session: int = 5,
    subagents: bool = True,
    sessions: int | None = None,
) -> Iterator[SessionHits]:
    """The sessions holding ``pattern``, newest pushed first, each with its hits.

    ``sessions``: how many the caller will take at most (`tt search -n`): then each
    session is placed from the index's line ids as it is reached (`_placed`), and a common
    word costs what its first sessions cost, not a join of every line that holds it
    (``the`` on the bench set: 7 ms against 46 ms for ten sessions). Without it one join
    places every line at once, cheaper for all of them. Both give the same sessions in the
    same order with the same hits
    (tests/store/test_sessionstore.py::test_both_placements_give_the_same_sessions_in_the_same_order)."""
    # A session's lines are read back and matched when the caller asks for that session,
    # so `tt search -n 10` reads ten sessions' lines, not the 20,000 the index may name
    # (each line read by its version, which a later push never changes).
    with store.read() as cur:
        grouped = (
            _placed(store, cur, pattern, subagents)
            if sessions is not None
            else _joined(store, cur, pattern, subagents)
        )
        for sk, session_rows in grouped:
            found: list[tuple[str, str | None, Hit]] = []
            for stream_id, subpath, version, seq in session_rows:
                try:
                    rec = orjson.loads(store.line_at(cur, stream_id, version, seq))
                except orjson.JSONDecodeError:
                    continue
                if not isinstance(rec, dict):
                    continue
                agent = subpath.rsplit("/", 1)[-1] if subpath else None
                found.extend((subpath, agent, hit) for hit in record_hits(rec, seq + 1, matcher))
            hits = sorted(
                found, key=lambda x: (x[0], x[2].line)
            )  # main file first, in file order, as tt search
            if hits:
                # The main stream's row, for the time and the title `tt search` shows of a file
                # (the lite parse kept with the version): asked of the sessions printed only.
                main = store.stream(cur, StreamKey(*sk))
                title = mtime = None
                if main is not None:
                    mtime = main.mtime_ms
                    lite = store.lite_of(cur, main.id, main.current_version)
                    title = json.loads(lite).get("title") if lite else None
                sh = SessionHits(PurePath(sk[0]) / f"{sk[1]}.jsonl", title, mtime or 0)
                sh.hits = [(agent, hit) for _, agent, hit in hits[:per_session]]
                sh.more = max(0, len(hits) - per_session)
                yield sh


#: One session's matching lines: ``(stream_id, subpath, version, seq)``.
Rows = list[tuple[int, str, int, int]]


def _joined(store: Store, cur: Any, pattern: str, subagents: bool) -> Iterator[tuple[tuple[str, str], Rows]]:
    """Sessions in the order their newest matching line was pushed, every line placed by
    one join (current versions only)."""
    order: list[tuple[str, str]] = []
    rows: dict[tuple[str, str], Rows] = {}
    for stream_id, pk, sid, subpath, version, seq, _uuid in store.search_rows(cur, pattern, limit=MAX_LINES):
        if subpath and not subagents:
            continue
        sk = (pk, sid)
        if sk not in rows:
            rows[sk] = []
            order.append(sk)
        rows[sk].append((stream_id, subpath, version, seq))
    for sk in order:
        yield sk, rows[sk]


def _placed(store: Store, cur: Any, pattern: str, subagents: bool) -> Iterator[tuple[tuple[str, str], Rows]]:
    """`_joined`'s sessions, each placed when reached: the first line id not yet placed
    names its stream; a line of an older version (or of a subagent left out) retires that
    version's ids; else the session's streams are read (their line ids, from the unique
    index) and their matching lines are the session's rows."""
    ids = store.search_ids(cur, pattern, limit=MAX_LINES)
    found = set(ids)
    placed: set[int] = set()
    for line_id in ids:
        if line_id in placed:
            continue
        home = store.line_home(cur, line_id)
        if home is None:
            continue
        stream_id, pk, sid, subpath, version, current = home
        if version != current or (subpath and not subagents):
            placed.update(i for i, _ in store.line_seqs(cur, stream_id, version))
            continue
        rows: Rows = []
        for s in store.list_streams(cur, pk, sid):
            if s.key.subpath and not subagents:
                continue
            for i, seq in store.line_seqs(cur, s.id, s.current_version):
                if i in found:
                    placed.add(i)
                    rows.append((s.id, s.key.subpath, s.current_version, seq))
        yield (pk, sid), rows


#: What the lite listing reads of each end of a file (`reader.read_head_tail`).
HEAD_TAIL = 64 * 1024


def store_rows(store: Store, project_key: str | None = None) -> list[Row]:
    """`tt ls` rows for the stored sessions (current versions), from the same first and last
    64 KiB `tt ls` reads of a file, rebuilt from the stored lines: the same titles, counts
    and hidden flags as the files would give, dated by their last activity (`activity_ms`),
    so `listing.sort_rows` orders them as `tt ls` orders the files. ``path`` is
    ``<project>/<id>.jsonl``."""
    from ..catalog.listing import Row, parse_lite

    rows: list[Row] = []
    with store.read() as cur:
        streams = store.list_streams(cur, project_key)
        # 2.0.x subagent files are side files beside the session, not streams.
        subs = store.count_files(cur, f"{LEGACY_AGENT}/agent-")
        for s in streams:
            if s.key.subpath.startswith("subagents/"):
                k = (s.key.project_key, s.key.session_id)
                subs[k] = subs.get(k, 0) + 1
        for s in streams:
            if s.key.subpath:
                continue
            v = store.version(cur, s.id, s.current_version)
            if v is None:
                continue
            size = v.nbytes
            cached = store.lite_of(cur, s.id, v.version)
            if cached is not None:
                lite = lite_from_json(cached)
            else:  # mirrored by the Agent SDK: rebuilt from the stored lines' two ends
                head = store.byte_range(cur, s.id, v.version, 0, min(size, HEAD_TAIL))
                tail = (
                    head
                    if size <= HEAD_TAIL
                    else store.byte_range(cur, s.id, v.version, size - HEAD_TAIL, size)
                )
                lite = parse_lite(s.key.session_id, head, tail, size)
            n = subs.get((s.key.project_key, s.key.session_id), 0)
            rows.append(
                Row(
                    f"{s.key.project_key}/{s.key.session_id}.jsonl",
                    s.key.project_key,
                    activity_ms(s, v),
                    size,
                    lite,
                    n,
                    lite.counts,
                    skipped=lite.skipped,
                )
            )
    return rows


def activity_ms(s: StreamInfo, v: Version | None) -> int:
    """When the session was last active, as `tt ls` dates a file: the file's mtime when its
    current version was last pushed (kept with the version); a session the Agent SDK mirrors
    has no file, and its last append is its last activity. Never the push time alone: `tt ls
    --store` listed sessions pushed together in the order they were pushed, not as `tt ls`
    lists their files (tests/store/test_cli_store.py::test_finding_ls_with_store_orders_sessions_as_ls_orders_their_files)."""
    if v is not None and v.file_mtime_ns is not None:
        return v.file_mtime_ns // 1_000_000
    return s.mtime_ms


def lite_json(session_id: str, data: bytes) -> str:
    """The lite parse of a whole file's bytes (what `tt ls` reads of it), as JSON: kept with
    each pushed version so `tt ls --store` reads one column, not the lines."""
    from ..catalog.listing import parse_lite

    head = data[:HEAD_TAIL]
    tail = data[-HEAD_TAIL:] if len(data) > HEAD_TAIL else head
    return json.dumps(asdict(parse_lite(session_id, head, tail, len(data))))


def lite_from_json(text: str) -> Lite:
    from ..catalog.listing import Counts, Lite, Skipped

    d = json.loads(text)
    d["counts"] = Counts(**d["counts"])
    d["skipped"] = tuple(Skipped(**x) for x in d["skipped"])
    return Lite(**d)
