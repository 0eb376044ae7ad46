"""Writing transcripts safely: atomic replace, exclusive create, append.

Records are written in Claude Code's serialisation, `model.wire` (``dumps``, ``iso``; docs/format.md
§12), which this module imports and hands on; `iso_now` is that timestamp form of the
system clock's now.

Invariants:
- An input is replaced only through `replace_atomically`: a temp file in the same folder,
  fsynced, renamed over the original with its mode kept, after a backup that is never
  overwritten; and only if the original did not change meanwhile (unless forced).
- `create_exclusive` never overwrites (O_EXCL).
- `append_records` writes each record with one ``write`` call on an O_APPEND descriptor,
  so a concurrent appender cannot interleave inside a line.
- OSError is translated here into `WriteFailed`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..model.errors import FileChanged, WriteFailed
from ..model.wire import dumps, iso


def iso_now() -> str:
    return iso(datetime.now(UTC))


#: What tt leaves beside a file it rewrote or repaired: backups and quarantines.
BACKUP_SUFFIX = ".bak"
QUARANTINE_SUFFIX = ".quarantine.jsonl"


def by_product(path: Path, suffix: str, stamp: str | None = None) -> Path:
    """Where a by-product of ``path`` goes: ``<file>[.<stamp>]<suffix>`` beside it, with a
    leading dot for a subagent transcript (``agent-*``).

    Every listing of subagents takes any ``agent-*.jsonl`` under ``subagents/`` (the Agent
    SDK's ``_collect_agent_files``: ``startswith("agent-")`` and ``endswith(".jsonl")``;
    tt's `claude_dir.subagent_files`), and 2.0.x agent files beside the sessions the same way,
    so ``agent-x.jsonl.quarantine.jsonl`` would be read as a second subagent. With the dot
    no listing matches it. A main session's by-products need no dot: ``<id>.jsonl.bak``
    and ``<id>.jsonl.quarantine.jsonl`` are not ``<uuid>.jsonl``, the only main-file name
    Claude Code, the SDK's ``list_sessions`` and `tt ls` take."""
    dot = "." if path.name.startswith("agent-") else ""
    return path.with_name(f"{dot}{path.name}{'.' + stamp if stamp else ''}{suffix}")


def is_by_product(name: str) -> bool:
    """A backup or quarantine tt wrote (any era's name: with or without the dot)."""
    return name.endswith((BACKUP_SUFFIX, QUARANTINE_SUFFIX))


def is_by_product_of(name: str, transcript: str) -> bool:
    """Is ``name`` a backup or quarantine tt wrote of the file named ``transcript`` (`by_product`'s
    names exactly: ``[.]<transcript>[.<stamp>].bak`` or ``….quarantine.jsonl``)? A user's
    ``<id>.jsonl.before-upgrade.bak`` is not (a review's find: `tt delete` took it)."""
    if not name.lstrip(".").startswith(transcript + "."):
        return False
    rest = name.lstrip(".")[len(transcript) :]
    for suffix in (BACKUP_SUFFIX, QUARANTINE_SUFFIX):
        if rest.endswith(suffix):
            stamp = rest[: -len(suffix)]
            if not stamp or _STAMPED.fullmatch(stamp):
                return True
    return False


#: The stamp `backup_path` and the quarantine's name put before the suffix when the plain name exists.
_STAMPED = re.compile(r"\.\d{8}T\d{12}")


def backup_path(path: Path) -> Path:
    """`by_product` ``.bak``, or with a UTC timestamp when that exists (never overwritten)."""
    b = by_product(path, BACKUP_SUFFIX)
    if not b.exists():
        return b
    return by_product(path, BACKUP_SUFFIX, datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f"))


def snapshot(path: Path) -> tuple[int, int]:
    """What `replace_atomically` compares to notice a file changed: (size, mtime_ns)."""
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def write_new(path: Path, chunks: Iterable[bytes], *, exclusive: bool = True, mode: int = 0o600) -> int:
    """Write a new file; with ``exclusive`` refuse to overwrite. Returns bytes written."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    try:
        fd = os.open(path, flags, mode)
    except FileExistsError as e:
        raise WriteFailed(
            f"{path}: already exists; tt never overwrites", hint="choose another -o path"
        ) from e
    except OSError as e:
        raise WriteFailed(f"{path}: cannot create ({e.strerror})") from e
    n = 0
    try:
        with os.fdopen(fd, "wb") as f:
            for c in chunks:
                f.write(c)
                n += len(c)
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        raise WriteFailed(f"{path}: write failed ({e.strerror})") from e
    return n


def replace_atomically(
    path: Path,
    chunks: Iterable[bytes],
    *,
    expect: tuple[int, int] | None = None,
    backup: bool = True,
    force: bool = False,
    backup_to: Path | None = None,
) -> Path | None:
    """Replace ``path`` with ``chunks`` atomically; returns the backup's path.

    ``expect`` is the `snapshot` taken before the new content was computed: if the file
    changed since (Claude Code still writing to it), refuse unless ``force``.
    ``backup_to``: the backup's path when the caller named it beforehand (`backup_path`,
    e.g. to write it into the new content); it must not exist.
    """
    try:
        st = path.stat()
    except OSError as e:
        raise WriteFailed(f"{path}: cannot stat ({e.strerror})") from e
    import tempfile  # here: every command that lists sessions imports this module, few write

    tmp = None
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tt-tmp", dir=path.parent)
        tmp = Path(tmp_name)
        with os.fdopen(fd, "wb") as f:
            for c in chunks:
                f.write(c)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, st.st_mode & 0o7777)
        if expect is not None and not force and snapshot(path) != expect:
            raise FileChanged(
                f"{path}: the file changed while tt worked on it (is Claude Code still writing?)",
                hint="close the session and try again, or pass --force",
            )
        bak = None
        if backup:
            bak = backup_to or backup_path(path)
            if bak.exists():
                raise WriteFailed(f"{bak}: the backup's path is taken; nothing was written")
            # A hard link is an instant, exact backup: the old inode stays behind as the
            # backup when the new file is renamed over the name.
            try:
                os.link(path, bak)
            except OSError:
                _copy(path, bak)
        os.replace(tmp, path)
        tmp = None
        _fsync_dir(path.parent)
        return bak
    except OSError as e:
        raise WriteFailed(
            f"{path}: could not replace safely ({e.strerror}); the original is untouched"
        ) from e
    finally:
        if tmp is not None:
            try:
                tmp.unlink()
            except FileNotFoundError:
                pass


def _copy(src: Path, dst: Path) -> None:
    with open(src, "rb") as a, open(dst, "xb") as b:
        while chunk := a.read(1 << 20):
            b.write(chunk)


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def append_records(path: Path, records: Iterable[Any], *, create: bool = False) -> int:
    """Append records, one ``write`` each (record + ``\\n``), flushed. Returns records written."""
    flags = os.O_WRONLY | os.O_APPEND | (os.O_CREAT if create else 0)
    try:
        fd = os.open(path, flags, 0o600)
    except FileNotFoundError as e:
        raise WriteFailed(f"{path}: no such transcript to append to") from e
    except OSError as e:
        raise WriteFailed(f"{path}: cannot open for appending ({e.strerror})") from e
    n = 0
    try:
        # Claude Code starts each record on a new line; if the file ends mid-line (a torn
        # tail), start ours on a fresh line so it is not fused onto the torn one.
        if _ends_without_newline(path):
            os.write(fd, b"\n")
        for r in records:
            data = (r if isinstance(r, bytes) else dumps(r)) + b"\n"
            os.write(fd, data)
            n += 1
    except OSError as e:
        raise WriteFailed(f"{path}: append failed ({e.strerror})") from e
    finally:
        os.close(fd)
    return n


def _ends_without_newline(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() == 0:
                return False
            f.seek(-1, os.SEEK_END)
            return f.read(1) != b"\n"
    except OSError:
        return False


def undo_created(files: list[Path], dirs: list[Path]) -> None:
    """Remove what one run created (files, then the folders it made, newest first), so a
    failed multi-file write leaves nothing half-made behind. Folders that are not empty
    (someone else's files) stay."""
    for p in reversed(files):
        p.unlink(missing_ok=True)
    for d in reversed(dirs):
        try:
            d.rmdir()
        except OSError:
            pass
