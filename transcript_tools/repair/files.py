"""The edge of repair: a transcript file streamed through the pure core (`repair`), written safely.

`repair_file` reads the input twice (`reader.iter_lines` for the survey, then
`reader.iter_raw` for the apply pass, which decodes only the lines the plan touches) and
writes with `writer`:

- to a new file (``out``; never overwrites), or
- in place (`writer.replace_atomically`: temp file in the same folder, fsync, rename,
  mode kept, ``<file>.bak`` backup that is never overwritten), or
- nowhere (``dry_run``: the plan only).

The quarantine goes beside the output as ``<output>.quarantine.jsonl`` (``.agent-….jsonl
.quarantine.jsonl`` for a subagent transcript, `writer.by_product`; never overwritten: a
timestamped name is used when it exists), one JSON line per input line
not kept byte for byte (`apply.quarantine_record`); it is not created when nothing was
quarantined, and removed again when the output could not be written.

Invariants:
- The input is never changed except by ``in_place``, and then only through
  `writer.replace_atomically` after its backup.
- The input must not change while it is repaired (size and mtime before and after):
  otherwise `FileChanged`, unless ``force``. The apply pass reads only the lines the
  survey saw.
- Memory: the survey's (the uuid graph) plus one line at a time.
- OSError is translated into `WriteFailed` here or in `writer`.
- ``FileReport.remaining`` is what `tt validate` finds in the output: the plan's findings
  plus the schema errors repair does not fix (`_SchemaLeft`: checked in the survey's pass,
  and on each rewritten or added record as written).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..edge.reader import file_size, iter_lines
from ..edge.siblings import found_elsewhere
from ..edge.writer import QUARANTINE_SUFFIX, by_product, dumps, replace_atomically, snapshot, write_new
from ..model.diagnostics import Diagnostic, Severity
from ..model.errors import FileChanged, NotATranscript, Unreadable, WriteFailed
from ..model.lines import split_terminator
from .core import Action, Out, Plan, Quarantined, RepairOptions, Survey, apply, make_plan
from .plan import LEFT_WHY


@dataclass(slots=True)
class FileReport:
    """What repair found and did for one file."""

    path: Path
    mode: str  # "dry-run" | "output" | "in-place"
    size: int = 0
    lines: int = 0
    entries: int = 0
    output: Path | None = None
    quarantine: Path | None = None
    backup: Path | None = None
    changed: bool = False  # the output differs from the input
    written: bool = False
    lines_out: int = 0
    bytes_out: int = 0
    lines_quarantined: int = 0
    bytes_quarantined: int = 0
    records_added: int = 0
    #: the ``compact-history`` fix: None when not planned, else whether its compaction was
    #: written (it is not when it would not shrink the request: `remaining` says why)
    compacted: bool | None = None
    api_checked: bool = True
    actions: list[Action] = field(default_factory=list)
    remaining: list[Diagnostic] = field(default_factory=list)

    @property
    def remaining_errors(self) -> int:
        return sum(1 for d in self.remaining if d.severity is Severity.ERROR)

    @property
    def left_by_code(self) -> dict[str, int]:
        """The errors left, by code (most first)."""
        counts: dict[str, int] = {}
        for d in self.remaining:
            if d.severity is Severity.ERROR:
                counts[d.code] = counts.get(d.code, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: -kv[1]))

    def to_dict(self) -> dict[str, Any]:
        counts: dict[str, int] = {}
        for a in self.actions:
            counts[a.fix] = counts.get(a.fix, 0) + 1
        return {
            "path": str(self.path),
            "mode": self.mode,
            "size": self.size,
            "lines": self.lines,
            "entries": self.entries,
            "changed": self.changed,
            "written": self.written,
            "output": None if self.output is None else str(self.output),
            "quarantine": None if self.quarantine is None else str(self.quarantine),
            "backup": None if self.backup is None else str(self.backup),
            "lines_out": self.lines_out,
            "bytes_out": self.bytes_out,
            "lines_quarantined": self.lines_quarantined,
            "bytes_quarantined": self.bytes_quarantined,
            "records_added": self.records_added,
            "compacted": self.compacted,
            "api_checked": self.api_checked,
            "fixes": counts,
            "actions": [a.to_dict() for a in self.actions],
            "remaining": [d.to_dict() for d in self.remaining],
            "remaining_errors": self.remaining_errors,
            "left_by_code": self.left_by_code,
            "left_why": {c: LEFT_WHY[c] for c in self.left_by_code if c in LEFT_WHY},
        }


def survey_file(path: Path, options: RepairOptions, schema: _SchemaLeft | None = None) -> Survey:
    """The survey of ``path``; ``schema``, when given, also checks every record against
    tt's schemas on the way (the same pass: no second read)."""
    s = Survey(
        size=file_size(path),
        cap=options.cap,
        strip_thinking=options.strip_thinking,
        max_image_bytes=options.max_image_bytes,
    )
    s.feed_all(iter_lines(path) if schema is None else schema.lines(iter_lines(path)))
    start = s.need_facts_pass()
    if start is not None:
        s.feed_facts(iter_lines(path, start))
    s.finish(lambda keys: found_elsewhere(path, keys))
    return s


def quarantine_path(output: Path) -> Path:
    """`writer.by_product` ``.quarantine.jsonl`` of the output (a leading dot for a
    subagent transcript, so no listing takes it for one), or with a UTC timestamp when
    that exists."""
    q = by_product(output, QUARANTINE_SUFFIX)
    if not q.exists():
        return q
    return by_product(output, QUARANTINE_SUFFIX, datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f"))


def repair_file(
    path: Path,
    options: RepairOptions = RepairOptions(),
    *,
    out: Path | None = None,
    in_place: bool = False,
    dry_run: bool = False,
    force: bool = False,
    backup: bool = True,
    now: str,
    new_id: Callable[[], str],
) -> FileReport:
    """Repair one transcript file (exactly one of ``out``, ``in_place``, ``dry_run``)."""
    assert sum((out is not None, in_place, dry_run)) == 1
    mode = "dry-run" if dry_run else "in-place" if in_place else "output"
    before = snapshot(path) if path.exists() else None
    schema = _SchemaLeft(path)
    s = survey_file(path, options, schema)
    if s.entries == 0:
        # Not a transcript (an empty file, random bytes): most likely the wrong file, so
        # say so rather than write an empty output and quarantine it all.
        what = "empty file" if s.size == 0 else f"no JSON record in {s.lines} line(s)"
        raise NotATranscript(
            f"{path}: {what}; this is not a transcript", hint="name a session's .jsonl file or its id"
        )
    plan = make_plan(s, options, new_id=new_id)
    r = FileReport(path, mode, size=s.size, lines=s.lines, entries=s.entries, changed=not plan.identity)
    r.actions, r.api_checked = plan.actions, plan.api_checked
    r.remaining = [replace(d, path=str(path)) for d in plan.remaining]
    # What repair leaves that validate reports: the schema errors of the records it writes
    # (those of untouched lines as the survey found them, the rewritten and added ones
    # checked as written). Once left out, so "0 left" was followed by validate's errors.
    untouched = schema.untouched(plan)
    if dry_run or (in_place and plan.identity):
        schema.rewritten(_applied(path, s, plan, now))
        r.remaining.extend(schema.left(untouched))
    if dry_run and plan.compact:
        # Whether the compaction would be written: tt compact's own dry run (on the input,
        # before the other fixes; they do not change what a resume's tokens add up to).
        _, r.compacted = _compact(path, r, now=now, new_id=new_id, backup=False, force=force, dry_run=True)
        r.changed = r.changed or r.compacted
    if dry_run or (in_place and plan.identity and not plan.compact):
        return r
    target = path if in_place else out
    assert target is not None
    if in_place and plan.identity:
        # Nothing to rewrite: the compaction alone, which keeps the original as the .bak.
        # When it is not written, neither is anything else: the report says unchanged.
        r.backup, r.compacted = _compact(path, r, now=now, new_id=new_id, backup=backup, force=force)
        r.changed = r.written = r.compacted
        r.output = path if r.compacted else None
        return r
    sink = _Quarantine(quarantine_path(target))
    chunks = _chunks(path, s, plan, now, sink, r, schema)
    done = False
    try:
        if in_place:
            r.backup = replace_atomically(path, chunks, expect=before, backup=backup, force=force)
        else:
            write_new(target, chunks, exclusive=True)
            if before is not None and not force and snapshot(path) != before:
                _unlink(target)
                raise FileChanged(
                    f"{path}: the file changed while tt repaired it (is Claude Code still writing?); "
                    f"{target} was not kept",
                    hint="close the session and try again, or pass --force",
                )
        done = True
    finally:
        if not done:
            # The quarantine describes a repair that did not happen.
            sink.discard()
    r.output, r.written = target, True
    r.quarantine = sink.path if sink.count else None
    r.remaining.extend(schema.left(untouched))
    if plan.compact:
        # The original is the .bak already (in place) or untouched (-o).
        _, r.compacted = _compact(target, r, now=now, new_id=new_id, backup=False, force=True)
        r.changed = r.changed or r.compacted
    return r


def _compact(
    path: Path,
    r: FileReport,
    *,
    now: str,
    new_id: Callable[[], str],
    backup: bool,
    force: bool,
    dry_run: bool = False,
) -> tuple[Path | None, bool]:
    """``prompt-too-long`` and ``request-too-large``: append an offline compaction
    (``tt compact --in-place`` with the extractive summariser and its default budget,
    40k tokens kept verbatim) to the written file. Nothing is removed: the history stays
    before the boundary, as after Claude Code's own /compact. Returns the backup it made,
    if any, and whether the compaction was written (not when it would not shrink the
    request, or the conversation already fits the budget: the error is left, with why).

    The budget is in tokens, and an image or a document counts as a few thousand of them
    whatever its bytes: for ``request-too-large`` the appended records (the summary and
    the kept tail, of which the request is a part) are measured against the API's 32 MB,
    and when they are over it (big images in the kept tail) the error is left, with the
    way out."""
    from ..compact.files import Target, compact_file
    from ..compact.summarizers import Extractive
    from ..model.api_checks import MAX_REQUEST_BYTES

    code = next((a.code for a in r.actions if a.fix == "compact-history"), None)
    result = compact_file(
        path,
        Extractive(),
        Target("dry-run") if dry_run else Target("in-place", force=force, backup=backup),
        now=lambda: now,
        new_id=new_id,
    )
    if (result.grows or result.nothing_to_do) and code == "request-too-large":
        r.remaining.append(
            Diagnostic(
                code,
                "an offline compaction would not shrink the request: the messages it keeps verbatim (the last "
                "response, big images or tool results) are over 32 MB alone; `tt compact --in-place --prune "
                "images,tool-output` replaces big images and tool results with placeholders",
                str(r.path),
            )
        )
    elif result.grows or result.nothing_to_do:
        r.remaining.append(
            Diagnostic(
                "prompt-too-long",
                (
                    f"not compacted: what a resume sends (~{result.tokens_before:,} tokens by tt's estimate) already "
                    f"fits the offline compaction's budget of {result.budget:,} tokens kept verbatim"
                    if result.nothing_to_do
                    else "not compacted: an offline compaction would not shrink the request"
                )
                + "; run `tt compact --in-place` with a smaller --keep-tokens",
                str(r.path),
            )
        )
    elif code == "request-too-large" and result.bytes_after > MAX_REQUEST_BYTES:
        r.remaining.append(
            Diagnostic(
                code,
                f"after an offline compaction the kept messages are still about {result.bytes_after / 1e6:.1f} MB, "
                "over the API's 32 MB request limit (big images or tool results kept verbatim); run "
                "`tt compact --in-place --prune images,tool-output`",
                str(r.path),
            )
        )
    return result.backup, not (result.grows or result.nothing_to_do)


def _chunks(
    path: Path,
    s: Survey,
    plan: Plan,
    now: str,
    sink: _Quarantine,
    r: FileReport,
    schema: _SchemaLeft | None = None,
) -> Iterator[bytes]:
    # Seek to each line the plan touches; copy the stretches between in large blocks.
    # Only the bytes the survey saw: an appender's later lines are not half-applied.
    pos = 0
    try:
        with open(path, "rb") as f:
            for line, offset, end, raw in _touched(f, s, plan):
                yield from _stretch(f, pos, offset, r)
                pos = end
                for item in apply(raw, plan, now=now, out_lines_before=r.lines_out):
                    if isinstance(item, Out):
                        if schema is not None:
                            schema.written(item, line)
                        r.lines_out += 1
                        r.bytes_out += len(item.data)
                        if item.source is None:
                            r.records_added += 1
                        yield item.data
                    else:
                        assert isinstance(item, Quarantined)
                        sink.write(item.record)
                        r.lines_quarantined += 1
                        r.bytes_quarantined += item.size
            yield from _stretch(f, pos, s.size, r)
    except OSError as e:
        raise Unreadable(f"{path}: cannot read ({e.strerror})") from e
    # On disk before the output is: an in-place rename must never precede its quarantine.
    sink.close()


def _applied(path: Path, s: Survey, plan: Plan, now: str) -> Iterator[tuple[Out, int]]:
    """The output lines the plan makes of the lines it touches (and the records it adds),
    each with the input line it comes from or follows, without writing anything: for a
    dry run's account of what the output would hold."""
    try:
        with open(path, "rb") as f:
            for line, _, _, raw in _touched(f, s, plan):
                for item in apply(raw, plan, now=now):
                    if isinstance(item, Out):
                        yield item, line
    except OSError as e:
        raise Unreadable(f"{path}: cannot read ({e.strerror})") from e


class _SchemaLeft:
    """The schema errors of what repair writes, which it does not fix: repair mends lines,
    links and the API's rules, not a record's fields (a null ``isMeta``, a ``tool_use``
    without ``id``), so what the schema rejects before is rejected after, unless repair
    dropped or rewrote that record. `tt validate` reports them as ``schema-invalid``."""

    def __init__(self, path: Path) -> None:
        from ..validate.files_schema import default_checker

        self._check = default_checker().check
        self._path = str(path)
        self._by_line: dict[int, list[Diagnostic]] = {}  # input line -> its records' errors
        self._out: list[Diagnostic] = []

    def _problems(self, rec: Any, line: int, offset: int | None) -> list[Diagnostic]:
        uuid = rec.get("uuid") if isinstance(rec, dict) else None
        return [
            Diagnostic(
                p.code,
                p.message,
                self._path,
                line,
                offset,
                uuid if isinstance(uuid, str) else None,
            )
            for p in self._check(rec)
            if p.severity == "error"
        ]

    def lines(self, lines: Iterator[Any]) -> Iterator[Any]:
        """The survey's decoded lines, passed through, their records checked."""
        for ln in lines:
            for e in ln.entries:
                found = self._problems(e.record, e.line, e.offset)
                if found:
                    self._by_line.setdefault(e.line, []).extend(found)
            yield ln

    def untouched(self, plan: Plan) -> list[Diagnostic]:
        """The errors of the lines the output keeps byte for byte (the plan's apply pass
        does not read them)."""
        return [d for line, ds in self._by_line.items() if line not in plan.offsets for d in ds]

    def written(self, item: Out, line: int) -> None:
        """An output line of the apply pass (``line``: the input line it comes from or
        follows): as the survey saw it when verbatim, else checked as written."""
        if (item.verbatim or item.entry is None) and item.source is not None:
            # The input line's bytes, or only its line end changed (no record decoded).
            self._out.extend(self._by_line.get(item.source, ()))
            return
        if item.entry is not None:
            self._out.extend(self._problems(item.entry.record, item.source or line, None))

    def rewritten(self, items: Iterator[tuple[Out, int]]) -> None:
        for item, line in items:
            self.written(item, line)

    def left(self, untouched: list[Diagnostic]) -> list[Diagnostic]:
        return sorted(untouched + self._out, key=lambda d: d.line or 0)


def _touched(f: Any, s: Survey, plan: Plan) -> Iterator[tuple[int, int, int, list[Any]]]:
    """Each line the plan touches, in file order: ``(line, offset, end, raw)``, ``raw``
    being what `apply` takes (only the bytes the survey saw: an appender's later lines are
    not half-applied). It seeks for each; a reader of the stretches between seeks too."""
    for line, offset in sorted(plan.offsets.items(), key=lambda x: x[1]):
        f.seek(offset)
        chunk = f.readline(s.size - offset)
        end = offset + len(chunk)
        data, term = split_terminator(chunk)
        yield line, offset, end, [(line, offset, data, term, end >= s.size)]


def _stretch(f: Any, start: int, end: int, r: FileReport) -> Iterator[bytes]:
    """Input bytes [start, end) as they are (whole untouched lines), in large blocks."""
    if end <= start:
        return
    f.seek(start)
    left = end - start
    while left > 0:
        block = f.read(min(left, 1 << 20))
        if not block:
            break
        left -= len(block)
        r.bytes_out += len(block)
        r.lines_out += block.count(b"\n")
        yield block
    if end == r.size and not block.endswith(b"\n"):
        r.lines_out += 1  # the final line, without a newline


class _Quarantine:
    """The quarantine file, created (exclusively) at the first record."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0
        self._f: Any = None

    def write(self, record: dict[str, Any]) -> None:
        try:
            if self._f is None:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                self._f = os.fdopen(fd, "wb", buffering=1 << 20)
            self._f.write(dumps(record) + b"\n")
        except FileExistsError as e:
            raise WriteFailed(f"{self.path}: already exists; tt never overwrites a quarantine file") from e
        except OSError as e:
            raise WriteFailed(
                f"{self.path}: cannot write the quarantine ({e.strerror}); nothing was changed"
            ) from e
        self.count += 1

    def close(self) -> None:
        """Flush and fsync: on disk before the output is."""
        if self._f is None:
            return
        f, self._f = self._f, None
        try:
            f.flush()
            os.fsync(f.fileno())
        except OSError as e:
            raise WriteFailed(f"{self.path}: cannot write the quarantine ({e.strerror})") from e
        finally:
            f.close()

    def discard(self) -> None:
        if self._f is not None:
            f, self._f = self._f, None
            try:
                f.close()
            except OSError:
                pass  # it is being removed anyway
        if self.count:
            _unlink(self.path)


def _unlink(p: Path) -> None:
    try:
        p.unlink()
    except FileNotFoundError:
        pass
