"""`stats` (and its disk side `usage`): each API call counted once, as ccusage counts.

ccusage (npm, real) is the oracle for token totals and cost: it runs on the same files
laid out in a temp config dir when it is installed, and the test says why it skipped
when it is not (in CI that skip is a failure: tests marked ``ccusage``). Install (what
.ci/run does): ``tests/support/install_ccusage.sh`` (20.0.24: the newest release whose
native linux-x64 binary is on the registry).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import orjson
import pytest

from tests.support.paths import REAL, ROOT
from transcript_tools.catalog.files_usage import many_stats, many_stats_dicts, session_stats
from transcript_tools.catalog.stats import Call, Collector, Ledger, combine
from transcript_tools.edge.reader import iter_lines
from transcript_tools.model.lines import Entry
from transcript_tools.model.pricing import Tokens, cost_usd
from transcript_tools.model.prompts import is_prompt

S332 = REAL / "claude-config-2.1.332/projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
PROGRESS = REAL / "v2.1.17-agent-progress-ends-mid-tool.jsonl"
SPLIT = REAL / "v1.0.51-inline-sidechains-two-compactions.jsonl"

#: Hand-written files ccusage is not meant for: spaced JSON (``"usage": {``), which its
#: native loader does not look for (docs/format.md §12); Claude Code never writes it.
NOT_CC_WRITTEN = {"handwritten-edge-cases-not-object-lines.jsonl"}


def records(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [e.record for ln in iter_lines(path) for e in ln.entries]


def entries(recs: list[dict]) -> list[Entry]:  # type: ignore[type-arg]
    return [Entry(i + 1, 0, orjson.dumps(r), r) for i, r in enumerate(recs)]


def feed(recs: list[dict], sub: list[list[dict]] = ()) -> Collector:  # type: ignore[type-arg, assignment]
    c = Collector("s")
    c.feed(entries(recs))
    for s in sub:
        c.feed(entries(s), subagent=True)
    return c


# --- the counting rules, checked against an independent count ---------------------------------


def test_split_lines_count_once_with_the_last_lines_usage() -> None:
    recs = records(SPLIT)
    last: dict[tuple[str, str | None], dict] = {}  # type: ignore[type-arg]
    for r in recs:
        if r.get("type") == "assistant" and r["message"].get("model") != "<synthetic>":
            last[(r["message"]["id"], r.get("requestId"))] = r["message"]["usage"]
    # The fixture has split lines whose streaming placeholder differs from the final usage.
    firsts: dict[tuple[str, str | None], int] = {}
    for r in recs:
        if r.get("type") == "assistant":
            firsts.setdefault(
                (r["message"]["id"], r.get("requestId")), r["message"]["usage"]["output_tokens"]
            )
    assert any(firsts[k] != u["output_tokens"] for k, u in last.items())
    st = feed(recs).stats()
    assert len(st.ledger.calls()) == len(last)
    assert st.tokens.output == sum(u["output_tokens"] for u in last.values())
    assert st.tokens.cache_read == sum(u.get("cache_read_input_tokens", 0) for u in last.values())


def test_synthetic_and_api_error_messages_are_not_calls() -> None:
    recs = records(REAL / "v2.1.38-tool-heavy.jsonl")
    base = feed(recs).stats()
    synthetic = {
        "type": "assistant",
        "uuid": "u-synth",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "isApiErrorMessage": True,
        "message": {
            "id": "msg_synth",
            "model": "<synthetic>",
            "role": "assistant",
            "content": [{"type": "text", "text": "API Error"}],
            "usage": {"input_tokens": 5, "output_tokens": 5},
        },
    }
    st = feed([*recs, synthetic]).stats()
    assert st.tokens == base.tokens and len(st.ledger.calls()) == len(base.ledger.calls())
    assert st.error_messages == base.error_messages + 1


def _progress_copies(recs: list[dict]) -> list[dict]:  # type: ignore[type-arg]
    """The subagent's lines, rebuilt from the agent_progress copies (as its file holds them)."""
    out = []
    for r in recs:
        d = r.get("data") if r.get("type") == "progress" else None
        if isinstance(d, dict) and d.get("type") == "agent_progress":
            inner = d["message"]
            out.append(
                {**inner, "isSidechain": True, "agentId": d.get("agentId"), "sessionId": r.get("sessionId")}
            )
    return out


def test_subagent_usage_counts_once_from_files_or_copies() -> None:
    recs = records(PROGRESS)
    sub = _progress_copies(recs)
    sub_calls = {(r["message"]["id"], r.get("requestId")) for r in sub if r.get("type") == "assistant"}
    assert sub_calls  # the fixture mirrors a subagent
    without_file = feed(recs).stats()
    with_file = feed(recs, [sub]).stats()
    main_only = feed([r for r in recs if r.get("type") != "progress"]).stats()
    assert with_file.tokens == without_file.tokens  # the copies are not counted again
    assert len(without_file.ledger.calls()) == len(main_only.ledger.calls()) + len(sub_calls)
    assert with_file.ledger.duplicate_copies == len(sub_calls)
    assert without_file.subagent_tokens().total > 0


def test_feeding_a_file_twice_changes_nothing_but_file_counts() -> None:
    recs = records(REAL / "v2.1.29-user-image-partial-copy.jsonl")
    once = feed(recs).stats()
    c = Collector("s")
    c.feed(entries(recs))
    c.feed(entries(recs))
    twice = c.stats()
    assert (twice.tokens, twice.tools, twice.tool_errors) == (once.tokens, once.tools, once.tool_errors)


def test_tools_errors_turns_compactions_match_an_independent_count() -> None:
    recs = records(SPLIT)
    st = feed(recs).stats()
    calls: dict[str, str] = {}
    for r in recs:
        if r.get("type") == "assistant":
            for b in r["message"]["content"]:
                if b.get("type") == "tool_use":
                    calls[b["id"]] = b["name"]
    failed = {
        b["tool_use_id"]
        for r in recs
        if r.get("type") == "user" and isinstance(r["message"]["content"], list)
        for b in r["message"]["content"]
        if b.get("type") == "tool_result" and b.get("is_error")
    }
    assert sum(st.tools.values()) == len(calls)
    assert sum(st.tool_errors.values()) == len(failed & calls.keys())
    assert st.compactions == sum(1 for r in recs if r.get("isCompactSummary") and r.get("parentUuid") is None)
    assert st.turns == sum(1 for r in recs if is_prompt(r))
    assert (
        sum(st.tokens_per_turn()) + sum(c.tokens.total for c in st.ledger.calls() if c.subagent)
        == st.tokens.total
    )
    assert st.duration_s is not None and st.duration_s > 0


def test_is_prompt_leaves_out_what_a_person_did_not_type() -> None:
    def user(content: object, **kw: object) -> dict:  # type: ignore[type-arg]
        return {"type": "user", "message": {"role": "user", "content": content}, **kw}

    assert is_prompt(user("fix the bug"))
    assert is_prompt(user([{"type": "image", "source": {}}]))
    assert not is_prompt(user([{"type": "tool_result", "tool_use_id": "t", "content": "x"}]))
    assert not is_prompt(user("<command-name>/compact</command-name>"))
    assert not is_prompt(user("<local-command-stdout>ok</local-command-stdout>"))
    assert not is_prompt(user("[Request interrupted by user]"))
    assert not is_prompt(user("summary", isCompactSummary=True))
    assert not is_prompt(user("caveat", isMeta=True))
    assert not is_prompt(user("<task-notification>…", promptSource="system"))
    assert not is_prompt(user("side", isSidechain=True))


def test_combine_counts_a_call_shared_by_two_sessions_once() -> None:
    recs = records(REAL / "v2.1.38-tool-heavy.jsonl")
    a, b = feed(recs).stats(), feed(recs).stats()
    both = combine([a, b])
    assert both.tokens == a.tokens
    assert both.turns == 2 * a.turns and both.files == 2


def test_ledger_keeps_the_turn_of_the_first_line_and_the_usage_of_the_last() -> None:
    led = Ledger()
    led.add(("m", "r"), Call("x", Tokens(1, 1), 3, False))
    led.add(("m", "r"), Call("x", Tokens(1, 9), 5, False))
    (c,) = led.calls()
    assert c.turn == 3 and c.tokens.output == 9


def test_session_stats_reads_subagent_files_and_reports_damage(tmp_path: Path) -> None:
    from tests import damage

    st = session_stats(S332)
    assert st.subagent_files == 1 and st.subagent_tokens().total > 0
    bad = tmp_path / S332.name
    bad.write_bytes(damage.fused_records(S332.read_bytes()).data)
    got = session_stats(bad)
    assert [(s.line, s.code) for s in got.skipped] == [
        (x.line, x.code)
        for x in damage.validate_bytes(bad.read_bytes()).diagnostics
        if x.code == "fused-records"
    ]
    assert got.tokens.total > 0


# --- ccusage --------------------------------------------------------------------------------


def ccusage_bin() -> str | None:
    # Where tests/support/install_ccusage.sh puts it: $TT_CACHE/ccusage, else <repo>/.cache/ccusage.
    cache = Path(os.environ.get("TT_CACHE") or ROOT / ".cache")
    for cand in (
        os.environ.get("TT_CCUSAGE"),
        str(cache / "ccusage/node_modules/.bin/ccusage"),
        shutil.which("ccusage"),
    ):
        if cand and Path(cand).exists():
            return cand
    return None


def run_ccusage(config: Path, what: str) -> dict:  # type: ignore[type-arg]
    exe = ccusage_bin()
    if exe is None:
        pytest.skip("ccusage not installed: run tests/support/install_ccusage.sh")
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TZ")}
    env["CLAUDE_CONFIG_DIR"] = str(config)
    # --offline: its bundled price table; never the network.
    out = subprocess.run(
        [exe, what, "--json", "--offline"], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(out.stdout)


def layouts() -> list[Path]:
    """Real transcripts (and config dirs) to lay out one per config dir."""
    singles = [p for p in sorted(REAL.glob("*.jsonl")) if p.name not in NOT_CC_WRITTEN]
    return singles + sorted(REAL.glob("claude-config-*")) + [REAL / "v2.0.28-project"]


def lay_out(src: Path, dest: Path) -> list[Path]:
    """A config dir holding ``src``; returns its main session files."""
    projects = dest / "projects"
    if src.is_dir():
        # A config dir (holding projects/) or a copied projects/ folder.
        shutil.copytree(src / "projects" if (src / "projects").is_dir() else src, projects)
    else:
        (projects / "-p").mkdir(parents=True)
        shutil.copy(src, projects / "-p" / f"{uuid.uuid5(uuid.NAMESPACE_URL, src.name)}.jsonl")
    from transcript_tools.edge import claude_dir as store

    return [p for d in store.all_projects(projects) for p in store.session_files(d)]


#: Models whose price in `pricing` differs from ccusage's (LiteLLM's table), and why.
#: The test fails when the set changes, so a fixed table is noticed.
#: Models whose price in pricing.py knowingly differs from ccusage's (none at present).
PRICE_DISAGREEMENTS: dict[str, str] = {}


@pytest.mark.ccusage
@pytest.mark.parametrize("src", layouts(), ids=lambda p: p.name[:40])
def test_totals_equal_ccusage(src: Path, tmp_path: Path) -> None:
    mains = lay_out(src, tmp_path)
    daily = run_ccusage(tmp_path, "daily")
    cc = daily["totals"]
    _, total = many_stats(mains)
    t = total.tokens
    assert (t.input, t.output, t.cache_write, t.cache_read) == (
        cc["inputTokens"],
        cc["outputTokens"],
        cc["cacheCreationTokens"],
        cc["cacheReadTokens"],
    )
    # Cost by model, where both have a price (ccusage's table is LiteLLM's, ours is dated).
    theirs: dict[str, float] = {}
    for day in daily["daily"]:
        for m in day["modelBreakdowns"]:
            if not m.get("missingPricing"):
                theirs[m["modelName"]] = theirs.get(m["modelName"], 0.0) + m["cost"]
    compared = [u for u in total.by_model() if u.cost is not None and u.model in theirs]
    differ = {u.model for u in compared if u.cost != pytest.approx(theirs[u.model], rel=1e-6, abs=1e-6)}
    assert differ == {u.model for u in compared if u.model in PRICE_DISAGREEMENTS}


@pytest.mark.ccusage
def test_per_session_totals_equal_ccusage_with_subagents(tmp_path: Path) -> None:
    mains = lay_out(REAL / "claude-config-2.1.332", tmp_path)
    cc = {s["period"]: s for s in run_ccusage(tmp_path, "session")["session"]}
    for p in mains:
        st = session_stats(p)
        row = cc[p.stem]
        assert (st.tokens.input, st.tokens.output) == (row["inputTokens"], row["outputTokens"])
        assert st.subagent_tokens().total > 0


# Costs, computed by hand from Anthropic's published price table (USD per million tokens;
# https://www.anthropic.com/pricing, as read on 2026-11-29):
#   Claude Opus 4.5/4.6:  input $5, output $25, cache write 5 min $6.25, 1 h $10, cache read $0.50
#   Claude Sonnet 4.5:    input $3, output $15, cache write 5 min $3.75, 1 h $6,  cache read $0.30


def test_cost_of_a_real_session_by_hand() -> None:
    st = session_stats(REAL / "v2.1.38-tool-heavy.jsonl")
    [u] = st.by_model()
    # These token totals equal ccusage's on this file (test_totals_equal_ccusage); every cache
    # write of this session has the 1-hour TTL (usage.cache_creation.ephemeral_1h_input_tokens).
    assert u.model == "claude-opus-4-6"
    assert u.tokens == Tokens(input=54, output=212, cache_write=17696, cache_read=88231, cache_write_1h=17696)
    # 54 × $5 + 212 × $25 + 17,696 × $10 + 88,231 × $0.50 = 270 + 5,300 + 176,960 + 44,115.5
    # = 226,645.5 µ$ → $0.2266455
    assert u.cost == pytest.approx(0.2266455, rel=1e-12)


def test_cost_of_each_kind_of_token_by_hand() -> None:
    t = Tokens(input=1000, output=2000, cache_write=3000, cache_read=10000, cache_write_1h=1000)
    # Sonnet 4.5: 1,000 × $3 + 2,000 × $15 + 2,000 (5-min writes) × $3.75 + 1,000 (1-h) × $6
    # + 10,000 × $0.30 = 3,000 + 30,000 + 7,500 + 6,000 + 3,000 = 49,500 µ$
    assert cost_usd("claude-sonnet-4-5-20250929", t) == pytest.approx(0.0495, rel=1e-12)
    # Opus 4.5: 5,000 + 50,000 + 12,500 + 10,000 + 5,000 = 82,500 µ$
    assert cost_usd("claude-opus-4-5-20251101", t) == pytest.approx(0.0825, rel=1e-12)
    assert cost_usd("a-model-nobody-prices", t) is None


def test_an_unpriced_model_makes_the_total_unknown_not_zero(tmp_path: Path) -> None:
    # The real 2.1.332 session with its model renamed to one no table prices (claude-opus-5-5
    # itself is priced since tt read Claude Code 2.1.332's catalogue: tests/model/test_pricing.py).
    src = (
        REAL / "claude-config-2.1.332/projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
    )
    renamed = tmp_path / src.name
    renamed.write_bytes(src.read_bytes().replace(b'"model":"claude-opus-5-5"', b'"model":"claude-opus-5-6"'))
    st = session_stats(renamed)
    doc = st.to_dict()
    assert [m["model"] for m in doc["models"]] == ["claude-opus-5-6"]
    assert [m["cost_usd"] for m in doc["models"]] == [None]
    assert doc["totals"]["cost_usd"] is None and doc["totals"]["priced_cost_usd"] == 0
    assert doc["totals"]["unpriced_models"] == ["claude-opus-5-6"]
    from rich.console import Console

    from transcript_tools.views.stats import render_one

    con = Console(record=True, width=120)
    render_one(con, st, Path("x.jsonl"))
    shown = con.export_text().splitlines()
    # the word tt chat's /cost uses too (tests/resume/test_chat.py), never "$0" or a guess
    assert next(ln for ln in shown if ln.startswith("opus-5-6")).rstrip().endswith(" unpriced")
    assert "prices as of 2026-12-01; no price for claude-opus-5-6" in shown
    priced = session_stats(REAL / "v2.1.38-tool-heavy.jsonl").to_dict()["totals"]
    assert priced["cost_usd"] == priced["priced_cost_usd"] == pytest.approx(0.2266455, abs=1e-6)  # 6 decimals
    # the original, on 2.1.332's default model: $4/$20 per MTok (Claude Code 2.1.332's catalogue)
    t = session_stats(src).tokens
    assert session_stats(src).to_dict()["totals"]["cost_usd"] == pytest.approx(
        (t.input * 4 + t.output * 20 + t.cache_read * 0.2 + t.cache_write * 5) / 1e6, abs=1e-6
    )


def test_subagent_usage_without_subagent_files_says_where_it_came_from() -> None:
    from rich.console import Console

    from transcript_tools.views.stats import summary_lines

    st = session_stats(REAL / "v2.1.17-agent-progress-ends-mid-tool.jsonl")
    assert st.subagent_files == 0 and st.subagent_tokens().total > 0
    con = Console(width=200, record=True, color_system=None)
    for line in summary_lines(st):
        con.print(line)
    text = con.export_text()
    assert "(from progress records; no subagent files)" in text and "0 file(s)" not in text


#: A subagent's own transcript (Claude Code 2.1.272; the tail of SCRT-HQ/runlog's file).
AGENT_FILE = REAL / "v2.1.272-subagent-partial-copy" / "agent-a764edb5e35214f23.jsonl"


def test_a_subagent_file_named_alone_is_its_own_main_thread() -> None:
    # A new user's find: `tt stats agent-….jsonl` counted the file's own calls (every
    # record of it is a sidechain) as a subagent's, "from progress records; no subagent
    # files" — the file has no progress record. Its one call is the main thread's.
    from rich.console import Console

    from transcript_tools.views.stats import summary_lines

    records = [orjson.loads(x) for x in AGENT_FILE.read_bytes().splitlines()]
    assert all(r.get("isSidechain") is True for r in records if "isSidechain" in r)
    assert not any(r.get("type") == "progress" for r in records)
    [usage] = [r["message"]["usage"] for r in records if r.get("type") == "assistant"]
    st = session_stats(AGENT_FILE)
    assert st.subagent_tokens().total == 0
    assert st.tokens.input == usage["input_tokens"] and st.tokens.output == usage["output_tokens"]
    assert st.tokens_per_turn() == [st.tokens.total]  # before any prompt: the file is a tail
    con = Console(width=200, record=True, color_system=None)
    for line in summary_lines(st):
        con.print(line)
    text = con.export_text()
    assert "progress records" not in text and "subagents none" in text
    assert session_stats(AGENT_FILE).to_dict() == _slow_session_stats(AGENT_FILE)
    # A whole one (2.1.332's, written here): its first line, the prompt it was given, is a
    # turn (a review's find: is_prompt left every sidechain record out, so no turn at all).
    whole = next(REAL.glob("claude-config-2.1.332/projects/*/*/subagents/agent-*.jsonl"))
    first = orjson.loads(whole.read_bytes().splitlines()[0])
    assert first["isSidechain"] is True and isinstance(first["message"]["content"], str)
    st = session_stats(whole)
    assert st.turns == 1 and st.subagent_tokens().total == 0
    assert st.tokens_per_turn() == [st.tokens.total]  # all of it in turn 1
    assert st.to_dict() == _slow_session_stats(whole)


def test_the_chart_labels_what_came_before_the_first_prompt_0() -> None:
    # A tail of a session (and a subagent's file) has calls before its first prompt: the
    # chart drew them as turn 1 and every turn after it one off ("turns 1" over 2 bars).
    from transcript_tools.views.stats import chart

    assert [x.split()[0] for x in chart([5, 10], 80, 0)] == ["0", "1"]
    assert [x.split()[0] for x in chart([5, 10], 80)] == ["1", "2"]
    many = chart(list(range(1, 41)), 80, 0)  # grouped by two: 0-1, 2-3, ...
    assert many[0].split()[0] == "0-1" and many[-1].split()[0] == "38-39"


# --- the fast path (issue 18 item 16) --------------------------------------------------------


def _slow_session_stats(path: Path) -> dict:  # type: ignore[type-arg]
    """The statistics through the reader every command uses (`reader.iter_lines`, one
    `Entry` per record), as `usage` read before its fast path."""
    from transcript_tools.catalog.files_scope import agent_files
    from transcript_tools.catalog.stats import SkippedLine
    from transcript_tools.model.session import session_id_from_name

    c = Collector(session_id_from_name(path.name) or path.name, agent_file=path.name.startswith("agent-"))
    for i, p in enumerate([path, *agent_files(path)]):
        es = []
        for ln in iter_lines(p):
            c.out.skipped.extend(
                SkippedLine(str(p), ln.line, x.code) for x in ln.pieces if x.code != "blank-line"
            )
            es.extend(ln.entries)
        c.feed(es, subagent=i > 0)
    return c.stats().to_dict()


def _damaged_copies(tmp_path: Path) -> list[Path]:
    from tests import damage

    out = []
    kinds = (
        damage.fused_records,
        damage.torn_tail,
        damage.nul_run,
        damage.garbage,
        damage.not_object,
        damage.invalid_utf8,
        damage.lone_surrogate,
        damage.crlf,
        damage.bom,
    )
    for fn in kinds:
        name = fn.__name__
        p = tmp_path / name / S332.name
        p.parent.mkdir()
        p.write_bytes(fn(S332.read_bytes()).data)
        out.append(p)
    return out


def test_fast_reader_counts_what_the_common_reader_counts(tmp_path: Path) -> None:
    # Every real fixture (main files with their subagents), plus damaged copies (each kind
    # of line damage the reader names): the same statistics, skipped lines included.
    paths = [
        p
        for p in sorted(REAL.rglob("*.jsonl"))
        if "subagents" not in p.parts and not p.name.startswith("agent-")
    ]
    damaged = _damaged_copies(tmp_path)
    assert (
        len({(s.line, s.code) for p in damaged for s in session_stats(p).skipped}) >= 5
    )  # the slow path is taken
    paths += damaged
    assert len(paths) > 15
    for p in paths:
        assert session_stats(p).to_dict() == _slow_session_stats(p), p


def test_many_processes_give_the_numbers_of_one(tmp_path: Path) -> None:
    paths = [
        p
        for p in sorted(REAL.rglob("*.jsonl"))
        if "subagents" not in p.parts and not p.name.startswith("agent-")
    ]
    paths += _damaged_copies(tmp_path)
    one_each, one_total = many_stats(paths, workers=1)
    two_each, two_total = many_stats(paths, workers=2)
    assert [s.to_dict() for s in two_each] == [s.to_dict() for s in one_each]
    assert two_total.to_dict() == one_total.to_dict()
    assert one_total.tokens.total > 0
    # As JSON (`tt stats --json`): runs of sessions per process, their totals combined.
    assert len(paths) > 2 * 8  # several runs per process
    dicts, total = many_stats_dicts(paths, workers=2)
    assert dicts == [s.to_dict() for s in one_each]
    assert total.to_dict() == one_total.to_dict()


def test_combine_keeps_the_first_turn_and_the_last_usage_of_a_shared_call() -> None:
    a, b = Ledger(), Ledger()
    a.add(("m", "r"), Call("x", Tokens(1, 1), 2, False))
    b.add(("m", "r"), Call("y", Tokens(5, 7), 9, True))
    b.add(("n", "r"), Call("y", Tokens(1, 0), 1, False))
    a.merge(b)
    assert a.real == {
        ("m", "r"): Call("y", Tokens(5, 7), 2, True),
        ("n", "r"): Call("y", Tokens(1, 0), 1, False),
    }


def test_tokens_add_field_by_field() -> None:
    assert Tokens(1, 2, 3, 4, 1) + Tokens(10, 20, 30, 40, 10) == Tokens(11, 22, 33, 44, 11)
    assert Tokens.from_usage(
        {"input_tokens": True, "output_tokens": 3, "cache_creation_input_tokens": "9"}
    ) == Tokens(0, 3, 0, 0, 0)


def _edge_lines() -> list[bytes]:
    """Lines on which the fast decoder (msgspec, `files_usage._FAST`) and orjson could
    disagree: values orjson refuses in fields stats skips, numbers past 64 bits, repeated
    keys, types Claude Code never writes, deep nesting. Each counts as a call or an error."""

    def call(n: int, patch: tuple[bytes, bytes] | None = None, **usage: object) -> bytes:
        u = {
            "input_tokens": 10,
            "output_tokens": 5,
            "cache_creation_input_tokens": 3,
            "cache_read_input_tokens": 2,
        }
        u.update(usage)  # type: ignore[arg-type]
        rec = {
            "parentUuid": None,
            "isSidechain": False,
            "type": "assistant",
            "uuid": f"edge-{n}",
            "timestamp": f"2026-01-01T00:00:{n:02d}.000Z",
            "requestId": f"req_edge{n}",
            "message": {
                "id": f"msg_edge{n}",
                "model": "claude-sonnet-4-5",
                "role": "assistant",
                "usage": u,
                "content": [
                    {"type": "tool_use", "id": f"toolu_edge{n}", "name": "Bash", "input": {"c": "INPUT"}}
                ],
            },
        }
        line = orjson.dumps(rec)
        if patch:
            line = line.replace(*patch)
        return line

    def result(n: int, patch: tuple[bytes, bytes]) -> bytes:
        rec = {
            "parentUuid": f"edge-{n}",
            "type": "user",
            "uuid": f"edge-r{n}",
            "timestamp": f"2026-01-01T00:01:{n:02d}.000Z",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"toolu_edge{n}",
                        "is_error": True,
                        "content": "OUT",
                    }
                ],
            },
        }
        return orjson.dumps(rec).replace(*patch)

    big, past_int64 = str(2**70).encode(), str(2**63 + 5).encode()
    deep = b"[" * 990 + b"]" * 990
    lines = [
        call(1, (b'"INPUT"', b'"\xff\xfe"')),  # invalid UTF-8 where stats does not read
        call(2, (b'"INPUT"', b"1e999")),  # past the float range, unread
        call(3, (b'"INPUT"', big)),  # past 64 bits, unread
        call(4, (b'"input_tokens":10', b'"input_tokens":' + big)),  # past 64 bits, read
        call(5, (b'"input_tokens":10', b'"input_tokens":' + past_int64)),  # past int64, read
        call(6, (b'"output_tokens":5', b'"output_tokens":5.0')),
        call(7, (b'"cache_read_input_tokens":2', b'"cache_read_input_tokens":true')),
        call(8, (b'"model":"claude-sonnet-4-5"', b'"model":"claude-opus-4-1","model":"claude-sonnet-4-5"')),
        call(9, (b'"requestId":"req_edge9"', b'"requestId":"req_edge9","requestId":7')),
        call(10, (b'"INPUT"', b'"\xff"},"x":' + big + b',"y":{"z":1')),  # both at once
        call(11, (b'"input_tokens":10', b'"input_tokens":' + big + b',"z":"\xff"')),
        call(12, (b'"isSidechain":false', b'"isSidechain":"yes"')),
        call(13, (b'"type":"tool_use"', b'"type":7')),
        call(14, (b'"INPUT"', deep)),
        call(15, (b'"INPUT"', b'"\\ud800"')),  # a lone surrogate escape
        call(16, (b'"content":[', b'"content":["text",')),
        call(17, (b'"message":{', b'"message":"m","message":{')),
        result(1, (b'"OUT"', b'"\xff\xfe"')),
        result(2, (b'"OUT"', b"1e999")),
        result(3, (b'"is_error":true', b'"is_error":true,"is_error":false')),
        result(4, (b'"is_error":true', b'"is_error":"true"')),
        b'{"type":"system","subtype":"turn_duration","durationMs":1.5,"timestamp":"2026-01-01T00:02:00.000Z"}',
        b'{"type":"system","subtype":"turn_duration","durationMs":'
        + big
        + b',"timestamp":"2026-01-01T00:02:01.000Z"}',
        b'{"type":"progress","data":{"type":"agent_progress","message":{"type":"assistant","requestId":"req_p",'
        b'"message":{"id":"msg_p","model":"claude-haiku-4-5","usage":{"input_tokens":4,"output_tokens":1},'
        b'"content":[{"type":"text","text":"\xff"}]}}},"timestamp":"2026-01-01T00:02:02.000Z"}',
        b'{"type":"progress","data":{"type":"hook_progress","message":"a string"},"timestamp":"2026-01-01T00:02:03.000Z"}',
        b'{"type":5,"timestamp":"2026-01-01T00:02:04.000Z"}',
    ]
    # Every field the collector reads, each with a value that changes a number: a field
    # the fast decoder left out would read as absent and change it.
    ts = '"timestamp":"2026-01-01T00:03:00.000Z"'
    for extra in (
        '"message":{"role":"user","content":"a prompt"}',
        '"promptSource":"system","message":{"role":"user","content":"a notification"}',
        '"isMeta":true,"message":{"role":"user","content":"caveat"}',
        '"isVisibleInTranscriptOnly":true,"message":{"role":"user","content":"shown"}',
        '"isCompactSummary":true,"parentUuid":null,"message":{"role":"user","content":"summary"}',
        '"message":{"role":"user","content":[{"type":"text","text":"<command-name>/x</command-name>"}]}',
        '"message":{"role":"user","content":[{"type":"image","source":{}}]}',
        '"message":{"role":"user","content":[{"type":"text","text":"a prompt in a list"}]}',
        '"isSidechain":true,"message":{"role":"user","content":"side prompt"}',
    ):
        lines.append(f'{{"type":"user",{ts},{extra}}}'.encode())
    for extra in (
        '"subtype":"compact_boundary"',
        '"subtype":"microcompact_boundary"',
        '"subtype":"api_error"',
        '"subtype":"turn_duration","durationMs":1500',
        '"subtype":"turn_duration","durationMs":1',
        '"subtype":"turn_duration","durationMs":0',
        '"subtype":"turn_duration","durationMs":-7',
        '"subtype":"turn_duration","isSidechain":true,"durationMs":40',
        '"subtype":"compact_boundary","isSidechain":true',
        '"subtype":"microcompact_boundary","isSidechain":true',
    ):
        lines.append(f'{{"type":"system",{ts},{extra}}}'.encode())
    for n, extra in (
        (20, '"isApiErrorMessage":true,'),
        (21, '"isSidechain":true,'),
    ):
        lines.append(call(n, (b'"type":"assistant",', b'"type":"assistant",' + extra.encode())))
    lines.append(call(22, (b'"model":"claude-sonnet-4-5"', b'"model":"<synthetic>"')))
    lines.append(call(23, speed="fast"))
    lines.append(call(24, cache_creation={"ephemeral_1h_input_tokens": 7, "ephemeral_5m_input_tokens": 9}))
    lines.append(call(25, (b'"id":"msg_edge25",', b"")))  # no message id: counted each time
    lines.append(result(30, (b'"OUT"', b'"the result before its call"')))  # out of order
    lines.append(call(30))
    lines.append(call(26))  # one message id, two requests: two calls
    lines.append(call(26, (b'"requestId":"req_edge26"', b'"requestId":"req_edge26b"')))
    return lines


def test_fast_decoder_gives_the_numbers_of_the_common_reader_on_edge_lines(tmp_path: Path) -> None:
    from transcript_tools.catalog import files_usage

    lines = _edge_lines()
    assert files_usage._FAST is not None  # msgspec is a dependency: the fast decoder is on
    # The cases are real: msgspec takes lines orjson refuses, and refuses lines orjson takes.
    refused_by_orjson = 0
    for line in lines:
        try:
            orjson.loads(line)
        except orjson.JSONDecodeError:
            try:
                files_usage._FAST(line)
                refused_by_orjson += 1
            except files_usage._FastError:
                pass
    assert refused_by_orjson >= 4
    p = tmp_path / "p" / S332.name
    p.parent.mkdir()
    p.write_bytes(S332.read_bytes() + b"\n".join(lines) + b"\n")
    got = session_stats(p).to_dict()
    assert got == _slow_session_stats(p)
    assert got["totals"]["calls"] > 0 and got["errors"]["tool_errors"] >= 2


def test_without_msgspec_the_numbers_are_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from transcript_tools.catalog import files_usage

    p = tmp_path / "p" / S332.name
    p.parent.mkdir()
    p.write_bytes(S332.read_bytes() + b"\n".join(_edge_lines()) + b"\n")
    fast = session_stats(p).to_dict()
    monkeypatch.setattr(files_usage, "_FAST", None)
    assert session_stats(p).to_dict() == fast


def test_finding_sessions_without_api_calls_say_so_rather_than_an_empty_table(tmp_path: Path) -> None:
    """New-user pass: `tt stats -p DIR` over sessions with a prompt and no response yet
    printed the model table's header with no row; one session says "no API calls recorded"."""
    from tests.resume_helpers import SESSION, Builder
    from tests.support.cli import tt

    project = tmp_path / "cfg" / "projects" / "-home-u-p"
    for k in (1, 2):
        b = Builder()
        b.user(f"a prompt, no response yet {k}")
        sid = f"00000000-0000-4000-8000-00000000000{k}"
        path = b.write(project / f"{sid}.jsonl")
        path.write_bytes(path.read_bytes().replace(SESSION.encode(), sid.encode()))
    r = tt("stats", "-p", str(project), config=tmp_path / "cfg", width=120)
    assert r.returncode == 0, r.stderr
    assert "total of 2 session(s)" in r.stdout and "no API calls recorded" in r.stdout
    assert "input" not in r.stdout.split("total of 2 session(s)")[1]  # no model table header
