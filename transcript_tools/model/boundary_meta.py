"""A compact boundary's ``compactMetadata``: when it is missing, and what restores it.

Claude Code writes ``compactMetadata`` on every ``compact_boundary`` (``trigger``,
``preTokens``, ``durationMs``, and from 2.1.x ``preservedSegment``/``preservedMessages``).
A boundary without it (written by another tool, omnigent-ai/omnigent#1955) is not a
request the API refuses: both pinned CLIs resume the file and the strict stand-in accepts
the request (tests/model/test_boundary_meta_claude.py). What breaks is the *next*
compaction: Claude Code 2.1.197 reads every boundary's metadata and ``/compact`` (and
auto-compaction, on every turn once the context is full) fails with "Error during
compaction: Cannot destructure property 'cumulativeDroppedTokens' from null or undefined
value"; 2.1.332 compacts. So the code (``compact-metadata-missing``) is a chain-family
warning: the session works until it needs compacting, then 2.1.197 wedges.

The fix (``restore-compact-metadata``) writes what the file holds, and nothing else:

- ``trigger``: ``"manual"`` when the boundary is followed, before the next response, by
  the ``<command-name>/compact</command-name>`` record Claude Code writes for ``/compact``
  (2.1.197 and 2.1.332 alike); else ``"auto"``;
- ``preTokens``: the usage of the last main-chain response before the boundary (input,
  cache creation, cache read and output tokens): what both pinned CLIs record there
  (equal on their generated sessions: 21508 and 15143); left out when no response
  before it has a usage.

``preservedSegment`` is not restored: which messages Claude Code kept verbatim is not
written anywhere else, and a wrong segment would splice the wrong messages into every
resume. Without it both CLIs resume from the summary on, as they do before the fix.

Invariants: pure; `BoundaryMeta` is fed records in file order and holds one at most
(the last response, whose usage is read only when a bare boundary follows it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: The user record Claude Code writes after a boundary made by ``/compact``.
COMPACT_COMMAND = "<command-name>/compact</command-name>"


def usage_tokens(record: dict[str, Any]) -> int | None:
    """The context size an assistant record's usage reports (None: no usage)."""
    msg = record.get("message")
    usage = msg.get("usage") if isinstance(msg, dict) else None
    if not isinstance(usage, dict):
        return None
    total = 0
    for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"):
        v = usage.get(k)
        if type(v) is int:
            total += v
    return total


def lacks_metadata(record: dict[str, Any]) -> bool:
    return record.get("subtype") == "compact_boundary" and not isinstance(record.get("compactMetadata"), dict)


@dataclass(slots=True)
class BoundaryMeta:
    """Fed the main-chain records in file order: for each boundary without metadata
    (by the caller's key), the metadata the file supports."""

    found: dict[Any, dict[str, Any]] = field(default_factory=dict)
    _last: dict[str, Any] | None = None  # the last response seen
    _open: Any = None  # the key of a bare boundary awaiting its /compact record

    def boundary(self, key: Any) -> None:
        md: dict[str, Any] = {"trigger": "auto"}
        tokens = usage_tokens(self._last) if self._last is not None else None
        if tokens is not None:
            md["preTokens"] = tokens
        self.found[key] = md
        self._open = key

    def response(self, record: dict[str, Any]) -> None:
        msg = record.get("message")
        # Claude Code's own error and placeholder messages have zero usage.
        if isinstance(msg, dict) and msg.get("model") != "<synthetic>":
            self._last = record
        self._open = None

    def prompt(self, record: dict[str, Any]) -> None:
        if self._open is None:
            return
        msg = record.get("message")
        c = msg.get("content") if isinstance(msg, dict) else None
        if isinstance(c, str) and c.startswith(COMPACT_COMMAND):
            self.found[self._open]["trigger"] = "manual"
            self._open = None
