"""`tt ls`, `tt stats`, `tt show --tree` on sessions the real Claude Code just wrote.

The pinned CLIs (tests/support/claude_cli.py) write a session from a known script, so
what tt reports can be checked against the script itself, and against the Agent SDK's
``list_sessions`` and ccusage on the same files. A rewind is made the way the SDK makes
one (``--resume-session-at``), and tt must find exactly the turns it abandoned.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from pathlib import Path

import pytest

from tests.catalog.test_stats import run_ccusage
from tests.support.claude_cli import Sandbox, run_claude
from tests.support.policy import TOOL_LINE
from tests.support.standin import StandIn
from transcript_tools.catalog.files import list_sessions as tt_list
from transcript_tools.catalog.files_usage import session_stats
from transcript_tools.edge.reader import load
from transcript_tools.model.session import Session
from transcript_tools.show.tree import dead_branches

pytestmark = pytest.mark.claude


def test_ls_titles_equal_the_sdk_on_a_fresh_session(
    generated_session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from claude_agent_sdk import list_sessions

    s = generated_session.copy_to(tmp_path)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(s.config_dir))
    (sdk,) = list_sessions()
    (row,) = [r for r in tt_list([s.project_dir]) if r.lite.hidden is None]
    assert (row.session_id, row.lite.title, row.lite.first_prompt, row.lite.git_branch) == (
        sdk.session_id,
        sdk.summary,
        sdk.first_prompt,
        sdk.git_branch,
    )
    assert row.subagents == 1


def test_stats_count_what_the_script_did(generated_session, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    s = generated_session.copy_to(tmp_path)
    st = session_stats(s.transcript)
    prompts = [p for p in s.prompts if not p.startswith("/")]
    assert st.turns == len(prompts)
    want = Counter(m["name"] for p in prompts if (m := TOOL_LINE.search(p)))
    assert st.tools == want
    assert st.compactions == sum(1 for p in s.prompts if p == "/compact")
    # Every model call the CLI made for the conversation is in the files, counted once.
    cc = run_ccusage(s.config_dir, "daily")["totals"]
    assert (st.tokens.input, st.tokens.output) == (cc["inputTokens"], cc["outputTokens"])


def test_tree_finds_the_turns_a_real_rewind_abandoned(claude_332, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sandbox = Sandbox.create(tmp_path)
    cwd = (tmp_path / "demo-app").resolve()
    cwd.mkdir()
    sid = str(uuid.uuid4())
    kept = ["Start", "Keep this turn"]
    dropped = ["Abandoned one", "Abandoned two"]
    with StandIn() as api:
        for i, p in enumerate(kept + dropped):
            run_claude(
                claude_332,
                p,
                sandbox=sandbox,
                cwd=cwd,
                base_url=api.base_url,
                session_id=sid if i == 0 else None,
                resume=None if i == 0 else sid,
            )
        path = next((sandbox.config_dir / "projects").rglob(f"{sid}.jsonl"))
        recs = [json.loads(x) for x in path.read_text().splitlines()]
        at = next(
            r["parentUuid"] for r in recs if r.get("type") == "user" and r["message"]["content"] == dropped[0]
        )
        run_claude(
            claude_332,
            "Instead, this",
            sandbox=sandbox,
            cwd=cwd,
            base_url=api.base_url,
            resume=sid,
            extra_args=["--resume-session-at", at],
        )
    s = Session.from_entries(load(path).entries, path)
    (d,) = dead_branches(s)
    assert [s.nodes[i].content for i in d.nodes if s.nodes[i].type == "user"] == dropped
    assert s.nodes[d.fork].uuid == at  # type: ignore[index]
