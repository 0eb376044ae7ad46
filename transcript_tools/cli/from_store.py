"""``--store URL`` on ``ls``, ``search``, ``show``, ``stats``, ``validate`` and ``resume``: the
option and its usage rules. ``show``, ``stats``, ``validate`` and ``resume`` read a stored
session materialised into a private temporary config dir
(`store.files_materialise.materialised`), with their own file code; ``resume`` pushes
its turn back.

Exit codes are the store's: 3 no such session, 4 a damaged SQLite file, 5 an unreachable
PostgreSQL or refused credentials (the URL's password is never shown).
"""

from __future__ import annotations

from typing import Any

import click

from ..model.errors import UsageError

STORE_HELP = "Work from a session store (sqlite:///PATH or postgresql://…) instead of the config dir."


def store_option(f: Any) -> Any:
    """The one ``--store URL`` of ls, search, show, stats, validate and resume (same help)."""
    return click.option("--store", "store_url", metavar="URL", default=None, help=STORE_HELP)(f)


def no_local_scope(store_url: str | None, **given: Any) -> None:
    """Options that pick local files make no sense with ``--store``: a usage error."""
    if store_url is None:
        return
    bad = [name for name, v in given.items() if v]
    if bad:
        raise UsageError(f"--store names stored sessions by id: drop {', '.join(bad)}")
