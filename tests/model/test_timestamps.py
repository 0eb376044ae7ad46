"""Records tt adds to a past conversation take their time from their neighbours (issue 18.3).

The interrupted-call result `tt repair` adds takes the call's time; `tt fork` (whole or
``--at``) keeps every copied entry's time, the message at the cut included; only records
of new activity (the fork's title, rename, tag, resumed turns) are stamped now, and those
labels do not count in `tt stats`' duration. Checked with `tt stats` before and after, on
real fixtures; no assertion depends on today's date.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest

from tests.support import cli
from tests.support.paths import REAL
from tests.support.trees import stage
from transcript_tools.model.conversation import INTERRUPTED_TOOL_RESULT

SID = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"


tt = partial(cli.tt, width=400)


def stats(path: Path, config: Path | None = None) -> dict:  # type: ignore[type-arg]
    r = tt("stats", str(path), "--json", config=config)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def span(doc: dict) -> tuple[str, str, float]:  # type: ignore[type-arg]
    return doc["first_timestamp"], doc["last_timestamp"], doc["duration_s"]


@pytest.mark.parametrize(
    "name", ["v2.1.17-agent-progress-ends-mid-tool.jsonl", "v1.0.71-summaries-sdk-ends-mid-tool.jsonl"]
)
def test_repair_adds_the_interrupted_result_at_the_calls_time(name: str, tmp_path: Path) -> None:
    src = REAL / name
    before = stats(src)
    out = tmp_path / "fixed.jsonl"
    r = tt("repair", str(src), "-o", str(out), "--json")
    assert r.returncode in (0, 1), r.stderr
    assert sum(f["records_added"] for f in json.loads(r.stdout)["files"]) >= 1  # the result was added
    assert span(stats(out)) == span(before)  # the session lasted as long as it did
    records = [json.loads(x) for x in out.read_bytes().splitlines() if x.strip()]
    calls = {
        b["id"]: rec
        for rec in records
        if rec.get("type") == "assistant"
        for b in rec["message"]["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use"
    }
    added = [
        rec
        for rec in records
        if rec.get("toolUseResult") == INTERRUPTED_TOOL_RESULT and rec["uuid"] not in src.read_text()
    ]
    assert added
    for rec in added:
        (block,) = rec["message"]["content"]
        assert rec["timestamp"] == calls[block["tool_use_id"]]["timestamp"]


def test_fork_at_a_message_keeps_its_time_and_the_conversations_span(tmp_path: Path) -> None:
    config = stage(REAL / "claude-config-2.1.332", tmp_path / "claude-config")
    main = config / "projects" / "-home-dev-demo-app" / f"{SID}.jsonl"
    original = {rec["uuid"]: rec for rec in map(json.loads, main.read_bytes().splitlines()) if "uuid" in rec}
    r = tt("fork", SID, "--at", "3", "--json", config=config)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    forked = [json.loads(x) for x in Path(info["path"]).read_bytes().splitlines()]
    copies = [rec for rec in forked if "forkedFrom" in rec]
    # The message at the cut (the fork's last entry) and every other copy: the original's time.
    assert copies[-1]["forkedFrom"]["messageUuid"] == info["at"]["uuid"]
    assert all(rec["timestamp"] == original[rec["forkedFrom"]["messageUuid"]]["timestamp"] for rec in copies)
    # The fork's span is the conversation up to the cut, not "until the day it was forked".
    first, last, _ = span(stats(Path(info["path"]), config))
    assert last == original[info["at"]["uuid"]]["timestamp"]
    assert first == min(rec["timestamp"] for rec in copies)
    # Its title is new activity and keeps its own (current) time.
    assert forked[-1]["type"] == "custom-title" and forked[-1]["timestamp"] not in {
        rec["timestamp"] for rec in copies
    }


def test_a_rename_or_tag_does_not_stretch_the_duration(tmp_path: Path) -> None:
    config = stage(REAL / "claude-config-2.1.332", tmp_path / "claude-config")
    main = config / "projects" / "-home-dev-demo-app" / f"{SID}.jsonl"
    before = span(stats(main, config))
    assert tt("rename", SID, "Renamed later", config=config).returncode == 0
    assert tt("tag", SID, "exp-1", config=config).returncode == 0
    assert span(stats(main, config)) == before
