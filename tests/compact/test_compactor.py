"""compactor: compacting real files end to end — the output validates and resumes with
the last messages verbatim, the input is untouched (or, with --in-place, kept as a prefix
and backed up), damaged input goes through the repair fixes, and a file well past the
in-memory cap compacts in bounded memory."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.damage import KINDS
from tests.support.paths import REAL, ROOT
from transcript_tools.compact.files import Target, compact_file, exact_after
from transcript_tools.compact.plan import PlanOptions
from transcript_tools.compact.skeleton import Skeleton
from transcript_tools.compact.summarizers import Extractive, Material
from transcript_tools.edge.loader import load_session
from transcript_tools.edge.writer import dumps
from transcript_tools.model.conversation import api_messages, build
from transcript_tools.model.errors import FileChanged, NotFound, UsageError
from transcript_tools.model.lines import Entry
from transcript_tools.model.session import Session
from transcript_tools.validate.files import validate_path

SID = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
CLEAN_332 = REAL / "claude-config-2.1.332" / "projects" / "-home-dev-demo-app" / f"{SID}.jsonl"
PARALLEL = REAL / "v2.1.237-attachments-chained-parallel-tools.jsonl"
TOOL_HEAVY = REAL / "v2.1.38-tool-heavy.jsonl"
NOW = "2026-11-30T12:00:00.000Z"


def ids() -> Callable[[], str]:
    c = itertools.count(1)
    return lambda: f"00000000-0000-4000-8000-{next(c):012d}"


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def copy(src: Path, tmp: Path, name: str | None = None) -> Path:
    d = tmp / "project"
    d.mkdir(exist_ok=True)
    dst = d / (name or src.name)
    shutil.copyfile(src, dst)
    return dst


def run(path: Path, mode: str = "new", keep_tokens: int = 1500, **kw: Any) -> Any:
    target = kw.pop("target", None) or Target(mode)
    # The fixtures' conversations are small: their summaries make the request grow, and
    # these tests are about the form (tests/compact/test_compact_budget.py: the refusal).
    kw.setdefault("even_if_larger", True)
    return compact_file(
        path,
        Extractive(),
        target,
        PlanOptions(keep_tokens=keep_tokens, prune=kw.pop("prune", frozenset())),
        now=lambda: NOW,
        new_id=ids(),
        **kw,
    )


def messages(path: Path, **kw: Any) -> list[dict[str, Any]]:
    return build(load_session(path, **kw).session, sentinel=False).messages


def output_messages(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    entries = [Entry(k + 1, 0, dumps(r), r) for k, r in enumerate(records)]
    return api_messages(Session.from_entries(entries).conversation(), sentinel=False)[0]


def blocks(msgs: list[dict[str, Any]]) -> list[str]:
    out = []
    for m in msgs:
        c = m["content"]
        for b in [{"type": "text", "text": c}] if isinstance(c, str) else c:
            out.append(json.dumps(b, sort_keys=True))
    return out


def test_new_session_in_the_project_folder(tmp_path: Path) -> None:
    src = copy(CLEAN_332, tmp_path, f"{SID}.jsonl")
    before = sha(src)
    r = run(src)
    assert sha(src) == before
    assert r.output is not None and r.output.parent == src.parent
    assert r.output.name == f"{r.new_session_id}.jsonl" and r.new_session_id != SID
    report = validate_path(r.output)
    assert report.errors == 0 and report.warnings == 0, [d.code for d in report.diagnostics]
    lines = [json.loads(x) for x in r.output.read_text().splitlines()]
    assert lines == r.records
    assert lines[0]["subtype"] == "compact_boundary" and lines[1]["isCompactSummary"] is True
    assert {x.get("sessionId") for x in lines if "sessionId" in x} == {r.new_session_id}
    assert lines[-1] == {
        "type": "custom-title",
        "customTitle": "Project kickoff 13000: we work on app.py (compacted)",
        "sessionId": r.new_session_id,
    }
    assert r.bytes_after == r.output.stat().st_size < r.bytes_before
    # The fixture's conversation is small (its bytes are mostly attachment records, which
    # a resume never sends): the summary makes the request grow, the file shrinks.
    assert r.kept_tokens <= 1500
    # tt resume continues it: the summary, the first request, then the original's last
    # messages verbatim.
    got = messages(r.output)
    want = messages(src)
    assert got[0]["role"] == "user"
    first = blocks(got[:1])
    assert (
        first[0].startswith('{"text": "This session is being continued')
        and "Project kickoff 13000" in first[1]
    )
    tail = blocks(got)[2:]
    assert tail == blocks(want)[-len(tail) :] and len(tail) >= 4


def test_report_shape(tmp_path: Path) -> None:
    r = run(copy(CLEAN_332, tmp_path), mode="dry-run")
    d = r.to_dict()
    assert set(d) >= {
        "source",
        "mode",
        "output",
        "summarizer",
        "tokens",
        "bytes",
        "messages",
        "prune",
        "damage",
        "notes",
    }
    assert d["tokens"]["estimate"] is True and "estimates" in d["tokens"]["note"]
    assert d["messages"]["summarised"] > 0 and d["messages"]["kept"] > 0
    assert d["messages"]["key"] == ["f4c86b1a-e3df-4fec-a7e9-9410414aebef"]
    assert d["summarizer"] == "extractive" and d["output"] is None
    assert d["tokens"]["last_reported_by_api"] == 14336


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    src = copy(CLEAN_332, tmp_path)
    listing = sorted(os.listdir(src.parent))
    before = sha(src)
    r = run(src, mode="dry-run")
    assert sorted(os.listdir(src.parent)) == listing and sha(src) == before
    assert r.records and r.bytes_after == sum(len(dumps(x)) + 1 for x in r.records)


def test_output_to_a_path_or_a_directory(tmp_path: Path) -> None:
    src = copy(CLEAN_332, tmp_path)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    r = run(src, target=Target("new", out_dir))
    assert r.output is not None and r.output.parent == out_dir
    named = tmp_path / "11111111-2222-4333-8444-555555555555.jsonl"
    r = run(src, target=Target("new", named))
    assert r.output == named and r.new_session_id == named.stem
    assert {json.loads(x).get("sessionId") for x in named.read_text().splitlines()} == {named.stem}
    with pytest.raises(Exception, match="already exists"):
        run(src, target=Target("new", named))


def test_in_place_appends_atomically_with_a_backup(tmp_path: Path) -> None:
    src = copy(CLEAN_332, tmp_path, f"{SID}.jsonl")
    original = src.read_bytes()
    r = run(src, mode="in-place")
    assert r.backup is not None and r.backup.read_bytes() == original
    data = src.read_bytes()
    assert data.startswith(original)
    appended = [json.loads(x) for x in data[len(original) :].splitlines()]
    assert appended == r.records
    assert appended[0]["logicalParentUuid"] == "28d732d7-e61d-4550-983f-817037154a99"  # the leaf before
    assert {x.get("sessionId") for x in appended} == {SID}
    report = validate_path(src)
    assert report.errors == 0, [d.code for d in report.diagnostics]
    # The copies, not the originals, are what a resume continues from.
    sk = Skeleton()
    from transcript_tools.edge.reader import iter_lines

    for ln in iter_lines(src):
        sk.feed_line(ln)
    sk.finish()
    assert [sk.index.uuid(i) for i in sk.conversation()] == [x["uuid"] for x in appended if "uuid" in x]
    # And tt can load just the compacted part of a big file.
    loaded = load_session(src, max_bytes=len(data) - len(original) + 10, from_last_boundary=True)
    assert loaded.start == len(original)


def test_in_place_resumes_without_duplicates_in_tt(tmp_path: Path) -> None:
    src = copy(CLEAN_332, tmp_path, f"{SID}.jsonl")
    r = run(src, mode="in-place")
    assert blocks(messages(src)) == blocks(output_messages(r.records))


def test_in_place_after_a_torn_tail_starts_on_a_new_line(tmp_path: Path) -> None:
    d = KINDS["torn-tail"](CLEAN_332.read_bytes())
    src = tmp_path / f"{SID}.jsonl"
    src.write_bytes(d.data)
    r = run(src, mode="in-place", keep_tokens=800)
    data = src.read_bytes()
    assert data.startswith(d.data + b"\n")
    assert [json.loads(x) for x in data[len(d.data) + 1 :].splitlines()] == r.records
    assert any("tt repair" in n for n in r.notes)
    codes = {x.code for x in validate_path(src).diagnostics}
    assert "truncated-record" in codes or "torn-tail" in codes  # the old damage, now mid-file


def test_in_place_refuses_when_the_file_changes_meanwhile(tmp_path: Path) -> None:
    src = copy(CLEAN_332, tmp_path, f"{SID}.jsonl")

    class Appending(Extractive):
        def summarize(self, material: Material) -> str:
            with open(src, "ab") as f:  # Claude Code writes a line while we summarise
                f.write(b'{"type":"mode","mode":"normal","sessionId":"' + SID.encode() + b'"}\n')
            return super().summarize(material)

    with_line = None
    with pytest.raises(FileChanged):
        compact_file(
            src,
            Appending(),
            Target("in-place"),
            PlanOptions(keep_tokens=1500),
            now=lambda: NOW,
            new_id=ids(),
            even_if_larger=True,
        )
    with_line = src.read_bytes()
    assert with_line.endswith(b'"mode":"normal","sessionId":"' + SID.encode() + b'"}\n')
    assert not list(src.parent.glob("*.bak"))
    assert not list(src.parent.glob(".*.tt-tmp"))


def test_keep_uuid(tmp_path: Path) -> None:
    src = copy(CLEAN_332, tmp_path)
    before_boundary = (
        "d17d6cbc-9166-49fd-9417-9de56e980fad"  # "TOOL:Read app.py": history behind the CC boundary
    )
    with pytest.raises(UsageError, match="not on the conversation"):
        run(src, keep=[before_boundary])
    with pytest.raises(NotFound):
        run(src, keep=["00000000-0000-4000-8000-000000000000"])
    # The preserved answer right after Claude Code's own summary is summarised by default...
    preserved = "ff44c48a-10bc-4e6a-8229-9e9c8bf05269"
    plain = run(src, mode="dry-run", keep_tokens=300)
    assert not any("ACK n=30 last=" in json.dumps(x.get("message")) for x in plain.records[2:])
    # ... and kept verbatim when asked.
    r = run(src, mode="dry-run", keep_tokens=300, keep=[preserved])
    assert preserved in r.key
    kept = [x for x in r.records[2:] if "uuid" in x]
    assert kept[0]["message"]["content"] == "Project kickoff 13000: we work on app.py"
    assert kept[1]["message"]["content"] == [{"type": "text", "text": "ACK n=30 last="}]


def test_nothing_to_do(tmp_path: Path) -> None:
    src = copy(TOOL_HEAVY, tmp_path)
    listing = sorted(os.listdir(src.parent))
    r = run(src, keep_tokens=10_000_000)
    assert r.nothing_to_do and r.output is None and not r.records
    assert sorted(os.listdir(src.parent)) == listing


def test_streaming_and_in_memory_agree_on_clean_files(tmp_path: Path) -> None:
    for path in (CLEAN_332, PARALLEL, TOOL_HEAVY):
        a = run(path, mode="dry-run", in_memory=False)
        b = run(path, mode="dry-run", in_memory=True)
        assert a.records == b.records, path.name
        assert (a.tokens_before, a.tokens_after, a.summarised, a.kept) == (
            b.tokens_before,
            b.tokens_after,
            b.summarised,
            b.kept,
        )


@pytest.mark.parametrize(
    "kind",
    [
        "torn-tail",
        "fused-records",
        "nul-run",
        "garbage",
        "invalid-utf8",
        "duplicate-uuid",
        "dangling-parent",
        "tool-use-unpaired",
    ],
)
def test_damaged_input_is_read_through_the_repair_fixes(tmp_path: Path, kind: str) -> None:
    d = KINDS[kind](CLEAN_332.read_bytes())
    src = tmp_path / f"{SID}.jsonl"
    src.write_bytes(d.data)
    r = run(src, keep_tokens=800)
    assert src.read_bytes() == d.data
    assert r.repaired
    report = validate_path(r.output)
    assert report.errors == 0, [(x.code, x.message) for x in report.diagnostics]


def test_damage_past_the_cap_is_skipped_and_said(tmp_path: Path) -> None:
    d = KINDS["fused-records"](CLEAN_332.read_bytes())
    src = tmp_path / f"{SID}.jsonl"
    src.write_bytes(d.data)
    r = run(src, keep_tokens=150, max_bytes=1000)
    assert not r.repaired and r.damage_pieces >= 1
    assert any("skipped" in n and "tt repair" in n for n in r.notes)
    assert validate_path(r.output).errors == 0


def test_prune_reports_what_each_kind_saved(tmp_path: Path) -> None:
    plain = run(PARALLEL, mode="dry-run", keep_tokens=8_000)
    pruned = run(
        PARALLEL, mode="dry-run", keep_tokens=8_000, prune=frozenset({"tool-output", "images", "thinking"})
    )
    assert pruned.prune and set(pruned.prune) <= {"tool-output", "images", "thinking"}
    for kind, d in pruned.prune.items():
        assert d["blocks"] > 0 and d["bytes"] > 0, kind
        # 2.1.2xx stores thinking as signature-only blocks: bytes, no text
        assert d["tokens"] > 0 or kind == "thinking", kind
    assert pruned.kept_tokens_unpruned - pruned.kept_tokens == sum(d["tokens"] for d in pruned.prune.values())
    assert pruned.kept >= plain.kept
    out = tmp_path / "11111111-2222-4333-8444-555555555555.jsonl"
    r = run(
        PARALLEL, keep_tokens=8_000, prune=frozenset({"tool-output", "images"}), target=Target("new", out)
    )
    assert validate_path(out).errors == 0
    # The last response is never pruned: the output ends like the original.
    assert blocks(output_messages(r.records))[-3:] == blocks(messages(PARALLEL))[-3:]


def test_exact_count_through_the_api(standin: Any, tmp_path: Path) -> None:
    from transcript_tools.edge.client import AnthropicClient, Credentials

    r = run(CLEAN_332, mode="dry-run")
    with AnthropicClient(Credentials("k", None, standin.base_url), max_retries=0) as client:
        n = exact_after(r, client, "claude-standin-1")
    assert n > 0
    [req] = [x for x in standin.requests if x.path == "/v1/messages/count_tokens"]
    assert req.body["messages"] == output_messages(r.records)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 6000))
def test_compact_keeps_the_tail(tmp_path: Path, budget: int) -> None:
    """Whatever the budget: the kept tail is copied verbatim, is a suffix of what a resume
    sent before, and fits the budget unless the last response alone does not."""
    r = run(TOOL_HEAVY, mode="dry-run", keep_tokens=budget)
    if r.nothing_to_do:
        return
    conv = Session.from_entries(load_session(TOOL_HEAVY).session.entries).conversation()
    pos = [e.uuid for e in conv].index(r.tail_first)
    tail = [e for e in conv[pos:] if e.type != "progress"]
    original_tail = blocks(api_messages(tail, sentinel=False)[0])
    copies = [x for x in r.records[2:] if "uuid" in x][-len(tail) :]
    assert blocks(output_messages(copies)) == original_tail
    assert original_tail == blocks(messages(TOOL_HEAVY))[-len(original_tail) :]
    assert r.kept_tokens <= budget or r.over_budget


# --- scale: a file well past the in-memory cap ------------------------------------------


def _grow(src: Path, out: Path, mb: int) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "grow.py"), str(src), str(out), "--mb", str(mb)],
        check=True,
        capture_output=True,
        timeout=600,
    )


_MEASURE = """
import json, resource, sys
from pathlib import Path
from transcript_tools.compact.plan import PlanOptions
from transcript_tools.compact.files import Target, compact_file
from transcript_tools.compact.summarizers import Extractive
r = compact_file(Path(sys.argv[1]), Extractive(), Target("new", Path(sys.argv[2])), PlanOptions())
# The peak of this process's own memory: VmHWM starts anew at exec, while ru_maxrss keeps the
# peak of the forked parent (a test run hundreds of MB large) on Linux.
status = Path("/proc/self/status")
hwm = [int(x.split()[1]) for x in status.read_text().splitlines() if x.startswith("VmHWM:")] if status.exists() else []
print(json.dumps({"maxrss_kb": hwm[0] if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "seconds": r.seconds,
                  "output": str(r.output), "tokens_before": r.tokens_before, "kept": r.kept, "summarised": r.summarised}))
"""


def _measure(src: Path, out_dir: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(src), str(out_dir)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_file_past_the_cap_compacts_in_bounded_memory(tmp_path: Path) -> None:
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    _grow(TOOL_HEAVY, small, 30)
    _grow(TOOL_HEAVY, big, 121)
    assert big.stat().st_size > 120 * 2**20
    out = tmp_path / "out"
    out.mkdir()
    m_small = _measure(small, out)
    m_big = _measure(big, out)
    # Peak memory grows with the number of entries (the outline, ~130 bytes each), not
    # with the bytes: 4x the file, < +60 MB. The fixed part is mostly tiktoken's BPE
    # tables (~150 MB resident once loaded), so the absolute bound is loose on purpose.
    assert m_big["maxrss_kb"] < 320 * 1024, m_big
    assert m_big["maxrss_kb"] - m_small["maxrss_kb"] < 60 * 1024, (m_small, m_big)
    assert m_big["summarised"] > 4 * m_small["summarised"] * 0.9
    report = validate_path(Path(m_big["output"]))
    assert report.errors == 0
    assert Path(m_big["output"]).stat().st_size < 2 * 2**20


def test_a_title_from_the_first_request_ends_on_a_whole_word() -> None:
    from transcript_tools.compact.files import title_words

    text = "Please refactor the parser module so that it handles every edge case in this file properly"
    assert (
        title_words(text, 80)
        == "Please refactor the parser module so that it handles every edge case in this…"
    )
    assert title_words("  short\n request ", 80) == "short request"
    assert title_words("x" * 100, 10) == "xxxxxxxxx…"


def test_plan_and_summary_header_count_the_same_messages(tmp_path: Path) -> None:
    # Issue 18: the plan said "of 157 messages" and the summary "from 617 earlier
    # messages" (the second also counted the history behind earlier compactions). A real
    # 2.0.76 session with an earlier boundary: both now give the same two numbers.
    import re

    r = run(copy(REAL / "v2.0.76-compact-boundary-partial-copy.jsonl", tmp_path), mode="dry-run")
    m = r.to_dict()["messages"]
    head = r.summary.split("\n", 1)[0]
    said = re.match(
        r"\[Extractive summary written offline by tt compact of (\d+) earlier message\(s\) \(and (\d+) read for context",
        head,
    )
    assert said is not None, head
    assert (int(said[1]), int(said[2])) == (m["summarised"], m["read_for_context"])
    # What each counts: the summarised messages and the kept ones make the conversation;
    # the history before the earlier boundary is read for context only.
    assert m["summarised"] + m["kept"] == m["conversation"]
    assert m["read_for_context"] > 0


def test_finding_bytes_read_through_a_repair_are_not_called_part_of_the_file(tmp_path: Path) -> None:
    """New-user pass: "11.2 KiB file (11.9 KiB of it the conversation)" on a session cut on a
    tool call: the conversation measured is the one repaired in memory (an interrupted result
    added), which may be larger than the file; the line now says so."""
    from tests.support.cli import tt

    d = KINDS["tool-use-unpaired"](CLEAN_332.read_bytes())
    src = tmp_path / f"{SID}.jsonl"
    src.write_bytes(d.data)
    r = tt("compact", str(src), "--dry-run", "--keep-tokens", "300", "--even-if-larger", width=200)
    assert r.returncode == 0, r.stderr
    [line] = [ln for ln in r.stdout.splitlines() if ln.lstrip().startswith("bytes")]
    assert "the conversation, as repaired in memory)" in line and "of it the conversation" not in line
    clean = tt(
        "compact", str(CLEAN_332), "--dry-run", "--keep-tokens", "300", "--even-if-larger", width=200
    ).stdout
    assert "of it the conversation)" in clean


def test_finding_a_smaller_budget_is_not_advised_when_the_kept_messages_are_over_it(tmp_path: Path) -> None:
    """New-user pass: "a smaller --keep-tokens summarises more" right after "the kept messages
    (180 tokens) are over --keep-tokens 100": a smaller budget cannot help there. (Its other
    line, "no smaller than the 0 message(s) it would replace", now says that no message is
    left to summarise: seen on a public 2.1.280 session, not rebuilt here.)"""
    from tests.resume_helpers import SESSION, Builder, text

    b = Builder()
    b.user("first request")
    b.assistant(text("a short answer"))
    b.user("second request")
    b.assistant(text("the last response " * 40))
    src = b.write(tmp_path / f"{SESSION}.jsonl")
    r = run(src, mode="dry-run", keep_tokens=10, even_if_larger=False)
    assert r.over_budget and r.summarised == 2 and r.grows
    [note] = [n for n in r.notes if n.startswith("not compacted")]
    assert "a smaller --keep-tokens" not in note and note.endswith("(--even-if-larger writes it anyway)")
