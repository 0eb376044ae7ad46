"""`manage`: rename/tag records byte for byte as the Agent SDK writes them, and the
delete plan's rules."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools.manage.core import Found, plan_delete, rename_line, sanitize_unicode, tag_line
from transcript_tools.model.errors import UsageError

SID = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
SEED = (
    b'{"type":"user","uuid":"u","parentUuid":null,"sessionId":"'
    + SID.encode()
    + b'","message":{"role":"user","content":"hi"}}\n'
)


@pytest.fixture(scope="module")
def sdk_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A one-line session under a private CLAUDE_CONFIG_DIR, for the SDK to append to
    (module-scoped: hypothesis runs many inputs; `_sdk_appended` resets the file)."""
    root = tmp_path_factory.mktemp("sdk-config")
    project = root / "projects" / "-tmp-x"
    project.mkdir(parents=True)
    path = project / f"{SID}.jsonl"
    path.write_bytes(SEED)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CLAUDE_CONFIG_DIR", str(root))
        yield path


def _sdk_appended(path: Path, call: object, *args: object) -> bytes:
    path.write_bytes(SEED)
    call(SID, *args)  # type: ignore[operator]
    return path.read_bytes()[len(SEED) :]


TEXT = st.text(st.characters(codec="utf-8"), max_size=40)


@settings(max_examples=200, deadline=None)
@given(title=TEXT)
def test_rename_line_is_the_sdk_bytes(sdk_session: Path, title: str) -> None:
    from claude_agent_sdk import rename_session

    if not title.strip():
        with pytest.raises(UsageError):
            rename_line(SID, title)
        with pytest.raises(ValueError):
            rename_session(SID, title)
        return
    assert rename_line(SID, title) == _sdk_appended(sdk_session, rename_session, title)


@settings(max_examples=200, deadline=None)
@given(tag=st.one_of(TEXT, st.sampled_from(["", "exp\u200b-1", "\ufeff", "ｆｕｌｌ", "e\u0301"])))
def test_tag_line_is_the_sdk_bytes(sdk_session: Path, tag: str) -> None:
    from claude_agent_sdk import tag_session

    if tag == "":
        # An empty tag clears, as the SDK's tag_session(id, None) does.
        assert tag_line(SID, "") == tag_line(SID, None) == _sdk_appended(sdk_session, tag_session, None)
        return
    if not sanitize_unicode(tag).strip():
        with pytest.raises(UsageError):
            tag_line(SID, tag)
        with pytest.raises(ValueError):
            tag_session(SID, tag)
        return
    assert tag_line(SID, tag) == _sdk_appended(sdk_session, tag_session, tag)


@settings(deadline=None)
@given(st.text(max_size=30))
def test_sanitize_unicode_matches_the_sdk(value: str) -> None:
    from claude_agent_sdk._internal.session_mutations import _sanitize_unicode

    assert sanitize_unicode(value) == _sanitize_unicode(value)


def test_text_that_is_not_unicode_is_refused() -> None:
    with pytest.raises(UsageError):
        rename_line(SID, "bad \udcff bytes")
    with pytest.raises(UsageError):
        tag_line(SID, "\udcff")


def test_tag_line_opens_with_the_bytes_list_sessions_looks_for() -> None:
    assert tag_line(SID, "x").startswith(b'{"type":"tag"')
    assert (
        rename_line(SID, " Hé ")
        == b'{"type":"custom-title","customTitle":"H\\u00e9","sessionId":"' + SID.encode() + b'"}\n'
    )


# --- delete plan ------------------------------------------------------------------------


def test_plan_for_a_session_takes_its_folder_history_and_legacy_agents(tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "p"
    main = Found(proj / f"{SID}.jsonl", False, 1, 100)
    plan = plan_delete(
        main,
        session_folder=Found(proj / SID, True, 2, 50),
        file_history=Found(tmp_path / "file-history" / SID, True, 3, 30),
        legacy_subagents=[
            Found(proj / "agent-0c4c3cf8.jsonl", False, 1, 7),
            Found(tmp_path / "agent-elsewhere.jsonl", False, 1, 9),
        ],
    )
    assert [t.kind for t in plan.targets] == [
        "transcript",
        "session-folder",
        "file-history",
        "legacy-subagent",
    ]
    assert plan.session_id == SID and plan.files == 1 + 2 + 3 + 1 and plan.bytes == 187
    assert plan.targets[1].is_dir and plan.to_dict()["files"] == 7


def test_plan_never_takes_folders_for_a_file_not_named_by_a_session_id(tmp_path: Path) -> None:
    main = Found(tmp_path / "notes.jsonl", False, 1, 10)
    plan = plan_delete(
        main,
        session_folder=Found(tmp_path / "notes", True, 5, 500),
        file_history=Found(tmp_path / "notes", True, 1, 1),
    )
    assert [t.kind for t in plan.targets] == ["transcript"] and plan.session_id is None


def test_plan_ignores_folders_of_another_session(tmp_path: Path) -> None:
    main = Found(tmp_path / f"{SID}.jsonl", False, 1, 10)
    other = "00000000-0000-4000-8000-000000000000"
    plan = plan_delete(
        main,
        session_folder=Found(tmp_path / other, True, 1, 1),
        file_history=Found(tmp_path / other, True, 1, 1),
    )
    assert [t.kind for t in plan.targets] == ["transcript"]
    with pytest.raises(UsageError):
        plan_delete(Found(tmp_path, True, 0, 0))
