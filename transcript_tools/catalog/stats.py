"""Usage statistics of sessions: tokens and cost by model, turns, tools, errors, time.

Counting rules (docs/format.md §3.2.1, §8), chosen to agree with ccusage (20.x, which reads
the same files) on token totals:

- One API call is one (``message.id``, ``requestId``) pair. Claude Code writes one
  ``assistant`` line per content block, each repeating the usage; before 2.1.97 the
  earlier lines carry a streaming placeholder. The call is counted once, with the usage
  of its **last** line in file order.
- ``<synthetic>`` messages and ``isApiErrorMessage`` lines are not API calls (their
  usage is zeros written by the client) and are skipped.
- Subagents are counted from their own files (``<session>/subagents/*.jsonl``,
  ``agent-acompact-*`` included: the summarizer's call is a real cost). 2.1.x main files
  also mirror a subagent's messages in ``agent_progress`` lines; those copies count only
  for calls that no file holds (a copied transcript without its ``subagents/`` folder),
  so a call is never counted twice.
- Lines without a message id cannot be deduplicated and are counted each time.
- Cost comes from `pricing` (its table is dated: ``PRICES_READ_ON``); a model without a
  price has an unknown cost, never a guessed one.

Time (first, last, duration) is the span of the conversation's entries (user, assistant,
system, progress, attachment lines): labels written later — a ``custom-title`` from a
rename or a fork, a ``tag`` — are new activity stamped when they happen, and must not
stretch a 10-second session to the day it was renamed.

Turns are the prompts a person sent (not tool results, meta lines, compact summaries,
slash-command echoes, interrupts or task notifications); tokens per turn are those of
the main thread's calls after each prompt.

Invariants: pure (entries in, values out; no I/O, no clock); feeding the same line
twice changes nothing (deduplication is by key, tool calls by tool_use id).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from ..model.chain import CHAIN_TYPES
from ..model.lines import Entry
from ..model.pricing import PRICES_READ_ON, Tokens, cost_usd
from ..model.prompts import is_prompt

Key = tuple[str, str | None]


class Call(NamedTuple):
    """One API call's usage, as counted (a named tuple: `tt stats` makes one per API call
    of every file, and a tuple is the cheapest object to make and to send between
    processes)."""

    model: str
    tokens: Tokens
    turn: int  # the main-thread turn it belongs to (0: before the first prompt)
    subagent: bool


@dataclass(slots=True)
class Ledger:
    """API calls, each counted once: real lines win over ``agent_progress`` copies, and
    within each kind the last line of a call wins."""

    real: dict[Key, Call] = field(default_factory=dict)
    copies: dict[Key, Call] = field(default_factory=dict)
    unkeyed: list[Call] = field(default_factory=list)

    def add(self, key: Key | None, call: Call, *, copy: bool = False) -> None:
        if key is None:
            self.unkeyed.append(call)
            return
        book = self.copies if copy else self.real
        old = book.get(key)
        # The last line's usage, but the turn of the first line (when the call started).
        book[key] = call if old is None else Call(call.model, call.tokens, old.turn, call.subagent)

    def calls(self) -> list[Call]:
        out = list(self.real.values())
        out.extend(c for k, c in self.copies.items() if k not in self.real)
        out.extend(self.unkeyed)
        return out

    def merge(self, other: Ledger) -> None:
        # As `add` for each call of ``other``, in one pass of C loops where it can: a
        # ledger new to calls takes them all, else each call of ``other`` replaces a
        # shared key's with the first line's turn (a copied session shares every call:
        # the `tt ls` bench set, 2,000 copies of a few sessions, took 40 ms to total
        # 32 runs with a `Call` made per shared key, 10-20 ms so).
        for mine, theirs in ((self.real, other.real), (self.copies, other.copies)):
            if not mine:
                mine.update(theirs)
            elif not theirs.keys().isdisjoint(mine.keys()):
                get, new = mine.get, tuple.__new__
                mine.update(
                    {
                        k: c if (o := get(k)) is None else new(Call, (c[0], c[1], o[2], c[3]))
                        for k, c in theirs.items()
                    }
                )
            else:
                mine.update(theirs)
        self.unkeyed.extend(other.unkeyed)

    def __reduce__(self) -> tuple[Any, ...]:
        # Sent between processes (`catalog.files_usage.many_stats`) as flat tuples of plain values:
        # pickle's generic path for ~100k named tuples costs more than reading the files.
        return (
            _unpack,
            (
                [(k, c[0], *c[1], c[2], c[3]) for k, c in self.real.items()],
                [(k, c[0], *c[1], c[2], c[3]) for k, c in self.copies.items()],
                [(None, c[0], *c[1], c[2], c[3]) for c in self.unkeyed],
            ),
        )

    @property
    def duplicate_copies(self) -> int:
        """``agent_progress`` copies not counted because a file holds the call."""
        return sum(1 for k in self.copies if k in self.real)


def _unpack(
    real: list[tuple[Any, ...]], copies: list[tuple[Any, ...]], unkeyed: list[tuple[Any, ...]]
) -> Ledger:
    new, C, T = tuple.__new__, Call, Tokens
    return Ledger(
        {r[0]: new(C, (r[1], new(T, r[2:7]), r[7], r[8])) for r in real},
        {r[0]: new(C, (r[1], new(T, r[2:7]), r[7], r[8])) for r in copies},
        [new(C, (r[1], new(T, r[2:7]), r[7], r[8])) for r in unkeyed],
    )


@dataclass(frozen=True, slots=True)
class ModelUsage:
    model: str
    calls: int
    tokens: Tokens
    cost: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "calls": self.calls,
            "input_tokens": self.tokens.input,
            "output_tokens": self.tokens.output,
            "cache_creation_tokens": self.tokens.cache_write,
            "cache_read_tokens": self.tokens.cache_read,
            "total_tokens": self.tokens.total,
            "cost_usd": None if self.cost is None else round(self.cost, 6),
        }


@dataclass(frozen=True, slots=True)
class SkippedLine:
    path: str
    line: int
    code: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "code": self.code}


@dataclass(slots=True)
class Stats:
    """The statistics of one session (its main file and its subagent files), or of
    several (`combine`)."""

    sessions: list[str] = field(default_factory=list)
    ledger: Ledger = field(default_factory=Ledger)
    turns: int = 0
    tools: Counter[str] = field(default_factory=Counter)
    tool_errors: Counter[str] = field(default_factory=Counter)
    api_errors: int = 0  # system/api_error lines (retried requests)
    error_messages: int = 0  # isApiErrorMessage lines (what the user saw)
    compactions: int = 0
    microcompactions: int = 0
    first: str | None = None
    last: str | None = None
    active_ms: int = 0  # sum of system/turn_duration (2.1.x); 0 when not recorded
    files: int = 0
    subagent_files: int = 0
    lines: int = 0
    skipped: list[SkippedLine] = field(default_factory=list)

    # --- derived ---------------------------------------------------------------------------

    def by_model(self) -> list[ModelUsage]:
        return _usages(self._tally()[0])

    @property
    def tokens(self) -> Tokens:
        total = Tokens()
        for c in self.ledger.calls():
            total = total + c.tokens
        return total

    @property
    def cost(self) -> float:
        """USD of the models with a known price (see `unpriced`)."""
        return sum(u.cost for u in self.by_model() if u.cost is not None)

    @property
    def unpriced(self) -> list[str]:
        return [u.model for u in self.by_model() if u.cost is None]

    def subagent_tokens(self) -> Tokens:
        total = Tokens()
        for c in self.ledger.calls():
            if c.subagent:
                total = total + c.tokens
        return total

    def tokens_per_turn(self) -> list[int]:
        """Total tokens of the main thread's calls, per turn (index 0: before the first
        prompt; dropped when empty)."""
        per = self._tally()[1]
        return per if per[0] else per[1:]

    def _tally(self) -> tuple[dict[str, list[int]], list[int], int]:
        """One pass over the calls (once per session of `tt stats --all --json`: a pass
        for each figure, and the `Tokens.total` property per call, were 8% of its CPU on
        the bench set): per model [calls, the five token counts]; the main thread's total
        tokens per turn (index 0: before the first prompt); the subagents' total tokens."""
        acc: dict[str, list[int]] = {}
        per = [0] * (self.turns + 1)
        last = self.turns
        sub_total = 0
        for model, (i, o, cw, cr, h1), turn, sub in self.ledger.calls():
            a = acc.get(model)
            if a is None:
                a = acc[model] = [0, 0, 0, 0, 0, 0]
            a[0] += 1
            a[1] += i
            a[2] += o
            a[3] += cw
            a[4] += cr
            a[5] += h1
            if sub:
                sub_total += i + o + cw + cr
            elif turn <= last:
                per[turn] += i + o + cw + cr
        return acc, per, sub_total

    @property
    def duration_s(self) -> float | None:
        a, b = _parse_ts(self.first), _parse_ts(self.last)
        return None if a is None or b is None else max(0.0, (b - a).total_seconds())

    def to_dict(self) -> dict[str, Any]:
        acc, per, sub_total = self._tally()
        models = _usages(acc)
        t = Tokens()
        for u in models:
            t = t + u.tokens
        unpriced = [u.model for u in models if u.cost is None]
        cost = sum(u.cost for u in models if u.cost is not None)
        return {
            "sessions": self.sessions,
            "models": [u.to_dict() for u in models],
            "totals": {
                "calls": sum(a[0] for a in acc.values()),
                "input_tokens": t.input,
                "output_tokens": t.output,
                "cache_creation_tokens": t.cache_write,
                "cache_read_tokens": t.cache_read,
                "total_tokens": t.total,
                # With a model of unknown price the total is unknown too (null, as the
                # model's own row); what the priced models cost is given apart.
                "cost_usd": None if unpriced else round(cost, 6),
                "priced_cost_usd": round(cost, 6),
                "unpriced_models": unpriced,
            },
            "prices_read_on": PRICES_READ_ON,
            "subagents": {"files": self.subagent_files, "total_tokens": sub_total},
            "turns": self.turns,
            "tokens_per_turn": per if per[0] else per[1:],  # as `tokens_per_turn`
            "tools": {
                name: {"calls": n, "errors": self.tool_errors.get(name, 0)}
                for name, n in self.tools.most_common()
            },
            "errors": {
                "tool_errors": sum(self.tool_errors.values()),
                "api_errors": self.api_errors,
                "api_error_messages": self.error_messages,
            },
            "compactions": self.compactions,
            "microcompactions": self.microcompactions,
            "first_timestamp": self.first,
            "last_timestamp": self.last,
            "duration_s": self.duration_s,
            "active_s": self.active_ms / 1000 if self.active_ms else None,
            "files": self.files,
            "lines": self.lines,
            "progress_copies_not_counted": self.ledger.duplicate_copies,
            "skipped": [s.to_dict() for s in self.skipped],
        }


def _usages(acc: dict[str, list[int]]) -> list[ModelUsage]:
    """`Stats.by_model` from its sums per model: [calls, the five token counts]."""
    out = []
    for m, (n, *sums) in acc.items():
        t = Tokens(*sums)
        out.append(ModelUsage(m, n, t, model_cost(m, t)))
    return sorted(out, key=lambda u: -u.tokens.total)


def model_cost(model: str, tokens: Tokens) -> float | None:
    if model.endswith(" (fast)"):
        return None  # fast mode is priced apart; the table has no such prices
    return cost_usd(model, tokens)


def combine(parts: Iterable[Stats]) -> Stats:
    """Statistics of several sessions together: calls present in several files (a 1.0.x
    resume copied history into the new file) are counted once."""
    out = Stats()
    for s in parts:
        out.sessions.extend(s.sessions)
        out.ledger.merge(s.ledger)
        out.turns += s.turns
        out.tools.update(s.tools)
        out.tool_errors.update(s.tool_errors)
        out.api_errors += s.api_errors
        out.error_messages += s.error_messages
        out.compactions += s.compactions
        out.microcompactions += s.microcompactions
        out.first = _min(out.first, s.first)
        out.last = _max(out.last, s.last)
        out.active_ms += s.active_ms
        out.files += s.files
        out.subagent_files += s.subagent_files
        out.lines += s.lines
        out.skipped.extend(s.skipped)
    return out


class Collector:
    """Feed the entries of a session's files (main first, then subagents); `stats`."""

    def __init__(self, session: str, *, agent_file: bool = False) -> None:
        """``agent_file``: the main file is itself a subagent's transcript (`tt stats
        agent-….jsonl`): its sidechain records are its own thread, counted as a session's
        main thread is (they were counted as subagent calls "from progress records" that
        the file does not hold: a new user's 2.1.272 subagent file)."""
        self.out = Stats(sessions=[session])
        self._sidechain_is_side = not agent_file
        self._tool_names: dict[str, str] = {}
        self._seen_tools: set[str] = set()
        self._errors: set[str] = set()
        self._turn = 0

    def skipped(self, path: str, line: int, code: str) -> None:
        self.out.skipped.append(SkippedLine(path, line, code))

    def feed(self, entries: Iterable[Entry], *, subagent: bool = False) -> None:
        self.feed_records((e.record for e in entries), subagent=subagent)

    def feed_records(self, records: Iterable[Any], *, subagent: bool = False) -> None:
        """`feed` for bare records: dictionaries, or the decoded records of the fast path of
        `catalog.files_usage` (no `Entry` needed), counted by `decoded`."""
        self.file(subagent=subagent)
        entry, decoded = self.record, self.decoded
        n = 0
        for rec in records:
            n += 1
            if type(rec) is dict:
                entry(rec, subagent)
            else:
                decoded(rec, subagent)
        self.out.lines += n

    # A file fed by its reader record by record (`catalog.files_usage`, whose reading
    # loop calls these with no generator between: 10-15% of `tt stats`' CPU): `file`
    # first, then `record` (a dictionary) or `decoded` (a record of its fast decoder)
    # for each record, and the number of records added to ``out.lines``.

    def file(self, *, subagent: bool = False) -> None:
        """A file begins."""
        self.out.files += 1
        self.out.subagent_files += subagent

    def decoded(self, r: Any, subagent: bool) -> None:
        # `record` for a record decoded with the types of `catalog.files_usage` (a struct
        # whose fields are attributes, None when absent; each field of the one JSON type
        # `record` accepts, its objects such structs, its lists lists): the checks of types
        # `record` makes are implied, the rest is the same rule for rule. The user lines
        # that are not tool results (prompts and the like), error messages and progress
        # copies — a few per session — go through `record` itself as ``r.as_mapping()``
        # (a dictionary of every declared field, None for an absent one, which ``.get``
        # reads alike). Asserted equal on every real fixture and on edge lines by
        # tests/catalog/test_stats.py.
        s = self.out
        t = r.type
        ts = r.timestamp
        if ts and t in CHAIN_TYPES:
            if s.first is None or ts < s.first:
                s.first = ts
            if s.last is None or ts > s.last:
                s.last = ts
        side = subagent or (r.isSidechain is True and self._sidechain_is_side)
        if t == "assistant":
            msg = r.message
            if msg is None:
                return
            if r.isApiErrorMessage is True:
                s.error_messages += not side
                return
            usage = msg.usage
            model = msg.model
            if usage is not None and model != "<synthetic>":
                name = model or "unknown"
                if usage.speed == "fast":
                    name += " (fast)"
                tokens = _struct_tokens(usage)
                mid = msg.id
                if not mid:
                    s.ledger.unkeyed.append(_new(Call, (name, tokens, self._turn, side)))
                else:
                    key = (mid, r.requestId)
                    book = s.ledger.real
                    old = book.get(key)
                    book[key] = _new(Call, (name, tokens, self._turn if old is None else old.turn, side))
            content = msg.content
            if type(content) is list:
                for b in content:
                    if b.type == "tool_use":
                        i, name = b.id, b.name
                        if i is not None and name is not None and i not in self._seen_tools:
                            self._seen_tools.add(i)
                            self._tool_names[i] = name
                            s.tools[name] += 1
                            if i in self._errors:  # the result came first (out-of-order lines)
                                s.tool_errors[name] += 1
        elif t == "user":
            msg = r.message
            content = msg.content if msg is not None else None
            result = False
            if type(content) is list:
                for b in content:
                    if b.type == "tool_result":
                        result = True
                        if b.is_error is True:
                            i = b.tool_use_id
                            if i is not None and i not in self._errors:
                                self._errors.add(i)
                                name = self._tool_names.get(i)
                                if name is not None:
                                    s.tool_errors[name] += 1
            if not result:  # maybe a prompt: `_user` and `is_prompt` decide
                self._user(r.as_mapping(), side)
            elif not side and r.isCompactSummary is True and r.parentUuid is None:
                s.compactions += 1  # as in `_user`
        elif t == "system":
            self._system(r.subtype, r.durationMs, side)
        elif t == "progress":
            data = r.data
            if data is not None and data.type == "agent_progress":
                inner = data.message
                if inner is not None and inner.type == "assistant":
                    self._usage(inner.as_mapping(), True, copy=True)

    def _system(self, sub: Any, duration_ms: int | None, side: bool) -> None:
        """A system line, from either path: ``duration_ms`` an int (not a bool) or None."""
        s = self.out
        if sub == "compact_boundary" and not side:
            s.compactions += 1
        elif sub == "microcompact_boundary" and not side:
            s.microcompactions += 1
        elif sub == "api_error":
            s.api_errors += 1
        elif sub == "turn_duration" and not side and duration_ms is not None and duration_ms > 0:
            s.active_ms += duration_ms

    def record(self, rec: Mapping[str, Any], subagent: bool) -> None:
        # The hot loop of `tt stats` (once per line of every file): kept flat, the
        # timestamp span compared inline (ISO-8601 strings of one format order as text).
        s = self.out
        t = rec.get("type")
        ts = rec.get("timestamp")
        if ts and type(ts) is str and t in CHAIN_TYPES:
            if s.first is None or ts < s.first:
                s.first = ts
            if s.last is None or ts > s.last:
                s.last = ts
        side = subagent or (rec.get("isSidechain") is True and self._sidechain_is_side)
        if t == "assistant":
            self._assistant(rec, side, copy=False)
        elif t == "user":
            self._user(rec, side)
        elif t == "system":
            d = rec.get("durationMs")
            self._system(rec.get("subtype"), d if type(d) is int else None, side)
        elif t == "progress":
            data = rec.get("data")
            if isinstance(data, dict) and data.get("type") == "agent_progress":
                inner = data.get("message")
                if isinstance(inner, dict) and inner.get("type") == "assistant":
                    # A copy of a subagent's line: counted only if no file holds the call.
                    self._usage(inner, True, copy=True)

    def _assistant(self, rec: Mapping[str, Any], side: bool, *, copy: bool) -> None:
        msg = rec.get("message")
        if not isinstance(msg, dict):
            return
        if rec.get("isApiErrorMessage") is True:
            self.out.error_messages += not side
            return
        self._call(rec, msg, side, copy)
        content = msg.get("content")
        if type(content) is list:
            for b in content:
                if type(b) is dict and b.get("type") == "tool_use":
                    i, name = b.get("id"), b.get("name")
                    if isinstance(i, str) and isinstance(name, str) and i not in self._seen_tools:
                        self._seen_tools.add(i)
                        self._tool_names[i] = name
                        self.out.tools[name] += 1
                        if i in self._errors:  # the result came first (out-of-order lines)
                            self.out.tool_errors[name] += 1

    def _usage(self, rec: Mapping[str, Any], side: bool, *, copy: bool) -> None:
        msg = rec.get("message")
        if not isinstance(msg, dict) or rec.get("isApiErrorMessage") is True:
            return
        self._call(rec, msg, side, copy)

    def _call(self, rec: Mapping[str, Any], msg: dict[str, Any], side: bool, copy: bool) -> None:
        # Once per assistant line of every file: the named tuples are made with
        # tuple.__new__ (their own __new__ is a Python call) and the ledger's `add` inlined.
        model = msg.get("model")
        usage = msg.get("usage")
        if not isinstance(usage, dict) or model == "<synthetic>":
            return
        name = model if isinstance(model, str) and model else "unknown"
        if usage.get("speed") == "fast":
            name += " (fast)"
        mid = msg.get("id")
        tokens = _from_usage(usage)
        if not isinstance(mid, str) or not mid:
            self.out.ledger.unkeyed.append(_new(Call, (name, tokens, self._turn, side)))
            return
        rid = rec.get("requestId")
        key = (mid, rid if isinstance(rid, str) else None)
        ledger = self.out.ledger
        book = ledger.copies if copy else ledger.real
        old = book.get(key)
        # The last line's usage, but the turn of the first line (when the call started).
        book[key] = _new(Call, (name, tokens, self._turn if old is None else old.turn, side))

    def _user(self, rec: Mapping[str, Any], side: bool) -> None:
        msg = rec.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        result = False  # a tool result: never a prompt (`is_prompt` says so last, at more cost)
        if isinstance(content, list):
            for b in content:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    result = True
                    if b.get("is_error") is True:
                        i = b.get("tool_use_id")
                        if isinstance(i, str) and i not in self._errors:
                            self._errors.add(i)
                            name = self._tool_names.get(i)
                            if name is not None:
                                self.out.tool_errors[name] += 1
        if not side and rec.get("isCompactSummary") is True and rec.get("parentUuid") is None:
            self.out.compactions += 1  # 1.0.x: a summary root, no boundary record
        if not side and not result and is_prompt(rec if self._sidechain_is_side else _main_thread(rec)):
            self.out.turns += 1
            self._turn = self.out.turns

    def stats(self) -> Stats:
        return self.out


def _main_thread(rec: Mapping[str, Any]) -> Mapping[str, Any]:
    """A subagent file's own record read as a main thread's (`Collector` ``agent_file``): its
    prompt is a turn (`is_prompt` leaves sidechain records out)."""
    return {**rec, "isSidechain": False} if rec.get("isSidechain") is True else rec


_new = tuple.__new__
_from_usage = Tokens.from_usage


def _struct_tokens(u: Any) -> Tokens:
    # `Tokens.from_usage` for a decoded usage (`Collector.decoded`): each count an int, a
    # bool or None, and a bool is not a count (0), as there.
    i, o, cw, cr, cc = (
        u.input_tokens,
        u.output_tokens,
        u.cache_creation_input_tokens,
        u.cache_read_input_tokens,
        u.cache_creation,
    )
    if type(i) is not int:
        i = 0
    if type(o) is not int:
        o = 0
    if type(cw) is not int:
        cw = 0
    if type(cr) is not int:
        cr = 0
    h1 = 0
    if cc is not None:
        h1, m5 = cc.ephemeral_1h_input_tokens, cc.ephemeral_5m_input_tokens
        if type(h1) is not int:
            h1 = 0
        if type(m5) is not int:
            m5 = 0
        cw = max(cw, m5 + h1)  # as in `Tokens.from_usage` (2.1.152)
    return _new(Tokens, (i, o, cw, cr, h1))


def _parse_ts(ts: str | None) -> datetime | None:
    if not ts:
        return None
    try:
        return datetime.fromisoformat(ts[:-1] + "+00:00" if ts.endswith("Z") else ts)
    except ValueError:
        return None


def _min(a: str | None, b: str | None) -> str | None:
    return b if a is None else a if b is None else min(a, b)


def _max(a: str | None, b: str | None) -> str | None:
    return b if a is None else a if b is None else max(a, b)
