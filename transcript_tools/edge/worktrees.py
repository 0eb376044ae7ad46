"""The worktrees of a git repository and the branch checked out, read from git's own files
(never by running git).

`claude_dir.session_folders` lists a directory's sessions with those of every worktree of its
repository, as the Agent SDK's ``list_sessions(directory=...)`` (which runs ``git
worktree list --porcelain``) and Claude Code's /resume picker do. tt must work where git
is missing, so `worktree_paths` reads what git itself reads.

`head_branch` is the branch a resume records as ``gitBranch`` on the lines it appends.

Invariants:
- Reads only ``.git`` files, ``HEAD``, ``commondir`` and ``worktrees/*/gitdir``, a few
  hundred bytes each (``.git`` files at most 1 MiB, as git); never writes.
- No process is spawned, and a repository git would refuse (a broken ``.git`` file, an
  unreadable ``commondir``) or a file that cannot be read means fewer worktrees, never
  an exception.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from pathlib import Path

#: git reads a ``.git`` file of at most 1 MiB (``read_gitfile_gently``); the other files
#: read here are a line each.
_GIT_FILE_MAX = 1 << 20
_OID_HEX = re.compile(rb"[0-9a-fA-F]{40}")


def worktree_paths(cwd: str | Path) -> list[str]:
    """The worktrees of the git repository holding ``cwd``, as ``git worktree list
    --porcelain`` prints them (the SDK's ``_get_worktree_paths`` runs it): the main one,
    then the linked ones sorted by path; NFC-normalised, as the SDK does. [] outside a
    repository, and where git would stop with an error.

    Reads git's files instead of running git (tt must work where git is missing):
    - the git dir: going up from ``cwd``, as git does and without crossing a file
      system, the first ``.git`` directory, or ``.git`` file ``gitdir: <path>`` (linked
      worktrees, submodules; relative to the file's directory), or a directory that is
      itself a git dir (bare repository, or inside ``.git``). A git dir has a ``HEAD``
      naming a ref or an object id, and ``objects/`` and ``refs/`` in its common dir;
    - the common dir: ``<gitdir>/commondir`` (``../..`` in a linked worktree's git dir)
      resolved against the git dir, else the git dir itself;
    - the main worktree: the common dir's real path less a final ``/.git`` (so a bare
      repository, a submodule or a ``--separate-git-dir`` repository is listed as its
      git dir, as git 2.39 prints them);
    - each linked worktree: ``<common>/worktrees/<id>/gitdir``, the path of that
      worktree's ``.git`` file (relative to ``worktrees/<id>/`` since git 2.48's
      ``worktree.useRelativePaths``), less ``/.git``. One whose directory is gone is
      still listed (git says "prunable"); one whose ``gitdir`` cannot be read is not.

    Not followed: ``GIT_DIR`` and the other ``GIT_*`` variables, ``safe.directory``
    (git refuses a repository owned by another user; this lists it).
    """
    gitdir = _discover_git_dir(unicodedata.normalize("NFC", os.path.realpath(str(cwd))))
    if gitdir is None:
        return []
    common = _common_dir(gitdir)
    if common is None:
        return []
    main = _strip_suffix(os.path.realpath(common), "/.git")
    registry = os.path.join(common, "worktrees")
    linked = [
        p for p in (_linked_worktree(os.path.join(registry, i)) for i in _names(registry)) if p is not None
    ]
    return [unicodedata.normalize("NFC", p) for p in [main, *sorted(linked)]]


def head_branch(cwd: Path) -> str | None:
    """The branch checked out at ``cwd`` (``HEAD`` when detached), read from ``HEAD`` in the
    git dir of the nearest ``.git`` (a directory, or a file ``gitdir: <path>`` as in a
    linked worktree); None outside a repository or when a file cannot be read.

    Claude Code reads its ``gitBranch`` from the same files rather than running git
    (2.1.197: the ``.git`` file's ``gitdir:``, then ``HEAD``'s ``ref: refs/heads/<name>``,
    else ``HEAD``). Unlike `worktree_paths` this does not check that the git dir is one
    git would accept: a ``.git`` whose ``HEAD`` is missing is passed over."""
    for d in (cwd, *cwd.parents):
        git = d / ".git"
        if git.is_file():  # a worktree: "gitdir: <path>"
            data = _read_small(str(git), _GIT_FILE_MAX)
            if data is None:
                return None
            target = os.fsdecode(data).strip().removeprefix("gitdir:").strip()
            git = (d / target) if not os.path.isabs(target) else Path(target)
        head = git / "HEAD"
        if head.is_file():
            raw = _read_small(str(head), _GIT_FILE_MAX)
            if raw is None:
                return None
            text = os.fsdecode(raw).strip()
            return text.removeprefix("ref: refs/heads/") if text.startswith("ref: ") else "HEAD"
    return None


def _discover_git_dir(start: str) -> str | None:
    """The git dir git finds from ``start`` (``setup_git_directory_gently_1``), or None."""
    try:
        device = os.stat(start).st_dev
    except OSError:
        return None
    d = start
    while True:
        dotgit = os.path.join(d, ".git")
        try:
            mode: int | None = os.stat(dotgit).st_mode
        except OSError:
            mode = None
        if mode is not None and stat.S_ISREG(mode):
            return _read_gitfile(dotgit)  # git stops at a .git file, good or bad
        if mode is not None and _is_git_dir(dotgit):
            return dotgit
        if _is_git_dir(d):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        try:
            if os.stat(parent).st_dev != device:
                return None  # git stops at a mount point (unless GIT_DISCOVERY_ACROSS_FILESYSTEM)
        except OSError:
            return None
        d = parent


def _read_gitfile(path: str) -> str | None:
    """The git dir a ``.git`` file names (``read_gitfile_gently``), or None if git would
    reject it."""
    data = _read_small(path, _GIT_FILE_MAX + 1)
    if data is None or len(data) > _GIT_FILE_MAX or not data.startswith(b"gitdir: "):
        return None
    target = os.fsdecode(data.rstrip(b"\r\n")[8:])
    if not target:
        return None
    target = os.path.join(os.path.dirname(path), target)  # an absolute target stays as it is
    return os.path.realpath(target) if _is_git_dir(target) else None


def _is_git_dir(d: str) -> bool:
    """git's ``is_git_directory``: a valid ``HEAD``, and ``objects`` and ``refs`` in the
    common dir."""
    if not _valid_head(os.path.join(d, "HEAD")):
        return False
    common = _common_dir(d)
    return common is not None and all(
        os.access(os.path.join(common, s), os.X_OK) for s in ("objects", "refs")
    )


def _valid_head(path: str) -> bool:
    """git's ``validate_headref``: a symlink into ``refs/``, ``ref: refs/...``, or an object id."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    if stat.S_ISLNK(mode):
        try:
            return os.readlink(path).startswith("refs/")
        except OSError:
            return False
    data = _read_small(path, 255)
    if data is None:
        return False
    if data.startswith(b"ref:") and data[4:].lstrip().startswith(b"refs/"):
        return True
    return _OID_HEX.match(data) is not None


def _common_dir(gitdir: str) -> str | None:
    """``<gitdir>/commondir`` resolved against ``gitdir``, else ``gitdir``; None when the
    file is there but unreadable or empty (git dies there)."""
    f = os.path.join(gitdir, "commondir")
    if not os.path.exists(f):
        return gitdir
    data = _read_small(f, _GIT_FILE_MAX)
    if not data:
        return None
    return os.path.realpath(os.path.join(gitdir, os.fsdecode(data.rstrip(b"\r\n"))))


def _linked_worktree(entry: str) -> str | None:
    """The path of the linked worktree registered in ``worktrees/<id>`` (git's
    ``get_linked_worktree``), or None when its ``gitdir`` file cannot be read."""
    data = _read_small(os.path.join(entry, "gitdir"), _GIT_FILE_MAX)
    if not data:
        return None
    path = _strip_suffix(os.fsdecode(data.rstrip()), "/.git")
    if not path:
        return None
    if not os.path.isabs(path):
        path = os.path.realpath(os.path.join(entry, path))
    return path


def _strip_suffix(s: str, suffix: str) -> str:
    return s[: -len(suffix)] if s.endswith(suffix) else s


def _read_small(path: str, limit: int) -> bytes | None:
    """At most ``limit`` bytes of a file; None when it cannot be read (missing, a
    directory, no permission): for git's files that means "not there"."""
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except OSError:
        return None


def _names(d: str) -> list[str]:
    try:
        return os.listdir(d)
    except OSError:
        return []
