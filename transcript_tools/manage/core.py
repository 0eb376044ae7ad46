"""Session management records and plans: rename, tag, delete.

Titles and tags are metadata records appended to the session file (docs/format.md §3.6, §9).
`rename_line` and `tag_line` build them byte for byte as the Agent SDK's
``rename_session`` / ``tag_session`` do (claude-agent-sdk 0.2.189,
``_internal/session_mutations.py``): ``json.dumps`` with compact separators and ASCII
escapes, keys in the SDK's order (``{"type":"tag",...`` must open the line: the SDK's
``list_sessions`` only reads tags from lines starting with those bytes). Readers take the
last record of each kind from the file's last 64 KiB, so appending is how a title or tag
changes; an empty tag clears.

`plan_delete` decides what ``tt delete`` removes, from a survey of what exists: the
main file, its ``<session>/`` folder (subagents, tool results; what the SDK's
``delete_session`` removes too) and ``file-history/<session>/`` (the checkpoint backups),
plus 2.0.x ``agent-*.jsonl`` files beside it that name the session, and the backups and
quarantines tt wrote beside these files (``tt-backup``). A subagent transcript
named alone (``subagent_of``: `claude_dir.session_of_subagent`) is that file only, planned
as the subagent it is (``legacy-subagent`` or ``subagent``), its session left whole; a file
otherwise not named by a session id is that file only.

Invariants:
- The bytes of a record equal the SDK's for the same input (tests compare them); text
  that is not valid Unicode (lone surrogates) is refused rather than written.
- A folder is planned for removal only when the file's name is a session id, so naming
  ``notes.jsonl`` never removes a ``notes/`` folder beside it.
- Pure: no I/O; the survey and the removal are `manage.files`'.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model.errors import UsageError
from ..model.ids import is_session_id

if TYPE_CHECKING:
    from pathlib import Path

# The SDK's explicit ranges (matching the TS fallback): zero-width, directional marks and
# isolates, BOM, BMP private use.
_UNICODE_STRIP = re.compile("[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff\ue000-\uf8ff]")
_FORMAT_CATEGORIES = frozenset({"Cf", "Co", "Cn"})


def sanitize_unicode(value: str) -> str:
    """The SDK's ``_sanitize_unicode``: NFKC, then strip format, private-use and
    unassigned characters, repeated until stable (at most 10 rounds)."""
    current = value
    for _ in range(10):
        previous = current
        current = unicodedata.normalize("NFKC", current)
        current = "".join(c for c in current if unicodedata.category(c) not in _FORMAT_CATEGORIES)
        current = _UNICODE_STRIP.sub("", current)
        if current == previous:
            break
    return current


def _sdk_json(record: dict[str, str]) -> bytes:
    # Not writer.dumps: the SDK writes these with the standard library's ASCII escapes,
    # and the point is the same bytes.
    return json.dumps(record, separators=(",", ":")).encode("ascii")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_text(what: str, value: str) -> None:
    # Lone surrogates (invalid UTF-8 bytes in argv arrive as surrogate escapes) would be
    # written as \udcxx escapes, which readers treat as damage (Claude Code 2.1.132).
    # The SDK would write them; tt refuses.
    if _SURROGATE.search(value):
        raise UsageError(f"the {what} is not valid UTF-8 text")


def rename_line(session_id: str, title: str) -> bytes:
    """The ``custom-title`` line (with its newline) ``rename_session`` appends."""
    _check_text("title", title)
    stripped = title.strip()
    if not stripped:
        # As the SDK and the CLI's /rename: an empty title is refused, not a "clear".
        raise UsageError("the title is empty", hint="give a title with some text in it")
    return _sdk_json({"type": "custom-title", "customTitle": stripped, "sessionId": session_id}) + b"\n"


def tag_line(session_id: str, tag: str | None) -> bytes:
    """The ``tag`` line ``tag_session`` appends; ``None`` or ``""`` clears the tag."""
    if tag is not None and tag != "":
        _check_text("tag", tag)
        sanitized = sanitize_unicode(tag).strip()
        if not sanitized:
            raise UsageError(
                f"the tag {tag!r} is empty once invisible characters are removed", hint='clear it with ""'
            )
        tag = sanitized
    return _sdk_json({"type": "tag", "tag": tag or "", "sessionId": session_id}) + b"\n"


# --- delete -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Found:
    """Something that exists on disk: a file, or a folder with its file count and size."""

    path: Path
    is_dir: bool
    files: int
    bytes: int


@dataclass(frozen=True, slots=True)
class Target:
    path: Path
    kind: str  # transcript | session-folder | file-history | legacy-subagent | subagent | subagent-meta | tt-backup
    is_dir: bool
    files: int
    bytes: int

    def to_dict(self) -> dict[str, object]:
        return {
            "path": str(self.path),
            "kind": self.kind,
            "is_dir": self.is_dir,
            "files": self.files,
            "bytes": self.bytes,
        }


@dataclass(frozen=True, slots=True)
class DeletePlan:
    session_id: str | None  # the session deleted (None: the file's name is no session id)
    targets: tuple[Target, ...]
    subagent_of: str | None = None  # a subagent transcript alone: its session, which stays

    @property
    def files(self) -> int:
        return sum(t.files for t in self.targets)

    @property
    def bytes(self) -> int:
        return sum(t.bytes for t in self.targets)

    def to_dict(self) -> dict[str, object]:
        return {
            "session_id": self.session_id,
            "subagent_of": self.subagent_of,
            "targets": [t.to_dict() for t in self.targets],
            "files": self.files,
            "bytes": self.bytes,
        }


def plan_delete(
    main: Found,
    *,
    session_folder: Found | None = None,
    file_history: Found | None = None,
    legacy_subagents: Iterable[Found] = (),
    subagent_of: str | None = None,
    by_products: Iterable[Found] = (),
    sidecars: Iterable[Found] = (),
) -> DeletePlan:
    """What ``tt delete`` removes for the transcript ``main`` (see module docstring).

    The caller surveys ``<project>/<stem>/``, ``<config>/file-history/<stem>/``, the
    2.0.x agent files whose records name the session, and ``by_products``: the backups
    and quarantines tt wrote beside these files (``<id>.jsonl.bak``, its timestamped
    siblings, ``….quarantine.jsonl``: whole copies of the session, the secrets a redaction
    took out included, which a delete that kept them would leave behind unlisted); folders
    are kept in the plan only when ``stem`` is a session id.
    """
    if main.is_dir:
        raise UsageError(f"{main.path}: is a directory, not a session transcript")
    stem = main.path.name[:-6] if main.path.name.endswith(".jsonl") else main.path.stem
    sid = stem if is_session_id(stem) else None
    kept = [Target(f.path, "tt-backup", False, 1, f.bytes) for f in by_products if not f.is_dir]
    if sid is None and subagent_of is not None:
        # A live subagent's file (found by a new user: it was "session (no session id)").
        kind = "subagent" if "subagents" in main.path.parts else "legacy-subagent"
        # Its `.meta.json` goes with it (a new user's delete left it, and its backup).
        metas = [Target(f.path, "subagent-meta", False, 1, f.bytes) for f in sidecars if not f.is_dir]
        return DeletePlan(None, (Target(main.path, kind, False, 1, main.bytes), *metas, *kept), subagent_of)
    targets = [Target(main.path, "transcript", False, 1, main.bytes), *kept]
    if sid is not None:
        if session_folder is not None and session_folder.path.name == sid:
            targets.append(
                Target(
                    session_folder.path,
                    "session-folder",
                    session_folder.is_dir,
                    session_folder.files,
                    session_folder.bytes,
                )
            )
        if file_history is not None and file_history.path.name == sid:
            targets.append(
                Target(
                    file_history.path,
                    "file-history",
                    file_history.is_dir,
                    file_history.files,
                    file_history.bytes,
                )
            )
        for f in legacy_subagents:
            if not f.is_dir and f.path.parent == main.path.parent and f.path.name.startswith("agent-"):
                targets.append(Target(f.path, "legacy-subagent", False, 1, f.bytes))
    return DeletePlan(sid, tuple(targets))
