"""`tt doctor` as a command: exit codes, --json, a project folder, and the pure core on
hand-made records. The verdicts themselves are checked against the real CLI and the SDK in
tests/doctor/test_doctor_claude.py."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import tt
from tests.support.paths import CONFIG_332, PUBLIC, REAL
from tests.support.trees import stage
from transcript_tools.doctor.core import Scan, diagnose, scan_records

PROJECT = CONFIG_332 / "projects" / "-home-dev-demo-app"
SID = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
NUL_SID = "00000000-0000-4000-8000-000000000000"


def interactive(dest: Path) -> Path:
    """The real 2.1.332 session as an interactive run writes it (``"entrypoint":"cli"``; the
    fixture was made with ``claude -p``: ``sdk-cli``), at ``dest`` (a folder or a file)."""
    target = dest / f"{SID}.jsonl" if dest.is_dir() else dest
    target.write_bytes(
        (PROJECT / f"{SID}.jsonl").read_bytes().replace(b'"entrypoint":"sdk-cli"', b'"entrypoint":"cli"')
    )
    return target


def test_a_healthy_real_session_exits_0(tmp_path: Path) -> None:
    project = tmp_path / "projects" / PROJECT.name
    project.mkdir(parents=True)
    r = tt("doctor", str(interactive(project)))
    assert r.returncode == 0, r.stderr
    assert "0 with a reason" in r.stdout
    # Named alone, a session with nothing wrong still says where claude finds it: the
    # directory it recorded (a new user's "it is gone" is most often claude run elsewhere).
    assert (
        "nothing hides it: `claude --resume` run in /home/dev/demo-app lists it, and "
        f"`claude --resume {SID}` run there loads it"
    ) in r.stdout
    assert json.loads(tt("doctor", "--json", str(project / f"{SID}.jsonl")).stdout)["files"][0]["cwd"] == (
        "/home/dev/demo-app"
    )
    # In another directory's project folder (moved): where claude lists it is that folder's
    # directory, not the recorded one (the real picker: test_doctor_claude.py::
    # test_a_session_moved_to_another_project_folder_still_loads_by_id).
    moved = tmp_path / "projects" / "-srv-other"
    moved.mkdir()
    r = tt("doctor", str(interactive(moved)))
    assert r.returncode == 0, r.stderr
    assert (
        "nothing hides it: `claude --resume` lists it when run in the directory whose project "
        "folder is -srv-other, not in /home/dev/demo-app, the directory it recorded"
    ) in r.stdout
    assert json.loads(tt("doctor", "--json", str(moved / f"{SID}.jsonl")).stdout)["files"][0]["moved_to"] == (
        "-srv-other"
    )
    # A folder's sessions are counted, not listed one by one.
    r = tt("doctor", str(project))
    assert r.returncode == 0 and "nothing hides it" not in r.stdout and "0 with a reason" in r.stdout


def test_a_session_made_with_claude_p_is_listed_by_the_sdk_not_by_the_picker() -> None:
    # The real CLI's picker on this shape: test_doctor_claude.py::test_doctor_agrees_with_the_picker.
    r = tt("doctor", "--json", str(PROJECT / f"{SID}.jsonl"))
    assert r.returncode == 1, r.stderr
    [f] = json.loads(r.stdout)["files"][0]["findings"]
    assert (f["code"], f["listed"], f["picker"], f["loads"], f["repair"]) == (
        "headless-session",
        True,
        False,
        True,
        False,
    )
    assert "entrypoint=sdk-cli" in f["message"]
    assert f["fix"] == (
        f"`claude --resume {SID}` loads it; `CLAUDE_CODE_ENTRYPOINT=sdk-cli claude --resume` shows the "
        "picker with these sessions in it"
    )
    r = tt("doctor", str(PROJECT / f"{SID}.jsonl"))
    assert "headless-session (not listed by /resume, listed by the SDK, loads)" in r.stdout
    assert "its directory: /home/dev/demo-app (where claude lists and loads it)" in r.stdout
    # The count says what kind of reason it is (new-user pass: "0 listed and loadable" alone).
    assert (
        "1 with a reason (1 of them listed by the SDK and loadable: hidden from the /resume picker only)"
        in r.stdout
    )


def test_a_project_folder_names_the_broken_file_and_exits_1(tmp_path: Path) -> None:
    config = tmp_path / "config"
    stage(CONFIG_332, config)
    project = config / "projects" / PROJECT.name
    interactive(project)
    (project / f"{NUL_SID}.jsonl").write_bytes(b"\0" * 4096)
    r = tt("doctor", "--json", str(project))
    assert r.returncode == 1, r.stderr
    files = {f["session_id"]: f["findings"] for f in json.loads(r.stdout)["files"]}
    assert files[SID] == []
    assert [f["code"] for f in files[NUL_SID]] == ["nul-file"]
    assert files[NUL_SID][0]["repair"] is False
    # By id, through the config dir, the same finding; the text names the fix.
    r = tt("doctor", NUL_SID[:13], config=config)
    assert r.returncode == 1 and "nul-file" in r.stdout and "fix: " in r.stdout


def test_an_unknown_session_exits_3_with_one_message(tmp_path: Path) -> None:
    (tmp_path / "projects").mkdir()
    r = tt("doctor", "deadbeef", config=tmp_path)
    assert r.returncode == 3
    assert r.stderr.startswith("tt: no session 'deadbeef'") and "Traceback" not in r.stderr


def test_scan_counts_main_and_sidechain_messages() -> None:
    scan = scan_records(
        [
            {"type": "user", "isSidechain": True},
            {"type": "assistant", "isSidechain": True},
            {"type": "user"},
            {"type": "summary"},
            {"type": 3},
        ]
    )
    assert (scan.records, scan.main_messages, scan.sidechain_messages) == (5, 1, 2)
    assert scan.other_types == frozenset({"summary", "?"})


def test_a_stub_with_a_title_is_listed_but_does_not_load() -> None:
    head = b'{"type":"custom-title","customTitle":"my work","sessionId":"s"}\n'
    d = diagnose("s.jsonl", "s", head, head, len(head), Scan(1, 0, 0, frozenset({"custom-title"})))
    assert [(f.code, f.listed, f.loads) for f in d.findings] == [("metadata-only", True, False)]


def _project_folder(config: Path, cwd: Path) -> Path:
    # The folder name is written out by Claude Code's rule (every character outside
    # [A-Za-z0-9] becomes '-'), not computed by tt.
    project = config / "projects" / "".join(c if c.isascii() and c.isalnum() else "-" for c in str(cwd))
    project.mkdir(parents=True)
    return project


def test_a_working_directory_is_read_through_its_project_folder(tmp_path: Path) -> None:
    cwd = (tmp_path / "demo-app").resolve()
    cwd.mkdir()
    project = _project_folder(tmp_path / "config", cwd)
    interactive(project)
    (project / f"{NUL_SID}.jsonl").write_bytes(b"\0" * 10)
    r = tt("doctor", "--json", str(cwd), config=tmp_path / "config")
    assert r.returncode == 1, r.stderr
    found = {f["session_id"]: [x["code"] for x in f["findings"]] for f in json.loads(r.stdout)["files"]}
    assert found == {SID: [], NUL_SID: ["nul-file"]}


def test_random_bytes_and_other_json_are_named_not_a_transcript(tmp_path: Path) -> None:
    # Found trying tt as a new user: random bytes were called "empty" and {"a": 1} a
    # "metadata-only" stub.
    import os

    noise = tmp_path / "11111111-1111-1111-1111-111111111111.jsonl"
    noise.write_bytes(os.urandom(3000).replace(b"{", b"("))
    other = tmp_path / "22222222-2222-2222-2222-222222222222.jsonl"
    other.write_bytes(b'{"a": 1}\n')
    for path, what in ((noise, "binary data"), (other, "JSON objects, but no Claude Code record")):
        r = tt("doctor", str(path), "--json")
        assert r.returncode == 1, r.stderr
        [f] = json.loads(r.stdout)["files"][0]["findings"]
        assert f["code"] == "not-a-transcript" and f["message"].startswith(what)


# --- found by a new user -------------------------------------------------------------

V2028 = REAL / "v2.0.28-project"
SID_2028 = "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9"
NOT_AN_ID = "abcd1234-5678-90ef-ghij-klmnopqrstuv"


def test_a_live_2_0_28_subagent_file_is_its_sessions_not_a_stray_copy(tmp_path: Path) -> None:
    # Found by a new user: doctor called a live 2.0.28 subagent file (agent-*.jsonl beside
    # its session, as 2.0.x keeps them) "all-sidechain" and advised `tt delete` "the stray
    # copy", printing its path twice, while `tt delete 7f2a --dry-run` lists it as the
    # session's legacy-subagent.
    config = tmp_path / "config"
    stage(V2028, config / "projects")
    project = config / "projects" / "-Users-zawakin-agent-sample"
    agent = project / "agent-0c4c3cf8.jsonl"
    r = tt("delete", SID_2028[:4], "--dry-run", "--json", config=config)
    assert {"path": str(agent), "kind": "legacy-subagent"}.items() <= json.loads(r.stdout)["targets"][
        1
    ].items()

    r = tt("doctor", str(agent), config=config)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count(str(agent)) == 1
    assert f"a subagent transcript of session {SID_2028}: not meant to be listed by /resume" in r.stdout
    assert "delete" not in r.stdout and "fix:" not in r.stdout
    [d] = json.loads(tt("doctor", "--json", str(agent), config=config).stdout)["files"]
    assert (d["subagent_of"], d["findings"]) == (SID_2028, [])

    # tt delete on the agent file alone: that file, as the subagent it is; the session stays.
    r = tt("delete", str(agent), "--dry-run", config=config)
    assert r.returncode == 0 and "no session id" not in r.stdout
    assert r.stdout.startswith(
        f"Would delete a subagent transcript of session {SID_2028} (the session stays)"
    )
    plan = json.loads(tt("delete", str(agent), "--dry-run", "--json", config=config).stdout)
    assert (plan["subagent_of"], [t["kind"] for t in plan["targets"]]) == (SID_2028, ["legacy-subagent"])

    # Its session's file gone, the same file is a stray subagent: said so, naming the session.
    (project / f"{SID_2028}.jsonl").unlink()
    [d] = json.loads(tt("doctor", "--json", str(agent), config=config).stdout)["files"]
    [f] = d["findings"]
    assert d["subagent_of"] is None and f["code"] == "all-sidechain" and SID_2028 in f["fix"]


def test_doctor_all_names_a_subagent_file_whose_session_file_is_gone(tmp_path: Path) -> None:
    # Found by a new user: `tt doctor -a` skipped a 2.0.28 agent-*.jsonl at a project's top
    # level whose session's file is not there (d-kimuson/claude-code-viewer's test data),
    # silently: the folder listing left out every agent file, its session's or not.
    config = stage(PUBLIC, tmp_path / "config")
    orphan = config / "projects" / "-path-to-Demo" / "agent-test-hash-123.jsonl"
    r = tt("doctor", "-a", "--json", config=config)
    assert r.returncode == 1, r.stderr
    files = {f["path"]: f for f in json.loads(r.stdout)["files"]}
    [f] = files[str(orphan)]["findings"]
    assert f["code"] == "all-sidechain" and "5c0375b4-57a5-4f26-b12d-d022ee4e51b7" in f["fix"]
    # The subagents of sessions that are there are theirs: no finding, not listed apart.
    assert not any("/subagents/" in p for p in files)
    # A 2.1.x subagents/ folder whose <id>.jsonl is gone: its files are diagnosed too.
    golden = config / "projects" / "-tmp-golden"
    (golden / "11111111-2222-3333-4444-555555555555.jsonl").unlink()
    files = {f["path"]: f for f in json.loads(tt("doctor", "-a", "--json", config=config).stdout)["files"]}
    agent = golden / "11111111-2222-3333-4444-555555555555" / "subagents" / "agent-a9f8e7d6c5b4.jsonl"
    assert [f["code"] for f in files[str(agent)]["findings"]] == ["all-sidechain"]
    assert files[str(orphan)]["findings"]
    # The text output names it with its fix.
    r = tt("doctor", "-a", config=config)
    assert f"{orphan}\n  all-sidechain" in r.stdout and "fix: it is session 5c0375b4" in r.stdout


def test_a_2_1_332_subagent_file_is_its_sessions(tmp_path: Path) -> None:
    config = stage(CONFIG_332, tmp_path / "config")
    agent = config / "projects" / PROJECT.name / SID / "subagents" / "agent-a57f9afd470043d69.jsonl"
    [d] = json.loads(tt("doctor", "--json", str(agent), config=config).stdout)["files"]
    assert (d["subagent_of"], d["findings"]) == (SID, [])
    plan = json.loads(tt("delete", str(agent), "--dry-run", "--json", config=config).stdout)
    # The subagent file and its sidecar, the session left whole.
    assert (plan["subagent_of"], [t["kind"] for t in plan["targets"]]) == (SID, ["subagent", "subagent-meta"])


def _odd_copy(project: Path, inner_id: str) -> Path:
    """The real 2.1.332 session under a name that is no session id, its records' sessionId
    ``inner_id`` (how the new user's file looked: abcd1234-…-klmnopqrstuv.jsonl)."""
    odd = project / f"{NOT_AN_ID}.jsonl"
    odd.write_bytes(interactive(project / "tmp.jsonl").read_bytes().replace(SID.encode(), inner_id.encode()))
    (project / "tmp.jsonl").unlink()
    return odd


def test_a_file_not_named_by_a_session_id_says_why_and_how(tmp_path: Path) -> None:
    # Found by a new user: `tt ls -a` left such a file out and `tt show abcd1234` was exit 3,
    # yet doctor said "listed and loadable" of it and "no sessions found" of its folder.
    # What the real CLI and the SDK do with it: test_doctor_claude.py::test_a_file_not_named_by_a_session_id.
    project = tmp_path / "projects" / "-home-dev-demo-app"
    project.mkdir(parents=True)
    odd = _odd_copy(project, SID)  # records carry a session id, no file of that name beside
    r = tt("doctor", str(project), config=tmp_path)
    assert r.returncode == 1, r.stderr
    assert r.stdout.count(str(odd)) == 2  # once as the header, once in the fix's mv
    assert "name-not-an-id (not listed by /resume, does not load)" in r.stdout
    assert f"fix: rename it to its session id: `mv {odd} {project}/{SID}.jsonl`" in r.stdout
    assert "(not a tt repair fix)" in r.stdout

    interactive(project)  # the session's own file beside it: a copy
    files = {
        f["path"]: f["findings"] for f in json.loads(tt("doctor", "--json", str(project)).stdout)["files"]
    }
    assert files[str(project / f"{SID}.jsonl")] == []
    [f] = files[str(odd)]
    assert f["fix"].startswith(f"it is a copy of session {SID}, whose file {SID}.jsonl is beside it")

    # Records whose sessionId is no session id either (the new user's file): tt fork gives
    # it one, and the fork is a session doctor finds nothing wrong with.
    (project / f"{SID}.jsonl").unlink()
    odd = _odd_copy(project, NOT_AN_ID)
    [f] = json.loads(tt("doctor", "--json", str(odd)).stdout)["files"][0]["findings"]
    assert (
        f["fix"]
        == f"its records' sessionId is no session id either: `tt fork {odd}` writes it under a new id"
    )
    r = tt("fork", str(odd), "--json")
    assert r.returncode == 0, r.stderr
    forked = Path(json.loads(r.stdout)["path"])
    assert forked.parent == project
    r = tt("doctor", str(forked))
    assert r.returncode == 0 and "0 with a reason, 1 listed and loadable" in r.stdout


def test_all_project_and_continue_name_sessions_as_in_validate(tmp_path: Path) -> None:
    # Found by a new user: `tt doctor --all` was a usage error (exit 2) while validate, ls
    # and stats take -a, -p and -c.
    import os

    cwd = (tmp_path / "demo-app").resolve()
    cwd.mkdir()
    config = tmp_path / "config"
    project = config / "projects" / "".join(c if c.isascii() and c.isalnum() else "-" for c in str(cwd))
    project.mkdir(parents=True)
    interactive(project)
    nul = project / f"{NUL_SID}.jsonl"
    nul.write_bytes(b"\0" * 10)
    os.utime(nul, (1_000_000_000, 1_000_000_000))  # the older one: -c is the healthy session

    def files(*args: str) -> tuple[int, dict[str, list[str]]]:
        r = tt("doctor", "--json", *args, config=config, cwd=cwd)
        found = {f["session_id"]: [x["code"] for x in f["findings"]] for f in json.loads(r.stdout)["files"]}
        return r.returncode, found

    both = (1, {SID: [], NUL_SID: ["nul-file"]})
    assert files("-a") == both
    assert files("-p", str(cwd)) == both
    assert files("--project", project.name) == both
    assert files("-c") == (0, {SID: []})
    os.utime(nul)  # now the latest
    assert files("--continue") == (1, {NUL_SID: ["nul-file"]})
    # The scope is validate's: the same files for -a and for -p.
    for scope in (["-a"], ["-p", str(cwd)]):
        r = tt("validate", "--json", "--no-subagents", *scope, config=config, cwd=cwd)
        assert {Path(f["path"]).name[:-6] for f in json.loads(r.stdout)["files"]} == set(both[1])
    assert tt("doctor", "-c", "-a", config=config, cwd=cwd).returncode == 2
    r = tt("doctor", config=config, cwd=cwd)
    assert r.returncode == 2 and "-p DIR, or --all" in r.stderr


def test_a_working_directory_s_own_jsonl_files_are_not_its_sessions(tmp_path: Path) -> None:
    # Doctor reads a project folder's files not named by a session id (above); a working
    # directory's own data.jsonl is no session: its project folder's sessions are read.
    cwd = (tmp_path / "demo-app").resolve()
    cwd.mkdir()
    (cwd / "data.jsonl").write_bytes(b'{"a": 1}\n')
    project = _project_folder(tmp_path / "config", cwd)
    interactive(project)
    r = tt("doctor", "--json", str(cwd), config=tmp_path / "config")
    assert r.returncode == 0, r.stderr
    assert [f["path"] for f in json.loads(r.stdout)["files"]] == [str(project / f"{SID}.jsonl")]


def test_a_folder_of_copied_transcripts_says_how_to_check_them(tmp_path: Path) -> None:
    # A new user's folder of downloaded sessions (no project folder, no file named by a
    # session id) got "no sessions found" alone; it is still not found (exit 3: a working
    # directory's own .jsonl files are data, above), with the way to check each file.
    loose = tmp_path / "downloads"
    loose.mkdir()
    (loose / "a-session.jsonl").write_bytes((REAL / "v2.1.38-tool-heavy.jsonl").read_bytes())
    r = tt("doctor", str(loose), config=tmp_path / "config")
    assert r.returncode == 3 and r.stdout == ""
    assert r.stderr.startswith(f"tt: {loose}: no sessions found\n  hint: {loose} holds .jsonl files"), (
        r.stderr
    )
    assert "tt doctor FILE" in r.stderr and "tt validate DIR" in r.stderr
    r = tt("doctor", str(loose / "a-session.jsonl"), config=tmp_path / "config")
    assert r.returncode == 1 and "name-not-an-id" in r.stdout


def test_finding_a_file_whose_messages_have_no_uuid_is_not_called_loadable() -> None:
    """New-user pass: doctor said "listed and loadable" of a file whose records carry no
    ``uuid`` (other readers' public test data, ``-tmp-golden``); Claude Code 2.1.332 resumes
    it with none of its conversation (tests/show/test_show_claude.py::test_no_uuid_is_no_conversation;
    2.1.197 too: tests/doctor/test_doctor_claude.py)."""
    golden = PUBLIC / "projects" / "-tmp-golden" / "11111111-2222-3333-4444-555555555555.jsonl"
    r = tt("doctor", "--json", str(golden))
    assert r.returncode == 1, r.stderr
    [f] = json.loads(r.stdout)["files"][0]["findings"]
    assert (f["code"], f["listed"], f["loads"], f["repair"]) == ("no-uuid", True, False, False)
    assert "none of its 18 messages has a uuid" in f["message"] and "backup" in f["fix"]
    assert "1 file(s): 1 with a reason, 0 listed and loadable" in tt("doctor", str(golden)).stdout
    # Every transcript Claude Code wrote has its uuids: no such finding on any real fixture.
    from transcript_tools.doctor.files import doctor_file

    for p in [*REAL.glob("*.jsonl"), *CONFIG_332.rglob("*.jsonl")]:
        assert "no-uuid" not in {f.code for f in doctor_file(p).findings}, p


def test_a_lone_surrogate_escape_in_a_field_it_shows_is_no_traceback(tmp_path: Path) -> None:
    # A review's finding: "teamName":"\ud800x" ended `tt doctor` in UnicodeEncodeError (text)
    # and orjson's TypeError (--json); `tt ls` did the same on such a custom title.
    raw = interactive(tmp_path / "s.jsonl").read_bytes()
    first, rest = raw.split(b"\n", 1)
    project = tmp_path / "projects" / PROJECT.name
    project.mkdir(parents=True)
    path = project / f"{SID}.jsonl"
    path.write_bytes(first[:-1] + b',"teamName":"\\ud800x"}\n' + rest)
    path.write_bytes(
        path.read_bytes()
        + b'{"type":"custom-title","customTitle":"\\ud800 mine","sessionId":"'
        + SID.encode()
        + b'"}\n'
    )
    for args in ((), ("--json",)):
        r = tt("doctor", str(path), *args)
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        assert "team-session" in r.stdout and "teamName=\ufffdx" in r.stdout
    r = tt("ls", "-p", str(project), "--json")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert json.loads(r.stdout)["sessions"][0]["title"] == "\ufffd mine"


def test_finding_a_session_outside_a_project_folder_is_not_called_listed(tmp_path: Path) -> None:
    """New-user pass: a session outside the config dir's project folders (one folder too deep,
    or anywhere else) was "listed and loadable", exit 0; a journal.jsonl in a session's
    folder was a "metadata-only" stub to `tt delete`. Where Claude Code looks is checked with
    the real CLIs in test_doctor_claude.py::test_a_session_one_folder_too_deep_is_found_by_nothing."""
    project = tmp_path / "projects" / PROJECT.name
    deep = project / "sub"
    deep.mkdir(parents=True)
    path = interactive(deep)
    r = tt("doctor", "--json", str(path))
    assert r.returncode == 1, r.stderr
    [f] = json.loads(r.stdout)["files"][0]["findings"]
    assert (f["code"], f["listed"], f["picker"], f["loads"]) == ("not-in-a-project", False, False, False)
    assert f["fix"].startswith(f"`mv {path} ") and f"`claude --resume {SID}` from that directory" in f["fix"]
    # A file of a session's folder (a workflow's journal) is the session's: no finding.
    interactive(project)
    journal = project / SID / "subagents" / "workflows" / "wf_1" / "journal.jsonl"
    journal.parent.mkdir(parents=True)
    journal.write_bytes(b'{"type":"workflow-step","at":"2026-12-01T00:00:00.000Z"}\n')
    [d] = json.loads(tt("doctor", "--json", str(journal)).stdout)["files"]
    assert (d["subagent_of"], d["findings"]) == (SID, [])


def test_the_recorded_directory_is_the_record_s_own_cwd_not_a_nested_one(tmp_path: Path) -> None:
    # A new user's find: the head of a copy of a real 2.1.296 session (Windows, Git Bash)
    # begins with an assistant line whose `wireIngestContext` names the Git Bash form of
    # the directory (`/c/Users/…`) before the line's own `cwd` (`C:\Users\…`). Doctor took
    # the first, and said a session sitting in its own project folder had moved there.
    src = REAL / "v2.1.296-windows-git-bash-partial-copy.jsonl"
    sid = "54b91c91-badc-481e-b5b3-de78b2fa4c93"  # the sessionId its records carry
    project = tmp_path / "projects" / "C--Users-anil1-Downloads-Hackathon-TUMHackathon26"
    project.mkdir(parents=True)
    (project / f"{sid}.jsonl").write_bytes(src.read_bytes())
    r = tt("doctor", "--json", str(project / f"{sid}.jsonl"))
    [found] = json.loads(r.stdout)["files"]
    assert found["cwd"] == "C:\\Users\\anil1\\Downloads\\Hackathon\\TUMHackathon26"
    assert found["moved_to"] is None
    r = tt("doctor", str(project / f"{sid}.jsonl"))
    assert "lists it when run in the directory whose project folder is" not in r.stdout, r.stdout
    assert "/c/Users" not in r.stdout


def test_a_recorded_directory_not_on_this_machine_points_to_p(tmp_path: Path) -> None:
    # A new user named the cwd a session recorded (`tt doctor /home/dev/demo-app`), which
    # is not on this machine: "no such file", where -p DIR finds its sessions.
    config = stage(CONFIG_332, tmp_path / "config")
    assert not Path("/home/dev/demo-app").exists()
    r = tt("doctor", "/home/dev/demo-app", config=config)
    assert r.returncode == 3 and "no such file" in r.stderr
    assert "`tt ls -p /home/dev/demo-app` lists them" in r.stderr
    assert tt("doctor", "-p", "/home/dev/demo-app", config=config).returncode in (0, 1)
    r = tt("doctor", "/home/dev/elsewhere", config=config)
    assert r.returncode == 3 and "hint" not in r.stderr
