"""`engine.QueryEngine` with the real ``anthropic`` client against the stand-in: the tool
loop, the events, the records it appends, budgets and turn limits, denials, API errors
and Ctrl-C — and that what it writes is a valid session tt and Claude Code resume."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.resume_helpers import SESSION, Builder, check_api_shape, read_records, text
from tests.support.standin import ApiError as Scripted
from tests.support.standin import RecordedRequest, StandIn, Text, ToolUse
from transcript_tools.edge.client import AnthropicClient, Credentials, Event, ModelRequest, ModelResponse
from transcript_tools.model.errors import ApiError, UsageError
from transcript_tools.model.pricing import Tokens, cost_usd
from transcript_tools.resume import turns
from transcript_tools.resume.engine import QueryEngine
from transcript_tools.resume.files import load_for_resume
from transcript_tools.resume.files_setup import FileTranscript, engine_world
from transcript_tools.resume.tools.registry import ToolContext, ToolOutcome, ToolRegistry
from transcript_tools.validate.files import validate_path

PRICED = "claude-sonnet-4-6"


def session_file(tmp_path: Path) -> tuple[Path, Builder]:
    (tmp_path / "work").mkdir(exist_ok=True)
    (tmp_path / "work" / "notes.txt").write_text("alpha\nbeta\n")
    b = Builder(cwd=str(tmp_path / "work"))
    b.user("earlier prompt")
    b.assistant(text("earlier answer"), stop="end_turn")
    return b.write(tmp_path / f"{SESSION}.jsonl"), b


def make_engine(
    tmp_path: Path, client: Any, registry: ToolRegistry | None = None, **kw: Any
) -> tuple[QueryEngine, Path]:
    path, _ = session_file(tmp_path)
    got = load_for_resume(path)
    conv = got.conversation
    cwd = tmp_path / "work"
    env = turns.Envelope(session_id=SESSION, cwd=str(cwd), version=conv.version or "x", git_branch="main")
    eng = QueryEngine(
        client=client,
        session_id=SESSION,
        cwd=cwd,
        model=kw.pop("model", PRICED),
        envelope=env,
        messages=conv.messages,
        leaf_uuid=conv.leaf_uuid,
        transcript=FileTranscript(path),
        **{**engine_world(cwd, kw.pop("add_dirs", ()), registry), **kw},
    )
    return eng, path


def real_client(api: StandIn) -> AnthropicClient:
    return AnthropicClient(Credentials("test-key", None, api.base_url), max_retries=2, sleep=lambda s: None)


def run(eng: QueryEngine, prompt: str = "next step") -> list[dict[str, Any]]:
    return list(eng.submit_message(prompt))


# --- the loop --------------------------------------------------------------------------


def test_a_tool_round_trip_in_one_turn(standin: StandIn, tmp_path: Path) -> None:
    notes = str(tmp_path / "work" / "notes.txt")
    standin.script(
        ToolUse("Read", {"file_path": notes}, text="Let me look."), Text("It says alpha and beta.")
    )
    with real_client(standin) as client:
        eng, path = make_engine(tmp_path, client)
        before = path.read_bytes()
        events = run(eng, "what is in notes.txt?")
    assert [(e["type"], e.get("subtype")) for e in events] == [
        ("system", "init"),
        ("assistant", None),
        ("assistant", None),
        ("user", None),
        ("assistant", None),
        ("result", "success"),
    ]
    init, result = events[0], events[-1]
    assert (
        init["session_id"] == SESSION
        and init["tools"] == ["Read", "Glob", "Grep"]
        and init["model"] == PRICED
    )
    assert (
        result["result"] == "It says alpha and beta." and result["num_turns"] == 2 and not result["is_error"]
    )
    assert result["permission_denials"] == []
    # The second request carries the call and its result, the API's way.
    first, second = standin.message_requests
    assert first.messages[-1] == {"role": "user", "content": "what is in notes.txt?"}
    assert second.messages[-2]["content"][1]["name"] == "Read"
    assert second.messages[-1]["content"][0]["content"] == "1\talpha\n2\tbeta\n3\t"
    check_api_shape(second.messages)
    # Usage and cost: both calls, priced.
    usage = result["usage"]
    totals = Tokens(usage["input_tokens"], usage["output_tokens"])
    assert usage["input_tokens"] > 0 and result["total_cost_usd"] == round(cost_usd(PRICED, totals) or 0, 6)
    assert result["modelUsage"][PRICED]["costUSD"] == pytest.approx(result["total_cost_usd"])
    assert eng.files_read == {notes: Path(notes).stat().st_mtime_ns}
    # Only appended.
    assert path.read_bytes().startswith(before)


def test_the_records_written_are_claude_codes(standin: StandIn, tmp_path: Path) -> None:
    standin.script(ToolUse("Glob", {"pattern": "*.txt"}, text="Listing."), Text("Done."))
    with real_client(standin) as client:
        eng, path = make_engine(tmp_path, client)
        n_before = len(read_records(path))
        leaf_before = eng.leaf_uuid
        run(eng, "list files")
    new = read_records(path)[n_before:]
    kinds = [
        (
            r["type"],
            r["message"]["content"][0]["type"]
            if "message" in r and isinstance(r["message"]["content"], list)
            else None,
        )
        for r in new
    ]
    assert kinds == [
        ("user", None),
        ("assistant", "text"),
        ("assistant", "tool_use"),
        ("user", "tool_result"),
        ("assistant", "text"),
        ("last-prompt", None),
    ]
    prompt, a_text, a_call, result, answer, last = new
    assert prompt["parentUuid"] == leaf_before and prompt["message"] == {
        "role": "user",
        "content": "list files",
    }
    # split lines of one response: chained, same id and usage, final stop_reason on each
    assert a_text["parentUuid"] == prompt["uuid"] and a_call["parentUuid"] == a_text["uuid"]
    assert (
        a_text["message"]["id"] == a_call["message"]["id"]
        and a_text["message"]["usage"] == a_call["message"]["usage"]
    )
    assert a_text["message"]["stop_reason"] == a_call["message"]["stop_reason"] == "tool_use"
    assert a_text["requestId"].startswith("req_")
    # the result names its call's line and carries the structured result
    assert result["parentUuid"] == a_call["uuid"] and result["sourceToolAssistantUUID"] == a_call["uuid"]
    assert result["toolUseResult"]["filenames"] == ["notes.txt"] and result["promptId"] == prompt["promptId"]
    assert answer["parentUuid"] == result["uuid"]
    assert last == {
        "type": "last-prompt",
        "lastPrompt": "list files",
        "leafUuid": answer["uuid"],
        "sessionId": SESSION,
    }
    for r in new[:-1]:
        assert r["sessionId"] == SESSION and r["cwd"] == str(tmp_path / "work") and r["entrypoint"] == "tt"
        assert r["userType"] == "external" and r["gitBranch"] == "main" and r["isSidechain"] is False
        assert len(r["timestamp"]) == 24 and r["timestamp"].endswith("Z")
    # compact separators, as JSON.stringify writes them
    raw = path.read_bytes().splitlines()[n_before]
    assert b'": ' not in raw and b'", "' not in raw
    report = validate_path(path)
    assert report.errors == 0, [d.code for d in report.diagnostics]


def test_the_prompt_is_on_disk_before_the_model_is_called(tmp_path: Path) -> None:
    seen: list[list[dict[str, Any]]] = []
    path_box: list[Path] = []

    def policy(req: RecordedRequest) -> Text:
        seen.append(read_records(path_box[0]))
        return Text("ok")

    with StandIn(policy) as api, real_client(api) as client:
        eng, path = make_engine(tmp_path, client)
        path_box.append(path)
        run(eng, "is it written?")
    assert seen[0][-1]["message"]["content"] == "is it written?"


def test_the_engine_then_resumes_its_own_file(standin: StandIn, tmp_path: Path) -> None:
    standin.script(ToolUse("Read", {"file_path": "notes.txt"}), Text("first"), Text("second"))
    with real_client(standin) as client:
        eng, path = make_engine(tmp_path, client)
        run(eng, "one")
        got = load_for_resume(path)
        assert got.fast and got.conversation.messages == eng.messages
        run(eng, "two")
    third = standin.message_requests[-1]
    after = load_for_resume(path).conversation.messages
    assert third.messages == after[:-1] and after[-1] == {"role": "assistant", "content": [text("second")]}


# --- limits ------------------------------------------------------------------------------


def test_max_turns_ends_with_error_max_turns_after_running_the_tools(
    standin: StandIn, tmp_path: Path
) -> None:
    standin.script(ToolUse("Read", {"file_path": "notes.txt"}), Text("unused"))
    with real_client(standin) as client:
        eng, path = make_engine(tmp_path, client, max_turns=1)
        events = run(eng)
    result = events[-1]
    assert (result["subtype"], result["is_error"], result["num_turns"]) == ("error_max_turns", True, 2)
    assert result["errors"] == ["Reached maximum number of turns (1)"] and "result" not in result
    assert len(standin.message_requests) == 1 and standin.pending == 1
    assert read_records(path)[-2]["message"]["content"][0]["type"] == "tool_result"  # the call was answered
    check_api_shape(load_for_resume(path).conversation.messages)


def test_max_budget_ends_with_error_max_budget_usd(standin: StandIn, tmp_path: Path) -> None:
    standin.script(
        ToolUse("Read", {"file_path": "notes.txt"}),
        ToolUse("Read", {"file_path": "notes.txt"}),
        Text("never"),
    )
    with real_client(standin) as client:
        eng, _ = make_engine(tmp_path, client, max_budget_usd=0.000001)
        events = run(eng)
    result = events[-1]
    assert result["subtype"] == "error_max_budget_usd" and result["is_error"]
    assert result["total_cost_usd"] >= 0.000001 and len(standin.message_requests) == 1


def test_a_budget_needs_a_priced_model(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no price is known for model 'claude-standin-1'"):
        make_engine(tmp_path, object(), model="claude-standin-1", max_budget_usd=1.0)


# --- denials, errors, interrupts -----------------------------------------------------------


def test_a_denied_call_is_answered_and_reported(standin: StandIn, tmp_path: Path) -> None:
    standin.script(ToolUse("Bash", {"command": "rm -rf /"}, id="toolu_bad"), Text("ok, I will not"))
    with real_client(standin) as client:
        eng, path = make_engine(tmp_path, client)
        events = run(eng)
    assert events[-1]["permission_denials"] == [
        {"tool_name": "Bash", "tool_use_id": "toolu_bad", "tool_input": {"command": "rm -rf /"}}
    ]
    res = [r for r in read_records(path) if r.get("toolUseResult") is not None][-1]
    assert res["message"]["content"][0]["is_error"] is True
    assert (
        res["toolUseResult"]
        == "Error: Claude requested permissions to use Bash, but you haven't granted it yet."
    )


def test_an_api_error_is_a_result_then_raised(standin: StandIn, tmp_path: Path) -> None:
    standin.script(Scripted(400, "prompt is too long"))
    with real_client(standin) as client:
        eng, path = make_engine(tmp_path, client)
        events: list[dict[str, Any]] = []
        with pytest.raises(ApiError, match="prompt is too long"):
            for ev in eng.submit_message("go"):
                events.append(ev)
    assert (
        events[-1]["subtype"] == "error_during_execution" and "prompt is too long" in events[-1]["errors"][0]
    )
    assert read_records(path)[-2]["message"]["content"] == "go"  # the prompt stays: a resumable session


class _Interrupting:
    name = "Slow"
    description = "interrupted"
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}, "required": []}

    def subject(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str | None:
        return None

    def run(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        raise KeyboardInterrupt


def test_ctrl_c_during_tools_closes_the_turn_in_the_file(standin: StandIn, tmp_path: Path) -> None:
    from tests.support.standin import Blocks

    standin.script(
        Blocks(
            [
                {"type": "tool_use", "id": "t_1", "name": "Slow", "input": {}},
                {"type": "tool_use", "id": "t_2", "name": "Slow", "input": {}},
            ],
            stop_reason="tool_use",
        )
    )
    reg = ToolRegistry(["Slow"], tools=[_Interrupting()])
    with real_client(standin) as client:
        eng, path = make_engine(tmp_path, client, registry=reg)
        events: list[dict[str, Any]] = []
        with pytest.raises(KeyboardInterrupt):
            for ev in eng.submit_message("go"):
                events.append(ev)
    assert events[-1]["terminal_reason"] == "interrupted"
    recs = read_records(path)
    results = [r["message"]["content"][0] for r in recs if r.get("toolUseResult") is not None]
    assert [(b["tool_use_id"], b["content"], b["is_error"]) for b in results] == [
        ("t_1", turns.INTERRUPTED_FOR_TOOL_USE, True),
        ("t_2", turns.INTERRUPTED_FOR_TOOL_USE, True),
    ]
    assert recs[-2]["message"]["content"] == [text(turns.INTERRUPTED_FOR_TOOL_USE)]
    assert validate_path(path).errors == 0
    check_api_shape(load_for_resume(path).conversation.messages)


class _InterruptedClient:
    def create(self, request: ModelRequest, on_event: Callable[[Event], None] | None = None) -> ModelResponse:
        raise KeyboardInterrupt


def test_ctrl_c_during_the_model_call_marks_the_turn(tmp_path: Path) -> None:
    eng, path = make_engine(tmp_path, _InterruptedClient())
    with pytest.raises(KeyboardInterrupt):
        run(eng)
    recs = read_records(path)
    assert recs[-3]["message"]["content"] == "next step"
    assert recs[-2]["message"]["content"] == [text(turns.INTERRUPTED)] and recs[-1]["type"] == "last-prompt"
    check_api_shape(load_for_resume(path).conversation.messages)


def test_partial_messages_are_passed_on_as_stream_events(standin: StandIn, tmp_path: Path) -> None:
    standin.script(Text("streamed"))
    with real_client(standin) as client:
        eng, _ = make_engine(tmp_path, client, include_partial_messages=True)
        events = run(eng)
    kinds = [e["type"] for e in events]
    assert kinds[1] == "stream_event" and events[1]["event"]["type"] == "message_start"
    assert kinds.index("assistant") > kinds.index("stream_event")
