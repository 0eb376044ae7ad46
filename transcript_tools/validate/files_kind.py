"""Whether a checked file is a transcript at all, by the one rule every command shares.

File side (it reads the head of the file to name what the file looks like); imports no
other verb's code, so `validate.files` and `catalog.files` can both use it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from ..edge.reader import read_head_tail
from ..model.lines import LOOKS_LIKE_BYTES, decode_line, looks_like

if TYPE_CHECKING:
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
    return not_transcript_bytes(head, tail, st.st_size)


def not_transcript_bytes(head: bytes, tail: bytes, size: int) -> str | None:
    """`not_transcript` on a file's first and last 64 KiB, read already (`tt ls`)."""
    objects = False
    for n, line in enumerate((head.split(b"\n") + tail.split(b"\n")[1:])[:800], 1):
        for e in decode_line(n, 0, line, b"\n", is_last=False).entries:
            objects = True
            if isinstance(e.record.get("type"), str) and isinstance(e.record.get("sessionId"), str):
                return None
    # No JSON object at all: named as `lines.looks_like` names it.
    return NO_RECORD if objects else looks_like(head, size)


#: How much of a file `split_transcripts` reads first: a transcript's first record names
#: its type and session within it (nearly always: a first line past 4 KiB, or a NUL run a
#: crash left at the start, takes the full rule).
_FIRST_BYTES = 4096


#: Claude Code's own first lines that carry no ``sessionId``: a session's first line is one
#: of these in 750 of the 2,000 sessions of the `tt ls` bench set (the rest have one).
_FIRST_WITHOUT_SESSION = frozenset({"file-history-snapshot", "summary"})


def _first_line_is_a_record(first: bytes) -> bool:
    """Whether ``first`` begins with a whole line that is a Claude Code record: a string
    ``type`` with a ``sessionId``, or one of the first lines that has none. (The two keys
    anywhere in the bytes kept another tool's pretty-printed JSON as a session.)"""
    end = first.find(b"\n")
    if end < 0:
        return False
    try:
        rec = orjson.loads(first[:end])
    except orjson.JSONDecodeError:
        return False
    if type(rec) is not dict:
        return False
    t = rec.get("type")
    return isinstance(t, str) and (isinstance(rec.get("sessionId"), str) or t in _FIRST_WITHOUT_SESSION)


def split_transcripts(paths: Iterable[Path]) -> tuple[list[Path], list[tuple[Path, str]]]:
    """``paths`` as (the transcripts, in order; the others with what each looks like), by
    `not_transcript`'s rule: for the commands that read every session of a folder (stats,
    search), which would otherwise count a binary or empty file named like a session as
    one, and note each of its lines as damage. A file that cannot be opened is kept: the
    command's own read reports it. A cheap first read settles nearly every
    file; only the others are read as `not_transcript` reads them."""
    kept: list[Path] = []
    others: list[tuple[Path, str]] = []
    for p in paths:
        try:
            with open(p, "rb") as f:
                first = f.read(_FIRST_BYTES)
        except OSError:
            kept.append(p)  # the command's own read reports it
            continue
        if _first_line_is_a_record(first):
            kept.append(p)
            continue
        what = not_transcript(p)
        if what is None:
            kept.append(p)
        else:
            others.append((p, what))
    return kept, others


def require_transcript(path: Path) -> None:
    """Refuse a file that is not a Claude Code transcript (`not_transcript`): one clear error
    (`NotATranscript`, exit 4) instead of an empty rendering or, for delete, a lost file. The
    CLI's commands and the Python API's functions that name a file both ask it."""
    from ..model.errors import NotATranscript

    what = not_transcript(path)
    if what is not None:
        raise NotATranscript(f"{path}: {what}; this is not a transcript")


def require_session_file(path: Path, verb: str) -> None:
    """`require_transcript`, and a subagent's transcript (``agent-*.jsonl``) refused for a
    command that works on a session (fork, rewind, export, resume, chat, rename, tag): a
    `UsageError` naming its session, the same from the CLI and the Python API. (Each verb
    said something else, and rename appended the title to the subagent's file, where no
    listing reads it.)"""
    require_transcript(path)
    if Path(path).name.startswith("agent-"):
        from ..model.errors import UsageError

        sid = subagent_session(Path(path))
        of = f" of session {sid}" if sid else ""
        rest = {"rename": " TITLE", "tag": " TAG"}.get(verb, "")
        raise UsageError(
            f"{path}: a subagent's transcript{of}; tt {verb} works on a session",
            hint=f"tt {verb} {sid}{rest}" if sid else "name the session's own <id>.jsonl",
        )


def subagent_session(path: Path) -> str | None:
    """The session a subagent's transcript belongs to: the one whose folder holds it
    (`claude_dir.session_of_subagent`), else the ``sessionId`` its records carry (a copy
    outside a config dir: a new user was told to rename one to that id)."""
    from ..edge.claude_dir import session_of_subagent
    from ..model.ids import is_session_id
    from ..model.titles import first_record_field

    sid = session_of_subagent(path)
    if sid is None:
        head, _tail, _st = read_head_tail(path, LOOKS_LIKE_BYTES)
        named = first_record_field(head, "sessionId")
        sid = named if named and is_session_id(named) else None
    return sid


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
