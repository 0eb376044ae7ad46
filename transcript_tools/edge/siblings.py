"""The other files of a session, for parents Claude Code writes across files.

A session is a main file and its subagent files, and Claude Code links some entries to a
parent in another of them (`chain` module docstring):

- a compaction subagent (2.1.39, ``subagents/agent-acompact-<hex>.jsonl``) starts with
  ``isMeta`` user records (hook context) whose ``parentUuid`` names main-file entries
  (marot/spotter ``4d5611e5…/subagents/agent-acompact-e1f845.jsonl``: its first three
  records; the summariser's prompt is then parented on the last of them);
- any subagent or sidechain file whose first records hang off the main chain, and main
  records (``system/turn_duration``, reported by users) whose parent is in an agent file.

`found_elsewhere` says which of a file's unresolved parents the session's other files
hold; `validate`, `repair` and the loader then leave those links alone instead of
reporting and "repairing" them (`ChainIndex.elsewhere`).

Which files belong together:
- ``<dir>/<name>.jsonl`` (a main file): ``<dir>/<name>/subagents/**/agent-*.jsonl``
  (2.1.x) and the 2.0.x ``agent-*.jsonl`` beside it whose ``sessionId`` is ``<name>``;
- ``<dir>/<name>/subagents/**/agent-*.jsonl``: ``<dir>/<name>.jsonl`` and the other
  subagent files of that folder;
- a 2.0.x ``agent-*.jsonl`` in a project folder: the ``<sessionId>.jsonl`` beside it.

Invariants: only reads; a sibling that cannot be read holds nothing (the link then stays
dangling, as before); memory does not grow with the siblings' size (they are mapped and
scanned, never decoded).
"""

from __future__ import annotations

import mmap
import re
from collections.abc import Iterable
from pathlib import Path

from ..model.chain import key_uuid, uuid_key
from ..model.ids import is_session_id
from . import claude_dir as store

# A record's own uuid as Claude Code serialises it (compact JSON). Inside a string value
# the quotes would be escaped, so message text that mentions a uuid does not match.
_UUID_FIELD = re.compile(rb'"uuid":"([^"\\]{1,200})"')


def session_files(path: Path) -> list[Path]:
    """The other files of the session ``path`` belongs to (module docstring)."""
    subdir = _subagents_dir(path)
    if subdir is not None:
        session_dir = subdir.parent
        main: Path | None  # None below: an agent file naming no session
        main = session_dir.with_name(session_dir.name + ".jsonl")
        others = [main] if main.is_file() else []
        return others + [p for p in store.subagent_files(main) if p != path]
    if path.name.startswith("agent-"):
        sid = store.agent_session_id(path)
        own = path.with_name(f"{sid}.jsonl") if is_session_id(sid) else None
        return [own] if own is not None and own.is_file() else []
    out = store.subagent_files(path)
    if path.name.endswith(".jsonl"):
        out += store.legacy_agents_of(path)
    return out


def found_elsewhere(path: Path, keys: Iterable[bytes]) -> frozenset[bytes]:
    """Which of ``keys`` (`chain.uuid_key` of parents ``path`` does not hold) are the
    uuid of a record in another file of its session."""
    wanted = set(keys)
    if not wanted:
        return frozenset()
    found: set[bytes] = set()
    for other in session_files(path):
        _scan(other, wanted, found)
        if found == wanted:
            break
    return frozenset(found)


def names(keys: Iterable[bytes]) -> list[str]:
    return sorted(key_uuid(k) for k in keys)


def _subagents_dir(path: Path) -> Path | None:
    """The ``subagents`` folder above ``path`` (``<session>/subagents/**/agent-*.jsonl``)."""
    if not path.name.startswith("agent-"):
        return None
    for d in path.parents:
        if d.name == "subagents":
            return d
    return None


def _scan(p: Path, wanted: set[bytes], found: set[bytes]) -> None:
    try:
        with open(p, "rb") as f:
            try:
                m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError:  # an empty file cannot be mapped
                return
            with m:
                for x in _UUID_FIELD.finditer(m):
                    k = uuid_key(x.group(1).decode("utf-8", "replace"))
                    if k in wanted:
                        found.add(k)
    except OSError:
        return
