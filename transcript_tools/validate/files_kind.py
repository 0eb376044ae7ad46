"""Whether a checked file is a transcript at all, by the one rule every command shares.

File side (it reads the head of the file to name what the file looks like); imports no
other verb's code, so `validate.files` and `catalog.files` can both use it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..edge.reader import iter_lines, read_head_tail
from ..model.lines import LOOKS_LIKE_BYTES, looks_like

if TYPE_CHECKING:
    from pathlib import Path

    from .core import Report


def settle_not_transcript(report: Report, path: Path) -> Report:
    """The one rule for "not a transcript" (tt validate FILE, DIR, --all and tt ls --check
    alike): no line is a whole JSON object. Listing each line of such a file as damage (a
    pretty-printed JSON file is a hundred truncated records) would describe a file it is not."""
    if report.entries == 0:
        head, _, _ = read_head_tail(path, LOOKS_LIKE_BYTES)
        report.not_transcript = looks_like(head, report.size)
        report.diagnostics = []
    return report


def not_a_transcript(path: Path) -> str | None:
    """`settle_not_transcript`'s rule without validating the rest: what the file looks like
    (`lines.looks_like`) when no line of it is a JSON object, None when one is, however
    damaged the rest. Reads up to the first line holding a record: the first line of any
    file Claude Code wrote; the whole file only when there is none."""
    for line in iter_lines(path):
        if line.entries:
            return None
    head, _, st = read_head_tail(path, LOOKS_LIKE_BYTES)
    return looks_like(head, st.st_size)
