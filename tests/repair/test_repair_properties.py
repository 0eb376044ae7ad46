"""Repair's invariants, as properties (issue 4):

- repair of a valid file is the identity, byte for byte (every real fixture that
  ``tt validate`` finds nothing to fix in);
- output + quarantine account for every input byte;
- ``tt validate`` of the output has no line/chain/api error that repair can fix, and
  agrees with what repair says remains;
- repair is idempotent;
- no input bytes make it crash.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.damage import KINDS, check_accounting, repair_bytes, validate_bytes
from tests.support.paths import REAL
from transcript_tools.model.diagnostics import CODES

ALL_REAL = sorted(REAL.rglob("*.jsonl"))
SMALL = [p for p in ALL_REAL if p.stat().st_size < 400_000]
_BYTES = {p: p.read_bytes() for p in SMALL}

_SETTINGS = settings(
    max_examples=int(os.environ.get("TT_HYPOTHESIS_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _fixable(report: object) -> list[tuple[str, int | None]]:
    return [(d.code, d.line) for d in report.diagnostics if CODES[d.code].fix is not None]  # type: ignore[attr-defined]


def _check(data: bytes) -> None:
    r = repair_bytes(data)
    check_accounting(data, r)
    after = validate_bytes(r.data)
    # What the validator still reports as errors is exactly what repair said it could not fix.
    # (Compared by uuid: repair reports input lines, the validator output lines.)
    assert sorted((d.code, d.uuid or "") for d in after.diagnostics if d.severity.value == "error") == sorted(
        (d.code, d.uuid or "") for d in r.plan.remaining if d.severity.value == "error"
    )
    assert all(
        d.code in ("empty-content", "image-too-large", "request-too-large")
        for d in r.plan.remaining
        if d.severity.value == "error"
    )
    again = repair_bytes(r.data)
    assert again.plan.identity, again.plan.actions[:5]
    assert again.data == r.data


def test_identity_on_every_real_file_with_nothing_to_fix() -> None:
    clean = 0
    for p in ALL_REAL:
        data = p.read_bytes()
        if _fixable(validate_bytes(data, subagent=p.name.startswith("agent-"))):
            continue
        clean += 1
        r = repair_bytes(data)
        assert r.plan.identity and r.plan.actions == [], p
        assert r.data == data and r.quarantine == [], p
    assert clean >= 10  # the 1.0.51 ... 2.1.332 real sessions and subagent files


@_SETTINGS
@given(st.sampled_from(sorted(_BYTES)), st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=4))
def test_any_mix_of_damage_kinds_on_real_files(path: Path, kinds: list[str]) -> None:
    data = _BYTES[path]
    for k in kinds:
        try:
            data = KINDS[k](data).data
        except ValueError:
            continue
    _check(data)


_edit = st.one_of(
    st.tuples(st.just("insert"), st.floats(0, 1), st.binary(min_size=1, max_size=40)),
    st.tuples(st.just("delete"), st.floats(0, 1), st.integers(1, 400)),
    st.tuples(st.just("flip"), st.floats(0, 1), st.integers(0, 255)),
    st.tuples(st.just("swap-lines"), st.floats(0, 1), st.floats(0, 1)),
    st.tuples(st.just("repeat-line"), st.floats(0, 1), st.floats(0, 1)),
)


def _apply(data: bytes, edits: list[tuple[str, float, object]]) -> bytes:
    b = bytearray(data)
    for op, where, arg in edits:
        i = int(where * len(b))
        if op == "insert":
            b[i:i] = bytes(arg)  # type: ignore[call-overload]
        elif op == "delete":
            del b[i : i + int(arg)]  # type: ignore[call-overload]
        elif op == "flip" and b:
            b[min(i, len(b) - 1)] = int(arg)  # type: ignore[call-overload]
        else:
            lines = bytes(b).split(b"\n")
            j = int(float(arg) * len(lines)) % len(lines)  # type: ignore[arg-type]
            k = i * len(lines) // max(len(b), 1) % len(lines)
            if op == "swap-lines":
                lines[j], lines[k] = lines[k], lines[j]
            else:
                lines.insert(k, lines[j])
            b = bytearray(b"\n".join(lines))
    return bytes(b)


@_SETTINGS
@given(st.sampled_from(sorted(_BYTES)), st.lists(_edit, min_size=1, max_size=6))
def test_arbitrary_byte_damage_on_real_files(path: Path, edits: list[tuple[str, float, object]]) -> None:
    _check(_apply(_BYTES[path], edits))


@_SETTINGS
@given(st.binary(max_size=3000))
def test_arbitrary_bytes_never_crash_and_lose_nothing(data: bytes) -> None:
    r = repair_bytes(data)
    check_accounting(data, r)
    assert repair_bytes(r.data).plan.identity


@_SETTINGS
@given(
    st.lists(
        st.sampled_from(
            [
                b"{",
                b"}",
                b'"uuid":"a"',
                b'"type":"user"',
                b",",
                b"\n",
                b"\r\n",
                b"\x00",
                b"[]",
                b"\xff",
                b"\\ud800",
                b'"parentUuid":"a"',
                b":",
            ]
        ),
        max_size=60,
    )
)
def test_json_ish_fragments(parts: list[bytes]) -> None:
    data = b"".join(parts)
    r = repair_bytes(data)
    check_accounting(data, r)
    assert repair_bytes(r.data).plan.identity
