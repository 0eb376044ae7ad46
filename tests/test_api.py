"""The Python API returns the report the CLI renders: for the same session, each
function's ``to_dict()`` is the command's ``--json`` output (less what only the command
adds: paths it prints, continue hints). The CLI runs as a subprocess on a staged copy of
the shipped Claude Code 2.1.332 config dir; the clock is fixed (TT_NOW)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import transcript_tools as tt
from tests.support import cli
from tests.support.paths import CONFIG_332, REAL
from tests.support.trees import stage

SID = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
NOW = "2026-11-30T12:00:00Z"


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cfg = tmp_path / "claude"
    stage(CONFIG_332, cfg)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(cfg))
    monkeypatch.setenv("TT_NOW", NOW)
    monkeypatch.chdir(tmp_path)
    return cfg


def _cli(*args: str) -> dict:
    p = cli.tt(*args, "--json", width=None, timeout=300)
    assert p.returncode in (0, 1), p.stderr
    return json.loads(p.stdout)


def test_validate_session_is_tt_validate(config: Path) -> None:
    got = [r.to_dict() for r in tt.validate_session(SID)]
    assert got == _cli("validate", SID)["files"]
    assert len(got) == 2  # the main file and its one subagent (fixtures/real/claude-config-2.1.332)


def test_doctor_session_is_tt_doctor(config: Path) -> None:
    """New-user pass: no doctor function, where the README says every verb is one."""
    got = tt.doctor_session(SID[:8]).to_dict()
    assert [got] == _cli("doctor", SID[:8])["files"]
    assert [f["code"] for f in got["findings"]] == ["headless-session"]  # made with claude -p


def test_get_session_stats_is_tt_stats(config: Path) -> None:
    cli = _cli("stats", SID)
    cli.pop("path"), cli.pop("title")
    assert tt.get_session_stats(SID).to_dict() == cli


def test_list_sessions_is_tt_ls_all(config: Path) -> None:
    assert [r.to_dict() for r in tt.list_sessions()] == _cli("ls", "--all")["sessions"]


def test_repair_session_dry_run_is_tt_repair_dry_run(config: Path) -> None:
    main = next((config / "projects").glob(f"*/{SID}.jsonl"))
    before = main.read_bytes()
    got = [r.to_dict() for r in tt.repair_session(SID)]
    assert got == _cli("repair", SID, "--dry-run")["files"]
    assert main.read_bytes() == before


def test_fork_session_writes_what_tt_fork_reports(config: Path) -> None:
    f = tt.fork_session(SID, up_to_message_id="2", title="branch")
    d = f.to_dict()
    cli = _cli("fork", SID, "--at", "2", "--title", "branch", "--dry-run")
    # Fresh ids differ run to run; everything else agrees.
    for k in ("entries", "title", "at", "repairs"):
        assert d[k] == cli[k], k
    assert d["forked_from"]["message_uuid"] == cli["forked_from"]["message_uuid"]
    lines = [json.loads(x) for x in f.path.read_bytes().splitlines()]
    assert len(lines) == d["entries"]
    assert {x["sessionId"] for x in lines if "sessionId" in x} == {f.session_id}
    assert any(x.get("type") == "custom-title" and x.get("customTitle") == "branch" for x in lines)


def test_resume_request_is_the_dry_run_body(config: Path) -> None:
    here = str(config.parent)  # an existing folder to run in: the recorded cwd is not on this machine
    req = tt.resume_request(SID, "next", cwd=here)
    p = cli.tt("resume", SID, "-p", "next", "--dry-run", "--json", "--cwd", here, width=None, timeout=300)
    assert p.returncode == 0, p.stderr
    assert req.request.params() == json.loads(p.stdout)
    last = req.request.messages[-1]
    assert last["role"] == "user" and "next" in json.dumps(last["content"])


def test_tag_session_dry_run_writes_nothing(config: Path) -> None:
    main = next((config / "projects").glob(f"*/{SID}.jsonl"))
    before = main.read_bytes()
    r = tt.tag_session(SID[:8], "x", dry_run=True)
    assert main.read_bytes() == before and not r.written
    assert json.loads(r.record) == {"type": "tag", "tag": "x", "sessionId": SID}


def test_errors_carry_the_cli_exit_code(config: Path) -> None:
    with pytest.raises(tt.NotFound) as e:
        tt.validate_session("ffffffff-0000-0000-0000-000000000000")
    assert e.value.exit_code == 3


def test_redact_session_is_tt_redact(config: Path) -> None:
    assert [r.to_dict() for r in tt.redact_session(SID)] == _cli("redact", SID)["files"]


def test_compact_session_dry_run_is_tt_compact_dry_run(config: Path) -> None:
    got = tt.compact_session(SID, dry_run=True).to_dict()  # the model the CLI counts for, at TT_NOW
    cli = _cli("compact", SID, "--dry-run")
    cli.pop("continue")
    got.pop("seconds"), cli.pop("seconds")  # the wall time of each run
    assert got == cli


def test_export_dry_run_is_tt_export_dry_run(config: Path) -> None:
    e = tt.export_session(SID, "out.zip", dry_run=True)
    cli = _cli("export", SID, "-o", "out.zip", "--dry-run")
    assert not e.written and not Path("out.zip").exists()
    assert [m.to_dict() for m in e.manifest.members] == cli["files"]
    # The bundle's size can differ by a byte or two between runs (the manifest's time stamp).
    assert dict(e.manifest.redactions) == cli["redactions"] and e.manifest.redacted == cli["redacted"]
    assert abs(e.bytes - cli["bytes"]) < 64


def test_rewind_session_plans_what_tt_rewind_plans(config: Path) -> None:
    here = str(config.parent)
    r = tt.rewind_session(SID, "1928bebd", cwd=here)
    cli = _cli("rewind", SID, "--at", "1928bebd", "--cwd", here, "--dry-run")["files"]
    assert r.plan.target == cli["target"] and r.plan.snapshot == cli["snapshot"]
    assert [(f.path, f.action, f.reason) for f in r.plan.files] == [
        (f["path"], f["action"], f["reason"]) for f in cli["files"]
    ]
    assert r.applied == []


def test_rewind_session_keeps_a_backup_by_default_as_tt_rewind_does(config: Path) -> None:
    # tt rewind keeps <file>.tt-rewind.bak unless --no-backup; the library's default is the same.
    work = config.parent / "demo-app"
    work.mkdir()
    backups = REAL / "claude-config-2.1.332" / "file-history" / SID
    newer = (backups / "cf6fbccebed484a3@v2").read_bytes()
    (work / "app.py").write_bytes(newer)
    r = tt.rewind_session(SID, "21327ba7", cwd=work, dry_run=False)
    assert (work / "app.py").read_bytes() == b"print('hello')\n"
    (done,) = [f for f in r.applied if f.path.endswith("app.py")]
    assert done.done and done.kept and Path(done.kept).read_bytes() == newer


def test_repair_session_to_a_file_writes_the_layout_with_the_sidecar(config: Path, tmp_path: Path) -> None:
    out = tmp_path / "fixed.jsonl"
    reports = tt.repair_session(SID, output=out)
    assert out.is_file() and len(reports) == 2
    sub = next((tmp_path / "fixed" / "subagents").glob("agent-*.jsonl"))
    meta = sub.with_name(sub.name[: -len(".jsonl")] + ".meta.json")
    src = next((config / "projects").glob(f"*/{SID}/subagents/*.meta.json"))
    assert meta.read_bytes() == src.read_bytes()
    with pytest.raises(tt.UsageError):
        tt.repair_session(SID, output=out, in_place=True)


def test_directory_narrows_the_lookup_to_one_project(config: Path, tmp_path: Path) -> None:
    folder = next((config / "projects").iterdir())
    assert tt.validate_session(SID, directory=folder)[0].path == str(folder / f"{SID}.jsonl")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with pytest.raises(tt.NotFound):
        tt.validate_session(SID, directory=elsewhere)


def test_finding_delete_session_refuses_a_file_that_is_no_transcript_as_the_cli_does(tmp_path: Path) -> None:
    """New-user pass: `tt.delete_session(path)` deleted a file of other JSON named
    `session.jsonl` that `tt delete` refuses (exit 4); it now raises the same error."""
    project = tmp_path / "projects" / "-home-u-p"
    project.mkdir(parents=True)
    other = project / "session.jsonl"
    other.write_bytes(b'{"a": 1}\n')
    r = cli.tt("delete", str(other), "--yes")
    assert r.returncode == 4 and "this is not a transcript" in r.stderr
    with pytest.raises(tt.TTError) as e:
        tt.delete_session(other)
    assert e.value.exit_code == 4 and "this is not a transcript" in str(e.value)
    assert other.exists()


def test_every_function_naming_a_session_refuses_a_binary_file_as_the_cli_does(tmp_path: Path) -> None:
    """New-user pass: a binary file named like a session got a different answer from each
    function (fork a usage error, compact not found, stats and redact a report of nothing,
    validate `ok`); the CLI exits 4 on it in every verb. Each now raises what it exits."""
    project = tmp_path / "projects" / "-home-u-p"
    project.mkdir(parents=True)
    binary = project / "00000000-0000-4000-8000-00000000b1a5.jsonl"
    binary.write_bytes(bytes(range(256)) * 8)
    before = binary.read_bytes()
    calls = {
        "stats": lambda: tt.get_session_stats(binary),
        "redact": lambda: tt.redact_session(binary),
        "compact": lambda: tt.compact_session(binary, dry_run=True),
        "fork": lambda: tt.fork_session(binary, dry_run=True),
        "export": lambda: tt.export_session(binary, tmp_path / "x.zip", dry_run=True),
        "repair": lambda: tt.repair_session(binary),
        "rename": lambda: tt.rename_session(binary, "t"),
        "tag": lambda: tt.tag_session(binary, "t"),
        "resume": lambda: tt.resume_request(binary, "hi"),
    }
    for verb, call in calls.items():
        extra = {"rename": ["t"], "tag": ["t"], "repair": ["--dry-run"], "resume": ["--dry-run", "-p", "hi"]}
        r = cli.tt(verb, str(binary), *extra.get(verb, []))
        assert r.returncode == 4, (verb, r.returncode, r.stderr)
        with pytest.raises(tt.TTError) as e:
            call()
        assert e.value.exit_code == 4 and "this is not a transcript" in str(e.value), verb
    [report] = tt.validate_session(binary)
    assert report.not_transcript is not None and not report.ok
    assert binary.read_bytes() == before


def test_paths_may_be_strings_and_a_limit_that_is_not_positive_is_none(config: Path) -> None:
    """New-user pass: `tt.validate_path("x.jsonl")` and `tt.load_session("x.jsonl")` were an
    AttributeError; `search_sessions(limit=-1)` islice's ValueError; `list_sessions` sliced
    with a limit of 0 or -1, where the SDK's takes it as no limit."""
    path = str(config / "projects" / "-home-dev-demo-app" / f"{SID}.jsonl")
    assert tt.validate_path(path).to_dict() == tt.validate_path(Path(path)).to_dict()
    assert [e.raw for e in tt.load_session(path).session.conversation()] == [
        e.raw for e in tt.load_session(Path(path)).session.conversation()
    ]
    every = tt.list_sessions()
    assert len(every) >= 1
    assert [r.session_id for r in tt.list_sessions(limit=0)] == [r.session_id for r in every]
    assert [r.session_id for r in tt.list_sessions(limit=-1)] == [r.session_id for r in every]
    hits = tt.search_sessions("the")
    assert [h.session_id for h in tt.search_sessions("the", limit=-1)] == [h.session_id for h in hits]
    with pytest.raises(tt.UsageError, match="per_session must be at least 1"):
        tt.search_sessions("the", per_session=0)
