"""Forking a session: the same conversation under a new session id, with every uuid new.

`fork(session, ...)` turns an in-memory `session.Session` (read through the repair
fixes, `loader.load_session`, so a damaged file forks clean) into the lines of a new
session file, the way the Agent SDK's ``fork_session`` writes them (its
``_build_fork_lines``, claude-agent-sdk 0.2.189; docs/format.md §9):

- every conversation entry gets a fresh ``uuid``; ``parentUuid`` and
  ``logicalParentUuid`` follow the same mapping; ``sessionId`` is the new id,
  ``isSidechain`` false, ``forkedFrom {sessionId, messageUuid}`` names the original;
  ``teamName``, ``agentName``, ``slug`` and ``sourceToolAssistantUUID`` are dropped;
- sidechain entries and ``progress`` lines are left out, and parents are re-linked past
  the progress lines (the SDK: "UI-only chain links; not needed in a fresh fork");
- every entry keeps its ``timestamp`` (the SDK re-stamps the last one with *now* "for
  leaf detection on resume"; tt does not: a fork is a past conversation, and a record tt
  adds to one takes its time from its neighbours, so `tt stats` of a fork measures the
  conversation, not the day it was forked — the fork holds one leaf per branch it keeps,
  as the original did, and both CLIs resume it: tests/manage/test_cli_fork_manage.py);
- ``content-replacement`` records are merged into one, re-emitted with the new id, and a
  ``custom-title`` "<title> (fork)" (or the given title) with its own uuid ends the file;
- file-history records are not copied: a fork starts without undo history (the SDK).

Beyond the SDK, as issue 7 asks:

- the ids inside ``compactMetadata`` (``preservedSegment`` head/anchor/tail,
  ``preservedMessages`` uuids) and the other entry references newer versions write
  (``supersedesUuids``, ``retractedMessageUuids``, ``refusedUserMessageUuid``,
  ``attachment.source_uuid``) are remapped too, so Claude Code's preserved-segment splice
  still works on the fork (the SDK leaves them pointing into the original);
- ``last-prompt`` and ``summary`` records whose ``leafUuid`` is in the fork are kept,
  remapped (the others describe messages the fork does not have);
- the ``session_id`` copy of ``sessionId`` (2.1.2xx) is set too; a uuid written twice
  is forked once (its first line: `session.Session` keeps the first occurrence);
- ``at``: the fork ends at a message — the branch from the root to it, whatever branch it
  is on (a dead branch left by a rewind too), as `branch.branch` chooses it: across
  compact boundaries, with preserved segments, whole responses and their tool results
  (a cut that would part them moves, and `Cut.moved` says so);
- subagent transcripts are forked with the same mapping (`fork.subagents`).

Invariants:
- No uuid of an original entry appears in the fork, except as ``forkedFrom.messageUuid``.
- The conversation (message contents, in order) is the original's, or its prefix up to
  the cut; the fork's active leaf is the cut.
- Pure: no I/O; ``now`` and ``new_id`` come from the caller; records are never mutated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model.chain import LEAF_KINDS, SIDECHAIN
from ..model.errors import UsageError
from ..model.ids import is_session_id
from ..model.lines import Entry
from ..model.session import Session
from ..model.titles import first_prompt, last_titles
from ..model.wire import dumps_lenient
from .branch import branch

#: Fields the SDK removes so they do not leak the source session's state.
DROPPED_FIELDS = ("teamName", "agentName", "slug", "sourceToolAssistantUUID")

#: Entry fields (newer Claude Code versions, docs/format.md §4.1) that name other
#: entries by uuid: a string or a list of strings.
_REFERENCE_FIELDS = ("supersedesUuids", "retractedMessageUuids", "refusedUserMessageUuid")

#: The Agent SDK reads titles from the first and last 64 KiB of a file (LITE_READ_BUF_SIZE).
_TITLE_WINDOW = 64 * 1024


class Remap:
    """The uuid mapping of one fork, shared by the main file and its subagents.

    ``new(u)`` gives ``u`` its fresh id (the same one every time). ``known(u)`` is the
    mapping of an entry the fork holds, or None. ``ref(u)`` maps a reference: an id the
    fork does not hold gets a fresh one too, so it stays dangling (as it was) without
    leaking the original id.
    """

    __slots__ = ("_ids", "_new_id")

    def __init__(self, new_id: Callable[[], str]) -> None:
        self._ids: dict[str, str] = {}
        self._new_id = new_id

    def new(self, u: str) -> str:
        got = self._ids.get(u)
        if got is None:
            got = self._ids[u] = self._new_id()
        return got

    def known(self, u: Any) -> str | None:
        return self._ids.get(u) if isinstance(u, str) else None

    def ref(self, u: Any) -> Any:
        if is_session_id(u):  # a uuid: the form of a session id
            return self.new(u)
        return u

    @property
    def mapping(self) -> Mapping[str, str]:
        return self._ids


@dataclass(frozen=True, slots=True)
class Cut:
    """Where a fork ends. ``asked`` is the uuid asked for (None: the whole session);
    ``uuid`` the original uuid of the fork's last message (its active leaf);
    ``moved`` a sentence when the cut had to move, else None."""

    asked: str | None
    uuid: str | None
    moved: str | None = None


@dataclass(frozen=True, slots=True)
class Fork:
    session_id: str
    source_session_id: str
    title: str
    lines: tuple[bytes, ...]  # the new main file, one record per item, no newline
    cut: Cut
    remap: Remap = field(repr=False)
    #: the original uuids of the conversation entries written (progress lines excluded)
    kept: frozenset[str] = frozenset()

    @property
    def entries(self) -> int:
        return len(self.lines)

    def chunks(self) -> Iterator[bytes]:
        for line in self.lines:
            yield line + b"\n"

    @property
    def forked_from(self) -> dict[str, str | None]:
        return {"sessionId": self.source_session_id, "messageUuid": self.cut.uuid}


def _own_time(record: dict[str, Any], before: str | None, now: str) -> str:
    """A copied record's time: its own, else the record's before it; ``now`` only when the
    fork has no time at all to go by."""
    t = record.get("timestamp")
    return t if isinstance(t, str) and t else before or now


def fork(
    session: Session,
    *,
    source_session_id: str,
    at: int | None = None,
    title: str | None = None,
    now: str,
    new_id: Callable[[], str],
) -> Fork:
    """The fork of ``session`` (whole, or up to node ``at``) as new lines; see module doc."""
    ix = session.index
    remap = Remap(new_id)
    note: str | None = None
    if at is None:
        kept = {i for i in range(len(session.nodes)) if not ix.flags[i] & SIDECHAIN}
    else:
        kept, _, note = branch(session, at)
    if not kept:
        raise UsageError(f"session {source_session_id} has no messages to fork")
    is_progress = [e.type == "progress" for e in session.nodes]
    for i in sorted(kept):
        remap.new(session.nodes[i].record["uuid"])
    written = [i for i in sorted(kept) if not is_progress[i]]
    if not written:
        raise UsageError(f"session {source_session_id} has no messages to fork")
    session_id = new_id()
    node_of = {id(e): i for i, e in enumerate(session.nodes)}
    lines: list[bytes] = []
    # A copied record without a time takes its predecessor's (neighbours, not the clock).
    last_time: str | None = None
    replaced_at: str | None = None
    replacements: list[Any] = []
    for e in session.entries:
        node = node_of.get(id(e))
        if node is not None:
            if node not in kept or is_progress[node]:
                continue
            parent = parent_in(session, node, kept, is_progress)
            rec = fork_entry(
                e.record,
                remap,
                session_id=session_id,
                source_session_id=source_session_id,
                parent=None if parent is None else remap.known(session.nodes[parent].record["uuid"]),
                timestamp=_own_time(e.record, last_time, now),
            )
            lines.append(dumps_lenient(rec))
            last_time = rec["timestamp"]
            continue
        rec = e.record
        t = rec.get("type")
        if (
            t == "content-replacement"
            and rec.get("sessionId") == source_session_id
            and isinstance(rec.get("replacements"), list)
        ):
            replacements.extend(rec["replacements"])
            replaced_at = _own_time(rec, replaced_at, now)
        elif t in ("last-prompt", "summary") and e.uuid is None:
            new_leaf = remap.known(rec.get("leafUuid"))
            j = ix.find(rec["leafUuid"]) if new_leaf is not None else None
            if j is not None and j in kept and not is_progress[j]:
                out = {**rec, "leafUuid": new_leaf}
                if "sessionId" in out:
                    out["sessionId"] = session_id
                lines.append(dumps_lenient(out))
    if replacements:
        lines.append(
            dumps_lenient(
                {
                    "type": "content-replacement",
                    "sessionId": session_id,
                    "replacements": replacements,
                    "uuid": new_id(),
                    # The merged records' time (the last of them): they describe the past.
                    "timestamp": replaced_at or now,
                }
            )
        )
    fork_title = title.strip() if title else None
    if not fork_title:
        fork_title = f"{derive_title(session.entries) or 'Forked session'} (fork)"
    lines.append(
        dumps_lenient(
            {
                "type": "custom-title",
                "sessionId": session_id,
                "customTitle": fork_title,
                "uuid": new_id(),
                "timestamp": now,
            }
        )
    )
    leaf = _leaf_of(session, kept, is_progress)
    asked = None if at is None else session.nodes[at].record["uuid"]
    cut_uuid = None if leaf is None else session.nodes[leaf].record["uuid"]
    if at is not None and note is None and cut_uuid != asked:
        note = _moved_note(session, at, leaf)
    kept_uuids = frozenset(session.nodes[i].record["uuid"] for i in written)
    return Fork(
        session_id, source_session_id, fork_title, tuple(lines), Cut(asked, cut_uuid, note), remap, kept_uuids
    )


def _moved_note(session: Session, at: int, leaf: int | None) -> str:
    e = session.nodes[at]
    if e.type not in ("user", "assistant"):
        return f"{e.type} entry {e.uuid}: the fork ends at the message it belongs to"
    if leaf is None:
        return "no message is left before this point"
    f = session.facts.get(at)
    if f is not None and f.tool_uses:
        return "forward, to keep the tool call(s) with their result(s)"
    return "forward, to keep the whole API response and its tool results together"


def parent_in(session: Session, i: int, kept: set[int], is_progress: list[bool]) -> int | None:
    """The nearest kept, non-progress ancestor through ``parentUuid`` (as the SDK does:
    progress parents are skipped; a parent outside the fork makes a root)."""
    ix = session.index
    seen: set[int] = set()
    p = ix.parent[i]
    while p >= 0 and p in kept and p not in seen:
        if not is_progress[p]:
            return p
        seen.add(p)
        p = ix.parent[p]
    return None


def _leaf_of(session: Session, kept: set[int], is_progress: list[bool]) -> int | None:
    """The active leaf of the fork, chosen as `chain.ChainIndex.active_leaf` would on it."""
    ix = session.index
    has_child: set[int] = set()
    for i in kept:
        if is_progress[i]:
            continue
        p = parent_in(session, i, kept, is_progress)
        if p is not None:
            has_child.add(p)
    cands: list[int] = []
    for t in kept:
        if is_progress[t] or t in has_child:
            continue
        j: int | None = t
        seen: set[int] = set()
        while j is not None and j not in seen:
            seen.add(j)
            if ix.flags[j] & LEAF_KINDS:
                cands.append(j)
                break
            j = parent_in(session, j, kept, is_progress)
    if not cands:
        return None
    # The fork drops teamName and sets isSidechain false; isMeta stays.
    main = [i for i in cands if session.nodes[i].record.get("isMeta") is not True]
    return max(main) if main else max(cands)


def fork_entry(
    record: Mapping[str, Any],
    remap: Remap,
    *,
    session_id: str,
    source_session_id: str,
    parent: str | None,
    timestamp: Any,
    sidechain: bool = False,
) -> dict[str, Any]:
    """One conversation entry of the fork (the SDK's construction, key order included)."""
    lp = record.get("logicalParentUuid")
    out: dict[str, Any] = {
        **record,
        "uuid": remap.new(record["uuid"]),
        "parentUuid": parent,
        "logicalParentUuid": remap.known(lp) if lp else lp,
        "sessionId": session_id,
        "timestamp": timestamp,
        "isSidechain": sidechain,
        "forkedFrom": {"sessionId": source_session_id, "messageUuid": record["uuid"]},
    }
    for key in DROPPED_FIELDS:
        out.pop(key, None)
    if "session_id" in out:  # 2.1.2xx snake_case copy of sessionId
        out["session_id"] = session_id
    md = out.get("compactMetadata")
    if isinstance(md, dict):
        out["compactMetadata"] = _remap_deep(md, remap)
    for key in _REFERENCE_FIELDS:
        if key in out:
            out[key] = _remap_deep(out[key], remap)
    att = out.get("attachment")
    if isinstance(att, dict) and "source_uuid" in att:
        out["attachment"] = {**att, "source_uuid": remap.ref(att["source_uuid"])}
    return out


def _remap_deep(value: Any, remap: Remap) -> Any:
    if isinstance(value, str):
        return remap.ref(value)
    if isinstance(value, list):
        return [_remap_deep(v, remap) for v in value]
    if isinstance(value, dict):
        return {k: _remap_deep(v, remap) for k, v in value.items()}
    return value


def derive_title(entries: list[Entry]) -> str | None:
    """The SDK fork's title source, read as its ``fork_session`` reads the file: the last
    ``customTitle`` of the last 64 KiB, else of the first; the same for ``aiTitle``; else
    the first meaningful user prompt of the first 64 KiB (`titles`, ported from the SDK)."""
    head = _window(entries, from_end=False)
    tail = _window(entries, from_end=True)
    custom_tail, ai_tail = last_titles(tail)
    custom_head, ai_head = last_titles(head)
    return custom_tail or custom_head or ai_tail or ai_head or first_prompt(head) or None


def _window(entries: list[Entry], *, from_end: bool) -> bytes:
    got: list[bytes] = []
    size = 0
    for e in reversed(entries) if from_end else entries:
        got.append(e.raw)
        size += len(e.raw) + 1
        if size >= _TITLE_WINDOW:
            break
    if from_end:
        got.reverse()
    data = b"\n".join(got) + b"\n"
    return data[-_TITLE_WINDOW:] if from_end else data[:_TITLE_WINDOW]
