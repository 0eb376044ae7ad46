"""`tt doctor` against the real client: each reason a session is missing from /resume,
on damaged copies of one session generated here with Claude Code 2.1.332, with the CLI's
verdict (``claude -p --resume <id>`` at a pinned clock: did it send the conversation or
say "No conversation found"), the Agent SDK's (``list_sessions(directory=cwd)``) and the
interactive picker's (``claude --resume`` in a pty, 2.1.332 and 2.1.197: did its debug log
say it left the session out, `tests.support.picker`) asserted next to tt's.

The session was made with ``claude -p`` (``"entrypoint":"sdk-cli"``), which the picker leaves
out by itself (`test_doctor_agrees_with_the_picker`, ``headless``); the other shapes are
made on its interactive form (``"entrypoint":"cli"``, as an interactive run writes it).

The expected verdicts are the table in `transcript_tools.doctor.core` (and the README),
written down from these runs, not computed by tt.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.support.claude_cli import ClaudeCLI, Sandbox, run_claude
from tests.support.picker import picker_probe
from tests.support.policy import last_user, prompt_text
from tests.support.sessions import GeneratedSession, generate_session, stage_config
from tests.support.standin import StandIn
from transcript_tools.doctor.files import doctor_file, doctor_path

pytestmark = pytest.mark.claude

CLOCK = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
PROBE = "probe now"
PROMPTS = ("Project kickoff: we work on app.py", "Plain question about the design?")


def _dump(rec: dict) -> bytes:
    return json.dumps(rec, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def _records(raw: bytes) -> list[dict]:
    return [json.loads(ln) for ln in raw.splitlines() if ln.strip()]


def no_cwd(raw: bytes, sid: str) -> bytes:
    out = []
    for r in _records(raw):
        r.pop("cwd", None)
        out.append(_dump(r))
    return b"".join(out)


def metadata_only(raw: bytes, sid: str) -> bytes:
    # The stub shape of the threads: a summary and a title, the conversation elsewhere.
    last = [r for r in _records(raw) if r.get("uuid")][-1]["uuid"]
    return b"".join(
        _dump(r)
        for r in (
            {"type": "summary", "summary": "Earlier work on app.py", "leafUuid": last},
            {"type": "custom-title", "customTitle": "my work", "sessionId": sid},
            {"type": "tag", "tag": "wip", "sessionId": sid},
        )
    )


def nuls(raw: bytes, sid: str) -> bytes:
    return b"\0" * len(raw)


def all_sidechain(raw: bytes, sid: str) -> bytes:
    out = []
    for r in _records(raw):
        if r.get("type") in ("user", "assistant"):
            r["isSidechain"] = True
        out.append(_dump(r))
    return b"".join(out)


def relocated(raw: bytes, sid: str) -> bytes:
    # The record 2.1.332 writes when a session's directory moves (its binary:
    # {type:"relocated",sessionId,relocatedCwd}).
    return raw + _dump({"type": "relocated", "sessionId": sid, "relocatedCwd": "/srv/elsewhere/demo-app"})


def sidechain_first(raw: bytes, sid: str) -> bytes:
    recs = _records(raw)
    recs[0]["isSidechain"] = True
    return b"".join(_dump(r) for r in recs)


def no_title(raw: bytes, sid: str) -> bytes:
    # Every prompt a title could come from is gone: no last-prompt record, and each
    # typed prompt is command output, which the SDK skips when it looks for a title.
    out = []
    for r in _records(raw):
        if r.get("type") == "last-prompt":
            continue
        m = r.get("message")
        if r.get("type") == "user" and isinstance(m, dict) and isinstance(m.get("content"), str):
            m["content"] = f"<local-command-stdout>{m['content']}</local-command-stdout>"
        out.append(_dump(r))
    return b"".join(out)


def empty(raw: bytes, sid: str) -> bytes:
    return b""


def other_json(raw: bytes, sid: str) -> bytes:
    return b'{"a": 1}\n{"b": [2, 3]}\n'


def intact(raw: bytes, sid: str) -> bytes:
    return raw


def interactive(raw: bytes) -> bytes:
    """The session as an interactive run writes it: the picker leaves ``claude -p``'s out."""
    return raw.replace(b'"entrypoint":"sdk-cli"', b'"entrypoint":"cli"')


#: damage -> (tt's finding codes, SDK lists it, 2.1.332 loads it, the picker lists it
#: (2.1.332 and 2.1.197 alike); on the session's interactive form
CASES: dict[str, tuple[Callable[[bytes, str], bytes], tuple[str, ...], bool, bool, bool]] = {
    "intact": (intact, (), True, True, True),
    "no-cwd": (no_cwd, (), True, True, True),
    "relocated": (relocated, (), True, True, True),
    "metadata-only": (metadata_only, ("metadata-only",), True, False, True),
    "nul-file": (nuls, ("nul-file",), False, False, True),
    "all-sidechain": (all_sidechain, ("all-sidechain",), True, False, False),
    "sidechain-first": (sidechain_first, ("sidechain-first",), False, True, False),
    "empty": (empty, ("empty",), False, False, True),
    "other-json": (other_json, ("not-a-transcript",), False, False, True),
    "no-title": (no_title, ("no-title",), False, True, True),
}


def resume_probe(cli: ClaudeCLI, sandbox: Sandbox, cwd: Path, name: str) -> tuple[Any, list[Any], int]:
    """``claude -p PROBE --resume NAME`` against the stand-in: the run, the requests that
    sent the probe (after whatever conversation the CLI loaded), and how many requests
    it sent in all."""
    with StandIn() as api:
        run = run_claude(
            cli,
            PROBE,
            sandbox=sandbox,
            cwd=cwd,
            base_url=api.base_url,
            resume=name,
            check=False,
            clock=CLOCK,
            timeout=90,
        )
        sent = [
            r for r in api.message_requests if (u := last_user(r)) is not None and prompt_text(u) == PROBE
        ]
        return run, sent, len(api.message_requests)


@pytest.fixture(scope="module")
def small_session(claude_332: ClaudeCLI, tmp_path_factory: pytest.TempPathFactory) -> GeneratedSession:
    return generate_session(claude_332, tmp_path_factory.mktemp("doctor-gen"), prompts=PROMPTS)


@pytest.fixture
def sdk_config() -> Iterator[Callable[[Path], None]]:
    old = os.environ.get("CLAUDE_CONFIG_DIR")

    def point(config: Path) -> None:
        os.environ["CLAUDE_CONFIG_DIR"] = str(config)

    yield point
    if old is None:
        os.environ.pop("CLAUDE_CONFIG_DIR", None)
    else:
        os.environ["CLAUDE_CONFIG_DIR"] = old


@pytest.mark.parametrize("case", list(CASES))
def test_doctor_agrees_with_the_cli_and_the_sdk(
    case: str,
    small_session: GeneratedSession,
    claude_332: ClaudeCLI,
    claude_197: ClaudeCLI,
    faketime: None,
    tmp_path: Path,
    sdk_config: Callable[[Path], None],
) -> None:
    from claude_agent_sdk import list_sessions

    damage, codes, sdk_lists, cli_loads, picker_lists = CASES[case]
    g = small_session
    config = stage_config(g.config_dir, tmp_path / "config")
    transcript = config / "projects" / g.project_dir.name / g.transcript.name
    before = interactive(transcript.read_bytes())
    transcript.write_bytes(damage(before, g.session_id))
    damaged = transcript.read_bytes()

    diagnosis = doctor_file(transcript)
    assert transcript.read_bytes() == damaged  # doctor only reads
    assert tuple(f.code for f in diagnosis.findings) == codes
    for f in diagnosis.findings:
        assert (f.listed, f.loads, f.in_picker) == (sdk_lists, cli_loads, picker_lists)
        assert f.fix and f.repair is False

    for cli in (claude_332, claude_197):
        picked = picker_probe(
            cli, Sandbox.create(tmp_path / f"picker-{cli.version}", config_dir=config), g.cwd
        )
        assert picked.found == 1 and picked.lists(g.session_id) is picker_lists, (
            cli.version,
            picked.filtered,
        )

    sdk_config(config)
    listed = g.session_id in {s.session_id for s in list_sessions(directory=str(g.cwd))}
    assert listed is sdk_lists

    run, sent, _ = resume_probe(claude_332, Sandbox.create(tmp_path, config_dir=config), g.cwd, g.session_id)
    if cli_loads:
        assert run.returncode == 0, run.stderr
        # The probe came after the earlier conversation: its first prompt was sent too.
        assert sent and PROMPTS[0] in json.dumps(sent[0].messages)
    else:
        assert run.returncode != 0 and not sent
        assert f"No conversation found with session ID: {g.session_id}" in run.stdout + run.stderr


def team(raw: bytes, sid: str) -> bytes:
    # An agent team member's session carries its team on its messages (2.1.332 binary:
    # the picker reads the first "teamName" of the head).
    out = []
    for r in _records(raw):
        if r.get("type") in ("user", "assistant"):
            r["teamName"] = "blue"
        out.append(_dump(r))
    return b"".join(out)


def daemon(raw: bytes, sid: str) -> bytes:
    # A background worker's session: "sessionKind" on its first message line (2.1.332 binary).
    out, marked = [], False
    for r in _records(raw):
        if not marked and "parentUuid" in r:
            r["sessionKind"] = marked = "daemon"
        out.append(_dump(r))
    return b"".join(out)


def sidechain_in_head(raw: bytes, sid: str) -> bytes:
    # A sidechain record after line 1, as older versions wrote subagent lines into the
    # session's file: the SDK looks at line 1 only, the picker at the whole head.
    out, marked = [], False
    for i, r in enumerate(_records(raw)):
        if not marked and i > 0 and "uuid" in r and r.get("type") not in ("user", "assistant"):
            r["isSidechain"] = marked = True
        out.append(_dump(r))
    assert marked
    return b"".join(out)


OTHER = "9b2f6a0e-1111-4222-8333-444455556666"


def continued(raw: bytes, sid: str) -> bytes:
    # The record 2.1.332 writes when a conversation goes on in another session (its
    # binary: {type:"continued-in",continuedInSessionId}), last in the file.
    return raw + _dump(
        {
            "type": "continued-in",
            "continuedInSessionId": OTHER,
            "sessionId": sid,
            "timestamp": "2026-11-30T12:00:00.000Z",
        }
    )


def loop(raw: bytes, sid: str) -> bytes:
    # A session begun with /loop: its first prompt is the command's record.
    out, done = [], False
    for r in _records(raw):
        m = r.get("message")
        if not done and r.get("type") == "user" and isinstance(m, dict) and isinstance(m.get("content"), str):
            m["content"] = (
                "<command-name>/loop</command-name>\n<command-message>loop</command-message>\n"
                f"<command-args>5m {m['content']}</command-args>"
            )
            done = True
        out.append(_dump(r))
    return b"".join(out)


def continued_then_exit(raw: bytes, sid: str) -> bytes:
    # The continued-in record, then an /exit command's line: a command is no prompt, so the
    # record still holds (the review's finding: tt took the command for one).
    recs = _records(raw)
    last_user = [r for r in recs if r.get("type") == "user"][-1]
    leaf = [r for r in recs if r.get("uuid")][-1]["uuid"]
    exit_line = {
        **last_user,
        "uuid": "9b2f6a0e-1111-4222-8333-000000000001",
        "parentUuid": leaf,
        "message": {
            "role": "user",
            "content": "<command-name>/exit</command-name>\n<command-message>exit</command-message>\n<command-args></command-args>",
        },
    }
    exit_line.pop("toolUseResult", None)
    exit_line.pop("sourceToolAssistantUUID", None)
    return continued(raw, sid) + _dump(exit_line)


def empty_entrypoint_first(raw: bytes, sid: str) -> bytes:
    # An empty "entrypoint" first, "sdk-cli" after: the CLI stops at the first (its `??`).
    out, done = [], False
    for r in _records(raw):
        if not done and "entrypoint" in r:
            r["entrypoint"] = done = ""
            done = True
        out.append(_dump(r))
    return b"".join(out)


@dataclass(frozen=True)
class PickerCase:
    shape: Callable[[bytes, str], bytes]
    codes: tuple[str, ...]  # tt doctor's findings
    said_332: str | None  # what 2.1.332's picker logs for it (None: listed)
    said_197: str | None
    headless: bool = False  # on the session as `claude -p` wrote it, not its interactive form
    other: bool = False  # OTHER's file written beside it
    sdk_lists: bool = True
    cli_loads: bool = True


PICKER_CASES: dict[str, PickerCase] = {
    "headless": PickerCase(
        intact, ("headless-session",), "entrypoint=sdk-cli", "entrypoint=sdk-cli", headless=True
    ),
    "team": PickerCase(team, ("team-session",), "teamName=blue", "teamName=blue"),
    "daemon": PickerCase(daemon, ("daemon-session",), "sessionKind=daemon", "sessionKind=daemon"),
    "sidechain-in-head": PickerCase(
        sidechain_in_head, ("sidechain-in-head",), "isSidechain=true", "isSidechain=true"
    ),
    "continued": PickerCase(continued, ("continued-elsewhere",), f"continued in {OTHER}", None, other=True),
    "continued, no such file": PickerCase(continued, (), None, None),
    "continued, then /exit": PickerCase(
        continued_then_exit, ("continued-elsewhere",), f"continued in {OTHER}", None, other=True
    ),
    "loop": PickerCase(loop, ("loop-session",), "/loop session", "/loop session"),
    "empty entrypoint first": PickerCase(empty_entrypoint_first, (), None, None, headless=True),
    # A reason of the SDK's (no title) with one of the picker's: both are said (a new user was
    # told only to add a title, which did not bring it back).
    "no title, sidechain in head": PickerCase(
        lambda raw, sid: sidechain_in_head(no_title(raw, sid), sid),
        ("no-title", "sidechain-in-head"),
        "isSidechain=true",
        "isSidechain=true",
        sdk_lists=False,
    ),
    # A reason of the SDK's (no title) with one of the picker's: the picker's verdict is its own.
    "no title, headless": PickerCase(
        no_title,
        ("no-title", "headless-session"),
        "entrypoint=sdk-cli",
        "entrypoint=sdk-cli",
        headless=True,
        sdk_lists=False,
    ),
}


@pytest.mark.parametrize("case", list(PICKER_CASES))
def test_doctor_agrees_with_the_picker(
    case: str,
    small_session: GeneratedSession,
    claude_332: ClaudeCLI,
    claude_197: ClaudeCLI,
    faketime: None,
    tmp_path: Path,
    sdk_config: Callable[[Path], None],
) -> None:
    """The reasons only the interactive picker has: each shape on the generated session, with
    the CLI's own log line for it, the SDK's listing and ``--resume``'s load next to tt's."""
    from claude_agent_sdk import list_sessions

    c = PICKER_CASES[case]
    g = small_session
    config = stage_config(g.config_dir, tmp_path / "config")
    project = config / "projects" / g.project_dir.name
    transcript = project / g.transcript.name
    raw = transcript.read_bytes()
    form = raw if c.headless else interactive(raw)
    transcript.write_bytes(c.shape(form, g.session_id))
    if c.other:
        (project / f"{OTHER}.jsonl").write_bytes(form.replace(g.session_id.encode(), OTHER.encode()))

    findings = doctor_file(transcript).findings
    assert tuple(f.code for f in findings) == c.codes
    for f in findings:
        assert (f.listed, f.loads, f.in_picker, f.repair) == (c.sdk_lists, c.cli_loads, False, False)
        assert f"`claude --resume {g.session_id}`" in f.fix
    picker_own = [f for f in findings if f.code != "no-title"]
    if picker_own:
        assert c.said_332 is not None and c.said_332.split(" ")[-1] in picker_own[0].message

    for cli, said in ((claude_332, c.said_332), (claude_197, c.said_197)):
        picked = picker_probe(
            cli, Sandbox.create(tmp_path / f"picker-{cli.version}", config_dir=config), g.cwd
        )
        assert picked.found == 1 + c.other
        assert picked.filtered.get(g.session_id) == said, (cli.version, picked.filtered)
        if case == "headless":  # the way doctor's fix names to see them in the picker
            own = {"CLAUDE_CODE_ENTRYPOINT": "sdk-cli"}
            picked = picker_probe(
                cli, Sandbox.create(tmp_path / f"own-{cli.version}", config_dir=config), g.cwd, extra_env=own
            )
            assert picked.found == 1 and picked.lists(g.session_id), (cli.version, picked.filtered)

    sdk_config(config)
    assert (g.session_id in {s.session_id for s in list_sessions(directory=str(g.cwd))}) is c.sdk_lists
    run, sent, _ = resume_probe(claude_332, Sandbox.create(tmp_path, config_dir=config), g.cwd, g.session_id)
    assert run.returncode == 0 and bool(sent) is c.cli_loads, run.stderr


def test_a_session_moved_to_another_project_folder_still_loads_by_id(
    small_session: GeneratedSession,
    claude_332: ClaudeCLI,
    faketime: None,
    tmp_path: Path,
    sdk_config: Callable[[Path], None],
) -> None:
    """Worktree relocation: the file moves to the new directory's project folder with a
    ``relocated`` record. The SDK lists it under the new directory only; 2.1.332's
    ``--resume <id>`` loads it from the old one too; so doctor reports nothing."""
    from claude_agent_sdk import list_sessions

    g = small_session
    elsewhere = (tmp_path / "elsewhere").resolve()
    elsewhere.mkdir()
    config = stage_config(g.config_dir, tmp_path / "config")
    old = config / "projects" / g.project_dir.name / g.transcript.name
    moved_dir = (
        config / "projects" / "".join(c if c.isascii() and c.isalnum() else "-" for c in str(elsewhere))
    )
    moved_dir.mkdir()
    moved = moved_dir / old.name
    moved.write_bytes(
        relocated(interactive(old.read_bytes()), g.session_id).replace(
            b"/srv/elsewhere/demo-app", str(elsewhere).encode()
        )
    )
    old.unlink()

    d = doctor_file(moved)
    # No finding; the directory it recorded and the folder it is in, which differ: the
    # picker lists it in the directory of that folder (checked below), not in its own.
    assert (d.findings, d.cwd, d.moved_to) == ((), str(g.cwd), moved_dir.name)
    sdk_config(config)
    assert g.session_id not in {s.session_id for s in list_sessions(directory=str(g.cwd))}
    assert g.session_id in {s.session_id for s in list_sessions(directory=str(elsewhere))}
    # The interactive picker, as the SDK: the new directory's folder lists it, the old one's
    # is empty (not filtered: not found there).
    for where, found in ((elsewhere, 1), (g.cwd, 0)):
        picked = picker_probe(
            claude_332, Sandbox.create(tmp_path / f"picker-{where.name}", config_dir=config), where
        )
        assert (picked.found, dict(picked.filtered)) == (found, {})

    run, sent, _ = resume_probe(claude_332, Sandbox.create(tmp_path, config_dir=config), g.cwd, g.session_id)
    assert run.returncode == 0, run.stderr
    assert sent and PROMPTS[0] in json.dumps(sent[0].messages)


def test_a_session_one_folder_too_deep_is_found_by_nothing(
    small_session: GeneratedSession,
    claude_332: ClaudeCLI,
    claude_197: ClaudeCLI,
    faketime: None,
    tmp_path: Path,
    sdk_config: Callable[[Path], None],
) -> None:
    """New-user pass: a session one folder below its project folder was "listed and
    loadable". Neither picker reads it, the SDK does not list it, and ``--resume <id>``
    finds no conversation; doctor says so and names the move."""
    from claude_agent_sdk import list_sessions

    g = small_session
    config = stage_config(g.config_dir, tmp_path / "config")
    project = config / "projects" / g.project_dir.name
    deep = project / "moved"
    deep.mkdir()
    transcript = deep / g.transcript.name
    (project / g.transcript.name).rename(transcript)
    transcript.write_bytes(interactive(transcript.read_bytes()))

    [f] = doctor_file(transcript).findings
    assert (f.code, f.listed, f.in_picker, f.loads) == ("not-in-a-project", False, False, False)
    for cli in (claude_332, claude_197):
        picked = picker_probe(
            cli, Sandbox.create(tmp_path / f"picker-{cli.version}", config_dir=config), g.cwd
        )
        assert picked.found == 0 and g.session_id not in picked.filtered
    sdk_config(config)
    assert g.session_id not in {s.session_id for s in list_sessions(directory=str(g.cwd))}
    run, sent, _ = resume_probe(claude_332, Sandbox.create(tmp_path, config_dir=config), g.cwd, g.session_id)
    assert run.returncode != 0 and not sent
    assert f"No conversation found with session ID: {g.session_id}" in run.stdout + run.stderr


NOT_AN_ID = "abcd1234-5678-90ef-ghij-klmnopqrstuv"


def test_a_file_not_named_by_a_session_id(
    small_session: GeneratedSession,
    claude_332: ClaudeCLI,
    faketime: None,
    tmp_path: Path,
    sdk_config: Callable[[Path], None],
) -> None:
    """Found by a new user: a session under a name that is no session id (the name of
    their file) is missing from `tt ls -a` and /resume, yet doctor said "listed and
    loadable" and, on its folder, "no sessions found". 2.1.332 and the SDK skip it: the
    name is "not a UUID", and the id inside finds "No conversation". Doctor's fix (rename
    it to that id) makes both find it."""
    from claude_agent_sdk import list_sessions

    g = small_session
    config = stage_config(g.config_dir, tmp_path / "config")
    transcript = config / "projects" / g.project_dir.name / g.transcript.name
    transcript.write_bytes(interactive(transcript.read_bytes()))
    odd = transcript.with_name(f"{NOT_AN_ID}.jsonl")
    transcript.rename(odd)

    # The folder: this file, not "no sessions found".
    [d] = doctor_path(str(odd.parent), root=config / "projects")
    assert d.path == str(odd) and d.session_id is None
    [f] = d.findings
    assert (f.code, f.listed, f.loads, f.repair) == ("name-not-an-id", False, False, False)
    assert f.fix == f"rename it to its session id: `mv {odd} {odd.parent}/{g.session_id}.jsonl`"

    sdk_config(config)
    assert list_sessions(directory=str(g.cwd)) == []
    sandbox = Sandbox.create(tmp_path, config_dir=config)

    def resume(name: str) -> tuple[int, str, int]:
        run, _, requests = resume_probe(claude_332, sandbox, g.cwd, name)
        return run.returncode, run.stdout + run.stderr, requests

    code, out, sent = resume(NOT_AN_ID)
    assert code != 0 and sent == 0
    assert f'Provided value "{NOT_AN_ID}" is not a UUID and does not match any session title' in out
    code, out, sent = resume(g.session_id)
    assert code != 0 and sent == 0 and f"No conversation found with session ID: {g.session_id}" in out

    odd.rename(transcript)  # the fix doctor names
    assert doctor_file(transcript).findings == ()
    assert [s.session_id for s in list_sessions(directory=str(g.cwd))] == [g.session_id]
    code, out, sent = resume(g.session_id)
    assert code == 0 and sent > 0, out


def no_uuid(raw: bytes, sid: str) -> bytes:
    out = []
    for r in _records(raw):
        r.pop("uuid", None)
        out.append(_dump(r))
    return b"".join(out)


@pytest.fixture(scope="module")
def small_session_197(claude_197: ClaudeCLI, tmp_path_factory: pytest.TempPathFactory) -> GeneratedSession:
    return generate_session(claude_197, tmp_path_factory.mktemp("doctor-gen-197"), prompts=PROMPTS)


@pytest.mark.parametrize("version", ["2.1.332", "2.1.197"])
def test_a_file_without_uuids_resumes_without_its_conversation(
    version: str,
    request: pytest.FixtureRequest,
    faketime: None,
    tmp_path: Path,
    sdk_config: Callable[[Path], None],
) -> None:
    """New-user pass: doctor called a file whose records have no ``uuid`` "loadable". Each
    CLI's own session with every ``uuid`` taken out: the SDK lists it, and ``claude -p
    --resume <id>`` exits 0 but sends none of the earlier prompts (2.1.332 and 2.1.197 both
    sent the last assistant message and the probe, seen 2026-12-01): the conversation is
    not loaded, which doctor now says (``no-uuid``, ``loads`` false)."""
    from claude_agent_sdk import list_sessions

    cli: ClaudeCLI = request.getfixturevalue("claude_332" if version == "2.1.332" else "claude_197")
    g: GeneratedSession = request.getfixturevalue(
        "small_session" if version == "2.1.332" else "small_session_197"
    )
    config = stage_config(g.config_dir, tmp_path / "config")
    transcript = config / "projects" / g.project_dir.name / g.transcript.name
    transcript.write_bytes(no_uuid(interactive(transcript.read_bytes()), g.session_id))

    [f] = doctor_file(transcript).findings
    assert (f.code, f.listed, f.loads, f.in_picker) == ("no-uuid", True, False, True)
    # The interactive picker lists it too (nothing in its log), so a user picks it and loses
    # the conversation without a word.
    picked = picker_probe(cli, Sandbox.create(tmp_path / "picker", config_dir=config), g.cwd)
    assert picked.found == 1 and picked.lists(g.session_id), picked.filtered

    sdk_config(config)
    assert g.session_id in {s.session_id for s in list_sessions(directory=str(g.cwd))}

    run, sent, _ = resume_probe(cli, Sandbox.create(tmp_path, config_dir=config), g.cwd, g.session_id)
    assert run.returncode == 0, run.stderr  # no error: the loss is silent
    assert sent
    # None of the earlier prompts is sent (the last reply, which the stand-in wrote as
    # "ACK n=… last=<the last prompt>", may be).
    prompts_sent = json.dumps([m for m in sent[0].messages if m.get("role") == "user"])
    assert not any(p in prompts_sent for p in PROMPTS)
    assert PROMPTS[0] not in json.dumps(sent[0].messages)


def test_a_session_the_model_ended(
    small_session: GeneratedSession,
    claude_332: ClaudeCLI,
    claude_197: ClaudeCLI,
    faketime: None,
    tmp_path: Path,
    sdk_config: Callable[[Path], None],
) -> None:
    """An ``ended-by-model`` record (2.1.332 writes it when the model ends the conversation):
    2.1.332 loads the session and sends nothing, saying so; the pickers' and the SDK's
    verdicts are measured here and asserted next to doctor's."""
    from claude_agent_sdk import list_sessions

    g = small_session
    config = stage_config(g.config_dir, tmp_path / "config")
    transcript = config / "projects" / g.project_dir.name / g.transcript.name
    ended = json.dumps(
        {"type": "ended-by-model", "timestamp": "2026-12-01T11:00:00.000Z", "sessionId": g.session_id},
        separators=(",", ":"),
    )
    transcript.write_bytes(interactive(transcript.read_bytes()) + ended.encode() + b"\n")

    [finding] = doctor_file(transcript).findings
    assert finding.code == "ended-by-model" and finding.repair is False
    assert (finding.listed, finding.loads, finding.in_picker) == (True, False, True)
    for cli in (claude_332, claude_197):
        picked = picker_probe(
            cli, Sandbox.create(tmp_path / f"picker-{cli.version}", config_dir=config), g.cwd
        )
        assert picked.found == 1 and picked.lists(g.session_id), (cli.version, picked.filtered)
    sdk_config(config)
    assert g.session_id in {s.session_id for s in list_sessions(directory=str(g.cwd))}
    run, sent, requests = resume_probe(
        claude_332, Sandbox.create(tmp_path, config_dir=config), g.cwd, g.session_id
    )
    assert run.returncode == 1 and not sent and requests == 0
    assert "Claude ended this conversation" in run.stdout + run.stderr
