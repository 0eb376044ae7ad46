"""tt's backups and quarantines are read by no listing (issue 18.2; `writer.by_product`).

``--in-place`` on a subagent transcript used to leave ``agent-….jsonl.bak`` and
``agent-….jsonl.quarantine.jsonl`` inside ``subagents/``: `tt validate` then reported a
schema error on the quarantine, `tt stats` counted a second subagent, `tt export` zipped
both, and the Agent SDK's ``list_subagents`` listed the quarantine as an agent. A subagent
transcript's by-products now start with a dot (``.agent-….jsonl.bak``), which neither the
SDK's ``startswith("agent-")`` nor Claude Code 2.1.332's ``/agent-([\\w-]+)\\.jsonl$/``
(read from its binary) nor tt's ``agent-*.jsonl`` glob takes; a main file's keep their
names (``<id>.jsonl.bak`` is not ``<uuid>.jsonl``, the only main-file name any listing takes).
"""

from __future__ import annotations

import json
import zipfile
from functools import partial
from pathlib import Path

import pytest

from tests.support import cli
from tests.support.paths import REAL
from tests.support.trees import stage
from transcript_tools.edge.writer import backup_path, by_product, is_by_product

SID = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
AGENT_ID = "a57f9afd470043d69"
AGENT = f"agent-{AGENT_ID}"
TORN = b'{"parentUuid":"x","isSidechain":true,"type":"us'


tt = partial(cli.tt, width=400)


def test_names() -> None:
    assert by_product(Path("/p/s/subagents/agent-a.jsonl"), ".bak") == Path(
        "/p/s/subagents/.agent-a.jsonl.bak"
    )
    assert by_product(Path("/p/s/subagents/agent-a.jsonl"), ".quarantine.jsonl", "20261201T000000") == Path(
        "/p/s/subagents/.agent-a.jsonl.20261201T000000.quarantine.jsonl"
    )
    assert by_product(Path("/p/0b1c.jsonl"), ".bak") == Path("/p/0b1c.jsonl.bak")
    assert (
        is_by_product(".agent-a.jsonl.quarantine.jsonl")
        and is_by_product("agent-a.jsonl.bak")
        and not is_by_product("agent-a.jsonl")
    )


def test_second_backup_of_a_subagent_gets_a_timestamp_and_keeps_the_dot(tmp_path: Path) -> None:
    p = tmp_path / "agent-a.jsonl"
    p.write_bytes(b"{}\n")
    by_product(p, ".bak").write_bytes(b"old")
    b = backup_path(p)
    assert b.name.startswith(".agent-a.jsonl.") and b.name.endswith(".bak") and not b.exists()


@pytest.fixture
def repaired(tmp_path: Path) -> Path:
    """A copy of the real 2.1.332 config whose session (main file and subagent) was torn
    mid-write and then repaired in place: backups and quarantines beside both."""
    config = stage(REAL / "claude-config-2.1.332", tmp_path / "claude-config")
    project = config / "projects" / "-home-dev-demo-app"
    for p in (project / f"{SID}.jsonl", project / SID / "subagents" / f"{AGENT}.jsonl"):
        with open(p, "ab") as f:
            f.write(TORN)
    r = tt("repair", SID, "--in-place", config=config)
    assert r.returncode == 0, r.stdout + r.stderr
    subs = project / SID / "subagents"
    assert sorted(p.name for p in subs.iterdir()) == sorted(
        [f"{AGENT}.jsonl", f"{AGENT}.meta.json", f".{AGENT}.jsonl.bak", f".{AGENT}.jsonl.quarantine.jsonl"]
    )
    assert (project / f"{SID}.jsonl.bak").is_file() and (project / f"{SID}.jsonl.quarantine.jsonl").is_file()
    return config


def test_tt_validate_stats_export_and_ls_ignore_the_by_products(repaired: Path, tmp_path: Path) -> None:
    project = repaired / "projects" / "-home-dev-demo-app"
    v = tt("validate", SID, "--json", config=repaired)
    assert v.returncode == 0, v.stdout + v.stderr
    files = [f["path"] for f in json.loads(v.stdout)["files"]]
    assert [Path(f).name for f in files] == [f"{SID}.jsonl", f"{AGENT}.jsonl"]
    d = tt("validate", str(project), "--json", config=repaired)
    assert d.returncode == 0, d.stdout + d.stderr
    assert sorted(Path(f["path"]).name for f in json.loads(d.stdout)["files"]) == [
        f"{SID}.jsonl",
        f"{AGENT}.jsonl",
    ]
    s = tt("stats", SID, "--json", config=repaired)
    assert s.returncode == 0, s.stderr
    assert json.loads(s.stdout)["subagents"]["files"] == 1
    ls = tt("ls", "--all", "--json", config=repaired)
    assert [row["subagents"] for row in json.loads(ls.stdout)["sessions"]] == [1]
    assert [row["session_id"] for row in json.loads(ls.stdout)["sessions"]] == [SID]
    out = tmp_path / "s.zip"
    e = tt("export", SID, "-o", str(out), config=repaired)
    assert e.returncode == 0, e.stderr
    names = zipfile.ZipFile(out).namelist()
    assert not [n for n in names if is_by_product(n)], names
    assert any(n.endswith(f"subagents/{AGENT}.jsonl") for n in names)


def test_the_agent_sdk_lists_neither(repaired: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from claude_agent_sdk import list_sessions, list_subagents

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(repaired))
    assert list_subagents(SID) == [AGENT_ID]
    assert [s.session_id for s in list_sessions()] == [SID]
