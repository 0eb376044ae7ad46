"""Pass 1 of repair: the small facts a plan needs, gathered in one streaming pass.

`Survey` is fed decoded lines in file order. It keeps what the validator keeps (the
`ChainIndex`, `NodeFacts` for the part a resume loads) plus what the fixes need:

- the line-level findings of every line that cannot be written back as it is (pieces,
  lenient records, CRLF, a BOM, two records on one line), as `Reason`s;
- the later occurrences of a uuid (duplicates), to drop;
- per node, a small *chain key* (sidechain or not, and which agent), so a dangling parent
  can be relinked to "the previous entry of the same chain in file order";
- with the opt-in fixes, which entries hold thinking blocks or oversized images.

Invariants:
- Memory does not grow with what the records hold, only with their number (a few
  hundred bytes a node) and with the damage found.
- Node ``i`` of the index is the ``node_k.get(i, 0)``-th entry of line ``index.line[i]``:
  entries are addressed by ``(line, k)`` everywhere in repair.
- Uses the same rules as `validate.core.Validator` (chain types, first occurrence owns a uuid,
  duplicate-line vs duplicate-uuid by the record's bytes, facts only for the part a
  resume loads past the cap), so a plan resolves what ``tt validate`` reports. Past the
  cap the survey judges that part whatever its size (`need_facts_pass`), where the
  validator judges only its request size when it is over the cap.
- Pure: no I/O.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..model.active import MAX_IMAGE_BYTES, NodeFacts, facts_of
from ..model.api_checks import FORK_CONTEXT_REF
from ..model.api_rules import LONG_TOOL_NAME, image_bytes, long_named_calls, prompt_too_long, refused_since
from ..model.boundary_meta import BoundaryMeta, lacks_metadata
from ..model.chain import ASSISTANT, BOUNDARY, CHAIN_TYPES, SIDECHAIN, USER, ChainIndex, Elsewhere, node_flags
from ..model.diagnostics import CODES
from ..model.lines import DecodedLine

Key = tuple[int, int]  # (line, index of the entry within the line)

_FACTS = USER | ASSISTANT | BOUNDARY


@dataclass(frozen=True, slots=True)
class Reason:
    """Why (part of) one input line is not written back byte for byte."""

    code: str | None  # the `diagnostics` code resolved (None: an opt-in change)
    fix: str  # the repair fix applied
    offset: int | None = None  # byte offset in the input of the bytes concerned
    length: int | None = None
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"code": self.code, "fix": self.fix}  # code None: opt-in
        if self.offset is not None:
            d["offset"] = self.offset
            d["length"] = self.length
        if self.detail:
            d["detail"] = self.detail
        return d


def reason(
    code: str, offset: int | None = None, length: int | None = None, detail: str = "", fix: str | None = None
) -> Reason:
    f = fix if fix is not None else CODES[code].fix
    assert f is not None, code
    return Reason(code, f, offset, length, detail)


@dataclass(frozen=True, slots=True)
class Duplicate:
    key: Key
    uuid: str
    first_line: int
    same_bytes: bool


@dataclass(slots=True)
class Survey:
    size: int
    cap: int
    strip_thinking: bool = False
    max_image_bytes: int | None = None
    index: ChainIndex = field(default_factory=ChainIndex)
    facts: dict[int, NodeFacts] = field(default_factory=dict)
    #: Entry index within its line, for nodes that are not their line's first entry.
    node_k: dict[int, int] = field(default_factory=dict)
    #: Uuids the index would not give back as written (not lowercase 8-4-4-4-12).
    odd_uuids: dict[int, str] = field(default_factory=dict)
    #: Byte offset of each node's line, and of the other lines a fix touches: the apply
    #: pass of a file seeks to those and copies everything between in large blocks.
    node_offset: array = field(default_factory=lambda: array("q"))  # type: ignore[type-arg]
    line_offsets: dict[int, int] = field(default_factory=dict)
    #: Per node: a small int naming its chain (main, or a sidechain of one agent).
    chain_key: array = field(default_factory=lambda: array("I"))  # type: ignore[type-arg]
    duplicates: list[Duplicate] = field(default_factory=list)
    #: Line-level findings of the lines that must be rewritten, by line number.
    dirty: dict[int, list[Reason]] = field(default_factory=dict)
    #: Entries whose content the opt-in fixes change: key -> node (or -1 when not a node).
    thinking: dict[Key, bool] = field(default_factory=dict)  # key -> only thinking blocks
    big_images: set[Key] = field(default_factory=set)
    key_node: dict[Key, int] = field(default_factory=dict)  # for the opt-in keys only
    #: Node -> ids of its tool calls whose name is past the API's limit (tool-call-to-text).
    long_calls: dict[int, list[str]] = field(default_factory=dict)
    lines: int = 0
    entries: int = 0
    last_terminator: bytes = b"\n"
    boundary_offsets: list[tuple[int, int]] = field(default_factory=list)  # (byte offset, line) of its line
    #: Compact boundaries without compactMetadata: key -> (uuid, byte offset of its line),
    #: and the metadata the file supports (`boundary_meta`).
    bare_boundaries: dict[Key, tuple[str, int]] = field(default_factory=dict)
    boundary_meta: BoundaryMeta = field(default_factory=BoundaryMeta)
    #: Claude Code's persisted "Prompt is too long" error while it is the main chain's
    #: last response: (line, uuid, what the API said) (``prompt-too-long``).
    too_long: tuple[int, str, str] | None = None
    _boundary_ts: Any = None
    #: Collect `NodeFacts` in this pass. Past the cap, only until the first compact
    #: boundary: the facts of the part a resume sends (what follows the last boundary, or
    #: the whole file when it has none) then come from `feed_facts`.
    collect: bool = True
    past_cap: bool = False
    facts_pass_done: bool = False
    #: A forked subagent's file: its first results answer the parent's calls.
    continues_context: bool = False
    _hashes: array = field(default_factory=lambda: array("q"))  # type: ignore[type-arg]
    _chains: dict[tuple[bool, str | None], int] = field(default_factory=lambda: {(False, None): 0})

    def __post_init__(self) -> None:
        self.past_cap = self.size > self.cap
        self.collect = True

    # --- pass 1 -------------------------------------------------------------------

    def feed(self, ln: DecodedLine) -> None:
        self.feed_all((ln,))

    def feed_all(self, lines: Iterable[DecodedLine]) -> None:
        """The hot loop (once per line of files of any size): names bound locally."""
        ix = self.index
        index_add = ix.add
        hashes = self._hashes
        facts = self.facts
        collect = self.collect
        chain_key = self.chain_key
        chains = self._chains
        node_k = self.node_k
        odd = self.odd_uuids
        node_offset = self.node_offset
        chain_types = CHAIN_TYPES
        opt_in = self.strip_thinking or self.max_image_bytes is not None
        meta = self.boundary_meta
        n_lines = n_entries = 0
        terminator = self.last_terminator
        for ln in lines:
            n_lines += 1
            entries = ln.entries
            terminator = ln.terminator
            if ln.pieces or len(entries) != 1 or terminator == b"\r\n" or entries[0].lenient:
                self._line_reasons(ln)
            for k, e in enumerate(entries):
                n_entries += 1
                rec = e.record
                if opt_in:
                    self._opt_in(ln.line, ln.offset, k, rec)
                uuid = rec.get("uuid")
                t = rec.get("type")
                if t not in chain_types or type(uuid) is not str:
                    if t == FORK_CONTEXT_REF:
                        self.continues_context = True  # as the validator reads it
                    continue
                parent = rec.get("parentUuid")
                flags = node_flags(rec)
                logical = rec.get("logicalParentUuid") if flags & BOUNDARY else None
                i = index_add(
                    uuid,
                    parent if type(parent) is str else None,
                    e.line,
                    flags,
                    logical if type(logical) is str else None,
                )
                if i < 0:
                    self._duplicate(ln.line, ln.offset, k, e.raw, uuid)
                    continue
                hashes.append(hash(e.raw))
                node_offset.append(ln.offset)
                if k:
                    node_k[i] = k
                if len(uuid) == 36 and (uuid[8] != "-" or uuid[23] != "-" or uuid != uuid.lower()):
                    # The index keeps uuids as 16 bytes; a relink must write this one
                    # exactly as the file has it (Claude Code compares strings).
                    odd[i] = uuid
                agent = rec.get("agentId")
                if agent is None and not flags & SIDECHAIN:
                    chain_key.append(0)  # the main chain: by far the most common
                else:
                    ck = (bool(flags & SIDECHAIN), agent if type(agent) is str else None)
                    c = chains.get(ck)
                    if c is None:
                        c = chains[ck] = len(chains)
                    chain_key.append(c)
                if opt_in and ((ln.line, k) in self.thinking or (ln.line, k) in self.big_images):
                    self.key_node[(ln.line, k)] = i
                if flags & BOUNDARY:
                    if collect and self.past_cap:
                        # Past the cap, facts are kept only for the part a resume sends: what
                        # came before a boundary is not sent, and the rest is read again from
                        # the last one (`need_facts_pass`), so memory holds one part's facts.
                        collect = self.collect = False
                        facts.clear()
                        self.long_calls.clear()
                    self.boundary_offsets.append((ln.offset, ln.line))
                    self.too_long = None  # compacted since
                    self._boundary_ts = rec.get("timestamp")
                    if lacks_metadata(rec):
                        self.bare_boundaries[(ln.line, k)] = (uuid, ln.offset)
                        meta.boundary((ln.line, k))
                elif not flags & SIDECHAIN:
                    if flags & ASSISTANT:
                        meta.response(rec)
                        if rec.get("isApiErrorMessage") is True:
                            said = prompt_too_long(rec)
                            if said is not None and refused_since(rec, self._boundary_ts):
                                self.too_long = (ln.line, uuid, said)
                        elif self.too_long is not None:
                            self.too_long = None
                    elif meta._open is not None and flags & USER:
                        meta.prompt(rec)
                # Only messages and compact boundaries have facts that matter to the
                # conversation checks (`active`, `validate.core.api_findings`); progress and
                # attachment lines (half of some files) default to empty facts.
                if collect and flags & _FACTS:
                    f = facts[i] = facts_of(rec, len(e.raw))
                    if f.bad & LONG_TOOL_NAME:
                        self.long_calls[i] = long_named_calls(rec["message"]["content"])
        self.lines += n_lines
        self.entries += n_entries
        self.last_terminator = terminator

    def _duplicate(self, line: int, offset: int, k: int, raw: bytes, uuid: str) -> None:
        self.line_offsets[line] = offset
        ix = self.index
        first = ix.find(uuid)
        assert first is not None
        self.duplicates.append(Duplicate((line, k), uuid, ix.line[first], self._hashes[first] == hash(raw)))

    def _line_reasons(self, ln: DecodedLine) -> None:
        rs: list[Reason] = []
        for p in ln.pieces:
            rs.append(reason(p.code, ln.offset + p.start, p.end - p.start))
        if len(ln.entries) > 1 and not any(p.code == "fused-records" for p in ln.pieces):
            # Two whole records with no newline between (a writer lost one "\n"): Claude
            # Code cannot parse the line at all. Split it, as for a torn+whole pair.
            rs.append(
                reason("fused-records", ln.offset, len(ln.data), f"{len(ln.entries)} records on one line")
            )
        for e in ln.entries:
            for code in e.lenient:
                # The NULs a record was read without: the detail says how many.
                nuls = f"{e.raw.count(0)} NUL bytes" if code == "nul-run-in-record" else ""
                rs.append(reason(code, e.offset, len(e.raw), nuls))
        if ln.terminator == b"\r\n":
            rs.append(reason("crlf", ln.offset + len(ln.data), 2))
        if rs:
            self.dirty[ln.line] = rs
            self.line_offsets[ln.line] = ln.offset

    def _opt_in(self, line: int, offset: int, k: int, rec: dict[str, Any]) -> None:
        msg = rec.get("message")
        if not isinstance(msg, dict):
            return
        content = msg.get("content")
        if not isinstance(content, list):
            return
        if self.strip_thinking and rec.get("type") == "assistant":
            kinds = [b.get("type") for b in content if isinstance(b, dict)]
            if any(t in THINKING for t in kinds):
                self.thinking[(line, k)] = all(t in THINKING for t in kinds)
                self.line_offsets[line] = offset
        if self.max_image_bytes is not None and any(
            image_too_big(b, self.max_image_bytes) for b in iter_images(content)
        ):
            self.big_images.add((line, k))
            self.line_offsets[line] = offset

    # --- past the cap: facts for the part a resume loads ----------------------------

    def need_facts_pass(self) -> int | None:
        """For files past the cap with a compact boundary: the offset a resume would load
        from (the last boundary); None when pass 1 kept the facts already (a file within
        the cap, or one with no boundary: all of it is sent).

        Unlike `Validator.need_second_pass`, the part need not fit the cap: the facts are a
        few hundred bytes a message whatever the message holds, so the API rules are judged
        and fixed on files of any size (the survey's memory grows with the number of
        messages sent, never with their content). Round 2 of issue 14: past the cap repair
        skipped them, and a request-too-large there still needed `tt compact`."""
        if not self.past_cap or not self.boundary_offsets:
            return None
        return self.boundary_offsets[-1][0]

    def feed_facts(self, lines: Iterable[DecodedLine]) -> None:
        """The lines from `need_facts_pass`'s offset on (numbered from 1 there, as
        ``reader.iter_lines(path, start)`` numbers them)."""
        ix = self.index
        base = self.boundary_offsets[-1][1] - 1
        for ln in lines:
            for e in ln.entries:
                uuid = e.record.get("uuid")
                if isinstance(uuid, str) and e.record.get("type") in CHAIN_TYPES:
                    i = ix.find(uuid)
                    # The first occurrence owns the uuid: a later duplicate's facts don't count.
                    if i is not None and ix.line[i] == e.line + base and ix.flags[i] & _FACTS:
                        f = self.facts[i] = facts_of(e.record, len(e.raw))
                        if f.bad & LONG_TOOL_NAME:
                            self.long_calls[i] = long_named_calls(e.record["message"]["content"])
        self.facts_pass_done = True

    def finish(self, elsewhere: Elsewhere | None = None) -> None:
        """``elsewhere``: as for `validate.core.Validator.finish` (parents another file of the
        session holds are Claude Code's links, left as written)."""
        self.index.finish(elsewhere)

    @property
    def api_checked(self) -> bool:
        """Whether the facts of the part a resume sends are in: always, once `feed_facts`
        has run where `need_facts_pass` asks for it."""
        return self.collect or self.facts_pass_done

    def key_of(self, i: int) -> Key:
        return (self.index.line[i], self.node_k.get(i, 0))


THINKING = ("thinking", "redacted_thinking")


def iter_images(content: list[Any]) -> Iterable[dict[str, Any]]:
    """Image blocks of a content list, including those inside tool results."""
    for b in content:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "image":
            yield b
        elif b.get("type") == "tool_result" and isinstance(b.get("content"), list):
            for x in b["content"]:
                if isinstance(x, dict) and x.get("type") == "image":
                    yield x


def image_too_big(block: dict[str, Any], limit: int) -> bool:
    return image_bytes(block) > limit


__all__ = ["MAX_IMAGE_BYTES", "Duplicate", "Key", "Reason", "Survey", "reason"]
