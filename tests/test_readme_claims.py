"""Every test the README and CONTRIBUTING.md name as backing a claim exists: a renamed or
deleted test must take the claim with it."""

from __future__ import annotations

import re

from tests.support.paths import ROOT

DOCS = ("README.md", "CONTRIBUTING.md")


def _tests_source() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("*.py"))


def test_every_named_test_file_exists() -> None:
    for doc in DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        named = set(re.findall(r"tests/((?:[a-z0-9_]+/)*test_[a-z0-9_]+\.py)", text))
        assert named, f"{doc} names no test file: the pattern no longer matches how it names them"
        for f in named:
            assert (ROOT / "tests" / f).is_file(), f"{doc} names tests/{f}"


def test_every_named_test_function_exists() -> None:
    src = _tests_source()
    for doc in DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        names = {
            n
            for n in re.findall(r"\b(test_[a-z0-9_]+)\b", text)
            if not any((ROOT / "tests").rglob(f"{n}.py"))  # a file's name, not a function's
        }
        missing = sorted(n for n in names if f"def {n}(" not in src)
        assert missing == [], f"{doc} names tests that do not exist: {missing}"
