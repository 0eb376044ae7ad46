"""`tt fork`, `tt rename`, `tt tag`, `tt delete` end to end: wiring, exit codes, --json
shapes, what lands on disk, and what the real readers make of it (the Agent SDK's
``list_sessions`` / ``get_session_messages``; marked ``claude``: the real CLI resuming a
fork)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.claude_cli import ClaudeCLI
from tests.support.cli import tt
from tests.support.oracle import compare_histories, conversation_blocks, resume_with_cli
from tests.support.paths import CONFIG_197, CONFIG_332, ROOT
from tests.support.policy import claude_code_policy, is_main_turn, last_user, prompt_text
from tests.support.sessions import GeneratedSession, stage_config
from tests.support.standin import Text
from tests.support.trees import digest, stage

DAMAGED = ROOT / "fixtures" / "damaged"
SID = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
PROJECT = "-home-dev-demo-app"
RECORDED_CWD = "/home/dev/demo-app"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return stage(CONFIG_332, tmp_path / "claude-config")


@pytest.fixture
def sdk_env(config: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    yield config


def project(config: Path) -> Path:
    return config / "projects" / PROJECT


def fork_json(config: Path, *args: str) -> dict:  # type: ignore[type-arg]
    r = tt("fork", SID, "--json", *args, config=config)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


# --- tt fork ------------------------------------------------------------------------


def test_fork_writes_a_new_session_beside_the_original_and_never_touches_it(config: Path) -> None:
    before = digest(project(config))
    out = fork_json(config)
    assert set(out) >= {"session_id", "path", "entries", "forked_from"}
    new = Path(out["path"])
    assert new == project(config) / f"{out['session_id']}.jsonl"
    assert new.stat().st_mode & 0o777 == 0o600
    assert out["forked_from"]["session_id"] == SID
    assert out["entries"] == len(new.read_bytes().splitlines())
    # The original, its subagents and sidecar: byte for byte as they were.
    after = digest(project(config))
    assert {k: v for k, v in after.items() if k in before} == before
    # The subagent was forked into the new session's folder, with its sidecar.
    sub = project(config) / out["session_id"] / "subagents" / "agent-a57f9afd470043d69.jsonl"
    assert [str(sub)] == out["subagents"] and sub.with_name("agent-a57f9afd470043d69.meta.json").is_file()
    assert all(json.loads(ln)["sessionId"] == out["session_id"] for ln in sub.read_text().splitlines())
    r = tt("validate", str(new), str(sub), config=config)
    assert r.returncode == 0 and "0 error(s), 0 warning(s)" in r.stdout, r.stdout


def test_fork_human_output_shows_ids_and_how_to_continue(config: Path) -> None:
    r = tt("fork", SID, config=config)
    assert r.returncode == 0, r.stderr
    new_id = next(p.stem for p in project(config).glob("*.jsonl") if p.stem != SID)
    assert f"Forked {SID} → {new_id}" in r.stdout
    assert f"tt resume {new_id}" in r.stdout
    assert f"cd {RECORDED_CWD} && claude --resume {new_id}" in r.stdout
    assert "(fork)" in r.stdout


def test_fork_at_n_and_at_uuid_report_the_cut(config: Path) -> None:
    # The 3rd message from the end is the Grep tool call: the cut moves to its result.
    out = fork_json(config, "--at", "3")
    assert out["at"]["asked"] == "2119681b-b435-4aea-86ef-4ec8785e73a5"
    assert out["forked_from"]["message_uuid"] == "7407daaa-ff9d-41c6-beef-f74e849fbcc6"
    assert "tool call" in out["at"]["moved"]
    out2 = fork_json(config, "--at", "886f247e", "--title", "  second try ")
    assert out2["forked_from"]["message_uuid"] == "886f247e-dc88-462d-96d6-d8a381728a8f"
    assert out2["at"]["moved"] is None and out2["title"] == "second try"
    assert len(out2["subagents"]) == 1  # the Agent call is before the cut
    early = fork_json(config, "--at", "9f610d91")  # an answer before the Agent call
    assert early["subagents"] == [] and not (project(config) / early["session_id"]).exists()


def test_fork_continue_takes_the_latest_session_of_this_directory(config: Path, tmp_path: Path) -> None:
    cwd = (tmp_path / "demo-app").resolve()
    cwd.mkdir()
    staged = stage_config(config, tmp_path / "staged", recorded_cwd=RECORDED_CWD, cwd=cwd)
    r = tt("fork", "-c", "--json", config=staged, cwd=cwd)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["forked_from"]["session_id"] == SID and out["in_project"] is True


def test_fork_usage_errors_and_not_found(config: Path) -> None:
    assert tt("fork", SID, "--at", "0", config=config).returncode == 2
    assert tt("fork", SID, "--at", "999", config=config).returncode == 3  # no such message
    r = tt("fork", SID, "--at", "deadbeef-0000", config=config)
    assert r.returncode == 3 and "no message" in r.stderr
    assert tt("fork", "no-such-session", config=config).returncode == 3
    assert tt("fork", SID, "--title", "  ", config=config).returncode == 2
    assert list(project(config).glob("*.jsonl")) == [project(config) / f"{SID}.jsonl"]


def test_fork_dry_run_writes_nothing(config: Path) -> None:
    before = digest(config)
    out = fork_json(config, "--dry-run")
    assert out["written"] is False and not Path(out["path"]).exists()
    assert digest(config) == before


def test_fork_output_elsewhere_and_never_overwrites(config: Path, tmp_path: Path) -> None:
    dest = tmp_path / "elsewhere"
    dest.mkdir()
    out = fork_json(config, "-o", str(dest))
    assert Path(out["path"]).parent == dest and out["in_project"] is False
    taken = dest / "taken.jsonl"
    taken.write_text("keep me\n")
    r = tt("fork", SID, "-o", str(taken), config=config)
    assert r.returncode == 6 and "already exists" in r.stderr
    assert taken.read_text() == "keep me\n"
    assert not (dest / "taken").exists()  # no subagent folder left behind


def test_fork_of_damaged_session_is_clean(tmp_path: Path) -> None:

    src = tmp_path / "damaged.jsonl"
    shutil.copy(DAMAGED / "torn-tail+fused-records+nul-run+dangling-parent.jsonl", src)
    before = src.read_bytes()
    r = tt("fork", str(src), "--json", "-o", str(tmp_path / "fork.jsonl"), config=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["repairs"]
    assert src.read_bytes() == before
    v = tt("validate", "--json", out["path"], config=tmp_path)
    assert json.loads(v.stdout)["errors"] == 0, v.stdout


# --- the Agent SDK reads what tt wrote --------------------------------------------------


def test_sdk_reads_the_fork_and_lists_it_with_its_title(sdk_env: Path) -> None:
    from claude_agent_sdk import get_session_messages, list_sessions

    out = fork_json(sdk_env, "--title", "Forked by tt")
    original = get_session_messages(SID)
    forked = get_session_messages(out["session_id"])
    assert forked and [m.message for m in forked] == [m.message for m in original]
    assert {m.session_id for m in forked} == {out["session_id"]}
    assert not {m.uuid for m in forked} & {m.uuid for m in original}
    listed = {s.session_id: s for s in list_sessions()}
    assert listed[out["session_id"]].custom_title == "Forked by tt"
    # Forked at a message, the SDK reads the conversation up to it.
    at = fork_json(sdk_env, "--at", "886f247e-dc88-462d-96d6-d8a381728a8f")
    cut = [m.message for m in get_session_messages(at["session_id"])]
    whole = [m.message for m in original]
    k = next(i for i, m in enumerate(original) if m.uuid == "886f247e-dc88-462d-96d6-d8a381728a8f")
    assert cut == whole[: k + 1]
    assert listed[out["session_id"]].summary == "Forked by tt"


def test_titles_and_tags_written_by_tt_appear_in_list_sessions(sdk_env: Path) -> None:
    from claude_agent_sdk import list_sessions

    def info() -> object:
        return next(s for s in list_sessions() if s.session_id == SID)

    assert tt("rename", SID[:8], "Démo: première ✓", config=sdk_env).returncode == 0
    assert tt("tag", SID, "exp\u200b-1", config=sdk_env).returncode == 0
    got = info()
    assert got.custom_title == "Démo: première ✓" and got.tag == "exp-1"  # type: ignore[attr-defined]
    r = tt("tag", SID, "", "--json", config=sdk_env)
    assert r.returncode == 0 and json.loads(r.stdout)["tag"] is None
    assert info().tag is None  # type: ignore[attr-defined]


def test_rename_and_tag_wiring(config: Path) -> None:
    path = project(config) / f"{SID}.jsonl"
    size = path.stat().st_size
    r = tt("rename", SID, "x", "--dry-run", "--json", config=config)
    assert r.returncode == 0 and json.loads(r.stdout)["written"] is False and path.stat().st_size == size
    assert tt("rename", SID, "   ", config=config).returncode == 2
    assert tt("tag", SID, "\u200b", config=config).returncode == 2
    assert tt("rename", "nope", "t", config=config).returncode == 3
    assert path.stat().st_size == size
    r = tt("rename", SID, "New name", config=config)
    assert r.returncode == 0 and "New name" in r.stdout
    assert path.read_bytes().endswith(
        b'{"type":"custom-title","customTitle":"New name","sessionId":"' + SID.encode() + b'"}\n'
    )


# --- tt delete ----------------------------------------------------------------------


def test_delete_dry_run_then_refuses_without_yes_then_deletes(config: Path) -> None:
    other = fork_json(config)["session_id"]
    history = config / "file-history" / SID
    r = tt("delete", SID, "--dry-run", "--json", config=config)
    assert r.returncode == 0
    plan = json.loads(r.stdout)
    assert {t["kind"] for t in plan["targets"]} == {"transcript", "session-folder", "file-history"}
    assert plan["deleted"] is False and plan["files"] == 1 + 2 + 3 and plan["would_fail"] is None
    assert history.is_dir()
    r = tt("delete", SID, config=config, input="")
    assert r.returncode == 2 and "--yes" in r.stderr
    r = tt("delete", SID, "--yes", config=config)
    assert r.returncode == 0, r.stderr
    assert "Deleted" in r.stdout
    assert not (project(config) / f"{SID}.jsonl").exists()
    assert not (project(config) / SID).exists() and not history.exists()
    # The fork (another session) is untouched.
    assert (project(config) / f"{other}.jsonl").is_file() and (project(config) / other / "subagents").is_dir()
    assert tt("delete", SID, "--yes", config=config).returncode == 3


def test_delete_takes_tt_s_backups_and_quarantines_of_the_session(config: Path) -> None:
    # A new user's find: after `tt repair --in-place` (or `redact --in-place`) the delete
    # left `<id>.jsonl.bak`, a whole copy of the session (the redacted secrets included),
    # listed nowhere. Another session's by-products stay.
    main = project(config) / f"{SID}.jsonl"
    other = fork_json(config)["session_id"]
    mine = [
        main.with_name(main.name + ".bak"),
        main.with_name(main.name + ".20261202T060000000000.bak"),
        main.with_name(main.name + ".quarantine.jsonl"),
    ]
    for p in mine:
        p.write_bytes(main.read_bytes())
    theirs = project(config) / f"{other}.jsonl.bak"
    theirs.write_bytes(b"{}\n")
    # A user's own copies under names tt never writes stay (a review's find).
    users = [
        main.with_name(main.name + ".before-upgrade.bak"),
        main.with_name(main.name + ".notes.quarantine.jsonl"),
    ]
    for p in users:
        p.write_bytes(b"mine\n")
    plan = json.loads(tt("delete", SID, "--dry-run", "--json", config=config).stdout)
    backups = sorted(t["path"] for t in plan["targets"] if t["kind"] == "tt-backup")
    assert backups == sorted(map(str, mine))
    r = tt("delete", SID, "--dry-run", config=config)
    assert r.returncode == 0 and all(str(p) in r.stdout for p in mine)
    r = tt("delete", SID, "--yes", config=config)
    assert r.returncode == 0, r.stderr
    assert not any(p.exists() for p in mine) and not main.exists()
    assert theirs.is_file() and (project(config) / f"{other}.jsonl").is_file()
    assert all(p.read_bytes() == b"mine\n" for p in users)


def test_a_delete_that_cannot_finish_deletes_nothing(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A new user's find (as an unprivileged user, in a project folder they cannot write):
    # the subagents went, then the transcript failed, and the message said only that the
    # transcript was still there. The folders are checked first now. (The tests run as
    # root, whom a mode does not stop: the check itself is what is tested.)
    import os

    from transcript_tools.edge import claude_dir as store
    from transcript_tools.manage.files import remove, survey
    from transcript_tools.model.errors import WriteFailed

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    real_access = os.access
    # The project folder, then a folder inside the session's folder (a review's find: only
    # each target's own folder was checked, and rmtree failed half-way inside).
    inner = project(config) / SID / "tool-results"
    inner.mkdir()
    (inner / "r1.txt").write_bytes(b"x")
    before = digest(config)
    for blocked in (project(config), inner):
        monkeypatch.setattr(os, "access", lambda p, mode, b=blocked: Path(p) != b and real_access(p, mode))
        plan = survey(store.resolve(SID))
        # The dry run says so already (in-process: the patched check is the one it asks).
        from transcript_tools.manage.files import blocked as would_fail

        assert (
            would_fail(plan)
            == f"{project(config) / (SID + '.jsonl') if blocked == project(config) else project(config) / SID}: cannot delete ({blocked} is not writable); nothing was deleted"
        )
        with pytest.raises(WriteFailed, match=f"{blocked} is not writable\\); nothing was deleted"):
            remove(plan)
        assert digest(config) == before


def test_rename_and_tag_refuse_a_subagent_s_file_as_fork_does(config: Path) -> None:
    # A new user's find: `tt rename agent-….jsonl "t"` said "Renamed <session>" and wrote
    # the title into the subagent's file, where no listing reads it.
    [agent] = sorted((project(config) / SID / "subagents").glob("agent-*.jsonl"))
    before = agent.read_bytes()
    for verb, value in (("rename", "sub title"), ("tag", "x")):
        r = tt(verb, str(agent), value, config=config)
        assert r.returncode == 2 and f"tt {verb} works on a session" in r.stderr, r.stderr
        assert f"hint: tt {verb} {SID}" in r.stderr
    assert agent.read_bytes() == before
    # A copy outside the config dir: the session its records carry is named all the same.
    loose = config.parent / "loose" / agent.name
    loose.parent.mkdir()
    loose.write_bytes(before)
    r = tt("rename", str(loose), "t", config=config)
    assert (
        r.returncode == 2 and f"of session {SID}" in r.stderr and f"hint: tt rename {SID} TITLE" in r.stderr
    )
    r = tt("store", "push", str(loose), "--store", f"sqlite:///{config.parent / 's.db'}", config=config)
    assert r.returncode == 2 and f"tt store push {SID}" in r.stderr, r.stderr


def test_delete_of_a_copy_elsewhere_leaves_the_config_dir_alone(config: Path, tmp_path: Path) -> None:
    copy = tmp_path / f"{SID}.jsonl"
    shutil.copy(project(config) / f"{SID}.jsonl", copy)
    r = tt("delete", str(copy), "--yes", "--json", config=config)
    assert r.returncode == 0
    assert [t["kind"] for t in json.loads(r.stdout)["targets"]] == ["transcript"]
    assert not copy.exists() and (config / "file-history" / SID).is_dir()


# --- the real CLI resumes the fork (compatibility bench) -------------------------------


def _staged(config: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of ``config`` whose project folder is the one of a real temp cwd."""
    cwd = (tmp_path / "demo-app").resolve()
    cwd.mkdir()
    return stage_config(config, tmp_path / "staged", recorded_cwd=RECORDED_CWD, cwd=cwd), cwd


@pytest.mark.claude
def test_real_cli_resumes_a_fork_with_the_same_conversation(
    claude_332: ClaudeCLI, config: Path, tmp_path: Path
) -> None:
    whole = fork_json(config)["session_id"]
    at_uuid = "886f247e-dc88-462d-96d6-d8a381728a8f"  # "ACK n=16 last=After compaction, turn 2 ..."
    cut = fork_json(config, "--at", at_uuid)["session_id"]
    staged, cwd = _staged(config, tmp_path)
    probe = "probe after fork"
    original = resume_with_cli(claude_332, staged, SID, cwd, probe=probe)
    assert (
        compare_histories(
            original,
            resume_with_cli(claude_332, staged, whole, cwd, probe=probe),
            labels=("original", "fork"),
        )
        == ""
    )
    # Forked at a message: the conversation up to that message, then the probe.
    blocks = conversation_blocks(original)
    end = next(
        i
        for i, b in enumerate(blocks)
        if b.kind == "text" and b.value.startswith("ACK n=16 last=After compaction, turn 2")
    )
    expected = [str(b) for b in blocks[: end + 1] + blocks[-1:]]
    got = [str(b) for b in conversation_blocks(resume_with_cli(claude_332, staged, cut, cwd, probe=probe))]
    assert got == expected


@pytest.mark.claude
def test_real_cli_resumes_a_fork_at_a_message_before_compaction(
    real_session: GeneratedSession, tmp_path: Path
) -> None:
    """Forked at an answer given before /compact, the CLI sends exactly what it sent live
    when it asked for that answer, plus the answer and the probe."""
    s = real_session.copy_to(tmp_path)
    live = [r for r in s.requests if r.is_messages and is_main_turn(r) and r.messages]
    plain = [
        r for r in live if (u := last_user(r)) is not None and prompt_text(u).startswith("Plain question")
    ]
    assert plain, "the generated session has a plain question turn"
    request = plain[0]
    reply = claude_code_policy(request)
    assert isinstance(reply, Text)
    entry = next(
        json.loads(ln)
        for ln in s.transcript.read_text().splitlines()
        if '"type":"assistant"' in ln and reply.text in ln and not json.loads(ln).get("isSidechain")
    )
    r = tt("fork", s.session_id, "--at", entry["uuid"], "--json", config=s.config_dir)
    assert r.returncode == 0, r.stderr
    new_id = json.loads(r.stdout)["session_id"]
    probe = "probe after fork"
    got = resume_with_cli(s.cli, s.config_dir, new_id, s.cwd, probe=probe)
    expected = [
        *request.messages,
        {"role": "assistant", "content": reply.text},
        {"role": "user", "content": probe},
    ]
    assert compare_histories(expected, got, labels=("live", "fork")) == ""


@pytest.mark.claude
def test_real_cli_2_1_197_resumes_a_fork_with_the_same_conversation(
    claude_197: ClaudeCLI, tmp_path: Path
) -> None:
    config = tmp_path / "claude-config"
    stage(CONFIG_197, config)
    sid = "8c2f9135-4610-4218-97b1-bc3e03643255"
    r = tt("fork", sid, "--json", config=config)
    assert r.returncode == 0, r.stderr
    new_id = json.loads(r.stdout)["session_id"]
    staged, cwd = _staged(config, tmp_path)
    original = resume_with_cli(claude_197, staged, sid, cwd)
    assert (
        compare_histories(
            original, resume_with_cli(claude_197, staged, new_id, cwd), labels=("original", "fork")
        )
        == ""
    )


def test_uuid_source_gives_distinct_version_4_uuids() -> None:
    import uuid

    from transcript_tools.fork.files import UuidSource

    ids = UuidSource()
    got = [ids() for _ in range(10_000)]
    assert len(set(got)) == len(got)
    for g in got[::997]:
        u = uuid.UUID(g)
        assert str(u) == g and u.version == 4 and u.variant == uuid.RFC_4122


def test_delete_removes_a_symlinked_session_folder_as_a_link_only(config: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    folder = project(config) / SID
    shutil.rmtree(folder)
    folder.symlink_to(outside, target_is_directory=True)
    r = tt("delete", SID, "--yes", "--json", config=config)
    assert r.returncode == 0, r.stderr
    assert not folder.exists() and not folder.is_symlink()
    assert (outside / "keep.txt").read_text() == "keep"


def test_delete_of_a_subagent_s_file_takes_its_sidecar_and_their_backups(config: Path) -> None:
    # A new user's find: the subagent's `.meta.json` and the `.meta.json.bak` a redaction
    # left (with the secret in it) stayed behind.
    [agent] = sorted((project(config) / SID / "subagents").glob("agent-*.jsonl"))
    meta = agent.with_name(agent.name[: -len(".jsonl")] + ".meta.json")
    backups = [agent.with_name(f".{agent.name}.bak"), meta.with_name(f".{meta.name}.bak")]
    for b in backups:
        b.write_bytes(b"old\n")
    plan = json.loads(tt("delete", str(agent), "--dry-run", "--json", config=config).stdout)
    kinds = {t["path"]: t["kind"] for t in plan["targets"]}
    assert kinds == {
        str(agent): "subagent",
        str(meta): "subagent-meta",
        str(backups[0]): "tt-backup",
        str(backups[1]): "tt-backup",
    }
    assert tt("delete", str(agent), "--yes", config=config).returncode == 0
    assert not any(p.exists() for p in (agent, meta, *backups))
    assert (project(config) / f"{SID}.jsonl").is_file()  # the session stays


@pytest.mark.parametrize("verb", ["repair", "redact"])
def test_an_output_that_would_clash_writes_nothing(config: Path, tmp_path: Path, verb: str) -> None:
    # A new user's find: -o into a folder holding a subagent's sidecar already wrote the
    # main file and the subagent's copy, then failed, and said neither.
    [agent] = sorted((project(config) / SID / "subagents").glob("agent-*.jsonl"))
    out = tmp_path / "out"
    clash = out / SID / "subagents" / agent.with_suffix("").with_suffix(".meta.json").name
    clash.parent.mkdir(parents=True)
    clash.write_bytes(b"{}")
    r = tt(verb, SID, "-o", f"{out}/", config=config)
    assert r.returncode == 6 and f"{clash}: already exists" in r.stderr and "nothing was written" in r.stderr
    assert sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file()) == [clash.relative_to(out)]
