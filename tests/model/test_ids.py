"""The one session-id pattern (`model.ids`), and the case rule it follows: the real CLI's."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support.claude_cli import ClaudeCLI, Sandbox, run_claude
from tests.support.standin import StandIn
from transcript_tools.bundle.core import parse_manifest
from transcript_tools.edge.claude_dir import is_session_file, resolve
from transcript_tools.model.errors import Unreadable
from transcript_tools.model.ids import is_session_id
from transcript_tools.model.session import session_id_from_name

LOWER = "3cb58d3c-2f47-4822-9eeb-ad5b9d4f65f3"
UPPER = LOWER.upper()

CLOCK = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize("value", [LOWER, UPPER, "3cb58d3c-2F47-4822-9eeb-AD5B9D4F65F3"])
def test_a_uuid_in_either_case_is_a_session_id(value: str) -> None:
    assert is_session_id(value)
    assert session_id_from_name(f"{value}.jsonl") == value  # never case-folded
    assert is_session_file(Path(f"{value}.jsonl"))


@pytest.mark.parametrize(
    "value",
    [
        LOWER + "\n",
        LOWER[:-1],
        LOWER + "0",
        LOWER.replace("-", ""),
        "3cb58d3c-2f47-4822-9eeb-ad5b9d4f65fg",
        "agent-a1b2c3",
        "",
        None,
        36,
    ],
)
def test_anything_else_is_not(value: object) -> None:
    assert not is_session_id(value)
    if isinstance(value, str):
        assert session_id_from_name(f"{value}.jsonl") is None
        assert not is_session_file(Path(f"{value}.jsonl"))


def test_a_file_stem_must_be_the_whole_name_before_jsonl() -> None:
    assert not is_session_file(Path(f"{LOWER}.jsonl.bak"))
    assert not is_session_file(Path(f"{LOWER}.json"))
    assert session_id_from_name(LOWER) == LOWER  # a bare id is its own stem


def test_a_bundle_manifest_takes_either_case_and_nothing_else() -> None:
    paths = dict.fromkeys(("project_dir_name", "project_dir", "config_dir", "tt_version", "created"), "x")

    def manifest(sid: str) -> bytes:
        return json.dumps(
            {"format": "tt-session-bundle", "format_version": 1, "session_id": sid, "files": [], **paths}
        ).encode()

    for sid in (LOWER, UPPER):
        assert parse_manifest(manifest(sid), "b.zip").session_id == sid
    with pytest.raises(Unreadable, match="session_id is not a session id"):
        parse_manifest(manifest(LOWER + "\n"), "b.zip")


@pytest.mark.claude
def test_claude_code_keeps_an_upper_case_session_id_and_resumes_it_by_exact_name(
    claude_332: ClaudeCLI, tmp_path: Path
) -> None:
    sandbox = Sandbox.create(tmp_path)
    cwd = (tmp_path / "demo").resolve()
    cwd.mkdir()
    sid = str(uuid.uuid4()).upper()
    with StandIn() as api:
        run = run_claude(
            claude_332, "hello", sandbox=sandbox, cwd=cwd, base_url=api.base_url, session_id=sid, clock=CLOCK
        )
        assert run.session_id == sid
        (path,) = (sandbox.config_dir / "projects").rglob("*.jsonl")
        assert path.name == f"{sid}.jsonl"
        assert {json.loads(x).get("sessionId") for x in path.read_text().splitlines()} == {sid}
        again = run_claude(
            claude_332, "again", sandbox=sandbox, cwd=cwd, base_url=api.base_url, resume=sid, clock=CLOCK
        )
        assert again.session_id == sid
        folded = run_claude(
            claude_332,
            "folded",
            sandbox=sandbox,
            cwd=cwd,
            base_url=api.base_url,
            resume=sid.lower(),
            clock=CLOCK,
            check=False,
        )
        assert (
            folded.returncode != 0
            and "No conversation found with session ID" in folded.stderr + folded.stdout
        )
    # tt takes the file Claude Code wrote for what it is: a session, found by its id.
    assert session_id_from_name(path.name) == sid
    for spec in (sid, sid.lower()):  # tt's own lookup ignores case (edge/claude_dir.resolve)
        ref = resolve(spec, root=sandbox.config_dir / "projects")
        assert ref.path == path and ref.session_id == sid
