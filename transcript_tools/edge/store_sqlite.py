"""The SQLite engine (stdlib ``sqlite3``): the embedded default, one file.

``sqlite:///abs/path`` or ``sqlite:///rel/path`` names the file; without ``--store`` it is
``<config dir>/tt-store.sqlite3`` (`store_url.default_url`). The connection runs in autocommit
mode with explicit transactions: a write begins with ``BEGIN IMMEDIATE`` (the database
write lock at once, so two writers queue instead of failing half-way; asked for again every
0.5 ms for up to 60 s, `SQLiteDialect.begin`; ``busy_timeout`` 60 s for everything else),
in WAL mode so readers never wait for a writer. Search is an FTS5 table holding only the
index (``content=''``): its text is not stored twice; a deleted line is unindexed with the
text rebuilt from the line itself (FTS5's ``'delete'`` command), since SQLite 3.40 has no
``contentless_delete``.

Errors: a file that is not an SQLite database, or a damaged one, is `Unreadable` (exit 4);
a store that is not there and cannot be created (its directory cannot be made or written,
even when SQLite is the one to say so, "unable to open database file") is `WriteFailed`
(exit 6).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..model.errors import Unreadable, WriteFailed
from ..store.engine import Store, no_store
from ..store.schema import LINE_COLUMNS, SQLITE, TOKENIZE

#: How long a writer waits for the store's write lock, and how often it asks for it.
_WAIT_S = 60.0
_POLL = 0.0005


class SQLiteDialect:
    name = "sqlite"

    script = SQLITE
    db_errors: tuple[type[BaseException], ...] = (sqlite3.DatabaseError,)

    def translate(self, e: BaseException, url: str) -> Exception:
        if isinstance(e, sqlite3.OperationalError) and "locked" in str(e):
            return WriteFailed(f"{url}: the store stayed locked by another writer for 60 s")
        return Unreadable(
            f"{url}: not a tt store or damaged ({e})",
            hint="restore it from a backup, or name another with --store",
        )

    def sql(self, q: str) -> str:
        return q

    def begin(self, cur: Any) -> None:
        # SQLite's own busy handler sleeps 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100 ms
        # between tries, so a writer queued behind another's few-millisecond transaction
        # sleeps long past its end: `tt store push --all`'s workers lost more time so than in
        # their write transactions. The lock is asked for again every `_POLL` s instead, up
        # to the same 60 s, then the same "locked" error (`translate`: exit 6).
        cur.execute("PRAGMA busy_timeout = 0")
        try:
            deadline = None
            while True:
                try:
                    cur.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as e:
                    if not _busy(e):
                        raise
                    now = time.monotonic()
                    if deadline is None:
                        deadline = now + _WAIT_S
                    elif now >= deadline:
                        raise
                    time.sleep(_POLL)
        finally:
            cur.execute(f"PRAGMA busy_timeout = {int(_WAIT_S * 1000)}")

    def has_table(self, cur: Any, name: str) -> bool:
        return (
            cur.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone()
            is not None
        )

    def init_lock(self, cur: Any) -> None:
        pass  # BEGIN IMMEDIATE holds the database's write lock already

    def lock_stream(self, cur: Any, stream_id: int) -> None:
        pass  # BEGIN IMMEDIATE holds the database's write lock already

    def reserve_line_ids(self, cur: Any, n: int) -> list[int]:
        # Under BEGIN IMMEDIATE no one else inserts: the next n ids are free.
        top = cur.execute("SELECT COALESCE(MAX(id), 0) FROM tt_line").fetchone()[0]
        return list(range(top + 1, top + 1 + n))

    def insert_lines(self, cur: Any, rows: list[tuple[Any, ...]]) -> None:
        cur.executemany(f"INSERT INTO tt_line ({LINE_COLUMNS}) VALUES ({', '.join('?' * 14)})", rows)

    def index_texts(self, cur: Any, rows: list[tuple[int, str]]) -> None:
        cur.executemany("INSERT INTO tt_fts (rowid, text) VALUES (?, ?)", rows)

    def unindex_text(self, cur: Any, line_id: int, text: str) -> None:
        cur.execute("INSERT INTO tt_fts (tt_fts, rowid, text) VALUES ('delete', ?, ?)", (line_id, text))

    def search_sql(self, limit: int) -> tuple[str, Callable[[str], tuple[str, ...]]]:
        sql = (
            "SELECT l.stream_id, s.project_key, s.session_id, s.subpath, l.version, l.seq, l.uuid "
            "FROM tt_fts f JOIN tt_line l ON l.id = f.rowid JOIN tt_stream s ON s.id = l.stream_id AND s.current_version = l.version "
            f"WHERE tt_fts MATCH ? ORDER BY f.rowid DESC LIMIT {int(limit)}"
        )
        return sql, _fts_params

    def search_ids_sql(self, limit: int) -> tuple[str, Callable[[str], tuple[str, ...]]]:
        # The index alone (no join: a third of a microsecond a line where the join costs
        # two), for a search that reads only the first sessions (`store.find`).
        return (
            f"SELECT rowid FROM tt_fts WHERE tt_fts MATCH ? ORDER BY rowid DESC LIMIT {int(limit)}",
            _fts_params,
        )


def _fts_params(q: str) -> tuple[str]:
    return (_fts_query(q),)


def _fts_query(q: str) -> str:
    # Every word of the pattern cut into the index's own tokens (`_tokens`), each a quoted
    # term, all required: FTS5's query syntax (AND, NEAR, *, column:) stays out of the
    # user's way, and a word of several tokens (a path, a URL, ``foo-bar``) needs no phrase
    # query, which an index without positions (``detail=none``) refuses. The lines found
    # hold every token; `store.find` then matches each exactly as `tt search` matches a file.
    return " ".join('"' + t.replace('"', '""') + '"' for t in _tokens(q)) or '""'


def _tokens(q: str) -> list[str]:
    """The distinct terms the index holds for ``q``, in order: FTS5's own ``unicode61``
    tokenizer (case and diacritics folded), asked through an in-memory table and its
    ``fts5vocab`` (once per search, ~0.2 ms) — a rule written again in Python would split
    some word differently and miss its lines."""
    c = sqlite3.connect(":memory:")
    try:
        c.execute(f"CREATE VIRTUAL TABLE q USING fts5(x, tokenize='{TOKENIZE}')")
        c.execute("CREATE VIRTUAL TABLE qv USING fts5vocab(q, instance)")
        c.execute("INSERT INTO q (rowid, x) VALUES (1, ?)", (q,))
        terms = [t for (t,) in c.execute("SELECT term FROM qv ORDER BY offset")]
    finally:
        c.close()
    return list(dict.fromkeys(terms))


def open_sqlite(path: Path, clock: Callable[[], int], *, create: bool = True, url: str = "") -> Store:
    if not create and not path.exists():
        from ..model.errors import NotFound

        raise NotFound(f"{url or path}: no such store")
    # A store that is not there yet and cannot be made (no such directory and none can be
    # made, a directory nobody may write) is a write that failed (exit 6), as any file tt
    # cannot write; exit 4 is for a store that is there and cannot be read.
    new = create and not path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), isolation_level=None, timeout=60.0)
    except OSError as e:
        why = f"{e.strerror}: {e.filename}" if e.strerror and e.filename else str(e)
        raise _cannot_create(url or str(path), why) from e
    except sqlite3.Error as e:
        if new:
            raise _cannot_create(url or str(path), str(e)) from e
        raise Unreadable(f"{url or path}: cannot open the store ({e})") from e
    deadline = time.monotonic() + 60.0
    while True:
        try:
            conn.execute("PRAGMA busy_timeout = 60000")
            if not create and not SQLiteDialect().has_table(conn.cursor(), "tt_meta"):
                # Before any PRAGMA that writes (WAL is recorded in the file's header): a
                # command that only reads leaves another application's database as it was.
                conn.close()
                raise no_store(url or f"sqlite:///{path}")
            # Switching to WAL takes an exclusive lock for a moment, and SQLite answers "locked"
            # at once (no busy handler) while another process is creating or opening the same
            # new store: wait for it, as for any other writer.
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA synchronous = NORMAL")
            store = Store(conn, SQLiteDialect(), clock, url=url or f"sqlite:///{path}")
            store.init_schema(create=create)
            return store
        except sqlite3.OperationalError as e:
            if _busy(e) and time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            conn.close()
            if _busy(e):
                raise WriteFailed(f"{url or path}: the store stayed locked by another writer for 60 s") from e
            raise Unreadable(
                f"{url or path}: not a tt store or damaged ({e})",
                hint="restore it from a backup, or name another with --store",
            ) from e
        except sqlite3.DatabaseError as e:
            conn.close()
            raise Unreadable(
                f"{url or path}: not a tt store or damaged ({e})",
                hint="restore it from a backup, or name another with --store",
            ) from e


def _cannot_create(where: str, why: str) -> WriteFailed:
    return WriteFailed(
        f"{where}: cannot create the store ({why})",
        hint="name a file in a directory you can write with --store (sqlite:///relative/path or sqlite:////absolute/path)",
    )


def _busy(e: sqlite3.OperationalError) -> bool:
    text = str(e)
    return "locked" in text or "busy" in text
