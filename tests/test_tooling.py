"""The contributor's tools are wired one way: `.ci/run` runs ruff and mypy, with the settings
pyproject.toml carries and tools the test extra installs, before the README's test command.

A renamed module left in the mypy overrides would go stale silently (mypy does not complain
about a pattern that matches nothing), so each one must name a module that exists.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

from tests.support.paths import ROOT

LINTED = ("transcript_tools", "tests", "benchmarks")
CHECKS = (
    "ruff check " + " ".join(LINTED),
    "ruff format --check " + " ".join(LINTED),
    "mypy",
)


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _commands() -> list[str]:
    """The lines of `.ci/run` that run something (comments and blank lines left out)."""
    lines = (ln.strip() for ln in (ROOT / ".ci/run").read_text(encoding="utf-8").splitlines())
    return [ln for ln in lines if ln and not ln.startswith("#")]


def test_ci_runs_ruff_and_mypy_before_the_tests() -> None:
    cmds = _commands()
    tests = next(i for i, c in enumerate(cmds) if c.startswith("python -m pytest"))
    for check in CHECKS:
        assert check in cmds, check
        assert cmds.index(check) < tests, f"{check} runs after the tests"
    assert all((ROOT / p).is_dir() for p in LINTED)


def test_the_test_extra_installs_the_tools_ci_runs() -> None:
    extra = _pyproject()["project"]["optional-dependencies"]["test"]
    names = {re.split(r"[<>=!~\[ ]", d, maxsplit=1)[0] for d in extra}
    assert {"ruff", "mypy"} <= names


def test_bare_mypy_checks_the_package_strictly() -> None:
    mypy = _pyproject()["tool"]["mypy"]
    assert mypy["files"] == ["transcript_tools"]  # what `mypy` with no arguments checks
    assert mypy["strict"] is True  # the pure core; the edges are relaxed by name below


def test_every_mypy_override_names_a_module_that_exists() -> None:
    modules = {
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for p in (ROOT / "transcript_tools").rglob("*.py")
    }
    for override in _pyproject()["tool"]["mypy"]["overrides"]:
        for pattern in override["module"]:
            if not pattern.startswith("transcript_tools"):
                continue  # a third-party package's settings
            rx = re.compile(re.escape(pattern).replace(r"\.\*", r"(\.[\w.]+)?").replace(r"\*", r"\w+") + "$")
            assert any(rx.match(m) for m in modules), f"mypy override {pattern!r} matches no module"
