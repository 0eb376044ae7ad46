"""Whether a checked file is a transcript at all, by the one rule every command shares.

File side (it reads the head of the file to name what the file looks like); imports no
other verb's code, so `validate.files` and `catalog.files` can both use it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..edge.reader import read_head_tail
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
