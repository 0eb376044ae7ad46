"""``compact-metadata-missing``: a compact boundary without its ``compactMetadata`` is a
warning of ``tt validate``, and ``tt repair`` restores the metadata the file supports
(`transcript_tools.model.boundary_meta`). The expected values are the ones Claude Code
itself wrote on the real sessions of fixtures/real, before the metadata is taken away."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.damage import check_accounting, repair_bytes, validate_bytes
from transcript_tools.model.diagnostics import Severity

ROOT = Path(__file__).resolve().parents[2]
REAL = {
    v: next((ROOT / f"fixtures/real/claude-config-{v}/projects").glob("*/*.jsonl"))
    for v in ("2.1.332", "2.1.197")
}


def without_metadata(data: bytes) -> tuple[bytes, dict]:
    """``data`` with compactMetadata taken off its one compact boundary, and what it was."""
    out: list[bytes] = []
    taken: dict = {}
    for line in data.splitlines(keepends=True):
        rec = orjson.loads(line)
        if rec.get("subtype") == "compact_boundary":
            taken = rec.pop("compactMetadata")
            line = orjson.dumps(rec) + b"\n"
        out.append(line)
    assert taken, "the fixture has a compact boundary"
    return b"".join(out), taken


@pytest.mark.parametrize("version", sorted(REAL))
def test_a_bare_boundary_is_a_warning_and_repair_restores_trigger_and_pre_tokens(version: str) -> None:
    damaged, original = without_metadata(REAL[version].read_bytes())
    report = validate_bytes(damaged)
    found = [d for d in report.diagnostics if d.code == "compact-metadata-missing"]
    assert len(found) == 1 and found[0].severity is Severity.WARNING
    assert report.errors == 0  # the API takes the request; only the next compaction fails
    fixed = repair_bytes(damaged)
    check_accounting(damaged, fixed)  # the original line is in the quarantine
    assert [q["reasons"][0]["code"] for q in fixed.quarantine] == ["compact-metadata-missing"]
    boundary = next(orjson.loads(x) for x in fixed.data.splitlines() if b'"compact_boundary"' in x)
    # What Claude Code wrote there itself: the same trigger and preTokens.
    assert boundary["compactMetadata"] == {
        "trigger": original["trigger"],
        "preTokens": original["preTokens"],
    }
    assert not [d for d in validate_bytes(fixed.data).diagnostics if d.code == "compact-metadata-missing"]
    # Every other line is written back byte for byte.
    before = [x for x in damaged.splitlines() if b'"compact_boundary"' not in x]
    after = [x for x in fixed.data.splitlines() if b'"compact_boundary"' not in x]
    assert before == after


def test_an_auto_compaction_gets_trigger_auto() -> None:
    """No ``/compact`` record after the boundary: an automatic compaction."""
    damaged, _ = without_metadata(REAL["2.1.332"].read_bytes())
    lines = [
        x for x in damaged.splitlines(keepends=True) if b"<command-name>/compact</command-name>" not in x
    ]
    # The record after the dropped one now has a dangling parent; repair relinks it too.
    fixed = repair_bytes(b"".join(lines))
    boundary = next(orjson.loads(x) for x in fixed.data.splitlines() if b'"compact_boundary"' in x)
    assert boundary["compactMetadata"]["trigger"] == "auto"
