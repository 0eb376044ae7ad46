"""Files that are not transcripts get one clear error from every reading command, and
`tt delete` never removes them (a typo'd path must not cost the user a file)."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import pytest

from tests.support import cli

tt = partial(cli.tt, width=None)


#: What each kind of file is called, written out here (not read from tt).
KINDS = {
    "empty": (b"", "an empty file"),
    "random": (os.urandom(4000).replace(b"{", b"(").replace(b"\n", b" "), "binary data"),
    "other-json": (
        b'{"a":1}\n{"type":"note","text":"hi"}\n',
        "no Claude Code record (type + sessionId) in its first or last 64 KiB",
    ),
}


@pytest.fixture(params=list(KINDS))
def not_a_transcript(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    p = tmp_path / "x.jsonl"
    p.write_bytes(KINDS[request.param][0])
    return p


#: Every command that names one session file (tt doctor aside: it reports such a file as its
#: finding, exit 1; tt ls, search and store list; tt import reads a zip).
NAMING = [
    ["show"],
    ["stats"],
    ["validate"],
    ["fork", "--dry-run"],
    ["compact", "--dry-run"],
    ["redact"],
    ["repair", "--dry-run"],
    ["export", "--dry-run"],
    ["rename", "{}", "A title", "--dry-run"],
    ["tag", "{}", "wip", "--dry-run"],
    ["resume", "--dry-run", "--json"],
    ["chat", "--json"],
    ["rewind", "--at", "1", "--dry-run"],
    ["delete", "--dry-run"],
]


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("command", NAMING, ids=lambda c: c[0])
def test_every_command_naming_a_non_transcript_exits_4_with_one_message(
    kind: str, command: list[str], tmp_path: Path
) -> None:
    # Found by a new user on random bytes: export and rename/tag exited 2 ("file name is not
    # a session id"), resume 4 but "no conversation to resume", repair "no JSON record"
    # where the others said "binary data", and validate called other JSON a damaged
    # transcript (exit 1). The README promises exit 4 and one message.
    p = tmp_path / "x.jsonl"
    p.write_bytes(KINDS[kind][0])
    args = [a.replace("{}", str(p)) for a in command]
    if "{}" not in command:
        args.insert(1, str(p))
    r = tt(*args)
    assert (r.returncode, r.stderr) == (4, f"tt: {p}: {KINDS[kind][1]}; this is not a transcript\n"), r.stdout
    assert p.read_bytes() == KINDS[kind][0]


def test_delete_refuses_and_keeps_the_file(not_a_transcript: Path) -> None:
    before = not_a_transcript.read_bytes()
    r = tt("delete", str(not_a_transcript), "--yes")
    assert r.returncode == 4, (r.stdout, r.stderr)
    assert "not a transcript" in r.stderr and "Traceback" not in r.stderr
    assert not_a_transcript.read_bytes() == before


def test_redact_in_place_refuses_and_keeps_the_file(not_a_transcript: Path) -> None:
    # Found trying tt as a new user: tt redact said "no secrets" on any file and
    # --in-place rewrote any JSONL.
    before = not_a_transcript.read_bytes()
    r = tt("redact", str(not_a_transcript), "--in-place")
    assert r.returncode == 4 and "not a transcript" in r.stderr, (r.stdout, r.stderr)
    assert not_a_transcript.read_bytes() == before


def test_folder_verbs_leave_out_files_named_like_sessions_that_are_none(tmp_path: Path) -> None:
    # New-user pass: in a project folder holding a real session beside a binary, an empty
    # and an other-JSON file named like sessions, `tt stats` counted them as 3 sessions
    # and printed ~50 "skipped (garbage)" lines, `tt search` one "a match there could not
    # be read" per line of the binary file, and `tt ls` listed them as damaged sessions.
    import json
    import shutil

    from tests.support.paths import CONFIG_332

    config = tmp_path / "config"
    project = config / "projects" / "-home-dev-demo-app"
    project.mkdir(parents=True)
    real = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
    shutil.copy(CONFIG_332 / "projects" / "-home-dev-demo-app" / f"{real}.jsonl", project)
    others = {f"aaaaaaaa-0000-4000-8000-00000000000{i}": kind for i, kind in enumerate(KINDS, 1)}
    for sid, kind in others.items():
        (project / f"{sid}.jsonl").write_bytes(KINDS[kind][0])
    scope = ("-p", project.name)

    r = tt("stats", *scope, "--json", config=config)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [s["sessions"] for s in doc["sessions"]] == [[real]]
    assert {Path(x["path"]).stem: x["looks_like"] for x in doc["not_transcripts"]} == {
        sid: KINDS[kind][1] for sid, kind in others.items()
    }
    text = tt("stats", *scope, config=config).stdout
    assert "total of 1 session(s)" in text and "skipped" not in text
    assert text.count("not a transcript") == 3

    r = tt("search", "a", *scope, config=config)
    assert "could not be read" not in r.stdout + r.stderr

    r = tt("ls", *scope, "--json", config=config)
    assert [s["session_id"] for s in json.loads(r.stdout)["sessions"]] == [real]
    r = tt("ls", *scope, "--hidden", "--json", config=config)
    hidden = {s["session_id"]: s.get("hidden") for s in json.loads(r.stdout)["sessions"]}
    assert {sid: hidden.get(sid) for sid in others} == dict.fromkeys(others, "not-a-transcript")
    assert "skipped" not in tt("ls", *scope, config=config).stdout


@pytest.mark.parametrize(
    "command",
    [
        ["fork", "--dry-run"],
        ["rewind", "--list"],
        ["export", "--dry-run"],
        ["resume", "--dry-run", "--json"],
        ["chat", "--json"],
    ],
    ids=lambda c: c[0],
)
def test_a_verb_of_sessions_given_a_subagent_s_file_names_its_session(command: list[str]) -> None:
    # New-user pass: fork said "has no messages to fork" (it has two), rewind "no session
    # id", export "the file name is not a session id", resume exit 4 "no conversation".
    from tests.support.paths import CONFIG_332

    sid = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
    agent = (
        CONFIG_332 / "projects" / "-home-dev-demo-app" / sid / "subagents" / "agent-a57f9afd470043d69.jsonl"
    )
    r = tt(command[0], str(agent), *command[1:], config=CONFIG_332)
    assert r.returncode == 2 and r.stdout == ""
    assert f"a subagent's transcript of session {sid}; tt {command[0]} works on a session" in r.stderr
    assert f"hint: tt {command[0]} {sid}" in r.stderr
