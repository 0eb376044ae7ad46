"""Session bundles: the portable archive of one session (pure parts).

A bundle is a zip archive:

    manifest.json                          what is inside, with sizes and sha256 checksums
    transcript/<session-id>.jsonl          the main transcript
    transcript/<session-id>/...            its folder: subagents/agent-*.jsonl (+ .meta.json),
                                           tool-results/, workflows/ ... as Claude Code left it
    transcript/agent-<id>.jsonl            2.0.x subagent files that name the session
    file-history/<hash>@v<N>               the checkpoint backups (file-history/<session-id>/)

Why zip and not tar.gz: a zip's central directory lists every member's name, type and
size *before* anything is decompressed, so an import checks the member count, the names
and the declared sizes first and reads the manifest without extracting; each member is
then read (and its size bounded) on its own. Zip has no hard links or devices, and
Python's zipfile never creates symlinks, while a tar stream must be read through to list
it and carries links and devices that must each be refused. Zip also opens on every OS
without extra tools. Compression is about the same for JSONL (deflate either way).

The manifest (`Manifest`) records the format version, tt's version, the Claude Code
versions seen in the transcripts, the original cwd, project folder name and config-dir
paths (to relocate paths on import), whether the bundle was redacted (and how many
findings by kind), and for every member its role, size and sha256.

`member_problem` says what is wrong with a member name, or None: a name must be relative,
``/``-separated, made of ``[A-Za-z0-9._@+-]`` segments (no ``.``/``..``, no empty
segment, no backslash or drive letter), and lie under ``transcript/`` (the main file
named after the session, its folder, or a legacy ``agent-*.jsonl``) or directly under
``file-history/``. So no name can point outside the folders an import writes.

`Relocation` rewrites paths when a session moves: the ``cwd`` fields and the paths under
the old root inside tool inputs, tool results, ``toolUseResult``, attachments, progress
data and file-history records, and 2.1.29x's records of what was sent and where
(``wireToolInputs``, ``wireIngestContext``, ``serverClassifierContext``) are mapped to the
new root (the longest old root first; ``/a/app2`` is not under ``/a/app``). A Windows old
root is compared as Windows compares paths (any case, either separator), in the forms Git
Bash, WSL and Cygwin give it too (`posix_forms`), and the separators of the path under it
become the new root's (`Relocation`'s docstring).

The adapters: `bundle.files_export` (write) and `bundle.files_import` (read, check, place).

Invariants: pure, no I/O; a relocated record is a new object only where something
changed (callers keep untouched lines byte for byte).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from ..model.errors import Unreadable
from ..model.ids import is_session_id

FORMAT = "tt-session-bundle"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
TRANSCRIPT_DIR = "transcript"
HISTORY_DIR = "file-history"

ROLES = ("transcript", "subagent", "subagent-meta", "session-file", "legacy-subagent", "file-history")

_SEGMENT = re.compile(r"^[A-Za-z0-9._@+\-]{1,255}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
MAX_NAME = 1024


MAX_MEMBERS = 20_000
MAX_MEMBER_BYTES = 1 << 30  # 1 GiB
MAX_TOTAL_BYTES = 4 << 30  # 4 GiB
MAX_MANIFEST_BYTES = 8 << 20  # 8 MiB


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds checked on the central directory before anything is extracted."""

    members: int = MAX_MEMBERS
    member_bytes: int = MAX_MEMBER_BYTES
    total_bytes: int = MAX_TOTAL_BYTES
    manifest_bytes: int = MAX_MANIFEST_BYTES


@dataclass(frozen=True, slots=True)
class Member:
    path: str  # the name in the archive
    role: str
    size: int
    sha256: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "role": self.role, "size": self.size, "sha256": self.sha256}


@dataclass(frozen=True, slots=True)
class Manifest:
    session_id: str
    cwd: str | None
    project_dir_name: str
    project_dir: str
    config_dir: str
    claude_code_versions: tuple[str, ...]
    tt_version: str
    created: str
    redacted: bool
    redactions: Mapping[str, int]
    members: tuple[Member, ...]
    format_version: int = FORMAT_VERSION

    def to_bytes(self) -> bytes:
        doc = {
            "format": FORMAT,
            "format_version": self.format_version,
            "tt_version": self.tt_version,
            "created": self.created,
            "session_id": self.session_id,
            "cwd": self.cwd,
            "project_dir_name": self.project_dir_name,
            "project_dir": self.project_dir,
            "config_dir": self.config_dir,
            "claude_code_versions": list(self.claude_code_versions),
            "redacted": self.redacted,
            "redactions": dict(self.redactions),
            "files": [m.to_dict() for m in self.members],
        }
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"


def _bad(where: str, what: str) -> Unreadable:
    return Unreadable(
        f"{where}: {what}", hint="this is not a bundle written by `tt export`, or it was altered"
    )


def parse_manifest(data: bytes, where: str) -> Manifest:
    """The manifest of a bundle, checked field by field (``where`` names the archive)."""
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise _bad(where, f"manifest.json is not JSON ({e})") from e
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise _bad(where, "manifest.json is not a tt session bundle manifest")
    version = doc.get("format_version")
    if version != FORMAT_VERSION:
        raise Unreadable(
            f"{where}: bundle format version {version!r}; this tt reads version {FORMAT_VERSION}",
            hint="import it with the tt version that wrote it, or a newer one",
        )
    sid = doc.get("session_id")
    if not is_session_id(sid):
        raise _bad(where, "the manifest's session_id is not a session id")
    files = doc.get("files")
    if not isinstance(files, list):
        raise _bad(where, "the manifest lists no files")
    members: list[Member] = []
    for f in files:
        if not isinstance(f, dict):
            raise _bad(where, "a manifest file entry is not an object")
        path, role, size, digest = f.get("path"), f.get("role"), f.get("size"), f.get("sha256")
        if not isinstance(path, str) or role not in ROLES or not isinstance(size, int) or size < 0:
            raise _bad(where, f"manifest file entry {path!r} is malformed")
        if not isinstance(digest, str) or not _SHA256.match(digest):
            raise _bad(where, f"manifest file entry {path!r} has no sha256")
        members.append(Member(path, role, size, digest))
    cwd = doc.get("cwd")
    strings = {
        k: doc.get(k) for k in ("project_dir_name", "project_dir", "config_dir", "tt_version", "created")
    }
    if (cwd is not None and not isinstance(cwd, str)) or not all(
        isinstance(v, str) for v in strings.values()
    ):
        raise _bad(where, "the manifest's cwd or paths are malformed")
    versions = doc.get("claude_code_versions") or []
    redactions = doc.get("redactions") or {}
    if not isinstance(versions, list) or not isinstance(redactions, dict):
        raise _bad(where, "the manifest's versions or redactions are malformed")
    return Manifest(
        session_id=sid,
        cwd=cwd,
        project_dir_name=strings["project_dir_name"],  # type: ignore[arg-type]
        project_dir=strings["project_dir"],  # type: ignore[arg-type]
        config_dir=strings["config_dir"],  # type: ignore[arg-type]
        claude_code_versions=tuple(str(v) for v in versions),
        tt_version=strings["tt_version"],  # type: ignore[arg-type]
        created=strings["created"],  # type: ignore[arg-type]
        redacted=doc.get("redacted") is True,
        redactions={str(k): int(v) for k, v in redactions.items() if isinstance(v, int)},
        members=tuple(members),
    )


def member_problem(name: str, session_id: str) -> str | None:
    """Why ``name`` may not be extracted for session ``session_id`` (None: it may)."""
    if not name or len(name) > MAX_NAME:
        return "an empty or overlong name"
    if name.startswith("/") or "\\" in name or "\0" in name:
        return "an absolute path" if name.startswith("/") else "a backslash or NUL in the name"
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return "a path that escapes its folder ('..', '.' or an empty segment)"
    if not all(_SEGMENT.match(p) for p in parts):
        return "characters outside [A-Za-z0-9._@+-] in the name"
    if name == MANIFEST:
        return None
    if parts[0] == HISTORY_DIR:
        return None if len(parts) == 2 else "a file-history entry inside a subfolder"
    if parts[0] != TRANSCRIPT_DIR or len(parts) < 2:
        return "a name outside transcript/ and file-history/"
    if len(parts) == 2:
        if parts[1] == f"{session_id}.jsonl" or (
            parts[1].startswith("agent-") and parts[1].endswith(".jsonl")
        ):
            return None
        return "a transcript that is not the session's"
    if parts[1] != session_id:
        return "a folder that is not the session's"
    return None


# --- relocation -------------------------------------------------------------------


#: A Windows path: a drive (``C:\\``, ``e:/``, or ``C:`` once its separator is stripped) or a
#: UNC share (``\\\\host\\share``).
_WINDOWS_ROOT = re.compile(r"^(?:[A-Za-z]:(?:[\\/]|$)|\\\\)")
#: The rest of a path under a Windows root, up to a space, a quote or a character no
#: Windows name holds (``<>:"|?*``): its separators are mapped too.
_WINDOWS_TAIL = r"(?:[\\/][^\\/\s<>:\"|?*'`]*)*"
_QUOTED_TAIL = r"(?:[\\/][^\\/\n\r\t<>:\"|?*']*)*"


def _windows(path: str) -> bool:
    return _WINDOWS_ROOT.match(path) is not None


_DRIVE_PATH = re.compile(r"([A-Za-z]):(?:[\\/](.*))?\Z", re.DOTALL)


def posix_forms(root: str) -> list[str]:
    """The names the POSIX layers of Windows give the drive path ``root``
    (``C:\\Users\\x\\app``): Git Bash and MSYS2 ``/c/Users/x/app``, WSL
    ``/mnt/c/Users/x/app``, Cygwin ``/cygdrive/c/Users/x/app``. Claude Code run from Git
    Bash records the first in tool inputs and in 2.1.29x's ``wireIngestContext``, beside the
    Windows form in ``cwd`` (PiyushPapaya/TUMHackathon26, 2.1.296). Nothing for a UNC
    share or a POSIX path."""
    m = _DRIVE_PATH.match(root)
    if m is None:
        return []
    rest = (m[2] or "").replace("\\", "/").rstrip("/")
    tail = f"/{rest}" if rest else ""
    drive = m[1].lower()
    return [f"/{drive}{tail}", f"/mnt/{drive}{tail}", f"/cygdrive/{drive}{tail}"]


#: The fields of a record `Relocation.record` maps whole (besides the blocks of its message).
#: ``rendered`` is an attachment's text as sent (2.1.2xx; kept in step with ``attachment``);
#: the last three are Claude Code 2.1.29x's: the tool inputs as sent (beside the ones shown
#: in ``message``; a mapped input must keep its sent copy in step), the directory each call
#: ran in, and the git state sent to its command classifier (PiyushPapaya/TUMHackathon26).
_PATH_FIELDS = (
    "cwd",
    "toolUseResult",
    "attachment",
    "rendered",
    "snapshot",
    "trackingPath",
    "backup",
    "data",
    "wireToolInputs",
    "wireIngestContext",
    "serverClassifierContext",
)


class Relocation:
    """Maps paths under old roots to new roots (longest old root first).

    An old root that is a Windows path (a bundle exported on Windows: ``cwd``
    ``C:\\Users\\x\\proj``) is matched as Windows compares paths: either separator, any
    case; and the separators of the path under it are mapped to the new root's (``/`` on
    a POSIX machine), so ``C:\\Users\\x\\proj\\src\\a.py`` becomes ``/new/proj/src/a.py``,
    not ``/new/proj\\src\\a.py``. A string that is one path as a whole (a ``cwd``, a
    ``file_path``) is mapped whole, spaces and all; inside other text (a shell command) a
    path ends at a space or a quote."""

    __slots__ = ("_needles", "_roots", "_rx", "pairs")

    def __init__(self, pairs: Mapping[str, str]) -> None:
        clean: dict[str, str] = {}
        for o, n in pairs.items():
            strip = "\\/" if _windows(o) else "/"
            old, new = o.rstrip(strip), n.rstrip("\\/" if _windows(n) else "/")
            if old and old != new and not (_windows(o) and old.lower() == new.lower()):
                clean[old] = new
        self.pairs = dict(sorted(clean.items(), key=lambda kv: -len(kv[0])))
        #: (old, new, windows, the separator of paths under new) by alternative.
        roots = [(o, n, _windows(o), "\\" if _windows(n) else "/") for o, n in self.pairs.items()]
        # A Windows drive root is also matched in the forms Git Bash, WSL and Cygwin give it
        # (`posix_forms`), as Windows compares paths (any case, either separator), and becomes
        # the new root in the same form when that is a drive too (a Git Bash command keeps
        # `/d/dev/app`, where `D:\dev\app` would lose its backslashes to the shell).
        for o, n, w, sep in list(roots):
            if not w:
                continue
            same = posix_forms(n)
            for k, f in enumerate(posix_forms(o)):
                if f not in self.pairs:
                    roots.append((f, same[k], True, "/") if same else (f, n, True, sep))
        roots.sort(key=lambda r: -len(r[0]))
        self._roots = roots
        #: What a string must hold to be looked at (a Windows root's last name, lowered).
        self._needles = [
            (re.split(r"[\\/]", o)[-1].lower() or o.lower(), True) if w else (o, False)
            for o, _, w, _ in self._roots
        ]
        if self.pairs:
            alts = []
            for i, (o, _, w, _) in enumerate(self._roots):
                if w:
                    pat = "".join(r"[\\/]" if c in "\\/" else re.escape(c) for c in o)
                    if len(o) == 2:  # a drive's root (C:\\): its separator must follow
                        pat += r"(?=[\\/])"
                    # Between quotes a path may hold spaces ("C:\\My Docs\\a b.txt").
                    alts.append(rf"(?<=[\"'])(?P<q{i}>(?i:{pat}))(?P<u{i}>{_QUOTED_TAIL})(?=[\"'])")
                    alts.append(rf"(?P<r{i}>(?i:{pat}))(?P<t{i}>{_WINDOWS_TAIL})")
                else:
                    alts.append(rf"(?P<r{i}>{re.escape(o)})")
            # A whole path: not inside a longer one (/x/a/app), and not followed by a name
            # character (/a/app2 and /a/app.bak are not under /a/app).
            self._rx: re.Pattern[str] | None = re.compile(
                rf"(?<![A-Za-z0-9_.~/\-])(?:{'|'.join(alts)})(?![A-Za-z0-9_\-]|\.[A-Za-z0-9_])"
            )
        else:
            self._rx = None

    def __bool__(self) -> bool:
        return self._rx is not None

    def _maybe(self, s: str) -> bool:
        low: str | None = None
        for needle, folded in self._needles:
            if folded:
                if low is None:
                    low = s.lower()
                if needle in low:
                    return True
            elif needle in s:
                return True
        return False

    def _sub(self, m: re.Match[str]) -> str:
        found = {k for k, v in m.groupdict().items() if v is not None}
        for i, (_, new, w, sep) in enumerate(self._roots):
            if not w:
                if f"r{i}" in found:
                    return new
                continue
            for root, tail in ((f"q{i}", f"u{i}"), (f"r{i}", f"t{i}")):
                if root in found:
                    return new + m.group(tail).replace("\\", sep).replace("/", sep)
        raise AssertionError(m)  # one alternative always matched

    def text(self, s: str) -> str:
        if self._rx is None or not self._maybe(s):
            return s
        for old, new, w, sep in self._roots:
            # One Windows path as a whole (a cwd, a file_path): every separator mapped.
            if w and len(s) >= len(old) and "\n" not in s:
                head, rest = s[: len(old)], s[len(old) :]
                if (
                    head.lower().replace("\\", "/") == old.lower().replace("\\", "/")
                    and (not rest or rest[0] in "\\/")
                    and not any(c in rest for c in '<>:"|?*')
                ):
                    return new + rest.replace("\\", sep).replace("/", sep)
        return self._rx.sub(self._sub, s)

    def value(self, v: Any) -> Any:
        """``v`` with every string relocated (the same object when nothing changed)."""
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, dict):
            opaque = v.get("type") == "base64"  # image data, not text
            items = [
                (self.text(k) if "/" in k or "\\" in k else k, x if opaque and k == "data" else self.value(x))
                for k, x in v.items()
            ]
            if all(nk == k and nx is x for (nk, nx), (k, x) in zip(items, v.items(), strict=True)):
                return v
            return dict(items)
        if isinstance(v, list):
            lst: list[Any] | None = None
            for i, x in enumerate(v):
                nx = self.value(x)
                if nx is not x:
                    if lst is None:
                        lst = list(v)
                    lst[i] = nx
            return v if lst is None else lst
        return v

    def record(self, rec: dict[str, Any]) -> dict[str, Any]:
        """A transcript record with its paths relocated (see module doc for which fields)."""
        if self._rx is None:
            return rec
        out: dict[str, Any] | None = None

        def put(key: str, value: Any) -> None:
            nonlocal out
            if value is not rec.get(key):
                if out is None:
                    out = dict(rec)
                out[key] = value

        for key in _PATH_FIELDS:
            if key in rec:
                put(key, self.value(rec[key]))
        msg = rec.get("message")
        if isinstance(msg, dict) and isinstance(msg.get("content"), list):
            blocks = msg["content"]
            new_blocks = [self._block(b) for b in blocks]
            if any(n is not b for n, b in zip(new_blocks, blocks, strict=True)):
                put("message", {**msg, "content": new_blocks})
        return rec if out is None else out

    def _block(self, b: Any) -> Any:
        if not isinstance(b, dict):
            return b
        t = b.get("type")
        if t == "tool_use" and "input" in b:
            ni = self.value(b["input"])
            return b if ni is b["input"] else {**b, "input": ni}
        if t == "tool_result" and "content" in b:
            nc = self.value(b["content"])
            return b if nc is b["content"] else {**b, "content": nc}
        return b
