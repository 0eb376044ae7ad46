"""New user report 4, finding 5, against the real client: what Claude Code 2.1.332 rebuilds
from files whose records have several roots or no uuid at all (other readers' public test
data, fixtures/public-testdata), which is what `tt show` shows; the rest it says it left out
(tests/show/test_show.py::test_show_says_which_message_lines_it_does_not_show_and_why).

- ``-tmp-alpha/11111111-1111-…``: a prompt and an answer, neither with a ``parentUuid``:
  2.1.332 sends the answer alone (the last message's chain), never the prompt.
- ``-tmp-golden/11111111-2222-…``: no record has a ``uuid``: 2.1.332 resumed from the
  directory of the file's project folder sends none of it (the probe alone); from any other
  directory it exits 1, "No conversation found with session ID".
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.claude_cli import ClaudeCLI, ClaudeRunError
from tests.support.oracle import DEFAULT_PROBE, conversation_blocks, resume_with_cli
from tests.support.paths import PUBLIC
from tests.support.sessions import project_folder_name
from transcript_tools.show.core import Message, build, not_shown
from transcript_tools.show.files import load_for_show

pytestmark = pytest.mark.claude


def _staged(tmp_path: Path, src: Path, sid: str) -> tuple[Path, Path]:
    cwd = (tmp_path / "work").resolve()
    cwd.mkdir()
    folder = tmp_path / "config" / "projects" / project_folder_name(cwd)
    folder.mkdir(parents=True)
    shutil.copy(src, folder / f"{sid}.jsonl")
    return tmp_path / "config", cwd


def test_two_roots_resume_as_the_last_messages_chain(claude_332: ClaudeCLI, tmp_path: Path) -> None:
    sid = "11111111-1111-1111-1111-111111111111"
    src = PUBLIC / "projects" / "-tmp-alpha" / f"{sid}.jsonl"
    config, cwd = _staged(tmp_path, src, sid)
    sent = [b.value for b in conversation_blocks(resume_with_cli(claude_332, config, sid, cwd))]
    shown = load_for_show(src)
    items = build(shown.session)
    texts = [b.text for i in items if isinstance(i, Message) for b in i.blocks if b.kind == "text"]
    assert texts == ["Three."] and sent[:-1] == texts  # the probe is last
    assert "Count the widgets." not in sent
    assert not_shown(shown.session).off_chain == (1,)  # the prompt, said to be left out


def test_no_uuid_is_no_conversation(claude_332: ClaudeCLI, tmp_path: Path) -> None:
    sid = "11111111-2222-3333-4444-555555555555"
    src = PUBLIC / "projects" / "-tmp-golden" / f"{sid}.jsonl"
    config, cwd = _staged(tmp_path, src, sid)
    sent = conversation_blocks(resume_with_cli(claude_332, config, sid, cwd))
    assert [b.value for b in sent] == [DEFAULT_PROBE]
    # Under a project folder of another directory: not found at all.
    other = tmp_path / "elsewhere"
    (other / "config" / "projects" / "-tmp-golden").mkdir(parents=True)
    shutil.copy(src, other / "config" / "projects" / "-tmp-golden" / f"{sid}.jsonl")
    with pytest.raises(ClaudeRunError, match=f"No conversation found with session ID: {sid}"):
        resume_with_cli(claude_332, other / "config", sid, cwd)
    shown = load_for_show(src)
    assert [i for i in build(shown.session) if isinstance(i, Message)] == []
    assert len(not_shown(shown.session).no_uuid) == 18
