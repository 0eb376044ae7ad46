"""The README's Python section runs as written (every ```python block under "## Python
API", in order, in one namespace) against the shipped Claude Code 2.1.332 session
(fixtures/real/claude-config-2.1.332), staged as a private config dir. Each block's
effects are then checked against the files, not against what the API says of itself."""

from __future__ import annotations

import contextlib
import io
import json
import re
import zipfile
from pathlib import Path

import pytest

from tests.support.paths import CONFIG_332, ROOT
from tests.support.trees import stage

SID = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
PROJECT = "-home-dev-demo-app"


def _blocks() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Python API\n", 1)[1].split("\n## ", 1)[0]
    # The query() example needs a model: tests/resume/test_query.py runs it against the stand-in.
    section = re.sub(r"<!-- query-example -->\n```python\n.*?```", "", section, flags=re.S)
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cfg = tmp_path / "claude"
    stage(CONFIG_332, cfg)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(cfg))
    monkeypatch.setenv("TT_NOW", "2026-11-30T12:00:00Z")  # the clock is an input
    monkeypatch.chdir(work)
    return cfg


def test_readme_has_the_two_blocks() -> None:
    assert len(_blocks()) == 2


def test_readme_python_blocks_run(config: Path) -> None:
    project = config / "projects" / PROJECT
    original = (project / f"{SID}.jsonl").read_bytes()
    ns: dict[str, object] = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for block in _blocks():
            exec(compile(block, "README.md", "exec"), ns)
    printed = out.getvalue().splitlines()
    # list_sessions found the shipped session; validate read its main file.
    assert any(line.startswith(SID) for line in printed)
    assert Path(ns["report"].path).name == f"{SID}.jsonl"  # type: ignore[attr-defined]
    # The shipped session was only read: nothing the dry runs did touched it.
    assert (project / f"{SID}.jsonl").read_bytes() == original
    # The fork was written beside it, renamed and tagged, then deleted again.
    fork = ns["fork"]
    assert fork.written and fork.path.parent == project  # type: ignore[attr-defined]
    assert not fork.path.exists()  # type: ignore[attr-defined]
    # The bundle is a zip holding the transcript under its id.
    bundle = Path(ns["bundle"].path)  # type: ignore[attr-defined]
    with zipfile.ZipFile(bundle) as z:
        assert any(n.endswith(f"{SID}.jsonl") for n in z.namelist())
    assert SID in printed[-2]  # import_session(dry_run=True) read the manifest's id


def test_fork_rename_tag_records_on_disk(config: Path) -> None:
    """What the second block's rename and tag append, read back as Claude Code reads it:
    the last ``custom-title`` and ``tag`` records of the file (the delete is left out)."""
    blocks = _blocks()
    code = blocks[1].split("bundle = ", 1)[0]
    ns: dict[str, object] = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(blocks[0] + code, "README.md", "exec"), ns)
    path = ns["fork"].path  # type: ignore[attr-defined]
    recs = [json.loads(x) for x in path.read_bytes().splitlines() if x.strip()]
    titles = [r["customTitle"] for r in recs if r.get("type") == "custom-title"]
    tags = [r["tag"] for r in recs if r.get("type") == "tag"]
    assert titles[0] == "try B" and titles[-1] == "try B, renamed"
    assert tags == ["experiment"]
    assert {r.get("sessionId") for r in recs if "sessionId" in r} == {ns["fork"].session_id}  # type: ignore[attr-defined]
