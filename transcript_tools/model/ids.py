"""Session ids: the one pattern a session id (a transcript's file stem, a bundle's
manifest, a ``--resume`` argument) and a uuid in a record are checked with.

A session id is a uuid written as 8-4-4-4-12 hex digits. Either case: Claude Code
2.1.332 takes ``--session-id`` with upper-case hex and writes ``<THAT ID>.jsonl`` with
the id as given in every ``sessionId``; ``--resume <THAT ID>`` finds it again. It looks
the file up by its exact name (``--resume`` with the id lower-cased answers "No
conversation found with session ID" on a case-sensitive file system), so an id is never
case-folded here: it names its file as written. The Agent SDK's ``_UUID_RE`` (0.2.189)
ignores case too. Evidence: ``tests/model/test_ids.py``; docs/format.md §1.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import TypeGuard

#: A uuid, either case; match with ``fullmatch``.
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


def is_session_id(value: object) -> TypeGuard[str]:
    """True when ``value`` is a string in a session id's form (a uuid, either case)."""
    return isinstance(value, str) and UUID.fullmatch(value) is not None
