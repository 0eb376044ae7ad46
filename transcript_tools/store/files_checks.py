"""`tt validate`'s checks on the lines a push has decoded already: the file side.

`tt store push` keeps each version's diagnostics. It reads the whole file and decodes each
line once for its own columns (`prepare.parse_lines`); `Checks` hands those same decoded
lines to the `validate.core.Validator` (`feed_parsed`) instead of letting
`validate.files.validate_path` read and decode the file a second time. Everything else is
what `validate_path` does, through the same two functions: `validate.files.new_validator`
(its settings) and `validate.files.conclude` (the second pass past the cap, here over the
bytes in memory; parents another file of the session holds; the not-a-transcript rule).

Invariant: for the bytes of a file, `Checks` gives the diagnostics `validate_path` gives
(``tests/store/test_push_checks.py``: every real fixture and damaged files).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..edge.reader import MAX_TRANSCRIPT_READ_BYTES
from ..validate.files import conclude, new_validator
from .prepare import Parsed, raw_lines

#: The cap `tt validate` applies by default (``--max-bytes``); read when a `Checks` is made.
CAP = MAX_TRANSCRIPT_READ_BYTES


class Checks:
    """The validator of one file, fed the decoded lines (`feed`), then `diagnostics`."""

    def __init__(self, path: Path, size: int, *, cap: int | None = None) -> None:
        self.path = path
        self.v = new_validator(path, size, cap=CAP if cap is None else cap)

    def feed(self, lines: Iterable[Parsed]) -> None:
        """Every line of the file, in order (`prepare.parse_lines`)."""
        self.v.feed_parsed(lines)

    def diagnostics(self, data: bytes) -> list[dict[str, Any]]:
        """The report's diagnostics, as stored. ``data``: the file's bytes (what was fed)."""
        report = conclude(self.v, self.path, lambda start: raw_lines(data, start))
        return [d.to_dict() for d in report.diagnostics]
