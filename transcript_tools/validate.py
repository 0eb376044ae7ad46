"""Checking a transcript: every problem as a `Diagnostic`, in one streaming pass.

Four families (see `diagnostics.CODES`):

- *line*: what the reader found in the bytes (torn tail, fused records, NUL runs ...);
- *schema*: records that do not fit `schemas/` (unknown types are a warning: new ones
  appear every few Claude Code releases);
- *chain*: the uuid graph (duplicates, dangling parents, cycles, several roots, a
  sessionId that is not the session's, a sidechain on the main chain);
- *api*: what the Messages API would reject when the session is resumed, judged on the
  conversation a resume sends (`active.conversation_nodes`): unpaired tool calls and
  results, split messages torn apart, empty content, images over 5 MB, a request over
  32 MB.

Invariants:
- Memory is bounded whatever the file size: per line, only `ChainIndex` data and, for
  the part a resume would load (the whole file up to the 50 MiB cap, else what follows
  the last compact boundary), small `NodeFacts`.
- Diagnostics come out in file order within each family; one run reports everything.
- Pure: the caller supplies the lines (``reread`` for the second pass on big files).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .active import NodeFacts, conversation_nodes, facts_of
from .chain import ASSISTANT, BOUNDARY, CHAIN_TYPES, META, SIDECHAIN, SUMMARY, USER, ChainIndex, node_flags
from .diagnostics import Diagnostic, Severity
from .lines import DecodedLine, Entry

#: The Messages API's request size limit (32 MB), Anthropic API docs "Request size limits".
MAX_REQUEST_BYTES = 32 * 1000 * 1000

_UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")

SchemaCheck = Callable[[dict[str, Any]], list[Any]]


def session_id_from_name(name: str) -> str | None:
    """The session id a main transcript's file name implies (``<uuid>.jsonl``)."""
    stem = name[:-6] if name.endswith(".jsonl") else name
    return stem if _UUID_RE.match(stem) else None


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

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity is Severity.ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity is Severity.WARNING)

    @property
    def ok(self) -> bool:
        return self.errors == 0

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
    ) -> None:
        self.report = Report(path, size=size, session_id=expected_session, is_subagent=is_subagent)
        self.report.past_cap = size > cap
        self._cap = cap
        self._check = schema_check
        self._expected = expected_session
        self.index = ChainIndex()
        self._hashes: list[int] = []
        self.facts: dict[int, NodeFacts] = {}
        self._collect = not self.report.past_cap
        self._mismatch: dict[str, tuple[int, int]] = {}  # sessionId -> (first line, count)
        self._leaf_refs: dict[str, int] = {}  # leafUuid -> first line naming it
        self._boundary_offsets: list[int] = []
        self._boundary_lines: list[int] = []
        self._d = self.report.diagnostics
        self._line_diags: list[Diagnostic] = []
        self._schema_diags: list[Diagnostic] = []
        self._unknown_types: dict[str, tuple[int, int]] = {}

    # --- pass 1 ---------------------------------------------------------------

    def feed(self, ln: DecodedLine) -> None:
        self.feed_all((ln,))

    def feed_all(self, lines: Iterable[DecodedLine]) -> None:
        """The hot loop: once per line of files of any size, so names are bound locally."""
        r = self.report
        path = r.path
        check = self._check
        index_add = self.index.add
        hashes = self._hashes
        facts = self.facts
        collect = self._collect
        chain_types = CHAIN_TYPES
        n_lines = n_entries = 0
        for ln in lines:
            n_lines += 1
            if ln.pieces or ln.terminator != b"\n" or len(ln.entries) > 1:
                self._line_findings(ln)
            for e in ln.entries:
                n_entries += 1
                rec = e.record
                if e.lenient:
                    for code in e.lenient:
                        self._line_diags.append(
                            Diagnostic(code, _LENIENT_MSG[code], path, e.line, e.offset, _str(rec.get("uuid")))
                        )
                if check is not None:
                    problems = check(rec)
                    if problems:
                        self._schema_findings(e, problems)
                t = rec.get("type")
                sid = rec.get("sessionId")
                if sid is not None and sid != self._expected:
                    self._session_id(e.line, sid)
                uuid = rec.get("uuid")
                if t not in chain_types or type(uuid) is not str:
                    if t == "last-prompt":
                        leaf = rec.get("leafUuid")
                        if isinstance(leaf, str) and leaf not in self._leaf_refs:
                            self._leaf_refs[leaf] = e.line
                    continue
                parent = rec.get("parentUuid")
                flags = node_flags(rec)
                logical = rec.get("logicalParentUuid") if flags & BOUNDARY else None
                i = index_add(uuid, parent if type(parent) is str else None, e.line, flags, _str(logical))
                if i < 0:
                    self._duplicate(e, uuid)
                    continue
                hashes.append(hash(e.raw))
                if flags & BOUNDARY:
                    self._boundary_offsets.append(e.offset)
                    self._boundary_lines.append(e.line)
                # Only messages and boundaries matter to the API checks; progress,
                # attachment and other system lines (a third of some files) need none.
                if collect and flags & (USER | ASSISTANT | BOUNDARY):
                    facts[i] = facts_of(rec, len(e.raw))
        r.lines += n_lines
        r.entries += n_entries

    def _schema_findings(self, e: Entry, problems: list[Any]) -> None:
        rec = e.record
        for p in problems:
            if p.code == "unknown-type":
                t = str(rec.get("type"))
                first, n = self._unknown_types.get(t, (e.line, 0))
                self._unknown_types[t] = (first, n + 1)
            else:
                self._schema_diags.append(Diagnostic(p.code, p.message, self.report.path, e.line, e.offset, _str(rec.get("uuid"))))

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
        same = self._hashes[first] == hash(e.raw)
        self._d.append(
            Diagnostic(
                "duplicate-line" if same else "duplicate-uuid",
                f"uuid {uuid} was first written at line {self.index.line[first]}" + ("" if same else " with different content"),
                self.report.path, e.line, e.offset, uuid,
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
                Diagnostic("fused-records", f"{len(ln.entries)} records on one line (no newline between)", path, ln.line, ln.offset)
            )
        if ln.terminator == b"\r\n":
            self._line_diags.append(Diagnostic("crlf", "line ends with CRLF", path, ln.line, ln.offset))
        elif ln.terminator == b"" and ln.entries:
            self._line_diags.append(
                Diagnostic("no-final-newline", "the last record has no newline after it", path, ln.line, ln.offset)
            )

    # --- the end ----------------------------------------------------------------

    def need_second_pass(self) -> int | None:
        """For files past the cap: the offset a resume would load from, if that part fits."""
        if self._collect or not self._boundary_offsets:
            return None
        start = self._boundary_offsets[-1]
        return start if self.report.size - start <= self._cap else None

    def feed_facts(self, lines: Iterable[DecodedLine]) -> None:
        """Second pass over the part a resume loads (files past the cap).

        The reader numbers lines from 1 again at ``start``; ``base`` maps them back.
        """
        base = self._boundary_lines[-1] - 1 if self._boundary_lines else 0
        for ln in lines:
            for e in ln.entries:
                uuid = e.record.get("uuid")
                if isinstance(uuid, str) and e.record.get("type") in CHAIN_TYPES:
                    i = self.index.find(uuid)
                    if i is not None and self.index.line[i] == e.line + base:
                        self.facts[i] = facts_of(e.record, len(e.raw))
        self._collect = True

    def finish(self) -> Report:
        self.index.finish()
        r = self.report
        d = r.diagnostics
        path = r.path
        d[:0] = self._line_diags
        d.extend(self._schema_diags)
        for t, (first, n) in self._unknown_types.items():
            d.append(Diagnostic("unknown-type", f"entry type {t!r} is unknown to tt ({n} line(s)); kept as is", path, first))
        ix = self.index
        for i, missing in ix.dangling():
            d.append(
                Diagnostic("dangling-parent", f"parentUuid {missing} names no entry in this file", path, ix.line[i], None, ix.uuid(i))
            )
        for i, missing in ix.dangling_logical():
            d.append(
                Diagnostic(
                    "dangling-logical-parent",
                    f"compact boundary's logicalParentUuid {missing} names no entry in this file",
                    path, ix.line[i], None, ix.uuid(i),
                )
            )
        for leaf, line in self._leaf_refs.items():
            if leaf not in ix:
                d.append(Diagnostic("dangling-leaf", f"leafUuid {leaf} names no entry in this file", path, line))
        for cyc in ix.cycles():
            lines = sorted(ix.line[i] for i in cyc)
            d.append(
                Diagnostic("cycle", f"parentUuid loop through {len(cyc)} entries (lines {_few(lines)})", path, lines[0], None, ix.uuid(cyc[0]))
            )
        for sid, (first, n) in self._mismatch.items():
            d.append(
                Diagnostic("session-mismatch", f"{n} record(s) carry sessionId {sid}, not {self._expected}", path, first)
            )
        self._chain_shape(d)
        if not r.past_cap or self._collect:
            self._api_checks(d)
        else:
            r.api_checked = False
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
        main_roots = [
            i for i in ix.roots() if not ix.flags[i] & (SIDECHAIN | BOUNDARY | SUMMARY)
        ]
        if len(main_roots) > 1:
            lines = [ix.line[i] for i in main_roots]
            d.append(
                Diagnostic(
                    "multiple-roots",
                    f"{len(main_roots)} main-chain roots without a compact boundary between them (lines {_few(lines)})",
                    path, lines[1], None, ix.uuid(main_roots[1]),
                )
            )
        has_main = any(f & (USER | ASSISTANT) and not f & SIDECHAIN for f in ix.flags)
        if not has_main and not self.report.is_subagent:
            d.append(Diagnostic("no-conversation", "no user or assistant entry outside sidechains", path))
            return
        leaf = ix.active_leaf()
        if leaf is not None and not ix.flags[leaf] & SIDECHAIN:
            for i in ix.walk_up(leaf):
                if ix.flags[i] & SIDECHAIN:
                    d.append(
                        Diagnostic(
                            "sidechain-in-main",
                            "the active main chain passes through a sidechain entry",
                            path, ix.line[i], None, ix.uuid(i),
                        )
                    )
                    break

    def _api_checks(self, d: list[Diagnostic]) -> None:
        ix = self.index
        path = self.report.path
        nodes = [i for i in conversation_nodes(ix, self.facts) if ix.flags[i] & (USER | ASSISTANT)]
        for finding in api_findings(ix, self.facts, nodes):
            code, node, msg = finding
            d.append(Diagnostic(code, msg, path, ix.line[node] if node >= 0 else None, None, ix.uuid(node) if node >= 0 else None))


def api_findings(ix: ChainIndex, facts: dict[int, NodeFacts], nodes: list[int]) -> Iterator[tuple[str, int, str]]:
    """What the Messages API would reject in this conversation: (code, node, message).

    ``nodes`` are user/assistant nodes in the order a resume sends them. Consecutive
    lines of one role form one API message (Claude Code merges them). From 2.1.2xx the
    lines of one response are chained with their own tool results between them
    (call a, result a, call b, result b): that is one response, not a split one.
    """
    seen_mids: set[str] = set()
    cur_mid: str | None = None
    broken = False  # a real user message came after the current response's lines
    prev_role = 0
    open_uses: dict[str, int] = {}  # tool_use id -> node, awaiting a result
    cur_uses: set[str] = set()  # every call of the current response
    total = 0
    reported: set[str] = set()
    for i in nodes:
        f = facts.get(i, NodeFacts())
        role = ix.flags[i] & (USER | ASSISTANT)
        total += f.size
        if f.empty:
            yield "empty-content", i, "message content is empty"
        if f.big_images:
            yield "image-too-large", i, f"{f.big_images} image(s) over the API's 5 MB limit"
        if role == ASSISTANT:
            mid = f.message_id
            same = mid is not None and mid == cur_mid
            if prev_role != ASSISTANT and not (same and not broken):
                # A new response: the calls of the previous one must have been answered.
                yield from _unanswered(open_uses)
                open_uses = {}
            if not same:
                if cur_mid is not None:
                    seen_mids.add(cur_mid)
                if mid is not None and mid in seen_mids and mid not in reported:
                    reported.add(mid)
                    yield "split-message-noncontiguous", i, f"lines of message {mid} are split apart by other messages"
                cur_mid, broken, cur_uses = mid, False, set()
            elif broken and mid not in reported:
                reported.add(mid)
                yield "split-message-noncontiguous", i, f"lines of message {mid} are split apart by other messages"
            for u in f.tool_uses:
                open_uses[u] = i
                cur_uses.add(u)
        elif role == USER:
            for r in f.tool_results:
                if r in open_uses:
                    del open_uses[r]
                elif r not in cur_uses:
                    yield "tool-result-orphan", i, f"tool_result for {r} has no tool_use before it"
            if f.plain or not f.tool_results:
                broken = True
                if open_uses and prev_role == ASSISTANT and not f.tool_results:
                    yield from _unanswered(open_uses)
                    open_uses = {}
        prev_role = role
    yield from _unanswered(open_uses)
    if total > MAX_REQUEST_BYTES:
        yield "request-too-large", -1, f"the conversation is about {total / 1e6:.1f} MB, over the API's 32 MB request limit"


def _unanswered(open_uses: dict[str, int]) -> Iterator[tuple[str, int, str]]:
    for u, node in open_uses.items():
        yield "tool-use-unpaired", node, f"tool_use {u} has no tool_result after it"


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
}

# Severity sanity: META is imported for callers that filter leaves.
__all__ = ["Report", "Validator", "api_findings", "session_id_from_name", "MAX_REQUEST_BYTES", "META"]
