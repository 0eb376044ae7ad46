"""`rewind` (the plan) and `rewind_files` (applying it) on the file checkpoints real
Claude Code wrote: 2.1.332 (``file-history-delta`` records) and 2.1.197
(``isSnapshotUpdate`` snapshots), each a session that wrote ``util.py`` and edited
``app.py``, with the backups in ``file-history/<session>/``. Files come back byte for
byte; files that did not exist are deleted; links and paths outside the project are
left alone."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.support.paths import REAL
from transcript_tools.edge.loader import load_session
from transcript_tools.model.errors import UsageError
from transcript_tools.rewind.core import (
    CREATE,
    DELETE,
    NOT_CHECKPOINTED,
    OUTSIDE,
    REFUSED,
    RESTORE,
    UNCHANGED,
    FileChange,
    history,
    plan_rewind,
    resolve_target,
    snapshots_along,
    unified_diff,
)
from transcript_tools.rewind.files import FileReader, apply_plan

HELLO = b"print('hello')\n"
HELLO_WORLD = b"print('hello world')\n"
UTIL = b"def add(a, b):\n    return a + b\n"

CASES = {
    # version: (config, session id, {step: prompt uuid})
    "2.1.332": (
        "claude-config-2.1.332",
        "4cd0c8e6-36cd-4af9-9a2d-9191b504fada",
        {
            "kickoff": "f4c86b1a",
            "write": "21327ba7",
            "edit": "480ab244",
            "glob": "5442c506",
            "after_compact": "5f7d7d2d",
        },
    ),
    "2.1.197": (
        "claude-config-2.1.197",
        "8c2f9135-4610-4218-97b1-bc3e03643255",
        {
            "kickoff": "0d3f856e",
            "write": "4ddf7cc7",
            "edit": "6af95a4a",
            "glob": "8f82325b",
            "after_compact": "03f36487",
        },
    ),
}


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[object, Path, Path, dict[str, str]]:
    config_name, sid, steps = CASES[request.param]
    src = REAL / config_name
    backups = src / "file-history" / sid
    s = load_session(src / "projects/-home-dev-demo-app" / f"{sid}.jsonl").session
    cwd = tmp_path / "demo-app"
    cwd.mkdir()
    # The state at the end of the session, as the CLI left the files.
    (cwd / "app.py").write_bytes((backups / "cf6fbccebed484a3@v2").read_bytes())
    (cwd / "util.py").write_bytes((backups / "7f2e923fda84009b@v2").read_bytes())
    return s, cwd, backups, steps


def _plan(s: object, cwd: Path, backups: Path, spec: str, **kw: object):  # type: ignore[no-untyped-def]
    reader = FileReader(backups, str(cwd.resolve()))
    return plan_rewind(
        s, resolve_target(s, spec), cwd=str(cwd.resolve()), current=reader.current, backup=reader.backup, **kw
    )  # type: ignore[arg-type]


def _actions(plan) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {Path(f.path).name: f.action for f in plan.files}


def test_backups_are_what_the_cli_saved() -> None:
    for config_name, sid, _ in CASES.values():
        b = REAL / config_name / "file-history" / sid
        assert (b / "cf6fbccebed484a3@v1").read_bytes() == HELLO
        assert (b / "cf6fbccebed484a3@v2").read_bytes() == HELLO_WORLD
        assert (b / "7f2e923fda84009b@v2").read_bytes() == UTIL


def test_snapshots_are_rebuilt_along_the_conversation(case) -> None:  # type: ignore[no-untyped-def]
    s, _, _, steps = case
    ix = s.index
    snaps = snapshots_along(s, history(ix, ix.active_leaf()))
    by_prefix = {x.message_id[:8]: x for x in snaps}
    write = by_prefix[steps["write"]].backups
    assert write["util.py"].name is None and write["util.py"].version == 1  # Write: did not exist
    edit = by_prefix[steps["edit"]].backups
    assert edit["util.py"].name == "7f2e923fda84009b@v2" and edit["app.py"].name == "cf6fbccebed484a3@v1"
    assert by_prefix[steps["after_compact"]].backups == {}  # tracking restarts after /compact


def test_rewind_to_the_write_prompt_restores_app_and_deletes_util(case) -> None:  # type: ignore[no-untyped-def]
    s, cwd, backups, steps = case
    plan = _plan(s, cwd, backups, steps["write"])
    assert _actions(plan) == {"app.py": RESTORE, "util.py": DELETE}
    assert [Path(f.path).name for f in plan.files] == ["app.py", "util.py"]  # deletions last
    results = apply_plan(plan, backups)
    assert all(r.done for r in results)
    assert (cwd / "app.py").read_bytes() == HELLO and not (cwd / "util.py").exists()
    # Forward again, to the Glob prompt: both files as they were then, byte for byte.
    plan = _plan(s, cwd, backups, steps["glob"])
    assert _actions(plan) == {"app.py": RESTORE, "util.py": CREATE}
    apply_plan(plan, backups)
    assert (cwd / "app.py").read_bytes() == HELLO_WORLD and (cwd / "util.py").read_bytes() == UTIL
    # A rewind to where the files already are changes nothing.
    assert _actions(_plan(s, cwd, backups, steps["glob"])) == {"app.py": UNCHANGED, "util.py": UNCHANGED}


def test_rewind_to_the_edit_prompt_and_the_kickoff(case) -> None:  # type: ignore[no-untyped-def]
    s, cwd, backups, steps = case
    plan = _plan(s, cwd, backups, steps["edit"])
    assert _actions(plan) == {"app.py": RESTORE, "util.py": UNCHANGED}
    apply_plan(plan, backups)
    assert (cwd / "app.py").read_bytes() == HELLO and (cwd / "util.py").read_bytes() == UTIL
    # Before any edit: files tracked later go back to their first version (or away).
    plan = _plan(s, cwd, backups, steps["kickoff"])
    assert _actions(plan) == {"app.py": UNCHANGED, "util.py": DELETE}
    apply_plan(plan, backups)
    assert sorted(p.name for p in cwd.iterdir()) == ["app.py"] and (cwd / "app.py").read_bytes() == HELLO


def test_after_compaction_the_files_are_not_checkpointed_and_left_alone(case) -> None:  # type: ignore[no-untyped-def]
    s, cwd, backups, steps = case
    plan = _plan(s, cwd, backups, steps["after_compact"])
    assert set(_actions(plan).values()) == {NOT_CHECKPOINTED} and not plan.changes


def test_a_message_that_is_not_a_prompt_takes_the_next_prompts_checkpoint(case) -> None:  # type: ignore[no-untyped-def]
    s, cwd, backups, steps = case
    nodes = [s.nodes[i] for i in history(s.index, s.index.active_leaf())]  # across /compact
    uuids = [e.uuid for e in nodes]
    glob = next(i for i, u in enumerate(uuids) if u.startswith(steps["glob"]))
    edit = next(i for i, u in enumerate(uuids) if u.startswith(steps["edit"]))
    # The last message of the Edit turn: the state when the Glob prompt was sent.
    last_of_edit_turn = nodes[glob - 1].uuid
    plan = _plan(s, cwd, backups, last_of_edit_turn)
    assert plan.snapshot.startswith(steps["glob"]) and plan.note is not None
    # The Edit tool call itself: app.py was edited after it in that turn; never saved.
    call = next(
        e.uuid
        for e in nodes[edit:glob]
        if e.type == "assistant"
        and any(b.get("name") == "Edit" for b in e.content or [] if isinstance(b, dict))
    )
    with pytest.raises(UsageError, match="edited after message"):
        _plan(s, cwd, backups, call)


def test_symlinks_and_paths_outside_the_project_are_left_alone(case, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    s, cwd, backups, steps = case
    outside = tmp_path / "outside.py"
    outside.write_bytes(b"precious\n")
    (cwd / "app.py").unlink()
    os.symlink(outside, cwd / "app.py")
    plan = _plan(s, cwd, backups, steps["write"])
    assert _actions(plan) == {"app.py": REFUSED, "util.py": DELETE}
    apply_plan(plan, backups)
    assert outside.read_bytes() == b"precious\n" and (cwd / "app.py").is_symlink()
    # A project folder reached through a symlinked parent is refused too.
    real = tmp_path / "real-sub"
    real.mkdir()
    link_cwd = tmp_path / "linked"
    link_cwd.mkdir()
    os.symlink(real, link_cwd / "sub")
    reader = FileReader(backups, str(link_cwd.resolve()))
    with pytest.raises(Exception, match="resolves to"):
        reader.current(str(link_cwd.resolve() / "sub" / "x.py"))


def _synthetic(
    tmp_path: Path, tracked: dict[str, dict[str, object]], *, branch: bool = False
) -> tuple[Path, Path]:
    """A small session: prompt P1, answer A1, (a dead branch P2x), prompt P2, answer A2;
    P1's snapshot tracks ``tracked``; an edit of it during P1's turn as a delta."""
    import json

    sid = "11111111-1111-4111-8111-111111111111"

    def u(n: int) -> str:
        return f"00000000-0000-4000-8000-{n:012d}"

    recs: list[dict[str, object]] = []

    def msg(n: int, parent: int | None, role: str, content: object) -> None:
        recs.append(
            {
                "type": role,
                "uuid": u(n),
                "parentUuid": None if parent is None else u(parent),
                "sessionId": sid,
                "isSidechain": False,
                "timestamp": "2026-11-29T00:00:00.000Z",
                "cwd": "/proj",
                "message": {"role": role, "content": content},
            }
        )

    msg(1, None, "user", "first prompt")
    recs.append(
        {
            "type": "file-history-snapshot",
            "messageId": u(1),
            "snapshot": {"messageId": u(1), "trackedFileBackups": {}, "timestamp": "t"},
            "isSnapshotUpdate": False,
        }
    )
    msg(2, 1, "assistant", [{"type": "tool_use", "id": "toolu_1", "name": "Edit", "input": {}}])
    for path, backup in tracked.items():
        recs.append(
            {
                "type": "file-history-delta",
                "messageId": u(2),
                "snapshotMessageId": u(1),
                "trackingPath": path,
                "backup": backup,
                "timestamp": "t",
            }
        )
    msg(3, 2, "user", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}])
    msg(4, 3, "assistant", [{"type": "text", "text": "done"}])
    if branch:
        msg(9, 4, "user", "abandoned prompt")
        recs.append(
            {
                "type": "file-history-snapshot",
                "messageId": u(9),
                "snapshot": {"messageId": u(9), "trackedFileBackups": {}, "timestamp": "t"},
                "isSnapshotUpdate": False,
            }
        )
    msg(5, 4, "user", "second prompt")
    recs.append(
        {
            "type": "file-history-snapshot",
            "messageId": u(5),
            "snapshot": {
                "messageId": u(5),
                "trackedFileBackups": {
                    p: {**b, "version": 2, "backupFileName": "h@v2"} for p, b in tracked.items()
                },
                "timestamp": "t",
            },
            "isSnapshotUpdate": False,
        }
    )
    msg(6, 5, "assistant", [{"type": "text", "text": "ok"}])
    d = tmp_path / "projects" / "-proj"
    d.mkdir(parents=True)
    f = d / f"{sid}.jsonl"
    f.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in recs))
    fh = tmp_path / "file-history" / sid
    fh.mkdir(parents=True)
    (fh / "h@v1").write_bytes(b"v1\n")
    (fh / "h@v2").write_bytes(b"v2\n")
    return f, fh


def test_absolute_tracking_paths_outside_the_cwd_need_allow_outside(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "x.py"
    target.parent.mkdir()
    target.write_bytes(b"now\n")
    proj = tmp_path / "proj"
    proj.mkdir()
    f, fh = _synthetic(tmp_path, {str(target): {"backupFileName": "h@v1", "version": 1}})
    s = load_session(f).session
    reader = FileReader(fh, str(proj))
    p1 = "00000000-0000-4000-8000-000000000001"
    plan = plan_rewind(s, resolve_target(s, p1), cwd=str(proj), current=reader.current, backup=reader.backup)
    assert [(f.path, f.action) for f in plan.files] == [(str(target), OUTSIDE)] and not plan.changes
    plan = plan_rewind(
        s,
        resolve_target(s, p1),
        cwd=str(proj),
        current=reader.current,
        backup=reader.backup,
        allow_outside=True,
    )
    assert [f.action for f in plan.files] == [RESTORE]
    apply_plan(plan, fh)
    assert target.read_bytes() == b"v1\n"


def test_a_prompt_on_a_dead_branch_rewinds_along_its_own_branch(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "a.py").write_bytes(b"now\n")
    f, fh = _synthetic(tmp_path, {"a.py": {"backupFileName": "h@v1", "version": 1}}, branch=True)
    s = load_session(f).session
    dead = "00000000-0000-4000-8000-000000000009"
    assert s.index.find(dead) in s.index.dead_branches()
    reader = FileReader(fh, str(proj))
    plan = plan_rewind(
        s, resolve_target(s, dead), cwd=str(proj), current=reader.current, backup=reader.backup
    )
    # On the dead branch, after P1's turn: the snapshot carries nothing, and a.py's first
    # backup after it is the live branch's v2 — not a version 1: never saved there.
    assert [f.action for f in plan.files] == [NOT_CHECKPOINTED]
    plan = plan_rewind(
        s,
        resolve_target(s, "00000000-0000-4000-8000-000000000001"),
        cwd=str(proj),
        current=reader.current,
        backup=reader.backup,
    )
    assert [(Path(f.path).name, f.action, f.after) for f in plan.files] == [("a.py", RESTORE, b"v1\n")]


def test_missing_backup_is_reported_not_guessed(case, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    s, cwd, backups, steps = case
    partial = tmp_path / "fh"
    shutil.copytree(backups, partial)
    (partial / "cf6fbccebed484a3@v1").unlink()
    plan = _plan(s, cwd, partial, steps["write"])
    assert _actions(plan)["app.py"] == "backup-missing" and plan.problems


def test_unified_diff() -> None:
    c = FileChange("a.py", "/p/a.py", RESTORE, "x@v1", b"one\ntwo\n", b"one\n2\n")
    assert unified_diff(c) == "--- /p/a.py\n+++ /p/a.py\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
    d = FileChange("b.py", "/p/b.py", DELETE, None, b"x", None)
    assert unified_diff(d).startswith(
        "--- /p/b.py\n+++ /dev/null\n"
    ) and "\\ No newline at end of file" in unified_diff(d)
    assert (
        unified_diff(FileChange("c", "/p/c", RESTORE, "x", b"\xff\x00", b"\x00"))
        == "Binary files /p/c and /p/c differ\n"
    )
    assert unified_diff(FileChange("c", "/p/c", UNCHANGED, "x", b"a", b"a")) == ""


def test_a_session_without_checkpoints_says_so() -> None:
    p = next((REAL / "claude-config-2.1.332-rewind-resume-session-at/projects").rglob("*.jsonl"))
    s = load_session(p).session
    reader = FileReader(Path("/nonexistent"), "/tmp")
    with pytest.raises(UsageError, match="no file checkpoints"):
        plan_rewind(s, resolve_target(s, "1"), cwd="/tmp", current=reader.current, backup=reader.backup)


def test_no_checkpoints_is_said_before_a_missing_project_folder(tmp_path: Path) -> None:
    # The session's folder (/home/dev/... on the machine that wrote it) is not here, and the
    # session has no file-history-snapshot records: the second is what to tell, since naming
    # the folder with --cwd would only lead to it.
    from transcript_tools.rewind.files import plan_files

    p = next((REAL / "claude-config-2.1.332-rewind-resume-session-at/projects").rglob("*.jsonl"))
    s = load_session(p).session
    assert not Path(s.first_cwd() or "/").is_dir() or s.first_cwd() is None
    with pytest.raises(UsageError, match="no file checkpoints"):
        plan_files(p, s, s.session_id or "x", resolve_target(s, "1"))
    with pytest.raises(UsageError, match="no file checkpoints"):
        plan_files(p, s, s.session_id or "x", resolve_target(s, "1"), cwd=tmp_path / "gone")


# --- found by a new user -------------------------------------------------------------


def test_finding_list_names_the_checkpoints_at_takes(tmp_path: Path) -> None:
    """New-user pass: there was no way to see which messages have a file checkpoint but to
    guess an --at until a hint named one. `--list` names them, from the records Claude Code
    2.1.332 wrote: one per prompt it keyed a file-history-snapshot to, in file order."""
    import json

    from tests.support.cli import tt
    from tests.support.paths import CONFIG_332

    session = next((CONFIG_332 / "projects").glob("*/4cd0c8e6-*.jsonl"))
    written = [
        r["messageId"]
        for r in map(json.loads, session.read_text().splitlines())
        if r.get("type") == "file-history-snapshot"
    ]
    r = tt("rewind", "4cd0", "--list", "--json", config=CONFIG_332)
    assert r.returncode == 0, r.stderr
    listed = json.loads(r.stdout)["checkpoints"]
    assert [c["uuid"] for c in listed] == list(dict.fromkeys(written)) and len(listed) == 14
    assert listed[0]["prompt"] == "Project kickoff 13000: we work on app.py"
    text = tt("rewind", "4cd0", "--list", config=CONFIG_332, width=200).stdout
    assert text.splitlines()[0].startswith(listed[0]["uuid"]) and "14 checkpoint(s)" in text
    # Each names a state --at takes: the plan for one of them is made (the folder is given).
    r = tt(
        "rewind", "4cd0", "--at", listed[4]["uuid"], "--dry-run", "--cwd", str(tmp_path), config=CONFIG_332
    )
    assert r.returncode in (0, 1) and f"Rewind files to message {listed[4]['uuid']}" in r.stdout, r.stderr
    # --at or --list, one of them.
    for args in ((), ("--list", "--at", "1")):
        r = tt("rewind", "4cd0", *args, config=CONFIG_332)
        assert r.returncode == 2 and "--at UUID|N, or --list" in r.stderr


def test_finding_a_project_folder_that_is_not_here_is_not_found() -> None:
    # New-user pass: exit 2 (usage); the README's 3 is "not found: file, session, project".
    from tests.support.cli import tt
    from tests.support.paths import CONFIG_332

    r = tt("rewind", "4cd0", "--at", "f4c86b1a", "--dry-run", config=CONFIG_332)  # /home/dev/demo-app
    assert r.returncode == 3 and "the session's project folder is not here" in r.stderr


def test_a_fork_without_checkpoints_names_the_session_that_has_them(tmp_path: Path) -> None:
    # A new user rewound a `tt fork` of a session with checkpoints and was told that Claude
    # Code writes them in interactive sessions; a fork copies the messages, not the file
    # checkpoints (as the SDK's fork_session): the original is where they are.
    from tests.support.cli import tt
    from tests.support.paths import CONFIG_332
    from tests.support.trees import stage

    config = stage(CONFIG_332, tmp_path / "config")
    sid = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
    assert "no file checkpoints" not in tt("rewind", sid, "--list", config=config).stdout
    fork = tt("fork", sid, "--json", config=config)
    assert fork.returncode == 0, fork.stderr
    import json

    new = json.loads(fork.stdout)["session_id"]
    r = tt("rewind", new, "--list", config=config)
    assert r.returncode == 0 and "no file checkpoints" in r.stdout
    assert f"a fork of session {sid}" in r.stdout and f"rewind {sid} instead" in r.stdout
    r = tt("rewind", new, "--at", "1", "--dry-run", config=config)
    assert r.returncode == 2 and f"rewind {sid} instead" in r.stderr, r.stderr
    # A fork of the fork: the session up the chain that has them, not its own parent (which
    # has none either: a new user's find), in the JSON too.
    again = tt("fork", new, "--json", config=config)
    newer = json.loads(again.stdout)["session_id"]
    r = tt("rewind", newer, "--list", config=config)
    assert f"rewind {sid} instead" in r.stdout and new not in r.stdout, r.stdout
    doc = json.loads(tt("rewind", newer, "--list", "--json", config=config).stdout)
    assert doc["checkpoints"] == [] and doc["checkpoints_in"] == sid
    assert json.loads(tt("rewind", sid, "--list", "--json", config=config).stdout)["checkpoints_in"] is None
