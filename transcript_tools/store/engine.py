"""The store's logic over a DB-API connection: one code path for SQLite and PostgreSQL.

`Store` knows the schema (`schema`) and the layering (`layers`); an engine adapter
(`edge.store_sqlite`, `edge.store_postgres`) hands it an open connection and a `Dialect`
(placeholder style, how a write transaction starts, the search index's SQL). Every change happens inside
`Store.write` (one transaction; ``BEGIN IMMEDIATE`` on SQLite, which takes the write lock
at once, and a row lock on the stream in PostgreSQL), so a writer killed mid-way leaves
the store as the last commit left it, and two writers of one stream are serialised.

Vocabulary: a *stream* is one transcript file of a session (``subpath`` ``''`` for the
main one, ``subagents/agent-<id>`` for a subagent: the Agent SDK's `SessionKey`). A stream
has *versions* (1, 2, ...): appends extend the current one; a rewritten file starts a new
one and the old ones stay. A version's *lines* are its physical lines in order, each kept
as its exact bytes (a skeleton plus blobs, `layers`) beside its parsed columns.

Invariants: the only clock is ``clock`` (epoch ms), given by the caller; lines are never
changed once committed except a torn last line (``complete = 0``), which is replaced when
the rest of it arrives; nothing here reads or writes files.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..model.errors import NotFound, Unreadable
from . import layers, schema
from .model import Dialect, SearchHit, StreamInfo, StreamKey, Version

if TYPE_CHECKING:
    from .prepare import Prepared

#: Lines per INSERT batch.
BATCH = 500

_VERSION_COLS = (
    "version, created_ms, updated_ms, reason, source, nbytes, sha256, file_mtime_ns, nlines, diagnostics"
)


class Store:
    """Sessions in a database. Not thread-safe: one per thread/process."""

    def __init__(self, conn: Any, dialect: Dialect, clock: Callable[[], int], *, url: str = "") -> None:
        self.conn = conn
        self.d = dialect
        self.clock = clock
        self.url = url
        self._in_tx = False
        #: Blobs stored (or seen stored) by the current write transaction (`put_blobs`).
        self._tx_blobs: set[str] = set()

    # --- plumbing -------------------------------------------------------------------

    def close(self) -> None:
        if self.conn is not None:
            conn, self.conn = self.conn, None
            conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        # A store dropped without close() (the SDK never closes its session store) still
        # closes its connection, rather than leaving it to the driver's finaliser to warn.
        try:
            self.close()
        except AttributeError:
            pass  # __init__ did not get as far as setting conn

    def _q(self, cur: Any, q: str, args: Sequence[Any] = ()) -> Any:
        cur.execute(self.d.sql(q), tuple(args))
        return cur

    def init_schema(self, *, create: bool = True) -> None:
        """Make the tables when missing; without ``create`` (a command that only reads),
        `NotFound` instead: a reader never writes tt's tables into a database that is not a
        tt store (another application's, an empty file)."""
        # Only when missing: DDL on an existing PostgreSQL table (even IF NOT EXISTS on an
        # index) takes table locks that deadlock against a concurrent push.
        with self.read() as cur:
            if self.d.has_table(cur, "tt_meta"):
                row = self._q(cur, "SELECT value FROM tt_meta WHERE key = 'schema'").fetchone()
                if row is not None:
                    if int(row[0]) > schema.SCHEMA_VERSION:
                        raise SchemaTooNew(int(row[0]))
                    return
        if not create:
            raise no_store(self.url)
        with self.write() as cur:
            self.d.init_lock(cur)
            if (
                self.d.has_table(cur, "tt_meta")
                and self._q(cur, "SELECT 1 FROM tt_meta WHERE key = 'schema'").fetchone()
            ):
                return  # another process made it while we waited for the lock
            for st in schema.statements(self.d.script):
                cur.execute(st)
            row = self._q(cur, "SELECT value FROM tt_meta WHERE key = 'schema'").fetchone()
            if row is None:
                self._q(
                    cur,
                    "INSERT INTO tt_meta (key, value) VALUES ('schema', ?)",
                    (str(schema.SCHEMA_VERSION),),
                )
            elif int(row[0]) > schema.SCHEMA_VERSION:
                raise SchemaTooNew(int(row[0]))

    @contextmanager
    def write(self) -> Iterator[Any]:
        """One transaction; committed on success, rolled back on any exception."""
        try:
            cur = self.conn.cursor()
            self.d.begin(cur)
        except self.d.db_errors as e:
            raise self.d.translate(e, self.url) from e
        self._in_tx = True
        self._tx_blobs = set()
        done = False
        try:
            yield cur
            cur.execute("COMMIT")
            done = True
        except self.d.db_errors as e:
            raise self.d.translate(e, self.url) from e
        finally:
            if not done:  # any exception, KeyboardInterrupt included: nothing half-written
                self._rollback(cur)
            self._in_tx = False
            self._tx_blobs = set()
            cur.close()

    def _rollback(self, cur: Any) -> None:
        try:
            cur.execute("ROLLBACK")
        except self.d.db_errors:
            pass  # the transaction is gone already (the connection failed): nothing to undo

    @contextmanager
    def read(self) -> Iterator[Any]:
        try:
            cur = self.conn.cursor()
        except self.d.db_errors as e:
            raise self.d.translate(e, self.url) from e
        try:
            yield cur
        except self.d.db_errors as e:
            raise self.d.translate(e, self.url) from e
        finally:
            cur.close()

    # --- streams and versions -------------------------------------------------------

    def stream(self, cur: Any, key: StreamKey, *, create: bool = False) -> StreamInfo | None:
        q = "SELECT id, current_version, mtime_ms, summary FROM tt_stream WHERE project_key = ? AND session_id = ? AND subpath = ?"
        args = (key.project_key, key.session_id, key.subpath)
        row = self._q(cur, q, args).fetchone()
        if row is None and create:
            self._q(
                cur,
                "INSERT INTO tt_stream (project_key, session_id, subpath, mtime_ms) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (project_key, session_id, subpath) DO NOTHING",
                (*args, self.clock()),
            )
            row = self._q(cur, q, args).fetchone()
        if row is None:
            return None
        if self._in_tx:
            self.d.lock_stream(cur, row[0])
            row = self._q(cur, q, args).fetchone()
        return StreamInfo(row[0], key, row[1], row[2], json.loads(row[3]) if row[3] else None)

    def version(self, cur: Any, stream_id: int, version: int) -> Version | None:
        row = self._q(
            cur,
            f"SELECT {_VERSION_COLS} FROM tt_version WHERE stream_id = ? AND version = ?",
            (stream_id, version),
        ).fetchone()
        return _version(row) if row else None

    def versions(self, cur: Any, stream_id: int) -> list[Version]:
        rows = self._q(
            cur, f"SELECT {_VERSION_COLS} FROM tt_version WHERE stream_id = ? ORDER BY version", (stream_id,)
        ).fetchall()
        return [_version(r) for r in rows]

    def new_version(self, cur: Any, s: StreamInfo, reason: str, source: str | None) -> int:
        v = s.current_version + 1
        now = self.clock()
        self._q(
            cur,
            "INSERT INTO tt_version (stream_id, version, created_ms, updated_ms, reason, source) VALUES (?, ?, ?, ?, ?, ?)",
            (s.id, v, now, now, reason, source),
        )
        self._q(cur, "UPDATE tt_stream SET current_version = ?, mtime_ms = ? WHERE id = ?", (v, now, s.id))
        return v

    def set_version_state(
        self,
        cur: Any,
        stream_id: int,
        version: int,
        *,
        nbytes: int,
        sha256: str | None,
        file_mtime_ns: int | None,
        diagnostics: list[dict[str, Any]] | None,
        lite: str | None = None,
    ) -> None:
        now = self.clock()
        n = self._q(
            cur, "SELECT COUNT(*) FROM tt_line WHERE stream_id = ? AND version = ?", (stream_id, version)
        ).fetchone()[0]
        self._q(
            cur,
            "UPDATE tt_version SET nbytes = ?, sha256 = ?, file_mtime_ns = ?, nlines = ?, diagnostics = ?, lite = ?, updated_ms = ? "
            "WHERE stream_id = ? AND version = ?",
            (
                nbytes,
                sha256,
                file_mtime_ns,
                n,
                json.dumps(diagnostics) if diagnostics is not None else None,
                lite,
                now,
                stream_id,
                version,
            ),
        )
        self._q(cur, "UPDATE tt_stream SET mtime_ms = ? WHERE id = ?", (now, stream_id))

    def touch(self, cur: Any, stream_id: int) -> int:
        now = self.clock()
        self._q(cur, "UPDATE tt_stream SET mtime_ms = ? WHERE id = ?", (now, stream_id))
        return now

    def set_summary(self, cur: Any, stream_id: int, summary: dict[str, Any]) -> None:
        self._q(cur, "UPDATE tt_stream SET summary = ? WHERE id = ?", (json.dumps(summary), stream_id))

    # --- lines ----------------------------------------------------------------------

    def append_lines(
        self, cur: Any, stream_id: int, version: int, lines: Iterable[bytes], *, seq: int, offset: int
    ) -> tuple[int, int]:
        """Store ``lines`` (each with its terminator, the last maybe without) from ``seq``
        at byte ``offset``; returns the next (seq, offset)."""
        # (Imported here: a reader of the store, `tt search --store`, never prepares lines.)
        from .prepare import prepare_lines

        return self.insert_prepared(
            cur,
            stream_id,
            version,
            prepare_lines(lines, seq=seq, offset=offset, known=self._known_blobs(cur)),
        )

    def known_blobs(self, hashes: Iterable[str]) -> set[str]:
        """Which of these blobs the store holds (read outside any lock: a hint for `prepare_lines`)."""
        with self.read() as cur:
            return self._known_blobs(cur)(hashes)

    def _known_blobs(self, cur: Any) -> Callable[[Iterable[str]], set[str]]:
        def known(hashes: Iterable[str]) -> set[str]:
            want = sorted(set(hashes))
            out: set[str] = set()
            for i in range(0, len(want), 200):
                part = want[i : i + 200]
                marks = ", ".join("?" * len(part))
                out.update(
                    r[0]
                    for r in self._q(
                        cur, f"SELECT hash FROM tt_blob WHERE hash IN ({marks})", part
                    ).fetchall()
                )
            return out

        return known

    def put_blobs(
        self, cur: Any, new: Mapping[str, tuple[str, bytes, int]], maybe: Mapping[str, bytes]
    ) -> None:
        """Store a whole transaction's blobs first, in hash order: ``new`` encoded already
        (``hash -> (codec, payload, size)``), ``maybe`` raw (held by the store when prepared;
        stored if they went meanwhile). Two PostgreSQL transactions inserting the same new
        blobs wait for each other on the unique index; taken in one order by all, those
        waits cannot form a cycle (in any other order two workers of one push deadlocked
        on the bench set). `insert_prepared` then skips them."""
        for h in sorted(new.keys() | maybe.keys()):
            if h in self._tx_blobs:
                continue
            if h in new:
                codec, payload, size = new[h]
                self._q(
                    cur,
                    "INSERT INTO tt_blob (hash, codec, size, data) VALUES (?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING",
                    (h, codec, size, payload),
                )
                self._tx_blobs.add(h)
            else:
                self._put_blob(cur, h, maybe[h])

    def insert_prepared(self, cur: Any, stream_id: int, version: int, p: Prepared) -> tuple[int, int]:
        """Write prepared lines (the CPU work done, maybe before the lock was taken). Rows go
        in batches of `BATCH` (``executemany``) with ids reserved up front, so the search
        index needs no round trip per line."""
        self.put_blobs(cur, p.blobs, p.maybe_known)
        now = self.clock()
        for i in range(0, len(p.rows), BATCH):
            rows = [(stream_id, version, r[0], r[1], now, *r[2:]) for r in p.rows[i : i + BATCH]]
            self._insert_lines(cur, rows, p.texts[i : i + BATCH])
        return p.end_seq, p.end_offset

    def _insert_lines(self, cur: Any, rows: list[tuple[Any, ...]], texts: list[str | None]) -> None:
        ids = self.d.reserve_line_ids(cur, len(rows))
        self.d.insert_lines(cur, [(i, *r) for i, r in zip(ids, rows, strict=True)])
        self.d.index_texts(cur, [(i, t) for i, t in zip(ids, texts, strict=True) if t])

    def _put_blob(self, cur: Any, h: str, piece: bytes) -> None:
        if h in self._tx_blobs:
            return
        self._tx_blobs.add(h)
        if self._q(cur, "SELECT 1 FROM tt_blob WHERE hash = ?", (h,)).fetchone():
            return
        codec, payload = layers.encode_blob(piece)
        self._q(
            cur,
            "INSERT INTO tt_blob (hash, codec, size, data) VALUES (?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING",
            (h, codec, len(piece), payload),
        )

    def _blobs(self, cur: Any, hashes: set[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for h in hashes:
            row = self._q(cur, "SELECT codec, data FROM tt_blob WHERE hash = ?", (h,)).fetchone()
            if row is None:
                raise self._damaged(f"blob {h} is missing")
            try:
                out[h] = layers.decode_blob(row[0], bytes(row[1]))
            except layers.Damaged as e:
                raise self._damaged(f"blob {h}: {e}") from e
        return out

    def _damaged(self, what: str) -> Unreadable:
        # One message and exit 4, as for a database file SQLite itself finds corrupt.
        return Unreadable(
            f"{self.url}: the store is damaged ({what})",
            hint="restore it from a backup; `tt store push` writes again what the session files still hold",
        )

    def lines(
        self,
        cur: Any,
        stream_id: int,
        version: int,
        *,
        as_of_ms: int | None = None,
        from_seq: int = 0,
        to_seq: int | None = None,
    ) -> Iterator[tuple[int, int, bool, str | None, bytes]]:
        """``(seq, byte_offset, complete, uuid, bytes)`` in order, ``from_seq <= seq < to_seq``."""
        q = "SELECT seq, byte_offset, complete, uuid, codec, skeleton, refs FROM tt_line WHERE stream_id = ? AND version = ? AND seq >= ?"
        args: list[Any] = [stream_id, version, from_seq]
        if to_seq is not None:
            q += " AND seq < ?"
            args.append(to_seq)
        if as_of_ms is not None:
            q += " AND pushed_ms <= ?"
            args.append(as_of_ms)
        rows = self._q(cur, q + " ORDER BY seq", args).fetchall()
        cache: dict[str, bytes] = {}
        for seq, off, complete, uuid, codec, skel, refs_text in rows:
            try:
                refs = layers.decode_refs(refs_text)
                need = {h for _, h in refs if h not in cache}
                if need:
                    cache.update(self._blobs(cur, need))
                data = layers.join(layers.decode_blob(codec, bytes(skel)), refs, cache)
            except ValueError as e:  # (layers.Damaged, or refs that are not "offset:hash")
                raise self._damaged(f"line {seq} of stream {stream_id}: {e}") from e
            yield seq, off, bool(complete), uuid, data

    def lite_of(self, cur: Any, stream_id: int, version: int) -> str | None:
        row = self._q(
            cur, "SELECT lite FROM tt_version WHERE stream_id = ? AND version = ?", (stream_id, version)
        ).fetchone()
        return row[0] if row else None

    def byte_range(self, cur: Any, stream_id: int, version: int, start: int, stop: int) -> bytes:
        """The version's bytes ``[start, stop)``, reading only the lines that hold them."""
        row = self._q(
            cur,
            "SELECT MAX(byte_offset) FROM tt_line WHERE stream_id = ? AND version = ? AND byte_offset <= ?",
            (stream_id, version, start),
        ).fetchone()
        first = row[0] if row and row[0] is not None else 0
        q = "SELECT seq FROM tt_line WHERE stream_id = ? AND version = ? AND byte_offset >= ? AND byte_offset < ? ORDER BY seq"
        seqs = [r[0] for r in self._q(cur, q, (stream_id, version, first, stop)).fetchall()]
        if not seqs:
            return b""
        data = b"".join(
            x[4] for x in self.lines(cur, stream_id, version, from_seq=seqs[0], to_seq=seqs[-1] + 1)
        )
        return data[start - first : stop - first]

    def delete_lines_from(self, cur: Any, stream_id: int, version: int, seq: int) -> None:
        from . import records
        from .prepare import clean_text

        for line_id, raw in self._line_ids(cur, stream_id, version, seq):
            text = records.facts(raw).text
            if text:
                self.d.unindex_text(cur, line_id, clean_text(text))
        self._q(
            cur,
            "DELETE FROM tt_line WHERE stream_id = ? AND version = ? AND seq >= ?",
            (stream_id, version, seq),
        )

    def _line_ids(self, cur: Any, stream_id: int, version: int, seq: int) -> list[tuple[int, bytes]]:
        ids = [
            r[0]
            for r in self._q(
                cur,
                "SELECT id FROM tt_line WHERE stream_id = ? AND version = ? AND seq >= ? ORDER BY seq",
                (stream_id, version, seq),
            ).fetchall()
        ]
        raws = [x[4] for x in self.lines(cur, stream_id, version, from_seq=seq)]
        return list(zip(ids, raws, strict=True))

    def uuids(self, cur: Any, stream_id: int, version: int) -> set[str]:
        rows = self._q(
            cur,
            "SELECT uuid FROM tt_line WHERE stream_id = ? AND version = ? AND uuid IS NOT NULL",
            (stream_id, version),
        ).fetchall()
        return {r[0] for r in rows}

    def last_line(self, cur: Any, stream_id: int, version: int) -> tuple[int, int, bool] | None:
        row = self._q(
            cur,
            "SELECT seq, byte_offset, complete FROM tt_line WHERE stream_id = ? AND version = ? ORDER BY seq DESC LIMIT 1",
            (stream_id, version),
        ).fetchone()
        return (row[0], row[1], bool(row[2])) if row else None

    # --- whole streams --------------------------------------------------------------

    def list_streams(
        self, cur: Any, project_key: str | None = None, session_id: str | None = None
    ) -> list[StreamInfo]:
        q = "SELECT id, project_key, session_id, subpath, current_version, mtime_ms, summary FROM tt_stream WHERE current_version > 0"
        args: list[Any] = []
        if project_key is not None:
            q += " AND project_key = ?"
            args.append(project_key)
        if session_id is not None:
            q += " AND session_id = ?"
            args.append(session_id)
        rows = self._q(cur, q + " ORDER BY project_key, session_id, subpath", args).fetchall()
        return [
            StreamInfo(r[0], StreamKey(r[1], r[2], r[3]), r[4], r[5], json.loads(r[6]) if r[6] else None)
            for r in rows
        ]

    def overview(self, cur: Any) -> list[tuple[str, str, int, int, int, int]]:
        """``(project_key, session_id, version, mtime_ms, nlines, nbytes)`` of every stored
        main transcript, newest first, in one query (what `tt store ls` shows)."""
        return [
            tuple(r)
            for r in self._q(
                cur,
                "SELECT s.project_key, s.session_id, s.current_version, s.mtime_ms, v.nlines, v.nbytes FROM tt_stream s "
                "JOIN tt_version v ON v.stream_id = s.id AND v.version = s.current_version WHERE s.subpath = '' ORDER BY s.mtime_ms DESC",
            ).fetchall()
        ]

    def delete_stream(self, cur: Any, s: StreamInfo) -> None:
        for v in self.versions(cur, s.id):
            self.delete_lines_from(cur, s.id, v.version, 0)
        self._q(cur, "DELETE FROM tt_version WHERE stream_id = ?", (s.id,))
        self._q(cur, "DELETE FROM tt_stream WHERE id = ?", (s.id,))

    def put_file(
        self, cur: Any, project_key: str, session_id: str, relpath: str, data: bytes, mtime_ns: int | None
    ) -> bool:
        """Keep a session's side file (subagent ``.meta.json``, a file-history backup);
        returns False when the same bytes were there already."""
        h = layers.digest(data)
        row = self._q(
            cur,
            "SELECT hash FROM tt_file WHERE project_key = ? AND session_id = ? AND relpath = ?",
            (project_key, session_id, relpath),
        ).fetchone()
        if row is not None and row[0] == h:
            return False
        self._put_blob(cur, h, data)
        self._q(
            cur,
            "DELETE FROM tt_file WHERE project_key = ? AND session_id = ? AND relpath = ?",
            (project_key, session_id, relpath),
        )
        self._q(
            cur,
            "INSERT INTO tt_file (project_key, session_id, relpath, hash, size, mtime_ns, pushed_ms) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (project_key, session_id, relpath, h, len(data), mtime_ns, self.clock()),
        )
        return True

    def files(self, cur: Any, project_key: str, session_id: str) -> list[tuple[str, bytes, int | None]]:
        rows = self._q(
            cur,
            "SELECT relpath, hash, mtime_ns FROM tt_file WHERE project_key = ? AND session_id = ? ORDER BY relpath",
            (project_key, session_id),
        ).fetchall()
        blobs = self._blobs(cur, {r[1] for r in rows})
        return [(r[0], blobs[r[1]], r[2]) for r in rows]

    def count_files(self, cur: Any, prefix: str) -> dict[tuple[str, str], int]:
        """``(project_key, session_id) -> how many side files`` whose relpath starts with
        ``prefix`` (no bytes read: `tt ls --store` counts 2.0.x subagent files so)."""
        rows = self._q(
            cur,
            "SELECT project_key, session_id, COUNT(*) FROM tt_file WHERE substr(relpath, 1, ?) = ? "
            "GROUP BY project_key, session_id",
            (len(prefix), prefix),
        ).fetchall()
        return {(r[0], r[1]): int(r[2]) for r in rows}

    def side_files(self, cur: Any, prefix: str) -> Iterator[tuple[str, str, str, bytes]]:
        """``(project_key, session_id, relpath, bytes)`` of every side file whose relpath
        starts with ``prefix``, one at a time (`store.find` reads the 2.0.x subagent
        transcripts so: they are not in the index)."""
        rows = self._q(
            cur,
            "SELECT project_key, session_id, relpath, hash FROM tt_file WHERE substr(relpath, 1, ?) = ? "
            "ORDER BY project_key, session_id, relpath",
            (len(prefix), prefix),
        ).fetchall()
        for pk, sid, relpath, h in rows:
            yield pk, sid, relpath, self._blobs(cur, {h})[h]

    def delete_files(self, cur: Any, project_key: str, session_id: str) -> None:
        self._q(
            cur, "DELETE FROM tt_file WHERE project_key = ? AND session_id = ?", (project_key, session_id)
        )

    def search(self, query: str, *, limit: int = 50) -> list[SearchHit]:
        with self.read() as cur:
            return [
                SearchHit(
                    StreamKey(pk, sid, sub), version, seq, uuid, self.line_at(cur, stream_id, version, seq)
                )
                for stream_id, pk, sid, sub, version, seq, uuid in self.search_rows(cur, query, limit=limit)
            ]

    def search_rows(self, cur: Any, query: str, *, limit: int = 50) -> list[tuple[Any, ...]]:
        """The index's answer without the lines: ``(stream_id, project_key, session_id,
        subpath, version, seq, uuid)``, newest pushed first (read a line with `line_at`)."""
        sql, prepare = self.d.search_sql(limit)
        rows: list[tuple[Any, ...]] = self._q(cur, sql, prepare(query)).fetchall()
        return rows

    def search_ids(self, cur: Any, query: str, *, limit: int) -> list[int]:
        """The ids of the lines the index finds (lines of every version), newest pushed
        first: `search_rows` without the join, for a caller that places them itself."""
        sql, prepare = self.d.search_ids_sql(limit)
        return [r[0] for r in self._q(cur, sql, prepare(query)).fetchall()]

    def line_home(self, cur: Any, line_id: int) -> tuple[int, str, str, str, int, int] | None:
        """Where one line lives: ``(stream_id, project_key, session_id, subpath, its
        version, the stream's current version)``."""
        row = self._q(
            cur,
            "SELECT l.stream_id, s.project_key, s.session_id, s.subpath, l.version, s.current_version "
            "FROM tt_line l JOIN tt_stream s ON s.id = l.stream_id WHERE l.id = ?",
            (line_id,),
        ).fetchone()
        return None if row is None else (row[0], row[1], row[2], row[3], row[4], row[5])

    def line_seqs(self, cur: Any, stream_id: int, version: int) -> list[tuple[int, int]]:
        """``(id, seq)`` of a version's lines, in order (the unique index alone answers)."""
        rows: list[tuple[int, int]] = self._q(
            cur,
            "SELECT id, seq FROM tt_line WHERE stream_id = ? AND version = ? ORDER BY seq",
            (stream_id, version),
        ).fetchall()
        return rows

    def line_at(self, cur: Any, stream_id: int, version: int, seq: int) -> bytes:
        return next(self.lines(cur, stream_id, version, from_seq=seq, to_seq=seq + 1))[4]

    def size_bytes(self) -> dict[str, int]:
        """Stored payload bytes by table (skeletons, blobs): for the size ratio."""
        with self.read() as cur:
            skel = self._q(cur, "SELECT COALESCE(SUM(LENGTH(skeleton)), 0) FROM tt_line").fetchone()[0]
            blob = self._q(
                cur, "SELECT COALESCE(SUM(LENGTH(data)), 0), COALESCE(SUM(size), 0) FROM tt_blob"
            ).fetchone()
        return {"skeletons": int(skel), "blobs": int(blob[0]), "blob_raw": int(blob[1])}


def no_store(url: str) -> NotFound:
    """What a command that only reads says of a database without tt's tables."""
    return NotFound(
        f"{url}: no tt store here (the database holds no tt tables)",
        hint="`tt store push` makes one; or name another with --store",
    )


class SchemaTooNew(Unreadable):
    """The store was written by a newer tt: refused rather than misread (exit 4)."""

    def __init__(self, found: int) -> None:
        super().__init__(f"store schema {found} is newer than this tt understands ({schema.SCHEMA_VERSION})")


def _version(row: Sequence[Any]) -> Version:
    return Version(
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        row[5],
        row[6],
        row[7],
        row[8],
        json.loads(row[9]) if row[9] else None,
    )
