"""New user report 2, finding 2, against the real client: what `tt show --tree` calls dead
in the 1.0.51 session whose answer was written again as a root is what Claude Code 2.1.332
leaves out when it resumes the session, and what it calls history is sent.

The session (``v1.0.51-response-line-rewritten-as-root.jsonl``): line 1 a prompt, line 2
its answer, line 3 the same answer (same ``message.id``) as a new root, lines 4-5 the next
turn. 2.1.332 sends line 2's text with line 3's (the user saw it twice), never line 1.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.claude_cli import ClaudeCLI
from tests.support.oracle import Block, conversation_blocks, resume_with_cli
from tests.support.paths import REAL
from tests.support.sessions import project_folder_name
from transcript_tools.edge.reader import load
from transcript_tools.model.session import Session
from transcript_tools.show.tree import build_forest, dead_branches

pytestmark = pytest.mark.claude

FIXTURE = REAL / "v1.0.51-response-line-rewritten-as-root.jsonl"
SID = "ee84c64e-01b1-4a51-9876-d79ddad1fe49"


def test_what_the_tree_calls_dead_claude_code_does_not_send(claude_332: ClaudeCLI, tmp_path: Path) -> None:
    cwd = (tmp_path / "handy-cli").resolve()
    cwd.mkdir()
    folder = tmp_path / "config" / "projects" / project_folder_name(cwd)
    folder.mkdir(parents=True)
    (folder / f"{SID}.jsonl").write_bytes(FIXTURE.read_bytes())
    sent = conversation_blocks(resume_with_cli(claude_332, tmp_path / "config", SID, cwd))

    s = Session.from_entries(load(FIXTURE).entries, FIXTURE)
    forest = build_forest(s)
    dead = {i for d in dead_branches(s) for i in d.nodes}  # what the footer lists
    texts = {"dead": [], "history": []}  # type: dict[str, list[Block]]
    for i in forest.kept:
        e = s.nodes[i]
        c = e.content
        text = c if isinstance(c, str) else next(b["text"] for b in c if b.get("type") == "text")  # type: ignore[union-attr]
        texts["dead" if i in dead else "history"].append(Block(e.type or "", "text", text))
    assert [b.value for b in texts["dead"]] == ["Run timeout command sleep 1"]
    assert not set(texts["dead"]) & set(sent)
    # Every history line is sent, line 2's answer as often as it is written (twice).
    assert [b for b in sent if b in texts["history"]] == texts["history"]
