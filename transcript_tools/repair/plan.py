"""From a `Survey` to a `Plan`: every fix decided, before a byte is written.

The plan says, per input line, whether it is written back byte for byte or rewritten,
and for rewritten lines what happens to each record on it (kept as is, re-serialised
with changes, dropped); which records are added after which line; and the `Action`s
taken, each tied to the diagnostic code it resolves. It also lists what repair could not
fix (`remaining`), judged on the output graph with the validator's own code.

Order of the fixes: line damage and duplicates (local, decided by the survey), opt-in
content changes, then rounds of chain fixes and API fixes until the output graph is
clean or nothing more can be done (`fixes`).

Invariants:
- A line not in ``touched`` and with no insert after it is written back byte for byte;
  so the plan of a file with nothing to fix is the identity (``plan.identity``).
- Memory is the survey's plus what the fixes touch.
- Pure: ``new_id`` supplies fresh uuids; no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..model.api_rules import BIG_IMAGE, CODE_OF_BIT, FIX_OF_BIT, HUGE_IMAGE, RULE_BITS, WIDE_IMAGE, IdRenames
from ..model.diagnostics import Diagnostic, Severity
from ..model.lines import MAX_TRANSCRIPT_READ_BYTES
from .fixes import (
    Attempted,
    ChainFindings,
    Finding,
    api_fixes,
    chain_findings,
    chain_fixes,
    conversation_findings,
)
from .model import ROOT, Action, Model, View
from .survey import Key, Reason, Survey, reason

#: Rounds of chain + API fixes; each round can expose the next problem (a relinked
#: parent brings an unanswered call onto the active chain). Real damage settles in 2-3.
MAX_ROUNDS = 32

#: Below this many occurrences, line-level actions are listed one by one.
_LIST_LIMIT = 20


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


@dataclass(slots=True)
class EntryEdit:
    """What to change in one record (UNSET: leave the key as it is)."""

    parent: Any = UNSET  # str | None
    logical: Any = UNSET  # str | None
    orphans: tuple[str, ...] = ()  # tool_use ids whose tool_result block becomes text (or goes)
    drop_orphans: bool = False
    strip_thinking: bool = False
    max_image_bytes: int | None = None
    api_bits: int = 0  # `api_rules` bits to fix in the content
    metadata: dict[str, Any] | None = None  # a compact boundary's restored compactMetadata
    uses: IdRenames = field(default_factory=dict)  # tool_use id renames (old, or (old, k) -> new)
    results: IdRenames = field(default_factory=dict)  # tool_result id renames


@dataclass(frozen=True, slots=True)
class Insert:
    """A record to add after a line: the interrupted result of one tool call."""

    uuid: str
    parent: str
    call: Key  # the entry holding the tool_use (on the line the insert follows)
    tool_use_id: str


#: Why repair leaves every error of these codes (the others it leaves say why in their
#: own message): said once under a file's list and carried by the JSON as ``left_why``.
LEFT_WHY = {
    "schema-invalid": "repair mends lines, links and the API's rules, not a record's fields to fit "
    "tt's schema; `tt validate` lists them",
}


@dataclass(slots=True)
class Plan:
    actions: list[Action] = field(default_factory=list)
    edits: dict[Key, EntryEdit] = field(default_factory=dict)
    drop: set[Key] = field(default_factory=set)
    inserts: dict[int, list[Insert]] = field(default_factory=dict)  # after input line
    reasons: dict[int, list[Reason]] = field(default_factory=dict)  # input line -> why rewritten
    remaining: list[Diagnostic] = field(default_factory=list)
    api_checked: bool = True
    #: ``prompt-too-long`` or ``request-too-large``: the file side appends an offline
    #: compaction after the write.
    compact: bool = False
    #: Byte offset of every touched line and of every line an insert follows.
    offsets: dict[int, int] = field(default_factory=dict)

    @property
    def touched(self) -> set[int]:
        return set(self.reasons)

    @property
    def identity(self) -> bool:
        return not self.reasons and not self.inserts

    @property
    def remaining_errors(self) -> int:
        return sum(1 for d in self.remaining if d.severity is Severity.ERROR)


@dataclass(frozen=True, slots=True)
class RepairOptions:
    """Choices beyond the default fixes. ``cap``: files past it get the API fixes only on
    the part a resume sends (what follows the last compact boundary, or all of a file with
    none), whatever that part's size (`survey.Survey.need_facts_pass`)."""

    drop_orphans: bool = False  # drop orphan tool results instead of keeping them as text
    strip_thinking: bool = False  # remove thinking blocks (signatures rejected after a model switch)
    max_image_bytes: int | None = None  # replace base64 images larger than this with a placeholder
    cap: int = MAX_TRANSCRIPT_READ_BYTES
    #: The lines begin mid-file (an in-memory load from the last compact boundary): the
    #: boundary's logicalParentUuid names an entry before them, which is not damage.
    partial_load: bool = False


def make_plan(s: Survey, opts: RepairOptions, *, new_id: Callable[[], str]) -> Plan:
    plan = Plan(reasons={line: list(rs) for line, rs in s.dirty.items()}, api_checked=s.api_checked)
    _line_actions(s, plan)
    _duplicates(s, plan)
    m = Model(s)
    _opt_in(s, m, plan, opts)
    attempted: Attempted = set()
    for final in range(MAX_ROUNDS + 1):
        v = m.view()
        chain = chain_findings(v)
        if opts.partial_load and chain.logical:
            chain = replace(chain, logical=[])
        acts = chain_fixes(m, v, chain) if chain and final < MAX_ROUNDS else []
        found: list[Finding] = []
        if not acts and s.api_checked:
            full, found = conversation_findings(v, chain)
            if found and final < MAX_ROUNDS:
                acts = api_fixes(
                    m, v, full, found, new_id=new_id, drop_orphans=opts.drop_orphans, attempted=attempted
                )
        if not acts:
            # Nothing (more) to do: what this view still shows is what remains.
            plan.remaining = remaining(v, chain, found)
            break
        plan.actions.extend(acts)
    _translate(m, plan, opts)
    _restore_metadata(s, plan)
    if s.too_long is not None:
        line, uuid, said = s.too_long
        plan.compact = True
        plan.actions.append(
            Action(
                "compact-history",
                "prompt-too-long",
                line,
                uuid,
                f"the history was refused as past the context window ({said}): an offline compaction "
                "(tt compact's) is appended; the history stays in the file",
            )
        )
    elif any(d.code == "request-too-large" for d in plan.remaining):
        # The same fix for a request over the API's 32 MB limit (a 413 on every turn): the
        # compaction's kept tail is budgeted in tokens (40k by default, well under 1 MB of
        # text); the file side judges the kept tail again and leaves the error when big
        # images or documents in it keep it over (`files._compact`).
        said = next(d.message for d in plan.remaining if d.code == "request-too-large")
        plan.remaining = [d for d in plan.remaining if d.code != "request-too-large"]
        plan.compact = True
        plan.actions.append(
            Action(
                "compact-history",
                "request-too-large",
                None,
                None,
                f"{said}: an offline compaction (tt compact's) is appended; the history stays in the file",
            )
        )
    for line in (*plan.reasons, *plan.inserts):
        if line not in plan.offsets:
            plan.offsets[line] = s.line_offsets[line]
    return plan


def _restore_metadata(s: Survey, plan: Plan) -> None:
    """``compact-metadata-missing``: the metadata the file supports (`boundary_meta`)."""
    for key, (uuid, offset) in s.bare_boundaries.items():
        if key in plan.drop:
            continue
        md = s.boundary_meta.found[key]
        plan.edits.setdefault(key, EntryEdit()).metadata = md
        plan.offsets[key[0]] = offset
        detail = "compactMetadata restored: " + ", ".join(f"{k}={v}" for k, v in md.items())
        plan.reasons.setdefault(key[0], []).append(reason("compact-metadata-missing", detail=detail))
        plan.actions.append(
            Action("restore-compact-metadata", "compact-metadata-missing", key[0], uuid, detail)
        )


def _line_actions(s: Survey, plan: Plan) -> None:
    by_code: dict[str, list[tuple[int, Reason]]] = {}
    for line, rs in s.dirty.items():
        for r in rs:
            assert r.code is not None  # line damage always has a code
            by_code.setdefault(r.code, []).append((line, r))
    for code, found in by_code.items():
        if len(found) <= _LIST_LIMIT:
            for line, r in found:
                plan.actions.append(Action(r.fix, code, line, None, _line_detail(r)))
        else:
            lines = sorted(line for line, _ in found)
            total = sum(r.length or 0 for _, r in found)
            plan.actions.append(
                Action(
                    found[0][1].fix,
                    code,
                    lines[0],
                    None,
                    f"{len(found)} lines ({total} bytes), lines {lines[0]}..{lines[-1]}",
                )
            )


_LINE_DETAIL = {
    "torn-tail": "cut the incomplete last record ({n} bytes) to quarantine",
    "fused-records": "split the line: {n} bytes",
    "truncated-record": "moved an incomplete record ({n} bytes) to quarantine",
    "nul-run": "moved {n} NUL bytes to quarantine",
    "garbage": "moved {n} bytes that are not JSON to quarantine",
    "not-object": "moved JSON that is not an object ({n} bytes) to quarantine",
    "invalid-utf8": "replaced invalid UTF-8 bytes with U+FFFD (record of {n} bytes re-serialised)",
    "lone-surrogate": "replaced lone surrogate escapes with U+FFFD (record of {n} bytes re-serialised)",
    "nul-run-in-record": "dropped {detail} inside the record; kept the record (re-serialised)",
    "crlf": "CRLF line end -> LF",
    "bom": "removed the byte-order mark",
    "blank-line": "dropped an empty line",
}


def _line_detail(r: Reason) -> str:
    if r.code == "fused-records" and r.detail:
        return f"split the line: {r.detail}; the incomplete part (if any) to quarantine"
    if r.code == "fused-records":
        return f"kept the whole record; moved the incomplete one ({r.length} bytes) to quarantine"
    code = r.code or r.fix
    return _LINE_DETAIL.get(code, code).format(n=r.length, detail=r.detail)


def _duplicates(s: Survey, plan: Plan) -> None:
    for d in s.duplicates:
        code = "duplicate-line" if d.same_bytes else "duplicate-uuid"
        plan.drop.add(d.key)
        detail = f"dropped: uuid {d.uuid} was first written at line {d.first_line}" + (
            "" if d.same_bytes else " (kept that one)"
        )
        plan.reasons.setdefault(d.key[0], []).append(reason(code, detail=detail))
        plan.actions.append(Action("drop-duplicates", code, d.key[0], d.uuid, detail))


def _opt_in(s: Survey, m: Model, plan: Plan, opts: RepairOptions) -> None:
    if opts.strip_thinking:
        emptied: set[int] = set()
        for key, only in s.thinking.items():
            if key in plan.drop:
                continue
            ref = s.key_node.get(key, -1)
            plan.edits.setdefault(key, EntryEdit()).strip_thinking = True
            plan.reasons.setdefault(key[0], []).append(
                Reason(None, "strip-thinking", detail="thinking blocks removed (--strip-thinking)")
            )
            if only and ref >= 0:
                emptied.add(ref)
            plan.actions.append(
                Action(
                    "strip-thinking",
                    None,
                    key[0],
                    m.uuid(ref) if ref >= 0 else None,
                    "thinking-only entry dropped" if only else "thinking blocks removed",
                )
            )
        if emptied:
            for child, p in m.drop(emptied, (None, "strip-thinking")):
                plan.actions.append(
                    Action(
                        "strip-thinking",
                        None,
                        m.line(child),
                        m.uuid(child),
                        f"parentUuid now {m.uuid(p) if p >= 0 else 'null'} (its parent held only thinking and was dropped)",
                    )
                )
    if opts.max_image_bytes is not None:
        for key in s.big_images:
            if key in plan.drop:
                continue
            plan.edits.setdefault(key, EntryEdit()).max_image_bytes = opts.max_image_bytes
            plan.reasons.setdefault(key[0], []).append(
                Reason(
                    "image-too-large",
                    "shrink-image",
                    detail=f"images over {opts.max_image_bytes} bytes replaced by a placeholder",
                )
            )
            ref = s.key_node.get(key, -1)
            plan.actions.append(
                Action(
                    "shrink-image",
                    "image-too-large",
                    key[0],
                    m.uuid(ref) if ref >= 0 else None,
                    f"images over {opts.max_image_bytes} bytes replaced by a text placeholder",
                )
            )
            f = m.node_facts(ref) if ref >= 0 else None
            if f is not None and f.big_images:
                m.set_facts(ref, replace(f, big_images=0))


def _translate(m: Model, plan: Plan, opts: RepairOptions) -> None:
    """Model edits -> per-record edits and inserts, keyed by input (line, k)."""
    s = m.survey
    ix = s.index
    for ref, target in m.parent.items():
        if ref >= m.n or ref in m.dropped:
            continue
        new = None if target == ROOT else m.uuid(target)
        p = ix.parent[ref]
        old = m.missing.get(ref) if p < -1 else (m.uuid(p) if p >= 0 else None)
        if new == old:
            continue
        key = m.key(ref)
        plan.offsets[key[0]] = s.node_offset[ref]
        plan.edits.setdefault(key, EntryEdit()).parent = new
        code, fix = m.why[ref]
        plan.reasons.setdefault(key[0], []).append(Reason(code, fix, detail=f"parentUuid {old} -> {new}"))
    for ref, target in m.logical.items():
        key = m.key(ref)
        plan.offsets[key[0]] = s.node_offset[ref]
        new = None if target == ROOT else m.uuid(target)
        plan.edits.setdefault(key, EntryEdit()).logical = new
        code, fix = m.why[ref]
        plan.reasons.setdefault(key[0], []).append(Reason(code, fix, detail=f"logicalParentUuid -> {new}"))
    for ref, ids in m.orphans.items():
        if ref in m.dropped:
            continue
        key = m.key(ref)
        plan.offsets[key[0]] = s.node_offset[ref]
        e = plan.edits.setdefault(key, EntryEdit())
        e.orphans = tuple(ids)
        e.drop_orphans = opts.drop_orphans
        plan.reasons.setdefault(key[0], []).append(
            reason(
                "tool-result-orphan",
                fix="drop-orphan-result" if opts.drop_orphans else None,
                detail=", ".join(ids),
            )
        )
    _translate_rules(m, plan)
    for ref in m.dropped:
        key = m.key(ref)
        plan.offsets[key[0]] = s.node_offset[ref]
        plan.drop.add(key)
        plan.edits.pop(key, None)
        code, fix = m.why.get(ref, (None, "drop-entry"))
        plan.reasons.setdefault(key[0], []).append(
            Reason(code, fix, detail="entry left empty by this fix: dropped")
        )
    for after, added in m.after.items():
        line = ix.line[after]
        plan.offsets[line] = s.node_offset[after]
        for ref in added:
            a = m.added[ref - m.n]
            parent = m.parent_uuid(ref)
            assert parent is not None
            plan.inserts.setdefault(line, []).append(Insert(a.uuid, parent, m.key(a.call), a.tool_use_id))


def _translate_rules(m: Model, plan: Plan) -> None:
    """The block-level API fixes (`fixes.rule_fixes`) as per-record edits."""
    s = m.survey
    for ref, bits in m.rules.items():
        if ref in m.dropped:
            continue
        key = m.key(ref)
        plan.offsets[key[0]] = s.node_offset[ref]
        plan.edits.setdefault(key, EntryEdit()).api_bits |= bits
        for bit in (*RULE_BITS, BIG_IMAGE):
            if bits & (bit | WIDE_IMAGE if bit == HUGE_IMAGE else bit):
                plan.reasons.setdefault(key[0], []).append(reason(CODE_OF_BIT[bit][0], fix=FIX_OF_BIT[bit]))
    for ref, (uses, results) in m.renames.items():
        if ref in m.dropped:
            continue
        key = m.key(ref)
        plan.offsets[key[0]] = s.node_offset[ref]
        e = plan.edits.setdefault(key, EntryEdit())
        e.uses.update(uses)
        e.results.update(results)
        detail = ", ".join(
            f"{a if isinstance(a, str) else a[0]} -> {b}" for a, b in {**uses, **results}.items()
        )
        plan.reasons.setdefault(key[0], []).append(reason("tool-use-id-duplicate", detail=detail))


def remaining(v: View, chain: ChainFindings, found: list[Finding]) -> list[Diagnostic]:
    """What the validator would still report in repair's chain/api families, judged on
    the output graph (lines are input lines)."""
    ix = v.ix
    out: list[Diagnostic] = []
    for j, missing in chain.dangling:
        out.append(
            Diagnostic(
                "dangling-parent", f"parentUuid {missing} names no entry", None, ix.line[j], None, ix.uuid(j)
            )
        )
    for j, missing in chain.logical:
        out.append(
            Diagnostic(
                "dangling-logical-parent",
                f"logicalParentUuid {missing} names no entry",
                None,
                ix.line[j],
                None,
                ix.uuid(j),
            )
        )
    for cyc in chain.cycles:
        out.append(
            Diagnostic(
                "cycle",
                f"parentUuid loop through {len(cyc)} entries",
                None,
                ix.line[min(cyc)],
                None,
                ix.uuid(min(cyc)),
            )
        )
    if chain.sidechain is not None:
        _, side = chain.sidechain
        out.append(
            Diagnostic(
                "sidechain-in-main",
                "the active main chain passes through a sidechain entry",
                None,
                ix.line[side],
                None,
                ix.uuid(side),
            )
        )
    for code, node, msg in found:
        out.append(
            Diagnostic(
                code,
                msg,
                None,
                ix.line[node] if node >= 0 else None,
                None,
                ix.uuid(node) if node >= 0 else None,
            )
        )
    return out
