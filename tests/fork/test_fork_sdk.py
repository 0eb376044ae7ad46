"""`tt fork` against the Agent SDK's public ``claude_agent_sdk.fork_session`` (0.2.189):
both fork the same session in the same config dir, each writes its file beside the original,
and the two files hold the same records (uuids compared by position), ending on the same
``custom-title``. tt also keeps the ``last-prompt``/``summary`` records (remapped), which the
SDK drops.

Signature checked in the installed package: ``fork_session(session_id, directory=None,
up_to_message_id=None, title=None) -> ForkSessionResult``; it finds the session under
``$CLAUDE_CONFIG_DIR/projects``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import claude_agent_sdk as sdk
import pytest

from tests.support.cli import tt
from tests.support.paths import REAL, ROOT
from tests.support.trees import stage

CONFIG = REAL / "claude-config-2.1.332"
SID = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
PROJECT = "-home-dev-demo-app"


def _shape(records: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Records with uuids replaced by their position, so two forks compare."""
    pos = {r["uuid"]: k for k, r in enumerate(records) if "uuid" in r}
    out = []
    for r in records:
        rest = {
            k: v
            for k, v in r.items()
            if k
            not in ("uuid", "parentUuid", "logicalParentUuid", "sessionId", "timestamp", "compactMetadata")
        }
        out.append(
            (
                pos.get(r.get("parentUuid")),
                pos.get(r.get("logicalParentUuid")),
                json.dumps(rest, sort_keys=True),
                list(r),
            )
        )
    return out


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _tt_fork(config: Path, *args: str) -> str:
    r = tt("fork", SID, "--json", *args, config=config, width=None, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    return str(doc["session_id"])


@pytest.mark.parametrize("title", [None, "Branch for the parser"], ids=["derived-title", "given-title"])
def test_tt_fork_writes_what_the_sdks_public_fork_session_writes(
    title: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config"
    stage(CONFIG, config)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    project = config / "projects" / PROJECT
    original = (project / f"{SID}.jsonl").read_bytes()

    theirs_id = sdk.fork_session(SID, title=title).session_id
    ours_id = _tt_fork(config, *(["--title", title] if title else []))

    assert (project / f"{SID}.jsonl").read_bytes() == original
    theirs = _records(project / f"{theirs_id}.jsonl")
    ours = [r for r in _records(project / f"{ours_id}.jsonl") if r["type"] not in ("last-prompt", "summary")]
    assert {r["sessionId"] for r in theirs if "sessionId" in r} == {theirs_id}
    assert {r["sessionId"] for r in ours if "sessionId" in r} == {ours_id}
    assert len(ours) == len(theirs)
    assert _shape(ours[:-1]) == _shape(theirs[:-1])
    # The last record is the fork's title; derived: the first prompt (no title was set) + " (fork)".
    assert ours[-1]["type"] == theirs[-1]["type"] == "custom-title"
    assert (
        ours[-1]["customTitle"]
        == theirs[-1]["customTitle"]
        == (title or "Project kickoff 13000: we work on app.py (fork)")
    )
    assert list(ours[-1]) == list(theirs[-1])
