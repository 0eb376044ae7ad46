"""Checking a transcript: every problem as a `Diagnostic`, in one streaming pass.

Four families (see `diagnostics.CODES`):

- *line*: what the reader found in the bytes (torn tail, fused records, NUL runs ...),
  and raw line separators (U+2028, U+2029, U+0085) a ``str.splitlines`` reader would
  split a record at (a warning: tt reads lines by ``\n`` only, and so does Claude Code);
- *schema*: records that do not fit `schemas/` (unknown types are a warning: new ones
  appear every few Claude Code releases);
- *chain*: the uuid graph (duplicates, dangling parents, cycles, several roots, a
  sessionId that is not the session's, a sidechain on the main chain), and a compact
  boundary without its ``compactMetadata`` (`boundary_meta`);
- *api*: what the Messages API would reject when the session is resumed, judged on the
  conversation a resume sends (`active.conversation_nodes`): unpaired tool calls and
  results, split messages torn apart, empty content, images over 5 MB or past the pixel
  limits, a request over 32 MB, a tool_use id used twice, the block-level rules of
  `api_rules` (empty text blocks, unsigned or cut thinking signatures, NULs, over-long
  tool names, empty error results), and a session ending in Claude Code's persisted
  "Prompt is too long" error (judged in the streaming pass, past the cap too).

Invariants:
- Memory is bounded whatever the file size: per line, only `ChainIndex` data and, for
  the part a resume would load, small `NodeFacts` (a few hundred bytes a message, never
  its content). Within the 50 MiB cap they come from the streaming pass; past it, from a
  second pass over that part (`need_second_pass`: what follows the last compact boundary,
  or the whole file when it has none, whatever its size), so the api family is judged on
  every file with the same codes and messages (issue 14; `repair.survey` keeps the same
  facts, so repair fixes what validate names).
- Diagnostics come out in file order within each family; one run reports everything.
- Pure: the caller supplies the lines (``reread`` for the second pass on big files).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..model.active import NodeFacts, conversation_nodes, facts_of
from ..model.api_checks import FORK_CONTEXT_REF, MAX_REQUEST_BYTES, api_findings
from ..model.api_rules import prompt_too_long, refused_since
from ..model.boundary_meta import lacks_metadata
from ..model.chain import (
    ASSISTANT,
    BOUNDARY,
    CHAIN_TYPES,
    COMMAND,
    META,
    SIDECHAIN,
    SUMMARY,
    USER,
    ChainIndex,
    Elsewhere,
)
from ..model.diagnostics import Diagnostic, Severity
from ..model.lines import DecodedLine, Entry, decode_line, split_terminator
from ..model.session import session_id_from_name

_loads = orjson.loads
#: Raw line separators JSON strings may hold (JSON.stringify writes them unescaped) and
#: that Python's str.splitlines treats as line ends (issue 14 item 4). In UTF-8 they
#: cannot appear as part of another character, so a byte search finds exactly them.
_LS, _PS, _NEL = "\u2028".encode(), "\u2029".encode(), "\u0085".encode()
_UNSET = object()
#: The role bit of `chain.node_flags` by entry type.
_ROLE_FLAG = {"user": USER, "assistant": ASSISTANT}
_JSONDecodeError = orjson.JSONDecodeError
#: The entries whose `NodeFacts` the API checks read (`_record` keeps the same ones).
_FACTS = USER | ASSISTANT | BOUNDARY


SchemaCheck = Callable[[dict[str, Any]], list[Any]]


@dataclass(slots=True)
class Report:
    """The outcome of validating one file."""

    path: str
    size: int = 0
    lines: int = 0
    entries: int = 0
    session_id: str | None = None
    is_subagent: bool = False
    past_cap: bool = False
    api_checked: bool = True
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: Set when no line is a whole JSON object: what the file looks like instead
    #: (`lines.looks_like`). Such a file is not a transcript, so it has no diagnostics.
    not_transcript: str | None = None

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity is Severity.ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity is Severity.WARNING)

    @property
    def ok(self) -> bool:
        """No error, and a transcript at all (a file of other bytes has no diagnostics, but
        is not a good transcript: the CLI exits 4 on it)."""
        return self.errors == 0 and self.not_transcript is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "size": self.size,
            "lines": self.lines,
            "entries": self.entries,
            "session_id": self.session_id,
            "is_subagent": self.is_subagent,
            "past_cap": self.past_cap,
            "api_checked": self.api_checked,
            "not_transcript": self.not_transcript,
            "errors": self.errors,
            "warnings": self.warnings,
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }


class Validator:
    """Feed decoded lines in file order, then call `finish`."""

    def __init__(
        self,
        path: str,
        *,
        size: int,
        cap: int,
        schema_check: SchemaCheck | None,
        expected_session: str | None,
        is_subagent: bool = False,
        fast_schema: Mapping[Any, Any] | None = None,
        line_at: Callable[[int, int], bytes] | None = None,
    ) -> None:
        """``fast_schema``: optional entry type -> validator with ``is_valid``
        (`schema.SchemaChecker.fast_validators`); records it accepts skip ``schema_check``.
        ``line_at``: optional ``(offset, length) -> bytes`` of the input (the edge reads
        them); given it, a duplicate uuid's record is compared with the first one's bytes,
        read back, instead of by a hash kept for every record (`_duplicate`)."""
        self.report = Report(path, size=size, session_id=expected_session, is_subagent=is_subagent)
        self.report.past_cap = size > cap
        self._cap = cap
        self._check = schema_check
        self._fast = fast_schema
        self._expected = expected_session
        self.index = ChainIndex()
        #: Per node, what tells a duplicate line from a reused uuid (8 bytes a value, no int
        #: objects): with ``line_at``, the offset and length of its record's bytes (read
        #: back only for a duplicate: no per-line hashing, ~0.3 us a 1 KB line); else a
        #: hash of them.
        self._line_at = line_at
        self._hashes = array("q")
        self._lengths = array("q")
        self.facts: dict[int, NodeFacts] = {}
        self._collect = not self.report.past_cap
        self._mismatch: dict[str, tuple[int, int]] = {}  # sessionId -> (first line, count)
        self._leaf_refs: dict[str, int] = {}  # leafUuid -> first line naming it
        #: A forked subagent's file (a ``fork-context-ref`` record): its first results
        #: answer calls of the parent's context (`api_checks.api_findings`).
        self.continues_context = False
        self._boundary_offsets: list[int] = []
        self._boundary_lines: list[int] = []
        #: Claude Code's persisted "Prompt is too long" error, while it is the last
        #: response of the main chain: (line, offset, uuid, what the API said).
        self._too_long: tuple[int, int, str, str] | None = None
        self._boundary_ts: Any = None  # the timestamp of the last compact boundary
        self._bare_boundaries: list[tuple[int, int, str]] = []  # (line, offset, uuid): no compactMetadata
        self._d = self.report.diagnostics
        self._line_diags: list[Diagnostic] = []
        self._schema_diags: list[Diagnostic] = []
        self._unknown_types: dict[str, tuple[int, int]] = {}
        self._leaf: Any = _UNSET
        self._up: list[int] | None = None  # the active chain, leaf first (`_chain_shape`)
        #: Past the cap: each node's message size (8 bytes a node, as `ChainIndex` keeps), so
        #: the request a resume sends is judged even when the other API checks are not.
        self._sizes: array[int] | None = array("q") if self.report.past_cap else None

    # --- pass 1 ---------------------------------------------------------------

    def feed(self, ln: DecodedLine) -> None:
        self.feed_all((ln,))

    def feed_all(self, lines: Iterable[DecodedLine]) -> None:
        """Decoded lines (any shape: damaged ones too), in file order."""
        record = self._record
        for ln in lines:
            self.report.lines += 1
            if ln.pieces or ln.terminator != b"\n" or len(ln.entries) > 1:
                self._line_findings(ln)
            for e in ln.entries:
                if e.lenient:
                    for code in e.lenient:
                        self._line_diags.append(
                            Diagnostic(
                                code,
                                _LENIENT_MSG[code],
                                self.report.path,
                                e.line,
                                e.offset,
                                _str(e.record.get("uuid")),
                            )
                        )
                self.report.entries += 1
                record(e.record, e.line, e.offset, e.raw, len(e.raw))

    def feed_chunks(self, chunks: Iterable[bytes]) -> None:
        """The hot loop, over a file's physical lines as iterating it gives them, each with
        its terminator (`reader.lines_of`): once per line of files of any size.

        The common line — one whole LF-terminated record — is decoded here with its newline
        (the whitespace JSON allows after a value) and checked by `_record`, told the
        record's length: no `DecodedLine`/`Entry` (the largest fixed cost per line), no
        tuple, and no copy of the line without its newline are made (reading and decoding a
        50 MB file: 89 ms against 110 ms through `reader.iter_raw`'s tuples). Every other
        line goes through `lines.decode_line` and `feed_all`, as every reader of tt takes it;
        a line without terminator can only be the last, which is all ``is_last`` tells
        `decode_line`. The report is `feed_all`'s on the decoded lines of the same file
        (tests/validate/test_validate.py::test_the_hot_loop_reports_what_the_decoded_lines_report).
        """
        loads = _loads
        decode_error = _JSONDecodeError
        record = self._record
        fallback = self.feed_all
        number = offset = n = 0
        for chunk in chunks:
            number += 1
            # (One-byte slices are the interpreter's cached objects: no allocation.)
            if chunk[-1:] == b"\n" and chunk[-2:-1] != b"\r":
                try:
                    rec = loads(chunk)
                except decode_error:
                    rec = None
                if type(rec) is dict:
                    n += 1
                    record(rec, number, offset, chunk, len(chunk) - 1)
                    offset += len(chunk)
                    continue
            data, term = split_terminator(chunk)
            fallback((decode_line(number, offset, data, term, is_last=not term),))
            offset += len(chunk)
        self.report.lines += n
        self.report.entries += n

    def feed_parsed(self, parsed: Iterable[tuple[int, int, bytes, bytes, bool, Any]]) -> None:
        """`feed_chunks` over lines a caller has decoded already: ``(number, offset, data,
        terminator, is_last, rec)``, where ``rec`` is what ``orjson.loads(data)`` returned
        (None where it raised). The store's push parses each line once, for its own columns
        and for these checks; the report is the one `feed_chunks` gives on the same lines
        (``tests/store/test_push_checks.py``)."""
        record = self._record
        fallback = self.feed_all
        n = 0
        for number, offset, data, term, last, rec in parsed:
            if type(rec) is not dict or term != b"\n":
                fallback((decode_line(number, offset, data, term, is_last=last),))
                continue
            n += 1
            record(rec, number, offset, data, len(data))
        # As `feed_chunks` counts them (`_record` does not: the hot loop counts once per feed).
        self.report.lines += n
        self.report.entries += n

    def _record(self, rec: dict[str, Any], number: int, offset: int, line: bytes, size: int) -> None:
        """Every check of one record, in one place (every feed calls it; they count it).
        ``line``: the record's bytes, maybe followed by its terminator; ``size``: their
        length without it (`feed_chunks` passes the line as the file gave it)."""
        # Most lines are ASCII; of the rest, a one-byte memchr for each separator's last
        # byte rules out nearly all (a 3-byte search over every line cost 0.1 s per 50 MB).
        if not line.isascii() and (b"\xa8" in line or b"\xa9" in line or b"\x85" in line):
            if _LS in line or _PS in line or _NEL in line:
                self._separators(number, offset, line)
        t = rec.get("type")
        if self._check is not None:
            # The valid case through the compiled validator alone; anything else (or an
            # unknown type) goes to the full check, which also writes the messages.
            fast = self._fast
            try:
                ok = fast is not None and fast[t].is_valid(rec)
            except (KeyError, TypeError):
                ok = False
            if not ok:
                problems = self._check(rec)
                if problems:
                    self._schema_findings(Entry(number, offset, line[:size], rec), problems)
        sid = rec.get("sessionId")
        if sid is not None and sid != self._expected:
            self._session_id(number, sid)
        uuid = rec.get("uuid")
        # (A `type` that is not a string, even an unhashable list, is no chain entry.)
        if type(t) is not str or t not in CHAIN_TYPES or type(uuid) is not str:
            if t == "last-prompt":
                leaf = rec.get("leafUuid")
                if isinstance(leaf, str) and leaf not in self._leaf_refs:
                    self._leaf_refs[leaf] = number
            elif t == FORK_CONTEXT_REF:
                self.continues_context = True
            return
        parent = rec.get("parentUuid")
        # chain.node_flags, inline (once per entry of files of any size; the test
        # test_inline_flags_are_node_flags pins them equal).
        flags = _ROLE_FLAG.get(t, 0)
        if rec.get("isSidechain") is True:
            flags |= SIDECHAIN
        if rec.get("isMeta") is True or rec.get("teamName"):
            flags |= META
        if t == "system":
            sub = rec.get("subtype")
            if sub == "compact_boundary":
                flags |= BOUNDARY
            elif sub == "local_command":
                flags |= COMMAND
        if rec.get("isCompactSummary") is True:
            flags |= SUMMARY
        logical = rec.get("logicalParentUuid") if flags & BOUNDARY else None
        i = self.index.add(
            uuid,
            parent if type(parent) is str else None,
            number,
            flags,
            logical if type(logical) is str else None,
        )
        if i < 0:
            self._duplicate(Entry(number, offset, line[:size], rec), uuid)
            return
        if self._line_at is not None:
            self._hashes.append(offset)
            self._lengths.append(size)
        else:
            self._hashes.append(hash(line[:size]))
        if self._sizes is not None:
            # The measure of `NodeFacts.size` (a message's, not its line's, for lines
            # that carry a large toolUseResult), kept without the rest of the facts.
            self._sizes.append(facts_of(rec, size).size if flags & (USER | ASSISTANT) else 0)
        if flags & BOUNDARY:
            self._boundary_offsets.append(offset)
            self._boundary_lines.append(number)
            self._too_long = None  # compacted since
            self._boundary_ts = rec.get("timestamp")
            if lacks_metadata(rec):
                self._bare_boundaries.append((number, offset, uuid))
        elif flags & ASSISTANT and not flags & SIDECHAIN:
            if rec.get("isApiErrorMessage") is True:
                said = prompt_too_long(rec)
                if said is not None and refused_since(rec, self._boundary_ts):
                    self._too_long = (number, offset, uuid, said)
            elif self._too_long is not None:
                self._too_long = None  # a response came after it
        # Only messages and boundaries matter to the API checks; progress, attachment
        # and other system lines (a third of some files) need no facts.
        if self._collect and flags & (USER | ASSISTANT | BOUNDARY):
            self.facts[i] = facts_of(rec, size)

    def _separators(self, number: int, offset: int, data: bytes) -> None:
        names = [n for n, b in (("U+2028", _LS), ("U+2029", _PS), ("U+0085", _NEL)) if b in data]
        self._line_diags.append(
            Diagnostic(
                "line-separator",
                f"raw {'/'.join(names)} inside the record: JSON allows it and tt and Claude Code read the record whole, "
                "but a reader that splits with Python's str.splitlines cuts it there",
                self.report.path,
                number,
                offset,
            )
        )

    def _schema_findings(self, e: Entry, problems: list[Any]) -> None:
        rec = e.record
        for p in problems:
            if p.code == "unknown-type":
                t = str(rec.get("type"))
                first, n = self._unknown_types.get(t, (e.line, 0))
                self._unknown_types[t] = (first, n + 1)
            else:
                self._schema_diags.append(
                    Diagnostic(p.code, p.message, self.report.path, e.line, e.offset, _str(rec.get("uuid")))
                )

    def _session_id(self, line: int, sid: Any) -> None:
        if not isinstance(sid, str):
            return
        if self._expected is None:
            self._expected = sid
            self.report.session_id = sid
            return
        first, n = self._mismatch.get(sid, (line, 0))
        self._mismatch[sid] = (first, n + 1)

    def _duplicate(self, e: Entry, uuid: str) -> None:
        first = self.index.find(uuid)
        assert first is not None
        if self._line_at is not None:
            same = self._line_at(self._hashes[first], self._lengths[first]) == e.raw
        else:
            same = self._hashes[first] == hash(e.raw)
        self._d.append(
            Diagnostic(
                "duplicate-line" if same else "duplicate-uuid",
                f"uuid {uuid} was first written at line {self.index.line[first]}"
                + ("" if same else " with different content"),
                self.report.path,
                e.line,
                e.offset,
                uuid,
            )
        )

    def _line_findings(self, ln: DecodedLine) -> None:
        path = self.report.path
        for p in ln.pieces:
            n = p.end - p.start
            msg = _PIECE_MSG[p.code].format(n=n)
            self._line_diags.append(Diagnostic(p.code, msg, path, ln.line, ln.offset + p.start))
        if len(ln.entries) > 1 and not any(p.code == "fused-records" for p in ln.pieces):
            # Whole records with no newline between: Claude Code cannot parse the line.
            self._line_diags.append(
                Diagnostic(
                    "fused-records",
                    f"{len(ln.entries)} records on one line (no newline between)",
                    path,
                    ln.line,
                    ln.offset,
                )
            )
        if ln.terminator == b"\r\n":
            self._line_diags.append(Diagnostic("crlf", "line ends with CRLF", path, ln.line, ln.offset))
        elif ln.terminator == b"" and ln.entries:
            self._line_diags.append(
                Diagnostic(
                    "no-final-newline", "the last record has no newline after it", path, ln.line, ln.offset
                )
            )

    # --- the end ----------------------------------------------------------------

    def need_second_pass(self) -> int | None:
        """For files past the cap: the offset the part a resume sends starts at — the last
        compact boundary, or 0 when the file has none (all of it is sent) — whatever that
        part's size; None when pass 1 kept the facts already (within the cap) or the file
        holds no chain entry at all.

        Issue 14: past the cap only a part that fit the cap was judged, so a
        60 MB session never compacted (or with a big tail after its last boundary) could
        hold a tool_use without result that `tt repair` fixes (`repair.survey`, the same
        rule) but validate did not name. The facts are a few hundred bytes a message
        whatever the message holds: memory grows with the number of messages sent, never
        with their content."""
        if self._collect or not len(self.index):
            return None
        return self._boundary_offsets[-1] if self._boundary_offsets else 0

    def feed_facts(self, lines: Iterable[DecodedLine]) -> None:
        """Second pass over the part a resume sends (files past the cap), from
        `need_second_pass`'s offset: the facts pass 1 would have kept within the cap, for
        the same entries (messages and compact boundaries, the first occurrence of a uuid).

        The reader numbers lines from 1 again at ``start``; ``base`` maps them back.
        """
        ix = self.index
        facts = self.facts
        flags = ix.flags
        line_of = ix.line
        base = self._boundary_lines[-1] - 1 if self._boundary_lines else 0
        for ln in lines:
            for e in ln.entries:
                rec = e.record
                uuid = rec.get("uuid")
                t = rec.get("type")
                # A `type` that is a list or a dict is damage, not a reason to crash.
                if type(uuid) is str and type(t) is str and t in CHAIN_TYPES:
                    i = ix.find(uuid)
                    # The first occurrence owns the uuid: a later duplicate's facts don't count.
                    if i is not None and line_of[i] == e.line + base and flags[i] & _FACTS:
                        facts[i] = facts_of(rec, len(e.raw))
        self._collect = True

    def feed_facts_raw(self, raw: Iterable[tuple[int, int, bytes, bytes, bool]]) -> None:
        """`feed_facts` over ``reader.iter_raw(path, start)`` tuples, parsing only the lines
        that hold a message or a compact boundary of the index (nodes are numbered in file
        order, so one cursor over `ChainIndex.line` tells them; progress and attachment
        lines, a third of some files, are skipped unparsed), and stopping after the last.
        A line the hot loop would not take whole (`feed_chunks`) goes through `decode_line`
        and `feed_facts`, so every fact is the one pass 1 would keep within the cap."""
        ix = self.index
        line_of = ix.line
        flags = ix.flags
        facts = self.facts
        n = len(line_of)
        base = self._boundary_lines[-1] - 1 if self._boundary_lines else 0
        j = bisect_left(line_of, base + 1)
        loads = _loads
        decode_error = _JSONDecodeError
        slow = self.feed_facts
        for number, offset, data, term, last in raw:
            at = number + base
            while j < n and line_of[j] < at:
                j += 1
            if j == n:
                break  # no node after this line
            if line_of[j] != at:
                continue
            if j + 1 == n or line_of[j + 1] != at:  # one node on the line: the record
                if not flags[j] & _FACTS:
                    continue  # no message
                try:
                    rec = loads(data)
                except decode_error:
                    rec = None
                if type(rec) is dict and term == b"\n":
                    facts[j] = facts_of(rec, len(data))
                    continue
            # Several records on the line, or one the reader must mend: by uuid.
            slow((decode_line(number, offset, data, term, is_last=last),))
        self._collect = True

    def finish(self, elsewhere: Elsewhere | None = None) -> Report:
        """The report. ``elsewhere``: given the keys of the parents this file does not
        hold, which of them another file of the session holds (`siblings.found_elsewhere`);
        those links are Claude Code's, not damage (`chain` module docstring)."""
        self.index.finish(elsewhere)
        r = self.report
        d = r.diagnostics
        path = r.path
        d[:0] = self._line_diags
        d.extend(self._schema_diags)
        for t, (first, n) in self._unknown_types.items():
            d.append(
                Diagnostic(
                    "unknown-type",
                    f"entry type {t!r} is unknown to tt ({n} line(s)); kept as is",
                    path,
                    first,
                )
            )
        ix = self.index
        for i, missing in ix.dangling():
            d.append(
                Diagnostic(
                    "dangling-parent",
                    f"parentUuid {missing} names no entry in this file",
                    path,
                    ix.line[i],
                    None,
                    ix.uuid(i),
                )
            )
        for i, missing in ix.dangling_logical():
            d.append(
                Diagnostic(
                    "dangling-logical-parent",
                    f"compact boundary's logicalParentUuid {missing} names no entry in this file",
                    path,
                    ix.line[i],
                    None,
                    ix.uuid(i),
                )
            )
        for line, offset, uuid in self._bare_boundaries:
            d.append(
                Diagnostic(
                    "compact-metadata-missing",
                    "compact boundary without compactMetadata: Claude Code 2.1.197's next /compact "
                    "(and auto-compaction) fails on it (\"Cannot destructure property 'cumulativeDroppedTokens'\")",
                    path,
                    line,
                    offset,
                    uuid,
                )
            )
        for leaf, line in self._leaf_refs.items():
            if leaf not in ix:
                d.append(
                    Diagnostic("dangling-leaf", f"leafUuid {leaf} names no entry in this file", path, line)
                )
        for cyc in ix.cycles():
            lines = sorted(ix.line[i] for i in cyc)
            d.append(
                Diagnostic(
                    "cycle",
                    f"parentUuid loop through {len(cyc)} entries (lines {_few(lines)})",
                    path,
                    lines[0],
                    None,
                    ix.uuid(cyc[0]),
                )
            )
        for sid, (first, n) in self._mismatch.items():
            d.append(
                Diagnostic(
                    "session-mismatch",
                    f"{n} record(s) carry sessionId {sid}, not {self._expected}",
                    path,
                    first,
                )
            )
        self._chain_shape(d)
        # Past the cap the facts come from the second pass (`feed_facts`, which sets
        # `_collect`); without it only the request size can be judged.
        if not r.past_cap or self._collect:
            self._api_checks(d)
        else:
            r.api_checked = False
            self._request_size(d)
        if self._too_long is not None:
            line, offset, uuid, said = self._too_long
            d.append(
                Diagnostic(
                    "prompt-too-long",
                    f"Claude Code's last request was refused as past the context window ({said}): "
                    "every resume sends that history again (tt repair compacts it)",
                    path,
                    line,
                    offset,
                    uuid,
                )
            )
        if r.past_cap:
            d.append(
                Diagnostic(
                    "past-cap",
                    f"{r.size / 2**20:.1f} MiB is past the {self._cap / 2**20:.0f} MiB cap for in-memory loads; "
                    "Claude Code slows down and can run out of memory on it (tt compact shrinks it)",
                    path,
                )
            )
        return r

    def _chain_shape(self, d: list[Diagnostic]) -> None:
        ix = self.index
        path = self.report.path
        leaf = ix.active_leaf()  # once: the roots' rule and the chain's checks below
        main_roots = [i for i in ix.roots() if not ix.flags[i] & (SIDECHAIN | BOUNDARY | SUMMARY)]
        if len(main_roots) > 1:
            # Only trees a model answered in, and the one a resume continues (an unanswered
            # prompt written as a new root: the history before it is not sent): a /clear's
            # own lines are a root of their own.
            answered = set(ix.answered_roots(main_roots))
            if leaf is not None:
                answered.add(ix.root_of(leaf))
            main_roots = [r for r in main_roots if r in answered]
        if len(main_roots) > 1:
            lines = [ix.line[i] for i in main_roots]
            d.append(
                Diagnostic(
                    "multiple-roots",
                    f"{len(main_roots)} main-chain roots without a compact boundary between them (lines {_few(lines)})",
                    path,
                    lines[1],
                    None,
                    ix.uuid(main_roots[1]),
                )
            )
        has_main = any(f & (USER | ASSISTANT) and not f & SIDECHAIN for f in ix.flags)
        if not has_main and not self.report.is_subagent:
            d.append(Diagnostic("no-conversation", "no user or assistant entry outside sidechains", path))
            return
        self._leaf = leaf  # for _api_checks: the active chain ends there
        # ... and this is it, leaf first (walked once, for both)
        self._up = up = [] if leaf is None else ix.path_up(leaf)
        flags = ix.flags
        if leaf is not None and not flags[leaf] & SIDECHAIN:
            for i in up:
                if flags[i] & SIDECHAIN:
                    d.append(
                        Diagnostic(
                            "sidechain-in-main",
                            "the active main chain passes through a sidechain entry",
                            path,
                            ix.line[i],
                            None,
                            ix.uuid(i),
                        )
                    )
                    break

    def _request_size(self, d: list[Diagnostic]) -> None:
        """Past the cap, for a caller that skipped the second pass (`need_second_pass`;
        `validate.files.validate_path` never does): the request is still
        judged (issue 18: a 59 MB session validated clean), on the sizes of the active
        chain's messages — what Claude Code sends when it resumes the file, without
        the preserved segment and recovered parallel calls that only facts give, so a
        lower bound: an error here is an error of the full check too."""
        ix = self.index
        leaf = self._leaf if self._leaf is not _UNSET else ix.active_leaf()
        if leaf is None or self._sizes is None:
            return
        sizes = self._sizes
        total = sum(sizes[i] for i in ix.walk_up(leaf) if ix.flags[i] & (USER | ASSISTANT))
        if total > MAX_REQUEST_BYTES:
            d.append(
                Diagnostic(
                    "request-too-large",
                    f"the conversation is about {total / 1e6:.1f} MB, over the API's 32 MB request limit "
                    "(the file is past the cap: its other API checks need --max-bytes)",
                    self.report.path,
                )
            )

    def _api_checks(self, d: list[Diagnostic]) -> None:
        ix = self.index
        path = self.report.path
        # ChainIndex.active_chain, without computing the active leaf a second time.
        if self._up is not None:
            chain = self._up[::-1]
        else:
            leaf = ix.active_leaf()
            chain = [] if leaf is None else ix.path_up(leaf)[::-1]
        nodes = [i for i in conversation_nodes(ix, self.facts, chain) if ix.flags[i] & (USER | ASSISTANT)]
        for finding in api_findings(ix, self.facts, nodes, continues=self.continues_context):
            code, node, msg = finding
            d.append(
                Diagnostic(
                    code,
                    msg,
                    path,
                    ix.line[node] if node >= 0 else None,
                    None,
                    ix.uuid(node) if node >= 0 else None,
                )
            )


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _few(xs: list[int], k: int = 5) -> str:
    s = ", ".join(str(x) for x in xs[:k])
    return s + (f", … ({len(xs)} in all)" if len(xs) > k else "")


_PIECE_MSG = {
    "torn-tail": "the last line is an incomplete record ({n} bytes): a crash mid-write",
    "fused-records": "an incomplete record ({n} bytes) runs straight into the next record (no newline between)",
    "truncated-record": "an incomplete record ({n} bytes)",
    "nul-run": "a run of {n} NUL bytes",
    "garbage": "{n} bytes that are not JSON",
    "not-object": "JSON that is not an object ({n} bytes)",
    "bom": "a UTF-8 byte-order mark",
    "blank-line": "an empty line",
}

_LENIENT_MSG = {
    "invalid-utf8": "invalid UTF-8 bytes inside the record (read as U+FFFD)",
    "lone-surrogate": "a lone UTF-16 surrogate escape inside the record (read as U+FFFD)",
    "nul-run-in-record": "NUL bytes inside the record; without them it is whole (read without them)",
}

# Severity sanity: META is imported for callers that filter leaves.
__all__ = ["MAX_REQUEST_BYTES", "META", "Report", "Validator", "api_findings", "session_id_from_name"]
