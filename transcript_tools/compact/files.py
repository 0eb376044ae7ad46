"""Running a compaction over a transcript file: read, plan, summarise, write.

The edge around the pure `compact.plan` planner, `digest` and `compact.form`. A file of any
size is compacted in bounded memory, without loading it:

1. *Outline* (one streaming pass): `skeleton.Skeleton` — the uuid graph and a few bytes
   a node; damaged pieces of lines are skipped and counted.
2. *Plan*: the conversation order from the outline; `compact.plan.plan` reads back only the
   records it keeps (by byte offset, `os.pread`) and counts their tokens (`tokenizer`: what
   `conversation.api_messages` sends for each, so attachment records cost nothing).
3. *Digest* (a second streaming pass): only the lines holding summarised messages are
   decoded, into `digest.Digest` (and a bounded `digest.Excerpt` for a model
   summariser); their tokens are estimated from a sample (`tokenizer.SampledEstimate`).
4. *Summarise* through a `summarizers.Summarizer`, then *write* Claude Code's
   compaction form (`compact.form`).

Damaged input: when the outline finds damage and the file fits the in-memory cap, the
session is read again through the repair fixes (`loader.load_session`, which uses
``repair.core.repaired_entries``) and planned on the repaired entries, so what is kept is
what ``tt repair`` would give. Past the cap, damaged pieces are skipped and reported.

Writing (`Target`):
- a new session (default, ``-o``): a new file with a new session id, in the source's
  project folder unless a path is given, created exclusively (never overwrites), holding
  only what a resume needs plus the session's title records;
- ``--in-place``: the boundary, summary and kept copies are appended after the existing
  lines, as Claude Code's own ``/compact`` appends (the file keeps its history). It goes
  through `writer.replace_atomically`, the same path as ``tt repair --in-place``: the
  original bytes and the new lines are written to a temp file that is fsynced and
  renamed over the original, after a ``.bak`` hard link to the original and only if the
  file did not change since it was read. That costs a copy of the file, but a crash can
  never leave a half-appended compaction (a boundary without its summary would cut the
  conversation short), and the backup is exact and free;
- ``--in-place --drop-history``: the file is replaced by the compaction alone (boundary,
  summary, kept copies, ``last-prompt`` and the session's labels as they were), same path
  and session id, and the original is kept as the ``.bak`` (required: it is then the only
  copy of the history). Claude Code resumes such a file exactly as it resumes the appended
  one: the resume starts at the last boundary and splices in its preserved segment,
  which is the kept copies either way (verified with 2.1.332:
  ``tests/compact/test_cli_compact.py::test_the_real_cli_resumes_a_large_session_compacted_to_a_budget``,
  which compares the two requests). The boundary's ``logicalParentUuid`` is null, as in a
  new session, since the message it would name is in the backup, not in the file.
  This is what a user who wants a small file asked for (issue 18: ``--in-place`` on a
  59 MiB file "wrote 725 KiB" and left a 60.2 MB file plus a 59 MB backup);
- ``--dry-run``: nothing is written.

A compaction whose request would not be smaller than the original's (the summary is
no shorter than what it replaces: a small conversation, or a budget that summarises
one message) is not written in any mode (``Result.grows`` says so), unless asked
(``even_if_larger``). When nothing is worth summarising that way, ``drop_unsent``
(``--prune progress``) writes the whole conversation, verbatim and without a summary,
minus the records a resume never sends (``Result.slim``): the request stays the same,
the file loses its progress lines, request logs and dead branches (issue 18: a 4 MB
session that was 3.7 MB of progress lines).

Invariants:
- The input is never written except by ``--in-place``, and then only atomically.
- Memory grows with the number of entries (the outline) and the kept part, never with
  the size of the summarised part.
- OSError is translated into `errors` classes here or in `reader`/`writer`.
"""

from __future__ import annotations

import time
import uuid as _uuid
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..edge.reader import MAX_TRANSCRIPT_READ_BYTES, file_size
from ..edge.tokenizer import ESTIMATE_NOTE, SampledEstimate, TokenCounter
from ..edge.writer import backup_path, dumps, iso_now, replace_atomically, snapshot, write_new
from ..model.chain import BOUNDARY, SIDECHAIN, SUMMARY
from ..model.errors import NotFound, UsageError, WriteFailed
from ..model.lines import Entry
from . import form as compact_form
from .digest import Digest, clip, prompt_text
from .excerpt import Excerpt
from .files_read import FileSource, MemorySource, Progress, memory_outline, outline
from .plan import NodeInfo, Plan, PlanOptions, plan
from .report import Result
from .skeleton import PROGRESS, Skeleton
from .summarizers import EXCERPT_CHARS, Material, Summarizer

#: Bytes of summarised text tokenized exactly to calibrate the estimate of the rest.
SAMPLE_BYTES = 512 * 1024
#: ... but never fewer records than this (few, huge records make a noisy ratio).
MIN_SAMPLES = 1000
_BLOCK = 1 << 20


@dataclass(frozen=True, slots=True)
class Target:
    mode: str  # "new" | "in-place" | "dry-run"
    out: Path | None = None  # for "new": a file or a directory (None: the source's folder)
    force: bool = False  # in-place: replace even if the file changed meanwhile
    backup: bool = True  # in-place: keep the original as <file>.bak
    #: in-place: replace the file with the compaction alone (its history then lives only in
    #: the .bak, so a backup is required) instead of appending to it
    drop_history: bool = False
    #: the boundary's ``compactMetadata.trigger``: ``manual`` (``tt compact``, as ``/compact``)
    #: or ``auto`` (``tt resume``'s compaction of a history past the window, as Claude
    #: Code's auto-compaction writes it)
    trigger: str = "manual"


# --- the run -----------------------------------------------------------------------------


def compact_file(
    path: Path,
    summarizer: Summarizer,
    target: Target,
    options: PlanOptions | None = None,
    *,
    keep: Sequence[str] = (),
    keep_first_request: bool = True,
    max_bytes: int = MAX_TRANSCRIPT_READ_BYTES,
    counter: TokenCounter | None = None,
    now: Callable[[], str] = iso_now,
    new_id: Callable[[], str] = lambda: str(_uuid.uuid4()),
    progress: Progress | None = None,
    in_memory: bool | None = None,
    even_if_larger: bool = False,
    drop_unsent: bool = False,
) -> Result:
    """Compact ``path`` (module docstring). ``in_memory``: read through the in-memory
    repair (True), stream (False), or decide by the damage found and the size (None).
    ``even_if_larger``: write a compaction whose request would not be smaller too.
    ``drop_unsent`` (``--prune progress``): when nothing is worth summarising, write the
    whole conversation without the records a resume never sends (module docstring)."""
    started = time.perf_counter()
    options = options or PlanOptions()
    counter = counter or TokenCounter()
    size = file_size(path)
    snap = snapshot(path)
    sk = outline(path, progress)
    result = Result(
        path,
        sk.session_id,
        target.mode,
        summarizer.name,
        bytes_before=size,
        budget=options.keep_tokens,
        drop_history=target.drop_history,
        tokens_note=ESTIMATE_NOTE,
    )
    result.damage_pieces, result.damage_bytes = sk.damage_count, sk.damage_bytes
    damaged = bool(
        sk.damage_count
        or sk.lenient
        or sk.index.duplicates
        or next(sk.index.dangling(), None)
        or sk.index.cycles()
    )
    fits = size <= max_bytes
    if damaged and not fits and not in_memory:
        result.notes.append(
            f"{sk.damage_count} damaged piece(s) ({sk.damage_bytes} bytes) were skipped; the file is past the "
            f"{max_bytes // 2**20} MiB in-memory cap, so the repair fixes were not applied (run `tt repair` first to recover them)"
        )
    memory = in_memory if in_memory is not None else damaged and fits
    needs_newline = sk.ends_without_newline  # of the file itself, whatever is planned on
    while True:
        source: FileSource | MemorySource
        if memory:
            sk, nodes = memory_outline(path, max_bytes, result)
            source = MemorySource(nodes, sk)
        else:
            source = FileSource(path, sk)
        try:
            run = _Compaction(
                path,
                sk,
                source,
                summarizer,
                target,
                options,
                counter,
                result,
                progress,
                even_if_larger,
                drop_unsent,
            )
            run.run(
                keep,
                keep_first_request,
                new_id=new_id,
                now=now,
                snap=snap,
                repairable=not memory and fits and in_memory is None,
                needs_newline=needs_newline,
            )
        except _NeedsRepair:
            memory = True  # the kept part has what the repair fixes mend: read through them
            continue
        finally:
            source.close()
        break
    result.seconds = time.perf_counter() - started
    return result


class _NeedsRepair(Exception):
    """The streamed plan would copy messages the API rejects; redo it on repaired entries."""


class _Compaction:
    """One run over one source: plan, digest, summarise, build, write."""

    def __init__(
        self,
        path: Path,
        sk: Skeleton,
        source: FileSource | MemorySource,
        summarizer: Summarizer,
        target: Target,
        options: PlanOptions,
        counter: TokenCounter,
        result: Result,
        progress: Progress | None,
        even_if_larger: bool = False,
        drop_unsent: bool = False,
    ) -> None:
        self.even_if_larger, self.drop_unsent = even_if_larger, drop_unsent
        self.path, self.sk, self.source = path, sk, source
        self.summarizer, self.target, self.options = summarizer, target, options
        self.counter, self.result, self.progress = counter, result, progress
        #: Where the history will be (drop_history: the backup), named before it is written.
        self.history_at = backup_path(path) if target.mode == "in-place" and target.drop_history else None
        self.conv = sk.conversation()
        if not self.conv:
            raise NotFound(
                f"{path}: no conversation to compact (no user or assistant message on a main chain)"
            )
        if all(sk.index.flags[i] & SIDECHAIN for i in self.conv):
            raise UsageError(
                f"{path}: a subagent transcript (every entry is a sidechain); compact the main session instead"
            )
        self.position = array("q", [-1]) * len(sk)
        for q, n in enumerate(self.conv):
            self.position[n] = q
        result.conversation = len(self.conv)
        result.conversation_bytes_before = sum(sk.length[i] for i in self.conv)

    # --- plan ---------------------------------------------------------------------------

    def key_nodes(self, keep: Sequence[str], first_request: bool) -> list[int]:
        sk = self.sk
        out: list[int] = []
        if first_request and sk.first_prompt is not None:
            out.append(sk.first_prompt)
        for u in keep:
            i = sk.index.find(u)
            if i is None:
                raise NotFound(f"--keep {u}: no entry with this uuid in {self.path}")
            if self.position[i] < 0:
                raise UsageError(
                    f"--keep {u}: this entry is not on the conversation a resume sends (a dead branch or a sidechain)"
                )
            out.append(i)
        return out

    def info(self, i: int) -> NodeInfo:
        rec = self.source.entry(i).record
        uses: list[str] = []
        results: list[str] = []
        msg = rec.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        if isinstance(content, list):
            for b in content:
                if isinstance(b, dict):
                    if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                        uses.append(b["id"])
                    elif b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str):
                        results.append(b["tool_use_id"])
        mid = msg.get("id") if isinstance(msg, dict) and rec.get("type") == "assistant" else None
        t = rec.get("type")
        return NodeInfo(
            type=t if isinstance(t, str) else None,
            cost=self.counter.record(rec),
            message_id=mid if isinstance(mid, str) else None,
            tool_uses=tuple(uses),
            tool_results=tuple(results),
            compaction=bool(self.sk.index.flags[i] & (BOUNDARY | SUMMARY)),
            progress=bool(self.sk.kind[i] & PROGRESS),
        )

    def plan(self, key: list[int], *, repairable: bool) -> Plan:
        sk, result, conv = self.sk, self.result, self.conv
        p = plan(
            conv, self.info, nodes=len(sk), key_nodes=key, options=self.options, group=sk.msg.__getitem__
        )
        result.key = [sk.index.uuid(k) for k in p.key]
        result.kept_tokens, result.kept_tokens_unpruned = p.kept_tokens, p.kept_tokens_unpruned
        result.over_budget = p.over_budget
        if p.tail_start < len(conv):
            result.tail_first = sk.index.uuid(conv[p.tail_start])
        problems = compact_form.problems([self.source.entry(k).record for k in p.kept])
        if problems and repairable:
            raise _NeedsRepair(problems)
        for problem in problems:
            result.notes.append(
                f"kept messages: {problem} (the file is past the in-memory cap; `tt repair` fixes it)"
            )
        if p.over_budget:
            result.notes.append(
                f"the kept messages ({p.kept_tokens} tokens) are over --keep-tokens {self.options.keep_tokens}: the last "
                "response alone (or the key messages) are bigger; --prune tool-output,images,thinking can shrink them"
            )
        if p.nothing_to_do:
            result.nothing_to_do = True
            result.kept = len(p.kept)
            result.tokens_before = result.tokens_after = p.kept_tokens_unpruned
            result.notes.append(
                f"nothing to summarise: the whole conversation (~{p.kept_tokens_unpruned} tokens) fits --keep-tokens"
            )
        return p

    # --- pass 2 -------------------------------------------------------------------------

    def digest(self, p: Plan) -> tuple[Digest, Excerpt | None]:
        """The digest of everything before the verbatim tail — the summarised messages,
        the key nodes (so the summary names the first request too) and the history behind
        earlier compact boundaries (so it names what was done before them) — and the
        estimate of what is summarised."""
        sk, conv, result, position = self.sk, self.conv, self.result, self.position
        digest = Digest()
        excerpt = Excerpt(EXCERPT_CHARS) if self.summarizer.wants_excerpt else None
        want = bytearray(p.summarised)
        for q in range(p.tail_start):
            want[conv[q]] = want[conv[q]] or 2
        for k in p.key:
            if position[k] < 0:
                want[k] = 2
        sk.mark_history(conv[0], want)
        summarised_bytes = sum(sk.length[i] for i in range(len(sk)) if p.summarised[i])
        stride = max(1, min(summarised_bytes // SAMPLE_BYTES, p.summarised_count // MIN_SAMPLES))
        estimate = SampledEstimate(self.counter, stride=stride)
        last_usage: tuple[int, int] | None = None  # (conversation position, tokens)
        for i, e in self.source.scan(want, self.progress):
            rec = e.record
            digest.feed(rec, context=want[i] != 1)
            if excerpt is not None:
                excerpt.feed(rec)
            if want[i] == 1:
                estimate.feed(rec)
            u = _usage_tokens(rec)
            if u is not None and position[i] >= 0 and (last_usage is None or position[i] > last_usage[0]):
                last_usage = (position[i], u)
        for k in reversed(p.kept):
            u = _usage_tokens(self.source.entry(k).record)
            if u is not None:
                last_usage = (len(conv), u)
                break
        # The digest's own counts, so the plan and the summary's header say the same.
        result.summarised = digest.messages
        result.context = digest.context_messages
        result.last_reported_tokens = last_usage[1] if last_usage else None
        p.summarised_tokens_estimate = estimate.tokens
        result.tokens_before = estimate.tokens + p.kept_tokens_unpruned
        result.tokens_before_exact = estimate.exact
        return digest, excerpt

    # --- build and write ----------------------------------------------------------------

    def build(
        self, p: Plan, digest: Digest, summary: str, *, sid: str, new_id: Callable[[], str], now: str
    ) -> list[bytes]:
        sk, conv, result = self.sk, self.conv, self.result
        new = self.target.mode == "new"
        alone = new or self.target.drop_history  # the file holds the compaction alone
        first = sk.first_prompt
        first_kept = first is not None and first in p.key and self.position[first] < p.tail_start
        # The summary tells the model where the full transcript is: with drop_history, the
        # backup, since the file itself keeps only the compaction.
        history = self.history_at or self.path
        text = compact_form.summary_content(
            summary, transcript_path=str(history), kept=bool(p.kept), first_request_kept=first_kept
        )
        result.summary_tokens = self.counter.text(text) + 8
        kept = [self.source.entry(k).record for k in p.kept]
        where = {n: k for k, n in enumerate(p.kept)}
        last_prompt = next((t for t in map(prompt_text, reversed(kept)) if t), None) or digest.last_request
        post = result.summary_tokens + p.kept_tokens
        out = compact_form.compaction_records(
            kept,
            text,
            session_id=sid,
            new_id=new_id,
            now=now,
            envelope=self.source.entry(conv[-1]).record,
            logical_parent=None if alone else sk.index.uuid(conv[-1]),
            pre_tokens=result.tokens_before,
            post_tokens=post,
            prunes=[(where[pr.node], pr) for pr in p.prunes if pr.node in where],
            new_session=new,
            trigger=self.target.trigger,
            last_prompt=clip(last_prompt, 200) if last_prompt else None,
            metadata=_title_records(sk, digest, sid)
            if new
            else [dict(r) for r in sk.metadata.values()]
            if alone
            else [],
        )
        result.records = out.records
        result.kept = sum(1 for r in out.records[2:] if r.get("type") in ("user", "assistant"))
        result.tokens_after = post
        for kind, d in p.pruned_by_kind().items():
            result.prune[kind] = {**d, "bytes": out.pruned_bytes.get(kind, 0)}
        if out.dropped:
            result.notes.append(f"{out.dropped} kept line(s) held only thinking and were left out")
        return [dumps(r) + b"\n" for r in out.records]

    def run(
        self,
        keep: Sequence[str],
        first_request: bool,
        *,
        new_id: Callable[[], str],
        now: Callable[[], str],
        snap: tuple[int, int],
        repairable: bool,
        needs_newline: bool,
    ) -> None:
        result, target, path = self.result, self.target, self.path
        p = self.plan(self.key_nodes(keep, first_request), repairable=repairable)
        if p.nothing_to_do:
            self.without_unsent(new_id=new_id)
            return
        digest, excerpt = self.digest(p)
        if result.tokens_before <= self.options.keep_tokens and not self.even_if_larger:
            # Round-2 finding (issue 18): a small session already compacted summarised one
            # message and said "the summary is no smaller". What a resume sends fits the
            # budget: there is nothing to compact, and no summary is asked for.
            result.nothing_to_do = True
            result.kept = len(p.kept)
            result.summarised = result.context = 0
            result.tokens_after = result.tokens_before
            result.notes.append(
                f"the session fits its budget: a resume sends ~{result.tokens_before:,} tokens, within --keep-tokens "
                f"{self.options.keep_tokens:,}"
            )
            self.without_unsent(new_id=new_id)
            return
        summary = self.summarizer.summarize(
            Material(digest, excerpt.text() if excerpt is not None else "", str(path), len(p.kept))
        )
        result.summary = summary
        out_path: Path | None = None
        if target.mode == "new":
            out_path, sid = _new_target(path, target.out, new_id)
            result.new_session_id = sid
        else:
            sid = self.sk.session_id or path.stem
        chunks = self.build(p, digest, summary, sid=sid, new_id=new_id, now=now())
        result.bytes_after = sum(map(len, chunks))
        if result.tokens_after >= result.tokens_before and not self.even_if_larger:
            # Issue 18: a plan of ~38,022 -> ~38,501 tokens is no compaction; say so, write nothing.
            result.grows = True
            result.new_session_id = None
            slim = self.drop_unsent and target.mode != "in-place"
            if result.summarised == 0:
                # New-user pass: "no smaller than the 0 message(s) it would replace".
                why = (
                    "not compacted: no message is left to summarise (what it must keep, the first request and the "
                    "last response with the calls it answers, is the whole conversation)"
                )
            else:
                why = (
                    f"not compacted: the summary (~{result.summary_tokens} tokens) is no smaller than the "
                    f"{result.summarised} message(s) it would replace, so the request would grow "
                    f"(~{result.tokens_before} → ~{result.tokens_after} tokens)"
                )
            # A smaller budget summarises more only while what must be kept fits the budget.
            smaller = (
                "a smaller --keep-tokens summarises more; "
                if result.summarised and not result.over_budget
                else ""
            )
            # A dry run writes nothing whatever the plan: say what a real run would do.
            nothing = "a real run would write nothing" if target.mode == "dry-run" else "nothing was written"
            result.notes.append(
                f"{why}; "
                + (
                    "the whole conversation is copied instead"
                    if slim
                    else f"{nothing} ({smaller}--even-if-larger writes it anyway)"
                )
            )
            result.records = []
            self.without_unsent(new_id=new_id)
            return
        if target.mode == "dry-run":
            return
        if out_path is not None:
            result.bytes_after = write_new(out_path, chunks, exclusive=True)
            result.output = out_path
            return
        if result.damage_pieces:
            result.notes.append(
                "the damaged lines are left in the backup with the rest of the history"
                if target.drop_history
                else "the damaged lines stay where they are, before the new boundary (only `tt repair` rewrites them)"
            )
        if target.drop_history:
            result.backup = replace_atomically(
                path, iter(chunks), expect=snap, force=target.force, backup=True, backup_to=self.history_at
            )
            result.file_after = result.bytes_after
        else:
            result.backup = replace_atomically(
                path,
                _appended(path, snap[0], needs_newline, chunks),
                expect=snap,
                force=target.force,
                backup=target.backup,
            )
            result.file_after = snap[0] + needs_newline + result.bytes_after
        result.output = path

    def without_unsent(self, *, new_id: Callable[[], str]) -> None:
        """Nothing worth summarising: with ``drop_unsent``, write the whole conversation
        without the records a resume never sends (`compact.form.slim_records`; the same
        records a compaction leaves out: progress lines and everything off the
        conversation); without it, say how much of the file they are."""
        sk, result, target = self.sk, self.result, self.target
        nodes = [n for n in self.conv if not sk.kind[n] & PROGRESS]
        unsent = max(0, result.bytes_before - sum(sk.length[n] for n in nodes))
        if not self.drop_unsent:
            if unsent >= max(SLIM_HINT_BYTES, result.bytes_before // 4):
                result.notes.append(
                    f"{_mib(unsent)} of the file's {_mib(result.bytes_before)} are records a resume never sends (progress "
                    "lines, request logs, dead branches ...): --prune progress writes a copy without them"
                )
            return
        if target.mode == "in-place":
            result.notes.append(
                "--prune progress writes a new file: appended in place, the file would only grow"
            )
            return
        records = [self.source.entry(n).record for n in nodes]
        out_path, sid = (
            _new_target(self.path, target.out, new_id) if target.mode == "new" else (None, new_id())
        )
        first = Digest()
        for r in records:
            first.feed(r)
            if first.first_requests:
                break
        last_prompt = next((t for t in map(prompt_text, reversed(records)) if t), None)
        out = compact_form.slim_records(
            records,
            session_id=sid,
            new_id=new_id,
            last_prompt=clip(last_prompt, 200) if last_prompt else None,
            metadata=_title_records(sk, first, sid),
        )
        chunks = [dumps(r) + b"\n" for r in out.records]
        result.records = out.records
        result.slim = True
        result.nothing_to_do = result.grows = False
        result.summarised = result.summary_tokens = 0
        result.summary = ""
        result.kept = sum(1 for r in records if r.get("type") in ("user", "assistant"))
        result.tokens_after = result.tokens_before = result.tokens_before or result.kept_tokens_unpruned
        result.kept_tokens = result.kept_tokens_unpruned = result.tokens_before
        result.bytes_after = sum(map(len, chunks))
        result.notes.append(
            f"nothing summarised: the whole conversation, without the {len(sk) - len(nodes)} record(s) a resume never sends "
            f"({_mib(unsent)})"
        )
        if out_path is not None:
            result.new_session_id = sid
            result.bytes_after = write_new(out_path, chunks, exclusive=True)
            result.output = out_path


#: Say how much of the file a resume never sends from this many bytes on (and a quarter).
SLIM_HINT_BYTES = 256 * 1024


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 1024:.0f} KiB"


def _usage_tokens(rec: dict[str, Any]) -> int | None:
    if rec.get("type") != "assistant" or rec.get("isSidechain") is True:
        return None
    msg = rec.get("message")
    u = msg.get("usage") if isinstance(msg, dict) else None
    if not isinstance(u, dict) or msg.get("model") == "<synthetic>":  # type: ignore[union-attr]
        return None
    total = 0
    for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"):
        v = u.get(k)
        if isinstance(v, int) and not isinstance(v, bool):
            total += v
    return total or None


def _new_target(source: Path, out: Path | None, new_id: Callable[[], str]) -> tuple[Path, str]:
    """Where a new session goes and its id (the file name is the id, as Claude Code needs)."""
    from ..model.session import session_id_from_name

    if out is None or out.is_dir():
        sid = new_id()
        return (source.parent if out is None else out) / f"{sid}.jsonl", sid
    if out.exists():
        raise WriteFailed(f"{out}: already exists; tt never overwrites", hint="choose another -o path")
    if not out.parent.is_dir():
        raise WriteFailed(f"{out.parent}: no such directory")
    named = session_id_from_name(out.name)
    return out, named or new_id()


def _title_records(sk: Skeleton, digest: Digest, sid: str) -> list[dict[str, Any]]:
    """The session's label records for the new file, and a title that tells the copy apart."""
    out = [dict(r) for t, r in sk.metadata.items() if t not in ("custom-title",)]
    title = None
    ct = sk.metadata.get("custom-title")
    at = sk.metadata.get("ai-title")
    if ct and isinstance(ct.get("customTitle"), str):
        title = ct["customTitle"]
    elif at and isinstance(at.get("aiTitle"), str):
        title = at["aiTitle"]
    elif digest.first_requests:
        title = title_words(digest.first_requests[0], TITLE_CHARS)
    if title:
        out.append({"type": "custom-title", "customTitle": f"{title} (compacted)", "sessionId": sid})
    return out


#: Longest title made from the first request (before " (compacted)").
TITLE_CHARS = 80


def title_words(text: str, n: int) -> str:
    """``text`` on one line, at most ``n`` characters, cut between words (issue 18: a
    title ended "...in thi (compacted)"); a single word longer than ``n`` is cut."""
    line = " ".join(text.split())
    if len(line) <= n:
        return line
    head = line[: n - 1]
    cut = head.rfind(" ") if line[n - 1] != " " else n - 1
    return (head[:cut] if cut > 0 else head).rstrip(" ,;:.-") + "…"


def _appended(path: Path, size: int, needs_newline: bool, chunks: list[bytes]) -> Iterator[bytes]:
    """The file's first ``size`` bytes, then the new lines (in-place mode)."""
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below; a generator feeds replace_atomically
    except OSError as e:
        raise WriteFailed(f"{path}: cannot read it back ({e.strerror})") from e
    with f:
        left = size
        while left > 0:
            block = f.read(min(_BLOCK, left))
            if not block:
                raise WriteFailed(f"{path}: the file got shorter while tt read it; nothing was written")
            left -= len(block)
            yield block
    if needs_newline:
        yield b"\n"
    yield from chunks


def exact_after(result: Result, client: Any, model: str | None = None) -> int:
    """Claude's own count of the conversation the output resumes with (``--exact``)."""
    from ..edge.tokenizer import count_exact
    from ..model.conversation import api_messages, last_model
    from ..model.session import Session

    entries = [Entry(k + 1, 0, dumps(r), r) for k, r in enumerate(result.records)]
    session = Session.from_entries(entries)
    chain = session.conversation()
    messages, _ = api_messages(chain, sentinel=False)
    m = model or last_model(chain)
    if not m or m == "<synthetic>":
        from .summarizers import FALLBACK_MODEL

        m = FALLBACK_MODEL
    return count_exact(messages, model=m, client=client)


# --- for the command: the model counted for, the folder -o names ----------------------


def session_model(path: Path) -> str:
    """The model of the session's last real answer, from the file's last 1 MiB (tt's
    fallback model when none is there)."""
    from .summarizers import FALLBACK_MODEL

    size = file_size(path)
    with open(path, "rb") as f:
        f.seek(max(0, size - (1 << 20)))
        tail = f.read()
    for line in reversed(tail.split(b"\n")):
        if b'"assistant"' not in line:
            continue
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        msg = rec.get("message") if isinstance(rec, dict) else None
        m = msg.get("model") if isinstance(msg, dict) else None
        if isinstance(m, str) and m and not m.startswith("<"):
            return m
    return FALLBACK_MODEL


def resumes_on(path: Path, clock: Any) -> str:
    """The model a resume of ``path`` continues on at ``clock`` (Claude Code's choice,
    `lifecycle.resume_model`): the session's last model (`session_model`) unless Claude
    Code retires or remaps it. The budget counts only the thinking that model is sent,
    and a model summary is not asked of a model the API has retired."""
    from ..model import lifecycle

    model = session_model(path)
    return lifecycle.resume_model(lifecycle.CURRENT, model, None, clock).model or model


def make_output_folder(out: str) -> None:
    """``-o DIR/`` (`session_out.names_folder`): the folder to write into, made if new."""
    d = Path(out).expanduser()
    try:
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as e:
        raise WriteFailed(f"{d}: cannot create the folder ({e.strerror})") from e
