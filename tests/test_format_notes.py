"""docs/format.md, the project's notes on Claude Code's transcript format, stays citable
and true to the tree: every ``docs/format.md §N`` cited in code, tests, schemas or docs
names a section that exists, and every test, fixture and module the notes point to as
evidence is there (a renamed test must take its citation along)."""

from __future__ import annotations

import re

import pytest

from tests.support.paths import ROOT

NOTES = ROOT / "docs" / "format.md"
CITE = re.compile(r"docs/format\.md((?:,? ?§\s?[0-9]+(?:\.[0-9]+)*)+)")
SECTION = re.compile(r"§\s?([0-9]+(?:\.[0-9]+)*)")


def _sections() -> set[str]:
    heads = re.findall(r"^#{2,4} ([0-9]+(?:\.[0-9]+)*)\.? ", NOTES.read_text(encoding="utf-8"), flags=re.M)
    return set(heads)


def _cited() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for base in ("transcript_tools", "tests", "schemas", "docs", "benchmarks"):
        for p in (ROOT / base).rglob("*"):
            if p.suffix not in (".py", ".json", ".md") or not p.is_file():
                continue
            # A citation may wrap onto the next line of a comment or docstring.
            text = re.sub(r"\s*\n\s*(?:#\s*)?", " ", p.read_text(encoding="utf-8"))
            for m in CITE.finditer(text):
                for sec in SECTION.findall(m.group(1)):
                    out.setdefault(sec, set()).add(str(p.relative_to(ROOT)))
    for name in ("README.md", "CONTRIBUTING.md", "fixtures/README.md"):
        text = re.sub(r"\s*\n\s*", " ", (ROOT / name).read_text(encoding="utf-8"))
        for m in CITE.finditer(text):
            for sec in SECTION.findall(m.group(1)):
                out.setdefault(sec, set()).add(name)
    return out


def test_sections_are_numbered_headings() -> None:
    secs = _sections()
    assert {str(n) for n in range(16)} <= secs
    assert {"1.1", "3.1", "3.2", "3.2.1", "3.6", "4.1"} <= secs


def test_every_cited_section_exists() -> None:
    secs = _sections()
    missing = {sec: sorted(files) for sec, files in _cited().items() if sec not in secs}
    assert not missing, missing


def test_the_code_cites_the_notes() -> None:
    # The notes are where the format facts live: the code points there (and nowhere else).
    cited = _cited()
    assert len({f for files in cited.values() for f in files if f.startswith("transcript_tools/")}) >= 20
    stale = [
        str(p.relative_to(ROOT))
        for base in ("transcript_tools", "tests", "schemas")
        for p in (ROOT / base).rglob("*")
        if p.suffix in (".py", ".json")
        and p.is_file()
        and re.search(r"(?<![\w/])FORMAT\.md", p.read_text(encoding="utf-8"))
    ]
    assert not stale, stale


def _evidence() -> list[str]:
    return sorted(
        set(
            re.findall(
                r"`((?:tests|fixtures|transcript_tools|schemas)/[^`\s]+)`", NOTES.read_text(encoding="utf-8")
            )
        )
    )


@pytest.mark.parametrize("ref", _evidence())
def test_the_evidence_named_is_there(ref: str) -> None:
    path, _, test = ref.partition("::")
    p = ROOT / path.rstrip("/")
    matches = list(ROOT.glob(path.rstrip("/"))) if "*" in path else [p]
    assert matches and all(m.exists() for m in matches), ref
    if test:
        assert re.search(
            rf"^(?:async )?def {re.escape(test)}\(", p.read_text(encoding="utf-8"), flags=re.M
        ), ref


def test_test_names_cited_after_a_file_exist() -> None:
    # "`tests/x.py::test_a`, `::test_b`": the short form names a test of the file before it.
    text = NOTES.read_text(encoding="utf-8")
    last = None
    for m in re.finditer(r"`(tests/[\w/]+\.py)?(?:::(\w+))?`", text):
        last = m.group(1) or last
        if m.group(2) is None:
            continue
        assert last is not None, m.group(0)
        src = (ROOT / last).read_text(encoding="utf-8")
        assert re.search(rf"^def {m.group(2)}\(", src, flags=re.M), f"{last}::{m.group(2)}"


def test_fixtures_named_in_the_notes_exist() -> None:
    real = {p.name for p in (ROOT / "fixtures/real").iterdir()}
    for name in re.findall(
        r"`((?:v[0-9][\w.-]*|handwritten-[\w.-]+|claude-config-[\w.-]+)(?:\.jsonl|/))`",
        NOTES.read_text(encoding="utf-8"),
    ):
        assert name.rstrip("/") in real, name
