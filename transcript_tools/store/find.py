"""`tt search --store URL`: the search of `catalog.files.search_files`, answered by a store's index.

The engine's full-text index (FTS5 / ``tsvector``) finds the stored lines holding every word
of the pattern; each is then read back and matched exactly as `tt search` matches a file
(`search.record_hits`: the same texts, the same case rules), so a hit here is a hit there.
What the index cannot find: a pattern that is part of a word (``ADM`` in ``README``; when
nothing is found, `StoreSearch.note` says so and names `tt search` on the files), and
regular expressions — the CLI refuses ``--regex`` with ``--store``.

Two things the index does not hold are read instead (new-user pass):
- a pattern the index cannot see at all (`index_blind`: symbols only, ``->``; a word of a
  script written without spaces, 日本語 inside a sentence): the stored lines are read and
  matched, newest pushed sessions first, up to `MAX_SCAN_BYTES`, and `StoreSearch.note`
  says when that stopped short of the whole store;
- 2.0.x subagent transcripts (``agent-<id>.jsonl`` beside the session, stored as side
  files ``project/agent-<id>.jsonl``, not streams): read and matched on every search, so
  the store finds what `tt search` finds in the project folder.

Sessions come newest pushed first, as `SessionHits` (``path`` is ``<project>/<id>.jsonl``
inside the store, a name, not a file; the title is the one `tt ls --store` shows, from the
lite parse kept with the version); the current version of each stream is searched.
`tt store search` is this search too (its CLI calls `tt search --store`'s).

Invariants: reads the store only; a line that is not a JSON object is never a hit.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

import orjson

from ..catalog.search import Hit, Matcher, SessionHits, record_hits, search_lines
from .model import LEGACY_AGENT, StreamInfo, StreamKey, Version

if TYPE_CHECKING:  # imported where used: `tt search --store` starts without the listing's code
    from ..catalog.listing import Lite, Row
    from .engine import Store

#: Lines asked of the index at most (the CLI's --limit cuts sessions after).
MAX_LINES = 20_000

#: Bytes of stored lines a search the index cannot answer reads at most (`index_blind`):
#: the newest pushed sessions first, whole sessions, then it stops and says so.
MAX_SCAN_BYTES = 64 * 1024 * 1024

#: Scripts written without spaces between words (Unicode character name prefixes): the
#: index's tokenizer (FTS5 ``unicode61``, and `edge.store_postgres.words` like it) keeps a
#: run of them as one token, so a word of them inside running text is no token of its own.
_UNSPACED = (
    "CJK UNIFIED IDEOGRAPH",
    "CJK COMPATIBILITY IDEOGRAPH",
    "HIRAGANA",
    "KATAKANA",
    "HALFWIDTH KATAKANA",
    "HANGUL",
    "THAI",
    "LAO",
    "KHMER",
    "MYANMAR",
    "TIBETAN",
)


def index_blind(pattern: str) -> str | None:
    """Why the full-text index cannot find ``pattern`` (None: it can, as whole words).

    The index holds words, runs of letters and digits (both engines cut lines as FTS5's
    ``unicode61`` does): a pattern with none (``->``, ``::``) names no term, and a word of
    a script written without spaces (Chinese, Japanese, Thai; Korean particles join their
    word) is, in running text, part of a longer term. Both found nothing, with no word said
    (new-user pass)."""
    if not any(c.isalnum() for c in pattern):
        return "it holds no letter or digit, and the index holds words"
    for c in pattern:
        if not c.isascii() and unicodedata.name(c, "").startswith(_UNSPACED):
            return (
                f"{c!r} is of a script written without spaces, where the index sees a run of text as one word"
            )
    return None


class StoreSearch:
    """The sessions holding a pattern, as `search_store` finds them: iterate for the
    `SessionHits`; then `note` says what the user should know of how they were found.

    How: by the index when it can (`index_blind` is None), else by reading the stored lines,
    newest pushed sessions first, up to `MAX_SCAN_BYTES` (``cut`` then holds how many
    sessions were read of how many). A scan finds what the index would and more: every
    line is matched as `tt search` matches a file. 2.0.x subagent transcripts, kept beside
    their session as side files and not indexed, are read and matched either way."""

    def __init__(
        self,
        store: Store,
        pattern: str,
        matcher: Matcher,
        *,
        per_session: int = 5,
        subagents: bool = True,
        sessions: int | None = None,
        scan_bytes: int = MAX_SCAN_BYTES,
    ) -> None:
        self.store = store
        self.pattern = pattern
        self.matcher = matcher
        self.per_session = per_session
        self.subagents = subagents
        self.sessions = sessions
        self.scan_bytes = scan_bytes
        self.blind = index_blind(pattern)
        #: ``(sessions read, sessions stored)`` when a scan stopped at `scan_bytes`.
        self.cut: tuple[int, int] | None = None

    def __iter__(self) -> Iterator[SessionHits]:
        store, subagents = self.store, self.subagents
        with store.read() as cur:
            legacy = _legacy_hits(store, cur, self.matcher) if subagents else {}
            if self.blind is not None:
                grouped: Iterator[tuple[tuple[str, str], Iterator[Found]]] = self._scanned(cur)
            else:
                rows = (
                    _placed(store, cur, self.pattern, subagents)
                    if self.sessions is not None
                    else _joined(store, cur, self.pattern, subagents)
                )
                grouped = ((sk, _read_rows(store, cur, r, self.matcher)) for sk, r in rows)
            for sk, found in grouped:
                sh = self._session(cur, sk, [*found, *legacy.pop(sk, [])])
                if sh is not None:
                    yield sh
            # Sessions whose only hits are in 2.0.x subagent files (not in the index): after
            # the others, the newest pushed first.
            rest = sorted(legacy, key=lambda k: -_pushed_ms(store, cur, k))
            for sk in rest:
                sh = self._session(cur, sk, legacy[sk])
                if sh is not None:
                    yield sh

    def note(self, found_any: bool) -> str | None:
        """What the CLI says on stderr after the hits: why a scan read only part of the
        store, or why the index may have missed the pattern; None when there is nothing to say."""
        run = f"`tt search {self.pattern}` without --store reads the session files instead"
        if self.blind is not None and self.cut is not None:
            read, total = self.cut
            return (
                f"the store's index cannot find {self.pattern!r} ({self.blind}): the stored lines of the "
                f"{read} most recently pushed of {total} sessions were read instead, {self.scan_bytes >> 20} MiB at most; {run}"
            )
        if self.blind is None and not found_any:
            return (
                'the store\'s index finds whole words: a part of a word ("pact" in "compact") is not found; '
                + run
            )
        return None

    def _session(
        self, cur: Any, sk: tuple[str, str], found: list[tuple[str, str | None, Hit]]
    ) -> SessionHits | None:
        if not found:
            return None
        # Main file first, then 2.1.x subagents, then 2.0.x ones, each in file order: as tt search.
        hits = sorted(found, key=lambda x: (_rank(x[0]), x[0], x[2].line))
        # The main stream's row, for the time and the title `tt search` shows of a file
        # (the lite parse kept with the version): asked of the sessions printed only.
        main = self.store.stream(cur, StreamKey(*sk))
        title = mtime = None
        if main is not None:
            # Dated as `tt search` dates the file (its mtime when pushed), not by the push:
            # new-user pass (`activity_ms`).
            mtime = activity_ms(main, self.store.version(cur, main.id, main.current_version))
            lite = self.store.lite_of(cur, main.id, main.current_version)
            title = json.loads(lite).get("title") if lite else None
        sh = SessionHits(PurePath(sk[0]) / f"{sk[1]}.jsonl", title, mtime or 0)
        sh.hits = [(agent, hit) for _, agent, hit in hits[: self.per_session]]
        sh.more = max(0, len(hits) - self.per_session)
        return sh

    def _scanned(self, cur: Any) -> Iterator[tuple[tuple[str, str], Iterator[Found]]]:
        """Every stored session's lines, the newest pushed first, until `scan_bytes` are read."""
        store = self.store
        mains = store.overview(cur)
        read = 0
        for i, (pk, sid, *_rest) in enumerate(mains):
            if read >= self.scan_bytes:
                self.cut = (i, len(mains))
                return
            found: list[Found] = []
            for s in store.list_streams(cur, pk, sid):
                if s.key.subpath and not self.subagents:
                    continue
                for seq, _off, _complete, _uuid, data in store.lines(cur, s.id, s.current_version):
                    read += len(data)
                    if self.matcher.may_match(data):
                        found.extend(_line_hits(s.key.subpath, seq, data, self.matcher))
            yield (pk, sid), iter(found)


def search_store(
    store: Store,
    pattern: str,
    matcher: Matcher,
    *,
    per_session: int = 5,
    subagents: bool = True,
    sessions: int | None = None,
) -> StoreSearch:
    """The sessions holding ``pattern``, newest pushed first, each with its hits (`StoreSearch`).

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
    return StoreSearch(
        store, pattern, matcher, per_session=per_session, subagents=subagents, sessions=sessions
    )


#: A hit with where it is: ``(subpath, subagent name, hit)``.
Found = tuple[str, str | None, Hit]


def _rank(subpath: str) -> int:
    return 0 if not subpath else 2 if subpath.startswith(f"{LEGACY_AGENT}/") else 1


def _line_hits(subpath: str, seq: int, data: bytes, matcher: Matcher) -> Iterator[Found]:
    try:
        rec = orjson.loads(data)
    except orjson.JSONDecodeError:
        return
    if not isinstance(rec, dict):
        return
    agent = subpath.rsplit("/", 1)[-1] if subpath else None
    for hit in record_hits(rec, seq + 1, matcher):
        yield subpath, agent, hit


def _read_rows(store: Store, cur: Any, rows: Rows, matcher: Matcher) -> Iterator[Found]:
    for stream_id, subpath, version, seq in rows:
        yield from _line_hits(subpath, seq, store.line_at(cur, stream_id, version, seq), matcher)


def _legacy_hits(store: Store, cur: Any, matcher: Matcher) -> dict[tuple[str, str], list[Found]]:
    """Hits in the stored 2.0.x subagent transcripts (``project/agent-*.jsonl`` side files,
    which the index does not hold), by session: each file read whole and matched line by
    line as `tt search` matches it in the project folder (the same line numbers, the same
    subagent name: the file's stem)."""
    out: dict[tuple[str, str], list[Found]] = {}
    for pk, sid, relpath, data in store.side_files(cur, f"{LEGACY_AGENT}/agent-"):
        if not matcher.may_match(data):
            continue
        name = PurePath(relpath).stem
        for number, _off, line, term, last in _raw_lines(data):
            if not matcher.may_match(line):
                continue
            for got in search_lines([(number, 0, line, term, last)], matcher):
                if isinstance(got, Hit):
                    out.setdefault((pk, sid), []).append((relpath, name, got))
    return out


def _raw_lines(data: bytes) -> Iterator[tuple[int, int, bytes, bytes, bool]]:
    """`reader.iter_raw`'s tuples over bytes in memory: lines end at ``\n`` alone."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
        ends = [b"\n"] * len(lines)
    else:
        ends = [b"\n"] * (len(lines) - 1) + [b""]
    offset = 0
    for i, (line, end) in enumerate(zip(lines, ends, strict=True)):
        term = end
        if end and line.endswith(b"\r"):
            line, term = line[:-1], b"\r\n"
        yield i + 1, offset, line, term, i == len(lines) - 1
        offset += len(line) + len(term)


def _pushed_ms(store: Store, cur: Any, sk: tuple[str, str]) -> int:
    main = store.stream(cur, StreamKey(*sk))
    return main.mtime_ms if main is not None else 0


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
