"""What `tt search --store` finds that the store's full-text index does not hold (new-user
pass, findings 1 and 2), on real fixtures, against `tt search` on the same files:

- the 2.0.x subagent transcripts (``agent-<id>.jsonl`` beside the session, kept as side
  files): the store found none of their text;
- patterns the index cannot see (`store.find.index_blind`): symbols only (``->``, ``::``)
  and a word of a script written without spaces inside a longer run (``中`` in ``中文``):
  the store found nothing and said nothing.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import tt_popen
from tests.support.paths import REAL
from tests.support.trees import stage
from transcript_tools.catalog.files import search_files
from transcript_tools.catalog.search import make_matcher
from transcript_tools.edge.store_sqlite import open_sqlite
from transcript_tools.store.files import push_session
from transcript_tools.store.find import index_blind, search_store

V2028 = REAL / "v2.0.28-project"
PROJECT_2028 = "-Users-zawakin-agent-sample"
#: Each pattern, and the real fixture that holds it where the index cannot find it.
BLIND = {
    "->": "v2.1.29-user-image-partial-copy.jsonl",
    "::": "v2.1.17-agent-progress-ends-mid-tool.jsonl",
    "中": "handwritten-edge-cases-not-object-lines.jsonl",  # inside "中文"
}


def _clock() -> int:
    return 1_780_000_000_000


def _hits(found: object) -> list[tuple[str, list[tuple[str | None, int, str, tuple[tuple[int, int], ...]]]]]:
    return sorted(
        (sh.session_id, [(a, h.line, h.kind, h.spans) for a, h in sh.hits])
        for sh in found  # type: ignore[attr-defined]
    )


def _run(cfg: Path, *args: str) -> tuple[int, str, str]:
    p: subprocess.Popen[bytes] = tt_popen(*args, config=cfg, width=None, drop=("TT_STORE",))
    out, err = p.communicate(timeout=300)
    return p.returncode, out.decode(), err.decode()


@pytest.fixture
def store_2028(tmp_path: Path):  # type: ignore[no-untyped-def]
    cfg = tmp_path / "cfg"
    stage(V2028, cfg / "projects")
    s = open_sqlite(tmp_path / "s.db", _clock)
    for p in (cfg / "projects" / PROJECT_2028).glob("*-*-*-*-*.jsonl"):
        push_session(s, p, config=cfg, diagnose=None)
    return cfg, s


@pytest.mark.parametrize(
    "pattern",
    [
        "Anthropic's official",  # only in agent-90fa40b6.jsonl
        "Warmup",  # the first prompt of both agent files
        "files",  # in the session and in both agent files
    ],
)
def test_finding_store_search_finds_what_tt_search_finds_in_2_0_x_agent_files(
    store_2028, pattern: str
) -> None:
    cfg, s = store_2028
    m = make_matcher(pattern)
    files = _hits(search_files([cfg / "projects" / PROJECT_2028], m, per_session=1000))
    assert files and any(a is not None and a.startswith("agent-") for _, hs in files for a, *_ in hs)
    for n in (None, 1):  # both placements (`-n` or not)
        assert _hits(search_store(s, pattern, m, per_session=1000, sessions=n)) == files
    # --no-subagents leaves them out in both.
    assert _hits(search_store(s, pattern, m, per_session=1000, subagents=False)) == _hits(
        search_files([cfg / "projects" / PROJECT_2028], m, per_session=1000, subagents=False)
    )


def test_finding_tt_search_store_prints_the_2_0_x_agent_hit_as_tt_search_does(
    store_2028, tmp_path: Path
) -> None:
    cfg, _s = store_2028
    url = f"sqlite:///{tmp_path / 's.db'}"
    code, out, err = _run(cfg, "search", "Anthropic's official", "--store", url, "--json")
    assert code == 0, err
    stored = json.loads(out)["sessions"]
    code, out, err = _run(cfg, "search", "Anthropic's official", "-a", "--json")
    assert code == 0, err
    files = json.loads(out)["sessions"]
    assert [h for s in stored for h in s["hits"]] == [h for s in files for h in s["hits"]]
    assert stored[0]["hits"][0]["subagent"] == "agent-90fa40b6"


@pytest.fixture
def store_blind(tmp_path: Path):  # type: ignore[no-untyped-def]
    cfg = tmp_path / "cfg"
    d = cfg / "projects" / "-home-u-p"
    d.mkdir(parents=True)
    s = open_sqlite(tmp_path / "s.db", _clock)
    for i, name in enumerate(sorted(set(BLIND.values()))):
        p = d / f"00000000-0000-4000-8000-{i:012d}.jsonl"
        p.write_bytes((REAL / name).read_bytes())
        push_session(s, p, config=cfg, diagnose=None)
    return cfg, s


@pytest.mark.parametrize("pattern", list(BLIND))
def test_finding_a_pattern_the_index_cannot_see_is_found_by_reading_the_lines(
    store_blind, pattern: str
) -> None:
    cfg, s = store_blind
    assert index_blind(pattern) is not None
    m = make_matcher(pattern)
    files = _hits(search_files([cfg / "projects" / "-home-u-p"], m, per_session=1000))
    assert files  # the fixture holds it
    found = search_store(s, pattern, m, per_session=1000)
    assert _hits(found) == files
    assert found.cut is None and found.note(True) is None  # the whole store was read: nothing to say


def test_a_scan_cut_short_says_how_much_it_read_and_what_to_run(store_blind) -> None:
    _cfg, s = store_blind
    m = make_matcher("->")
    found = search_store(s, "->", m)
    found.scan_bytes = 1  # one session's lines pass it: the scan stops after the first
    got = list(found)
    assert found.cut == (1, 3) and len(got) <= 1
    note = found.note(bool(got))
    assert note is not None and "1 most recently pushed of 3 sessions" in note
    assert "`tt search ->` without --store" in note


def test_whole_words_are_still_the_index_s_and_a_miss_says_so(store_blind) -> None:
    _cfg, s = store_blind
    assert index_blind("中文") is not None and index_blind("README") is None and index_blind("a->b") is None
    found = search_store(s, "xyzzyplugh", make_matcher("xyzzyplugh"))
    assert list(found) == []
    note = found.note(False)
    assert (
        note is not None and "finds whole words" in note and "`tt search xyzzyplugh` without --store" in note
    )


def test_finding_tt_search_store_finds_symbols_and_says_why_on_a_miss(store_blind, tmp_path: Path) -> None:
    cfg, _s = store_blind
    url = f"sqlite:///{tmp_path / 's.db'}"
    code, out, err = _run(cfg, "search", "--store", url, "--json", "--", "::")
    assert code == 0, err
    stored = json.loads(out)["sessions"]
    code, out, err = _run(cfg, "search", "-p", str(cfg / "projects" / "-home-u-p"), "--json", "--", "::")
    assert code == 0, err
    assert [s["hits"] for s in stored] == [s["hits"] for s in json.loads(out)["sessions"]] != []
    code, out, err = _run(cfg, "search", "--store", url, "xyzzyplugh")
    assert code == 1 and out == ""
    assert "no matches" in err and "note: the store's index finds whole words" in err
