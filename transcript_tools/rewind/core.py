"""Rewinding files to their state at a message: the plan (pure).

Claude Code keeps file checkpoints (docs/format.md §13, §3.6): at each prompt a
``file-history-snapshot`` record (``messageId`` = the prompt's uuid;
``trackedFileBackups{path: {backupFileName, version, backupTime, realParentDir}}``) and,
from 2.1.2xx, at the first edit of a file in a turn a ``file-history-delta`` record
(``messageId`` = the editing message, ``snapshotMessageId``, ``trackingPath``, ``backup``)
that adds the file to that prompt's snapshot. A backup is the file's content at that
point, stored as ``<config dir>/file-history/<session>/<backupFileName>``; a
``backupFileName`` of null means the file did not exist then. Tracking paths are relative
to the session's cwd, or absolute for files outside it.

This module does what Claude Code 2.1.332 does on ``/rewind`` (read from its bundled
source: ``Ade`` rebuilds the snapshots along the conversation, ``Jss`` applies one):

- snapshots are rebuilt in conversation order: a snapshot record is appended (a later
  record for the same prompt — ``isSnapshotUpdate`` in 2.0.x — replaces it), a delta is
  merged into its prompt's snapshot, or starts one from the previous snapshot's files;
- every file tracked anywhere is put back to its backup in the target snapshot; a file
  the target snapshot does not list gets its first version (``version`` 1: its content
  before Claude Code first touched it); a null backup means the file is deleted;
- beyond Claude Code, which only knows the snapshots since the last compaction (its
  resume rebuilds them from there, so later snapshots start empty): the history before
  a compact boundary is read too, and a file missing from the target snapshot takes the
  *first backup after it*, if that is a version 1 (tracking started after the target);
  otherwise the file was tracked before and lost — its state at the target was never
  saved, and it is left alone (`NOT_CHECKPOINTED`);
- a file whose content already equals the backup is left alone; deletions come last.

Claude Code keeps only the last 100 snapshots of a conversation in memory; tt reads them
all, so it can rewind further back than ``/rewind`` offers.

The target: a prompt's uuid names the state when that prompt was sent (its snapshot),
as in Claude Code. Any other message names the state when the *next* prompt was sent,
provided no file-editing tool ran between the two (else the state at that message was
never saved, and the plan refuses, naming the prompts around it).

`plan_rewind` takes the session and two readers (current file content, backup content)
and returns a `RewindPlan`; `unified_diff` renders a change. Applying it is the
adapter's (`rewind.files`). Pure: no I/O here.
"""

from __future__ import annotations

import difflib
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model.chain import BOUNDARY, ChainIndex
from ..model.errors import NotFound, UsageError
from ..model.session import Session

#: Tools whose calls change files (their edits are checkpointed by Claude Code).
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})

RESTORE, CREATE, DELETE, UNCHANGED = "restore", "create", "delete", "unchanged"
NO_BACKUP, OUTSIDE, REFUSED = "backup-missing", "outside-cwd", "refused"
#: A file the checkpoints do not cover at that message (tracking restarted after it, as
#: after a compaction: Claude Code rebuilds its file history from the compacted
#: conversation only). Left as it is, as Claude Code would leave it.
NOT_CHECKPOINTED = "not-checkpointed"


class Refused(Exception):
    """Raised by a ``current`` reader for a path it will not read or write through (a
    symlink, a folder, a device); the plan then leaves that file alone."""


@dataclass(frozen=True, slots=True)
class Backup:
    name: str | None  # backupFileName; None: the file did not exist
    version: int
    real_parent_dir: str | None = None

    @classmethod
    def of(cls, raw: Any) -> Backup | None:
        if not isinstance(raw, dict) or "backupFileName" not in raw:
            return None
        name = raw.get("backupFileName")
        if name is not None and (not isinstance(name, str) or not name or "/" in name or name in (".", "..")):
            return None
        v = raw.get("version")
        rp = raw.get("realParentDir")
        return cls(name, v if isinstance(v, int) else 0, rp if isinstance(rp, str) else None)


@dataclass(slots=True)
class Snapshot:
    message_id: str
    backups: dict[str, Backup] = field(default_factory=dict)


def history(ix: ChainIndex, i: int) -> list[int]:
    """Root → node ``i``, continuing past compact boundaries through their
    ``logicalParentUuid`` (the pre-compaction history is still the files' history)."""
    out: list[int] = []
    seen: set[int] = set()
    j: int | None = i
    while j is not None and j >= 0 and j not in seen:
        seen.add(j)
        out.append(j)
        p = ix.parent[j]
        if p < 0 and ix.flags[j] & BOUNDARY and j in ix.logical:
            p = ix.find(ix.logical[j]) if ix.logical[j] else None  # type: ignore[assignment]
        j = p
    out.reverse()
    return out


def snapshots_along(session: Session, chain: list[int]) -> list[Snapshot]:
    """Claude Code's snapshot list for a conversation (its ``Ade``), in chain order.

    A snapshot record is keyed by its top-level ``messageId`` (for a 2.0.x-2.1.19x
    ``isSnapshotUpdate`` record, the message that made the edit; its
    ``snapshot.messageId`` names the prompt it updates) and applied when the chain
    reaches that message; a delta likewise, by its ``messageId``."""
    records: dict[str, dict[str, Any]] = {}
    deltas: dict[str, list[dict[str, Any]]] = {}
    rec: dict[str, Any] | None  # a line's record below, then the snapshot record found, if any
    for e in session.entries:
        rec = e.record
        t = rec.get("type")
        if t == "file-history-snapshot":
            snap = rec.get("snapshot")
            if not isinstance(snap, dict) or not isinstance(snap.get("messageId"), str):
                continue
            key = rec.get("messageId")
            records[key if isinstance(key, str) else snap["messageId"]] = rec  # last one wins, as a JS Map
        elif t == "file-history-delta":
            mid = rec.get("messageId")
            if (
                isinstance(mid, str)
                and isinstance(rec.get("trackingPath"), str)
                and isinstance(rec.get("snapshotMessageId"), str)
            ):
                deltas.setdefault(mid, []).append(rec)
    out: list[Snapshot] = []
    where: dict[str, int] = {}
    for i in chain:
        u = session.nodes[i].record["uuid"]
        rec = records.get(u)
        if rec is not None:
            snap = Snapshot(rec["snapshot"]["messageId"], _backups(rec["snapshot"].get("trackedFileBackups")))
            at = where.get(snap.message_id) if rec.get("isSnapshotUpdate") is True else None
            if at is None:
                where[snap.message_id] = len(out)
                out.append(snap)
            else:
                out[at] = snap
        for d in deltas.get(u, ()):
            b = Backup.of(d.get("backup"))
            if b is None:
                continue
            sm = d["snapshotMessageId"]
            if sm in where:
                out[where[sm]].backups[d["trackingPath"]] = b
            else:
                prev = dict(out[-1].backups) if out else {}
                prev[d["trackingPath"]] = b
                where[sm] = len(out)
                out.append(Snapshot(sm, prev))
    return out


def _backups(raw: Any) -> dict[str, Backup]:
    out: dict[str, Backup] = {}
    if isinstance(raw, dict):
        for path, v in raw.items():
            b = Backup.of(v)
            if isinstance(path, str) and path and b is not None:
                out[path] = b
    return out


@dataclass(frozen=True, slots=True)
class FileChange:
    tracking_path: str
    path: str  # absolute
    action: str  # restore | create | delete | unchanged | backup-missing | outside-cwd | refused
    backup: str | None  # the backup file name restored from (None: delete / unknown)
    before: bytes | None = None  # current content (None: missing)
    after: bytes | None = None  # content after the rewind (None: deleted)
    reason: str | None = None  # why a file is left alone (refused)

    @property
    def changes(self) -> bool:
        return self.action in (RESTORE, CREATE, DELETE)


@dataclass(frozen=True, slots=True)
class RewindPlan:
    target: str  # the message asked for
    snapshot: str  # the prompt whose snapshot is restored
    cwd: str
    files: tuple[FileChange, ...]
    note: str | None = None

    @property
    def changes(self) -> list[FileChange]:
        return [f for f in self.files if f.changes]

    @property
    def problems(self) -> list[FileChange]:
        return [f for f in self.files if f.action in (NO_BACKUP, OUTSIDE, REFUSED)]


def _edits_between(session: Session, chain: list[int], a: int, b: int) -> bool:
    for i in chain[a:b]:
        content = session.nodes[i].content
        if isinstance(content, list):
            for blk in content:
                if isinstance(blk, dict) and blk.get("type") == "tool_use" and blk.get("name") in EDIT_TOOLS:
                    return True
    return False


def choose_snapshot(
    session: Session, target: int, origin: str | None = None
) -> tuple[int, list[Snapshot], str | None]:
    """The index (in the list) of the snapshot holding the files' state at node
    ``target``, every snapshot known in conversation order, and a note when the target
    is not a prompt."""
    ix = session.index
    to_target = history(ix, target)
    leaf = ix.active_leaf()
    active = history(ix, leaf) if leaf is not None else []
    on_active = target in set(active)
    # The conversation the target belongs to: the active one if it is on it (files
    # tracked later in it are put back too, as Claude Code does); else its own branch.
    chain = active if on_active else to_target
    snaps = snapshots_along(session, chain)
    if not on_active:
        known = {s.message_id for s in snaps}
        snaps += [s for s in snapshots_along(session, active) if s.message_id not in known]
    if not snaps:
        raise UsageError(
            "this session has no file checkpoints (no file-history-snapshot records on its conversation)",
            hint=f"{no_checkpoints_hint(session, origin)}; --conversation alone still forks",
        )
    by_id = {s.message_id: k for k, s in enumerate(snaps)}
    uuid = session.nodes[target].record["uuid"]
    if uuid in by_id:
        return by_id[uuid], snaps, None
    pos = chain.index(target)
    later = [k for k in range(pos + 1, len(chain)) if session.nodes[chain[k]].record["uuid"] in by_id]
    earlier = [k for k in range(pos) if session.nodes[chain[k]].record["uuid"] in by_id]
    if not later:
        raise UsageError(
            f"no file checkpoint after message {uuid}: the files' state then is their state at the end of the session",
            hint=_prompts_hint(session, chain, earlier[-1:] if earlier else []),
        )
    nxt = later[0]
    # The target's own tool calls run after it was written: they count as later edits.
    if _edits_between(session, chain, pos, nxt):
        raise UsageError(
            f"files were edited after message {uuid} within its turn; that state was never saved",
            hint=_prompts_hint(session, chain, ([earlier[-1]] if earlier else []) + [nxt]),
        )
    prompt = session.nodes[chain[nxt]].record["uuid"]
    return (
        by_id[prompt],
        snaps,
        f"the state at this message is the one saved when the next prompt ({prompt}) was sent",
    )


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One point `plan_rewind` can restore the files to: a prompt with a file checkpoint."""

    uuid: str  # the prompt's: what --at takes
    timestamp: str | None
    files: int  # files the checkpoint tracks
    prompt: str  # the prompt's text, as typed (first line)


def forked_from(session: Session) -> str | None:
    """The session this one was forked from (``forkedFrom.sessionId`` of its records: `tt
    fork` and the SDK's ``fork_session`` copy the messages, not the file checkpoints), or
    None. Where the checkpoints are, when this session has none."""
    for node in session.nodes:
        origin = node.record.get("forkedFrom")
        if isinstance(origin, dict) and isinstance(origin.get("sessionId"), str):
            return str(origin["sessionId"])
    return None


def no_checkpoints_hint(session: Session, origin: str | None = None) -> str:
    """Why a session has no file checkpoints, and where to look (a new user rewound a fork
    and was told only that Claude Code writes them in interactive sessions). ``origin``:
    the session up its fork chain that has them (`files.checkpoint_origin`), when known;
    else the one it was forked from."""
    origin = origin or forked_from(session)
    if origin is not None:
        return (
            f"it is a fork of session {origin}: a fork copies the messages, not the file checkpoints; "
            f"rewind {origin} instead"
        )
    return (
        "Claude Code writes them in interactive sessions, and in -p mode only with "
        "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING=true"
    )


def checkpoints(session: Session) -> list[Checkpoint]:
    """The file checkpoints of the session's conversation (the active chain, past its compact
    boundaries), oldest first: the prompts ``--at`` can name as they are."""
    leaf = session.index.active_leaf()
    chain = history(session.index, leaf) if leaf is not None else []
    nodes = {session.nodes[i].record["uuid"]: session.nodes[i].record for i in chain}
    out: list[Checkpoint] = []
    for snap in snapshots_along(session, chain):
        rec = nodes.get(snap.message_id)
        if rec is None:
            continue
        ts = rec.get("timestamp")
        out.append(
            Checkpoint(snap.message_id, ts if isinstance(ts, str) else None, len(snap.backups), _text(rec))
        )
    return out


def _text(record: Mapping[str, Any]) -> str:
    msg = record.get("message")
    content = msg.get("content") if isinstance(msg, Mapping) else None
    if isinstance(content, list):
        content = next(
            (b.get("text") for b in content if isinstance(b, Mapping) and b.get("type") == "text"), None
        )
    return content.strip().split("\n", 1)[0] if isinstance(content, str) else ""


def _prompts_hint(session: Session, chain: list[int], ks: list[int]) -> str:
    if not ks:
        return "this session has no file checkpoints around that message"
    ids = ", ".join(session.nodes[chain[k]].record["uuid"] for k in ks)
    return f"rewind to a prompt with a checkpoint instead: {ids}"


def first_version_after(path: str, snaps: list[Snapshot], k: int) -> Backup | None:
    """The file's first backup after snapshot ``k``, if it is a version 1 (its content
    before it was first edited, so its content at ``k``), as Claude Code's ``Ehe``."""
    for s in snaps[k + 1 :]:
        b = s.backups.get(path)
        if b is not None:
            return b if b.version == 1 else None
    return None


def absolute(tracking_path: str, cwd: str) -> str:
    return posixpath.normpath(
        tracking_path if posixpath.isabs(tracking_path) else posixpath.join(cwd, tracking_path)
    )


def inside(path: str, root: str) -> bool:
    root = posixpath.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


def plan_rewind(
    session: Session,
    target: int,
    *,
    cwd: str,
    current: Callable[[str], bytes | None],
    backup: Callable[[str], bytes | None],
    allow_outside: bool = False,
    origin: str | None = None,
) -> RewindPlan:
    """What a rewind to node ``target`` changes. ``current(abs_path)`` reads a file now
    (None: missing); ``backup(name)`` reads a backup (None: missing); ``origin``: as in
    `no_checkpoints_hint`."""
    k, snaps, note = choose_snapshot(session, target, origin)
    snap = snaps[k]
    tracked: dict[str, None] = {}
    for s in snaps:
        for p in s.backups:
            tracked.setdefault(p, None)
    files: list[FileChange] = []
    for tp in tracked:
        b: Backup | None = snap.backups.get(tp) or first_version_after(tp, snaps, k)
        path = absolute(tp, cwd)
        if b is None:
            files.append(FileChange(tp, path, NOT_CHECKPOINTED, None))
            continue
        if not allow_outside and not inside(path, cwd):
            files.append(FileChange(tp, path, OUTSIDE, b.name))
            continue
        try:
            now = current(path)
        except Refused as r:
            files.append(FileChange(tp, path, REFUSED, b.name, reason=str(r)))
            continue
        if b.name is None:
            files.append(FileChange(tp, path, UNCHANGED if now is None else DELETE, None, now, None))
            continue
        data = backup(b.name)
        if data is None:
            files.append(FileChange(tp, path, NO_BACKUP, b.name, now))
            continue
        action = UNCHANGED if now == data else CREATE if now is None else RESTORE
        files.append(FileChange(tp, path, action, b.name, now, data))
    files.sort(key=lambda f: (f.action == DELETE, f.path))  # deletions last, as Claude Code
    uuid = session.nodes[target].record["uuid"]
    return RewindPlan(uuid, snap.message_id, cwd, tuple(files), note)


def unified_diff(change: FileChange, *, context: int = 3) -> str:
    """The change as a unified diff (``Binary files differ`` for non-text content)."""
    if not change.changes:
        return ""
    a, b = change.before, change.after
    a_name = change.path if a is not None else "/dev/null"
    b_name = change.path if b is not None else "/dev/null"
    try:
        at = (a or b"").decode("utf-8")
        bt = (b or b"").decode("utf-8")
    except UnicodeDecodeError:
        return f"Binary files {a_name} and {b_name} differ\n"
    lines = difflib.unified_diff(
        at.splitlines(keepends=True), bt.splitlines(keepends=True), a_name, b_name, n=context
    )
    out = []
    for ln in lines:
        out.append(ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n")
    return "".join(out)


def summary(plan: RewindPlan) -> Mapping[str, int]:
    counts: dict[str, int] = {}
    for f in plan.files:
        counts[f.action] = counts.get(f.action, 0) + 1
    return counts


def resolve_target(session: Session, spec: str) -> int:
    """The node ``--at`` names (a uuid or unique prefix, or N from the end: `branch.resolve_at`)."""
    from ..fork.branch import resolve_at

    try:
        return resolve_at(session, spec)
    except NotFound:
        raise NotFound(
            f"no message {spec!r} in this session", hint="`tt show` lists the messages with their uuids"
        ) from None
