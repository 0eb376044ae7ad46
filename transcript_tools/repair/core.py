"""Repair: give back everything a crash did not physically destroy, in a file every
reader accepts, and say exactly what was done.

Two passes over the input (any size, bounded memory):

1. `survey.Survey` gathers small facts: the uuid graph (`chain.ChainIndex`), per-node
   `active.NodeFacts`, the line-level damage, duplicates.
2. `plan.make_plan` decides every fix on that graph (`fixes`, judged by the validator's
   own code on a `repair.model.Model` of the output), then `apply.apply` streams the input
   again and writes: untouched lines byte for byte, changed records re-serialised as
   Claude Code writes them, added records after their line, and each input line that
   did not survive as it was to the quarantine.

One fix per ``tt validate`` code (`diagnostics.CODES` names them): ``cut-torn-tail``,
``split-fused``, ``quarantine-line``, ``quarantine-bytes``, ``replace-invalid-utf8``,
``replace-lone-surrogate``, ``normalise-line-ends``, ``drop-blank-lines``,
``drop-duplicates``, ``relink-parent``, ``relink-logical-parent``, ``break-cycle``,
``add-interrupted-result``, ``orphan-result-to-text`` (or ``drop-orphan-result``),
``regroup-split-message``, ``shrink-image``, ``drop-empty-message``,
``restore-compact-metadata`` (`boundary_meta`), and the request rules of `api_rules`
(``drop-empty-blocks``, ``drop-unsigned-thinking``, ``drop-truncated-thinking``,
``drop-nul-run``, ``fill-error-result``, ``replace-nul``, ``replace-nul-in-input``,
``drop-textless-thinking``, ``tool-call-to-text``, ``tool-reference-to-text``,
``image-to-text``, ``rename-duplicate-tool-id``); opt-in ``strip-thinking``. The file side
(`files`) adds ``compact-history`` for ``prompt-too-long`` and ``request-too-large``: an
offline compaction appended after the write (nothing removed); for ``request-too-large``
what it appended is measured against the 32 MB again, and the error stays when the
messages it keeps verbatim are over it alone.

Invariants:
- Nothing is lost: output + quarantine hold every input byte.
- A file with nothing to fix comes out byte for byte (``plan.identity``); repair is
  idempotent (the output has nothing left to fix).
- Untouched lines are written byte for byte; only changed records are serialised again.
- This package is pure (no I/O, clock or randomness: ``now`` and ``new_id`` are passed
  in); `repair.files` is the adapter that streams a file through it with `reader` and
  `writer`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..model.chain import Elsewhere
from ..model.lines import DecodedLine, Entry
from .apply import Out, Quarantined, apply, original_bytes, quarantine_record
from .model import Action
from .plan import Plan, RepairOptions, make_plan
from .survey import Survey


def plan_lines(
    lines: list[DecodedLine],
    options: RepairOptions = RepairOptions(),
    *,
    new_id: Callable[[], str],
    elsewhere: Elsewhere | None = None,
) -> Plan:
    """The plan for lines already in memory (the caller enforced any size cap);
    ``elsewhere`` as for `Survey.finish`."""
    size = sum(len(ln.data) + len(ln.terminator) for ln in lines)
    s = Survey(
        size=size,
        cap=max(size, options.cap),
        strip_thinking=options.strip_thinking,
        max_image_bytes=options.max_image_bytes,
    )
    s.feed_all(lines)
    s.finish(elsewhere)
    return make_plan(s, options, new_id=new_id)


def repaired_entries(
    lines: Iterable[DecodedLine],
    options: RepairOptions = RepairOptions(),
    *,
    now: str,
    new_id: Callable[[], str],
    elsewhere: Elsewhere | None = None,
) -> tuple[list[Entry], list[Action]]:
    """The entries of the repaired transcript, in output order, and what was done.

    For in-memory users (resume, fork, compact, show): the same fixes ``tt repair``
    writes, without writing anything. Unchanged entries are the input's own objects.
    """
    got = lines if isinstance(lines, list) else list(lines)
    plan = plan_lines(got, options, new_id=new_id, elsewhere=elsewhere)
    if plan.identity:
        return [e for ln in got for e in ln.entries], plan.actions
    entries: list[Entry] = []
    for item in apply(got, plan, now=now):
        if isinstance(item, Out) and item.entry is not None:
            entries.append(item.entry)
    return entries, plan.actions


__all__ = [
    "Action",
    "Out",
    "Plan",
    "Quarantined",
    "RepairOptions",
    "Survey",
    "apply",
    "make_plan",
    "original_bytes",
    "plan_lines",
    "quarantine_record",
    "repaired_entries",
]
