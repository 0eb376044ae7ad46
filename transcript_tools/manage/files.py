"""The file side of ``tt rename``, ``tt tag`` and ``tt delete`` (and of the API's
``rename_session``, ``tag_session`` and ``delete_session``): one copy for both.

Rename and tag append one record (`manage.core.rename_line` / `tag_line`, the Agent SDK's
bytes) with one ``write`` on an O_APPEND descriptor (`writer.append_records`), so a
Claude Code process still writing the session cannot interleave with it.

Delete: `survey` looks at what belongs to the session (never following a symlink) and
`manage.core.plan_delete` decides; `remove` removes folders first and the transcript
last, so a run that fails half-way leaves the session listed, to be deleted again.

Invariants:
- Never prints and never asks: the confirmation is the caller's (the CLI asks, the API
  does not). Failures are `errors` classes: `NotFound` (no transcript), `Unreadable`
  (an empty file, a path that cannot be examined), `WriteFailed` (a removal failed).
- `survey` only reads; a file that vanishes between survey and removal is skipped.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..edge import claude_dir as store
from ..edge.reader import file_size
from ..edge.writer import append_records, is_by_product_of
from ..model.errors import NotFound, Unreadable, WriteFailed
from ..model.ids import is_session_id
from .core import DeletePlan, Found, plan_delete


def append_record(ref: store.SessionRef, line: bytes) -> None:
    """Append the record ``line`` (as `rename_line` / `tag_line` build it) to ``ref``."""
    if file_size(ref.path) == 0:
        # The SDK treats an empty file as "no session here" too.
        raise Unreadable(f"{ref.path}: empty file, not a session")
    append_records(ref.path, [line.rstrip(b"\n")])


def _found(p: Path) -> Found | None:
    """What is at ``p`` (never following a symlink), or None."""
    try:
        st = p.lstat()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise Unreadable(f"{p}: cannot read ({e.strerror})") from e
    if p.is_symlink() or not p.is_dir():
        return Found(p, False, 1, st.st_size)
    files = size = 0
    for root, _dirs, names in os.walk(p):
        for n in names:
            files += 1
            try:
                size += os.lstat(os.path.join(root, n)).st_size
            except OSError:
                pass
    return Found(p, True, files, size)


def _inside(p: Path, root: Path) -> bool:
    try:
        p.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def _legacy_agents(project: Path, sid: str) -> list[Found]:
    found = (_found(p) for p in store.legacy_agents_by_session(project).get(sid, []))
    return [f for f in found if f is not None]


def _by_products(files: list[Path]) -> list[Found]:
    """tt's backups and quarantines of ``files`` beside them (`writer.by_product`'s names:
    ``<name>[.<stamp>].bak``, ``….quarantine.jsonl``, dot-led for an agent file)."""
    listed: dict[Path, list[str]] = {}  # each folder read once (2.0.x agents share one)
    out: list[Found] = []
    for f in files:
        if f.parent not in listed:
            try:
                listed[f.parent] = sorted(os.listdir(f.parent))
            except OSError:
                listed[f.parent] = []
        for n in listed[f.parent]:
            if is_by_product_of(n, f.name):
                found = _found(f.parent / n)
                if found is not None:
                    out.append(found)
    return out


def survey(ref: store.SessionRef) -> DeletePlan:
    """What ``tt delete`` would remove for ``ref`` (`manage.core.plan_delete`). Reads only."""
    main = _found(ref.path)
    if main is None:
        raise NotFound(f"{ref.path}: no such file")
    stem = ref.path.name.removesuffix(".jsonl")
    if not is_session_id(stem):
        files, metas = [ref.path], []
        if ref.path.name.startswith("agent-"):
            meta = ref.path.with_name(stem + ".meta.json")
            found = _found(meta)
            if found is not None:
                files.append(meta)
                metas.append(found)
        return plan_delete(
            main,
            subagent_of=store.session_of_subagent(ref.path),
            by_products=_by_products(files),
            sidecars=metas,
        )
    # file-history/<id>/ belongs to the config dir's session of that id: only when the
    # transcript named is that session's (not a copy elsewhere) is it part of the plan.
    ours = _inside(ref.path, store.projects_dir())
    legacy = _legacy_agents(ref.path.parent, stem) if ours else []
    return plan_delete(
        main,
        session_folder=_found(ref.path.parent / stem),
        file_history=_found(store.file_history_dir(stem)) if ours else None,
        legacy_subagents=legacy,
        by_products=_by_products([ref.path, *(f.path for f in legacy)]),
    )


def blocked(plan: DeletePlan) -> str | None:
    """The first folder that does not let this process remove what the plan takes from it
    (each target's folder, and every folder inside a folder target), or None: checked before
    anything goes, so a delete that cannot finish removes nothing (a new user's read-only
    project folder: the subagents went, then the transcript failed). A read-only file
    system answers only when written to: `remove` says what went before it."""
    for t in plan.targets:
        folders = [t.path.parent]
        if t.is_dir and not t.path.is_symlink():
            folders += [Path(root) for root, _dirs, _files in os.walk(t.path)]
        for d in folders:
            if not os.access(d, os.W_OK | os.X_OK):
                return f"{t.path}: cannot delete ({d} is not writable); nothing was deleted"
    return None


def remove(plan: DeletePlan) -> None:
    """Remove what ``plan`` names: folders and agent files first, the transcript last; a
    folder that would refuse a removal stops it before anything goes (`blocked`), and a
    failure half-way says what went before it."""
    refused = blocked(plan)
    if refused is not None:
        raise WriteFailed(refused)
    done: list[Path] = []
    for t in sorted(plan.targets, key=lambda t: t.kind == "transcript"):
        try:
            if t.is_dir:
                shutil.rmtree(t.path)
            else:
                t.path.unlink()
        except FileNotFoundError:
            continue
        except OSError as e:
            # rmtree stops at the first failure: what it took before it is gone.
            part = " (partly deleted)" if t.is_dir else ""
            gone = f"; already deleted: {', '.join(map(str, done))}" if done else ""
            still = "; the transcript is still there" if t.kind != "transcript" else ""
            raise WriteFailed(f"{t.path}: could not delete{part} ({e.strerror}){still}{gone}") from e
        done.append(t.path)
