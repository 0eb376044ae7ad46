"""The graph fixes: chain damage first, then what the Messages API would reject.

Each function looks at a `View` of the output graph, records edits in the `Model`, and
returns the `Action`s it took; an empty list means nothing (more) it can fix. The
planner (`plan`) alternates: chain fixes until the chain is whole, then API fixes, then
checks again, because one fix can expose the next (a relinked parent puts an unanswered
tool call back on the active chain).

Chain fixes (docs/format.md §4, §10):
- ``dangling-parent``: the entry takes *the previous entry of the same chain in file
  order* as parent (main chain, or the same agent's sidechain); the first entry of its
  chain becomes a root. The parent a destroyed line leaves behind is almost always the
  line just before it, so this restores what was there.
- ``dangling-logical-parent``: the compact boundary's ``logicalParentUuid`` likewise.
- ``cycle``: the loop's first entry in file order (whose parent is therefore a later
  line: the wrong edge) is relinked as above, or becomes a root.
- ``sidechain-in-main``: the main entry hanging off a sidechain entry is relinked to the
  previous main entry.
A relink never makes a loop: a target that descends from the entry is refused (root).

API fixes (on the conversation a resume sends, `active.conversation_nodes`):
- ``tool-use-unpaired``: a ``tool_result`` with ``is_error: true`` saying the tool use was
  interrupted, as Claude Code itself writes for interrupted tools ("[Request interrupted
  by user for tool use]", seen in 1.0.51 transcripts), is added right after the call's
  line and chained in: the entry that followed the call now follows the result.
- ``tool-result-orphan``: the result's content becomes plain text in the same user
  message (or, with ``drop_orphans``, the block is dropped, and an emptied message too).
- ``split-message-noncontiguous``: the later lines of the response (with their tool
  results) are moved, by relinking parents, right after the earlier ones.
- the block-level rules of `api_rules` (``empty-text-block``, ``thinking-unsigned``,
  ``thinking-text-missing``, ``nul-in-content``, ``nul-in-tool-input``, ``tool-name-too-long``, ``tool-reference-too-long``,
  ``tool-use-id-invalid``): the record's
  content is fixed as `api_rules` says (each fix's docstring there says why it loses
  least); a message left with no block is dropped and its children take its parent; a
  call kept as text leaves its result an orphan, which the next round keeps as text.
- ``empty-content`` (content ``""``, ``[]``, null, or one empty text block): the message
  is dropped (the line goes to the quarantine) and its children take its parent. It
  holds nothing, so nothing is lost; both pinned CLIs leave such a message out of the
  request themselves (tests/model/test_api_rules_claude.py, shape ``empty-content``).
- ``tool-use-id-duplicate``: the later call and the first result after it that answers
  that id get a fresh id (``<id>_dup<k>``), so both calls and both results stay, paired.
(``image-too-large`` with ``max_image_bytes`` and ``--strip-thinking`` are content changes
decided up front, in `plan`.)

Invariants: a fix is tried once per (code, thing); every changed edge is an Action.
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import pairwise

from ..model.active import NodeFacts, conversation_nodes
from ..model.api_checks import api_findings
from ..model.api_rules import (
    ALL_GONE,
    BAD_TOOL_ID,
    BIG_IMAGE,
    BLANK_TEXT,
    CODE_OF_BIT,
    CUT_SIGNATURE,
    EMPTY_ERROR_RESULT,
    FIX_OF_BIT,
    HUGE_IMAGE,
    LONG_TOOL_NAME,
    LONG_TOOL_REFERENCE,
    MANY_IMAGE_MESSAGE,
    NO_THINKING_TEXT,
    NUL_CHAR,
    NUL_IN_INPUT,
    RULE_BITS,
    RULE_MASK,
    UNSIGNED_THINKING,
    WIDE_IMAGE,
    renamed_id,
)
from ..model.chain import ASSISTANT, SIDECHAIN, USER
from .model import ROOT, Action, Model, View

Attempted = set[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class ChainFindings:
    """The chain problems of one view: what `chain_fixes` resolves."""

    dangling: list[tuple[int, str]]
    logical: list[tuple[int, str]]
    cycles: list[list[int]]
    sidechain: tuple[int, int] | None  # (main node, its sidechain parent) on the active chain
    active: list[int]  # the active chain, root first (`ChainIndex.active_chain`)

    def __bool__(self) -> bool:
        return bool(self.dangling or self.logical or self.cycles or self.sidechain)


def chain_findings(v: View) -> ChainFindings:
    ix = v.ix
    side = None
    active: list[int] = []
    leaf = ix.active_leaf()
    if leaf is not None:
        active = list(ix.walk_up(leaf))
        if not ix.flags[leaf] & SIDECHAIN:
            for child, i in pairwise(active):
                if ix.flags[i] & SIDECHAIN:
                    side = (child, i)
                    break
        active.reverse()
    # A loop needs an edge to the same or a later node; parents found when their child
    # was added always come earlier, so most files need no cycle search at all.
    par = ix.parent
    cycles = ix.cycles() if any(p >= i for i, p in enumerate(par)) else []
    return ChainFindings(list(ix.dangling()), list(ix.dangling_logical()), cycles, side, active)


def chain_fixes(m: Model, v: View, found: ChainFindings) -> list[Action]:
    ix = v.ix
    acts: list[Action] = []
    for j, missing in found.dangling:
        t = _target(v, j, {j})
        acts.append(
            _relink(m, v, j, t, "relink-parent", "dangling-parent", f"parentUuid {missing} names no entry")
        )
    for j, missing in found.logical:
        t = v.prev_same()[j]
        ref = v.refs[j]
        m.set_logical(
            ref, v.refs[t] if t >= 0 else ROOT, ("dangling-logical-parent", "relink-logical-parent")
        )
        new = m.uuid(v.refs[t]) if t >= 0 else None
        acts.append(
            Action(
                "relink-logical-parent",
                "dangling-logical-parent",
                m.line(ref),
                m.uuid(ref),
                f"logicalParentUuid {missing} names no entry; now {_name(new)}",
            )
        )
    for cyc in found.cycles:
        first = min(cyc)
        t = _target(v, first, set(cyc))
        acts.append(
            _relink(
                m,
                v,
                first,
                t,
                "break-cycle",
                "cycle",
                f"parentUuid {ix.uuid(ix.parent[first])} closes a loop of {len(cyc)}",
            )
        )
    if not acts and found.sidechain is not None:
        child, side = found.sidechain
        t = _target(v, child, {child})
        acts.append(
            _relink(
                m,
                v,
                child,
                t,
                "relink-parent",
                "sidechain-in-main",
                f"parentUuid {ix.uuid(side)} is a sidechain entry",
            )
        )
    return acts


def _target(v: View, j: int, avoid: set[int]) -> int:
    """The previous entry of j's chain in output order, unless that descends from ``avoid``."""
    t = int(v.prev_same()[j])
    if t < 0 or v.reaches(t, avoid):
        return -1
    return t


def _relink(m: Model, v: View, j: int, t: int, fix: str, code: str, why: str) -> Action:
    ref = v.refs[j]
    m.set_parent(ref, v.refs[t] if t >= 0 else ROOT, (code, fix))
    new = m.uuid(v.refs[t]) if t >= 0 else None
    where = (
        "the previous entry of its chain in file order"
        if t >= 0
        else "no earlier entry of its chain: now a root"
    )
    return Action(fix, code, m.line(ref), m.uuid(ref), f"{why}; parentUuid now {_name(new)} ({where})")


_NONE = NodeFacts()

Finding = tuple[str, int, str]  # (code, node, message), as validate.api_findings yields


def conversation_findings(v: View, chain: ChainFindings) -> tuple[list[int], list[Finding]]:
    """The conversation a resume sends (every chain node, in order) and what the API
    would reject in it: the validator's own judgement (`validate.core.api_findings`)."""
    ix = v.ix
    full = conversation_nodes(ix, v.facts, chain.active)
    msgs = [i for i in full if ix.flags[i] & (USER | ASSISTANT)]
    return full, list(api_findings(ix, v.facts, msgs, continues=v.continues))


def api_fixes(
    m: Model,
    v: View,
    full: list[int],
    findings: list[Finding],
    *,
    new_id: Callable[[], str],
    drop_orphans: bool,
    attempted: Attempted,
) -> list[Action]:
    unpaired: dict[int, list[str]] = {}
    orphans: list[tuple[int, str]] = []
    splits: list[int] = []
    # A call whose id this round renames as a duplicate is answered next round, under its
    # new id (answered now, the result would name the old one: an orphan, and the renamed
    # call unanswered again).
    renamed: set[tuple[int, str | None]] = set()
    for code, node, msg in findings:
        f = v.facts.get(node)
        if code == "tool-use-id-duplicate" and f is not None:
            renamed.add((node, _named(f.tool_uses, msg, "tool_use id {} is")))
    for code, node, msg in findings:
        f = v.facts.get(node)
        if f is None:
            continue
        if code == "tool-use-unpaired":
            u = _named(f.tool_uses, msg, "tool_use {} has")
            if (node, u) in renamed:
                continue
            if u is not None and ("unpaired", u) not in attempted:
                attempted.add(("unpaired", u))
                unpaired.setdefault(node, []).append(u)
        elif code == "tool-result-orphan":
            r = _named(f.tool_results, msg, "tool_result for {} has")
            if r is not None and ("orphan", f"{v.refs[node]}:{r}") not in attempted:
                attempted.add(("orphan", f"{v.refs[node]}:{r}"))
                orphans.append((node, r))
        elif code == "split-message-noncontiguous" and f.message_id is not None:
            # Keyed by the line too: a response torn into three groups needs two moves.
            if ("split", f"{v.refs[node]}:{f.message_id}") not in attempted:
                splits.append(node)
    pos = {j: p for p, j in enumerate(full)}
    acts: list[Action] = []
    for node, uses in unpaired.items():
        acts.extend(_add_results(m, v, full, pos, node, uses, new_id))
    acts.extend(_orphans(m, v, orphans, drop_orphans))
    acts.extend(rule_fixes(m, v, full, findings, attempted))
    if acts:
        return acts  # the graph changed: judge splits on the next view
    busy: set[int] = set()  # positions an earlier move of this round relinked around
    for node in splits:
        acts.extend(_regroup(m, v, full, pos, node, busy, attempted))
    return acts


_RULE_CODES = {CODE_OF_BIT[b][0] for b in RULE_BITS}


def rule_fixes(
    m: Model, v: View, full: list[int], findings: list[Finding], attempted: Attempted
) -> list[Action]:
    """The block-level API rules and duplicate tool ids (module docstring)."""
    acts: list[Action] = []
    emptied: set[int] = set()
    hollow: set[int] = set()  # messages whose content is empty as written (empty-content)
    pos: dict[int, int] | None = None
    taken: set[str] | None = None
    many = {node for _, node, msg in findings if msg == MANY_IMAGE_MESSAGE}
    for code, node, msg in findings:
        f = v.facts.get(node)
        if f is None or node < 0:
            continue
        ref = v.refs[node]
        if ref >= m.n:
            continue
        if code == "image-too-large" and f.big_images:
            m.rules[ref] = m.rules.get(ref, 0) | BIG_IMAGE
            m.set_facts(ref, replace(f, big_images=0))
            acts.append(Action("shrink-image", code, m.line(ref), m.uuid(ref), _RULE_DETAIL[BIG_IMAGE]))
        elif code in _RULE_CODES:
            if ("rules", str(ref)) in attempted:
                continue
            attempted.add(("rules", str(ref)))
            bits = f.bad & RULE_MASK & ~WIDE_IMAGE | (WIDE_IMAGE if node in many else 0)
            m.rules[ref] = m.rules.get(ref, 0) | bits
            # The facts as this round left them, not the view's: a duplicate's rename earlier
            # in the round changed this record's ids (its fix then names the old ones).
            now = m.node_facts(ref) or f
            uses = now.tool_uses
            if bits & LONG_TOOL_NAME:
                gone = set(m.survey.long_calls.get(ref, ()))
                uses = tuple(u for u in uses if u not in gone)
            # The image count stays: it decides the many-image limit for the rest.
            m.set_facts(
                ref,
                replace(
                    now,
                    bad=now.bad & ~(RULE_MASK | ALL_GONE),
                    tool_uses=uses,
                    plain=now.plain or uses != now.tool_uses,
                ),
            )
            for bit in RULE_BITS:
                if bits & (bit | WIDE_IMAGE if bit == HUGE_IMAGE else bit):
                    acts.append(
                        Action(
                            FIX_OF_BIT[bit], CODE_OF_BIT[bit][0], m.line(ref), m.uuid(ref), _RULE_DETAIL[bit]
                        )
                    )
            if f.bad & ALL_GONE:
                emptied.add(ref)
        elif code == "empty-content":
            if ("empty", str(ref)) not in attempted:
                attempted.add(("empty", str(ref)))
                hollow.add(ref)
        elif code == "tool-use-id-duplicate":
            u = _named(f.tool_uses, msg, "tool_use id {} is")
            if u is None or ("dup", f"{ref}:{u}") in attempted:
                continue
            attempted.add(("dup", f"{ref}:{u}"))
            if pos is None:
                pos = {j: p for p, j in enumerate(full)}
                taken = {t for g in v.facts.values() for t in (*g.tool_uses, *g.tool_results)}
            assert taken is not None
            acts.extend(_rename_duplicate(m, v, full, pos[node], ref, m.node_facts(ref) or f, u, taken, code))
    if emptied:
        for child, p in m.drop(emptied, ("empty-text-block", "drop-empty-blocks")):
            acts.append(
                Action(
                    "drop-empty-blocks",
                    "empty-text-block",
                    m.line(child),
                    m.uuid(child),
                    f"parentUuid now {_name(m.uuid(p) if p >= 0 else None)} (its parent held nothing the API takes and was dropped)",
                )
            )
    if hollow:
        for r in sorted(hollow):
            if r not in emptied:
                acts.append(
                    Action(
                        "drop-empty-message",
                        "empty-content",
                        m.line(r),
                        m.uuid(r),
                        "dropped a message whose content is empty (the API refuses it)",
                    )
                )
        for child, p in m.drop(hollow - emptied, ("empty-content", "drop-empty-message")):
            acts.append(
                Action(
                    "drop-empty-message",
                    "empty-content",
                    m.line(child),
                    m.uuid(child),
                    f"parentUuid now {_name(m.uuid(p) if p >= 0 else None)} (its parent's content was empty and it was dropped)",
                )
            )
    return acts


def _rename_duplicate(
    m: Model, v: View, full: list[int], at: int, ref: int, now: NodeFacts, u: str, taken: set[str], code: str
) -> list[Action]:
    """A fresh id (``<id>_dup<k>``) for each call of the record ``ref`` that reuses ``u``, and
    for the result that answers it: every call of the record with ``u`` when an earlier
    message has it, else all but the first (two calls of one message sharing an id). Calls
    and results pair in order (the i-th such call, the i-th result naming ``u`` after it);
    each block is named by its place among the record's blocks with that id (`rename_ids`),
    so a record's other call with the same id keeps it. ``now``: the record's facts as this
    round left them."""
    acts: list[Action] = []
    places = [p for p, t in enumerate(now.tool_uses) if t == u]
    earlier = any(u in v.facts.get(j, _NONE).tool_uses for j in full[:at])
    answers = [
        (j, q) for j in full[at + 1 :] for q, t in enumerate(v.facts.get(j, _NONE).tool_results) if t == u
    ]
    uses = list(now.tool_uses)
    for i, p in enumerate(places):
        if i == 0 and not earlier:
            continue  # the record's first call with the id keeps it
        new = renamed_id(u, taken)
        taken.add(new)
        m.renames.setdefault(ref, ({}, {}))[0][(u, now.tool_uses[:p].count(u))] = new
        uses[p] = new
        acts.append(
            Action(
                "rename-duplicate-tool-id",
                code,
                m.line(ref),
                m.uuid(ref),
                f"tool_use id {u} used twice: this call is now {new}",
            )
        )
        if i >= len(answers) or v.refs[answers[i][0]] >= m.n:
            continue
        aref, q = v.refs[answers[i][0]], answers[i][1]
        g = m.node_facts(aref)
        assert g is not None
        m.renames.setdefault(aref, ({}, {}))[1][(u, g.tool_results[:q].count(u))] = new
        m.set_facts(
            aref, replace(g, tool_results=tuple(new if x == q else t for x, t in enumerate(g.tool_results)))
        )
        acts.append(
            Action(
                "rename-duplicate-tool-id",
                code,
                m.line(aref),
                m.uuid(aref),
                f"its tool_result now answers {new}",
            )
        )
    m.set_facts(ref, replace(now, tool_uses=tuple(uses)))
    return acts


_RULE_DETAIL = {
    BLANK_TEXT: "dropped empty or whitespace-only text blocks",
    UNSIGNED_THINKING: "dropped thinking blocks with no signature (the API cannot verify them)",
    CUT_SIGNATURE: "dropped thinking blocks whose signature is cut short (the API cannot verify them)",
    EMPTY_ERROR_RESULT: "an error tool_result with no content now says the tool failed without a message",
    NUL_CHAR: "NUL characters replaced with U+2400",
    NUL_IN_INPUT: "NUL characters in a tool call's input replaced with U+2400 (the call stays)",
    NO_THINKING_TEXT: "dropped signed thinking blocks with no thinking text field (the API requires one)",
    LONG_TOOL_NAME: "a call whose tool name is past 200 characters kept as text",
    LONG_TOOL_REFERENCE: "a tool_reference past 64 characters kept as text",
    BAD_TOOL_ID: "tool ids not of the API's pattern renamed (call and results alike); one with no id kept as text",
    BIG_IMAGE: "images over the API's 5 MB replaced by a text placeholder",
    HUGE_IMAGE: "images past the API's pixel limits replaced by a text placeholder",
}


def _named(ids: tuple[str, ...], msg: str, pattern: str) -> str | None:
    # api_findings names the id in its message; the node may hold several.
    for i in ids:
        if pattern.format(i) in msg:
            return i
    return None


def _add_results(
    m: Model,
    v: View,
    full: list[int],
    pos: dict[int, int],
    node: int,
    uses: list[str],
    new_id: Callable[[], str],
) -> list[Action]:
    ix = v.ix
    call = v.refs[node]
    prev = call
    acts: list[Action] = []
    for u in uses:
        uuid = _fresh(m, v, new_id)
        prev = m.add_result(call, u, prev, uuid)
        acts.append(
            Action(
                "add-interrupted-result",
                "tool-use-unpaired",
                m.line(call),
                uuid,
                f"tool_use {u} had no tool_result: added one (is_error) saying the tool use was interrupted",
            )
        )
    p = pos[node]
    if p + 1 < len(full):
        nxt = full[p + 1]
        if ix.parent[nxt] == node:
            ref = v.refs[nxt]
            m.set_parent(ref, prev, ("tool-use-unpaired", "add-interrupted-result"))
            acts.append(
                Action(
                    "add-interrupted-result",
                    "tool-use-unpaired",
                    m.line(ref),
                    m.uuid(ref),
                    f"parentUuid {ix.uuid(node)} -> {m.uuid(prev)} (the added tool_result)",
                )
            )
    return acts


def _fresh(m: Model, v: View, new_id: Callable[[], str]) -> str:
    taken = {a.uuid for a in m.added}
    while True:
        u = new_id()
        if u not in v.ix and u not in taken and u not in m.survey.index:
            return u


def _orphans(m: Model, v: View, orphans: list[tuple[int, str]], drop: bool) -> list[Action]:
    acts: list[Action] = []
    emptied: set[int] = set()
    for node, r in orphans:
        ref = v.refs[node]
        if ref >= m.n:
            continue
        m.orphans.setdefault(ref, []).append(r)
        f = m.node_facts(ref)
        assert f is not None
        left = tuple(t for t in f.tool_results if t != r)
        plain = f.plain or not drop
        m.set_facts(ref, replace(f, tool_results=left, plain=plain, empty=not left and not plain))
        if drop:
            acts.append(
                Action(
                    "drop-orphan-result",
                    "tool-result-orphan",
                    m.line(ref),
                    m.uuid(ref),
                    f"dropped the tool_result for {r}: its tool_use was lost",
                )
            )
            if not left and not plain:
                emptied.add(ref)
        else:
            acts.append(
                Action(
                    "orphan-result-to-text",
                    "tool-result-orphan",
                    m.line(ref),
                    m.uuid(ref),
                    f"the tool_result for {r} (its tool_use was lost) is kept as plain text",
                )
            )
    if emptied:
        for child, p in m.drop(emptied, ("tool-result-orphan", "drop-orphan-result")):
            acts.append(
                Action(
                    "drop-orphan-result",
                    "tool-result-orphan",
                    m.line(child),
                    m.uuid(child),
                    f"parentUuid now {_name(m.uuid(p) if p >= 0 else None)} (its parent held only orphan results and was dropped)",
                )
            )
        for ref in sorted(emptied):
            acts.append(
                Action(
                    "drop-orphan-result",
                    "tool-result-orphan",
                    m.line(ref),
                    m.uuid(ref),
                    "the message held only orphan tool results: dropped",
                )
            )
    return acts


def _regroup(
    m: Model, v: View, full: list[int], pos: dict[int, int], node: int, busy: set[int], attempted: Attempted
) -> list[Action]:
    ix, facts = v.ix, v.facts
    mid = facts[node].message_id
    key = ("split", f"{v.refs[node]}:{mid}")

    def same_response(j: int) -> bool:
        f = facts.get(j)
        return f is not None and bool(ix.flags[j] & ASSISTANT) and f.message_id == mid

    def results_only(j: int) -> bool:
        f = facts.get(j)
        return f is not None and bool(ix.flags[j] & USER) and bool(f.tool_results) and not f.plain

    y = pos[node]
    z = y
    while z + 1 < len(full) and (same_response(full[z + 1]) or results_only(full[z + 1])):
        z += 1
    q = max((p for p in range(y) if same_response(full[p])), default=-1)
    if q < 0:
        return []
    while q + 1 < y and results_only(full[q + 1]):
        q += 1
    if q + 1 >= y:
        return []
    par = ix.parent
    linear = (
        par[full[q + 1]] == full[q]
        and par[full[y]] == full[y - 1]
        and (z + 1 >= len(full) or par[full[z + 1]] == full[z])
    )
    if not linear:
        return []  # spliced or branching order: leave it (reported as remaining)
    span = set(range(q, z + 2))
    if span & busy:
        return []  # overlaps a move made from this (now stale) view: next round
    busy |= span
    attempted.add(key)
    moves = [(full[y], full[q]), (full[q + 1], full[z])]
    if z + 1 < len(full):
        moves.append((full[z + 1], full[y - 1]))
    acts: list[Action] = []
    for child, new in moves:
        ref = v.refs[child]
        m.set_parent(ref, v.refs[new], ("split-message-noncontiguous", "regroup-split-message"))
        acts.append(
            Action(
                "regroup-split-message",
                "split-message-noncontiguous",
                m.line(ref),
                m.uuid(ref),
                f"parentUuid {ix.uuid(par[child])} -> {ix.uuid(new)} (lines of message {mid} brought together)",
            )
        )
    return acts


def _name(u: str | None) -> str:
    return u if u is not None else "null"
