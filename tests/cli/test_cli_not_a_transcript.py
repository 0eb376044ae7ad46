"""Files that are not transcripts get one clear error from every reading command, and
`tt delete` never removes them (a typo'd path must not cost the user a file)."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import pytest

from tests.support import cli

tt = partial(cli.tt, width=None)


@pytest.fixture(params=["empty", "random", "other-json"])
def not_a_transcript(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    p = tmp_path / "x.jsonl"
    if request.param == "empty":
        p.write_bytes(b"")
    elif request.param == "random":
        p.write_bytes(os.urandom(4000).replace(b"{", b"("))
    else:
        p.write_bytes(b'{"a":1}\n{"type":"note","text":"hi"}\n')
    return p


@pytest.mark.parametrize(
    "command",
    [["show"], ["stats"], ["validate"], ["fork", "--dry-run"], ["compact", "--dry-run"], ["redact"]],
)
def test_reading_commands_say_it_is_not_a_transcript(not_a_transcript: Path, command: list[str]) -> None:
    r = tt(*command, str(not_a_transcript))
    assert r.returncode == 4 or (command == ["validate"] and r.returncode in (1, 4)), (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    if r.returncode == 4:
        assert r.stderr.startswith("tt: ") and "transcript" in r.stderr


def test_delete_refuses_and_keeps_the_file(not_a_transcript: Path) -> None:
    before = not_a_transcript.read_bytes()
    r = tt("delete", str(not_a_transcript), "--yes")
    assert r.returncode == 4, (r.stdout, r.stderr)
    assert "not a transcript" in r.stderr and "Traceback" not in r.stderr
    assert not_a_transcript.read_bytes() == before


def test_redact_in_place_refuses_and_keeps_the_file(not_a_transcript: Path) -> None:
    # Found trying tt as a new user: tt redact said "no secrets" on any file and
    # --in-place rewrote any JSONL.
    before = not_a_transcript.read_bytes()
    r = tt("redact", str(not_a_transcript), "--in-place")
    assert r.returncode == 4 and "not a transcript" in r.stderr, (r.stdout, r.stderr)
    assert not_a_transcript.read_bytes() == before
