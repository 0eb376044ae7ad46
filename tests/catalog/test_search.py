"""`search`: the matcher, its raw-bytes prefilter, and streaming search over real files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import damage
from tests.support.paths import REAL
from transcript_tools.catalog.files import search_files
from transcript_tools.catalog.search import (
    Hit,
    SkippedLine,
    make_matcher,
    record_hits,
    search_lines,
    texts_of,
)
from transcript_tools.edge.reader import iter_lines, iter_raw
from transcript_tools.edge.writer import dumps

FILES = sorted(p for p in REAL.rglob("*.jsonl"))


def brute_force(path: Path, pattern: str, **kw: object) -> list[tuple[int, str, str]]:
    """Every hit, found by parsing every line (no prefilter)."""
    m = make_matcher(pattern, **kw)  # type: ignore[arg-type]
    return [
        (h.line, h.kind, h.text)
        for ln in iter_lines(path)
        for e in ln.entries
        for h in record_hits(e.record, ln.line, m)
    ]


def streamed(path: Path, pattern: str, **kw: object) -> list[tuple[int, str, str]]:
    m = make_matcher(pattern, **kw)  # type: ignore[arg-type]
    return [(h.line, h.kind, h.text) for h in search_lines(iter_raw(path), m) if isinstance(h, Hit)]


@pytest.mark.parametrize("pattern", ["the", "Read", '"', "\\n", "é", "→", "tool", "ACK n="])
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:36])
def test_prefilter_never_drops_a_hit(path: Path, pattern: str) -> None:
    assert streamed(path, pattern) == brute_force(path, pattern)


def test_regex_and_case() -> None:
    path = REAL / "v2.1.38-tool-heavy.jsonl"
    assert streamed(path, r"phoenix\s+in", regex=True) == brute_force(path, r"phoenix\s+in", regex=True)
    assert streamed(path, r"phoenix\s+in", regex=True)
    lower = streamed(path, "phoenix")
    upper = streamed(path, "PHOENIX")  # a capital: case-sensitive
    assert lower and not upper
    assert streamed(path, "PHOENIX", case="insensitive") == lower
    with pytest.raises(ValueError):
        make_matcher("(", regex=True)
    with pytest.raises(ValueError):
        make_matcher("")


TEXT = st.text(alphabet=st.sampled_from(list('ab"\\\n\té→ XY{}:/')), max_size=30)


@settings(max_examples=500, deadline=None)
@given(TEXT, TEXT)
def test_a_literal_in_a_text_is_in_the_line_written_as_claude_code_writes(text: str, pattern: str) -> None:
    if not pattern:
        return
    rec = {"type": "user", "uuid": "u", "message": {"role": "user", "content": text}}
    raw = dumps(rec)  # JSON.stringify's form
    for case in ("smart", "sensitive", "insensitive"):
        m = make_matcher(pattern, case=case)
        if m.spans(text):
            assert m.may_match(raw)


TEXT_WIDE = st.text(alphabet=st.sampled_from(list('ab"\\\n/éÉßЖ😀 XY')), max_size=20)


@settings(max_examples=500, deadline=None)
@given(TEXT_WIDE, TEXT_WIDE)
def test_a_literal_in_a_text_is_in_the_line_written_with_other_writers_escapes(
    text: str, pattern: str
) -> None:
    """Other tools write ``\\u00e9`` (either case of hex) for non-ASCII characters and ``\\/``
    for ``/`` (Python's json.dumps, for one): the prefilter keeps those lines too."""
    if not pattern:
        return
    rec = {"type": "user", "uuid": "u", "message": {"role": "user", "content": text}}
    ascii_form = json.dumps(rec)  # \\uXXXX escapes, lowercase hex
    forms = [
        ascii_form.encode(),
        re.sub(r"\\u([0-9a-f]{4})", lambda m: "\\u" + m.group(1).upper(), ascii_form).encode(),
        json.dumps(rec, ensure_ascii=False).replace("/", "\\/").encode(),
    ]
    for case in ("smart", "sensitive", "insensitive"):
        m = make_matcher(pattern, case=case)
        if m.spans(text):
            for raw in forms:
                assert json.loads(raw) == rec and m.may_match(raw), raw


def test_a_capital_pattern_finds_text_that_other_writers_escaped(tmp_path: Path) -> None:
    """A new user's file written with ``\\u00e9`` and ``\\/`` escapes: `Café` and `src/App.py`
    (case-sensitive: a capital) were found in the files only when the bytes held them as is."""
    p = tmp_path / "s.jsonl"
    recs = [
        {"type": "user", "uuid": f"u{i}", "message": {"role": "user", "content": t}}
        for i, t in enumerate(["Café au lait", "see src/App.py", "Zoë 😀"])
    ]
    p.write_bytes(b"".join(json.dumps(r).replace("/", "\\/").encode() + b"\n" for r in recs))
    assert b"Caf\\u00e9" in p.read_bytes() and b"src\\/App" in p.read_bytes()
    for pattern, line in (("Café", 1), ("src/App.py", 2), ("Zoë 😀", 3)):
        assert [h[0] for h in streamed(p, pattern)] == [line] == [h[0] for h in brute_force(p, pattern)]


def test_texts_of_a_record_cover_prompts_replies_thinking_tools() -> None:
    kinds = set()
    for path in (
        REAL / "v1.0.51-inline-sidechains-two-compactions.jsonl",
        REAL / "v2.1.237-attachments-chained-parallel-tools.jsonl",
    ):
        for ln in iter_lines(path):
            for e in ln.entries:
                kinds.update(k for k, _, _ in texts_of(e.record))
    assert {"user", "assistant", "thinking", "tool_input", "tool_output", "summary"} <= kinds


def test_snippet_marks_the_match() -> None:
    m = make_matcher("needle")
    rec = {
        "type": "assistant",
        "message": {"content": [{"type": "text", "text": "x" * 200 + " needle\nhere " + "y" * 200}]},
    }
    (h,) = list(record_hits(rec, 1, m))
    snip, spans = h.snippet()
    assert "\n" not in snip and snip.startswith("…") and snip.endswith("…")
    ((a, b),) = spans
    assert snip[a:b] == "needle"


@pytest.mark.parametrize("kind", ["torn-tail", "fused-records", "garbage", "invalid-utf8"])
def test_damaged_lines_that_could_match_are_reported(kind: str, tmp_path: Path) -> None:
    src = (
        REAL / "claude-config-2.1.332/projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
    )
    d = damage.KINDS[kind](src.read_bytes())
    bad = tmp_path / "s.jsonl"
    bad.write_bytes(d.data)
    got = list(search_lines(iter_raw(bad), make_matcher("a")))
    skipped = {(s.line, s.code) for s in got if isinstance(s, SkippedLine)}
    line_codes = {
        (x.line, x.code)
        for x in damage.validate_bytes(d.data).diagnostics
        if x.family == "line" and x.code not in ("no-final-newline",)
    }
    if kind == "invalid-utf8":
        assert not skipped  # read leniently: the record is searched, not skipped
    else:
        assert skipped == line_codes
    assert any(isinstance(h, Hit) for h in got)


def test_search_files_newest_first_with_titles(tmp_path: Path) -> None:
    import os
    import shutil
    import uuid

    proj = tmp_path / "-p"
    proj.mkdir()
    srcs = [
        REAL / "v2.1.38-tool-heavy.jsonl",
        REAL / "v1.0.51-rejected-tool-interrupt.jsonl",
        REAL / "v2.1.29-user-image-partial-copy.jsonl",
    ]
    for k, src in enumerate(srcs):
        dest = proj / f"{uuid.uuid5(uuid.NAMESPACE_URL, src.name)}.jsonl"
        shutil.copy(src, dest)
        os.utime(dest, (1_700_000_000 + k, 1_700_000_000 + k))
    m = make_matcher("the")
    found = list(search_files([proj], m, per_session=2))
    assert [f.mtime_ms for f in found] == sorted((f.mtime_ms for f in found), reverse=True)
    for f in found:
        assert f.title
        assert len(f.hits) <= 2
        total = len(brute_force(f.path, "the"))
        assert len(f.hits) + f.more == total
    assert not list(search_files([proj], make_matcher("zzqqxxnotthere")))


def test_record_hits_skip_progress_copies() -> None:
    rec = orjson.loads((REAL / "v2.1.17-agent-progress-ends-mid-tool.jsonl").read_bytes().splitlines()[133])
    assert rec["type"] == "progress"
    assert list(record_hits(rec, 1, make_matcher("a"))) == []


def test_a_pattern_the_terminal_could_not_decode_is_a_usage_error(tmp_path: Path) -> None:
    # A byte that is not UTF-8 on the command line reaches Python as a lone surrogate: one
    # clear message and exit 2, from the files and from a store alike (it was the codec's).
    from tests.support.cli import tt

    with pytest.raises(ValueError, match="not valid UTF-8"):
        make_matcher("ab\udcffcd")
    (tmp_path / "projects").mkdir()
    for extra in ([], ["--store", f"sqlite:///{tmp_path / 's.db'}"]):
        r = tt("search", "ab\udcffcd", "-n", "1", *extra, config=tmp_path)
        assert (r.returncode, r.stderr) == (2, "tt: the pattern is not valid UTF-8 text\n"), r.stderr


def test_finding_a_subagent_file_whose_session_is_gone_is_searched(tmp_path: Path) -> None:
    """New-user pass: a word in a subagent transcript whose session's file is not there was
    "no matches" for `tt search -a`, though `tt validate` and `tt doctor -a` read the file.
    It is searched as `tt ls --hidden` lists it: a row of its own, named by its path."""
    import json

    from tests.support.cli import tt
    from tests.support.paths import CONFIG_332
    from tests.support.trees import stage

    cfg = tmp_path / "cfg"
    stage(CONFIG_332, cfg)
    project = cfg / "projects" / "-home-dev-demo-app"
    (agent,) = project.glob("*/subagents/agent-*.jsonl")
    assert b"List the python files" in agent.read_bytes()

    def found() -> list[str]:
        r = tt("search", "List the python files", "-a", "--json", config=cfg)
        assert r.returncode == 0, r.stderr
        return [s["path"] for s in json.loads(r.stdout)["sessions"]]

    main = project / "4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
    assert found() == [str(main)]  # a live session's subagent: its session's hit
    main.unlink()
    assert found() == [str(agent)]
    text = tt("search", "List the python files", "-a", config=cfg, width=200).stdout
    assert text.startswith(f"4cd0c8e6…/{agent.name} ") and "· -home-dev-demo-app" in text.splitlines()[0]
    r = tt("search", "List the python files", "-a", "--no-subagents", config=cfg)
    assert r.returncode == 1
