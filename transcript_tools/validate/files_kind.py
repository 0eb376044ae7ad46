"""Whether a checked file is a transcript at all, by the one rule every command shares.

File side (it reads the head of the file to name what the file looks like); imports no
other verb's code, so `validate.files` and `catalog.files` can both use it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..edge.reader import read_head_tail
from ..model.lines import LOOKS_LIKE_BYTES, decode_line, looks_like

if TYPE_CHECKING:
    from pathlib import Path

    from .core import Report


#: What `not_transcript` says of a file of JSON objects none of which is a Claude Code record.
NO_RECORD = "no Claude Code record (type + sessionId) in its first or last 64 KiB"


def not_transcript(path: Path) -> str | None:
    """The one rule every command that names a file applies (`require_transcript`,
    `settle_not_transcript`): what the file looks like when it is not a transcript, else None.

    A transcript has a record with a string ``type`` and a ``sessionId`` in its first or last
    64 KiB (both: a crash can leave a long NUL run at the start of a real session).
    """
    head, tail, st = read_head_tail(path)
    objects = False
    for n, line in enumerate((head.split(b"\n") + tail.split(b"\n")[1:])[:800], 1):
        for e in decode_line(n, 0, line, b"\n", is_last=False).entries:
            objects = True
            if isinstance(e.record.get("type"), str) and isinstance(e.record.get("sessionId"), str):
                return None
    # No JSON object at all: named as `lines.looks_like` names it.
    return NO_RECORD if objects else looks_like(head, st.st_size)


def require_transcript(path: Path) -> None:
    """Refuse a file that is not a Claude Code transcript (`not_transcript`): one clear error
    (`NotATranscript`, exit 4) instead of an empty rendering or, for delete, a lost file. The
    CLI's commands and the Python API's functions that name a file both ask it."""
    from ..model.errors import NotATranscript

    what = not_transcript(path)
    if what is not None:
        raise NotATranscript(f"{path}: {what}; this is not a transcript")


def settle_not_transcript(report: Report, path: Path) -> Report:
    """The one rule for "not a transcript" (tt validate FILE, DIR, --all and tt ls --check
    alike): no line is a whole JSON object, or (a file with no conversation) the objects are
    no Claude Code record (`not_transcript`, the rule of every other command). Listing each
    line of such a file as damage (a pretty-printed JSON file is a hundred truncated records)
    would describe a file it is not."""
    if report.entries == 0:
        head, _, _ = read_head_tail(path, LOOKS_LIKE_BYTES)
        report.not_transcript = looks_like(head, report.size)
        report.diagnostics = []
    elif any(d.code == "no-conversation" for d in report.diagnostics) and not_transcript(path) is not None:
        # Only a file with no conversation can lack a Claude Code record: the full rule is
        # read for those alone. Found by a new user: `tt validate` called {"a": 1} a
        # damaged transcript where every other command said "not a transcript".
        report.not_transcript = NO_RECORD
        report.diagnostics = []
    return report
