"""`tt resume` wiring: output formats as `claude -p`, --dry-run, each error path and its
exit code, a damaged session resumed without rewriting it, --fork, -c, Ctrl-C — and
with the real CLIs (marked ``claude``): Claude Code continues what tt wrote, and tt
continues what Claude Code just wrote, sending the same conversation."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.resume_helpers import REAL, SESSION, Builder, check_api_shape, read_records, text, tool_use
from tests.support.cli import TT, sigint_as
from tests.support.paths import CONFIG_332
from tests.support.sessions import project_folder_name
from tests.support.standin import RecordedRequest, StandIn, Text, ToolUse, closed_port
from tests.support.trees import stage
from transcript_tools.cli import main

SID332 = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"


@dataclass
class Run:
    code: int
    out: bytes
    err: str

    def json(self) -> Any:
        return json.loads(self.out)

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(x) for x in self.out.splitlines()]


@pytest.fixture
def tt(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Run ``tt ARGS`` in this process (through `cli.main`, the one exit-code boundary)."""

    def run(*args: str, stdin: str = "", env: dict[str, str] | None = None) -> Run:
        for k, v in (env or {}).items():
            monkeypatch.setenv(k, v)
        out, err = io.BytesIO(), io.BytesIO()
        monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out, encoding="utf-8", write_through=True))
        monkeypatch.setattr(sys, "stderr", io.TextIOWrapper(err, encoding="utf-8", write_through=True))
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8"))
        with pytest.raises(SystemExit) as e:
            main(list(args))
        sys.stdout.flush()
        sys.stderr.flush()
        return Run(int(e.value.code or 0), out.getvalue(), err.getvalue().decode())

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    return run


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the 2.1.332 fixture's config dir, with the session's project renamed to a real cwd."""
    work = tmp_path / "demo-app"
    work.mkdir()
    (work / "app.py").write_text("print('hello world')\n")
    cfg = tmp_path / "config"
    stage(CONFIG_332, cfg)
    for p in [cfg, *cfg.rglob("*")]:
        p.chmod(p.stat().st_mode | 0o200)
    (cfg / "projects" / "-home-dev-demo-app").rename(cfg / "projects" / project_folder_name(work.resolve()))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(cfg))
    return cfg


def transcript(config: Path) -> Path:
    return next(config.glob(f"projects/*/{SID332}.jsonl"))


def api_env(api: StandIn) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": api.base_url}


def work_dir(config: Path) -> str:
    return str(config.parent / "demo-app")


# --- output formats ----------------------------------------------------------------------


def test_json_output_is_a_result_object_and_the_turn_is_appended(
    tt: Any, config: Path, standin: StandIn
) -> None:
    path = transcript(config)
    before = path.read_bytes()
    standin.script(ToolUse("Read", {"file_path": "app.py"}), Text("It prints hello world."))
    r = tt(
        "resume",
        SID332[:8],
        "-p",
        "What does app.py print?",
        "--output-format",
        "json",
        "--cwd",
        work_dir(config),
        env=api_env(standin),
    )
    assert r.code == 0, r.err
    result = r.json()
    assert result["type"] == "result" and result["subtype"] == "success" and result["is_error"] is False
    assert (
        result["result"] == "It prints hello world."
        and result["session_id"] == SID332
        and result["num_turns"] == 2
    )
    assert (
        result["total_cost_usd"] >= 0
        and result["usage"]["input_tokens"] > 0
        and result["permission_denials"] == []
    )
    first = standin.message_requests[0]
    assert first.model == "claude-opus-5-5"  # the model the session last used
    assert first.messages[-1] == {"role": "user", "content": "What does app.py print?"}
    check_api_shape(standin.message_requests[1].messages)
    after = path.read_bytes()
    assert (
        after.startswith(before) and len(read_records(path)) == len(before.splitlines()) + 6
    )  # prompt, call, result, answer, last-prompt, cost-state (resume_state)


def test_stream_json_prints_every_event(tt: Any, config: Path, standin: StandIn) -> None:
    standin.script(Text("hi"))
    r = tt(
        "resume",
        SID332,
        "-p",
        "hello",
        "--output-format",
        "stream-json",
        "--cwd",
        work_dir(config),
        env=api_env(standin),
    )
    assert r.code == 0, r.err
    events = r.lines()
    assert [e["type"] for e in events] == ["system", "assistant", "result"]
    assert events[0]["subtype"] == "init" and events[0]["apiKeySource"] == "ANTHROPIC_API_KEY"
    assert events[1]["message"]["content"] == [text("hi")]


def test_text_output_and_a_prompt_from_stdin(tt: Any, config: Path, standin: StandIn) -> None:
    r = tt(
        "resume",
        SID332,
        "-p",
        "-",
        "--cwd",
        work_dir(config),
        stdin="from stdin\nsecond line",
        env=api_env(standin),
    )
    assert r.code == 0, r.err
    (req,) = standin.message_requests
    assert req.messages[-1] == {"role": "user", "content": "from stdin\nsecond line"}
    # The stand-in's policy answers "ACK n=<messages> last=<first line>"; text mode prints just that.
    assert r.out == f"ACK n={len(req.messages)} last=from stdin\n".encode()


# --- dry run -----------------------------------------------------------------------------


def test_dry_run_prints_the_request_and_sends_nothing(tt: Any, config: Path) -> None:
    path = transcript(config)
    before = path.read_bytes()
    r = tt(
        "resume",
        SID332,
        "--dry-run",
        "--json",
        "-p",
        "next?",
        "--append-system-prompt",
        "Be terse.",
        "--allowed-tools",
        "Bash",
        "--disallowed-tools",
        "Grep",
    )
    assert r.code == 0, r.err
    req = r.json()
    assert list(req) == ["model", "max_tokens", "system", "tools", "messages"]
    assert req["model"] == "claude-opus-5-5" and req["system"].endswith("\n\nBe terse.")
    assert [t["name"] for t in req["tools"]] == ["Read", "Glob", "Bash"]
    assert req["messages"][0]["content"].startswith("This session is being continued")
    assert req["messages"][-1] == {"role": "user", "content": "next?"}
    check_api_shape(req["messages"][:-1])
    assert path.read_bytes() == before and "20 messages" in r.err
    r2 = tt("resume", SID332, "--dry-run", "--json", "--model", "claude-haiku-4-5", "--system-prompt", "S")
    assert r2.json()["model"] == "claude-haiku-4-5" and r2.json()["system"] == "S"
    assert r2.json()["messages"][-1]["role"] == "assistant"  # no prompt: the conversation as it is


# --- errors and their exit codes ---------------------------------------------------------


def test_no_key_is_exit_5_before_anything_is_written(tt: Any, config: Path) -> None:
    path = transcript(config)
    before = path.read_bytes()
    r = tt("resume", SID332, "-p", "hello")
    assert r.code == 5 and "ANTHROPIC_API_KEY is not set" in r.err and r.out == b""
    assert path.read_bytes() == before


def test_no_key_is_checked_before_a_fork_is_written(tt: Any, config: Path) -> None:
    project = transcript(config).parent
    files = sorted(project.glob("*.jsonl"))
    assert tt("resume", SID332, "--fork", "-p", "hello").code == 5
    assert sorted(project.glob("*.jsonl")) == files


def test_a_budget_on_an_unpriced_model_is_exit_2_before_a_fork_is_written(tt: Any, config: Path) -> None:
    project = transcript(config).parent
    files = sorted(project.glob("*.jsonl"))
    r = tt(
        "resume",
        SID332,
        "--fork",
        "--max-budget-usd",
        "1",
        "--model",
        "claude-haiku-5-5",  # unpriced in tt on purpose (model/pricing.py)
        "-p",
        "hello",
        env={"ANTHROPIC_API_KEY": "k"},
    )
    assert r.code == 2 and "no price is known for model 'claude-haiku-5-5'" in r.err
    assert sorted(project.glob("*.jsonl")) == files


def test_unreachable_api_is_exit_5_with_one_clear_message(tt: Any, config: Path) -> None:
    env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{closed_port()}"}
    r = tt("resume", SID332, "-p", "hello", "--max-retries", "0", "--cwd", work_dir(config), env=env)
    assert r.code == 5 and r.err.startswith("tt: cannot reach the API at http://127.0.0.1:")
    # The prompt was written before the call, as Claude Code does: still a resumable session.
    check_api_shape(json.loads(tt("resume", SID332, "--dry-run", "--json").out)["messages"])


def test_unknown_session_is_exit_3(tt: Any, config: Path) -> None:
    r = tt("resume", "0000dead", "-p", "hello")
    assert r.code == 3 and "no session '0000dead'" in r.err


def test_over_the_cap_is_exit_4(tt: Any, tmp_path: Path) -> None:
    b = Builder()
    b.user("p1")
    b.assistant(text("x" * 500))
    path = b.write(tmp_path / f"{SESSION}.jsonl")
    r = tt("resume", str(path), "--dry-run", "--json", "--max-bytes", "200")
    assert r.code == 4 and str(path) in r.err and "--max-bytes" in r.err


def test_a_file_with_no_conversation_is_exit_4(tt: Any, tmp_path: Path) -> None:
    empty = tmp_path / f"{SESSION}.jsonl"
    empty.write_bytes(b"")
    r = tt("resume", str(empty), "--dry-run", "--json")
    # The one message every command gives a file that is not a transcript.
    assert r.code == 4 and "an empty file; this is not a transcript" in r.err


def test_usage_errors_are_exit_2(tt: Any, config: Path) -> None:
    assert tt("resume", SID332).code == 2  # no prompt
    r = tt("resume", SID332, "--dry-run", "--json", "--allowed-tools", "Teleport")
    assert r.code == 2 and "tt has no tool 'Teleport'" in r.err
    assert tt("resume", "--dry-run", "--json").code == 2  # not a terminal: no picker


def test_max_turns_is_exit_1_with_the_result(tt: Any, config: Path, standin: StandIn) -> None:
    standin.script(ToolUse("Glob", {"pattern": "*"}))
    r = tt(
        "resume",
        SID332,
        "-p",
        "go",
        "--max-turns",
        "1",
        "--output-format",
        "json",
        "--cwd",
        work_dir(config),
        env=api_env(standin),
    )
    assert r.code == 1 and r.json()["subtype"] == "error_max_turns"


# --- damage, fork, continue --------------------------------------------------------------


def test_torn_tail_and_dangling_call_resume_without_rewriting_the_file(
    tt: Any, tmp_path: Path, standin: StandIn
) -> None:
    b = Builder(cwd=str(tmp_path))
    b.user("p1")
    b.assistant(text("a1"), stop="end_turn")
    b.user("run it")
    (call,) = b.assistant(tool_use("toolu_crash", "Bash", command="make"), stop="tool_use")
    path = b.write(tmp_path / f"{SESSION}.jsonl")
    with open(path, "ab") as f:
        f.write(b'{"parentUuid":"' + call["uuid"].encode() + b'","isSidechain":false,"type":"us')
    before = path.read_bytes()
    r = tt(
        "resume",
        str(path),
        "-p",
        "carry on",
        "--output-format",
        "json",
        "--cwd",
        str(tmp_path),
        env=api_env(standin),
    )
    assert r.code == 0, r.err
    sent = standin.message_requests[0].messages
    check_api_shape(sent)
    assert any(
        b.get("tool_use_id") == "toolu_crash" and b.get("is_error")
        for m in sent
        for b in (m["content"] if isinstance(m["content"], list) else [])
    )
    after = path.read_bytes()
    assert after.startswith(before)  # appended only; the torn bytes stay where they were
    assert "left out the torn last line" in r.err and "1 unanswered call(s)" in r.err  # never silent
    new = [json.loads(x) for x in after[len(before) :].splitlines() if x.strip()]
    assert new[0]["message"]["content"] == "carry on" and new[0]["parentUuid"] == call["uuid"]


def test_fork_continues_into_a_new_session_and_leaves_the_original(
    tt: Any, config: Path, standin: StandIn
) -> None:
    path = transcript(config)
    before = path.read_bytes()
    r = tt(
        "resume",
        SID332,
        "--fork",
        "-p",
        "in the fork",
        "--output-format",
        "json",
        "--cwd",
        work_dir(config),
        env=api_env(standin),
    )
    assert r.code == 0, r.err
    new_id = r.json()["session_id"]
    assert new_id != SID332 and path.read_bytes() == before
    forked = path.parent / f"{new_id}.jsonl"
    recs = read_records(forked)
    assert recs[-2]["message"]["content"][0]["text"].startswith("ACK") and {
        x.get("sessionId") for x in recs if "sessionId" in x
    } == {new_id}
    sent = standin.message_requests[0].messages
    original = json.loads(tt("resume", SID332, "--dry-run", "--json").out)["messages"]
    assert sent[:-1] == original  # the same conversation, continued elsewhere


def test_fork_past_the_cap_keeps_the_preserved_segment(tt: Any, config: Path, standin: StandIn) -> None:
    # Past --max-bytes only the part after the last boundary is read, from the first line
    # of the messages the compaction kept verbatim (written before the boundary): the
    # fork must carry them, or it sends less than a resume of the original.
    path = transcript(config)
    data = path.read_bytes()
    boundary_at = data.rindex(b'"subtype":"compact_boundary"')
    cap = len(data) - data.rindex(b"\n", 0, boundary_at) + 20_000  # the boundary and a little before it
    assert cap < len(data)
    original = json.loads(tt("resume", SID332, "--dry-run", "--json", "--max-bytes", str(cap)).out)[
        "messages"
    ]
    r = tt(
        "resume",
        SID332,
        "--fork",
        "--max-bytes",
        str(cap),
        "-p",
        "in the fork",
        "--output-format",
        "json",
        "--cwd",
        work_dir(config),
        env=api_env(standin),
    )
    assert r.code == 0, r.err
    assert standin.message_requests[0].messages[:-1] == original


def test_fork_forks_the_subagent_transcripts_as_tt_fork_does(tt: Any, config: Path, standin: StandIn) -> None:
    path = transcript(config)
    project = path.parent
    before = {p: p.read_bytes() for p in [path, *path.with_suffix("").rglob("*")] if p.is_file()}
    assert any(p.name.endswith(".meta.json") for p in before)  # the fixture has a subagent with its sidecar
    r = tt(
        "resume",
        SID332,
        "--fork",
        "-p",
        "in the fork",
        "--output-format",
        "json",
        "--cwd",
        work_dir(config),
        env=api_env(standin),
    )
    assert r.code == 0, r.err
    new_id = r.json()["session_id"]
    copies = sorted(p.relative_to(project / new_id) for p in (project / new_id).rglob("*") if p.is_file())
    transcripts = [c for c in copies if c.suffix == ".jsonl"]
    assert (
        f"tt: forked {SID332} into {new_id} ({project / f'{new_id}.jsonl'}) and {len(transcripts)} subagent transcript(s)"
        in r.err
    )
    # tt fork of the same session writes the same files, by name.
    forked = tt("fork", SID332, "--json")
    assert forked.code == 0, forked.err
    other = forked.json()["session_id"]
    assert copies == sorted(
        p.relative_to(project / other) for p in (project / other).rglob("*") if p.is_file()
    )
    assert transcripts and [str(project / other / c) for c in transcripts] == forked.json()["subagents"]
    # The whole session is forked, history before the compact boundary included, as tt
    # fork forks it; then tt's turn (prompt and answer, and the last-prompt record).
    ours = read_records(project / f"{new_id}.jsonl")
    theirs = read_records(project / f"{other}.jsonl")
    assert [x.get("type") for x in ours[: len(theirs)]] == [x.get("type") for x in theirs]
    assert [x.get("message") for x in ours[: len(theirs)]] == [x.get("message") for x in theirs]
    assert [x["type"] for x in ours[len(theirs) :] if x.get("type") in ("user", "assistant")] == [
        "user",
        "assistant",
    ]
    old_ids = {
        json.loads(x).get("uuid") for p, b in before.items() if p.suffix == ".jsonl" for x in b.splitlines()
    } - {None}
    for c in transcripts:
        recs = read_records(project / new_id / c)
        assert recs and {x["sessionId"] for x in recs} == {new_id}  # the new session's, not the original's
        assert not old_ids & {x.get("uuid") for x in recs}
        assert [x.get("message") for x in recs] == [
            x.get("message") for x in read_records(project / other / c)
        ]
    for c in copies:
        if c.name.endswith(".meta.json"):  # names no entry uuid (2.1.332): the same bytes
            assert (project / new_id / c).read_bytes() == (project / SID332 / c).read_bytes()
    assert {p: p.read_bytes() for p in before} == before  # the original and its subagents: untouched


def test_continue_takes_the_latest_session_of_this_directory(
    tt: Any, config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(work_dir(config))
    r = tt("resume", "-c", "--dry-run", "--json", "-p", "x")
    assert r.code == 0, r.err
    assert str(transcript(config)) in r.err


@pytest.mark.parametrize(
    "command",
    [
        ["validate", "-c", "--json"],
        ["repair", "-c", "--dry-run", "--json"],
        ["redact", "-c", "--json"],
        ["export", "-c", "--dry-run", "--json"],
    ],
)
def test_continue_names_the_same_session_for_every_command_that_takes_one(
    tt: Any, config: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.chdir(work_dir(config))
    before = {p: p.read_bytes() for p in config.rglob("*") if p.is_file()}
    r = tt(*command)
    assert r.code == 0, r.err
    assert SID332.encode() in r.out  # the session -c names is the one in this directory's project
    assert {p: p.read_bytes() for p in config.rglob("*") if p.is_file()} == before
    both = tt(command[0], SID332, *command[1:])
    assert both.code == 2, both.err


@pytest.mark.parametrize("verb", ["validate", "doctor"])
def test_continue_is_this_project_s_file_when_its_id_is_in_another_project_too(
    tt: Any, config: Path, monkeypatch: pytest.MonkeyPatch, verb: str
) -> None:
    # New-user pass: -c picked this project's file, then named it by its id, which a copy
    # in another project made ambiguous ("exists in 2 projects", exit 3).
    here = transcript(config)  # before the copy: the helper finds the file by its id
    other = config / "projects" / "-srv-copy"
    other.mkdir()
    (other / here.name).write_bytes(here.read_bytes())
    monkeypatch.chdir(work_dir(config))
    r = tt(verb, "-c", "--json")
    assert r.code in (0, 1), r.err  # doctor: 1, a `claude -p` session is hidden from the picker
    assert json.loads(r.out)["files"][0]["path"] == str(here)


def test_the_picker_lists_this_directorys_sessions_newest_first(
    config: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from transcript_tools.resume.files_pick import sessions_to_pick
    from transcript_tools.views import resume as picker

    project = transcript(config).parent
    b = Builder()
    b.user("an older session")
    b.assistant(text("old"))
    older = b.write(project / f"{SESSION}.jsonl")
    os.utime(older, (1, 1))
    asked: list[tuple[Any, ...]] = []
    monkeypatch.setattr(picker.click, "prompt", lambda *a, **k: asked.append(a) or 2)
    monkeypatch.chdir(work_dir(config))
    monkeypatch.setenv("TT_WIDTH", "200")
    rows = sessions_to_pick()
    assert [r.path for r in rows] == [transcript(config), older]
    from transcript_tools.cli.common import console

    assert picker.pick_session(rows, console(stderr=True)) == older
    shown = capsys.readouterr().err
    assert shown.index(SID332[:8]) < shown.index(SESSION[:8]) and "an older session" in shown


# --- Ctrl-C ------------------------------------------------------------------------------


@pytest.mark.parametrize("inherited", ["default", "ignored", "blocked"])
def test_ctrl_c_mid_request_exits_130_and_leaves_a_resumable_file(
    config: Path, tmp_path: Path, inherited: str
) -> None:
    # "ignored": started as a script's background job is; Claude Code (Node) answers SIGINT
    # then too, and so does tt (edge.interrupts).
    release = threading.Event()
    arrived = threading.Event()

    def slow(req: RecordedRequest) -> Text:
        arrived.set()
        release.wait(30)
        return Text("too late")

    path = transcript(config)
    before = path.read_bytes()
    with StandIn(slow) as api:
        env = {**os.environ, "CLAUDE_CONFIG_DIR": str(config), **api_env(api)}
        with subprocess.Popen(
            [
                *TT,
                "resume",
                SID332,
                "-p",
                "slow one",
                "--cwd",
                work_dir(config),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=sigint_as(inherited),
        ) as p:
            try:
                assert arrived.wait(60), "the request never arrived"
                p.send_signal(signal.SIGINT)
                _out, err = p.communicate(timeout=30)
            finally:
                release.set()
                if p.poll() is None:
                    p.kill()
    assert p.returncode == 130 and err.strip().startswith("tt: ")  # click reports it as "aborted"
    new = [json.loads(x) for x in path.read_bytes()[len(before) :].splitlines()]
    assert [r["type"] for r in new] == [
        "user",
        "user",
        "last-prompt",
        "cost-state",
    ]  # the session has cost-states
    assert new[1]["message"]["content"] == [text("[Request interrupted by user]")]
    check_api_shape(
        json.loads(
            subprocess.run(
                [*TT, "resume", SID332, "--dry-run", "--json"],
                env={**os.environ, "CLAUDE_CONFIG_DIR": str(config)},
                capture_output=True,
                timeout=60,
            ).stdout
        )["messages"]
    )


# --- with the real Claude Code CLIs --------------------------------------------------------


def _cli_resume_blocks(cli: Any, config: Path, sid: str, cwd: Path, probe: str) -> list[Any]:
    from tests.support.oracle import conversation_blocks, resume_with_cli

    return conversation_blocks(resume_with_cli(cli, config, sid, cwd, probe))


@pytest.mark.claude
def test_claude_code_resumes_what_tt_wrote_and_sees_its_turn(
    tt: Any, generated_session: Any, tmp_path: Path, standin: StandIn
) -> None:
    from tests.support.oracle import Block

    s = generated_session.copy_to(tmp_path)
    standin.script(ToolUse("Read", {"file_path": str(s.cwd / "app.py")}), Text("tt says hello"))
    r = tt(
        "resume",
        str(s.transcript),
        "-p",
        "a prompt from tt",
        "--output-format",
        "json",
        env={**api_env(standin), "CLAUDE_CONFIG_DIR": str(s.config_dir)},
    )
    assert r.code == 0, r.err
    blocks = _cli_resume_blocks(s.cli, s.config_dir, s.session_id, s.cwd, "after tt")
    tail = blocks[-5:]
    assert tail[0] == Block("user", "text", "a prompt from tt")
    assert tail[1].kind == "tool_use" and tail[1].value.endswith(" Read")
    assert tail[2].kind == "tool_result" and tail[3] == Block("assistant", "text", "tt says hello")
    assert tail[4] == Block("user", "text", "after tt")


@pytest.mark.claude
def test_tt_resumes_what_claude_code_just_wrote_sending_the_same_conversation(
    tt: Any, generated_session: Any, tmp_path: Path, standin: StandIn
) -> None:
    from tests.support.oracle import compare_histories, resume_with_cli

    s = generated_session.copy_to(tmp_path)
    probe = "same probe"
    theirs = resume_with_cli(s.cli, s.config_dir, s.session_id, s.cwd, probe)
    r = tt(
        "resume",
        s.session_id,
        "-p",
        probe,
        "--output-format",
        "json",
        env={**api_env(standin), "CLAUDE_CONFIG_DIR": str(s.config_dir)},
    )
    assert r.code == 0, r.err
    mine = standin.message_requests[0].messages
    assert compare_histories(mine, theirs, labels=("tt", f"claude {s.cli.version}")) == ""


GIT_BASH_296 = REAL / "v2.1.296-windows-git-bash-partial-copy.jsonl"


@pytest.mark.claude
@pytest.mark.parametrize("version", ["2.1.332", "2.1.197"])
def test_a_2_1_296_call_is_resent_with_its_input_not_its_wire_copy(
    tt: Any, tmp_path: Path, version: str
) -> None:
    # A new user asked whether tt should send 2.1.29x's `wireToolInputs` (the input as it
    # went out from Git Bash: `cd /c/Users/… && git commit …`) rather than the call's
    # `input` (`git commit …`). Both CLIs resend `input` (the 2.1.332 binary rewrites from
    # the wire copy only one messaging tool's calls); tt sends what they send.
    from tests.conftest import require_cli
    from tests.support.oracle import resume_request

    sid = "54b91c91-badc-481e-b5b3-de78b2fa4c93"
    cwd = tmp_path / "work"
    cwd.mkdir()
    config = tmp_path / "config"
    project = config / "projects" / project_folder_name(cwd)
    project.mkdir(parents=True)
    records = [json.loads(x) for x in GIT_BASH_296.read_bytes().splitlines()]
    records[0]["parentUuid"] = None  # the copy's first line: its parent is not in the file
    for r in records:
        if "cwd" in r:
            r["cwd"] = str(cwd)  # run where the session says it ran
    (project / f"{sid}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    [call] = [b for b in records[0]["message"]["content"] if b["type"] == "tool_use"]
    wire = records[0]["wireToolInputs"][call["id"]]
    assert wire["command"].startswith("cd /c/Users/") and wire != call["input"]

    def sent_inputs(messages: list[dict[str, Any]]) -> list[Any]:
        return [
            b["input"]
            for m in messages
            if isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") == "tool_use"
        ]

    theirs = resume_request(require_cli(version), config, sid, cwd).messages
    assert sent_inputs(theirs) == [call["input"]]
    r = tt("resume", sid, "--dry-run", "--json", "-p", "x", env={"CLAUDE_CONFIG_DIR": str(config)})
    assert r.code == 0, r.err
    assert sent_inputs(r.json()["messages"]) == [call["input"]]


# --- the model lifecycle (`lifecycle`): the clock is TT_NOW ----------------------------------

SONNET_45_SESSION = REAL / "v2.1.14-microcompact-partial-copy.jsonl"


def _thinking_blocks(req: dict[str, Any]) -> int:
    return sum(
        1
        for m in req["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "thinking"
    )


def test_a_retired_model_switches_on_its_date_with_one_line_and_no_thinking(tt: Any) -> None:
    before = tt(
        "resume",
        str(SONNET_45_SESSION),
        "--dry-run",
        "--json",
        "-p",
        "go on",
        env={"TT_NOW": "2026-11-29T12:00:00Z"},
    )
    assert before.code == 0, before.err
    assert before.json()["model"] == "claude-sonnet-4-5-20250929" and _thinking_blocks(before.json()) == 19
    assert "retired" not in before.err
    after = tt(
        "resume",
        str(SONNET_45_SESSION),
        "--dry-run",
        "--json",
        "-p",
        "go on",
        env={"TT_NOW": "2026-12-01T12:00:00Z"},
    )
    assert after.code == 0, after.err
    assert after.json()["model"] == "claude-opus-5-5" and _thinking_blocks(after.json()) == 0
    assert (
        "tt: claude-sonnet-4-5-20250929 is retired since 2026-11-30: continuing on claude-opus-5-5, as Claude Code "
        "2.1.332 does (--model overrides); its 19 thinking block(s) are not sent\n"
    ) in after.err
    # --model overrides, and the model that wrote the thinking gets it back.
    given = tt(
        "resume",
        str(SONNET_45_SESSION),
        "--dry-run",
        "--json",
        "--model",
        "claude-sonnet-4-5",
        env={"TT_NOW": "2026-12-01T12:00:00Z"},
    )
    assert given.json()["model"] == "claude-sonnet-4-5" and _thinking_blocks(given.json()) == 19
    assert "retired" not in given.err


def test_another_model_gets_no_thinking_and_says_so(tt: Any) -> None:
    r = tt(
        "resume",
        str(SONNET_45_SESSION),
        "--dry-run",
        "--json",
        "--model",
        "claude-opus-4-6",
        env={"TT_NOW": "2026-11-29T12:00:00Z"},
    )
    assert r.json()["model"] == "claude-opus-4-6" and _thinking_blocks(r.json()) == 0
    assert "tt: 19 thinking block(s) written by another model than claude-opus-4-6 are not sent" in r.err


def test_a_bad_tt_now_is_a_usage_error(tt: Any) -> None:
    r = tt("resume", str(SONNET_45_SESSION), "--dry-run", "--json", env={"TT_NOW": "yesterday"})
    assert r.code == 2 and "TT_NOW='yesterday' is not an ISO 8601 date and time" in r.err


def test_a_dry_run_for_a_person_is_a_summary_and_json_is_the_request(tt: Any) -> None:
    r = tt(
        "resume", str(SONNET_45_SESSION), "--dry-run", "-p", "go on", env={"TT_NOW": "2026-12-01T12:00:00Z"}
    )
    assert r.code == 0 and r.err == ""  # everything on stdout, once
    out = r.out.decode()
    lines = out.splitlines()
    assert lines[0] == f"Dry run of {SONNET_45_SESSION}: nothing sent, nothing written"
    fields = {ln.split()[0]: ln.split(None, 1)[1] for ln in lines[1:-1]}
    assert fields["session"].startswith("839b35f7-4dbd-4d93-9772-3c272cc87caa  (Claude Code 2.1.14)")
    assert "is not here: tools would run in" in fields["cwd"]  # the recorded cwd is gone
    assert fields["model"].startswith(
        "claude-opus-5-5  (claude-sonnet-4-5-20250929 is retired since 2026-11-30"
    )
    request = tt(
        "resume",
        str(SONNET_45_SESSION),
        "--dry-run",
        "--json",
        "-p",
        "go on",
        env={"TT_NOW": "2026-12-01T12:00:00Z"},
    ).json()
    assert fields["request"].startswith(f"{len(request['messages'])} messages, ")
    assert "read from byte 329782 (the last compact boundary)" in fields["request"]
    assert fields["tools"] == "Read, Glob, Grep" and fields["prompt"] == "'go on'"
    assert lines[-1] == "--json prints the request itself."


def test_a_dry_run_says_the_no_response_sentinel_in_words_and_json_keeps_the_code(tt: Any) -> None:
    """Finding (issue 18 item 14, round 2): the summary printed ``no-response-sentinel``.
    On a real 2.1.38 session that ends on an unanswered user message."""
    path = REAL / "v2.1.38-tool-heavy.jsonl"
    r = tt("resume", str(path), "--dry-run")
    assert r.code == 0 and r.err == ""
    out = r.out.decode()
    assert "no-response-sentinel" not in out
    note = next(ln for ln in out.splitlines() if ln.split()[:1] == ["note"])
    assert (
        "ends on a user message (a prompt or a tool's result) with no answer" in note
        and '"No response requested."' in note
    )
    request = tt("resume", str(path), "--dry-run", "--json")
    assert request.json()["messages"][-1]["content"][0]["text"] == "No response requested."
    assert "no-response-sentinel" in request.err  # the code, for scripts
    # ... labelled as a note, after the repairs named by their fixes (a new user read
    # "1 repair(s) applied in memory ...; orphan-thinking" as the repair's name).
    assert "notes: " in request.err and request.err.index("notes: ") < request.err.index(
        "no-response-sentinel"
    )
    damaged = REAL / "v2.1.296-windows-git-bash-partial-copy.jsonl"  # its first parent is elsewhere
    r = tt("resume", str(damaged), "--dry-run", "--json")
    assert r.code == 0 and "repair(s) applied in memory: relink-parent (the file is unchanged)" in r.err, (
        r.err
    )
