"""Local times as the views print them (imports nothing heavy).

`tt search` and `tt store search` print times too: this module keeps them from importing the
listing and the transcript views (rich tables, panels, the show model) only for these two.

Invariants: no I/O; the local time zone is the one printing (the terminal's reader's).
"""

from __future__ import annotations

from datetime import datetime


def local_time(ms: int, long: bool = True) -> str:
    return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M" if long else "%m-%d %H:%M")


class Clock:
    """Local times, with the date only when it changes."""

    def __init__(self) -> None:
        self.day: str | None = None

    def __call__(self, ts: str | None) -> str:
        if not ts:
            return ""
        try:
            dt = datetime.fromisoformat(ts[:-1] + "+00:00" if ts.endswith("Z") else ts).astimezone()
        except ValueError:
            return ts
        day = dt.strftime("%Y-%m-%d")
        if day != self.day:
            self.day = day
            return dt.strftime("%Y-%m-%d %H:%M:%S")
        return dt.strftime("%H:%M:%S")
