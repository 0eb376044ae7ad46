"""The PostgreSQL engine (psycopg 3): the same tables as SQLite, for a team's shared store.

``postgresql://user:password@host:port/db`` (or ``?host=/socket/dir``); what the URL leaves
out comes from the usual ``PG*`` variables and ``~/.pgpass`` (libpq). The connection is in
autocommit mode with explicit ``BEGIN``/``COMMIT``; a write locks its stream's row
(``SELECT … FOR UPDATE``) after creating it (``ON CONFLICT DO NOTHING`` waits for a racing
creator), so two pushes of one session are serialised while pushes of different sessions
run side by side. Schema creation holds a transaction-scoped advisory lock, so two first
runs do not collide on the catalog. Raw line bytes are ``bytea`` (``jsonb`` refuses
``\\u0000``, which real tool output contains); search is a ``tsvector`` (the ``simple``
configuration: no stemming, any language) with a GIN index, holding each word of a line once
(`index_words`: search asks for every word, never a phrase or a rank). A batch's lines go by
binary ``COPY``, its search texts by one ``INSERT … unnest``.

Errors: a server that cannot be reached, refused credentials or a failing query are one
message and exit 5 (`StoreUnavailable`); the password is never part of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..model.errors import TTError
from ..store.engine import Store
from ..store.model import redacted
from ..store.schema import LINE_COLUMNS, POSTGRES


class StoreUnavailable(TTError):
    """The database could not be reached, refused the credentials, or failed a query."""

    exit_code = 5


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as e:
        raise StoreUnavailable(
            "PostgreSQL stores need psycopg 3", hint="pip install 'transcript-tools[postgres]'"
        ) from e
    return psycopg


class PostgresDialect:
    name = "postgres"
    script = POSTGRES

    def __init__(self, password: str | None) -> None:
        self.db_errors: tuple[type[BaseException], ...] = (_psycopg().Error,)
        self._password = password

    def translate(self, e: BaseException, url: str) -> Exception:
        msg = " ".join(str(e).split())
        if self._password:
            msg = msg.replace(self._password, "***")
        return StoreUnavailable(
            f"{redacted(url)}: {msg}", hint="check the server, the URL and the PG* variables"
        )

    def sql(self, q: str) -> str:
        return q.replace("?", "%s")

    def begin(self, cur: Any) -> None:
        cur.execute("BEGIN")

    def has_table(self, cur: Any, name: str) -> bool:
        # A query of the catalog (a fresh snapshot), not to_regclass: after waiting for the
        # advisory lock, to_regclass could still answer from a cache that misses the tables
        # the other process just committed, and the DDL it lets through deadlocks its push.
        return (
            cur.execute(
                "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = %s",
                (name,),
            ).fetchone()
            is not None
        )

    def init_lock(self, cur: Any) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(7471616)")

    def lock_stream(self, cur: Any, stream_id: int) -> None:
        cur.execute("SELECT id FROM tt_stream WHERE id = %s FOR UPDATE", (stream_id,))

    def reserve_line_ids(self, cur: Any, n: int) -> list[int]:
        cur.execute(
            "SELECT nextval(pg_get_serial_sequence('tt_line', 'id')) FROM generate_series(1, %s)", (n,)
        )
        return [r[0] for r in cur.fetchall()]

    def insert_lines(self, cur: Any, rows: list[tuple[Any, ...]]) -> None:
        # COPY, binary: one stream for the batch where executemany sent a Bind/Execute per
        # row, and bytea as bytes, not hex (README, "Session store": measured, paired).
        with cur.copy(f"COPY tt_line ({LINE_COLUMNS}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(_LINE_TYPES)
            for r in rows:
                copy.write_row(r)

    def index_texts(self, cur: Any, rows: list[tuple[int, str]]) -> None:
        # One statement for the batch (the arrays travel once), not a statement per line.
        if not rows:
            return
        cur.execute(
            "INSERT INTO tt_fts (line_id, tsv) SELECT i, to_tsvector('simple', t) "
            "FROM unnest(%s::bigint[], %s::text[]) AS u(i, t)",
            ([i for i, _ in rows], [index_words(t) for _, t in rows]),
        )

    def unindex_text(self, cur: Any, line_id: int, text: str) -> None:
        cur.execute("DELETE FROM tt_fts WHERE line_id = %s", (line_id,))

    def search_sql(self, limit: int) -> tuple[str, Callable[[str], str]]:
        # The index first (MATERIALIZED): without statistics on a freshly pushed store the
        # planner would walk every line of every session and filter (97 ms vs a GIN lookup).
        sql = (
            "WITH m AS MATERIALIZED (SELECT line_id FROM tt_fts WHERE tsv @@ plainto_tsquery('simple', ?)) "
            "SELECT l.stream_id, s.project_key, s.session_id, s.subpath, l.version, l.seq, l.uuid "
            "FROM m JOIN tt_line l ON l.id = m.line_id JOIN tt_stream s ON s.id = l.stream_id AND s.current_version = l.version "
            f"ORDER BY m.line_id DESC LIMIT {int(limit)}"
        )
        return sql, words

    def search_ids_sql(self, limit: int) -> tuple[str, Callable[[str], str]]:
        sql = (
            "SELECT line_id FROM tt_fts WHERE tsv @@ plainto_tsquery('simple', ?) "
            f"ORDER BY line_id DESC LIMIT {int(limit)}"
        )
        return sql, words


#: tt_line's columns as `store.schema` declares them, in `LINE_COLUMNS` order.
_LINE_TYPES = [
    "int8",
    "int8",
    "int4",
    "int8",
    "int8",
    "int8",
    "int4",
    "text",
    "text",
    "text",
    "text",
    "text",
    "bytea",
    "text",
]

_NOT_WORD = re.compile(r"[\W_]+")
# ASCII bytes that are not letters or digits -> a space; every other byte (UTF-8 of the
# rest) as it is.
_ASCII_NOT_WORD = bytes(b if b >= 128 or chr(b).isalnum() else 32 for b in range(256))
_NON_ASCII_NOT_WORD = re.compile(r"[^\x00-\x7f\w]+")


def words(text: str) -> str:
    """Text cut into words the way SQLite's FTS5 ``unicode61`` cuts it (letters and digits;
    everything else separates), so both engines find the same lines: PostgreSQL's parser
    would keep ``/home/u/projects/app.js`` as one "file" token, and a search for ``app``
    would miss it.

    The words of ``_NOT_WORD.sub(" ", text)``, computed faster (a push of many sessions
    spent a fifth of its own CPU in that regex): ASCII separators become spaces by a
    byte table, and only the non-ASCII ones go through a regex, which skips ASCII at
    once (``tests/store/test_sessionstore_postgres.py``: the same ``tsvector`` on every
    real fixture's text)."""
    if text.isascii():
        return text.encode().translate(_ASCII_NOT_WORD).decode()
    cut = text.encode("utf-8", "surrogatepass").translate(_ASCII_NOT_WORD).decode("utf-8", "surrogatepass")
    return _NON_ASCII_NOT_WORD.sub(" ", cut)


def index_words(text: str) -> str:
    """The words of `words` ``(text)``, each once, in the order they first come: what the
    index stores. Search asks ``plainto_tsquery`` (every word present, no phrase, no rank),
    which a ``tsvector``'s positions do not change, so the lexemes are the same as for the
    whole text (``tests/store/test_sessionstore_postgres.py``) and the server's
    ``to_tsvector`` parses each word once: a first push's wall time 0.9x, paired (README,
    "Session store")."""
    return " ".join(dict.fromkeys(words(text).split()))


def open_postgres(url: str, clock: Callable[[], int]) -> Store:
    psycopg = _psycopg()
    try:
        password = psycopg.conninfo.conninfo_to_dict(url).get("password")
    except psycopg.ProgrammingError as e:
        from ..model.errors import UsageError

        raise UsageError(f"{redacted(url)}: not a PostgreSQL URL") from e
    dialect = PostgresDialect(password if isinstance(password, str) else None)
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.Error as e:
        raise dialect.translate(e, url) from e
    store = Store(conn, dialect, clock, url=redacted(url))
    store.init_schema()
    return store
