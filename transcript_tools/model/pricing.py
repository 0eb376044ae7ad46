"""Model prices in USD per million tokens, with the date they were read.

Used by ``tt stats`` and by the QueryEngine's budget. Two sources, each row saying which:
Anthropic's public pricing page (the Claude 3 and 4 models), and the model catalogue baked
into Claude Code 2.1.332 (its ``pricing_tiers``, issued 2026-11-24; the models it prices that
the page does not yet list, e.g. its default ``claude-opus-5-5``). Cache writes cost 1.25×
input (5-minute TTL) or 2× input (1-hour TTL) for every model in both; cache reads cost 0.1×
input except where a row gives its own rate (the catalogue's ``*_cache_read_*`` tiers). A
model not in the table has no price: costs for it are reported as unknown, never guessed —
so a key prices only its own model and that model's dated or suffixed ids, never a later
minor version (``claude-opus-5`` does not price a ``claude-opus-5-6``).

Invariants: pure data and arithmetic; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any, NamedTuple

#: When the table below was last checked against the public pricing page.
PRICES_READ_ON = "2026-12-01"


@dataclass(frozen=True, slots=True)
class Price:
    input: float
    output: float
    #: USD per million cache-read tokens when it is not 0.1× input (Claude Code 2.1.332's
    #: ``tier_*_cache_read_*`` tiers, e.g. $0.20 for claude-opus-5-5's $4 input).
    cache_read_rate: float | None = None

    @property
    def cache_write_5m(self) -> float:
        return self.input * 1.25

    @property
    def cache_write_1h(self) -> float:
        return self.input * 2.0

    @property
    def cache_read(self) -> float:
        return self.input * 0.1 if self.cache_read_rate is None else self.cache_read_rate


# Keys are model-name prefixes; the longest matching prefix wins, so dated ids
# (claude-opus-4-5-20251101) find their family; a key never matches a later minor version
# (see `price_for`).
_TABLE: dict[str, Price] = {
    # From Claude Code 2.1.332's baked-in model catalogue (``pricing_tiers`` and each model's
    # ``pricing`` tier, catalogue issued 2026-11-24; the real CLI's own cost records agree:
    # tests/model/test_pricing.py). The public page did not list these when read.
    "claude-opus-5-5": Price(4.0, 20.0, cache_read_rate=0.2),  # tier_4_20_cache_read_0_20
    "claude-opus-5": Price(5.0, 25.0),  # tier_5_25
    "claude-sonnet-5-5": Price(2.0, 10.0, cache_read_rate=0.1),  # tier_2_10_cache_read_0_10
    "claude-sonnet-5": Price(2.0, 10.0),  # tier_2_10
    "claude-fable-5-2": Price(8.0, 40.0, cache_read_rate=0.2),  # tier_8_40_cache_read_0_20
    "claude-fable-5-1": Price(10.0, 50.0, cache_read_rate=0.25),  # tier_10_50_cache_read_0_25
    "claude-fable-5": Price(10.0, 50.0),  # tier_10_50
    "claude-mythos-5-2": Price(8.0, 40.0, cache_read_rate=0.2),  # tier_8_40_cache_read_0_20
    "claude-mythos-5-1": Price(10.0, 50.0, cache_read_rate=0.25),  # tier_10_50_cache_read_0_25
    "claude-mythos-5": Price(10.0, 50.0),  # tier_10_50
    # claude-haiku-5-5 stays unpriced: its tier (haiku_55) charges 5× once a request's prompt
    # passes 100,000 tokens, and tt prices token totals, not each request.
    # Opus 4.5 and later are priced at $5/$25 (LiteLLM's table, which ccusage uses, agrees
    # for 4-7 and 4-8; so does 2.1.332's catalogue: tier_5_25).
    "claude-opus-4-8": Price(5.0, 25.0),
    "claude-opus-4-7": Price(5.0, 25.0),
    "claude-opus-4-6": Price(5.0, 25.0),
    "claude-opus-4-5": Price(5.0, 25.0),
    "claude-opus-4-1": Price(15.0, 75.0),
    "claude-opus-4-2": Price(15.0, 75.0),  # claude-opus-4-20250514
    "claude-opus-4-0": Price(15.0, 75.0),  # the alias of claude-opus-4-20250514
    "claude-opus-4": Price(15.0, 75.0),
    "claude-sonnet-4-6": Price(3.0, 15.0),
    "claude-sonnet-4-5": Price(3.0, 15.0),
    "claude-sonnet-4-0": Price(3.0, 15.0),  # the alias of claude-sonnet-4-20250514
    "claude-sonnet-4": Price(3.0, 15.0),
    "claude-3-7-sonnet": Price(3.0, 15.0),
    "claude-3-5-sonnet": Price(3.0, 15.0),
    "claude-3-sonnet": Price(3.0, 15.0),
    "claude-haiku-4-5": Price(1.0, 5.0),
    "claude-3-5-haiku": Price(0.8, 4.0),
    "claude-3-haiku": Price(0.25, 1.25),
    "claude-3-opus": Price(15.0, 75.0),
}
#: Read-only: `price_for` caches its answers (a table changed later would not be seen).
TABLE: Mapping[str, Price] = MappingProxyType(_TABLE)


def _later_version(rest: str) -> bool:
    """True when what follows a key is a minor version (``-6`` of claude-opus-5-6), not a
    date (``-20251101``) or a suffix (``[1m]``, ``@20250514``)."""
    if len(rest) < 2 or rest[0] != "-" or not rest[1].isdigit():
        return False
    n = 1
    while n < len(rest) and rest[n].isdigit():
        n += 1
    return n - 1 <= 2


@cache  # a handful of model ids, priced once per session of `tt stats --all` (TABLE is read-only)
def price_for(model: str | None) -> Price | None:
    if not model:
        return None
    best: str | None = None
    for k in TABLE:
        if (
            model.startswith(k)
            and (best is None or len(k) > len(best))
            and not _later_version(model[len(k) :])
        ):
            best = k
    return TABLE[best] if best is not None else None


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


_new = tuple.__new__


class Tokens(NamedTuple):
    """Token counts of one or more API calls. A named tuple (immutable, as before) because
    `tt stats` makes one per API call of every file it reads and sends them between
    processes: a tuple is the cheapest object for both. ``+`` adds field by field (not
    tuple concatenation)."""

    input: int = 0
    output: int = 0
    cache_write: int = 0
    cache_read: int = 0
    cache_write_1h: int = 0  # the part of cache_write with a 1-hour TTL

    @classmethod
    def from_usage(cls, usage: Mapping[str, Any] | None) -> Tokens:
        # `type(...) is dict` first: an ABC isinstance check costs more than the rest.
        if type(usage) is not dict and not isinstance(usage, Mapping):
            return cls()
        # Once per API call of every file `tt stats` reads: the common case (plain ints)
        # is tested by type, not through `_int` (a bool is not an int here: type() is bool).
        get = usage.get
        i, o, cw, cr = (
            get("input_tokens"),
            get("output_tokens"),
            get("cache_creation_input_tokens"),
            get("cache_read_input_tokens"),
        )
        if type(i) is not int:
            i = _int(i)
        if type(o) is not int:
            o = _int(o)
        if type(cw) is not int:
            cw = _int(cw)
        if type(cr) is not int:
            cr = _int(cr)
        cc = get("cache_creation")
        h1 = 0
        if cc is None:
            pass
        elif type(cc) is dict or isinstance(cc, Mapping):
            raw_h1, m5 = cc.get("ephemeral_1h_input_tokens"), cc.get("ephemeral_5m_input_tokens")
            h1 = raw_h1 if type(raw_h1) is int else _int(raw_h1)
            if type(m5) is not int:
                m5 = _int(m5)
            nested = m5 + h1
            # 2.1.152 changelog: cache writes were sometimes reported only in the nested
            # breakdown, with cache_creation_input_tokens 0.
            cw = max(cw, nested)
        return _new(cls, (i, o, cw, cr, h1))  # the named tuple's own __new__ is a Python call

    def __add__(self, o: Tokens) -> Tokens:  # type: ignore[override]
        return Tokens(
            self.input + o.input,
            self.output + o.output,
            self.cache_write + o.cache_write,
            self.cache_read + o.cache_read,
            self.cache_write_1h + o.cache_write_1h,
        )

    @property
    def total(self) -> int:
        return self.input + self.output + self.cache_write + self.cache_read


#: How ``tt stats`` and ``tt chat``'s /cost say that a cost is not known (a model without a
#: price): one word in both, never a guessed figure. (Claude Code 2.1.332 prices a model its
#: catalog lacks at the default model's rates and flags the total "costs may be inaccurate
#: due to usage of unknown models"; tt does not guess.)
UNPRICED = "unpriced"


def usd(x: float | None) -> str:
    """A cost in words, as ``tt stats`` and /cost print it: ``$1.51``, ``$0.0040``, or
    `UNPRICED`."""
    if x is None:
        return UNPRICED
    return f"${x:,.2f}" if x >= 0.01 or x == 0 else f"${x:.4f}"


def total_usd(priced: float, unpriced: bool) -> str:
    """A total over several models: what the priced ones cost, and whether some are unpriced
    (``unpriced`` alone when none has a price)."""
    if not unpriced:
        return usd(priced)
    return UNPRICED if priced == 0 else f"{usd(priced)} + {UNPRICED}"


def prices_note(unpriced: list[str]) -> str:
    """The line under a cost: the table's date and the models it has no price for."""
    return f"prices as of {PRICES_READ_ON}" + (f"; no price for {', '.join(unpriced)}" if unpriced else "")


def cost_usd(model: str | None, t: Tokens) -> float | None:
    """USD for these tokens on this model, or None when the model has no known price."""
    p = price_for(model)
    if p is None:
        return None
    w5 = t.cache_write - t.cache_write_1h
    return (
        t.input * p.input
        + t.output * p.output
        + w5 * p.cache_write_5m
        + t.cache_write_1h * p.cache_write_1h
        + t.cache_read * p.cache_read
    ) / 1_000_000
