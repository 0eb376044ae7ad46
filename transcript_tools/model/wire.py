"""Claude Code's serialisation: how a record and a timestamp look on the wire (in the file).

Claude Code writes each record with ``JSON.stringify`` (compact separators, non-ASCII
as is) and timestamps as ``YYYY-MM-DDTHH:MM:SS.sssZ``. Readers depend on both: with
``": "`` separators Claude Code 2.1.332 does not find the session, and ccusage drops lines
with ``+00:00`` timestamps (docs/format.md §12). `dumps` and `iso` produce exactly that.

Invariants: pure (no I/O, no clock: `iso` formats the instant it is given; the current
time is the edge's, `edge.writer.iso_now`). The file writer (`edge/writer.py`) and every
pure module that builds records import the serialisation from here.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import orjson


def dumps(record: Any) -> bytes:
    """One record as Claude Code writes it (``JSON.stringify``), without the newline
    (`dumps_lenient`'s standard-encoder form where orjson cannot write it)."""
    return dumps_lenient(record)


def dumps_lenient(record: Any, option: int = 0) -> bytes:
    """`dumps` (with orjson's ``option``: ``OPT_INDENT_2``, ``OPT_APPEND_NEWLINE``,
    ``OPT_NON_STR_KEYS``), and for what orjson refuses the standard encoder's form of the
    same: integers past 64 bits (decoded leniently from a damaged line; JSON.stringify
    would have written them as rounded doubles), kept exactly, and nesting past the 254
    levels orjson writes (it reads 1,024: a tool's deeply nested JSON output; the CLI's
    recursion limit fits that depth, `lines.MAX_JSON_DEPTH`)."""
    try:
        return orjson.dumps(record, option=option)
    except orjson.JSONEncodeError:
        indent = 2 if option & orjson.OPT_INDENT_2 else None
        text = json.dumps(
            record, ensure_ascii=False, indent=indent, separators=None if indent else (",", ":")
        )
        out = text.encode("utf-8", "surrogatepass")
        return out + b"\n" if option & orjson.OPT_APPEND_NEWLINE else out


def iso(dt: datetime) -> str:
    """``2026-11-29T14:46:00.123Z``: milliseconds and Z, as JavaScript's toISOString."""
    dt = dt.astimezone(UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"
