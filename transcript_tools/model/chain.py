"""The parentUuid graph of a transcript: roots, leaves, the active chain, dead branches.

Conversation entries (`user`, `assistant`, `system`, `progress`, `attachment` with a
``uuid``, docs/format.md §2) form a forest through ``parentUuid``. `ChainIndex` is built
incrementally in file order, one entry at a time, so the streaming validator can build it
over files of any size: it keeps per node only a compact key, the parent's index, the line
number and a byte of flags (about 100 bytes a node), never the records.

The *active leaf* is the one ``claude --resume`` continues, chosen as the Agent SDK's
``_build_conversation_chain`` does (docs/format.md §4): from every terminal (a node nobody
names as parent) walk up to the nearest user/assistant node; prefer those that are not
sidechain, ``teamName`` or ``isMeta``; take the latest in file order. The *active chain*
is the walk from that leaf up ``parentUuid`` to its root (a compact boundary, whose
``parentUuid`` is null, ends it: ``logicalParentUuid`` is never followed, as in Claude
Code and the SDK).

*Parents in another file of the session.* Claude Code links some entries to a parent
written in another file of the same session: a 2.1.39 compaction subagent
(``subagents/agent-acompact-*.jsonl``) starts with ``isMeta`` records whose ``parentUuid``
names entries of the main file (marot/spotter ``4d5611e5…/subagents/agent-acompact-e1f845
.jsonl``; ``fixtures/real/v2.1.39-acompact-subagent-composite/``). Such a parent is not
damage: the edge finds which unresolved parents the session's other files hold
(`siblings.found_elsewhere`) and sets `ChainIndex.elsewhere`; `dangling` leaves them out,
the parent stays ``UNRESOLVED`` in the graph (a walk ends there, as at a root) and repair
writes it back unchanged.

Invariants:
- Every walk terminates: cycles are detected and reported, never followed twice.
- The first occurrence of a uuid owns it; later ones are recorded as duplicates.
- Pure: no I/O.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import ge as _ge
from typing import Any

CHAIN_TYPES = frozenset({"user", "assistant", "system", "progress", "attachment"})

# Node flags (one byte per node).
USER = 1
ASSISTANT = 2
SIDECHAIN = 4
META = 8  # isMeta or teamName: not a candidate for the main leaf
BOUNDARY = 16  # system/compact_boundary
SUMMARY = 32  # isCompactSummary (1.0.x roots have no boundary before them)
OTHER_SESSION = 64  # sessionId differs from the file's session
#: system/local_command: a slash command's output. Claude Code sends it as user text and
#: counts it as a message when it picks the leaf (a session ending on `/clear` or `/cost`).
COMMAND = 128
#: What a leaf may be: the entries Claude Code resumes a conversation at.
LEAF_KINDS = USER | ASSISTANT | COMMAND

NO_PARENT = -1
UNRESOLVED = -2

#: Keys of parents a file does not hold -> the ones another file of its session holds.
Elsewhere = Callable[[frozenset[bytes]], frozenset[bytes]]


def uuid_key(u: str) -> bytes:
    """A compact dict key for a uuid string: 16 bytes for UUIDs, the text otherwise.

    UUIDs are compared by their 32 hex digits (case and dash placement are not
    significant; Claude Code writes lowercase v4 UUIDs). Other ids (hand-made fixtures,
    ``edge_010``) keep their exact text behind a NUL byte, so the two kinds never collide.
    """
    if len(u) == 36:
        try:
            return bytes.fromhex(u.replace("-", ""))
        except ValueError:
            pass
    return b"\x00" + u.encode("utf-8", "surrogatepass")


_fromhex = bytes.fromhex


def key_uuid(k: bytes) -> str:
    if len(k) == 16:
        h = k.hex()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    return k[1:].decode("utf-8", "surrogatepass")


def node_flags(record: dict[str, Any], session_id: str | None = None) -> int:
    t = record.get("type")
    f = USER if t == "user" else ASSISTANT if t == "assistant" else 0
    if record.get("isSidechain") is True:
        f |= SIDECHAIN
    if record.get("isMeta") is True or record.get("teamName"):
        f |= META
    if t == "system":
        sub = record.get("subtype")
        if sub == "compact_boundary":
            f |= BOUNDARY
        elif sub == "local_command":
            f |= COMMAND
    if record.get("isCompactSummary") is True:
        f |= SUMMARY
    if session_id is not None:
        sid = record.get("sessionId")
        if isinstance(sid, str) and sid != session_id:
            f |= OTHER_SESSION
    return f


@dataclass(frozen=True, slots=True)
class Duplicate:
    uuid: str
    line: int
    first_line: int


class ChainIndex:
    """The uuid graph, built one entry at a time in file order."""

    def __init__(self) -> None:
        self._index: dict[bytes, int] = {}
        self._keys: list[bytes] = []
        self.parent = array("q")  # index of the parent, NO_PARENT or UNRESOLVED
        self.line = array("q")
        self.flags = bytearray()
        # Parents not yet seen when their child was added (rare: out-of-order writes).
        self._pending: dict[int, bytes] = {}
        self.logical: dict[int, str] = {}  # boundary node -> logicalParentUuid
        self.duplicates: list[Duplicate] = []
        # Most entries' parent is the entry written just before them: remember it to
        # skip a key computation and a lookup (the validator's hot path).
        self._last_uuid: str | None = None
        #: Keys of unresolved parents that another file of the session holds (set by the
        #: edge after `finish`): links Claude Code wrote across files, not damage.
        self.elsewhere: frozenset[bytes] = frozenset()

    def __len__(self) -> int:
        return len(self._keys)

    def add(
        self, uuid: str, parent: str | None, line: int, flags: int, logical_parent: str | None = None
    ) -> int:
        """Add a node; returns its index, or -1 when the uuid was seen before (a duplicate)."""
        # uuid_key, inline (once per entry of files of any size).
        k = None
        if len(uuid) == 36:
            try:
                k = _fromhex(uuid.replace("-", ""))
            except ValueError:
                pass
        if k is None:
            k = b"\x00" + uuid.encode("utf-8", "surrogatepass")
        keys = self._keys
        i = len(keys)
        # One dict operation: the first occurrence owns the uuid.
        first = self._index.setdefault(k, i)
        if first != i:
            self.duplicates.append(Duplicate(uuid, line, self.line[first]))
            return -1
        keys.append(k)
        if parent is None:
            self.parent.append(NO_PARENT)
        elif parent == self._last_uuid:
            self.parent.append(i - 1)
        else:
            self._link(i, uuid_key(parent))
        self.line.append(line)
        self.flags.append(flags)
        if logical_parent is not None:
            self.logical[i] = logical_parent
        self._last_uuid = uuid
        return i

    def add_key(self, key: bytes, parent: bytes | None, line: int, flags: int, logical: str | None) -> int:
        """`add` for a caller that holds `uuid_key`s already (repair's output graph, built
        from another index's keys); ``parent`` is a key too. The caller guarantees no key
        comes twice (there is no duplicate check)."""
        i = len(self._keys)
        assert key not in self._index, "a key added twice"
        self._index[key] = i
        self._keys.append(key)
        if parent is None:
            self.parent.append(NO_PARENT)
        else:
            self._link(i, parent)
        self.line.append(line)
        self.flags.append(flags)
        if logical is not None:
            self.logical[i] = logical
        return i

    def _link(self, i: int, pk: bytes) -> None:
        """Node ``i``'s parent is the node of key ``pk``: resolved now, or by `finish`."""
        p = self._index.get(pk)
        if p is None:
            self.parent.append(UNRESOLVED)
            self._pending[i] = pk
        else:
            self.parent.append(p)

    def finish(self, elsewhere: Elsewhere | None = None) -> None:
        """Resolve parents that came later in the file than their children. ``elsewhere``:
        given the keys of the parents (and logical parents) this file does not hold, which
        of them another file of the session holds (`siblings.found_elsewhere`); those
        are Claude Code's links, not damage (module docstring)."""
        still: dict[int, bytes] = {}
        for i, pk in self._pending.items():
            p = self._index.get(pk)
            if p is None:
                still[i] = pk
            else:
                self.parent[i] = p
        self._pending = still
        if elsewhere is not None:
            keys = frozenset(still.values()) | {
                uuid_key(lp) for lp in self.logical.values() if lp not in self
            }
            if keys:
                self.elsewhere = elsewhere(keys)

    # --- lookups -------------------------------------------------------------

    def uuid(self, i: int) -> str:
        return key_uuid(self._keys[i])

    def find(self, uuid: str) -> int | None:
        return self._index.get(uuid_key(uuid))

    def __contains__(self, uuid: str) -> bool:
        return uuid_key(uuid) in self._index

    def dangling(self) -> Iterator[tuple[int, str]]:
        """Nodes whose parentUuid names no node, in this file or (`elsewhere`) another
        file of the session: (index, the missing parent uuid)."""
        elsewhere = self.elsewhere
        for i, pk in sorted(self._pending.items()):
            if pk not in elsewhere:
                yield i, key_uuid(pk)

    def unresolved(self) -> Iterator[tuple[int, str]]:
        """Every node whose parent is not in this file (dangling or `elsewhere`)."""
        for i, pk in sorted(self._pending.items()):
            yield i, key_uuid(pk)

    def dangling_logical(self) -> Iterator[tuple[int, str]]:
        elsewhere = self.elsewhere
        for i, lp in sorted(self.logical.items()):
            if lp not in self and (not elsewhere or uuid_key(lp) not in elsewhere):
                yield i, lp

    def has_children(self) -> bytearray:
        out = bytearray(len(self._keys))
        for p in self.parent:
            if p >= 0:
                out[p] = 1
        return out

    def cycles(self) -> list[list[int]]:
        """Every parentUuid loop, each as the list of its nodes (first found first)."""
        parent = self.parent
        # A walk up strictly decreasing indexes ends: a loop needs a node whose parent
        # comes at or after it (written out of order, or itself). One C-level pass rules
        # that out for nearly every file (the validator's finish, once per file).
        if not any(map(_ge, parent, range(len(parent)))):
            return []
        state = bytearray(len(self._keys))  # 0 new, 1 on the current walk, 2 done
        found: list[list[int]] = []
        for start in range(len(state)):
            if state[start]:
                continue
            path: list[int] = []
            i = start
            while i >= 0 and state[i] == 0:
                state[i] = 1
                path.append(i)
                i = parent[i]
            if i >= 0 and state[i] == 1:
                found.append(path[path.index(i) :])
            for j in path:
                state[j] = 2
        return found

    def walk_up(self, i: int) -> Iterator[int]:
        """From node i to its root, each node once (a cycle ends the walk)."""
        seen: set[int] = set()
        parent = self.parent
        while i >= 0 and i not in seen:
            seen.add(i)
            yield i
            i = parent[i]

    def path_up(self, i: int) -> list[int]:
        """``list(walk_up(i))``, faster: while each parent comes before its child in the
        file (nearly always) the walk cannot loop and needs no visited set; at the first
        parent that does not, it is the cycle-safe `walk_up` after all."""
        parent = self.parent
        out: list[int] = []
        append = out.append
        start = i
        while i >= 0:
            append(i)
            p = parent[i]
            if p >= i:
                return list(self.walk_up(start))
            i = p
        return out

    def root_of(self, i: int) -> int:
        last = i
        for last in self.walk_up(i):  # noqa: B007 (the walk's last node is the root)
            pass
        return last

    def roots(self) -> list[int]:
        return [i for i, p in enumerate(self.parent) if p == NO_PARENT]

    def answered_roots(self, roots: list[int]) -> list[int]:
        """Of ``roots``, those whose tree holds a main-chain response (an assistant entry
        outside sidechains), in the order given. A tree without one is no conversation:
        Claude Code 2.1.266 opens the session a ``/clear`` makes with the command's own lines
        (a meta caveat, the command, its output) and then roots the SessionStart hook's
        attachments afresh (``parentUuid: null``), where the talk goes on."""
        parent = self.parent
        root = array("q", bytes(8 * len(parent)))
        for i, p in enumerate(parent):
            if p < 0:
                root[i] = i  # a root, or a parent not in the file (dangling): its own tree
            elif p < i:
                root[i] = root[p]
            else:
                root[i] = self.root_of(i)  # written out of order: the cycle-safe walk
        flags = self.flags
        found = {root[i] for i, f in enumerate(flags) if f & ASSISTANT and not f & SIDECHAIN}
        return [r for r in roots if r in found]

    def terminals(self) -> list[int]:
        kids = self.has_children()
        return [i for i in range(len(kids)) if not kids[i]]

    def leaf_candidates(self) -> list[int]:
        """For each terminal, the nearest user, assistant or slash-command output node
        (`LEAF_KINDS`) at or above it (deduplicated)."""
        out: dict[int, None] = {}
        flags = self.flags
        parent = self.parent
        want = LEAF_KINDS
        for t in self.terminals():
            # A plain walk first (most terminals are a message or hang a few progress lines
            # below one); past 64 steps, the cycle-safe walk_up decides.
            i = t
            for _ in range(64):
                if i < 0:
                    break
                if flags[i] & want:
                    out[i] = None
                    break
                i = parent[i]
            else:
                for i in self.walk_up(t):
                    if flags[i] & want:
                        out[i] = None
                        break
        return list(out)

    def active_leaf(self) -> int | None:
        """The leaf `claude --resume` continues (see module docstring), or None."""
        cands = self.leaf_candidates()
        if not cands:
            return None
        main = [i for i in cands if not self.flags[i] & (SIDECHAIN | META)]
        # Node indexes grow in file order, so max() is "latest in the file".
        return max(main) if main else max(cands)

    def active_chain(self) -> list[int]:
        """Root → active leaf, in conversation order."""
        leaf = self.active_leaf()
        if leaf is None:
            return []
        chain = list(self.walk_up(leaf))
        chain.reverse()
        return chain

    def dead_branches(self, chain: list[int] | None = None) -> list[int]:
        """Main-chain user/assistant leaves that are not on the active chain (rewinds, edits)."""
        on = set(self.active_chain() if chain is None else chain)
        return [i for i in self.leaf_candidates() if i not in on and not self.flags[i] & (SIDECHAIN | META)]

    def boundaries(self) -> list[int]:
        return [i for i, f in enumerate(self.flags) if f & BOUNDARY]
