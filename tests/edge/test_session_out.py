"""One rule for ``-o`` wherever it takes a session (issue 13.4; `transcript_tools.edge.session_out`):
the main file at the path given, its subagent files beside it in Claude Code's own layout
(``fixed.jsonl`` + ``fixed/subagents/…``), an existing folder (or ``PATH/``) holding the
main file under its own name. Tested for repair, redact and fork, and with the real CLI:
Claude Code 2.1.332 resumes the repaired copy *and its subagent* (it continues the
subagent from its transcript when asked to message it)."""

from __future__ import annotations

import json
import shutil
from functools import partial
from pathlib import Path

import pytest

from tests.support import cli
from tests.support.claude_cli import Sandbox, run_claude
from tests.support.oracle import Block, conversation_blocks
from tests.support.paths import REAL
from tests.support.sessions import GeneratedSession, stage_config
from tests.support.standin import StandIn
from tests.support.trees import stage
from transcript_tools.edge.session_out import main_output, names_folder, session_dir, session_outputs

SID = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
AGENT = "agent-a57f9afd470043d69"
PROJECT = "-home-dev-demo-app"


tt = partial(cli.tt, width=400)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return stage(REAL / "claude-config-2.1.332", tmp_path / "claude-config")


def main_file(config: Path) -> Path:
    return config / "projects" / PROJECT / f"{SID}.jsonl"


# --- the rule ----------------------------------------------------------------------------


def test_the_rule_on_paths(tmp_path: Path) -> None:
    files = [
        Path("/p/s.jsonl"),
        Path("/p/s/subagents/agent-a.jsonl"),
        Path("/p/s/subagents/workflows/r1/agent-b.jsonl"),
    ]
    assert session_outputs(files, tmp_path / "fixed.jsonl") == [
        tmp_path / "fixed.jsonl",
        tmp_path / "fixed" / "subagents" / "agent-a.jsonl",
        tmp_path / "fixed" / "subagents" / "workflows" / "r1" / "agent-b.jsonl",
    ]
    # A folder that exists, or a path spelled as one: the session under its own name.
    assert session_outputs(files, tmp_path)[:2] == [
        tmp_path / "s.jsonl",
        tmp_path / "s" / "subagents" / "agent-a.jsonl",
    ]
    assert names_folder(f"{tmp_path}/new/") and not (tmp_path / "new").exists()
    assert session_outputs(files, f"{tmp_path}/new/")[0] == tmp_path / "new" / "s.jsonl"
    # A name without .jsonl keeps its files in <name>.d/ (never the file's own name).
    assert (
        session_outputs(files, tmp_path / "fixed")[1] == tmp_path / "fixed.d" / "subagents" / "agent-a.jsonl"
    )
    assert main_output(tmp_path, "n.jsonl") == tmp_path / "n.jsonl" and session_dir(Path("x.jsonl")) == Path(
        "x"
    )


# --- repair ------------------------------------------------------------------------------


def test_repair_a_session_file_to_a_jsonl_path_writes_the_layout_and_says_so(
    config: Path, tmp_path: Path
) -> None:
    main = main_file(config)
    r = tt("repair", str(main), "-o", "fixed.jsonl", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    sub = tmp_path / "fixed" / "subagents"
    assert (tmp_path / "fixed.jsonl").read_bytes() == main.read_bytes()
    assert (sub / f"{AGENT}.jsonl").read_bytes() == (
        main.with_suffix("") / "subagents" / f"{AGENT}.jsonl"
    ).read_bytes()
    # The sidecar goes with it (Claude Code reads the agent's type there).
    assert (sub / f"{AGENT}.meta.json").read_bytes() == (
        main.with_suffix("") / "subagents" / f"{AGENT}.meta.json"
    ).read_bytes()
    assert "1 subagent file(s) written beside fixed.jsonl under fixed/subagents" in " ".join(r.stdout.split())
    j = tt("repair", SID, "-o", str(tmp_path / "again.jsonl"), "--json", config=config)
    assert j.returncode == 0, j.stderr
    doc = json.loads(j.stdout)
    assert doc["subagents_dir"] == str(tmp_path / "again" / "subagents")
    assert [f["output"] for f in doc["files"]] == [
        str(tmp_path / "again.jsonl"),
        str(tmp_path / "again" / "subagents" / f"{AGENT}.jsonl"),
    ]


def test_repair_into_a_folder_and_the_refusals(config: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = tt("repair", SID, "-o", f"{out}/", config=config)
    assert r.returncode == 0, r.stderr
    assert (out / f"{SID}.jsonl").is_file() and (out / SID / "subagents" / f"{AGENT}.jsonl").is_file()
    # Never over an existing file (exit 6), never over the input (exit 2).
    assert tt("repair", SID, "-o", f"{out}/", config=config).returncode == 6
    assert tt("repair", SID, "-o", str(main_file(config).parent), config=config).returncode == 2
    assert tt("repair", SID, "-o", str(main_file(config)), config=config).returncode == 2


# --- redact and fork: the same rule ---------------------------------------------------------


def test_redact_and_fork_follow_the_same_rule(config: Path, tmp_path: Path) -> None:
    r = tt("redact", SID, "-o", str(tmp_path / "red.jsonl"), config=config)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "red.jsonl").is_file() and (
        tmp_path / "red" / "subagents" / f"{AGENT}.jsonl"
    ).is_file()
    f = tt("fork", SID, "-o", str(tmp_path / "branch.jsonl"), "--json", config=config)
    assert f.returncode == 0, f.stderr
    assert json.loads(f.stdout)["subagents"] == [str(tmp_path / "branch" / "subagents" / f"{AGENT}.jsonl")]
    d = tt("fork", SID, "-o", f"{tmp_path}/forks/", "--json", config=config)
    assert d.returncode == 0, d.stderr
    new = json.loads(d.stdout)["session_id"]
    assert json.loads(d.stdout)["path"] == str(tmp_path / "forks" / f"{new}.jsonl")
    # --even-if-larger: this fixture's conversation is too short for a summary to shrink it.
    c = tt("compact", SID, "-o", f"{tmp_path}/small/", "--json", "--even-if-larger", config=config)
    assert c.returncode == 0, c.stderr
    doc = json.loads(c.stdout)
    assert doc["output"] == str(tmp_path / "small" / f"{doc['new_session_id']}.jsonl")


# --- the real CLI resumes the copy with its subagent ---------------------------------------

PROBE = "Subagent probe: list them again"


def _subagent_turn(
    cli: object, config: Path, cwd: Path, session_id: str, agent_id: str, scratch: Path
) -> list[Block]:
    """Resume the session and message its subagent; the blocks of the request Claude Code
    sends for the subagent (its transcript's history, then the probe)."""
    sandbox = Sandbox.create(scratch, config_dir=config)
    with StandIn() as api:
        run_claude(
            cli,
            f'TOOL:SendMessage {{"to": "{agent_id}", "message": "{PROBE}"}}',
            sandbox=sandbox,
            cwd=cwd,  # type: ignore[arg-type]
            base_url=api.base_url,
            resume=session_id,
            extra_args=["--allowedTools", "SendMessage"],
        )
        requests = api.message_requests
    for q in requests:
        blocks = conversation_blocks(q.messages)
        if (
            blocks
            and blocks[0].role == "user"
            and any(PROBE in b.value and "coordinator" in b.value for b in blocks)
        ):
            return blocks
    raise AssertionError(f"no subagent request carried the probe: {[len(q.messages) for q in requests]}")


@pytest.mark.claude
def test_the_real_cli_resumes_the_repaired_copy_with_its_subagent(
    real_session: GeneratedSession, tmp_path: Path
) -> None:
    g = real_session
    subs = sorted((g.session_dir / "subagents").glob("agent-*.jsonl"))
    assert subs, "the generated session has a subagent"
    agent_id = subs[0].name[len("agent-") : -len(".jsonl")]
    # The README's first repair example, on the generated 2.1.332 session.
    r = tt("repair", str(g.transcript), "-o", "fixed.jsonl", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "fixed" / "subagents" / subs[0].name).is_file()
    # Placed in a config dir as Claude Code names a session: <id>.jsonl and <id>/.
    original = stage_config(g.config_dir, tmp_path / "original-config")
    placed = stage_config(g.config_dir, tmp_path / "placed-config")
    project = placed / "projects" / g.project_dir.name
    (project / f"{g.session_id}.jsonl").unlink()
    shutil.rmtree(project / g.session_id)
    shutil.move(tmp_path / "fixed.jsonl", project / f"{g.session_id}.jsonl")
    shutil.move(tmp_path / "fixed", project / g.session_id)
    want = _subagent_turn(g.cli, original, g.cwd, g.session_id, agent_id, tmp_path / "run-original")
    got = _subagent_turn(g.cli, placed, g.cwd, g.session_id, agent_id, tmp_path / "run-placed")
    # The subagent continued from its transcript: its earlier prompt is there, then the probe.
    first_prompt = json.loads(subs[0].read_text().splitlines()[0])["message"]["content"]
    assert any(b.role == "user" and b.value == first_prompt for b in got), got
    assert got == want
    # Control: the same main file without its folder beside it, and the CLI has no subagent
    # to continue (it sends no subagent request at all).
    shutil.rmtree(project / g.session_id)
    with pytest.raises(AssertionError, match="no subagent request"):
        _subagent_turn(g.cli, placed, g.cwd, g.session_id, agent_id, tmp_path / "run-control")
