"""The repaired file's uuid graph, as the fixes chosen so far make it.

`Model` starts from the survey's `ChainIndex` (the input's graph, node ``i`` = the
``i``-th conversation entry in file order) and records edits on top of it: new parents,
new logical parents, dropped nodes, added nodes (synthesised tool results, written
right after the line of the call they answer), and changed `NodeFacts`. Nodes are named
by *refs*: ``0..n-1`` for the input's nodes, ``n..`` for added ones.

`Model.view()` builds the graph the output file will have as a fresh `ChainIndex`, in
output order, so the very code the validator runs (`ChainIndex`, `active`,
`validate.core.api_findings`) judges the result. With no structural edit the survey's index
is used as it is: repairing clean or line-damaged files costs no rebuild.

Invariants:
- Input nodes are never renumbered; an edit is always "ref r now has parent p".
- Added nodes get fresh uuids no input node has.
- Every edge changed is recorded as an `Action` by the caller (see `fixes`).
- Pure: no I/O.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..model.active import NodeFacts
from ..model.api_rules import IdRenames
from ..model.chain import NO_PARENT, SIDECHAIN, UNRESOLVED, USER, ChainIndex, uuid_key
from .survey import Key, Survey

ROOT = -1  # "no parent" as an edit target


@dataclass(frozen=True, slots=True)
class Action:
    """One thing repair did (or, in a dry run, would do), tied to the code it resolves.

    ``fix`` is the fix name (`diagnostics.CODES`), ``code`` the diagnostic it resolves
    (None for opt-in changes that resolve no diagnostic, e.g. ``--strip-thinking``),
    ``line`` the input line (for added records: the line of the call they answer),
    ``uuid`` the entry concerned.
    """

    fix: str
    code: str | None
    line: int | None
    uuid: str | None
    detail: str

    def to_dict(self) -> dict[str, object]:
        return {
            "fix": self.fix,
            "code": self.code,
            "line": self.line,
            "uuid": self.uuid,
            "detail": self.detail,
        }


@dataclass(slots=True)
class Added:
    """A synthesised ``tool_result`` user entry for a call that never got one."""

    uuid: str
    call: int  # ref of the assistant entry holding the tool_use
    tool_use_id: str


@dataclass(slots=True)
class View:
    """The output graph at one moment: ``ix`` node ``j`` is model ref ``refs[j]``."""

    ix: ChainIndex
    refs: Sequence[int]
    facts: dict[int, NodeFacts]
    chain_of: Callable[[int], int]
    #: The file continues a context it does not hold (`Survey.continues_context`).
    continues: bool = False
    _prev: array | None = None  # type: ignore[type-arg]
    _pos: dict[int, int] | None = None

    def prev_same(self) -> array:  # type: ignore[type-arg]
        """For each node, the previous node of the same chain in output order (-1: none)."""
        if self._prev is None:
            last: dict[int, int] = {}
            prev = array("q", [-1]) * len(self.ix)
            for j in range(len(self.ix)):
                c = self.chain_of(self.refs[j])
                prev[j] = last.get(c, -1)
                last[c] = j
            self._prev = prev
        return self._prev

    def reaches(self, start: int, targets: set[int] | int) -> bool:
        """Whether walking up from ``start`` meets ``targets`` (a node or a set)."""
        want = {targets} if isinstance(targets, int) else targets
        return any(i in want for i in self.ix.walk_up(start))


@dataclass(slots=True)
class Model:
    survey: Survey
    parent: dict[int, int] = field(default_factory=dict)  # ref -> parent ref | ROOT
    logical: dict[int, int] = field(default_factory=dict)  # boundary ref -> ref | ROOT
    dropped: set[int] = field(default_factory=set)
    added: list[Added] = field(default_factory=list)
    after: dict[int, list[int]] = field(default_factory=dict)  # input node -> added refs after it
    facts: dict[int, NodeFacts] = field(default_factory=dict)  # facts changed by a fix
    orphans: dict[int, list[str]] = field(default_factory=dict)  # ref -> tool ids made text/dropped
    rules: dict[int, int] = field(default_factory=dict)  # ref -> `api_rules` bits fixed in its content
    #: ref -> (tool_use renames, tool_result renames), old id -> new (tool-use-id-duplicate)
    renames: dict[int, tuple[IdRenames, IdRenames]] = field(default_factory=dict)
    missing: dict[int, str] = field(
        default_factory=dict
    )  # input refs whose parent is not in the file (dangling or elsewhere)
    #: Why a ref's parent (or logical parent) was changed: (code, fix) of the last change.
    why: dict[int, tuple[str | None, str]] = field(default_factory=dict)
    structural: bool = False  # the graph differs from the survey's index
    n: int = 0  # input nodes (refs below n)
    _view: View | None = None

    def __post_init__(self) -> None:
        self.missing = dict(self.survey.index.unresolved())  # dangling, or in another file
        self.n = len(self.survey.index)

    # --- reading a ref ----------------------------------------------------------------

    def uuid(self, ref: int) -> str:
        """The uuid as the file writes it."""
        if ref >= self.n:
            return self.added[ref - self.n].uuid
        odd = self.survey.odd_uuids.get(ref)
        return odd if odd is not None else self.survey.index.uuid(ref)

    def parent_of(self, ref: int) -> int:
        """Parent ref, ROOT, or UNRESOLVED (a parent uuid that is not in the file)."""
        got = self.parent.get(ref)
        if got is not None:
            return got
        p = self.survey.index.parent[ref]
        return ROOT if p == NO_PARENT else p

    def parent_uuid(self, ref: int) -> str | None:
        p = self.parent_of(ref)
        if p == ROOT:
            return None
        if p == UNRESOLVED:
            return self.missing[ref]
        return self.uuid(p)

    def logical_uuid(self, ref: int) -> str | None:
        got = self.logical.get(ref)
        if got is not None:
            return None if got == ROOT else self.uuid(got)
        return self.survey.index.logical.get(ref) if ref < self.n else None

    def call_of(self, ref: int) -> int:
        return self.added[ref - self.n].call if ref >= self.n else ref

    def flags(self, ref: int) -> int:
        if ref < self.n:
            return self.survey.index.flags[ref]
        return USER | (self.survey.index.flags[self.call_of(ref)] & SIDECHAIN)

    def chain(self, ref: int) -> int:
        return int(self.survey.chain_key[self.call_of(ref)])

    def line(self, ref: int) -> int:
        return self.survey.index.line[self.call_of(ref)]

    def node_facts(self, ref: int) -> NodeFacts | None:
        f = self.facts.get(ref)
        if f is not None:
            return f
        return self.survey.facts.get(ref) if ref < self.n else None

    def key(self, ref: int) -> Key:
        assert ref < self.n
        return self.survey.key_of(ref)

    # --- edits ----------------------------------------------------------------------

    def set_parent(self, ref: int, target: int, why: tuple[str | None, str]) -> None:
        self.parent[ref] = target
        self.why[ref] = why
        self.structural = True
        self._view = None

    def set_logical(self, ref: int, target: int, why: tuple[str | None, str]) -> None:
        self.logical[ref] = target
        self.why[ref] = why
        self.structural = True
        self._view = None

    def set_facts(self, ref: int, facts: NodeFacts) -> None:
        self.facts[ref] = facts
        self._view = None

    def add_result(self, call: int, tool_use_id: str, parent: int, uuid: str) -> int:
        ref = self.n + len(self.added)
        self.added.append(Added(uuid, call, tool_use_id))
        ix = self.survey.index
        # Written after the whole line of the call (a line can hold several records).
        last = call
        while last + 1 < self.n and ix.line[last + 1] == ix.line[call]:
            last += 1
        self.after.setdefault(last, []).append(ref)
        self.parent[ref] = parent
        self.facts[ref] = NodeFacts(tool_results=(tool_use_id,), size=256)
        self.structural = True
        self._view = None
        return ref

    def drop(self, refs: set[int], why: tuple[str | None, str]) -> list[tuple[int, int]]:
        """Drop input nodes; their children take their parent. Returns (child, new parent)."""
        refs = {r for r in refs if r < self.n and r not in self.dropped}
        if not refs:
            return []
        moved: list[tuple[int, int]] = []
        for r in range(self.n + len(self.added)):
            if r in refs or r in self.dropped:
                continue
            p = self.parent_of(r)
            if p in refs:
                while p in refs:  # a dropped node's parent may be dropped too
                    p = self.parent_of(p)
                    if p < 0:
                        break
                if p == UNRESOLVED:
                    p = ROOT
                self.parent[r] = p
                self.why[r] = why
                moved.append((r, p))
        self.dropped |= refs
        for r in refs:
            self.why[r] = why
        self.structural = True
        self._view = None
        return moved

    # --- the output graph ---------------------------------------------------------------

    def view(self) -> View:
        if self._view is not None:
            return self._view
        s = self.survey
        if not self.structural:
            facts = s.facts if not self.facts else {**s.facts, **self.facts}
            self._view = View(s.index, range(self.n), facts, self.chain, s.continues_context)
            return self._view
        self._view = self._rebuild()
        return self._view

    def _rebuild(self) -> View:
        """The output graph as a fresh index, in output order. The hot part of repairing
        a damaged big file (once per round with structural edits): it copies the
        survey's 16-byte uuid keys and arrays instead of going through uuid strings."""
        src = self.survey.index
        keys = _keys(src)
        spar, sline, sflags, slog = src.parent, src.line, src.flags, src.logical
        sfacts, mfacts = self.survey.facts, self.facts
        pending = _pending(src)
        override, dropped, after = self.parent, self.dropped, self.after
        n = self.n
        ix = ChainIndex()  # filled by key: the model never gives two nodes one uuid
        ix.elsewhere = src.elsewhere
        index, okeys, opar, oline, oflags, opending = (
            ix._index,
            ix._keys,
            ix.parent,
            ix.line,
            ix.flags,
            ix._pending,
        )
        refs = array("q")
        facts: dict[int, NodeFacts] = {}
        special = set(override) | set(self.logical) | set(mfacts) | set(after) | dropped
        for i in range(n):
            if i not in special:
                # The common case, inlined: an input node as the survey saw it.
                j = len(okeys)
                k = keys[i]
                index[k] = j
                okeys.append(k)
                p = spar[i]
                if p >= 0:
                    q = index.get(keys[p])
                    if q is None:
                        opar.append(UNRESOLVED)
                        opending[j] = keys[p]
                    else:
                        opar.append(q)
                elif p == UNRESOLVED:
                    opar.append(UNRESOLVED)
                    opending[j] = pending[i]
                else:
                    opar.append(NO_PARENT)
                oline.append(sline[i])
                oflags.append(sflags[i])
                lg = slog.get(i)
                if lg is not None:
                    ix.logical[j] = lg
                f = sfacts.get(i)
                if f is not None:
                    facts[j] = f
                refs.append(i)
                continue
            if i not in dropped:
                self._put(ix, refs, facts, i, keys, pending)
            for a in after.get(i, ()):
                self._put(ix, refs, facts, a, keys, pending)
        ix.finish()
        return View(ix, refs, facts, self.chain, self.survey.continues_context)

    def _put(
        self,
        ix: ChainIndex,
        refs: array[int],
        facts: dict[int, NodeFacts],
        ref: int,
        keys: list[bytes],
        pending: dict[int, bytes],
    ) -> None:
        n = self.n

        def key(r: int) -> bytes:
            return keys[r] if r < n else uuid_key(self.added[r - n].uuid)

        p = self.parent_of(ref)
        pk = None if p == ROOT else pending[ref] if p == UNRESOLVED else key(p)
        if ref < n:
            j = ix.add_key(
                keys[ref],
                pk,
                self.survey.index.line[ref],
                self.survey.index.flags[ref],
                self.logical_uuid(ref),
            )
        else:
            j = ix.add_key(key(ref), pk, self.line(ref), self.flags(ref), None)
        refs.append(ref)
        f = self.node_facts(ref)
        if f is not None:
            facts[j] = f


def _keys(ix: ChainIndex) -> list[bytes]:
    return ix._keys


def _pending(ix: ChainIndex) -> dict[int, bytes]:
    return ix._pending
