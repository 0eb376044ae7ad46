"""The system clock, at the edge: the one place a resume reads what time it is.

`system_clock()` gives the `lifecycle.Clock` of this process: now (UTC), and where local
midnight of a date falls in the process's time zone (``TZ``, as Claude Code's runtime
reads it), DST included.

``TT_NOW`` (an ISO 8601 instant, e.g. ``2026-11-29T12:00:00Z``) replaces "now": to
reproduce a decision of a past or future day, and for tests that run the CLI as a
subprocess. A value that does not parse is a usage error, never silently ignored.
"""

from __future__ import annotations

import os
from datetime import UTC, date, datetime

from ..model.errors import UsageError
from ..model.lifecycle import Clock

ENV = "TT_NOW"


def _local_midnight(d: date) -> datetime:
    # A naive datetime's astimezone() asks the C library (mktime) for that date's offset.
    return datetime(d.year, d.month, d.day).astimezone().astimezone(UTC)


def parse_instant(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"{ENV}={text!r} is not an ISO 8601 date and time", hint="e.g. TT_NOW=2026-11-29T12:00:00Z"
        ) from None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def system_clock() -> Clock:
    given = os.environ.get(ENV)
    now = parse_instant(given) if given else datetime.now(UTC)
    return Clock(now, _local_midnight)
