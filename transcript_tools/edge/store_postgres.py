"""The PostgreSQL engine (psycopg 3): the same tables as SQLite, for a team's shared store.

``postgresql://user:password@host:port/db`` (or ``?host=/socket/dir``); what the URL leaves
out comes from the usual ``PG*`` variables and ``~/.pgpass`` (libpq). The connection is in
autocommit mode with explicit ``BEGIN``/``COMMIT``; a write locks its stream's row
(``SELECT … FOR UPDATE``) after creating it (``ON CONFLICT DO NOTHING`` waits for a racing
creator), so two pushes of one session are serialised while pushes of different sessions
run side by side. Schema creation holds a transaction-scoped advisory lock, so two first
runs do not collide on the catalog. Raw line bytes are ``bytea`` (``jsonb`` refuses
``\\u0000``, which real tool output contains); search is a ``tsvector`` with a GIN index,
holding each word of a line once, lowercased, without positions (`lexemes`: search asks for
every word, never a phrase or a rank). tt cuts the words itself, as SQLite's FTS5 cuts them
(`words`), for the lines and for the queries alike, and sends each batch's lines and their
``tsvector`` values by binary ``COPY``: the server parses no text, and a line with more than 1 MiB
of distinct words (past a ``tsvector``'s size) is indexed by its first ones instead of failing
the push.

Errors: a server that cannot be reached, refused credentials or a failing query are one
message and exit 5 (`StoreUnavailable`); the password is never part of it.
"""

from __future__ import annotations

import re
import struct
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
        # The tsvectors made here and sent by binary COPY (`copy_tsvectors`), not parsed by
        # the server's to_tsvector (README, "Session store": measured).
        copy_tsvectors(cur, "tt_fts", rows)

    def unindex_text(self, cur: Any, line_id: int, text: str) -> None:
        cur.execute("DELETE FROM tt_fts WHERE line_id = %s", (line_id,))

    def search_sql(self, limit: int) -> tuple[str, Callable[[str], tuple[str, ...]]]:
        # The index first (MATERIALIZED): without statistics on a freshly pushed store the
        # planner would walk every line of every session and filter (97 ms vs a GIN lookup).
        sql = (
            f"WITH m AS MATERIALIZED (SELECT line_id FROM tt_fts WHERE tsv @@ {_QUERY}) "
            "SELECT l.stream_id, s.project_key, s.session_id, s.subpath, l.version, l.seq, l.uuid "
            "FROM m JOIN tt_line l ON l.id = m.line_id JOIN tt_stream s ON s.id = l.stream_id AND s.current_version = l.version "
            f"ORDER BY m.line_id DESC LIMIT {int(limit)}"
        )
        return sql, query_params

    def search_ids_sql(self, limit: int) -> tuple[str, Callable[[str], tuple[str, ...]]]:
        sql = f"SELECT line_id FROM tt_fts WHERE tsv @@ {_QUERY} ORDER BY line_id DESC LIMIT {int(limit)}"
        return sql, query_params


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


#: A search: the lines whose lexemes (`lexemes`) hold every word of the pattern, or, for
#: the lines of a store made before tt cut them itself, what ``plainto_tsquery`` makes of
#: its words (the server's parser gave other lexemes on 0.7% of the fixtures' lines).
_QUERY = "(?::tsquery || plainto_tsquery('simple', ?))"


def query_params(pattern: str) -> tuple[str, str]:
    """`_QUERY`'s parameters: the tsquery of the pattern's lexemes that an index can hold
    (each quoted: `words` leaves no quote or backslash in a word; a longer one the server
    refuses in a tsquery, and no line is indexed by it), and its words for
    ``plainto_tsquery``."""
    return " & ".join(f"'{w}'" for w in lexemes(pattern) if len(w.encode()) <= MAX_LEXEME), words(pattern)


#: PostgreSQL's limits (tsvector.h): a lexeme's bytes (MAXSTRLEN), a tsvector's lexeme bytes
#: (MAXSTRPOS). ``to_tsvector`` refuses a text past the second ("string is too long for
#: tsvector"), which failed a push of a line with over 1 MB of distinct words.
MAX_LEXEME = (1 << 11) - 1
MAX_LEXEMES_BYTES = (1 << 20) - 1


def lexemes(text: str) -> list[str]:
    """The index's terms for ``text``: the `words` of it lowercased (Python's case mapping,
    on the lines and the queries alike, whatever the server's locale; lowercased first, since
    lowering can make a mark that cuts a word: ``İ``), each once, in the order they first come."""
    return list(dict.fromkeys(words(text.lower()).split()))


def tsvector_binary(text: str) -> bytes:
    """The ``tsvector`` of `lexemes` ``(text)`` in PostgreSQL's binary form (``tsvectorsend``:
    a count, then each lexeme NUL-terminated with its number of positions, 0; sorted by
    their bytes, as the server keeps them). A line whose distinct words pass the server's
    limit keeps the first ones (1 MiB of them): the line is still stored whole, and found
    by those words."""
    out: list[bytes] = []
    size = 0
    for w in lexemes(text):
        b = w.encode()
        if len(b) > MAX_LEXEME:
            continue  # as to_tsvector drops it ("word is too long to be indexed")
        size += len(b)
        if size > MAX_LEXEMES_BYTES:
            break
        out.append(b)
    out.sort()
    return _COUNT.pack(len(out)) + b"".join(b + b"\x00\x00\x00" for b in out)


_COUNT = struct.Struct("!i")
#: A binary COPY's header, and a row's start: two fields, an int8 line id, the tsvector's length.
_COPY_HEAD = b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0)
_ROW = struct.Struct("!hiqi")


def copy_tsvectors(cur: Any, table: str, rows: list[tuple[int, str]]) -> None:
    """``(line id, text)`` rows into ``table`` ``(line_id, tsv)``, one binary COPY for the
    batch (the tsvector has no psycopg adapter: the stream is written whole)."""
    if not rows:
        return
    out = [_COPY_HEAD]
    pack = _ROW.pack
    for i, t in rows:
        tsv = tsvector_binary(t)
        out.append(pack(2, 8, i, len(tsv)))
        out.append(tsv)
    out.append(b"\xff\xff")
    with cur.copy(f"COPY {table} (line_id, tsv) FROM STDIN (FORMAT BINARY)") as copy:
        copy.write(b"".join(out))


def open_postgres(url: str, clock: Callable[[], int], *, create: bool = True) -> Store:
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
    store.init_schema(create=create)
    return store
