"""`tt search --store URL`: the search of `catalog.search_files`, answered by a store's index.

The engine's full-text index (FTS5 / ``tsvector``) finds the stored lines holding every word
of the pattern; each is then read back and matched exactly as `tt search` matches a file
(`search.record_hits`: the same texts, the same case rules), so a hit here is a hit there.
What the index cannot find: a pattern that is part of a word (``ADM`` in ``README``), and
regular expressions — the CLI refuses ``--regex`` with ``--store``.

Sessions come newest pushed first, as `SessionHits` (``path`` is ``<project>/<id>.jsonl``
inside the store, a name, not a file); the current version of each stream is searched.

Invariants: reads the store only; a line that is not a JSON object is never a hit.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson

from ..catalog import SessionHits
from ..search import Hit, Matcher, record_hits
from .engine import Store

#: Lines asked of the index at most (the CLI's --limit cuts sessions after).
MAX_LINES = 20_000


def search_store(store: Store, pattern: str, matcher: Matcher, *, per_session: int = 5, subagents: bool = True) -> Iterator[SessionHits]:
    order: list[tuple[str, str]] = []
    found: dict[tuple[str, str], list[tuple[str, str | None, Hit]]] = {}
    for h in store.search(pattern, limit=MAX_LINES):
        if h.key.subpath and not subagents:
            continue
        try:
            rec = orjson.loads(h.line)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(rec, dict):
            continue
        sk = (h.key.project_key, h.key.session_id)
        if sk not in found:
            found[sk] = []
            order.append(sk)
        agent = h.key.subpath.rsplit("/", 1)[-1] if h.key.subpath else None
        found[sk].extend((h.key.subpath, agent, hit) for hit in record_hits(rec, h.seq + 1, matcher))
    with store.read() as cur:
        mtimes = {(s.key.project_key, s.key.session_id): s.mtime_ms for s in store.list_streams(cur) if not s.key.subpath}
    for sk in order:
        hits = sorted(found[sk], key=lambda x: (x[0], x[2].line))  # main file first, in file order, as tt search
        if hits:
            sh = SessionHits(Path(sk[0]) / f"{sk[1]}.jsonl", None, mtimes.get(sk, 0))
            sh.hits = [(agent, hit) for _, agent, hit in hits[:per_session]]
            sh.more = max(0, len(hits) - per_session)
            yield sh
