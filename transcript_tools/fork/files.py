"""The file side of a fork: reading a session's subagent transcripts, writing the fork.

`fork.core.fork` and `fork.subagents` are pure; this adapter gives them their input and puts
their output on disk, for every command that forks (``tt fork``, ``tt rewind --fork``,
``tt resume --fork``), so they all write the same files:

- ``<new id>.jsonl``: the fork's main file (`fork.core.Fork.lines`);
- ``<new id>/subagents/**/agent-<id>.jsonl``: each subagent transcript of the original
  (``<id>/subagents/**``, Claude Code 2.1.x, docs/format.md §6) that belongs to the fork
  (`fork.subagents.subagent_wanted`), forked with the fork's uuid mapping
  (`fork.subagents.fork_subagent`), at the same place relative to the session folder;
- ``agent-<id>.meta.json`` beside it when the original has a sidecar
  (`fork.subagents.remap_meta`).

Invariants:
- The original session, its subagent transcripts and sidecars are only read.
- Only new files are written, exclusively (O_EXCL, mode 0600, `writer.write_new`), in
  folders created with mode 0700: nothing that exists is ever overwritten.
- All or nothing: when a write fails, exactly what this call created (files, even half
  written, then the folders it made) is removed, and the `errors.WriteFailed` goes on.
  A folder that existed before stays, with all it holds.
- Never prints; failures are `errors.Unreadable` (a sidecar that cannot be read, a
  subagent transcript past the cap) or `errors.WriteFailed`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..edge import claude_dir as store
from ..edge.loader import load_session
from ..edge.session_out import session_dir
from ..edge.writer import undo_created, write_new
from ..model.errors import Unreadable, WriteFailed
from ..model.session import Session
from .core import Fork
from .subagents import fork_subagent, remap_meta, subagent_wanted

__all__ = [
    "SubagentCopy",
    "UuidSource",
    "copy_paths",
    "plan_subagents",
    "session_dir",
    "sidecar",
    "write_fork",
]


class UuidSource:
    """Random (version 4) uuid strings, from one ``os.urandom`` read per 4096 of them:
    ``str(uuid.uuid4())`` costs several microseconds each, a tenth of a fork's time on a
    50 MB session with 70,000 entries."""

    def __init__(self) -> None:
        self._buf = b""
        self._pos = 0

    def __call__(self) -> str:
        if self._pos >= len(self._buf):
            self._buf = os.urandom(16 * 4096)
            self._pos = 0
        b = bytearray(self._buf[self._pos : self._pos + 16])
        self._pos += 16
        b[6] = (b[6] & 0x0F) | 0x40  # version 4
        b[8] = (b[8] & 0x3F) | 0x80  # RFC 4122 variant
        h = b.hex()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


@dataclass(frozen=True, slots=True)
class SubagentCopy:
    """One forked subagent transcript, not yet written."""

    #: where it goes, relative to the fork's session folder (``subagents/agent-<id>.jsonl``)
    relative: Path
    #: its records, one per item, no newline
    lines: tuple[bytes, ...]
    #: its ``.meta.json`` sidecar, or None when the original has none
    meta: bytes | None


def sidecar(transcript: Path) -> Path:
    """``agent-<id>.meta.json`` of ``agent-<id>.jsonl``."""
    return transcript.with_name(transcript.name[: -len(".jsonl")] + ".meta.json")


def copy_sidecar(src: Path, out: Path) -> None:
    """A subagent's ``agent-<id>.meta.json`` goes beside its copy ``out``, as beside ``src``
    (Claude Code reads the agent's type and description there; docs/format.md §6). Nothing
    when ``src`` has none; never overwrites."""
    meta = sidecar(src)
    if not meta.is_file():
        return
    try:
        data = meta.read_bytes()
    except OSError as e:
        raise WriteFailed(f"{meta}: cannot read the subagent's sidecar ({e.strerror})") from e
    write_new(sidecar(out), [data], exclusive=True)


def copy_paths(path: Path, subagents: list[SubagentCopy]) -> list[Path]:
    """Where `write_fork` puts each subagent transcript of a fork written at ``path``."""
    base = session_dir(path)
    return [base / c.relative for c in subagents]


def plan_subagents(original: Path, f: Fork, main: Session, max_bytes: int) -> list[SubagentCopy]:
    """The subagent transcripts of ``original`` that belong to the fork ``f`` of ``main``,
    forked; each read through the in-memory repair (`loader.load_session`), as the main
    file is. Reads only."""
    base = session_dir(original)
    out: list[SubagentCopy] = []
    for p in store.subagent_files(original):
        sub = load_session(p, max_bytes=max_bytes).session
        meta_raw = _read_bytes(sidecar(p))
        if not subagent_wanted(sub.entries, _json_object(meta_raw), main, f):
            continue
        out.append(
            SubagentCopy(
                p.relative_to(base),
                fork_subagent(sub.entries, f),
                None if meta_raw is None else remap_meta(meta_raw, f),
            )
        )
    return out


def write_fork(path: Path, f: Fork, subagents: list[SubagentCopy]) -> list[Path]:
    """Write the fork's main file at ``path``, then its subagent transcripts (and
    sidecars) under `session_dir` ``(path)``; returns the subagent transcripts' paths
    (`copy_paths`). On `errors.WriteFailed` nothing this call created remains."""
    made_files: list[Path] = []
    made_dirs: list[Path] = []
    written: list[Path] = []
    try:
        _create(path, f.chunks(), made_files)
        base = session_dir(path)
        for c in subagents:
            target = base / c.relative
            missing: list[Path] = []
            d = target.parent
            while d != base.parent and not d.exists():
                missing.append(d)
                d = d.parent
            for d in reversed(missing):
                if _mkdir(d):
                    made_dirs.append(d)
            _create(target, (ln + b"\n" for ln in c.lines), made_files)
            written.append(target)
            if c.meta is not None:
                _create(sidecar(target), [c.meta], made_files)
    except WriteFailed:
        # Leave nothing half-made behind: only what this call created is removed.
        undo_created(made_files, made_dirs)
        raise
    return written


def _create(path: Path, chunks: Iterable[bytes], made: list[Path]) -> None:
    try:
        write_new(path, chunks)
    except WriteFailed as e:
        # Created, then the write failed (disk full, file size limit): half a file is
        # ours to remove. "Already exists" is someone else's file, and stays.
        if not isinstance(e.__cause__, FileExistsError) and path.exists():
            made.append(path)
        raise
    made.append(path)


def _mkdir(d: Path) -> bool:
    """Create ``d`` (mode 0700); False when it appeared meanwhile (then it is not ours)."""
    try:
        d.mkdir(mode=0o700)
    except FileExistsError:
        return False
    except OSError as e:
        raise WriteFailed(f"{d}: cannot create ({e.strerror})") from e
    return True


def _read_bytes(p: Path) -> bytes | None:
    try:
        return p.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise Unreadable(f"{p}: cannot read the subagent's sidecar ({e.strerror})") from e


def _json_object(raw: bytes | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        v = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return v if isinstance(v, dict) else None
