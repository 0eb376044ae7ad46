"""Finding sessions under the Claude config dir (the edge between tt and ``~/.claude``).

Layout (docs/format.md §1): ``$CLAUDE_CONFIG_DIR`` (default ``~/.claude``) holds
``projects/<sanitized cwd>/<session-id>.jsonl``; subagents live in
``<session-id>/subagents/**/agent-*.jsonl`` (2.1.x) or beside the sessions as
``agent-<hex>.jsonl`` (2.0.x); file-history backups in ``file-history/<session-id>/``.

The project folder name follows Claude Code's rule (the Agent SDK's ``_sanitize_path``):
every character outside ``[A-Za-z0-9]`` becomes ``-``; past 200 characters the name is
cut and a hash appended. The CLI hashes with ``Bun.hash`` and the SDK with a JS
``simpleHash``, so long names are matched by their 200-character prefix.

A directory's sessions include those of every git worktree of its repository, as the
Agent SDK's ``list_sessions(directory=...)`` and the /resume picker list them: each
worktree has its own project folder (`session_folders`). The worktrees are found by
reading git's own files (`worktrees.worktree_paths`), never by running git.

Invariants:
- A session *id* never resolves to a path outside the config dir: ids are checked
  against ``[0-9A-Za-z-]`` before any path is built from them.
- Paths given by the user are taken as they are (that is what a path means).
- Reads directory listings and stats only; never opens transcripts (see `reader`), nor
  any file but git's few (`worktrees`).
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..model.errors import AmbiguousSession, NotFound, Unreadable, UsageError
from ..model.ids import is_session_id
from .worktrees import worktree_paths
from .writer import is_by_product

MAX_SANITIZED_LENGTH = 200
_SANITIZE = re.compile(r"[^a-zA-Z0-9]")
_ID_CHARS = re.compile(r"^[0-9A-Za-z-]{1,64}$")


def config_dir(env: dict[str, str] | None = None) -> Path:
    e = os.environ if env is None else env
    d = e.get("CLAUDE_CONFIG_DIR")
    if d:
        return Path(unicodedata.normalize("NFC", d))
    return Path(unicodedata.normalize("NFC", str(Path.home() / ".claude")))


def projects_dir(env: dict[str, str] | None = None) -> Path:
    return config_dir(env) / "projects"


def in_a_project(path: Path) -> bool:
    """Whether ``path`` is directly in a project folder of the config dir: where
    ``claude --resume`` finds a session, and where tt finds one by its id."""
    return path.parent.parent.resolve() == projects_dir().resolve()


def simple_hash(s: str) -> str:
    """The JS ``simpleHash`` (int32 ``h*31 + c``, abs, base 36) used for long folder names."""
    h = 0
    for ch in s:
        h = ((h << 5) - h + ord(ch)) & 0xFFFFFFFF
    if h >= 0x80000000:
        h -= 0x100000000
    h = abs(h)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        out = digits[h % 36] + out
        h //= 36
        if not h:
            return out


def project_dir_name(cwd: str) -> str:
    """The folder name Claude Code gives a project, from its launch directory."""
    s = _SANITIZE.sub("-", cwd)
    if len(s) <= MAX_SANITIZED_LENGTH:
        return s
    return f"{s[:MAX_SANITIZED_LENGTH]}-{simple_hash(cwd)}"


def is_project_folder_of(folder: str, cwd: str) -> bool:
    """Whether ``folder`` is the project folder Claude Code gives ``cwd``: its name, or for
    a long path its cut name with any hash after it (the hash differs between runtimes)."""
    name = project_dir_name(cwd)
    return folder == name or (
        len(name) > MAX_SANITIZED_LENGTH and folder.startswith(name[:MAX_SANITIZED_LENGTH] + "-")
    )


def canonical_cwd(cwd: str | Path) -> str:
    return unicodedata.normalize("NFC", os.path.realpath(str(cwd)))


def find_project_dir(cwd: str | Path, root: Path | None = None) -> Path | None:
    root = projects_dir() if root is None else root
    name = project_dir_name(canonical_cwd(cwd))
    exact = root / name
    if exact.is_dir():
        return exact
    if len(name) <= MAX_SANITIZED_LENGTH:
        return None
    prefix = name[:MAX_SANITIZED_LENGTH] + "-"
    for d in _listdir(root):
        if d.is_dir() and d.name.startswith(prefix):
            return d
    return None


def session_folders(cwd: str | Path, root: Path | None = None, *, worktrees: bool = True) -> list[Path]:
    """The project folders holding the sessions of the working directory ``cwd``, as the
    Agent SDK's ``list_sessions(directory=cwd)`` picks them (``_list_sessions_for_project``).

    With fewer than two git worktrees (`worktrees.worktree_paths`): the directory's own folder
    (`find_project_dir`), or none. With two or more: its own folder first (it may be a
    subdirectory of a worktree, with a folder of its own), then the folder of every
    worktree (`worktree_folder_names`). ``worktrees=False`` is the SDK's
    ``include_worktrees=False``.
    """
    root = projects_dir() if root is None else root
    here = canonical_cwd(cwd)
    own = find_project_dir(here, root)
    trees = worktree_paths(here) if worktrees else []
    if len(trees) < 2:
        return [] if own is None else [own]
    names = worktree_folder_names(_dir_names(root), trees, None if own is None else own.name)
    return [root / n for n in names]


def worktree_folder_names(names: Iterable[str], worktrees: Sequence[str], own: str | None) -> list[str]:
    """Which of the project folder ``names`` belong to a repository with these
    ``worktrees``: ``own`` first when given, then the matching ``names`` in their order,
    each once. Pure.

    A folder belongs to a worktree when its name is the worktree's `project_dir_name`.
    Names of `MAX_SANITIZED_LENGTH` characters or more also take any folder named by
    their first 200 characters, ``-`` and a hash, and shorter ones do not: so
    ``/root/project`` never takes the folder of ``/root/project-foo``. Longer names are
    tried first, as in the SDK.
    """
    # The SDK compares long names with its own hash kept (``prefix + "-"`` on the whole
    # sanitized name), which only finds folders hashed as the SDK hashes; Claude Code
    # names folders with Bun.hash, and its /resume picker (2.1.332) compares the first
    # 200 characters, as `find_project_dir` does. For names of exactly 200 characters
    # both rules are the same.
    keys = sorted((project_dir_name(w) for w in worktrees), key=len, reverse=True)
    out = [] if own is None else [own]
    seen = set(out)
    for name in names:
        if name in seen:
            continue
        for key in keys:
            if name == key or (
                len(key) >= MAX_SANITIZED_LENGTH and name.startswith(key[:MAX_SANITIZED_LENGTH] + "-")
            ):
                out.append(name)
                seen.add(name)
                break
    return out


def _dir_names(d: Path) -> list[str]:
    """Names of the subdirectories of ``d``, sorted; a scandir, so no stat per entry
    where the file system gives the type."""
    try:
        with os.scandir(d) as it:
            return sorted(e.name for e in it if e.is_dir())
    except OSError:
        return []


def _listdir(d: Path) -> list[Path]:
    try:
        return sorted(d.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    except PermissionError:
        return []


def is_session_file(p: Path) -> bool:
    return p.name.endswith(".jsonl") and is_session_id(p.name[:-6])


def session_files(project: Path) -> list[Path]:
    """Main transcripts of one project folder (``<uuid>.jsonl``), in name order.

    Listed with `os.scandir`, whose entries know a regular file without a `stat` (and the
    names sorted as text, not as `Path`s): `tt stats --all` on 2,000 sessions listed them in
    35 ms, most of it `Path` comparisons and a `stat` per file."""
    try:
        with os.scandir(project) as entries:
            names = sorted(
                e.name
                for e in entries
                if e.name.endswith(".jsonl") and is_session_id(e.name[:-6]) and _is_file(e)
            )
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []
    return [project / n for n in names]


def transcripts_under(folder: Path) -> list[Path]:
    """Every ``*.jsonl`` file under ``folder`` (any depth, symbolic links to folders not
    followed), in path order, but tt's own by-products (backups, quarantines): what `tt
    validate DIR` checks, and `tt ls --check`, `--hidden` and `tt search` with it."""
    return [Path(p) for p in jsonl_under(folder)]


def jsonl_under(folder: Path) -> list[str]:
    """`transcripts_under` as path strings, in the same order: one ``scandir`` walk, six
    times faster than ``Path.rglob`` on a folder of 2,000 sessions with subagent and
    tool-result folders (0.11 s against 0.64 s), and no ``Path`` made per file."""
    found: list[str] = []
    todo = [str(folder)]
    while todo:
        try:
            with os.scandir(todo.pop()) as entries:
                for e in entries:
                    if e.name.endswith(".jsonl"):
                        if _is_file(e) and not _by_product(e.name):
                            found.append(e.path)
                    elif e.is_dir(follow_symlinks=False):
                        todo.append(e.path)
        except OSError:
            continue  # a folder that cannot be listed holds nothing to read, as for rglob
    # Path order: by parts ("a/b" before "a-b/c"), as sorting the Paths would give.
    return sorted(found, key=lambda p: p.split("/"))


def _is_file(e: os.DirEntry[str]) -> bool:
    try:
        return e.is_file()
    except OSError:  # as `Path.is_file`: a file that cannot be looked at is none
        return False


def all_projects(root: Path | None = None) -> list[Path]:
    root = projects_dir() if root is None else root
    return [d for d in _listdir(root) if d.is_dir()]


def all_session_files(root: Path | None = None) -> Iterator[Path]:
    for proj in all_projects(root):
        yield from session_files(proj)


def subagent_files(session_path: Path) -> list[Path]:
    """Subagent transcripts of a session: ``<id>/subagents/**/agent-*.jsonl`` (2.1.x).

    2.0.x ``agent-*.jsonl`` files beside the sessions name their parent only inside
    (``sessionId``); `legacy_agents_of` finds those.
    """
    d = session_path.with_suffix("") / "subagents"
    if not d.is_dir():
        return []
    return sorted(p for p in d.rglob("agent-*.jsonl") if p.is_file() and not _by_product(p.name))


def main_and_subagent_files(ref: SessionRef, subagents: bool) -> list[Path]:
    """The main file, then (``subagents``, and only for a file named by a session id) its
    subagent transcripts: the files a command on a whole session reads."""
    paths = [ref.path]
    if subagents and ref.session_id is not None:
        paths.extend(subagent_files(ref.path))
    return paths


def legacy_agent_files(project: Path) -> list[Path]:
    return [
        p
        for p in _listdir(project)
        if p.name.startswith("agent-") and p.suffix == ".jsonl" and not _by_product(p.name)
    ]


#: Bytes of a 2.0.x agent file read for its session id: 2.0.x writes ``sessionId`` in the
#: first line's envelope, ahead of the message (about 100 bytes in; docs/format.md §6).
_AGENT_HEAD = 4096


def agent_session_id(agent: Path) -> str | None:
    """The session a 2.0.x ``agent-*.jsonl`` names: the first ``sessionId`` in its head
    (the file's name does not say). None when there is none or the file is unreadable
    (`tt validate` says why)."""
    from ..model.titles import first_string_field

    try:
        with open(agent, "rb") as f:
            head = f.read(_AGENT_HEAD)
    except OSError:
        return None
    return first_string_field(head, "sessionId") or None


def legacy_agents_by_session(project: Path) -> dict[str, list[Path]]:
    """The 2.0.x ``agent-*.jsonl`` files of a project folder, by the session they name
    (`agent_session_id`), each list sorted."""
    out: dict[str, list[Path]] = {}
    for p in sorted(legacy_agent_files(project)):
        sid = agent_session_id(p)
        if sid:
            out.setdefault(sid, []).append(p)
    return out


def legacy_agents_of(session_path: Path) -> list[Path]:
    """The 2.0.x agent files beside the main transcript ``session_path`` that name it."""
    stem = session_path.name.removesuffix(".jsonl")
    return legacy_agents_by_session(session_path.parent).get(stem, [])


def session_of_subagent(path: Path) -> str | None:
    """The session whose subagent transcript ``path`` is, when that session's transcript is
    there: a 2.0.x ``agent-*.jsonl`` beside it that names it, or a file of its 2.1.x
    ``<id>/subagents/`` folder."""
    if not path.name.startswith("agent-"):
        return None
    sid = agent_session_id(path)
    if sid and is_session_id(sid):
        main = path.parent / f"{sid}.jsonl"
        if main.is_file() and path in legacy_agents_of(main):
            return sid
    for up in path.parents:
        if up.name == "subagents" and is_session_id(up.parent.name):
            main = up.parent.with_suffix(".jsonl")
            if main.is_file() and path in subagent_files(main):
                return up.parent.name
            break
    return None


def _by_product(name: str) -> bool:
    """A backup or quarantine an older tt left as ``agent-….jsonl.quarantine.jsonl``
    (`writer.by_product` names them ``.agent-…`` now, which the globs above never match)."""
    return is_by_product(name)


def file_history_dir(session_id: str, root: Path | None = None) -> Path:
    _check_id(session_id)
    return (config_dir() if root is None else root) / "file-history" / session_id


@dataclass(frozen=True, slots=True)
class SessionRef:
    path: Path
    session_id: str | None  # None when the file name is not a session id

    @property
    def project_dir(self) -> Path:
        return self.path.parent


def _check_id(spec: str) -> None:
    if not _ID_CHARS.match(spec):
        raise UsageError(f"{spec!r} is neither an existing file nor a session id")


def resolve(
    spec: str | None, *, cwd: str | Path | None = None, latest: bool = False, root: Path | None = None
) -> SessionRef:
    """Resolve what the user named: a path, a session id, an id prefix, or the latest session.

    ``latest`` (``-c/--continue``) picks the most recently modified session of the
    current directory's project.
    """
    from ..model.session import session_id_from_name

    root = projects_dir() if root is None else root
    if spec is None or latest:
        if spec is not None:
            raise UsageError("give a session or --continue, not both")
        here = canonical_cwd(cwd or os.getcwd())
        proj = find_project_dir(here, root)
        files = session_files(proj) if proj is not None else []
        if not files:
            raise NotFound(
                f"no sessions for {here} under {root}",
                hint="name a session id or a file (tt ls --all lists every session)",
            )
        best = max(files, key=lambda p: p.stat().st_mtime)
        return SessionRef(best, session_id_from_name(best.name))
    p = Path(spec).expanduser()
    if p.is_file():
        return SessionRef(p, session_id_from_name(p.name))
    if p.exists():
        if p.is_dir():
            raise UsageError(f"{spec}: is a directory; name a transcript file or a session id")
        raise Unreadable(f"{spec}: not a regular file (a device, a pipe or a socket)")
    if "/" in spec or spec.endswith(".jsonl") or os.sep in spec:
        # A working directory recorded on another machine (a new user named the cwd a
        # session recorded, as -p takes it): its sessions are in its project folder here.
        proj = find_project_dir(str(p), root) if p.is_absolute() else None
        hint = (
            f"no such path here, but sessions were recorded in it: `tt ls -p {spec}` lists them, "
            f"and -p {spec} names them in validate, doctor, repair, stats and search"
            if proj is not None and session_files(proj)
            else None
        )
        raise NotFound(f"{spec}: no such file", hint=hint)
    _check_id(spec)
    want = spec.lower()
    exact: list[Path] = []
    prefix: list[Path] = []
    for f in all_session_files(root):
        stem = f.name[:-6].lower()
        if stem == want:
            exact.append(f)
        elif stem.startswith(want):
            prefix.append(f)
    found = exact or prefix
    if not found:
        raise NotFound(f"no session {spec!r} under {root}", hint="`tt ls --all` lists the sessions")
    if len(found) > 1:
        ids = ", ".join(sorted({f.name[:-6] for f in found})[:5])
        if len({f.name for f in found}) > 1:
            raise AmbiguousSession(
                f"{spec!r} matches {len(found)} sessions: {ids}", hint="give more of the id"
            )
        raise AmbiguousSession(
            f"session {spec!r} exists in {len(found)} projects: "
            + ", ".join(str(f.parent.name) for f in found),
            hint="name the file by its path",
        )
    return SessionRef(found[0], session_id_from_name(found[0].name))


def session_id_of(ref: SessionRef) -> str:
    """The session's id: its file name, else the first main-chain ``sessionId`` inside
    (read from at most the first 200 lines); `UsageError` when neither has one."""
    from ..model.errors import UsageError
    from .reader import iter_lines

    if ref.session_id is not None:
        return ref.session_id
    for ln in iter_lines(ref.path):
        for e in ln.entries:
            sid = e.record.get("sessionId")
            if isinstance(sid, str) and sid and not e.is_sidechain:
                return sid
        if ln.line > 200:
            break
    raise UsageError(
        f"{ref.path}: no session id in its name or its first records", hint="name the session by id"
    )
