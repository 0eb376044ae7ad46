"""The streaming reader and the capped in-memory load."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.paths import REAL
from transcript_tools.edge.reader import (
    MAX_TRANSCRIPT_READ_BYTES,
    find_last_boundary_offset,
    iter_lines,
    iter_raw,
    last_boundary,
    load,
    preserved_start,
    read_head_tail,
)
from transcript_tools.model.errors import NotFound, TranscriptTooLarge, Unreadable

SESSION_332 = (
    REAL / "claude-config-2.1.332/projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
)


def test_cap_is_50_mib() -> None:
    assert MAX_TRANSCRIPT_READ_BYTES == 50 * 1024 * 1024


@pytest.mark.parametrize("path", sorted(REAL.rglob("*.jsonl")), ids=lambda p: p.name[:40])
def test_every_real_fixture_round_trips_byte_for_byte(path: Path) -> None:
    data = path.read_bytes()
    out = b"".join(ln.data + ln.terminator for ln in iter_lines(path))
    assert out == data
    for ln in iter_lines(path):
        assert ln.accounted_bytes() == len(ln.data)


def test_offsets_and_line_numbers(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_bytes(b'{"type":"x","uuid":"a"}\r\n\n{"type":"y","uuid":"b"}')
    rows = list(iter_raw(p))
    assert [(n, off, term, last) for n, off, _, term, last in rows] == [
        (1, 0, b"\r\n", False),
        (2, 25, b"\n", False),
        (3, 26, b"", True),
    ]


def test_load_refuses_past_the_cap_naming_size_cap_and_remedies(tmp_path: Path) -> None:
    p = tmp_path / "big.jsonl"
    p.write_bytes(SESSION_332.read_bytes())
    with pytest.raises(TranscriptTooLarge) as ei:
        load(p, max_bytes=1000)
    msg = str(ei.value)
    assert "KiB is past the 1000 B cap" in msg and "--max-bytes" in msg and "tt compact" in msg
    assert ei.value.exit_code == 4 and ei.value.size == p.stat().st_size and ei.value.cap == 1000


def test_load_from_last_boundary_when_the_tail_fits(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(SESSION_332.read_bytes())
    off = find_last_boundary_offset(p)
    assert off is not None and off > 0
    size = p.stat().st_size
    data = p.read_bytes()
    boundary = orjson.loads(data[off : data.index(b"\n", off)])
    head = boundary["compactMetadata"]["preservedSegment"]["headUuid"]
    # The part starts at the first line of the preserved segment (written before the
    # boundary: what a resume sends), not at the boundary itself.
    first = preserved_start(data, off, boundary)
    assert 0 < first < off
    t = load(p, max_bytes=size - first + 10, from_last_boundary=True)
    assert t.start == first
    assert t.entries[0].uuid == head
    assert any(e.is_compact_boundary for e in t.entries)
    with pytest.raises(TranscriptTooLarge):
        load(p, max_bytes=size - first - 10, from_last_boundary=True)  # the boundary alone would fit


def test_last_boundary_is_the_last_line_that_decodes_to_one() -> None:
    b1 = b'{"type":"system","subtype":"compact_boundary","uuid":"b1"}'
    # The marker's text in a record that is not a boundary (a user line), and in a
    # message (escaped, so no raw match): neither is a boundary; the search goes back.
    not_one = b'{"type":"user","subtype":"compact_boundary","uuid":"u1"}'
    quoted = b'{"type":"user","message":{"content":"{\\"subtype\\":\\"compact_boundary\\"}"},"uuid":"u2"}'
    data = b"\n".join([b'{"type":"user","uuid":"u0"}', b1, not_one, quoted]) + b"\n"
    assert orjson.loads(quoted)["message"]["content"] == '{"subtype":"compact_boundary"}'
    assert last_boundary(data) == (data.index(b1), orjson.loads(b1))
    assert last_boundary(not_one + b"\n") is None and last_boundary(b"") is None


def test_last_boundary_takes_a_damaged_line_as_iter_lines_decodes_it() -> None:
    # Two records fused on one line (a torn write), the boundary second; a CRLF line end;
    # the file's first line, with a BOM; a last line without its LF.
    b2 = b'{"type":"system","subtype":"compact_boundary","uuid":"b2"}'
    fused = b'{"type":"user","uuid":"u1"' + b2
    data = b'{"type":"user","uuid":"u0"}\r\n' + fused + b"\r\n"
    off, rec = last_boundary(data)  # type: ignore[misc]
    assert off == data.index(fused) and rec["uuid"] == "b2"
    bom = b"\xef\xbb\xbf" + b2
    assert last_boundary(bom + b"\n") == (0, orjson.loads(b2))
    assert last_boundary(b'{"type":"user"}\n' + b2) == (16, orjson.loads(b2))


def test_missing_and_directory(tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        load(tmp_path / "nope.jsonl")
    with pytest.raises(Unreadable):
        load(tmp_path)


def test_head_and_tail(tmp_path: Path) -> None:
    p = tmp_path / "x.jsonl"
    p.write_bytes(b"a" * 100 + b"b" * 100)
    head, tail, st = read_head_tail(p, size=50)
    assert head == b"a" * 50 and tail == b"b" * 50 and st.st_size == 200
    head, tail, _ = read_head_tail(p, size=500)
    assert head == tail == p.read_bytes()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=80), max_size=12), st.booleans())
def test_arbitrary_files_round_trip(
    tmp_path_factory: pytest.TempPathFactory, chunks: list[bytes], final_newline: bool
) -> None:
    data = b"\n".join(chunks) + (b"\n" if final_newline and chunks else b"")
    p = tmp_path_factory.mktemp("h") / "f.jsonl"
    p.write_bytes(data)
    lines = list(iter_lines(p))
    assert b"".join(ln.data + ln.terminator for ln in lines) == data
    assert sum(ln.accounted_bytes() for ln in lines) == sum(len(ln.data) for ln in lines)
