"""`tt compact` end to end: wiring, exit codes, the --json shape, what lands on disk, the
model summariser and --exact against the local stand-in, and (marked ``claude``) the real
Claude Code CLI resuming what tt compacted."""

from __future__ import annotations

import json
import re
import sys
from datetime import UTC
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.support import cli
from tests.support.claude_cli import ClaudeCLI
from tests.support.oracle import conversation_blocks, resume_request, resume_with_cli
from tests.support.paths import CONFIG_332, REAL, ROOT
from tests.support.sessions import GeneratedSession, stage_config
from tests.support.standin import StandIn
from tests.support.trees import digest, stage
from transcript_tools.edge.tokenizer import MARGIN, TokenCounter
from transcript_tools.validate.files import validate_path

SID = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
PROJECT = "-home-dev-demo-app"
#: The fixture's conversation is small: any summary makes its request grow, which tt does
#: not write unless asked (tests/compact/test_compact_budget.py). These tests are about the rest.
LARGER = "--even-if-larger"


# No real credentials reach tt: the API runs only against the stand-in.
tt = partial(cli.tt, drop=("ANTHROPIC_",), timeout=300)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return stage(CONFIG_332, tmp_path / "claude-config")


def transcript(config: Path) -> Path:
    return config / "projects" / PROJECT / f"{SID}.jsonl"


def new_files(config: Path, before: dict[str, str]) -> list[Path]:
    return [config / k for k in digest(config) if k not in before]


def test_json_report_and_a_new_session_beside_the_original(config: Path) -> None:
    before = digest(config)
    out = tt("compact", SID[:8], "--keep-tokens", "800", "--json", LARGER, config=config)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["mode"] == "new" and d["summarizer"] == "extractive"
    assert set(d["tokens"]) >= {"before", "after", "summary", "kept", "budget", "estimate", "note"}
    assert set(d["bytes"]) == {"before", "conversation_before", "after", "file_after"}
    assert set(d["messages"]) >= {"summarised", "kept", "key"}
    assert d["tokens"]["budget"] == 800 and d["tokens"]["kept"] <= 800
    # The fixture's bytes are mostly attachment records a resume never sends: the file
    # shrinks; its small conversation does not (tests/compact/test_compact_budget.py: one that does).
    assert d["bytes"]["after"] < d["bytes"]["before"]
    [made] = new_files(config, before)
    assert made == Path(d["output"]) and made.parent == transcript(config).parent
    assert made.name == f"{d['new_session_id']}.jsonl"
    assert d["continue"][0] == f"tt resume {d['new_session_id']}"
    assert d["continue"][1].endswith(f"claude --resume {d['new_session_id']}")
    # The original is untouched.
    assert {k: v for k, v in digest(config).items() if k in before} == before
    assert validate_path(made).errors == 0


def test_the_agent_sdk_lists_and_reads_the_new_session(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sdk = pytest.importorskip("claude_agent_sdk")
    out = tt("compact", SID, "--keep-tokens", "800", "--json", LARGER, config=config)
    sid = json.loads(out.stdout)["new_session_id"]
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    listed = {s.session_id: s for s in sdk.list_sessions(directory="/home/dev/demo-app")}
    assert listed[sid].summary == "Project kickoff 13000: we work on app.py (compacted)"
    msgs = sdk.get_session_messages(sid, directory="/home/dev/demo-app")
    assert msgs[0].message["content"].startswith("This session is being continued")
    assert msgs[1].message["content"] == "Project kickoff 13000: we work on app.py"
    assert msgs[-1].message["content"] == [{"type": "text", "text": "TOOL-RESULT-SEEN n=22"}]


def test_human_output_says_the_counts_are_estimates(config: Path) -> None:
    out = tt("compact", str(transcript(config)), "--keep-tokens", "800", LARGER, config=config)
    assert out.returncode == 0, out.stderr
    assert "Compacted" in out.stdout and "estimates" in out.stdout and "claude --resume" in out.stdout


def test_dry_run_shows_the_plan_and_writes_nothing(config: Path) -> None:
    before = digest(config)
    out = tt("compact", SID, "--keep-tokens", "800", "--dry-run", LARGER, config=config)
    assert out.returncode == 0, out.stderr
    assert digest(config) == before
    assert "Would compact" in out.stdout and "Kept verbatim" in out.stdout and "Summary" in out.stdout
    assert "Project kickoff 13000" in out.stdout and "dry run: nothing written" in out.stdout


def test_output_path_and_directory(config: Path, tmp_path: Path) -> None:
    d = tmp_path / "elsewhere"
    d.mkdir()
    out = tt("compact", SID, "-o", str(d), "--json", "--keep-tokens", "800", LARGER, config=config)
    assert out.returncode == 0, out.stderr
    assert Path(json.loads(out.stdout)["output"]).parent == d
    f = tmp_path / "small.jsonl"
    out = tt("compact", SID, "-o", str(f), "--json", "--keep-tokens", "800", LARGER, config=config)
    assert out.returncode == 0 and f.is_file()
    again = tt("compact", SID, "-o", str(f), "--keep-tokens", "800", LARGER, config=config)
    assert again.returncode == 6 and "already exists" in again.stderr


def test_in_place_keeps_a_backup(config: Path) -> None:
    path = transcript(config)
    original = path.read_bytes()
    out = tt("compact", SID, "--in-place", "--json", "--keep-tokens", "800", LARGER, config=config)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert Path(d["backup"]).read_bytes() == original
    assert path.read_bytes().startswith(original) and path.stat().st_size > len(original)
    assert d["continue"] == [f"tt resume {SID}", f"cd /home/dev/demo-app && claude --resume {SID}"]


def test_in_place_reports_what_was_appended_and_the_size_of_the_file(config: Path) -> None:
    # Issue 18: "725 KiB written" on a file that grew to 60.2 MB. The report gives both.
    path = transcript(config)
    before = path.stat().st_size
    out = tt("compact", SID, "--in-place", "--json", "--keep-tokens", "800", LARGER, config=config)
    d = json.loads(out.stdout)
    assert d["bytes"]["file_after"] == path.stat().st_size > before
    assert d["bytes"]["after"] == path.stat().st_size - before  # what was appended
    assert not d["drop_history"]


def test_drop_history_leaves_the_compaction_alone_and_the_history_in_the_backup(config: Path) -> None:
    path = transcript(config)
    original = path.read_bytes()
    out = tt(
        "compact",
        SID,
        "--in-place",
        "--drop-history",
        "--json",
        "--keep-tokens",
        "800",
        LARGER,
        config=config,
    )
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert Path(d["backup"]).read_bytes() == original
    small = path.read_bytes()
    assert d["bytes"]["file_after"] == len(small) < len(original) // 3
    recs = [json.loads(ln) for ln in small.splitlines()]
    assert recs[0]["subtype"] == "compact_boundary" and recs[0]["logicalParentUuid"] is None
    assert recs[1]["isCompactSummary"] is True and recs[1]["parentUuid"] == recs[0]["uuid"]
    assert sum(r.get("subtype") == "compact_boundary" for r in recs) == 1
    assert {r["sessionId"] for r in recs if "sessionId" in r} == {SID}  # the same session
    # The session's labels stay as they were (the last of each kind; no "(compacted)" title:
    # it is the same session), and so does what the listing shows.
    from transcript_tools.compact.skeleton import METADATA_TYPES

    def labels(rs: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            r["type"]: {k: v for k, v in r.items() if k != "uuid"}
            for r in rs
            if r.get("type") in METADATA_TYPES
        }

    assert labels(recs) == labels([json.loads(ln) for ln in original.splitlines()]) != {}
    listed = {
        s["session_id"]: (s["title"], s["first_prompt"])
        for s in json.loads(tt("ls", "-a", "--json", config=config).stdout)["sessions"]
    }
    assert listed[SID] == (
        'TOOL:Grep {"pattern": "def", "path": "/home/dev/demo-app"}',
        "Project kickoff 13000: we work on app.py",
    )
    # The summary sends the model to the history where it now is: the backup.
    assert f"read the full transcript at: {d['backup']}" in recs[1]["message"]["content"]
    assert validate_path(path).errors == 0
    assert d["continue"][0] == f"tt resume {SID}"
    human = tt("compact", SID, "--in-place", "--drop-history", "--keep-tokens", "400", LARGER, config=config)
    assert "the file now holds the compaction alone; its history is in the backup" in human.stdout


def test_prune_and_keep_options(config: Path) -> None:
    out = tt(
        "compact",
        SID,
        "--dry-run",
        "--json",
        "--prune",
        "tool-output,thinking",
        "--keep",
        "ff44c48a-10bc-4e6a-8229-9e9c8bf05269",
        "--no-first-request",
        config=config,
    )
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["messages"]["key"] == ["ff44c48a-10bc-4e6a-8229-9e9c8bf05269"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["-o", "x.jsonl", "--in-place"], "choose one of"),
        (["--in-place", "--dry-run"], "choose one of"),
        (["-o", "x.jsonl", "--dry-run"], "choose one of"),
        (["--prune", "tool-output,bogus"], "unknown kind"),
        (["--instructions", "focus"], "needs --summarizer anthropic"),
        (["--force"], "--force and --no-backup only apply"),
        (["--drop-history"], "--drop-history only applies to --in-place"),
        (["--in-place", "--drop-history", "--no-backup"], "cannot go with --no-backup"),
        (["--keep-tokens", "-1"], "Invalid value"),
    ],
)
def test_usage_errors(config: Path, args: list[str], message: str) -> None:
    before = digest(config)
    out = tt("compact", SID, *args, config=config)
    assert out.returncode == 2 and message in out.stderr
    assert digest(config) == before


def test_not_found(config: Path) -> None:
    out = tt("compact", "ffffffff", config=config)
    assert out.returncode == 3
    out = tt("compact", SID, "--keep", "00000000-0000-4000-8000-000000000000", config=config)
    assert out.returncode == 3 and "--keep" in out.stderr


def test_a_model_summary_needs_a_key_before_any_work(config: Path) -> None:
    before = digest(config)
    out = tt("compact", SID, "--summarizer", "anthropic", config=config)
    assert out.returncode == 5 and "ANTHROPIC_API_KEY" in out.stderr
    out = tt("compact", SID, "--exact", config=config)
    assert out.returncode == 5
    assert digest(config) == before


def test_a_dry_run_does_not_call_the_model(config: Path) -> None:
    out = tt("compact", SID, "--summarizer", "anthropic", "--dry-run", "--json", config=config)
    assert out.returncode == 0, out.stderr
    assert any("model was not asked" in n for n in json.loads(out.stdout)["notes"])


def test_a_subagent_transcript_is_refused(config: Path) -> None:
    [agent] = (config / "projects" / PROJECT / SID / "subagents").glob("agent-*.jsonl")
    out = tt("compact", str(agent), config=config)
    assert out.returncode == 2 and "subagent" in out.stderr


def test_model_summary_and_exact_count_through_the_stand_in(config: Path, standin: StandIn) -> None:
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": standin.base_url}
    out = tt(
        "compact",
        SID,
        "--summarizer",
        "anthropic",
        "--model",
        "claude-standin-1",
        "--instructions",
        "the tests",
        "--exact",
        "--json",
        "--keep-tokens",
        "300",  # under the ~700 tokens a resume sends: a budget that fits would be no compaction,
        config=config,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["summarizer"] == "anthropic"
    assert isinstance(d["tokens"]["after_exact"], int) and d["tokens"]["after_exact"] > 0
    [summary_req] = standin.message_requests
    assert summary_req.model == "claude-standin-1"
    assert summary_req.messages[0]["content"].endswith("the tests")
    assert any(r.path == "/v1/messages/count_tokens" for r in standin.requests)
    lines = [json.loads(x) for x in Path(d["output"]).read_text().splitlines()]
    assert "SUMMARY n=1" in lines[1]["message"]["content"]


def test_api_failure_writes_nothing(config: Path, standin: StandIn) -> None:
    from tests.support.standin import ApiError

    standin.script(*[ApiError(400, "bad request")] * 3)
    before = digest(config)
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": standin.base_url}
    out = tt(
        "compact",
        SID,
        "--summarizer",
        "anthropic",
        "--model",
        "m",
        "--keep-tokens",
        "300",
        config=config,
        env=env,
    )
    assert out.returncode == 5 and "bad request" in out.stderr
    assert digest(config) == before


# --- the real Claude Code CLI resumes what tt compacted ---------------------------------

#: A real session that is large in tokens: four Reads of 2,000 numbered lines each
#: (~12k tokens apiece), besides Edit, Write, Bash and plain turns. {cwd} is the session's cwd.
LARGE_SCRIPT = (
    "Project kickoff: we work on app.py",
    'TOOL:Bash {"command": "seq 1 9000 > {cwd}/numbers.txt", "description": "make data"}',
    'TOOL:Read {"file_path": "{cwd}/numbers.txt", "limit": 2000}',
    'TOOL:Edit {"file_path": "{cwd}/app.py", "old_string": "hello", "new_string": "hello world"}',
    'TOOL:Read {"file_path": "{cwd}/numbers.txt", "offset": 2001, "limit": 2000}',
    'TOOL:Write {"file_path": "{cwd}/util.py", "content": "def add(a, b):\\n    return a + b\\n"}',
    "Plain question about the design?",
    'TOOL:Read {"file_path": "{cwd}/numbers.txt", "offset": 4001, "limit": 2000}',
    'TOOL:Read {"file_path": "{cwd}/numbers.txt", "offset": 6001, "limit": 2000}',
    'TOOL:Bash {"command": "python3 app.py", "description": "run app"}',
    "Last turn: what is next?",
)
BUDGET = 6000


@pytest.fixture(scope="module", params=["2.1.332", "2.1.197"], ids=lambda v: f"cc-{v}")
def large_session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> GeneratedSession:
    from tests.support.claude_cli import find_cli
    from tests.support.sessions import generate_session

    cli = find_cli(request.param)
    if cli is None:
        pytest.skip(f"Claude Code {request.param} is not installed (see tests/conftest.py)")
    return generate_session(
        cli, tmp_path_factory.mktemp(f"large-{request.param}"), prompts=LARGE_SCRIPT, checkpointing=False
    )


@pytest.mark.claude
def test_the_real_cli_resumes_the_small_file_as_it_resumes_the_appended_one(
    large_session: GeneratedSession, tmp_path: Path
) -> None:
    # Issue 18 item 7: --in-place --drop-history leaves the boundary, the summary and the
    # kept copies (the preserved segment) alone in the file. Claude Code must resume that
    # small file with the very conversation it resumes from the appended, big one.
    from datetime import datetime

    clock = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)  # the CLI's clock, pinned
    probe = "Probe after tt compact --drop-history"
    sent: dict[str, list[dict[str, Any]]] = {}
    sizes: dict[str, int] = {}
    for name, extra in (("appended", []), ("alone", ["--drop-history"])):
        s = large_session.copy_to(tmp_path / name)
        out = tt(
            "compact",
            s.session_id,
            "--in-place",
            *extra,
            "--keep-tokens",
            str(BUDGET),
            "--json",
            config=s.config_dir,
        )
        assert out.returncode == 0, out.stderr
        d = json.loads(out.stdout)
        sizes[name] = Path(d["output"]).stat().st_size
        assert validate_path(Path(d["output"])).errors == 0
        request = resume_request(s.cli, s.config_dir, s.session_id, s.cwd, probe, clock=clock)
        # The one difference tt writes on purpose: where the summary says the full
        # transcript is (the file itself, or its backup once the history left it).
        text = json.dumps(request.messages).replace(d["backup"] if extra else d["output"], "<history>")
        sent[name] = json.loads(text)
    assert sizes["alone"] < sizes["appended"] // 2
    blocks = conversation_blocks(sent["alone"])
    assert blocks[0].value.startswith("This session is being continued") and blocks[-1].value == probe
    assert len(blocks) >= 8 and any(
        b.kind == "tool_result" for b in blocks
    )  # the kept messages came back too
    assert sent["alone"] == sent["appended"]


_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)


def _tokens(messages: list[dict[str, Any]]) -> int:
    """Our estimate of a request's conversation: every block of every user and assistant
    message, tool results included, less the ``<system-reminder>`` renderings Claude Code
    adds to every request (role ``system`` messages, reminder texts; as the oracle does)."""
    c = TokenCounter()
    n = 0
    for m in messages:
        if m.get("role") == "system":
            continue
        content = m.get("content")
        for b in [{"type": "text", "text": content}] if isinstance(content, str) else content or []:
            if isinstance(b, dict) and b.get("type") == "text":
                b = {**b, "text": _REMINDER.sub("", str(b.get("text", "")))}
            n += c.block(b).tokens
        n += 4
    return n


@pytest.mark.claude
@pytest.mark.parametrize("mode", ["new", "in-place"])
def test_the_real_cli_resumes_a_large_session_compacted_to_a_budget(
    large_session: GeneratedSession, tmp_path: Path, mode: str
) -> None:
    s = large_session.copy_to(tmp_path)
    original = s.transcript.read_bytes()
    probe = "Probe after tt compact"
    before_messages = resume_with_cli(s.cli, s.config_dir, s.session_id, s.cwd, probe)
    before = [b for b in conversation_blocks(before_messages) if b.value != probe]
    args = ["compact", s.session_id, "--keep-tokens", str(BUDGET), "--json"] + (
        ["--in-place"] if mode == "in-place" else []
    )
    out = tt(*args, config=s.config_dir)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    sid = d["new_session_id"] or s.session_id
    path = Path(d["output"])
    if mode == "new":
        assert s.transcript.read_bytes() == original  # the input is unchanged
    else:
        assert path.read_bytes().startswith(original) and Path(d["backup"]).read_bytes() == original
    assert validate_path(path).errors == 0
    request = resume_request(s.cli, s.config_dir, sid, s.cwd, probe)
    after = conversation_blocks(request.messages)
    assert after[-1].value == probe
    # The summary first, naming the first request and the files the session touched.
    summary = after[0].value
    assert after[0].role == "user" and summary.startswith("This session is being continued")
    assert '"Project kickoff: we work on app.py"' in summary
    for f in ("app.py", "util.py", "numbers.txt"):
        assert f"{s.cwd}/{f}" in summary, f
    # Then the first request verbatim, then the last messages verbatim.
    assert after[1].value == "Project kickoff: we work on app.py"
    tail = after[2:-1]
    assert len(tail) >= 6 and tail == before[-len(tail) :]
    assert any(b.kind == "tool_result" for b in tail)  # a whole Read kept, with its call
    # The request fits the budget: summary + kept messages, within the estimate's margin,
    # and is a fraction of what the CLI sent before.
    sent = _tokens(request.messages)
    assert d["tokens"]["kept"] <= BUDGET
    assert sent <= (BUDGET + d["tokens"]["summary"]) * (1 + MARGIN), (sent, d["tokens"])
    assert sent < _tokens(before_messages) / 3, (sent, _tokens(before_messages))


@pytest.mark.claude
def test_the_real_cli_resumes_the_shipped_fixture_compacted(claude_332: ClaudeCLI, tmp_path: Path) -> None:
    cwd = (tmp_path / "demo-app").resolve()
    cwd.mkdir()
    config = stage_config(CONFIG_332, tmp_path / "config", recorded_cwd="/home/dev/demo-app", cwd=cwd)
    out = tt(
        "compact", SID, "--keep-tokens", "300", "--prune", "tool-output", "--json", LARGER, config=config
    )
    assert out.returncode == 0, out.stderr
    sid = json.loads(out.stdout)["new_session_id"]
    blocks = conversation_blocks(resume_with_cli(claude_332, config, sid, cwd, "probe 2"))
    assert blocks[0].value.startswith("This session is being continued")
    assert blocks[1].value == "Project kickoff 13000: we work on app.py"
    assert [b.value for b in blocks if b.kind == "tool_use"][-1] == "toolu_be664747bacd42f49700be7f Grep"
    assert blocks[-2].value == "TOOL-RESULT-SEEN n=22" and blocks[-1].value == "probe 2"


# --- what is not a compaction, and how to continue one written elsewhere (issue 18) -----


@pytest.mark.parametrize("mode", [[], ["--in-place"], ["--dry-run"]], ids=["new", "in-place", "dry-run"])
def test_a_small_compacted_session_fits_its_budget_not_a_summary_no_smaller(
    config: Path, mode: list[str]
) -> None:
    """Finding (issue 18, round 2): on the real 2.1.332 session (already compacted once by
    the CLI, ~700 tokens sent on resume) ``--dry-run`` said "the summary is no smaller";
    it fits the default budget of 40,000 tokens, and says so with both figures."""
    before = digest(config)
    out = tt("compact", SID, "--json", *mode, config=config)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["nothing_to_do"] is True and d["grows"] is False and d["output"] is None
    assert d["messages"]["summarised"] == 0 and d["tokens"]["budget"] == 40000
    size = d["tokens"]["before"]
    assert 0 < size <= 40000 and d["tokens"]["after"] == size
    assert (
        f"the session fits its budget: a resume sends ~{size:,} tokens, within --keep-tokens 40,000"
        in d["notes"]
    )
    human = tt("compact", SID, *mode, config=config)
    assert (
        human.returncode == 0 and "Nothing to compact" in human.stdout and "fits its budget" in human.stdout
    )
    assert "no smaller" not in human.stdout and "Continue it with" not in human.stdout
    assert digest(config) == before  # nothing written, no backup


@pytest.mark.parametrize("mode", [[], ["--in-place"], ["--dry-run"]], ids=["new", "in-place", "dry-run"])
def test_a_compaction_that_would_grow_the_request_is_not_written(config: Path, mode: list[str]) -> None:
    # The fixture's conversation is ~700 tokens, over a budget of 300; the summary alone is bigger.
    before = digest(config)
    out = tt("compact", SID, "--keep-tokens", "300", "--json", *mode, config=config)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["grows"] is True and d["output"] is None and d["new_session_id"] is None and d["continue"] == []
    assert d["tokens"]["after"] >= d["tokens"]["before"]
    assert any(n.startswith("not compacted: the summary") and "--even-if-larger" in n for n in d["notes"])
    assert digest(config) == before  # nothing written, no backup
    human = tt("compact", SID, "--keep-tokens", "300", *mode, config=config)
    assert human.returncode == 0 and "Not compacted" in human.stdout and "would grow" in human.stdout
    assert "Continue it with" not in human.stdout
    assert digest(config) == before


def test_the_continue_command_works_for_a_file_outside_the_config_dir(config: Path, tmp_path: Path) -> None:
    f = tmp_path / "small.jsonl"
    out = tt("compact", SID, "-o", str(f), "--json", "--keep-tokens", "800", LARGER, config=config)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["continue"] == [f"tt resume {f}"]  # by path: the id does not resolve there
    assert tt("resume", d["new_session_id"], "--dry-run", config=config).returncode == 3
    cmd = d["continue"][0].split()
    assert tt(*cmd[1:], "--dry-run", config=config).returncode == 0
    # In the project folder the id resolves, and `claude --resume` finds it too.
    inside = json.loads(tt("compact", SID, "--json", "--keep-tokens", "800", LARGER, config=config).stdout)
    assert inside["continue"][0] == f"tt resume {inside['new_session_id']}"
    assert inside["continue"][1].endswith(f"claude --resume {inside['new_session_id']}")


PROGRESS_HEAVY = REAL / "v2.1.17-agent-progress-ends-mid-tool.jsonl"  # half of its bytes are progress lines


def _grown_progress_heavy(tmp_path: Path) -> Path:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from grow import grow
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    src = tmp_path / "heavy.jsonl"
    grow(PROGRESS_HEAVY, src, 1_200_000)
    return src


def test_progress_lines_go_first_when_nothing_is_worth_summarising(config: Path, tmp_path: Path) -> None:
    src = _grown_progress_heavy(tmp_path)
    original = src.read_bytes()
    # The whole conversation fits the budget: nothing to summarise, and tt says what would help.
    d = json.loads(
        tt("compact", str(src), "--dry-run", "--json", "--keep-tokens", "1000000", config=config).stdout
    )
    assert d["nothing_to_do"] and not d["slim"]
    assert any("a resume never sends" in n and "--prune progress" in n for n in d["notes"]), d["notes"]
    # --prune progress (refused before issue 18): the conversation without them.
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    r = tt(
        "compact",
        str(src),
        "--prune",
        "progress",
        "-o",
        str(out_dir),
        "--json",
        "--keep-tokens",
        "1000000",
        config=config,
    )
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["slim"] and d["messages"]["summarised"] == 0 and d["tokens"]["after"] == d["tokens"]["before"]
    made = Path(d["output"])
    assert src.read_bytes() == original
    assert made.stat().st_size < len(original) * 0.6
    records = [json.loads(x) for x in made.read_text().splitlines()]
    assert not [
        x
        for x in records
        if x.get("type") == "progress" or x.get("subtype") == "compact_boundary" or x.get("isCompactSummary")
    ]
    assert (
        sum(1 for x in records if x.get("parentUuid") is None and x.get("type") in ("user", "assistant")) == 1
    )  # one chain
    assert validate_path(made).errors == 0
    # The same conversation as before, by tt's rebuild (the real CLI's: the claude test below).
    from transcript_tools.edge.loader import load_session
    from transcript_tools.model import conversation

    before = conversation.build(load_session(src).session).messages
    after = conversation.build(load_session(made).session).messages
    assert after == before


def test_prune_progress_in_place_writes_nothing(tmp_path: Path, config: Path) -> None:
    src = tmp_path / "p.jsonl"
    src.write_bytes(PROGRESS_HEAVY.read_bytes())
    r = tt("compact", str(src), "--prune", "progress", "--in-place", "--json", config=config)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["output"] is None and any("would only grow" in n for n in d["notes"])
    assert src.read_bytes() == PROGRESS_HEAVY.read_bytes() and not list(tmp_path.glob("*.bak"))


@pytest.mark.claude
@pytest.mark.parametrize(
    "source, args",
    [
        (PROGRESS_HEAVY, []),
        (REAL / "claude-config-2.1.332" / "projects" / PROJECT / f"{SID}.jsonl", ["--keep-tokens", "800"]),
    ],
    ids=["progress-heavy", "after-claude-code-compact"],
)
def test_the_real_cli_resumes_the_copy_without_progress_lines_as_the_original(
    claude_332: ClaudeCLI, tmp_path: Path, config: Path, source: Path, args: list[str]
) -> None:
    # The second: a summary would grow the request, so the copy stands in; it starts with
    # Claude Code's own boundary and summary, copied like the rest.
    from tests.support.oracle import compare_histories
    from tests.support.sessions import project_folder_name

    cwd = (tmp_path / "work").resolve()
    cwd.mkdir()
    project = tmp_path / "cc" / "projects" / project_folder_name(cwd)
    project.mkdir(parents=True)
    sid = "f3c5ad5e-0c5f-4b7e-a1b8-54a9e3c0c6a1"
    orig = project / f"{sid}.jsonl"
    orig.write_bytes(source.read_bytes())
    d = json.loads(tt("compact", str(orig), "--prune", "progress", "--json", *args, config=config).stdout)
    assert d["slim"] and Path(d["output"]).parent == project
    before = resume_with_cli(claude_332, tmp_path / "cc", sid, cwd, "probe")
    after = resume_with_cli(claude_332, tmp_path / "cc", d["new_session_id"], cwd, "probe")
    assert len(after) == len(before) and compare_histories(before, after, labels=("original", "copy")) == ""


def test_prune_progress_instead_of_a_summary_that_would_grow_the_request(
    config: Path, tmp_path: Path
) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    r = tt(
        "compact",
        SID,
        "--keep-tokens",
        "300",
        "--prune",
        "progress",
        "-o",
        str(out_dir),
        "--json",
        config=config,
    )
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["slim"] and not d["grows"] and d["messages"]["summarised"] == 0
    assert any("the whole conversation is copied instead" in n for n in d["notes"])
    made = Path(d["output"])
    # Gone: request logs, the history behind Claude Code's own /compact; kept: the conversation as it is.
    assert made.parent == out_dir and made.stat().st_size < transcript(config).stat().st_size * 0.3
    assert validate_path(made).errors == 0


def test_in_place_on_a_damaged_copy_outside_the_config_dir(config: Path, tmp_path: Path) -> None:
    # New-user pass: in place, "read through 1 in-memory repair(s); the original is
    # unchanged" right after appending to it, and a `claude --resume` hint for a file
    # outside every project folder (which claude would not find; it would open the copy).
    from tests.damage import dangling_parent

    damaged = dangling_parent(transcript(config).read_bytes()).data
    copies = []
    for name in ("text", "json"):
        p = tmp_path / name / f"{SID}.jsonl"
        p.parent.mkdir()
        p.write_bytes(damaged)
        copies.append(p)
    out = tt("compact", str(copies[0]), "--in-place", "--keep-tokens", "800", LARGER, config=config)
    assert out.returncode == 0, out.stderr
    assert "in-memory repair(s); its damaged lines are left as they were" in out.stdout
    assert "the original is unchanged" not in out.stdout
    out = tt("compact", str(copies[1]), "--in-place", "--json", "--keep-tokens", "800", LARGER, config=config)
    d = json.loads(out.stdout)
    assert d["damage"]["repaired_in_memory"]
    # By its path (the id names the config dir's own copy); no claude hint.
    assert d["continue"] == [f"tt resume {copies[1]}"]


def test_a_dry_run_that_would_not_compact_says_what_a_real_run_would_do(config: Path) -> None:
    # New-user pass: a dry run said "nothing was written", as if it could have been.
    out = tt("compact", SID, "--keep-tokens", "100", "--dry-run", config=config)
    assert out.returncode == 0, out.stderr
    assert "a real run would write nothing" in out.stdout and "nothing was written" not in out.stdout
