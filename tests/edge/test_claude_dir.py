"""Session resolution and Claude Code's project-folder rule."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.support.paths import CONFIG_332, REAL
from tests.support.trees import stage
from transcript_tools.edge import claude_dir as store
from transcript_tools.model.errors import AmbiguousSession, NotFound, UsageError


@pytest.mark.parametrize(
    "cwd,name",
    [
        ("/Users/zawakin/agent-sample", "-Users-zawakin-agent-sample"),
        ("/Users/alex/workspace/cli/.worktrees/2", "-Users-alex-workspace-cli--worktrees-2"),
        ("/home/dev/demo-app", "-home-dev-demo-app"),
    ],
)
def test_project_dir_name_examples_from_real_files(cwd: str, name: str) -> None:
    assert store.project_dir_name(cwd) == name


def test_project_dir_name_matches_the_agent_sdk() -> None:
    sdk = pytest.importorskip("claude_agent_sdk._internal.sessions")
    for cwd in ["/a/b-c", "/tmp/ü ñ", "/" + "x" * 250, "/" + "/".join(["deep"] * 60)]:
        assert store.project_dir_name(cwd) == sdk._sanitize_path(cwd)


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cfg = tmp_path / "cfg"
    stage(CONFIG_332, cfg)
    shutil.copytree(
        REAL / "claude-config-2.1.197/projects/-home-dev-demo-app",
        cfg / "projects/-home-dev-demo-app",
        dirs_exist_ok=True,
    )
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(cfg))
    return cfg


def test_resolve_by_id_prefix_and_path(config: Path) -> None:
    full = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
    r = store.resolve(full)
    assert r.session_id == full and r.path.parent.name == "-home-dev-demo-app"
    assert store.resolve("4cd0").path == r.path
    assert store.resolve(str(r.path)).path == r.path


def test_ambiguous_and_missing(config: Path) -> None:
    proj = config / "projects/-home-dev-demo-app"
    shutil.copy(
        proj / "4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl",
        proj / "4cd0c8e6-0000-4000-8000-000000000000.jsonl",
    )
    with pytest.raises(AmbiguousSession) as e:
        store.resolve("4cd0c8e6")
    assert e.value.exit_code == 3
    with pytest.raises(NotFound):
        store.resolve("ffffffff")
    with pytest.raises(NotFound):
        store.resolve("missing/file.jsonl")


def test_an_id_never_escapes_the_config_dir(config: Path) -> None:
    # Not an existing path, so taken as an id: rejected before any path is built.
    for bad in ["..", "4cd0..", "4cd0c8e6\\..", "~root", "*", "4cd0c8e6 x"]:
        with pytest.raises(UsageError):
            store.resolve(bad) if bad != ".." else store.resolve(bad, root=config / "nowhere")
    with pytest.raises(NotFound):
        store.resolve("../../no-such-session")


def test_latest_session_of_this_directory(config: Path, tmp_path: Path) -> None:
    proj = config / "projects/-home-dev-demo-app"
    older = proj / "8c2f9135-4610-4218-97b1-bc3e03643255.jsonl"
    newer = proj / "4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
    os.utime(older, (1, 1))
    os.utime(newer, (2_000_000_000, 2_000_000_000))
    # /home/dev/demo-app does not exist here: find_project_dir must work from the name.
    target = store.find_project_dir("/home/dev/demo-app", config / "projects")
    assert target == proj
    work = tmp_path / "elsewhere"
    work.mkdir()
    with pytest.raises(NotFound):
        store.resolve(None, cwd=work)


def test_subagent_files(config: Path) -> None:
    main = config / "projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
    assert [p.name for p in store.subagent_files(main)] == ["agent-a57f9afd470043d69.jsonl"]


def test_a_path_that_is_no_regular_file_is_unreadable_not_missing() -> None:
    # New-user pass: `tt validate /dev/null` exited 3 ("not found") for a path that is
    # there; it is one tt cannot read as a transcript (exit 4, as a file without read rights).
    from transcript_tools.model.errors import Unreadable

    with pytest.raises(Unreadable, match="not a regular file"):
        store.resolve("/dev/null")
    assert Unreadable.exit_code == 4
