"""``tt chat`` in a real terminal: driven under tmux (send-keys, capture-pane) against the
stand-in, on a copy of the real 2.1.332 session — a tool call shown folded with its
result, the streamed answer, ``/model`` mid-session (the next request carries the new
model and the whole history), ``/cost`` (the restored cost plus this run), Ctrl-C
mid-request (the turn closed in a file that resumes), ``/exit`` (marked ``tmux``); and
``--json``, which needs no terminal."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest

from tests.resume.test_cli_resume import SID332, api_env, config, transcript, work_dir  # noqa: F401  (fixture)
from tests.resume_helpers import check_api_shape, text
from tests.support.cli import TT
from tests.support.paths import ROOT
from tests.support.policy import last_user, prompt_text
from tests.support.standin import RecordedRequest, StandIn, Text, ToolUse
from transcript_tools.resume import turns
from transcript_tools.resume.files import load_for_resume


class Pane:
    def __init__(self, name: str) -> None:
        self.name = name

    def send(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def screen(self) -> str:
        return subprocess.run(
            ["tmux", "capture-pane", "-p", "-J", "-S", "-200", "-t", self.name],
            capture_output=True,
            text=True,
        ).stdout

    def wait_for(self, what: str | Callable[[str], bool], timeout: float = 30) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            s = self.screen()
            if (what in s) if isinstance(what, str) else what(s):
                return s
            time.sleep(0.1)
        raise AssertionError(f"never saw {what!r} on the screen:\n{self.screen()}")

    def alive(self) -> bool:
        return subprocess.run(["tmux", "has-session", "-t", self.name], capture_output=True).returncode == 0


@pytest.fixture
def tmux_chat(config: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    started: list[str] = []

    def start(api: StandIn, *args: str) -> Pane:
        name = f"ttchat-{os.getpid()}-{len(started)}"
        env = {
            "CLAUDE_CONFIG_DIR": str(config),
            **api_env(api),
            "PYTHONPATH": str(ROOT),
            "TERM": "xterm-256color",
            "HOME": str(tmp_path),
            "PATH": os.environ.get("PATH", ""),
        }
        cmd = " ".join(
            [
                "env",
                "-i",
                *(shlex.quote(f"{k}={v}") for k, v in env.items()),
                shlex.quote(sys.executable),
                "-m",
                "transcript_tools",
                "chat",
                *map(shlex.quote, args),
                ";",
                "echo",
                "CHAT-EXITED-$?",
                ";",
                "sleep",
                "30",
            ]
        )
        subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "150", "-y", "50", cmd], check=True)
        started.append(name)
        return Pane(name)

    yield start
    for name in started:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def tt_stats_json(path: Path) -> dict[str, Any]:
    import json

    r = subprocess.run(
        [sys.executable, "-m", "transcript_tools", "stats", "--json", str(path)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)  # type: ignore[no-any-return]


def tt_stats_text(path: Path) -> list[str]:
    r = subprocess.run(
        [sys.executable, "-m", "transcript_tools", "stats", str(path)],
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "150"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def usd(x: float) -> str:
    # the published way of writing dollars in tt stats (cents, or 4 places below a cent)
    return f"${x:,.2f}" if x >= 0.01 else f"${x:.4f}"


@pytest.mark.tmux
def test_a_chat_with_a_tool_call_model_switch_cost_ctrl_c_and_exit(
    tmux_chat: Callable[..., Pane], config: Path
) -> None:
    arrived, release = threading.Event(), threading.Event()

    def policy(req: RecordedRequest) -> Text | ToolUse:
        last = last_user(req)
        said = prompt_text(last) if last else ""
        if said == "What does app.py print?":
            return ToolUse("Read", {"file_path": "app.py"})
        if said == "run it":
            return ToolUse("Bash", {"command": "echo from-bash-$((6*7))"})
        if said == "slow one":
            arrived.set()
            release.wait(30)
            return Text("too late")
        results = [
            b
            for b in (last or {}).get("content") or []
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        if results and "from-bash-42" in str(results[0].get("content")):
            return Text("bash ran")
        if results:
            return Text("It prints hello world.")
        return Text(f"re: {said} on {req.model}")

    path = transcript(config)
    with StandIn(policy) as api:
        pane = tmux_chat(api, SID332[:8], "--cwd", work_dir(config))
        t0 = time.monotonic()
        pane.wait_for(lambda s: s.rstrip().endswith("\n>"))  # the prompt (capture-pane trims its space)
        assert time.monotonic() - t0 < 15
        pane.send("What does app.py print?", "Enter")
        screen = pane.wait_for("It prints hello world.")
        assert "⏺ Read(app.py)" in screen and "⎿" in screen
        # Bash is allowed by no rule: asked at the prompt, allowed, run
        pane.send("run it", "Enter")
        pane.wait_for("Allow Bash(echo from-bash-$((6*7)))? [y]es / [a]lways this session / [n]o:")
        pane.send("a", "Enter")
        screen = pane.wait_for("bash ran")
        assert "⎿ from-bash-42" in screen
        pane.send("/model claude-haiku-5-5", "Enter")
        pane.wait_for("the next turn uses claude-haiku-5-5")
        before = len(api.message_requests[-1].messages)
        pane.send("and now?", "Enter")
        pane.wait_for("re: and now? on claude-haiku-5-5")
        req = api.message_requests[-1]
        assert req.model == "claude-haiku-5-5"
        assert len(req.messages) == before + 2  # the whole history: the last answer and the new prompt added
        pane.send("/cost", "Enter")
        screen = pane.wait_for("cost-state (the running total")
        # /cost equals tt stats of the file (no turn since): each model's tokens and cost, in
        # the same words, "unpriced" for claude-haiku-5-5 (no price in tt's table: model/pricing.py) in both
        stats = tt_stats_json(path)
        table = tt_stats_text(path)
        shown = {ln.split(":")[0].strip(): ln for ln in screen.splitlines() if ln.startswith("  claude-")}
        assert set(shown) == {m["model"] for m in stats["models"]} == {"claude-opus-5-5", "claude-haiku-5-5"}
        for m in stats["models"]:
            cost = "unpriced" if m["cost_usd"] is None else usd(m["cost_usd"])
            assert shown[m["model"]].endswith(f": {m['calls']} calls, {m['total_tokens']:,} tokens, {cost}")
            row = next(ln for ln in table if ln.startswith(m["model"].removeprefix("claude-")))
            assert row.rstrip().endswith(cost)
        assert "cost so far $" in screen and " + unpriced (as tt stats counts it)" in screen
        assert any(ln.startswith("total") and ln.rstrip().endswith(" + unpriced") for ln in table)
        pane.send("slow one", "Enter")
        assert arrived.wait(30)
        pane.send("C-c")
        pane.wait_for("interrupted (the turn is closed in the file)")
        release.set()
        pane.send("/exit", "Enter")
        pane.wait_for("CHAT-EXITED-0")
    recs = list(load_for_resume(path).conversation.messages)
    check_api_shape(recs)
    tail = path.read_text().splitlines()
    import json

    closed = [json.loads(x) for x in tail if '"[Request interrupted by user]"' in x]
    assert closed and closed[-1]["message"]["content"] == [text(turns.INTERRUPTED)]


def test_chat_json_says_what_it_would_continue_without_a_terminal(config: Path) -> None:
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(config)}
    env.pop("ANTHROPIC_API_KEY", None)
    r = subprocess.run(
        [*TT, "chat", SID332[:8], "--json", "--cwd", work_dir(config)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    import json

    got = json.loads(r.stdout)
    assert got["session_id"] == SID332 and got["model"] == "claude-opus-5-5"
    assert got["messages"] == len(
        load_for_resume(transcript(config)).conversation.for_model("claude-opus-5-5").messages
    )
    r2 = subprocess.run(
        [*TT, "chat", SID332[:8]],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert r2.returncode == 2 and "needs a terminal" in r2.stderr
    # no SESSION: a new session in the cwd, nothing written
    from tests.support.sessions import project_folder_name

    before = sorted(config.rglob("*"))
    r3 = subprocess.run(
        [sys.executable, "-m", "transcript_tools", "chat", "--json"],
        env={**env, "PYTHONPATH": str(ROOT)},
        cwd=work_dir(config),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r3.returncode == 0, r3.stderr
    new = json.loads(r3.stdout)
    assert new["new"] is True and new["messages"] == 0 and new["model"] == "claude-opus-5-5"
    # A new session starts on the default unsaid (a review found it told "the session names
    # no model", meant for a resumed session without a response yet).
    assert new["notices"] == []
    folder = config / "projects" / project_folder_name(Path(work_dir(config)).resolve())
    assert new["path"] == str(folder / f"{new['session_id']}.jsonl")
    assert sorted(config.rglob("*")) == before


@pytest.mark.tmux
@pytest.mark.claude
def test_ctrl_c_in_a_chat_leaves_a_file_both_clis_resume(generated_session: Any, tmp_path: Path) -> None:
    from datetime import datetime

    from tests.support.oracle import conversation_blocks, resume_with_cli

    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    s = generated_session.copy_to(tmp_path)
    arrived, release = threading.Event(), threading.Event()

    def policy(req: RecordedRequest) -> Text:
        arrived.set()
        release.wait(30)
        return Text("too late")

    name = f"ttchat-cc-{os.getpid()}"
    with StandIn(policy) as api:
        env = {
            "CLAUDE_CONFIG_DIR": str(s.config_dir),
            **api_env(api),
            "PYTHONPATH": str(ROOT),
            "TERM": "xterm-256color",
            "HOME": str(tmp_path),
            "PATH": os.environ.get("PATH", ""),
        }
        cmd = " ".join(
            [
                "env",
                "-i",
                *(shlex.quote(f"{k}={v}") for k, v in env.items()),
                shlex.quote(sys.executable),
                "-m",
                "transcript_tools",
                "chat",
                shlex.quote(str(s.transcript)),
                ";",
                "echo",
                "CHAT-EXITED-$?",
                ";",
                "sleep",
                "30",
            ]
        )
        subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "150", "-y", "50", cmd], check=True)
        try:
            pane = Pane(name)
            pane.wait_for(lambda t: t.rstrip().endswith("\n>"))
            pane.send("cut me short", "Enter")
            assert arrived.wait(30)
            pane.send("C-c")
            pane.wait_for("interrupted (the turn is closed in the file)")
            release.set()
            pane.send("/exit", "Enter")
            pane.wait_for("CHAT-EXITED-0")
        finally:
            release.set()
            subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
    blocks = conversation_blocks(
        resume_with_cli(
            s.cli,
            s.config_dir,
            s.session_id,
            s.cwd,
            "after the chat",
            clock=datetime(2026, 11, 30, 12, 0, tzinfo=UTC),
        )
    )
    values = [b.value for b in blocks]
    assert "cut me short" in values and values[-1] == "after the chat"


def test_the_registry_asks_for_a_tool_no_rule_allows_and_remembers_always(tmp_path: Path) -> None:
    from transcript_tools.resume.tools.registry import ToolContext, ToolRegistry

    (tmp_path / "f.txt").write_text("one\n")
    asked: list[str] = []
    answers = iter(["no", "always"])

    def ask(name: str, tool_input: Any) -> str:
        asked.append(name)
        return next(answers)

    reg = ToolRegistry(disallowed=["Bash(rm:*)"], ask=ask)
    assert {"Bash", "Write", "Edit", "Read"} <= set(reg.offered)  # with ask, offered to be asked about
    ctx = ToolContext(cwd=tmp_path)
    no = reg.call("Write", "t1", {"file_path": str(tmp_path / "g.txt"), "content": "x"}, ctx)
    assert no.denial is not None and not (tmp_path / "g.txt").exists()
    yes = reg.call("Write", "t2", {"file_path": str(tmp_path / "g.txt"), "content": "x"}, ctx)
    assert yes.denial is None and (tmp_path / "g.txt").read_text() == "x"
    again = reg.call("Write", "t3", {"file_path": str(tmp_path / "h.txt"), "content": "y"}, ctx)
    assert again.denial is None and asked == ["Write", "Write"]  # "always": not asked again
    denied = reg.call("Bash", "t4", {"command": "rm f.txt"}, ctx)
    assert (
        denied.denial is not None and asked == ["Write", "Write"] and (tmp_path / "f.txt").exists()
    )  # a deny rule is never asked about
    outside = reg.call("Write", "t5", {"file_path": "/etc/tt-chat-test", "content": "z"}, ctx)
    assert outside.denial is not None  # "always" keeps the working-directory rules


def test_the_chat_core_commands_rename_tag_fork_cost_and_a_turn(config: Path, standin: StandIn) -> None:
    """`chat.Chat` without a terminal: what each command appends or shows."""
    import json

    from transcript_tools.edge.claude_dir import SessionRef
    from transcript_tools.edge.client import AnthropicClient, Credentials
    from transcript_tools.edge.clock import system_clock
    from transcript_tools.edge.writer import append_records
    from transcript_tools.resume.chat import Chat, ListView
    from transcript_tools.resume.files_setup import prepare
    from transcript_tools.resume.tools.registry import ToolRegistry

    path = transcript(config)
    env = {**api_env(standin), "CLAUDE_CONFIG_DIR": str(config)}
    prep = prepare(SessionRef(path, SID332), clock=system_clock(), env=env, cwd=Path(work_dir(config)))
    client = AnthropicClient(Credentials("test-key", None, standin.base_url), max_retries=0)
    reg = ToolRegistry()
    view = ListView()

    def fork(cur: Any) -> tuple[Any, list[str]]:
        p = prepare(
            SessionRef(cur.transcript.path, cur.session_id),
            clock=system_clock(),
            env=env,
            model=cur.model,
            fork=True,
            cwd=cur.cwd,
        )
        return p.engine(client, reg), p.notices

    def reload(m: str) -> list[dict[str, Any]]:
        return list(load_for_resume(chat.engine.transcript.path).conversation.for_model(m).messages)

    from transcript_tools.cli.chat import session_cost
    from transcript_tools.resume.files_setup import switch_model

    chat = Chat(
        prep.engine(client, reg),
        view,
        reload=reload,
        append_record=lambda r: append_records(chat.engine.transcript.path, [r]),
        fork=fork,
        cost_notice_usd=1.0,
        choose_model=lambda m: switch_model(m, system_clock(), {}),
        stats=session_cost,
    )
    chat.handle("/model claude-opus-4-1")  # a legacy id Claude Code remaps, as on a resume
    assert chat.engine.model == "claude-opus-5-5" and "remaps" in view.lines[-2]
    chat.handle("/model claude-haiku-4-5")
    assert chat.engine.model == "claude-haiku-4-5" and view.lines[-1].startswith(
        "the next turn uses claude-haiku-4-5"
    )
    chat.handle("/model claude-opus-5-5")
    assert chat.handle("/rename  A chat title ") and chat.handle("/tag wip")
    recs = [json.loads(x) for x in path.read_text().splitlines()[-2:]]
    assert recs == [
        {"type": "custom-title", "customTitle": "A chat title", "sessionId": SID332},
        {"type": "tag", "tag": "wip", "sessionId": SID332},
    ]
    chat.handle("/cost")
    stats = tt_stats_json(path)  # `tt stats --json SESSION`, run as a user would
    (model,) = stats["models"]
    # priced from Claude Code 2.1.332's catalogue ($4/$20: tests/model/test_pricing.py)
    assert model["model"] == "claude-opus-5-5" and model["cost_usd"] > 0
    assert view.lines[-4:] == [
        f"cost so far {usd(model['cost_usd'])} (as tt stats counts it)",
        f"  claude-opus-5-5: {model['calls']} calls, {model['total_tokens']:,} tokens, {usd(model['cost_usd'])}",
        "  prices as of 2026-12-01",
        # the fixture's last cost-state (Claude Code 2.1.332 priced claude-opus-5-5 at $4/$20), restored
        "cost-state (the running total Claude Code restores, at its prices): $1.51: claude-opus-5-5 $1.51",
    ]
    standin.script(Text("in the fork"))
    before = path.read_bytes()
    chat.handle("/fork")
    assert view.lines[-1].startswith("now in the fork ") and chat.engine.session_id != SID332
    chat.handle("hello fork")
    assert "".join(view.streamed).strip() == "in the fork"
    assert path.read_bytes() == before  # the original is not touched
    forked = [json.loads(x) for x in chat.engine.transcript.path.read_text().splitlines()]
    assert any(r.get("message", {}).get("content") == "hello fork" for r in forked)
    assert chat.handle("/nope") and view.lines[-1] == "unknown command /nope (/help lists them)"
    # /rewind 3: the conversation up to the 3rd message from the end, in a fork of the fork
    from transcript_tools.resume.files_setup import fork_at

    def rewind(cur: Any, at: str) -> tuple[Any, list[str]]:
        out, line = fork_at(cur.transcript.path, cur.session_id, at, 50 << 20)
        p = prepare(SessionRef(out, out.stem), clock=system_clock(), env=env, model=cur.model, cwd=cur.cwd)
        return p.engine(client, reg), [line, *p.notices]

    chat._rewind = rewind
    fork_file = chat.engine.transcript.path
    fork_bytes = fork_file.read_bytes()
    n_before = len(chat.engine.messages)
    chat.handle("/rewind 3")
    assert (
        any(ln.startswith("tt: rewound ") for ln in view.lines) and chat.engine.transcript.path != fork_file
    )
    assert fork_file.read_bytes() == fork_bytes and len(chat.engine.messages) < n_before
    standin.script(Text("after the rewind"))
    chat.handle("again")
    assert standin.message_requests[-1].messages[-1]["content"] == "again"
    assert chat.handle("/exit") is False


def test_the_cost_notice_is_said_once_when_the_session_passes_the_threshold(
    config: Path, standin: StandIn
) -> None:
    from transcript_tools.edge.claude_dir import SessionRef
    from transcript_tools.edge.client import AnthropicClient, Credentials
    from transcript_tools.edge.clock import system_clock
    from transcript_tools.resume.chat import Chat, ListView
    from transcript_tools.resume.files_setup import prepare
    from transcript_tools.resume.tools.registry import ToolRegistry

    path = transcript(config)
    prep = prepare(
        SessionRef(path, SID332),
        clock=system_clock(),
        env={},
        model="claude-sonnet-4-6",
        cwd=Path(work_dir(config)),
    )
    client = AnthropicClient(Credentials("test-key", None, standin.base_url), max_retries=0)
    view = ListView()
    restored = 1.508232  # the fixture's last cost-state
    chat = Chat(
        prep.engine(client, ToolRegistry()),
        view,
        reload=lambda m: [],
        append_record=lambda r: None,
        cost_notice_usd=restored + 0.0001,
    )
    standin.script(Text("one"), Text("two"))
    chat.handle("first")  # any priced turn costs more than $0.0001: past the threshold
    notes = [ln for ln in view.lines if ln.startswith("note: this session has cost")]
    assert notes == [
        f"note: this session has cost ${chat.engine.total_cost_usd:.2f} (past ${restored + 0.0001:g})"
    ]
    chat.handle("second")
    assert len([ln for ln in view.lines if ln.startswith("note:")]) == 1  # once


def test_compact_in_the_chat_compacts_in_place_and_the_next_turn_sends_the_compacted_history(
    tmp_path: Path, standin: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.resume_helpers import SESSION, Builder
    from transcript_tools.cli.chat import compact_in_place
    from transcript_tools.edge.claude_dir import SessionRef
    from transcript_tools.edge.client import AnthropicClient, Credentials
    from transcript_tools.edge.clock import system_clock
    from transcript_tools.resume.chat import Chat, ListView
    from transcript_tools.resume.files_setup import prepare
    from transcript_tools.resume.tools.registry import ToolRegistry
    from transcript_tools.validate.files import validate_path

    b = Builder(cwd=str(tmp_path))
    for k in range(40):
        b.user(f"question {k}: " + "words " * 700)
        b.assistant(text(f"answer {k}: " + "more " * 700), stop="end_turn", model="claude-sonnet-4-6")
    path = b.write(tmp_path / f"{SESSION}.jsonl")
    prep = prepare(SessionRef(path, SESSION), clock=system_clock(), env={})
    client = AnthropicClient(Credentials("test-key", None, standin.base_url), max_retries=0)
    view = ListView()
    chat = Chat(
        prep.engine(client, ToolRegistry()),
        view,
        reload=lambda m: [],
        append_record=lambda r: None,
        compact=lambda e: compact_in_place(e, 50 << 20),
    )
    assert len(chat.engine.messages) == 80
    chat.handle("/compact")
    assert view.lines[-1].startswith("compacted: the next turn sends ")
    assert len(chat.engine.messages) < 80
    assert validate_path(path).errors == 0
    standin.script(Text("after compact"))
    chat.handle("go on")
    sent = standin.message_requests[-1].messages
    assert sent[:-1] == chat.engine.messages[: len(sent) - 1] and sent[-1]["content"] == "go on"
    recs = list(load_for_resume(path).conversation.messages)
    check_api_shape(recs)


@pytest.mark.claude
def test_claude_code_guesses_an_unknown_models_cost_where_tt_says_unpriced(
    config: Path, tmp_path: Path, claude_332: Any, faketime: None
) -> None:
    """Claude Code 2.1.332 prices a model its catalog lacks at the default model's rates: the
    cost-state carries a figure with ``hasUnknownModelCost: true`` and its /cost adds "costs
    may be inaccurate due to usage of unknown models". tt does not guess: tt stats (and so
    tt chat's /cost) say ``unpriced`` for that model."""
    from datetime import datetime

    from tests.support.claude_cli import Sandbox, run_claude

    path = transcript(config)
    sandbox = Sandbox.create(tmp_path / "cc", config_dir=config)
    clock = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    with StandIn(lambda req: Text("ok")) as api:
        common = {
            "sandbox": sandbox,
            "cwd": Path(work_dir(config)),
            "base_url": api.base_url,
            "resume": SID332,
            "clock": clock,
        }
        run_claude(claude_332, "hello", extra_args=["--model", "claude-zeta-9"], **common)  # type: ignore[arg-type]
        cost = run_claude(claude_332, "/cost", **common)  # type: ignore[arg-type]
    import json

    state = [json.loads(x) for x in path.read_text().splitlines() if '"type":"cost-state"' in x][-1]
    assert state["hasUnknownModelCost"] is True
    assert state["modelUsage"]["claude-zeta-9"]["costUSD"] > 0  # a guessed figure
    assert "costs may be inaccurate due to usage of unknown models" in cost.result["result"]
    zeta = next(m for m in tt_stats_json(path)["models"] if m["model"] == "claude-zeta-9")
    assert zeta["cost_usd"] is None
    row = next(ln for ln in tt_stats_text(path) if ln.startswith("zeta-9"))
    assert row.rstrip().endswith("unpriced")


@pytest.mark.tmux
@pytest.mark.claude
def test_a_new_chat_session_is_written_as_claude_code_writes_one_and_claude_resumes_it(
    tmp_path: Path, claude_332: Any, faketime: None
) -> None:
    """``tt chat`` with no SESSION starts one: the file lands in the project folder Claude
    Code 2.1.332 uses for the same directory, its first line is the prompt with the
    envelope 2.1.332 writes (cwd, sessionId, version, gitBranch ...), its cost-state has
    2.1.332's fields, and ``claude --resume <id>`` continues it (history and cost)."""
    import json
    from datetime import datetime

    from tests.support.claude_cli import Sandbox, run_claude

    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    work = tmp_path / "new-app"
    work.mkdir()
    cfg = tmp_path / "config"
    sandbox = Sandbox.create(tmp_path / "cc", config_dir=cfg)
    clock = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

    def policy(req: RecordedRequest) -> Text:
        last = last_user(req)
        return Text(f"re: {prompt_text(last) if last else ''}")

    name = f"ttchat-new-{os.getpid()}"
    with StandIn(policy) as api:
        cc = run_claude(
            claude_332, "hello from claude", sandbox=sandbox, cwd=work, base_url=api.base_url, clock=clock
        )
        cc_request = next(
            r for r in api.message_requests if prompt_text(last_user(r) or {}) == "hello from claude"
        )
        (cc_file,) = cfg.glob(f"projects/*/{cc.session_id}.jsonl")
        env = {
            "CLAUDE_CONFIG_DIR": str(cfg),
            **api_env(api),
            "PYTHONPATH": str(ROOT),
            "TERM": "xterm-256color",
            "HOME": str(tmp_path),
            "PATH": os.environ.get("PATH", ""),
        }
        cmd = " ".join(
            [
                "env",
                "-i",
                *(shlex.quote(f"{k}={v}") for k, v in env.items()),
                shlex.quote(sys.executable),
                "-m",
                "transcript_tools",
                "chat",
                ";",
                "echo",
                "CHAT-EXITED-$?",
                ";",
                "sleep",
                "30",
            ]
        )
        subprocess.run(
            ["tmux", "new-session", "-d", "-s", name, "-x", "150", "-y", "50", "-c", str(work), cmd],
            check=True,
        )
        try:
            pane = Pane(name)
            screen = pane.wait_for(lambda t: t.rstrip().endswith("\n>"))
            assert "tt chat: new session " in screen
            pane.send("hello from tt", "Enter")
            pane.wait_for("re: hello from tt")
            pane.send("/exit", "Enter")
            pane.wait_for("CHAT-EXITED-0")
        finally:
            subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
        tt_request = api.message_requests[-1]
        (tt_file,) = [p for p in cc_file.parent.glob("*.jsonl") if p != cc_file]  # the same project folder
        tt_recs = [json.loads(x) for x in tt_file.read_text().splitlines()]
        cc_recs = [json.loads(x) for x in cc_file.read_text().splitlines()]
        # interactive 2.1.332 opens a new session with its mode and permission mode (seen under tmux)
        assert tt_recs[:2] == [
            {"type": "mode", "mode": "normal", "sessionId": tt_file.stem},
            {"type": "permission-mode", "permissionMode": "default", "sessionId": tt_file.stem},
        ]
        first, cc_first = tt_recs[2], next(r for r in cc_recs if r.get("type") == "user")
        assert first["type"] == "user" and first["parentUuid"] is None
        assert first["message"]["content"] == "hello from tt" and first["sessionId"] == tt_file.stem
        for key in ("isSidechain", "userType", "cwd", "version", "gitBranch", "permissionMode"):
            assert first[key] == cc_first[key], key
        assert tt_request.model == cc_request.model  # the model Claude Code starts a session on
        cost, cc_cost = (
            next(r for r in reversed(rs) if r["type"] == "cost-state") for rs in (tt_recs, cc_recs)
        )
        assert list(cost) == list(cc_cost) and cost["sessionId"] == tt_file.stem
        model = tt_request.model
        assert list(cost["modelUsage"][model]) == list(cc_cost["modelUsage"][model])
        # Claude Code continues it: the whole history sent, the cost continued from tt's
        run = run_claude(
            claude_332,
            "after tt",
            sandbox=sandbox,
            cwd=work,
            base_url=api.base_url,
            resume=tt_file.stem,
            clock=clock,
        )
        sent = next(r for r in api.message_requests if prompt_text(last_user(r) or {}) == "after tt")
    said = [
        prompt_text(m) if m["role"] == "user" else text_of(m)
        for m in sent.messages
        if m["role"] in ("user", "assistant")  # 2.1.332 also sends "system" ones between
    ]
    assert said[:2] == ["hello from tt", "re: hello from tt"] and said[-1] == "after tt"
    assert run.session_id == tt_file.stem
    after = [json.loads(x) for x in tt_file.read_text().splitlines()]
    theirs = next(r for r in reversed(after) if r["type"] == "cost-state")
    assert theirs["modelUsage"][model]["inputTokens"] > cost["modelUsage"][model]["inputTokens"]
    assert run.result["total_cost_usd"] == pytest.approx(theirs["totalCostUSD"], abs=1e-6)


def text_of(message: dict[str, Any]) -> str:
    c = message.get("content")
    return c if isinstance(c, str) else "".join(b.get("text", "") for b in c or [] if b.get("type") == "text")


def test_the_permission_mode_is_restored_changed_and_recorded_as_claude_code_records_it(
    config: Path, standin: StandIn
) -> None:
    """Interactive Claude Code 2.1.332 (run under tmux against the stand-in) writes the mode
    into each prompt and re-appends ``mode`` and ``permission-mode`` after each turn; a
    resume restores the last ``permission-mode`` unless one is given. tt chat does the same."""
    import json

    from transcript_tools.edge.claude_dir import SessionRef
    from transcript_tools.edge.client import AnthropicClient, Credentials
    from transcript_tools.edge.clock import system_clock
    from transcript_tools.edge.writer import append_records
    from transcript_tools.resume.chat import CHAT_MODES, Chat, ListView
    from transcript_tools.resume.files_setup import prepare
    from transcript_tools.resume.tools.registry import ToolRegistry

    path = transcript(config)
    append_records(path, [{"type": "permission-mode", "permissionMode": "plan", "sessionId": SID332}])
    env = {**api_env(standin), "CLAUDE_CONFIG_DIR": str(config)}
    prep = prepare(
        SessionRef(path, SID332),
        clock=system_clock(),
        env=env,
        cwd=Path(work_dir(config)),
        applied_modes=CHAT_MODES,
    )
    assert not any("permission mode" in n for n in prep.notices)  # a mode tt chat applies: no notice
    client = AnthropicClient(Credentials("test-key", None, standin.base_url), max_retries=0)
    view = ListView()
    chat = Chat(
        prep.engine(client, ToolRegistry(), interactive=True),
        view,
        reload=lambda m: [],
        append_record=lambda r: None,
    )
    chat.handle("/permission-mode")
    assert view.lines[-1] == "permission mode plan: no tool that needs asking runs"

    def turn(prompt: str) -> list[dict[str, Any]]:
        n = len(path.read_text().splitlines())
        standin.script(Text("ok"))
        chat.handle(prompt)
        return [json.loads(x) for x in path.read_text().splitlines()[n:]]

    new = turn("in plan")
    assert new[0]["type"] == "user" and new[0]["permissionMode"] == "plan"
    assert [r["type"] for r in new[-4:]] == ["last-prompt", "mode", "permission-mode", "cost-state"]
    assert new[-3] == {"type": "mode", "mode": "normal", "sessionId": SID332}
    assert new[-2] == {"type": "permission-mode", "permissionMode": "plan", "sessionId": SID332}
    chat.handle("/permission-mode acceptEdits")
    assert view.lines[-1].startswith("permission mode acceptEdits: ")
    new = turn("now editing")
    assert new[0]["permissionMode"] == "acceptEdits"
    assert new[-2] == {"type": "permission-mode", "permissionMode": "acceptEdits", "sessionId": SID332}
    chat.handle("/permission-mode auto")
    assert "applies the permission modes default, acceptEdits, plan, bypassPermissions" in view.lines[-1]
    # the next resume restores acceptEdits; one given on the command line wins
    again = prepare(SessionRef(path, SID332), clock=system_clock(), env=env, cwd=Path(work_dir(config)))
    assert again.engine(client, ToolRegistry(), interactive=True).permission_mode == "acceptEdits"
    given = again.engine(client, ToolRegistry(), interactive=True, permission_mode="default")
    assert given.permission_mode == "default"
    # a -p run (tt resume) writes "default" and neither record, as claude -p 2.1.332 does
    quiet = again.engine(client, ToolRegistry())
    n = len(path.read_text().splitlines())
    standin.script(Text("ok"))
    list(quiet.submit_message("headless"))
    tail = [json.loads(x) for x in path.read_text().splitlines()[n:]]
    assert tail[0]["permissionMode"] == "default"
    assert not any(r["type"] in ("mode", "permission-mode") for r in tail)


def test_each_permission_mode_answers_what_it_says(tmp_path: Path) -> None:
    from transcript_tools.resume.chat import mode_answer
    from transcript_tools.resume.tools.registry import ToolContext, ToolRegistry

    asked: list[str] = []

    def run(mode: str, name: str, tool_input: dict[str, Any]) -> bool:
        def ask(n: str, i: Any) -> str:
            answer = mode_answer(mode, n)
            if answer is None:
                asked.append(n)
                return "no"
            return answer

        reg = ToolRegistry(disallowed=["Bash(rm:*)"], ask=ask)
        return reg.call(name, "t", tool_input, ToolContext(cwd=tmp_path)).denial is None

    write = {"file_path": str(tmp_path / "a.txt"), "content": "x"}
    assert run("acceptEdits", "Write", write) and (tmp_path / "a.txt").read_text() == "x"
    assert not run("acceptEdits", "Bash", {"command": "true"}) and asked == ["Bash"]  # asked
    assert not run("acceptEdits", "Write", {"file_path": "/etc/tt-mode-test", "content": "x"})  # outside
    assert not run("plan", "Write", {"file_path": str(tmp_path / "b.txt"), "content": "x"})
    assert not (tmp_path / "b.txt").exists()
    assert run("plan", "Read", {"file_path": str(tmp_path / "a.txt")})  # read-only tools need no asking
    assert run("bypassPermissions", "Bash", {"command": "true"})
    assert not run("bypassPermissions", "Bash", {"command": "rm a.txt"})  # a deny rule holds
    assert (tmp_path / "a.txt").exists()
    assert not run("default", "Write", write) and asked == ["Bash", "Write"]


@pytest.mark.tmux
@pytest.mark.claude
def test_interactive_claude_code_restores_the_permission_mode_tt_chat_recorded(
    config: Path, tmp_path: Path, standin: StandIn, claude_332: Any, faketime: None
) -> None:
    """tt chat leaves acceptEdits in the session; interactive Claude Code 2.1.332, resumed
    on it under tmux, starts in that mode (its status line) and writes it into its prompt."""
    import json
    from datetime import datetime

    from tests.support.claude_cli import Sandbox, clock_env
    from transcript_tools.edge.claude_dir import SessionRef
    from transcript_tools.edge.client import AnthropicClient, Credentials
    from transcript_tools.edge.clock import system_clock
    from transcript_tools.resume.chat import CHAT_MODES, Chat, ListView
    from transcript_tools.resume.files_setup import prepare
    from transcript_tools.resume.tools.registry import ToolRegistry

    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    path = transcript(config)
    work = Path(work_dir(config))
    env = {**api_env(standin), "CLAUDE_CONFIG_DIR": str(config)}
    prep = prepare(
        SessionRef(path, SID332), clock=system_clock(), env=env, cwd=work, applied_modes=CHAT_MODES
    )
    client = AnthropicClient(Credentials("test-key", None, standin.base_url), max_retries=0)
    chat = Chat(
        prep.engine(client, ToolRegistry(), interactive=True, permission_mode="acceptEdits"),
        ListView(),
        reload=lambda m: [],
        append_record=lambda r: None,
    )
    standin.script(Text("from tt"))
    chat.handle("a turn in tt chat")
    # an interactive Claude Code that has been set up once (onboarding, trust, the key)
    (config / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "theme": "dark",
                "numStartups": 5,
                "projects": {
                    str(work): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}
                },
                "customApiKeyResponses": {"approved": ["test-key"], "rejected": []},
            }
        )
    )
    sandbox = Sandbox.create(tmp_path / "cc", config_dir=config)
    # its own stand-in, answering every request alike: the interactive CLI makes side requests too
    cc_api = StandIn(lambda req: Text("from claude"))
    cc_api.start()
    cc_env = sandbox.env(
        cc_api.base_url,
        extra={**clock_env(datetime(2026, 11, 30, 12, 0, tzinfo=UTC)), "TERM": "xterm-256color"},
    )
    cmd = " ".join(
        [
            "env",
            "-i",
            *(shlex.quote(f"{k}={v}") for k, v in cc_env.items()),
            shlex.quote(str(claude_332.path)),
            "--resume",
            SID332,
            ";",
            "sleep",
            "30",
        ]
    )
    name = f"cc-mode-{os.getpid()}"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, "-x", "150", "-y", "50", "-c", str(work), cmd], check=True
    )
    try:
        pane = Pane(name)
        pane.wait_for("accept edits on", timeout=60)  # its status line: the restored mode
        pane.send("after tt")
        pane.wait_for("after tt", timeout=30)  # typed into its input box
        pane.send("Enter")

        def theirs() -> list[
            dict[str, Any]
        ]:  # its prompt, once written (the screen can show a side answer first)
            whole = path.read_text().rsplit("\n", 1)[0]  # a last line still being written: next time
            return [
                r
                for r in map(json.loads, whole.splitlines())
                if r.get("type") == "user"
                and r.get("entrypoint") == "cli"
                and "after tt" in str(r["message"].get("content"))
            ]

        end = time.monotonic() + 60
        while not theirs() and time.monotonic() < end:
            time.sleep(0.2)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
        cc_api.stop()
    written = theirs()
    assert written and written[0]["permissionMode"] == "acceptEdits"
