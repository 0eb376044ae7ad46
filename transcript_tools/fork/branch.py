"""Where a fork at a message ends, and the branch it keeps.

`resolve_at` turns what ``tt fork --at`` was given into a node: a uuid (or a unique
prefix), or ``N``, the Nth message from the end of the active conversation (1 = the
last), counting one API response (its split lines) or one user entry as one message.

`branch(session, node)` is the set of entries a fork ending at that node keeps:

- the node's ancestors through ``parentUuid`` — whatever branch it is on, a dead branch
  left by a rewind too — continuing past a compact boundary through its
  ``logicalParentUuid`` (the history stays in the file, as Claude Code keeps it; a resume
  still starts at the boundary);
- the preserved segment of every boundary kept (``compactMetadata.preservedSegment``),
  which a resume splices in after the summary;
- every line of each API response kept (same ``message.id``) and the results of their
  tool calls, with the progress lines between, as long as they hang off the kept
  branch: a cut inside a response, or between a ``tool_use`` and its ``tool_result``,
  moves forward to keep them together. When a call of the response cut at has no
  result anywhere (a crash mid-tool), the cut moves back before that response instead.

Invariants: every kept node's parent is kept (or it is a root); the ancestors of the
node asked for are always kept, unless the cut moved back. Pure: no I/O.
"""

from __future__ import annotations

from ..model.chain import ASSISTANT, BOUNDARY, SIDECHAIN, USER
from ..model.errors import NotFound, UsageError
from ..model.session import Session

#: ``--at N`` up to this many digits is a count; longer digit strings are uuid prefixes.
_COUNT_DIGITS = 6


def message_units(session: Session) -> list[list[int]]:
    """The active conversation's messages as counted by ``--at N``: one API response
    (its split lines, same ``message.id``) or one user entry; ``isMeta`` entries are
    not counted. Each unit is a list of node indexes, in conversation order."""
    units: list[list[int]] = []
    last_mid: str | None = None
    for e in session.messages():
        i = session.index.find(e.uuid or "")
        if i is None or e.record.get("isMeta") is True:
            continue
        mid = e.message_id if e.type == "assistant" else None
        if mid is not None and mid == last_mid and units:
            units[-1].append(i)
        else:
            units.append([i])
        last_mid = mid
    return units


def resolve_at(session: Session, spec: str) -> int:
    """The node ``--at`` names: ``N`` (1 = the last message) or a uuid or unique prefix."""
    spec = spec.strip()
    if spec.isdigit() and len(spec) <= _COUNT_DIGITS:
        n = int(spec)
        units = message_units(session)
        if n == 0:
            raise UsageError(f"--at 0: count messages from 1 (the last) to {len(units)}")
        if n > len(units):  # no such message: exit 3, as a uuid that names none
            raise NotFound(f"--at {n}: the session has {len(units)} message(s); give 1..{len(units)}")
        return units[-n][-1]
    want = spec.lower()
    i = session.index.find(want)
    if i is None:
        if len(want) < 4:
            raise UsageError(
                f"--at {spec!r}: give a message count (1 = last) or at least 4 characters of a uuid"
            )
        found = [k for k, e in enumerate(session.nodes) if (e.uuid or "").lower().startswith(want)]
        if not found:
            raise NotFound(
                f"no message {spec!r} in this session", hint="`tt show` lists the messages with their uuids"
            )
        if len(found) > 1:
            raise UsageError(f"--at {spec!r} matches {len(found)} entries", hint="give more of the uuid")
        i = found[0]
    if session.index.flags[i] & SIDECHAIN:
        raise UsageError(f"--at {spec!r} is a sidechain (subagent) entry, not a message of the session")
    return i


class _Branch:
    """Node sets for a fork at one node: ancestors (through compact boundaries),
    preserved segments, whole API responses and the results of their tool calls."""

    def __init__(self, session: Session) -> None:
        self.s = session
        ix = session.index
        self.by_msg: dict[str, list[int]] = {}
        self.results: dict[str, list[int]] = {}
        for i, f in session.facts.items():
            if ix.flags[i] & SIDECHAIN:
                continue
            if ix.flags[i] & ASSISTANT and f.message_id:
                self.by_msg.setdefault(f.message_id, []).append(i)
            if ix.flags[i] & USER:
                for t in f.tool_results:
                    self.results.setdefault(t, []).append(i)

    def _up(self, i: int, into: set[int]) -> None:
        ix = self.s.index
        while i >= 0 and i not in into:
            into.add(i)
            p = ix.parent[i]
            if p < 0 and ix.flags[i] & BOUNDARY:
                # Cross the boundary: the pre-compaction history stays in the file, as
                # Claude Code keeps it (for display; resume starts at the boundary).
                lp = ix.logical.get(i)
                q = ix.find(lp) if lp is not None else None
                p = q if q is not None and not ix.flags[q] & SIDECHAIN else -1
            i = p

    def _attached(self, j: int, kept: set[int]) -> bool:
        """Whether ``j`` hangs off the kept branch (its nearest non-progress ancestor is
        kept): a response's other lines and its results do; copies of the same
        response elsewhere in the file (1.0.x resume copies) do not."""
        ix = self.s.index
        seen: set[int] = set()
        p = ix.parent[j]
        while p >= 0 and p not in seen:
            if p in kept:
                return True
            if self.s.nodes[p].type != "progress":
                return False
            seen.add(p)
            p = ix.parent[p]
        return False

    def keep(self, target: int) -> set[int]:
        ix, facts = self.s.index, self.s.facts
        kept: set[int] = set()
        self._up(target, kept)
        for i in sorted(kept):
            f = facts.get(i)
            if f is not None and f.preserved is not None and ix.flags[i] & BOUNDARY:
                for u in f.preserved:
                    j = ix.find(u) if u is not None else None
                    if j is not None and not ix.flags[j] & SIDECHAIN:
                        self._up(j, kept)
        # Whole responses and their tool results, until nothing more attaches.
        changed = True
        while changed:
            changed = False
            msgs = {facts[i].message_id for i in kept if ix.flags[i] & ASSISTANT and facts[i].message_id}
            for mid in msgs:
                group = self.by_msg.get(mid or "", [])
                for j in group:
                    if j not in kept and self._attached(j, kept):
                        self._up(j, kept)
                        changed = True
                    if j not in kept:
                        continue
                    for t in facts[j].tool_uses:
                        for r in self.results.get(t, ()):
                            if r not in kept and self._attached(r, kept):
                                self._up(r, kept)
                                changed = True
        return kept

    def unanswered_at(self, target: int) -> list[str]:
        """Tool calls of the target's response that have no result anywhere."""
        f = self.s.facts.get(target)
        if f is None or not f.message_id or not self.s.index.flags[target] & ASSISTANT:
            return []
        return [
            t
            for j in self.by_msg.get(f.message_id, [target])
            for t in self.s.facts[j].tool_uses
            if t not in self.results
        ]

    def before_response(self, target: int) -> int | None:
        """The nearest ancestor of the target outside its API response."""
        f = self.s.facts.get(target)
        group = set(self.by_msg.get(f.message_id, [])) if f is not None and f.message_id else set()
        group.add(target)
        for i in self.s.index.walk_up(target):
            if i not in group:
                return i
        return None


def branch(session: Session, target: int) -> tuple[set[int], int, str | None]:
    """The nodes a fork at ``target`` keeps, the node it then ends at, and why it moved."""
    b = _Branch(session)
    note: str | None = None
    missing = b.unanswered_at(target)
    if missing:
        back = b.before_response(target)
        if back is None:
            raise UsageError("nothing comes before this message: the fork would be empty")
        note = (
            f"back, before the response that makes tool call(s) {', '.join(missing)}: "
            "the session has no result for them"
        )
        target = back
    return b.keep(target), target, note
