"""CI cannot go green on skipped work (tests/support/real_tools.py): run pytest on a small
suite of its own, with and without ``CI=true``, and read the outcome."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT

CONFTEST = """
from tests.support.real_tools import (  # noqa: F401
    pytest_collection_modifyitems, pytest_make_collect_report, pytest_runtest_makereport, pytest_sessionfinish,
)
import pytest

@pytest.fixture
def claude_197():
    pytest.skip("Claude Code 2.1.197 not installed")
"""
TESTS = """
import pytest

@pytest.mark.ccusage
def test_needs_ccusage():
    pytest.skip("ccusage not installed")

def test_uses_a_cli_fixture_without_the_mark(claude_197):
    pass

@pytest.mark.claude
def test_runs_a_cli():
    assert True

def test_skips_for_another_reason():
    pytest.skip("this fixture has no such shape")

@pytest.mark.claude
@pytest.mark.xfail(reason="a known CLI quirk")
def test_expected_failure():
    assert False
"""
MODULE_SKIPPED = """
import pytest
pytest.importorskip("a_module_nobody_has")

def test_never_collected():
    pass
"""


def _suite(tmp_path: Path, **files: str) -> Path:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n    claude: a real CLI\n    ccusage: ccusage\n    git: git\n"
    )
    for name, text in files.items():
        (tmp_path / f"{name}.py").write_text(text)
    return tmp_path


def _pytest(suite: Path, *args: str, ci: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "TT_REQUIRE_REAL_TOOLS")}
    env["PYTHONPATH"] = str(ROOT)
    if ci:
        env["CI"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", *args],
        cwd=suite,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_outside_ci_a_missing_tool_skips_with_its_reason(tmp_path: Path) -> None:
    r = _pytest(_suite(tmp_path, test_a=TESTS), ci=False)
    assert r.returncode == 0, r.stdout
    assert "SKIPPED [1] test_a.py:6: ccusage not installed" in r.stdout
    assert "1 passed, 3 skipped, 1 xfailed" in r.stdout


def test_in_ci_a_skipped_test_that_needs_a_real_tool_fails(tmp_path: Path) -> None:
    r = _pytest(_suite(tmp_path, test_a=TESTS), ci=True)
    assert r.returncode == 1, r.stdout
    assert "FAILED test_a.py::test_needs_ccusage - CI=true: a test that needs ccusage" in r.stdout
    # The fixture that starts a CLI marks its users `claude`, so their skip fails too.
    assert (
        "ERROR test_a.py::test_uses_a_cli_fixture_without_the_mark - CI=true: a test that needs a pinned real Claude Code CLI"
        in r.stdout
    )
    assert "Claude Code 2.1.197 not installed" in r.stdout
    # A skip for another reason, and an expected failure, stay what they are.
    assert "SKIPPED [1] test_a.py:16: this fixture has no such shape" in r.stdout
    assert "1 failed, 1 passed, 1 skipped, 1 xfailed, 1 error" in r.stdout


def test_the_added_mark_counts_for_deselection(tmp_path: Path) -> None:
    r = _pytest(_suite(tmp_path, test_a=TESTS), "-m", "not claude", ci=True)
    assert "test_uses_a_cli_fixture_without_the_mark" not in r.stdout
    assert "3 deselected" in r.stdout


def test_in_ci_a_module_skipped_whole_fails(tmp_path: Path) -> None:
    r = _pytest(_suite(tmp_path, test_b=MODULE_SKIPPED), "test_b.py", ci=True)
    assert r.returncode != 0, r.stdout
    assert "CI=true: a test module must not be skipped" in r.stdout
    assert _pytest(tmp_path, "test_b.py", ci=False).returncode == 5  # nothing collected, nothing failed


def test_in_ci_a_whole_run_where_no_test_of_a_tool_passed_fails(tmp_path: Path) -> None:
    only_claude = "import pytest\n\n@pytest.mark.claude\ndef test_cli():\n    pass\n"
    r = _pytest(_suite(tmp_path, test_c=only_claude), ci=True)
    assert r.returncode == 1, r.stdout
    # Every marked tool but the one whose test passed is named, in the order they are declared.
    from tests.support.real_tools import MARKERS

    idle = ", ".join(m for m in MARKERS if m != "claude")
    assert (
        idle.startswith("ccusage, git")
        and f"CI=true: no test that needs {idle} passed in this run" in r.stdout
    )
    # Naming files runs a part of the suite on purpose: no such check.
    assert _pytest(tmp_path, "test_c.py", ci=True).returncode == 0
    assert _pytest(tmp_path, ci=False).returncode == 0


@pytest.mark.parametrize("var", ["CI=true", "TT_REQUIRE_REAL_TOOLS=1"])
def test_either_variable_turns_it_on(var: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support import real_tools

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("TT_REQUIRE_REAL_TOOLS", raising=False)
    assert not real_tools.required()
    name, value = var.split("=")
    monkeypatch.setenv(name, value)
    assert real_tools.required()
