"""Which store a command uses: ``--store URL``, else ``$TT_STORE``, else the default file.

URLs: ``sqlite:///relative/path``, ``sqlite:////absolute/path`` (SQLAlchemy's rule), a
bare path (an SQLite file), ``postgresql://…`` or ``postgres://…`` (libpq's URL; missing
parts come from the ``PG*`` environment variables). Anything else with a scheme
(``sqlite://x``, ``sqlite:x``, ``mysql://…``) is a usage error that shows these forms
(`FORMS`), never a path: ``sqlite://x`` read as a file name said "no such store". The default is
``<config dir>/tt-store.sqlite3``. `redacted` is the form used in every message: a
password in the URL never appears in output.

The edge that opens a store (`open_store`) lives here too: it picks the engine adapter and
gives it the wall clock (epoch milliseconds), the one clock the store uses.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..model.errors import UsageError
from ..store.engine import Store
from ..store.model import redacted

DEFAULT_NAME = "tt-store.sqlite3"


#: The accepted forms, as a usage error shows them.
FORMS = "sqlite:///relative/path, sqlite:////absolute/path, a plain file path, or postgresql://user@host/db"


def default_url(config: Path) -> str:
    return f"sqlite:///{config / DEFAULT_NAME}"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def resolve_url(url: str | None, config: Path) -> str:
    return url or os.environ.get("TT_STORE") or default_url(config)


def open_store(url: str | None, *, config: Path, create: bool = True) -> Store:
    u = resolve_url(url, config)
    if u.startswith(("postgresql://", "postgres://")):
        from .store_postgres import open_postgres

        return open_postgres(u, now_ms, create=create)
    if ("://" in u or u.startswith("sqlite:")) and not u.startswith("sqlite:///"):
        raise UsageError(f"{redacted(u)}: not a store URL; the forms are {FORMS}")
    path = Path(u[len("sqlite:///") :] if u.startswith("sqlite:///") else u).expanduser()
    from .store_sqlite import open_sqlite

    return open_sqlite(path, now_ms, create=create, url=u)
