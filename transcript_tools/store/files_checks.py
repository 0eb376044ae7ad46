"""`tt validate`'s checks on the lines a push has decoded already: the file side.

`tt store push` keeps each version's diagnostics. It reads the whole file and decodes each
line once for its own columns (`prepare.parse_lines`); `Checks` hands those same decoded
lines to the `validate.core.Validator` (`feed_parsed`) instead of letting
`validate.files.validate_path` read and decode the file a second time. Everything else is
what `validate_path` does, in the same order: the same validator settings (the default cap,
the schemas, the session id from the file name, subagent files by name), the second pass
over the part a resume loads when the file is past the cap (here from the bytes in
memory), parents another file of the session holds (`siblings.found_elsewhere`), and the
one rule for a file that is not a transcript (`files_kind.settle_not_transcript`).

Invariant: for the bytes of a file, `Checks` gives the diagnostics `validate_path` gives
(``tests/store/test_push_checks.py``: every real fixture and damaged files).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..edge.reader import MAX_TRANSCRIPT_READ_BYTES
from ..edge.siblings import found_elsewhere
from ..model.lines import decode_line
from ..model.session import session_id_from_name
from ..validate.core import Validator
from ..validate.files import is_subagent_path
from ..validate.files_kind import settle_not_transcript
from ..validate.files_schema import default_checker
from .prepare import Parsed, raw_lines

#: The cap `tt validate` applies by default (``--max-bytes``); read when a `Checks` is made.
CAP = MAX_TRANSCRIPT_READ_BYTES


class Checks:
    """The validator of one file, fed the decoded lines (`feed`), then `diagnostics`."""

    def __init__(self, path: Path, size: int, *, cap: int | None = None) -> None:
        self.path = path
        sub = is_subagent_path(path)
        checker = default_checker()
        self.v = Validator(
            str(path),
            size=size,
            cap=CAP if cap is None else cap,
            schema_check=checker.check,
            fast_schema=checker.fast_validators,
            expected_session=None if sub else session_id_from_name(path.name),
            is_subagent=sub,
        )

    def feed(self, lines: Iterable[Parsed]) -> None:
        """Every line of the file, in order (`prepare.parse_lines`)."""
        self.v.feed_parsed(lines)

    def diagnostics(self, data: bytes) -> list[dict[str, Any]]:
        """The report's diagnostics, as stored. ``data``: the file's bytes (what was fed)."""
        v = self.v
        start = v.need_second_pass()
        if start is not None:
            v.feed_facts(
                decode_line(n, off, body, term, is_last=last)
                for n, off, body, term, last in raw_lines(data, start)
            )
        path = self.path
        report = v.finish(lambda keys: found_elsewhere(path, keys))
        return [d.to_dict() for d in settle_not_transcript(report, path).diagnostics]
