"""Which model a resume continues on, and which thinking blocks it may send: Claude Code's
dated model lifecycle, as data and rules.

Claude Code carries a table of retired models in its binary (model family → display name,
retirement date per API provider, "remapped to the latest Opus"), and a short list of
legacy Opus ids it always remaps. On ``--resume`` it restores the model the session last
used unless that model is retired *at the moment of the resume*; a thinking block is sent
only to the model that wrote it. So the same file resumes differently on different days:
the clock is an input here, never read (pure module: no I/O, no clock; the caller passes a
`Clock`, see ``clock.py`` for the system one).

The rules, each seen with the real CLIs run offline against the Messages-API stand-in
under a fixed clock (libfaketime), tests/model/test_lifecycle.py keeping the evidence:

1. Model. With no ``--model``, the session's last model (the last real assistant
   message's ``model``) is kept unless it is *unknown* to the CLI (not in the model
   catalogue its binary carries: 2.1.197 resumes a ``claude-opus-5-5`` session, written by
   2.1.332, on its own default; ``claude-3-haiku-20240307`` and made-up ids likewise; but
   2.1.197 files an id under the first family it finds inside it, so it keeps a
   ``claude-sonnet-5-5`` session as Sonnet 5: `family`),
   *remapped* (the legacy Opus 4 / 4.1 ids: both CLIs, any date, unless
   ``CLAUDE_CODE_DISABLE_LEGACY_MODEL_REMAP`` is set) or *retired* (its family has a
   first-party retirement date and that date has passed): then the CLI's default model is
   used (2.1.332: ``claude-opus-5-5``; 2.1.197: ``claude-opus-4-8``). An explicit
   ``--model`` is used as given, retired or not; only the remap applies to it.
2. When a date has passed. 2.1.332 reads "November 30, 2026" as midnight UTC, except
   within a day of that instant, where it takes local midnight of that date (``Date.parse``
   without a zone); 2.1.197 always takes local midnight. Seen: 2.1.332 under TZ=UTC
   switches at 2026-11-30T00:00:01Z, under America/Los_Angeles only after 08:00Z, under
   Asia/Tokyo already at 2026-11-29T15:30Z.
3. Thinking. A ``thinking`` / ``redacted_thinking`` block is sent only when the message
   that holds it was written by the request's model: the same id up to a date suffix,
   ``-latest`` or ``[1m]`` (``claude-opus-4-5`` keeps ``claude-opus-4-5-20251101``'s
   blocks), or by ``<synthetic>``; a message with no ``model`` loses its thinking. Both
   CLIs, any date: a session that switched from Sonnet 4.5 to Opus 4.5 sends only Opus
   4.5's thinking even before Sonnet 4.5 retired. (The API accepts a thinking block's
   signature only from the model that made it.)

Invariant: every function is total over any string (unknown models are never retired).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, timezone

SYNTHETIC_MODEL = "<synthetic>"
_DATE_SUFFIX = re.compile(r"-(\d{8}|latest)$")
_MAJOR_ONLY = re.compile(r"^claude-(opus|sonnet|haiku)-\d+$")
_MONTHS = {
    m: i
    for i, m in enumerate(
        (
            "January",
            "February",
            "March",
            "April",
            "May",
            "June",
            "July",
            "August",
            "September",
            "October",
            "November",
            "December",
        ),
        1,
    )
}


@dataclass(frozen=True, slots=True)
class Clock:
    """The moment of a resume, and where its local midnights fall (rule 2).

    ``local_midnight(d)``: the instant local midnight of ``d`` is, in the zone the client
    runs in (a value computed at the edge; tests pass a fixed zone)."""

    now: datetime
    local_midnight: Callable[[date], datetime]

    @classmethod
    def fixed(cls, now: datetime, tz: timezone = UTC) -> Clock:
        """A clock at ``now`` (aware) in a zone of fixed offset."""
        return cls(now, lambda d: datetime(d.year, d.month, d.day, tzinfo=tz))


@dataclass(frozen=True, slots=True)
class Retirement:
    name: str  # "Claude Sonnet 4.5"
    written: str  # the date as the binary writes it: "November 30, 2026"

    @property
    def day(self) -> date:
        month, day, year = self.written.replace(",", "").split()
        return date(int(year), _MONTHS[month], int(day))


@dataclass(frozen=True, slots=True)
class ModelTable:
    """One Claude Code version's lifecycle data (first-party API), read from its binary."""

    cli_version: str
    read_on: str  # when the table was read from the binary (ISO date)
    source: str
    default_model: str
    #: canonical model id (`canonical`) → its first-party retirement
    retirements: Mapping[str, Retirement]
    #: ids (as written, and canonical) remapped to the default model whatever the date
    remapped: frozenset[str]
    #: rule 2: True for 2.1.332 (UTC unless within a day), False for 2.1.197 (always local)
    utc_unless_near: bool
    #: the model catalogue (canonical ids) the binary knows; others are not restored
    known: frozenset[str] = frozenset()
    #: the families the binary's canonicaliser finds *inside* an id, in its order (2.1.197:
    #: ``e.includes("claude-sonnet-5")`` makes ``claude-sonnet-5-5`` Sonnet 5, so 2.1.197
    #: keeps a session of it); a ``-4-0`` entry is the 4 not followed by a minor. Empty:
    #: ids are compared whole (`canonical`), as 2.1.332's parser does for these ids.
    families: tuple[str, ...] = ()
    #: Claude Code's opt-out of the legacy remap.
    remap_opt_out: str = "CLAUDE_CODE_DISABLE_LEGACY_MODEL_REMAP"
    notes: tuple[str, ...] = field(default=())


def canonical(model: str) -> str:
    """A model id without what does not change the model: case, ``[1m]``-style suffixes,
    a date or ``-latest``; a bare major version gets its ``-0`` (``claude-opus-4-20250514``
    → ``claude-opus-4-0``, the key Claude Code's table uses)."""
    m = model.strip().lower()
    m = m.split("[", 1)[0].strip()
    m = _DATE_SUFFIX.sub("", m)
    if _MAJOR_ONLY.match(m):
        m += "-0"
    return m


def family(table: ModelTable, model: str) -> str:
    """The key ``table``'s CLI files ``model`` under: the first of its `ModelTable.families`
    found inside the id, else the `canonical` id."""
    m = model.strip().lower()
    for f in table.families:
        if f.endswith("-4-0"):
            # `/claude-opus-4(?!-\d(?!\d))/`: a 4 not followed by one digit of minor.
            if re.search(re.escape(f[:-2]) + r"(?!-\d(?!\d))", m):
                return f
        elif f in m:
            return f
    return canonical(model)


def known(table: ModelTable, model: str) -> bool:
    """Is ``model`` in the CLI's model catalogue? The catalogue names the 4.x models by
    their `canonical` key (``claude-opus-4-0``) and the later ones with a bare major as
    written (``claude-opus-5``): 2.1.332 keeps a ``claude-opus-5`` or ``claude-sonnet-5``
    session's model on resume, and 2.1.197 a ``claude-sonnet-5-5`` one, which it files
    under Sonnet 5 (`family`; tests/model/test_lifecycle.py, the real CLIs)."""
    c = family(table, model)
    return c in table.known or (c.endswith("-0") and c[:-2] in table.known)


def retirement(table: ModelTable, model: str) -> Retirement | None:
    """The model's retirement in ``table`` (dated, possibly in the future), if it has one."""
    return table.retirements.get(family(table, model))


def retired_since(table: ModelTable, model: str, clock: Clock) -> Retirement | None:
    """The retirement of ``model`` if it has passed at ``clock`` (rule 2), else None."""
    r = retirement(table, model)
    if r is None:
        return None
    local = clock.local_midnight(r.day)
    if table.utc_unless_near:
        utc = datetime(r.day.year, r.day.month, r.day.day, tzinfo=UTC)
        when = utc if abs(clock.now - utc) >= timedelta(days=1) else local
    else:
        when = local
    return r if when < clock.now else None


def remapped(table: ModelTable, model: str, *, opt_out: bool = False) -> bool:
    if opt_out:
        return False
    m = model.strip().lower().split("[", 1)[0]
    return m in table.remapped or canonical(model) in table.remapped


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """The model a resume continues on, and why it is not the session's own."""

    model: str | None
    session_model: str | None
    #: None (kept or chosen), "retired", "remapped", "unknown" or "none" (the session names
    #: no model: no response yet)
    reason: str | None = None
    retirement: Retirement | None = None

    @property
    def switched(self) -> bool:
        return self.reason is not None

    def explain(self, cli_version: str, thinking_dropped: int) -> str | None:
        """One line for the user when the model is not the session's own (None otherwise)."""
        if self.reason is None:
            return None
        tail = f"; its {thinking_dropped} thinking block(s) are not sent" if thinking_dropped else ""
        if self.reason == "retired" and self.retirement is not None:
            return (
                f"{self.session_model} is retired since {self.retirement.day.isoformat()}: continuing on {self.model}, "
                f"as Claude Code {cli_version} does (--model overrides){tail}"
            )
        if self.reason == "none":
            return (
                f"the session names no model (no response yet): continuing on {self.model}, "
                f"Claude Code {cli_version}'s default (--model overrides)"
            )
        if self.reason == "unknown":
            return (
                f"{self.session_model} is not a model Claude Code {cli_version} knows: continuing on {self.model}, "
                f"as it does (--model overrides){tail}"
            )
        return (
            f"{self.session_model} is a legacy model Claude Code {cli_version} remaps: continuing on {self.model} "
            f"(CLAUDE_CODE_DISABLE_LEGACY_MODEL_REMAP=1 keeps it){tail}"
        )


def resume_model(
    table: ModelTable,
    session_model: str | None,
    explicit: str | None,
    clock: Clock,
    *,
    remap_opt_out: bool = False,
) -> ModelChoice:
    """Rule 1: the model a resume sends, given the session's last model and ``--model``."""
    if explicit is not None:
        if remapped(table, explicit, opt_out=remap_opt_out):
            return ModelChoice(table.default_model, explicit, "remapped")
        return ModelChoice(explicit, session_model)
    if session_model is None:
        # No response yet: both pinned CLIs send their default model
        # (tests/model/test_lifecycle.py::test_a_session_without_a_response_resumes_on_the_default).
        return ModelChoice(table.default_model, None, "none")
    if remapped(table, session_model, opt_out=remap_opt_out):
        return ModelChoice(table.default_model, session_model, "remapped")
    if not known(table, session_model):
        return ModelChoice(table.default_model, session_model, "unknown")
    gone = retired_since(table, session_model, clock)
    if gone is not None:
        return ModelChoice(table.default_model, session_model, "retired", gone)
    return ModelChoice(session_model, session_model)


def sends_thinking(request_model: str, message_model: object) -> bool:
    """Rule 3: may a thinking block of a message written by ``message_model`` be sent?"""
    if not isinstance(message_model, str):
        return False
    if message_model in (SYNTHETIC_MODEL, request_model):
        return True
    return canonical(message_model) == canonical(request_model)


# --- the tables, as read from the pinned binaries ----------------------------------------

_LEGACY_OPUS = frozenset(
    {"claude-opus-4-20250514", "claude-opus-4-1-20250805", "claude-opus-4-0", "claude-opus-4-1"}
)


def _r(name: str, written: str) -> Retirement:
    return Retirement(name, written)


CLAUDE_CODE_2_1_332 = ModelTable(
    cli_version="2.1.332",
    read_on="2026-12-01",
    source=(
        "claude_agent_sdk 0.2.189, _bundled/claude: the retirement table keyed by model family "
        "(retirementDates.firstParty), the legacy-Opus remap list, the model catalogue ({id, family, ...}); "
        "the default model as seen on resume"
    ),
    default_model="claude-opus-5-5",
    retirements={
        "claude-opus-4-5": _r("Claude Opus 4.5", "January 22, 2027"),
        "claude-opus-4-0": _r("Claude Opus 4", "June 15, 2026"),
        "claude-sonnet-4-5": _r("Claude Sonnet 4.5", "November 30, 2026"),
        "claude-sonnet-4-0": _r("Claude Sonnet 4", "June 15, 2026"),
        "claude-3-opus": _r("Claude 3 Opus", "January 5, 2026"),
        "claude-3-7-sonnet": _r("Claude 3.7 Sonnet", "February 19, 2026"),
        "claude-3-5-sonnet": _r("Claude 3.5 Sonnet", "October 28, 2025"),
        "claude-3-5-haiku": _r("Claude 3.5 Haiku", "February 19, 2026"),
    },
    remapped=_LEGACY_OPUS,
    utc_unless_near=True,
    known=frozenset(
        {
            "claude-3-5-haiku",
            "claude-3-5-sonnet",
            "claude-3-7-sonnet",
            "claude-fable-5",
            "claude-fable-5-1",
            "claude-fable-5-2",
            "claude-haiku-4-5",
            "claude-haiku-5-5",
            "claude-mythos-5",
            "claude-mythos-5-1",
            "claude-mythos-5-2",
            "claude-opus-4-0",
            "claude-opus-4-1",
            "claude-opus-4-5",
            "claude-opus-4-6",
            "claude-opus-4-7",
            "claude-opus-4-8",
            "claude-opus-5",
            "claude-opus-5-5",
            "claude-sonnet-4-0",
            "claude-sonnet-4-5",
            "claude-sonnet-4-6",
            "claude-sonnet-5",
            "claude-sonnet-5-5",
        }
    ),
    notes=(
        "The binary also holds a second, older-style list (family, status deprecated/retired, date) "
        "used only to warn about model ids found in the project's files; resume does not read it.",
        "Claude Opus 4.1 has no first-party date: it is remapped, not retired.",
    ),
)

CLAUDE_CODE_2_1_197 = ModelTable(
    cli_version="2.1.197",
    read_on="2026-12-01",
    source="npm @anthropic-ai/claude-code@2.1.197, bin/claude.exe: the same kind of table, fewer entries",
    default_model="claude-opus-4-8",
    retirements={
        "claude-opus-4-0": _r("Claude Opus 4", "June 15, 2026"),
        "claude-sonnet-4-0": _r("Claude Sonnet 4", "June 15, 2026"),
        "claude-3-opus": _r("Claude 3 Opus", "January 5, 2026"),
        "claude-3-7-sonnet": _r("Claude 3.7 Sonnet", "February 19, 2026"),
        "claude-3-5-haiku": _r("Claude 3.5 Haiku", "February 19, 2026"),
    },
    remapped=_LEGACY_OPUS,
    utc_unless_near=False,
    # Its canonicaliser (`c_`), in order; a retired 3.x id is filed under its family too.
    families=(
        "claude-fable-5",
        "claude-mythos-5",
        "claude-opus-4-8",
        "claude-opus-4-7",
        "claude-opus-4-6",
        "claude-opus-4-5",
        "claude-opus-4-1",
        "claude-opus-4-0",
        "claude-sonnet-5",
        "claude-sonnet-4-6",
        "claude-sonnet-4-5",
        "claude-sonnet-4-0",
        "claude-haiku-4-5",
        "claude-3-7-sonnet",
        "claude-3-5-sonnet",
        "claude-3-5-haiku",
        "claude-3-opus",
        "claude-3-sonnet",
        "claude-3-haiku",
    ),
    known=frozenset(
        {
            "claude-3-5-haiku",
            "claude-3-5-sonnet",
            "claude-3-7-sonnet",
            "claude-fable-5",
            "claude-haiku-4-5",
            "claude-mythos-5",
            "claude-opus-4-0",
            "claude-opus-4-1",
            "claude-opus-4-5",
            "claude-opus-4-6",
            "claude-opus-4-7",
            "claude-opus-4-8",
            "claude-sonnet-4-0",
            "claude-sonnet-4-5",
            "claude-sonnet-4-6",
            "claude-sonnet-5",
        }
    ),
)

#: tt continues sessions as the newest pinned Claude Code does.
CURRENT = CLAUDE_CODE_2_1_332
TABLES: Mapping[str, ModelTable] = {t.cli_version: t for t in (CLAUDE_CODE_2_1_332, CLAUDE_CODE_2_1_197)}
