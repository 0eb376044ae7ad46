"""`tt doctor` as a command: exit codes, --json, a project folder, and the pure core on
hand-made records. The verdicts themselves are checked against the real CLI and the SDK in
tests/doctor/test_doctor_claude.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.support.cli import tt
from tests.support.paths import CONFIG_332
from tests.support.trees import stage
from transcript_tools.doctor.core import Scan, diagnose, scan_records

PROJECT = CONFIG_332 / "projects" / "-home-dev-demo-app"
SID = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
NUL_SID = "00000000-0000-4000-8000-000000000000"


def test_a_healthy_real_session_exits_0() -> None:
    r = tt("doctor", str(PROJECT / f"{SID}.jsonl"))
    assert r.returncode == 0, r.stderr
    assert "0 with a reason" in r.stdout


def test_a_project_folder_names_the_broken_file_and_exits_1(tmp_path: Path) -> None:
    config = tmp_path / "config"
    stage(CONFIG_332, config)
    project = config / "projects" / PROJECT.name
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


def test_a_working_directory_is_read_through_its_project_folder(tmp_path: Path) -> None:
    # The folder name is written out here by Claude Code's rule (every character outside
    # [A-Za-z0-9] becomes '-'), not computed by tt.
    cwd = (tmp_path / "demo-app").resolve()
    cwd.mkdir()
    project = (
        tmp_path
        / "config"
        / "projects"
        / "".join(c if c.isascii() and c.isalnum() else "-" for c in str(cwd))
    )
    project.mkdir(parents=True)
    shutil.copy(PROJECT / f"{SID}.jsonl", project)
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
