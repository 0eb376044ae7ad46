"""Which folders and files a scope names: the project folders of `tt ls`, `tt stats`,
`tt search`, `tt validate` and the rest (`project_dirs`), and a session's subagent files
(`agent_files`, `LegacyAgents`).

Kept apart from `catalog.files` so that a command that only needs its folders (`tt stats`)
does not import the listing's, the validator's and the search's modules (~20 ms of start-up).

Invariants: reads directory listings only, never a transcript's bytes; a scope that names
nothing is `NotFound`, a contradictory one `UsageError`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..edge import claude_dir as store
from ..model.errors import NotFound, UsageError
from ..model.session import session_id_from_name

#: A Windows drive path, as Claude Code on Windows records a working directory.
_WINDOWS_PATH = re.compile(r"^[A-Za-z]:[\\/]")


def config_hint() -> str:
    """What to check when the config dir holds no ``projects/``: the variable when it is
    set (a new user read "set CLAUDE_CONFIG_DIR" with it set), else how to set it."""
    set_to = os.environ.get("CLAUDE_CONFIG_DIR")
    if set_to:
        return f"CLAUDE_CONFIG_DIR is {set_to}: Claude Code keeps its sessions under its projects/ folder"
    return "Claude Code's config dir is ~/.claude unless CLAUDE_CONFIG_DIR names another"


def project_dirs(
    project: str | None = None,
    *,
    all_: bool = False,
    cwd: str | Path | None = None,
    root: Path | None = None,
    worktrees: bool = True,
) -> list[Path]:
    """The project folders in scope: every one (``all_``), the one named by ``project``
    (a folder under ``projects/``, or its name), or those of a working directory
    (``project``, else the current one). A working directory's are its own folder and,
    with ``worktrees``, the folders of the other git worktrees of its repository
    (`claude_dir.session_folders`)."""
    root = store.projects_dir() if root is None else root
    if all_:
        if project is not None:
            raise UsageError("give --project or --all, not both")
        if not root.is_dir():
            raise NotFound(f"no Claude projects folder at {root}", hint=config_hint())
        return store.all_projects(root)
    if project is not None:
        p = Path(project).expanduser()
        if p.is_dir() and (p.parent.resolve() == root.resolve() or store.session_files(p)):
            return [p]  # a project folder itself
        named = root / project
        if "/" not in project and named.is_dir():
            return [named]
        if p.is_dir():
            return _working_dir_folders(p, root, worktrees)
        if p.is_absolute():
            # The path of a project on the machine that wrote the sessions (a config dir
            # copied here): the folder Claude Code named after it.
            moved = store.find_project_dir(p, root)
            if moved is not None:
                return [moved]
        elif _WINDOWS_PATH.match(project):
            # The same for a Windows machine's path (C:\Users\…: "C--Users-…"), which is no
            # absolute path here (new-user pass: exit 3 on a copied Windows config dir).
            named = root / store.project_dir_name(project)
            if named.is_dir():
                return [named]
        raise NotFound(f"{project}: neither a project folder under {root} nor a directory")
    return _working_dir_folders(cwd or os.getcwd(), root, worktrees)


def _working_dir_folders(directory: str | Path, root: Path, worktrees: bool) -> list[Path]:
    found = store.session_folders(directory, root, worktrees=worktrees)
    if not found:
        raise NotFound(
            f"no sessions for {store.canonical_cwd(directory)} under {root}",
            hint="`tt ls --all` lists every project",
        )
    return found


def agent_files(path: Path, legacy: dict[str, list[Path]] | None = None) -> list[Path]:
    """Every subagent file of a session: ``<id>/subagents/**`` (2.1.x) and the 2.0.x
    ``agent-*.jsonl`` beside it that name it (``legacy``: `claude_dir.legacy_agents_by_session` of its
    project, when the caller goes through many sessions of one project)."""
    sid = session_id_from_name(path.name)
    if legacy is None:
        legacy = store.legacy_agents_by_session(path.parent)
    return store.subagent_files(path) + (legacy.get(sid, []) if sid else [])


class LegacyAgents:
    """`claude_dir.legacy_agents_by_session` per project folder, read once."""

    def __init__(self) -> None:
        self._by_project: dict[Path, dict[str, list[Path]]] = {}

    def __call__(self, session: Path) -> list[Path]:
        project = session.parent
        if project not in self._by_project:
            self._by_project[project] = store.legacy_agents_by_session(project)
        return agent_files(session, self._by_project[project])
