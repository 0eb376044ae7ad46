"""`lifecycle`: the model a resume continues on and the thinking it may send, at any clock.

Three layers of evidence:
- pure tests with the instants and zones at which the real CLIs were seen to switch (the
  module docstring's rules; the expected values are what the CLIs did, written here by hand);
- the tables in tt equal the tables in the pinned binaries (read from the binaries here);
- the real CLIs, run at pinned clocks (libfaketime), pick the model and send the thinking
  tt says they do (marked ``claude``).
Every test pins its clock: the verdict is the same on any day.
"""

from __future__ import annotations

import mmap
import re
import tempfile
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from tests.resume_helpers import SESSION, Builder, text, thinking, tool_use
from transcript_tools.model import conversation, lifecycle
from transcript_tools.model.lifecycle import CLAUDE_CODE_2_1_197 as T197
from transcript_tools.model.lifecycle import CLAUDE_CODE_2_1_332 as T332
from transcript_tools.model.lifecycle import Clock, canonical, family, resume_model, sends_thinking
from transcript_tools.model.session import Session

S45 = "claude-sonnet-4-5-20250929"
O45 = "claude-opus-4-5-20251101"
S4 = "claude-sonnet-4-20250514"
O4 = "claude-opus-4-20250514"
O41 = "claude-opus-4-1-20250805"
UTC = UTC
LA_WINTER = timezone(timedelta(hours=-8), "PST")
TOKYO = timezone(timedelta(hours=9), "JST")


def at(text_: str, tz: timezone = UTC) -> Clock:
    return Clock.fixed(datetime.fromisoformat(text_.replace("Z", "+00:00")), tz)


# --- rule 1 and 2: the model, at the instants the CLIs were seen to switch ---------------


@pytest.mark.parametrize(
    ("when", "tz", "expected"),
    [
        # 2.1.332 under TZ=UTC: kept the day before and ten seconds before midnight, switched just after.
        ("2026-11-29T12:00:00Z", UTC, S45),
        ("2026-11-29T23:59:50Z", UTC, S45),
        ("2026-11-30T00:00:01Z", UTC, "claude-opus-5-5"),
        ("2026-11-30T07:59:00Z", UTC, "claude-opus-5-5"),
        # under America/Los_Angeles (PST), near the date: local midnight, 08:00Z.
        ("2026-11-30T07:59:00Z", LA_WINTER, S45),
        ("2026-11-30T08:00:30Z", LA_WINTER, "claude-opus-5-5"),
        # under Asia/Tokyo: local midnight is 2026-11-29T15:00Z.
        ("2026-11-29T15:30:00Z", TOKYO, "claude-opus-5-5"),
        ("2026-12-01T12:00:00Z", UTC, "claude-opus-5-5"),
    ],
)
def test_sonnet_4_5_retires_on_2026_11_30_as_2_1_332_sees_it(when: str, tz: timezone, expected: str) -> None:
    assert resume_model(T332, S45, None, at(when, tz)).model == expected


def test_far_from_the_date_the_zone_does_not_matter() -> None:
    # More than a day away, 2.1.332 reads the date as UTC midnight whatever the zone.
    for tz in (UTC, LA_WINTER, TOKYO):
        assert resume_model(T332, S45, None, at("2026-11-28T12:00:00Z", tz)).model == S45
        assert resume_model(T332, S45, None, at("2026-12-02T12:00:00Z", tz)).model == "claude-opus-5-5"


def test_2_1_197_reads_dates_as_local_midnight_and_does_not_retire_sonnet_4_5() -> None:
    assert resume_model(T197, S45, None, at("2027-06-01T00:00:00Z")).model == S45
    # Sonnet 4 retires June 15, 2026: seen kept on 2026-06-14T23:59Z (UTC) and gone after.
    assert resume_model(T197, S4, None, at("2026-06-14T23:59:00Z")).model == S4
    assert resume_model(T197, S4, None, at("2026-06-16T12:00:00Z")).model == "claude-opus-4-8"
    # Local midnight in Tokyo is 15:00Z the day before.
    assert resume_model(T197, S4, None, at("2026-06-14T15:30:00Z", TOKYO)).model == "claude-opus-4-8"
    # Claude 3.5 Sonnet is not in 2.1.197's table: kept at any date.
    assert (
        resume_model(T197, "claude-3-5-sonnet-20241022", None, at("2026-12-01T12:00:00Z")).model
        == "claude-3-5-sonnet-20241022"
    )


def test_the_legacy_opus_ids_are_remapped_at_any_date_even_when_asked_for() -> None:
    for when in ("2025-01-01T00:00:00Z", "2026-08-01T12:00:00Z", "2030-01-01T00:00:00Z"):
        for model in (O4, O41, "claude-opus-4-0", "claude-opus-4-1"):
            choice = resume_model(T332, model, None, at(when))
            assert (choice.model, choice.reason) == ("claude-opus-5-5", "remapped")
    given = resume_model(T332, S45, "claude-opus-4-0", at("2026-06-01T12:00:00Z"))
    assert (given.model, given.reason) == ("claude-opus-5-5", "remapped")
    assert resume_model(T197, O41, None, at("2026-08-01T12:00:00Z")).model == "claude-opus-4-8"
    # Claude Code's opt-out keeps the model until its retirement (Opus 4: June 15, 2026).
    assert resume_model(T332, O4, None, at("2026-06-01T12:00:00Z"), remap_opt_out=True).model == O4
    assert resume_model(T332, O4, None, at("2026-06-16T12:00:00Z"), remap_opt_out=True).reason == "retired"


def test_an_explicit_model_is_used_even_when_retired() -> None:
    for given in (S45, "claude-sonnet-4-5"):
        choice = resume_model(T332, S45, given, at("2026-12-01T12:00:00Z"))
        assert (choice.model, choice.reason) == (given, None)


def test_opus_4_5_retires_on_2027_01_22_in_2_1_332() -> None:
    assert resume_model(T332, O45, None, at("2027-01-21T12:00:00Z")).model == O45
    assert resume_model(T332, O45, None, at("2027-01-23T12:00:00Z")).model == "claude-opus-5-5"


@pytest.mark.parametrize("table", [T332, T197], ids=lambda t: t.cli_version)
def test_every_dated_entry_switches_between_the_day_before_and_the_day_after(
    table: lifecycle.ModelTable,
) -> None:
    for key, r in table.retirements.items():
        before = datetime(r.day.year, r.day.month, r.day.day, tzinfo=UTC) - timedelta(days=1, hours=1)
        after = datetime(r.day.year, r.day.month, r.day.day, tzinfo=UTC) + timedelta(days=1, hours=1)
        if key in table.remapped or key not in table.known:
            continue  # switched at any date (rule 1)
        assert resume_model(table, key, None, Clock.fixed(before)).model == key
        late = resume_model(table, key, None, Clock.fixed(after))
        assert (late.model, late.reason, late.retirement) == (table.default_model, "retired", r)


def test_a_session_without_a_model_and_unknown_models() -> None:
    # No response yet: the CLI's default (what both send: the probes below).
    for table in (T332, T197):
        choice = resume_model(table, None, None, at("2026-12-01T00:00:00Z"))
        assert (choice.model, choice.reason) == (table.default_model, "none")
    assert T332.default_model == "claude-opus-5-5" and T197.default_model == "claude-opus-4-8"
    # Seen on both CLIs: a model not in the binary's catalogue is not restored.
    for unknown in ("claude-sonnet-9-9", "claude-opus-4-9", "claude-3-haiku-20240307", "gpt-4o", ""):
        choice = resume_model(T332, unknown, None, at("2026-12-01T12:00:00Z"))
        assert (choice.model, choice.reason) == ("claude-opus-5-5", "unknown")
    # 2.1.197 does not know the models 2.1.332 writes.
    assert resume_model(T197, "claude-opus-5-5", None, at("2026-12-01T12:00:00Z")).model == "claude-opus-4-8"
    assert resume_model(T197, "claude-fable-5", None, at("2026-12-01T12:00:00Z")).model == "claude-fable-5"
    # ... but files an id under the first family it finds inside it: a claude-sonnet-5-5
    # session (a real 2.1.296 one's model) is Sonnet 5 to it, and kept (the probe below).
    assert (
        resume_model(T197, "claude-sonnet-5-5", None, at("2026-12-01T12:00:00Z")).model == "claude-sonnet-5-5"
    )
    assert family(T197, "claude-sonnet-5-5") == "claude-sonnet-5" and family(T332, "claude-sonnet-5-5") == (
        "claude-sonnet-5-5"
    )
    assert family(T197, "claude-opus-4-20250514") == "claude-opus-4-0"
    assert family(T197, "claude-opus-4-9") == "claude-opus-4-9"  # a 4 with a minor it lacks


def test_a_catalogue_id_with_a_bare_major_version_is_known() -> None:
    # Found by a new user: a claude-opus-5 session was said to be unknown to 2.1.332, which
    # keeps it (the probes of the real CLI below).
    for m in ("claude-opus-5", "claude-sonnet-5", "claude-fable-5", "claude-opus-5-20261001"):
        choice = resume_model(T332, m, None, at("2026-12-01T12:00:00Z"))
        assert (choice.model, choice.reason) == (m, None)
    assert resume_model(T332, "claude-opus-6", None, at("2026-12-01T12:00:00Z")).reason == "unknown"


def test_canonical_ids() -> None:
    assert canonical("claude-sonnet-4-5-20250929") == "claude-sonnet-4-5"
    assert canonical("claude-sonnet-4-5-20250929[1m]") == "claude-sonnet-4-5"
    assert canonical("claude-opus-4-20250514") == "claude-opus-4-0"
    assert canonical("claude-3-5-sonnet-latest") == "claude-3-5-sonnet"
    assert canonical("CLAUDE-OPUS-4-6") == "claude-opus-4-6"


def test_the_retirement_day_is_the_written_date() -> None:
    assert T332.retirements["claude-sonnet-4-5"].day == date(2026, 11, 30)
    assert T332.retirements["claude-opus-4-5"].day == date(2027, 1, 22)


def test_the_line_a_resume_prints() -> None:
    choice = resume_model(T332, S45, None, at("2026-12-01T12:00:00Z"))
    assert choice.explain("2.1.332", 19) == (
        "claude-sonnet-4-5-20250929 is retired since 2026-11-30: continuing on claude-opus-5-5, "
        "as Claude Code 2.1.332 does (--model overrides); its 19 thinking block(s) are not sent"
    )
    assert resume_model(T332, S45, None, at("2026-11-29T12:00:00Z")).explain("2.1.332", 0) is None


# --- rule 3: thinking ------------------------------------------------------------------


def test_thinking_goes_only_to_the_model_that_wrote_it() -> None:
    assert sends_thinking(O45, O45)
    assert sends_thinking("claude-opus-4-5", O45)  # seen: --model claude-opus-4-5 keeps them
    assert sends_thinking("claude-sonnet-4-5", S45)
    assert not sends_thinking("claude-opus-4-6", O45)  # seen: --model claude-opus-4-6 drops them
    assert not sends_thinking(O45, S45)
    assert sends_thinking(O45, "<synthetic>")
    assert not sends_thinking(O45, None)  # seen: a message without "model" loses its thinking


def _mixed() -> Builder:
    b = Builder()
    b.user("p0")
    b.assistant(thinking("by sonnet"), text("a0"), model=S45)
    b.user("p1")
    b.assistant(thinking("lonely"), model=S45)
    b.assistant(text("a1"), model=S45)
    b.user("p2")
    b.assistant(thinking("by opus"), tool_use("toolu_1"), model=O45)
    b.result("toolu_1", "res")
    b.assistant(text("a2"), model=O45)
    return b


def _thinking(messages: list[dict[str, Any]]) -> list[str]:
    return [
        b.get("thinking", "")
        for m in messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "thinking"
    ]


def test_for_model_keeps_only_that_models_thinking_and_the_shape() -> None:
    conv = conversation.build(Session.from_entries(_mixed().entries()))
    assert _thinking(conv.messages) == ["by sonnet", "by opus"]
    opus = conv.for_model(O45)
    assert _thinking(opus.messages) == ["by opus"]
    assert opus.thinking_not_sent == 1 and opus.model == O45
    # Same messages otherwise: the thinking-only message is dropped in both.
    assert [m["role"] for m in opus.messages] == [m["role"] for m in conv.messages]
    other = conv.for_model("claude-opus-5-5")
    assert _thinking(other.messages) == [] and other.thinking_not_sent == 2
    # Nothing to leave out: the same conversation, only the model changes.
    assert conv.for_model(O45).messages is not conv.messages
    assert conversation.build(Session.from_entries(_no_thinking().entries())).for_model("m").model == "m"


def _no_thinking() -> Builder:
    b = Builder()
    b.user("p0")
    b.assistant(text("a0"))
    return b


# --- the tables against the binaries ---------------------------------------------------

_ENTRY = re.compile(
    rb'"(claude-[a-z0-9-]+)":\{modelName:"([^"]+)",retirementDates:\{firstParty:(null|"[^"]+")[^}]*\}(?:,remappedTo:"[^"]+")?\}'
)
_REMAP = re.compile(rb'\["claude-opus-4-20250514","claude-opus-4-1-20250805"[^\]]*\]')
_CATALOGUE = re.compile(rb'\{id:"(claude-[a-z0-9.-]+)",family:"')


def read_table(binary: Path) -> tuple[dict[str, str | None], set[str], set[str]]:
    """The first-party retirement dates, the legacy-Opus list and the model catalogue,
    read from a CLI binary."""
    with binary.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        at_ = mm.find(b"retirementDates:{firstParty:")
        assert at_ >= 0, f"{binary}: no retirement table found"
        window = mm[max(0, at_ - 200) : at_ + 6000]
        dates = {
            m.group(1).decode(): (None if m.group(3) == b"null" else m.group(3).strip(b'"').decode())
            for m in _ENTRY.finditer(window)
        }
        remap = _REMAP.search(mm)
        assert remap is not None, f"{binary}: no legacy-Opus remap list found"
        ids = set(re.findall(rb'"([^"]+)"', remap.group(0)))
        known = {m.group(1).decode() for m in _CATALOGUE.finditer(mm)}
    return dates, {i.decode() for i in ids}, known


@pytest.mark.claude
@pytest.mark.parametrize("version", ["2.1.332", "2.1.197"])
def test_tt_tables_are_the_tables_in_the_pinned_binaries(
    version: str, claude_332: Any, claude_197: Any
) -> None:
    cli = claude_332 if version == "2.1.332" else claude_197
    table = lifecycle.TABLES[version]
    dates, remap, known = read_table(cli.path)
    assert {k: v for k, v in dates.items() if v is not None} == {
        k: r.written for k, r in table.retirements.items()
    }
    assert remap == set(table.remapped)
    assert known == set(table.known)


# --- the real CLIs at pinned clocks ----------------------------------------------------

#: (session models in order, --model, clock, zone) → what the CLI was seen to do, checked again
#: here against the CLI and against tt.
PROBES_332: list[tuple[tuple[str, ...], str | None, str, str]] = [
    ((S45, S45), None, "2026-11-29T12:00:00Z", "UTC"),
    ((S45, S45), None, "2026-11-30T00:00:30Z", "UTC"),
    ((S45, S45), None, "2026-11-30T07:59:00Z", "America/Los_Angeles"),
    ((S45, S45), None, "2026-11-30T08:00:30Z", "America/Los_Angeles"),
    ((S45, O45), None, "2026-11-29T12:00:00Z", "UTC"),
    ((O45, S45), None, "2026-12-01T12:00:00Z", "UTC"),
    ((S45, S45), S45, "2026-12-01T12:00:00Z", "UTC"),
    ((O45, O45), "claude-opus-4-6", "2026-11-29T12:00:00Z", "UTC"),
    ((O45, O45), "claude-opus-4-5", "2026-11-29T12:00:00Z", "UTC"),
    ((O45,), None, "2027-01-23T12:00:00Z", "UTC"),
    ((O41,), None, "2026-08-01T12:00:00Z", "UTC"),
    ((S4, S4), None, "2026-06-14T23:59:00Z", "UTC"),
    (("claude-3-haiku-20240307",), None, "2026-12-01T12:00:00Z", "UTC"),
]
PROBES_332 += [(("claude-opus-4-9",), None, "2026-12-01T12:00:00Z", "UTC")]
# Catalogue ids with no minor version (a bare major: not the `-0` of the 4.x table keys).
PROBES_332 += [
    ((m,), None, "2026-12-01T12:00:00Z", "UTC")
    for m in ("claude-opus-5", "claude-sonnet-5", "claude-fable-5")
]
PROBES_197: list[tuple[tuple[str, ...], str | None, str, str]] = [
    (("claude-opus-5-5",), None, "2026-12-01T12:00:00Z", "UTC"),
    ((S45, S45), None, "2026-12-01T12:00:00Z", "UTC"),
    ((S45, O45), None, "2026-11-29T12:00:00Z", "UTC"),
    ((S4, S4), None, "2026-06-16T12:00:00Z", "UTC"),
    ((O4,), "claude-opus-4-0", "2026-06-01T12:00:00Z", "UTC"),
    (("claude-3-5-sonnet-20241022",), None, "2026-12-01T12:00:00Z", "UTC"),
    (("claude-sonnet-5-5",), None, "2026-12-01T12:00:00Z", "UTC"),
]
_ZONES = {"UTC": UTC, "America/Los_Angeles": LA_WINTER}


def _session(models: tuple[str, ...]) -> Builder:
    b = Builder()
    for i, m in enumerate(models):
        b.user(f"prompt {i}")
        b.assistant(thinking(f"think {i} by {m}"), text(f"answer {i} by {m}"), model=m)
    return b


def _probe(
    cli: Any, table: lifecycle.ModelTable, models: tuple[str, ...], given: str | None, when: str, zone: str
) -> None:
    from tests.support.oracle import resume_request

    b = _session(models)
    clock = datetime.fromisoformat(when.replace("Z", "+00:00"))
    with tempfile.TemporaryDirectory(prefix="tt-lifecycle-") as tmp:
        root = Path(tmp)
        cwd = (root / "work").resolve()
        cwd.mkdir()
        from tests.support.sessions import project_folder_name

        b.write(root / "config" / "projects" / project_folder_name(cwd) / f"{SESSION}.jsonl")
        extra = ("--model", given) if given else ()
        request = resume_request(
            cli, root / "config", SESSION, cwd, "probe", clock=clock, tz=zone, extra_args=extra
        )
    choice = resume_model(
        table,
        conversation.build(Session.from_entries(b.entries())).model,
        given,
        Clock.fixed(clock, _ZONES[zone]),
    )
    sent = conversation.build(Session.from_entries(b.entries())).for_model(choice.model or "")
    assert request.model == choice.model
    assert _thinking(request.messages) == _thinking(sent.messages)


@pytest.mark.claude
def test_a_session_without_a_response_resumes_on_the_default(
    claude_332: Any, claude_197: Any, faketime: None
) -> None:
    """New-user pass: `tt resume` refused a session with a prompt and no response yet ("the
    session names no model"); both CLIs resume it on their default model."""
    from tests.support.oracle import resume_request
    from tests.support.sessions import project_folder_name

    for cli, table in ((claude_332, T332), (claude_197, T197)):
        b = Builder()
        b.user("a prompt, no response yet")
        with tempfile.TemporaryDirectory(prefix="tt-lifecycle-") as tmp:
            root = Path(tmp)
            cwd = (root / "work").resolve()
            cwd.mkdir()
            b.write(root / "config" / "projects" / project_folder_name(cwd) / f"{SESSION}.jsonl")
            when = datetime.fromisoformat("2026-12-01T12:00:00+00:00")
            request = resume_request(cli, root / "config", SESSION, cwd, "probe", clock=when, tz="UTC")
        assert conversation.build(Session.from_entries(b.entries())).model is None
        assert (
            request.model == resume_model(table, None, None, Clock.fixed(when)).model == table.default_model
        )


@pytest.mark.claude
@pytest.mark.parametrize("probe", PROBES_332, ids=lambda p: f"{'+'.join(p[0])}|{p[1]}|{p[2]}|{p[3]}")
def test_2_1_332_picks_the_model_and_thinking_tt_picks(claude_332: Any, faketime: None, probe: Any) -> None:
    _probe(claude_332, T332, *probe)


@pytest.mark.claude
@pytest.mark.parametrize("probe", PROBES_197, ids=lambda p: f"{'+'.join(p[0])}|{p[1]}|{p[2]}|{p[3]}")
def test_2_1_197_picks_the_model_and_thinking_tt_picks(claude_197: Any, faketime: None, probe: Any) -> None:
    _probe(claude_197, T197, *probe)
