"""A stored session materialised into a private temporary config dir, for the commands
that take ``--store URL`` (``show``, ``stats``, ``validate``, ``resume``), so each keeps its
own file code path and so its byte-faithful reading.

The bytes written are exactly a version's stored bytes (`store.files.pull_session`,
subagents (2.0.x's beside the session too), the session's other files and its
file-history included), into ``mkdtemp``
(mode 0700), removed when the context ends. With ``chdir`` (``show``, ``stats``,
``validate``) the working directory is ``<temp>/projects`` meanwhile and each session is
named ``<project>/<id>.jsonl``, the name ``tt ls --store`` and ``tt search --store`` give
it: a command's output is then the output for the original file, that name in place of
its path.

Without ``chdir`` (``resume``) what the command appended is pushed back when the context
ends, however it ends (`store.files.push_session`: the new lines extend the current
version, as a push of the local file would; a fork is pushed as the new session). If the
push fails the temporary folder is kept and named in the error, so the turn is never lost.

Invariants: never prints; errors are the store's `errors` classes (3 no such session,
4 a damaged SQLite file, 5 an unreachable PostgreSQL or refused credentials; the URL's
password is never shown).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..edge import claude_dir as cfg
from ..model.errors import TTError


@dataclass(slots=True)
class Materialised:
    store: Any  # sessionstore.Store
    config: Path  # the temporary config dir
    refs: list[cfg.SessionRef]  # the main transcripts, relative to config/projects when chdir
    sizes: dict[Path, int]  # absolute path -> size as pulled


@contextmanager
def materialised(url: str, specs: list[str], *, chdir: bool = True) -> Iterator[Materialised]:
    """The stored sessions ``specs`` (ids or unique prefixes), current versions, written under
    a temporary config dir; with ``chdir`` the working directory is its ``projects`` folder
    for the duration and the refs are relative (``<project>/<id>.jsonl``)."""
    from ..edge.store_url import open_store
    from ..store.files import find_session, pull_session, session_arg

    st = open_store(url, config=cfg.config_dir(), create=False)
    found = [find_session(st, session_arg(s)) for s in specs]
    tmp = Path(tempfile.mkdtemp(prefix="tt-store-"))
    keep = False
    old = os.getcwd()
    try:
        refs = []
        done: set[tuple[str, str]] = set()
        for streams in found:
            main = next(s for s in streams if s.key.subpath == "")
            rel = Path(main.key.project_key) / f"{main.key.session_id}.jsonl"
            if (main.key.project_key, main.key.session_id) not in done:
                pull_session(st, streams, config=tmp)
                done.add((main.key.project_key, main.key.session_id))
            refs.append(cfg.SessionRef(rel if chdir else tmp / "projects" / rel, main.key.session_id))
        sizes = {p: p.stat().st_size for p in (tmp / "projects").rglob("*.jsonl")}
        if chdir:
            os.chdir(tmp / "projects")
        m = Materialised(st, tmp, refs, sizes)
        try:
            yield m
        finally:
            if not chdir:  # resume: whatever the turn's end (an error, Ctrl-C), what it wrote is pushed
                keep = True
                _push_back(m)
                keep = False
    finally:
        if chdir:
            os.chdir(old)
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def _push_back(m: Materialised) -> None:
    """Push every transcript that grew or appeared (a resumed turn, a fork); on failure the
    error (its exit code) names the kept file."""
    from ..store.files import push_session

    changed = sorted(
        {
            _main_of(p, m.config)
            for p in (m.config / "projects").rglob("*.jsonl")
            if m.sizes.get(p) != p.stat().st_size
        }
    )
    for p in changed:
        try:
            push_session(m.store, p, config=m.config)
        except TTError as e:
            # One message, the store's exit code (5 server, 6 write, …), and the copy named.
            err = type(e)(f"the new turn is not in the store ({e.message}); it is kept in {p}", hint=e.hint)
            raise err from e


def _main_of(p: Path, config: Path) -> Path:
    """The main transcript a transcript belongs to (a subagent's session file)."""
    rel = p.relative_to(config / "projects")
    if len(rel.parts) == 2 and p.name.startswith("agent-") and not cfg.is_session_file(p):
        # A 2.0.x subagent beside the sessions: the session its records name.
        main = p.with_name(f"{cfg.agent_session_id(p)}.jsonl")
        return main if cfg.is_session_file(main) and main.is_file() else p
    if len(rel.parts) <= 2:
        return p
    return config / "projects" / rel.parts[0] / f"{rel.parts[1]}.jsonl"
