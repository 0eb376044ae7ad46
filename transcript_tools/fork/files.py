"""The file side of a fork: reading a session's subagent transcripts, writing the fork.

`fork.core.fork` and `fork.subagents` are pure; this adapter gives them their input and puts
their output on disk. `fork_session` is the one fork workflow (load, cut, fork, write),
for every command that forks (``tt fork``, ``tt rewind --conversation``, ``tt resume
--fork``, the chat's ``/fork`` and ``/rewind``) and the API's ``fork_session``, so they
all write the same files:

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
from ..edge.loader import Loaded, load_session
from ..edge.reader import MAX_TRANSCRIPT_READ_BYTES
from ..edge.session_out import main_output, names_folder, session_dir
from ..edge.writer import undo_created, write_new
from ..model.errors import Unreadable, WriteFailed
from ..model.session import Session
from .branch import resolve_at
from .core import Fork, fork
from .subagents import fork_subagent, remap_meta, subagent_wanted

__all__ = [
    "Forked",
    "SubagentCopy",
    "UuidSource",
    "copy_paths",
    "fork_session",
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


def read_sidecar(transcript: Path) -> bytes | None:
    """The bytes of ``transcript``'s ``agent-<id>.meta.json``, or None when it has none."""
    meta = sidecar(transcript)
    if not meta.is_file():
        return None
    try:
        return meta.read_bytes()
    except OSError as e:
        raise WriteFailed(f"{meta}: cannot read the subagent's sidecar ({e.strerror})") from e


def copy_sidecar(src: Path, out: Path) -> None:
    """A subagent's ``agent-<id>.meta.json`` goes beside its copy ``out``, as beside ``src``
    (Claude Code reads the agent's type and description there; docs/format.md §6). Nothing
    when ``src`` has none; never overwrites."""
    data = read_sidecar(src)
    if data is not None:
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


@dataclass(frozen=True, slots=True)
class Forked:
    """A fork `fork_session` wrote (or, in a dry run, would write)."""

    fork: Fork
    #: the original session's file (only read)
    source_path: Path
    #: the fork's main file
    path: Path
    #: the fork's subagent transcripts (`copy_paths`)
    subagents: list[Path]
    #: what the in-memory repair mended in the original (`repair.Action` values)
    actions: list[Any]
    #: the original's first recorded cwd, where ``claude --resume`` would be run
    cwd: str | None
    #: whether ``claude --resume`` can find the fork: directly in a project folder of the
    #: config dir
    in_project: bool
    written: bool

    @property
    def session_id(self) -> str:
        return self.fork.session_id

    @property
    def repairs(self) -> list[dict[str, Any]]:
        return [{"fix": a.fix, "code": a.code, "line": a.line} for a in self.actions]

    def to_dict(self) -> dict[str, Any]:
        return fork_report(self.fork, self.path, self.source_path, self.subagents, self.repairs, self.written)


def fork_report(
    f: Fork,
    path: Path,
    source_path: Path,
    subagents: list[Path],
    repairs: list[dict[str, Any]],
    written: bool,
) -> dict[str, Any]:
    """A fork as ``tt fork --json`` reports it (and the API's `ForkResult.to_dict`)."""
    return {
        "session_id": f.session_id,
        "path": str(path),
        "entries": f.entries,
        "forked_from": {
            "session_id": f.source_session_id,
            "message_uuid": f.cut.uuid,
            "path": str(source_path),
        },
        "title": f.title,
        "at": {"asked": f.cut.asked, "uuid": f.cut.uuid, "moved": f.cut.moved},
        "subagents": [str(p) for p in subagents],
        "repairs": repairs,
        "written": written,
    }


def fork_session(
    original: Path,
    *,
    now: str,
    source_session_id: str | None = None,
    at: str | None = None,
    title: str | None = None,
    output: str | None = None,
    make_parents: bool = False,
    dry_run: bool = False,
    max_bytes: int = MAX_TRANSCRIPT_READ_BYTES,
    loaded: Loaded | None = None,
    from_last_boundary: bool = False,
) -> Forked:
    """The one fork workflow (``tt fork``, ``tt rewind --conversation``, ``tt resume
    --fork``, the chat's ``/fork`` and ``/rewind``, the API's ``fork_session``): load
    ``original`` through the in-memory repair (unless ``loaded`` is given), fork it whole
    or ending at message ``at`` (a uuid or unique prefix, or N from the end:
    `branch.resolve_at`), and write the fork and its subagent transcripts (`write_fork`).

    The fork is named ``source_session_id`` (default: the session's own id, else the file
    name) as its origin. It goes beside the original, or to ``output`` (``-o``: a file, or
    a folder, made if new: `session_out.main_output`); ``make_parents`` also makes a
    missing parent folder of a file named. A dry run reads and plans, and writes nothing.
    ``from_last_boundary``: past the cap, only the part after the last compact boundary
    (the part a resume reads)."""
    if loaded is None:
        loaded = load_session(original, max_bytes=max_bytes, from_last_boundary=from_last_boundary)
    s = loaded.session
    if source_session_id is None:
        source_session_id = s.session_id or original.name.removesuffix(".jsonl")
    cut = resolve_at(s, at) if at is not None else None
    f = fork(s, source_session_id=source_session_id, at=cut, title=title, now=now, new_id=UuidSource())
    path = (
        original.parent / f"{f.session_id}.jsonl"
        if output is None
        else main_output(output, f"{f.session_id}.jsonl")
    )
    subs = plan_subagents(original, f, s, max_bytes)
    if not dry_run:
        if make_parents or (output is not None and names_folder(output)):
            _make_folder(path.parent)  # -o DIR/: the folder to write into, made if new
        write_fork(path, f, subs)
    return Forked(
        f,
        original,
        path,
        copy_paths(path, subs),
        list(loaded.actions),
        s.first_cwd(),
        store.in_a_project(path),
        not dry_run,
    )


def _make_folder(d: Path) -> None:
    try:
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as e:
        raise WriteFailed(f"{d}: cannot create the folder ({e.strerror})") from e


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
