"""`tt validate`'s core: pinned diagnostics on the real fixtures, one per damage kind."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import FIXTURES, REAL, ROOT
from transcript_tools.edge.reader import iter_lines, lines_of
from transcript_tools.model.active import NodeFacts
from transcript_tools.model.api_checks import api_findings
from transcript_tools.model.chain import ASSISTANT, USER, ChainIndex
from transcript_tools.model.diagnostics import CODES
from transcript_tools.validate.core import Validator
from transcript_tools.validate.files import validate_path

DAMAGED = FIXTURES / "damaged"

# Checked by hand once (fixtures/README.md says why each is true), then pinned:
# (code, line) of every line/chain/api diagnostic.
PINNED: dict[str, Counter[tuple[str, int | None]]] = {
    # The answer's line written again as a root (1.0.51): two roots, no boundary between.
    "v1.0.51-response-line-rewritten-as-root.jsonl": Counter(
        {("multiple-roots", 3): 1, ("no-final-newline", 5): 1}
    ),
    "v1.0.71-summaries-sdk-ends-mid-tool.jsonl": Counter(
        {("session-mismatch", 4): 1, ("tool-use-unpaired", 10): 1}
    ),
    "v2.0.76-compact-boundary-partial-copy.jsonl": Counter(
        {("no-final-newline", 54): 1, ("dangling-parent", 1): 1}
    ),
    "v2.1.14-microcompact-partial-copy.jsonl": Counter(
        {("no-final-newline", 236): 1, ("dangling-parent", 1): 1}
    ),
    "v2.1.17-agent-progress-ends-mid-tool.jsonl": Counter(
        {("no-final-newline", 158): 1, ("tool-use-unpaired", 130): 1}
    ),
    "v2.1.29-user-image-partial-copy.jsonl": Counter(
        {("no-final-newline", 468): 1, ("dangling-parent", 121): 1}
    ),
    "handwritten-edge-cases-not-object-lines.jsonl": Counter(
        {
            ("not-object", 13): 1,
            ("not-object", 15): 1,
            ("not-object", 16): 1,
            ("no-final-newline", 19): 1,
            ("duplicate-uuid", 12): 1,
            ("duplicate-uuid", 18): 1,
            ("dangling-parent", 17): 1,
            ("session-mismatch", 17): 1,
            # Every record is a root; the roots a model answered under are lines 2, 4, 9.
            ("multiple-roots", 4): 1,
            ("tool-use-unpaired", 17): 1,
        }
    ),
}
CLEAN = [
    "v1.0.51-inline-sidechains-two-compactions.jsonl",
    "v1.0.51-rejected-tool-interrupt.jsonl",
    "v2.0.28-project/-Users-zawakin-agent-sample/7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9.jsonl",
    "v2.0.28-project/-Users-zawakin-agent-sample/agent-0c4c3cf8.jsonl",
    "v2.1.38-tool-heavy.jsonl",
    "v2.1.237-attachments-chained-parallel-tools.jsonl",
    # Two roots: a /clear's own lines, then its SessionStart hook's; no model answered the first.
    "v2.1.266-clear-then-hook-root-excerpt.jsonl",
    "claude-config-2.1.197/projects/-home-dev-demo-app/8c2f9135-4610-4218-97b1-bc3e03643255.jsonl",
    "claude-config-2.1.197/projects/-home-dev-demo-app/8c2f9135-4610-4218-97b1-bc3e03643255/subagents/agent-a47ba7bd6eaff820d.jsonl",
    "claude-config-2.1.332/projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl",
    "claude-config-2.1.332/projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada/subagents/agent-a57f9afd470043d69.jsonl",
    # Its first records' parents are in the main file, as Claude Code 2.1.39 writes them.
    "handwritten-2.1.39-acompact-subagent/-home-USER-projects-spotter-worktrees-spotter-dov/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
    "handwritten-2.1.39-acompact-subagent/-home-USER-projects-spotter-worktrees-spotter-dov/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-acompact-e1f845.jsonl",
]


def found(path: Path) -> Counter[tuple[str, int | None]]:
    r = validate_path(path, schema=False)
    return Counter((d.code, d.line) for d in r.diagnostics)


@pytest.mark.parametrize("name", sorted(PINNED))
def test_real_fixture_diagnostics_are_pinned(name: str) -> None:
    assert found(REAL / name) == PINNED[name]


@pytest.mark.parametrize("name", CLEAN)
def test_clean_real_fixtures_have_no_findings(name: str) -> None:
    r = validate_path(REAL / name)
    assert r.diagnostics == [], [d.to_dict() for d in r.diagnostics]
    assert r.ok and r.entries > 0


def test_composite_fixture_reports_its_repeated_placeholder_uuids() -> None:
    # Values were replaced by "[trimmed for fixture]", uuids included: 44 records share one.
    c = found(REAL / "handwritten-2.1.80-2.1.220-trimmed-composite.jsonl")
    assert c[("cycle", 42)] == 1
    assert sum(n for (code, _), n in c.items() if code == "duplicate-uuid") == 44


@pytest.mark.parametrize(
    "name,expected",
    [
        ("torn-tail.jsonl", {("torn-tail", 211)}),
        ("nul-run.jsonl", {("nul-run", 65)}),
        ("dangling-parent.jsonl", {("dangling-parent", 124)}),
        # The torn record's child loses its parent: both are true.
        ("fused-records.jsonl", {("fused-records", 43), ("dangling-parent", 43)}),
        (
            "torn-tail+fused-records+nul-run+dangling-parent.jsonl",
            {
                ("fused-records", 43),
                ("dangling-parent", 43),
                ("nul-run", 64),
                ("torn-tail", 209),
                ("dangling-parent", 123),
            },
        ),
    ],
)
def test_damaged_fixture_gets_one_diagnostic_per_damage(name: str, expected: set[tuple[str, int]]) -> None:
    c = found(DAMAGED / name)
    assert set(c) == expected and all(n == 1 for n in c.values())


def test_every_diagnostic_code_is_documented_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    for code in CODES:
        assert f"`{code}`" in readme, code


# --- api_findings on hand-built chains -------------------------------------------------


def _chain(*nodes: tuple[str, NodeFacts]) -> tuple[ChainIndex, dict[int, NodeFacts], list[int]]:
    ix = ChainIndex()
    facts: dict[int, NodeFacts] = {}
    parent = None
    for n, (role, f) in enumerate(nodes):
        u = f"{n:08d}-0000-4000-8000-000000000000"
        i = ix.add(u, parent, n + 1, USER if role == "user" else ASSISTANT)
        facts[i] = f
        parent = u
    return ix, facts, list(range(len(nodes)))


def codes(*nodes: tuple[str, NodeFacts]) -> list[tuple[str, int]]:
    ix, facts, order = _chain(*nodes)
    return [(c, n) for c, n, _ in api_findings(ix, facts, order)]


def test_paired_calls_are_clean_including_chained_parallel_calls() -> None:
    assert (
        codes(
            ("user", NodeFacts(plain=True)),
            ("assistant", NodeFacts(message_id="m1", tool_uses=("a",))),
            ("user", NodeFacts(tool_results=("a",))),
            ("assistant", NodeFacts(message_id="m1", tool_uses=("b",))),
            ("user", NodeFacts(tool_results=("b",))),
            ("assistant", NodeFacts(message_id="m2", plain=True)),
        )
        == []
    )


def test_unpaired_call_orphan_result_and_split_message() -> None:
    assert codes(
        ("user", NodeFacts(plain=True)),
        ("assistant", NodeFacts(message_id="m1", tool_uses=("a",))),
        ("user", NodeFacts(plain=True)),
    ) == [("tool-use-unpaired", 1)]
    assert codes(
        ("user", NodeFacts(plain=True)),
        ("assistant", NodeFacts(message_id="m1", plain=True)),
        ("user", NodeFacts(tool_results=("zz",))),
    ) == [("tool-result-orphan", 2)]
    assert codes(
        ("user", NodeFacts(plain=True)),
        ("assistant", NodeFacts(message_id="m1", plain=True)),
        ("user", NodeFacts(plain=True)),
        ("assistant", NodeFacts(message_id="m1", plain=True)),
    ) == [("split-message-noncontiguous", 3)]


def test_empty_content_and_big_images() -> None:
    assert codes(("user", NodeFacts(empty=True))) == [("empty-content", 0)]
    assert codes(("user", NodeFacts(plain=True, big_images=1))) == [("image-too-large", 0)]


def test_request_size_is_judged_past_the_cap_too(monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 18: a 59 MB session (past the 50 MiB cap, no boundary to load from) validated
    # with 0 errors though its request is over the API's limit; only --max-bytes told.
    # The same, scaled down: a 3.4 MB real session, a 1 MiB cap and a 1 MB request limit.
    import transcript_tools.model.api_checks as api_checks
    import transcript_tools.validate.core as validate

    path = REAL / "v2.1.237-attachments-chained-parallel-tools.jsonl"
    monkeypatch.setattr(api_checks, "MAX_REQUEST_BYTES", 1_000_000)
    monkeypatch.setattr(validate, "MAX_REQUEST_BYTES", 1_000_000)
    full = validate_path(path, cap=10 * 2**20)
    past = validate_path(path, cap=2**20)
    # Issue 14: past the cap the part a resume sends (all of it: no boundary) is
    # read again for its facts, so the full check judges it, in the same words.
    assert full.api_checked and past.api_checked and past.past_cap and not full.past_cap
    said = [(d.code, d.message) for d in full.diagnostics if d.code == "request-too-large"]
    assert said == [(d.code, d.message) for d in past.diagnostics if d.code == "request-too-large"]
    assert said[0][1].startswith("the conversation is about 1.7 MB")
    assert past.errors >= 1
    # A caller that reads the file once (no second pass): the size alone, on the active
    # chain's message sizes, the same figure (this conversation has no preserved segment,
    # and its parallel calls are all on the chain).
    v = Validator(str(path), size=path.stat().st_size, cap=2**20, schema_check=None, expected_session=None)
    with lines_of(path) as f:
        v.feed_chunks(f)
    once = v.finish()
    assert not once.api_checked
    assert [d.message.split(" MB")[0] for d in once.diagnostics if d.code == "request-too-large"] == [
        "the conversation is about 1.7"
    ]
    # Under the limit, past the cap: no such error (the judgement is not a blanket one).
    monkeypatch.setattr(api_checks, "MAX_REQUEST_BYTES", path.stat().st_size)
    monkeypatch.setattr(validate, "MAX_REQUEST_BYTES", path.stat().st_size)
    assert "request-too-large" not in {d.code for d in validate_path(path, cap=2**20).diagnostics}


def test_inline_flags_are_node_flags() -> None:
    """`Validator._record` computes `chain.node_flags` inline: the same flags for every
    combination of the fields they read."""
    import itertools

    from transcript_tools.model.chain import node_flags
    from transcript_tools.validate.core import Validator

    values = {
        "type": ["user", "assistant", "system", "progress", "attachment"],
        "isSidechain": [True, False, None, "true", 1],
        "isMeta": [True, False, None, 1],
        "teamName": ["t", "", None],
        "subtype": ["compact_boundary", "local_command", None],
        "isCompactSummary": [True, False, 1],
    }
    n = 0
    for combo in itertools.product(*values.values()):
        rec = {k: v for k, v in zip(values, combo, strict=True) if v is not None}
        rec["uuid"] = f"00000000-0000-4000-8000-{n:012d}"
        v = Validator("x.jsonl", size=0, cap=1 << 30, schema_check=None, expected_session=None)
        v._record(rec, 1, 0, b"{}", 2)
        assert v.index.flags[0] == node_flags(rec), rec
        n += 1
    assert n == 5 * 5 * 4 * 3 * 3 * 3


def test_a_record_whose_type_is_not_a_string_is_a_schema_error_not_a_crash(tmp_path: Path) -> None:
    # Before: a list as `type` raised TypeError (unhashable) out of tt validate.
    p = tmp_path / "odd.jsonl"
    # (A third, ordinary record: a file of odd records alone is not a transcript at all.)
    p.write_bytes(
        b'{"type":["a"],"uuid":"x"}\n{"type":{"a":1},"uuid":"y"}\n'
        b'{"type":"custom-title","customTitle":"t","sessionId":"00000000-0000-0000-0000-000000000001"}\n'
    )
    report = validate_path(p)
    assert [(d.code, d.line) for d in report.diagnostics if d.code == "schema-invalid"] == [
        ("schema-invalid", 1),
        ("schema-invalid", 2),
    ]
    assert report.entries == 3


def test_a_duplicate_is_told_from_a_reused_uuid_by_the_bytes_read_back_as_by_the_hash(tmp_path: Path) -> None:
    """`validate_path` compares a duplicate uuid's record with the first one's bytes, read
    back from the file (`Validator` ``line_at``); without ``line_at`` (in-memory callers)
    a hash of every record decides: the two give the same codes, on whole lines, CRLF
    lines, fused records and a NUL-damaged copy alike."""
    from transcript_tools.edge.reader import iter_lines
    from transcript_tools.validate.core import Validator

    src = (REAL / "v2.1.38-tool-heavy.jsonl").read_bytes().split(b"\n")
    a, b, c, d = [line for line in src[:12] if b'"uuid":"' in line][:4]
    changed = c.replace(b'"timestamp":"', b'"timestamp":"1', 1)
    assert changed != c
    lines = [*src[:12], a, b + b"\r", changed, d[:40] + d, b[:5] + b"\x00" * 8 + b[5:]]
    path = tmp_path / "dups.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    by_file = [(x.code, x.line) for x in validate_path(path, schema=False).diagnostics]
    v = Validator(str(path), size=path.stat().st_size, cap=1 << 30, schema_check=None, expected_session=None)
    v.feed_all(iter_lines(path))
    by_hash = [(x.code, x.line) for x in v.finish().diagnostics]
    assert by_file == by_hash
    dups = [x for x in by_file if x[0].startswith("duplicate")]
    # The CRLF copy is the same record (the terminator is no part of it); the copy with
    # NULs inside is read without them, but its bytes differ from the first's.
    assert dups == [
        ("duplicate-line", 13),
        ("duplicate-line", 14),
        ("duplicate-uuid", 15),
        ("duplicate-line", 16),
        ("duplicate-uuid", 17),
    ]


def test_the_second_pass_takes_a_record_whose_type_is_not_a_string() -> None:
    # Found by a reviewer: the facts pass past the cap asked `type in CHAIN_TYPES` of a list.
    from transcript_tools.model.lines import decode_line
    from transcript_tools.validate.core import Validator

    v = Validator("x.jsonl", size=1, cap=1, schema_check=None, expected_session=None)
    odd = [b'{"type":["a"],"uuid":"x"}', b'{"type":{"a":1},"uuid":"y"}', b'{"type":"user","uuid":"z"}']
    v.feed_facts([decode_line(n, 0, raw, b"\n", is_last=False) for n, raw in enumerate(odd, 1)])
    assert v.facts == {}


def _validator_of(path: Path, line_at: Any) -> Validator:
    from transcript_tools.validate.files import new_validator

    return new_validator(path, path.stat().st_size, cap=1 << 30, schema=True, line_at=line_at)


def test_the_hot_loop_reports_what_the_decoded_lines_report(tmp_path: Path) -> None:
    # `feed_chunks` takes the common line whole (decoded with its newline, no `Entry`);
    # `feed_all` takes every line through `decode_line`, as every reader of tt does. Same
    # report on every real and damaged fixture, and on a real session with each kind of
    # damage (crash damage, the API's rules, CRLF, a BOM, a last line without newline).
    from tests import damage

    src = (
        REAL / "claude-config-2.1.332/projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
    ).read_bytes()
    paths = sorted(REAL.rglob("*.jsonl")) + sorted(DAMAGED.glob("*.jsonl"))
    for name, fn in {**damage.KINDS, **damage.API_KINDS}.items():
        try:
            data = fn(src).data
        except ValueError:  # a shape this session has no room for (split-message-noncontiguous)
            continue
        p = tmp_path / f"{name}.jsonl"
        p.write_bytes(data)
        paths.append(p)
    p = tmp_path / "no-final-newline.jsonl"
    p.write_bytes(src.rstrip(b"\n"))
    paths.append(p)
    # A big line with a toolUseResult whose message nests deeper than orjson writes (its
    # size is measured by writing the message back): read, measured, no traceback.
    lines = src.splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if b'"toolUseResult"' in ln)
    deep = b"[" * 1010 + b"]" * 1010 + b',"' + b"x" * 3000 + b'"'
    grown = lines[at].replace(b'"content":', b'"odd":[' + deep + b'],"content":', 1)
    assert grown != lines[at] and len(grown) > 4096
    p = tmp_path / "deep-message.jsonl"
    p.write_bytes(b"".join([*lines[:at], grown, *lines[at + 1 :]]))
    paths.append(p)
    assert len(paths) > 50
    from transcript_tools.validate.files import _BytesAt

    for path in paths:
        for line_at in (None, _BytesAt(path)):  # duplicates told by a hash, or by bytes read back
            fast = _validator_of(path, line_at)
            with lines_of(path) as f:
                fast.feed_chunks(f)
            slow = _validator_of(path, line_at)
            slow.feed_all(iter_lines(path))
            # Each message's size too (the request-size check's), which no report shows exactly.
            assert [(i, f.size) for i, f in fast.facts.items()] == [
                (i, f.size) for i, f in slow.facts.items()
            ]
            assert fast.finish().to_dict() == slow.finish().to_dict(), path


def test_multiple_roots_counts_the_root_a_resume_continues_even_unanswered(tmp_path: Path) -> None:
    # Review of round 8: counting only roots a model answered under dropped the warning for
    # an unanswered prompt written as a new root, whose resume sends none of the history
    # before it. The /clear shape (fixture v2.1.266-clear-then-hook-root-excerpt) stays clean.
    from tests.resume_helpers import SESSION, Builder, text

    b = Builder()
    b.user("p1")
    b.assistant(text("a1"))
    b.user("p2 written as a new root", parent=None)
    path = b.write(tmp_path / f"{SESSION}.jsonl")
    assert found(path) == Counter({("multiple-roots", 3): 1})
