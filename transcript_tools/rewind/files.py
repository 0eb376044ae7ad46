"""Rewinding files on disk (the adapter around `rewind.core`).

`FileReader` reads the current files and the backups for `rewind.core.plan_rewind`: a path
that is a symlink, a folder or another non-regular file raises `rewind.core.Refused` (its
`FileChange` is then left alone), so a rewind never writes through a link. `apply_plan`
carries a plan out: each restored file is written to a temp file beside it, fsynced and
renamed over it (never half-written), with the backup's permission bits (as Claude Code
does); parent folders of a re-created file are made; deletions come last and are held
back when a restore failed (as Claude Code 2.1.332 does: a half-failed rewind should not
also lose files). With ``keep`` the current content of each file changed is first saved
as ``<file>.tt-rewind.bak`` (never overwritten).

`plan_files` is the planning side shared by ``tt rewind`` and the API's
``rewind_session``: the project folder (given, or the session's recorded cwd), the
session's backups folder (`backups_dir`) and the plan.

Invariants: only files the plan lists are touched; OSError becomes a `FileResult` with
the reason (one failure does not stop the others) — or `Unreadable` for a backup that
cannot be read at planning time.
"""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..edge import claude_dir as store
from ..model.errors import NotFound, Unreadable, UsageError
from .core import CREATE, DELETE, RESTORE, Refused, RewindPlan, choose_snapshot, inside, plan_rewind

#: How the command line says to name the project folder (the API passes its own words).
CWD_HINTS = ("name the project folder with --cwd", "name it with --cwd")

#: Files larger than this are not read into memory for a rewind (Claude Code keeps
#: backups of files it edited: source files, not data sets).
MAX_FILE_BYTES = 64 << 20


def backups_dir(path: Path, sid: str) -> Path:
    """``file-history/<sid>/`` of the config dir the transcript lives in
    (``<config>/projects/<project>/<sid>.jsonl``), else of ``$CLAUDE_CONFIG_DIR``."""
    if path.parent.parent.name == "projects":
        return store.file_history_dir(sid, path.parent.parent.parent)
    return store.file_history_dir(sid)


def plan_files(
    path: Path,
    session: Any,
    sid: str,
    target: int,
    *,
    cwd: str | Path | None = None,
    allow_outside: bool = False,
    hints: tuple[str, str] = CWD_HINTS,
) -> tuple[RewindPlan, Path]:
    """The plan that restores the files the session at ``path`` changed to their state at
    node ``target`` (`rewind.plan_rewind`), and the backups folder it reads. The project
    folder is ``cwd``, else the first cwd the session's main chain recorded; `UsageError`
    (with ``hints``) when there is none or it is not on this machine."""
    root = cwd if cwd is not None else session.first_cwd()
    root_s = store.canonical_cwd(root) if root is not None else None
    origin = checkpoint_origin(session)
    if root_s is None or not Path(root_s).is_dir():
        # A session with no file checkpoints at all says so first: naming its folder with
        # --cwd would only lead to that (a new user was sent there and back).
        choose_snapshot(session, target, origin)
    if root_s is None:
        raise UsageError(f"{path}: no cwd recorded in the session", hint=hints[0])
    if not Path(root_s).is_dir():
        raise NotFound(f"{root_s}: the session's project folder is not here", hint=hints[1])
    backups = backups_dir(path, sid)
    reader = FileReader(backups, root_s)
    plan = plan_rewind(
        session,
        target,
        cwd=root_s,
        current=reader.current,
        backup=reader.backup,
        allow_outside=allow_outside,
        origin=origin,
    )
    return plan, backups


#: How far up a chain of forks `checkpoint_origin` looks.
MAX_FORK_HOPS = 16


def checkpoint_origin(session: Any) -> str | None:
    """The session up ``session``'s chain of forks (``forkedFrom``) whose file holds file
    checkpoints, else the last one of the chain found here; None for a session that is no
    fork. A fork of a fork named its own parent, which has none either (a new user's find)."""
    from ..edge.reader import iter_lines
    from .core import forked_from

    sid = forked_from(session)
    last = sid
    for _ in range(MAX_FORK_HOPS):
        if sid is None:
            break
        last = sid
        try:
            path = store.resolve(sid).path
        except (NotFound, Unreadable, UsageError):
            break
        parent: str | None = None
        for line in iter_lines(path):
            for e in line.entries:
                if e.record.get("type") == "file-history-snapshot":
                    return sid
                origin = e.record.get("forkedFrom")
                if parent is None and isinstance(origin, dict) and isinstance(origin.get("sessionId"), str):
                    parent = str(origin["sessionId"])
        sid = None if parent == sid else parent
    return last


@dataclass(slots=True)
class FileReader:
    backups: Path  # <config dir>/file-history/<session id>
    root: str  # the canonical cwd the tracked paths are under

    def current(self, path: str) -> bytes | None:
        p = Path(path)
        try:
            st = p.lstat()
        except FileNotFoundError:
            self.check_parent(path)
            return None
        except NotADirectoryError as e:
            raise Refused("a parent is not a folder") from e
        except OSError as e:
            raise Refused(e.strerror or "cannot read") from e
        if stat.S_ISLNK(st.st_mode):
            raise Refused("a symbolic link")
        if not stat.S_ISREG(st.st_mode):
            raise Refused("not a regular file")
        if st.st_size > MAX_FILE_BYTES:
            raise Refused(f"larger than {MAX_FILE_BYTES >> 20} MiB")
        self.check_parent(path)
        try:
            return p.read_bytes()
        except OSError as e:
            raise Refused(e.strerror or "cannot read") from e

    def check_parent(self, path: str) -> None:
        """A file under the project whose folder resolves elsewhere (a symlinked folder)
        is refused: the write would land outside the project (Claude Code checks
        ``realParentDir`` for the same reason)."""
        if inside(path, self.root):
            real = os.path.realpath(os.path.dirname(path))
            if not inside(real, self.root):
                raise Refused(f"its folder resolves to {real}, outside {self.root}")

    def backup(self, name: str) -> bytes | None:
        p = self.backups / name
        try:
            st = p.lstat()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise Unreadable(f"{p}: cannot read the backup ({e.strerror})") from e
        if not stat.S_ISREG(st.st_mode):
            return None
        try:
            return p.read_bytes()
        except OSError as e:
            raise Unreadable(f"{p}: cannot read the backup ({e.strerror})") from e


@dataclass(frozen=True, slots=True)
class FileResult:
    path: str
    action: str
    done: bool
    reason: str | None = None
    kept: str | None = None  # where the pre-rewind content was saved


def _write_atomically(path: Path, data: bytes, mode: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tt-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        if path.is_symlink():  # appeared since the plan: do not replace a link
            raise IsADirectoryError(0, "became a symbolic link")
        os.replace(tmp, path)
        tmp = ""
    finally:
        if tmp:
            Path(tmp).unlink(missing_ok=True)


def _keep(path: Path, data: bytes | None) -> str | None:
    if data is None:
        return None
    k = path.with_name(path.name + ".tt-rewind.bak")
    n = 1
    while k.exists():
        n += 1
        k = path.with_name(f"{path.name}.tt-rewind.{n}.bak")
    with open(k, "xb") as f:
        f.write(data)
    return str(k)


def apply_plan(plan: RewindPlan, backups: Path, *, keep: bool = False) -> list[FileResult]:
    """Carry out ``plan`` (its changes only; refused and unknown files are left alone)."""
    results: list[FileResult] = []
    failed = False
    for c in plan.files:
        if not c.changes:
            continue
        p = Path(c.path)
        if c.action == DELETE and failed:
            results.append(FileResult(c.path, c.action, False, "kept: a restore failed"))
            continue
        try:
            kept = _keep(p, c.before) if keep else None
            if c.action in (RESTORE, CREATE):
                assert c.after is not None and c.backup is not None
                mode = _mode(backups / c.backup, p)
                _write_atomically(p, c.after, mode)
            elif c.action == DELETE:
                if p.is_symlink() or not p.is_file():
                    raise IsADirectoryError(0, "not a regular file")
                p.unlink()
            results.append(FileResult(c.path, c.action, True, None, kept))
        except OSError as e:
            failed = failed or c.action != DELETE
            results.append(FileResult(c.path, c.action, False, e.strerror or str(e)))
    return results


def _mode(backup: Path, target: Path) -> int:
    # Claude Code restores the backup's mode; fall back to the file's own.
    for p in (backup, target):
        try:
            return stat.S_IMODE(p.stat().st_mode)
        except OSError:
            continue
    return 0o644
