"""``tt resume --input-format stream-json`` as a process with a real stdin pipe, against the
stand-in: prompts piped while a turn runs are answered after it, joined as Claude Code
2.1.332 joins them; an interrupt control request stops the turn and leaves a file that
resumes; malformed lines get an ``input_error`` event and the loop goes on. Marked
``claude``: the real 2.1.332 answers the same interrupt script with the same events."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.resume.test_cli_resume import SID332, api_env, config, transcript, work_dir  # noqa: F401  (fixture)
from tests.resume_helpers import check_api_shape, text
from tests.support.cli import TT, sigint_as
from tests.support.policy import last_user, prompt_text
from tests.support.standin import RecordedRequest, StandIn, Text
from transcript_tools.resume import turns
from transcript_tools.resume.files import load_for_resume

CLOCK = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def user(content: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": content}}


INTERRUPT = {"type": "control_request", "request_id": "req_1", "request": {"subtype": "interrupt"}}


class Gate:
    """A policy answering ``re: <prompt>``, holding the first request until released."""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.release = threading.Event()
        self.n = 0

    def __call__(self, req: RecordedRequest) -> Text:
        self.n += 1
        if self.n == 1:
            self.arrived.set()
            self.release.wait(30)
        last = last_user(req)
        return Text(f"re: {prompt_text(last) if last else ''}")


def run_tt(
    config: Path, api: StandIn, script: Callable[[Callable[[Any], None]], None], *args: str
) -> tuple[int, list[dict[str, Any]], str]:
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(config), **api_env(api)}
    p = subprocess.Popen(
        [
            *TT,
            "resume",
            SID332,
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--cwd",
            work_dir(config),
            *args,
        ],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert p.stdin is not None

    def send(o: Any) -> None:
        assert p.stdin is not None
        p.stdin.write((o if isinstance(o, bytes) else json.dumps(o).encode()) + b"\n")
        p.stdin.flush()

    try:
        script(send)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    return p.returncode, [json.loads(x) for x in out.splitlines()], err.decode()


def test_prompts_piped_while_the_first_turn_runs_are_answered_after_it_in_order(config: Path) -> None:
    gate = Gate()
    with StandIn(gate) as api:

        def script(send: Callable[[Any], None]) -> None:
            send(user("first"))
            assert gate.arrived.wait(30)
            for word in ("second", "third", "fourth"):
                send(user(word))
            time.sleep(0.3)
            gate.release.set()

        code, events, err = run_tt(config, api, script)
    assert code == 0, err
    results = [e["result"] for e in events if e["type"] == "result"]
    # 2.1.332 runs what queued as one turn, the prompts joined in order (query.merge_prompts)
    assert results == ["re: first", "re: second\nthird\nfourth"]
    assert [e["subtype"] for e in events if e["type"] == "system"] == ["init", "init"]
    # The file: one enqueue per prompt as it arrives, a dequeue per prompt a turn takes,
    # before that turn's prompt line — the pattern 2.1.332 wrote for the same script.
    new = [json.loads(x) for x in transcript(config).read_text().splitlines()]
    start = next(
        i for i, r in enumerate(new) if r.get("type") == "queue-operation" and r.get("content") == "first"
    )
    ops = [
        (r.get("operation"), r.get("content")) if r["type"] == "queue-operation" else (r["type"], None)
        for r in new[start:]
        if r["type"] in ("queue-operation", "user")
    ]
    assert ops == [
        ("enqueue", "first"),
        ("dequeue", None),
        ("user", None),
        ("enqueue", "second"),
        ("enqueue", "third"),
        ("enqueue", "fourth"),
        ("dequeue", None),
        ("dequeue", None),
        ("dequeue", None),
        ("user", None),
    ]


def test_an_interrupt_stops_the_turn_and_the_next_prompt_runs_on_a_file_that_resumes(config: Path) -> None:
    gate = Gate()
    path = transcript(config)
    with StandIn(gate) as api:

        def script(send: Callable[[Any], None]) -> None:
            send(user("slow one"))
            assert gate.arrived.wait(30)
            send(INTERRUPT)
            send(user("next"))
            time.sleep(0.3)
            gate.release.set()

        code, events, err = run_tt(config, api, script)
        second = api.message_requests[1].messages
    assert code == 0, err
    shape = [
        (e["type"], e.get("subtype") or e.get("terminal_reason")) for e in events if e["type"] != "result"
    ]
    results = [(e["subtype"], e["terminal_reason"]) for e in events if e["type"] == "result"]
    assert events[1] == {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": "req_1", "response": {"still_queued": []}},
    }
    assert shape[:3] == [("system", "init"), ("control_response", None), ("user", None)]
    assert events[2]["message"]["content"] == [text(turns.INTERRUPTED)]
    assert results == [("error_during_execution", "aborted_streaming"), ("success", "completed")]
    assert events[-1]["result"] == "re: next"
    check_api_shape(second)  # the closed turn, then the new prompt: what a resume sends
    check_api_shape(load_for_resume(path).conversation.messages)
    from transcript_tools.validate.files import validate_path

    assert validate_path(path).errors == 0  # queue-operations, cost-state and all


def test_malformed_lines_get_an_error_event_each_and_the_loop_goes_on(config: Path, standin: StandIn) -> None:
    standin.script(Text("fine"))

    def script(send: Callable[[Any], None]) -> None:
        send(b"this is not json")
        send([1, 2])
        send({"type": "assistant"})
        send(user(5))
        send(b"")
        send(
            {"type": "control_request", "request_id": "r9", "request": {"subtype": "set_model", "model": "x"}}
        )
        send(user([{"type": "text", "text": "hello"}]))

    code, events, _err = run_tt(config, standin, script)
    errors = [(e["line"], e["error"].split(":")[0]) for e in events if e.get("subtype") == "input_error"]
    assert [n for n, _ in errors] == [1, 2, 3, 4]
    assert errors[0][1] == "not JSON" and "unexpected message type 'assistant'" in next(
        e["error"] for e in events if e.get("line") == 3
    )
    refused = next(e for e in events if e["type"] == "control_response")
    assert refused["response"]["subtype"] == "error" and refused["response"]["request_id"] == "r9"
    assert [e["result"] for e in events if e["type"] == "result"] == ["fine"]
    assert code == 1  # lines were rejected


def test_stream_json_input_needs_stream_json_output(config: Path, standin: StandIn) -> None:
    from tests.resume.test_cli_resume import Run  # noqa: F401

    r = subprocess.run(
        [*TT, "resume", SID332, "--input-format", "stream-json"],
        env={**os.environ, "CLAUDE_CONFIG_DIR": str(config), **api_env(standin)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        r.returncode == 2 and "needs --output-format stream-json" in r.stderr and "Traceback" not in r.stderr
    )


@pytest.mark.claude
def test_claude_code_2_1_332_answers_the_same_interrupt_script_with_the_same_events(
    tmp_path: Path, config: Path
) -> None:
    from tests.support.claude_cli import Sandbox, clock_env, find_cli

    cli = find_cli("2.1.332")
    if cli is None:
        pytest.skip("Claude Code 2.1.332 is not available")
    work = tmp_path / "cc-work"
    work.mkdir()
    sandbox = Sandbox.create(tmp_path / "cc")

    def script_for(send: Callable[[Any], None], gate: Gate) -> None:
        send(user("slow one"))
        assert gate.arrived.wait(60)
        send(INTERRUPT)
        send(user("next"))
        time.sleep(0.5)
        gate.release.set()
        time.sleep(3)  # the CLI ends its run when stdin closes: let the second turn finish first

    gate = Gate()
    with StandIn(gate) as api:
        p = subprocess.Popen(
            [
                str(cli.path),
                "-p",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            cwd=work,
            env=sandbox.env(api.base_url, extra=clock_env(CLOCK)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

        def send(o: Any) -> None:
            assert p.stdin is not None
            p.stdin.write(json.dumps(o).encode() + b"\n")
            p.stdin.flush()

        try:
            script_for(send, gate)
            out, _ = p.communicate(timeout=90)
        finally:
            if p.poll() is None:
                p.kill()
    theirs = [json.loads(x) for x in out.splitlines()]
    gate2 = Gate()
    with StandIn(gate2) as api2:
        _, mine, err = run_tt(config, api2, lambda send: script_for(send, gate2))

    def shape(events: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
        keep = ("system", "control_response", "user", "assistant", "result")
        out = []
        for e in events:
            if e["type"] not in keep or (e["type"] == "system" and e.get("subtype") != "init"):
                continue  # 2.1.332 also prints hook and status events tt has no counterpart for
            out.append((e["type"], e.get("terminal_reason") or e.get("subtype")))
        return out

    assert len(shape(theirs)) >= 7  # init, control_response, marker, result; init, assistant, result
    assert shape(mine) == shape(theirs), err
    ctl = [e for e in theirs if e["type"] == "control_response"]
    assert ctl == [e for e in mine if e["type"] == "control_response"]


@pytest.mark.parametrize("inherited", ["default", "ignored", "blocked"])
def test_ctrl_c_while_streaming_closes_the_turn_and_exits_130(config: Path, inherited: str) -> None:
    import signal

    gate = Gate()
    path = transcript(config)
    before = path.read_bytes()
    with StandIn(gate) as api:
        env = {**os.environ, "CLAUDE_CONFIG_DIR": str(config), **api_env(api)}
        with subprocess.Popen(
            [
                *TT,
                "resume",
                SID332,
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--cwd",
                work_dir(config),
            ],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=sigint_as(inherited),
        ) as p:
            try:
                assert p.stdin is not None
                p.stdin.write(json.dumps(user("slow one")).encode() + b"\n")
                p.stdin.flush()
                assert gate.arrived.wait(30)
                p.send_signal(signal.SIGINT)
                time.sleep(0.3)
                gate.release.set()
                _out, err = p.communicate(timeout=60)
            finally:
                gate.release.set()
                if p.poll() is None:
                    p.kill()
    assert p.returncode == 130, err
    new = [json.loads(x) for x in path.read_bytes()[len(before) :].splitlines()]
    users = [r for r in new if r["type"] == "user"]
    assert users[0]["message"]["content"] == "slow one" and users[1]["message"]["content"] == [
        text(turns.INTERRUPTED)
    ]
    check_api_shape(load_for_resume(path).conversation.messages)


def test_an_image_prompt_is_sent_as_given(config: Path, standin: StandIn) -> None:
    standin.script(Text("a red dot"))
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}

    def script(send: Callable[[Any], None]) -> None:
        send(user([image, {"type": "text", "text": "what is this?"}]))

    code, events, err = run_tt(config, standin, script)
    assert code == 0, err
    sent = standin.message_requests[0].messages[-1]["content"]
    assert sent == [image, {"type": "text", "text": "what is this?"}]
    assert [e["result"] for e in events if e["type"] == "result"] == ["a red dot"]
