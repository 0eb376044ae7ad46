"""``tt validate`` past the in-memory cap (``--max-bytes``, 50 MiB by default) judges the API
rules on the part a resume sends, as within the cap.

Finding (issue 14, "validate names it, repair fixes it, resume never sends it"):
past the cap validate judged the API rules only when the part after the last compact
boundary fit the cap, and otherwise only the request size, while `tt repair` fixes them
on that part whatever its size (`tests/repair/test_past_the_cap.py`). So a 60 MB session
never compacted, or one with a big tail after its last boundary, could hold a tool_use
without result that repair fixes and validate did not name. The validator now reads that
part again for its facts (a few hundred bytes a message): the same diagnostics.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests import damage
from tests.damage import API_KINDS, NOW, Damaged, id_source
from tests.support.cli import TT
from tests.support.paths import REAL, ROOT
from transcript_tools.edge.reader import iter_raw, lines_of
from transcript_tools.model.diagnostics import CODES
from transcript_tools.model.lines import MAX_TRANSCRIPT_READ_BYTES
from transcript_tools.repair.core import RepairOptions
from transcript_tools.repair.files import repair_file
from transcript_tools.validate.core import Validator
from transcript_tools.validate.files import validate_path

#: The real 2.1.332 session (compact boundaries; what follows the last is ~100 KB) and the
#: real 2.1.38 tool-heavy session (no boundary: a resume sends all of it).
S332 = REAL / "claude-config-2.1.332/projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
TOOL_HEAVY = REAL / "v2.1.38-tool-heavy.jsonl"
#: Each source with a cap under the part a resume sends (which the old validator skipped).
SOURCES = {"boundary": (S332, 50_000), "no-boundary": (TOOL_HEAVY, 1_000)}
#: The catalogue repair's past-the-cap test uses, and the unpaired call of the issue's title.
KINDS: dict[str, Callable[[bytes], Damaged]] = {**API_KINDS, "tool-use-unpaired": damage.tool_use_unpaired}


def _api(report: object) -> list[tuple[str, str, str, int | None, str | None]]:
    """The api-family diagnostics but the past-cap warning: (code, severity, message, line, uuid)."""
    return [
        (d.code, d.severity.value, d.message, d.line, d.uuid)
        for d in report.diagnostics  # type: ignore[attr-defined]
        if CODES[d.code].family == "api" and d.code != "past-cap"
    ]


def _damaged(kind: str, source: str, tmp_path: Path) -> tuple[Path, int, Damaged]:
    src, cap = SOURCES[source]
    d = KINDS[kind](src.read_bytes())
    p = tmp_path / "damaged.jsonl"
    p.write_bytes(d.data)
    boundary = d.data.rfind(b'"subtype":"compact_boundary"')
    if source == "boundary":
        start = d.data.rindex(b"\n", 0, boundary) + 1
        assert len(d.data) - start > cap  # the part sent is itself past the cap
    else:
        assert boundary < 0
    return p, cap, d


@pytest.mark.parametrize("source", sorted(SOURCES))
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_api_rule_is_named_past_the_cap_as_within_it(kind: str, source: str, tmp_path: Path) -> None:
    """Each damage shape, past a cap under the part a resume sends: the same api-family
    diagnostics (code, severity, message, line, uuid) as with the default cap, the shape's
    own among them."""
    p, cap, d = _damaged(kind, source, tmp_path)
    within = validate_path(p)
    past = validate_path(p, cap=cap)
    assert not within.past_cap and past.past_cap and past.api_checked
    assert set(d.codes) <= {c for c, *_ in _api(within)}
    assert _api(past) == _api(within)
    assert "past-cap" in {x.code for x in past.diagnostics}


@pytest.mark.parametrize("source", sorted(SOURCES))
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_validate_is_clean_after_repair_past_the_cap(kind: str, source: str, tmp_path: Path) -> None:
    """What ``tt repair`` writes past the cap, ``tt validate`` past the same cap finds no
    error in (and no api finding at all)."""
    p, cap, _ = _damaged(kind, source, tmp_path)
    out = tmp_path / "out.jsonl"
    r = repair_file(p, RepairOptions(cap=cap), out=out, now=NOW, new_id=id_source(7))
    assert r.api_checked and r.actions
    before = validate_path(p, cap=cap)
    after = validate_path(out, cap=cap)
    assert before.errors and after.past_cap and after.api_checked
    assert after.errors == 0 and _api(after) == [], after.diagnostics


def test_the_cli_names_an_unpaired_call_past_the_cap_and_not_after_repair(tmp_path: Path) -> None:
    """The issue's case through the commands: ``tt validate --max-bytes`` under the part a
    resume sends names the tool_use without result (exit 1); after ``tt repair`` with the
    same cap, exit 0."""
    p, cap, _ = _damaged("tool-use-unpaired", "boundary", tmp_path)

    def validate(path: Path) -> tuple[int, dict[str, Any]]:
        run = subprocess.run(
            [*TT, "validate", str(path), "--max-bytes", str(cap), "--json"],
            capture_output=True,
            text=True,
            check=False,
        )
        [f] = json.loads(run.stdout)["files"]
        return run.returncode, f

    rc, f = validate(p)
    assert rc == 1 and f["past_cap"] is True and f["api_checked"] is True
    assert [d["code"] for d in f["diagnostics"] if d["severity"] == "error"] == ["tool-use-unpaired"]
    out = tmp_path / "fixed.jsonl"
    rep = subprocess.run(
        [*TT, "repair", str(p), "-o", str(out), "--max-bytes", str(cap)], capture_output=True, text=True
    )
    assert rep.returncode == 0, rep.stdout + rep.stderr
    rc, f = validate(out)
    assert rc == 0 and f["errors"] == 0 and f["api_checked"] is True


def test_a_60_mb_session_is_judged_in_bounded_memory(tmp_path: Path) -> None:
    """A 60 MB session never compacted (past the default cap; a resume sends all of it, about
    38 MB of messages): the full API check runs (its request-too-large, without the old
    "other API checks need --max-bytes"), and the validator's own allocations peak at a few
    hundred bytes per entry, never at the messages' content."""
    import tracemalloc

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from grow import grow

    p = tmp_path / "big.jsonl"
    grow(TOOL_HEAVY, p, 60_000_000)
    size = p.stat().st_size
    assert size > MAX_TRANSCRIPT_READ_BYTES
    tracemalloc.start()
    try:
        r = validate_path(p)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert r.past_cap and r.api_checked
    assert [(c, m.split(" MB", 1)[1]) for c, _, m, *_ in _api(r)] == [
        ("request-too-large", ", over the API's 32 MB request limit")
    ]
    # Measured: a 29 MiB peak for 59,202 entries (about 510 bytes each) on a 60 MB file;
    # 26 MiB with a cap over the file, 14 MiB for the old check of the request size alone.
    assert peak < 700 * r.entries and peak < size // 2, (peak, r.entries)


def _facts(path: Path, cap: int) -> tuple[dict[str, Any], list[Any]]:
    v = Validator(str(path), size=path.stat().st_size, cap=cap, schema_check=None, expected_session=None)
    with lines_of(path) as f:
        v.feed_chunks(f)
    start = v.need_second_pass()
    if start is not None:
        v.feed_facts_raw(iter_raw(path, start))
    r = v.finish()
    sent = v._boundary_lines[-1] if v._boundary_lines else 0
    facts = {v.index.uuid(i): f for i, f in v.facts.items() if v.index.line[i] >= sent}
    return facts, [x for x in r.diagnostics if x.code != "past-cap"]


ALL_KINDS = {**damage.KINDS, **API_KINDS}


def _applies(kind: str, source: str) -> bool:
    try:
        ALL_KINDS[kind](SOURCES[source][0].read_bytes())
    except (ValueError, IndexError):  # a shape the source has no place for
        return False
    return True


#: Each damage shape on each source that has a place for it: split-message-noncontiguous has
#: none in these two (no response of several lines followed by a prompt), and
#: dangling-logical-parent none in the one without a boundary.
CASES = [(k, s) for s in sorted(SOURCES) for k in sorted(ALL_KINDS) if _applies(k, s)]


def test_every_damage_shape_is_tried_on_some_source() -> None:
    missing = set(ALL_KINDS) - {k for k, _ in CASES}
    assert missing <= {"split-message-noncontiguous"}, missing
    assert {(k, s) for s in SOURCES for k in ALL_KINDS} - set(CASES) == {
        ("split-message-noncontiguous", "boundary"),
        ("split-message-noncontiguous", "no-boundary"),
        ("dangling-logical-parent", "no-boundary"),
    }


@pytest.mark.parametrize(("kind", "source"), CASES)
def test_the_second_pass_keeps_the_facts_pass_one_keeps_within_the_cap(
    kind: str, source: str, tmp_path: Path
) -> None:
    """Every damage shape, the reader's (torn, fused, CRLF, invalid UTF-8 ...) too: the facts
    the second pass reads for the part a resume sends are those the streaming pass keeps
    within the cap, entry for entry, and so is every diagnostic."""
    src, cap = SOURCES[source]
    d = ALL_KINDS[kind](src.read_bytes())
    p = tmp_path / "damaged.jsonl"
    p.write_bytes(d.data)
    within, past = _facts(p, len(d.data)), _facts(p, cap)
    assert within[0] and past[0] == within[0]
    assert past[1] == within[1]
