"""Tests that need a real tool, and CI that cannot go green when they did not run.

A test that needs a real tool carries the tool's marker: ``claude`` (a pinned Claude Code
CLI: 2.1.332 from the claude-agent-sdk wheel, 2.1.197 from npm), ``ccusage`` (npm),
``git`` or ``postgres`` (a throwaway cluster, `tests/support/postgres.py`). A test that uses a fixture starting a real CLI (`CLI_FIXTURES`) is marked
``claude`` here even if its author forgot, so ``-m "not claude"`` leaves out all of them.

On a machine without a tool such tests skip with the reason (an offline laptop). When
``CI=true`` (what CI services set) or ``TT_REQUIRE_REAL_TOOLS=1``, skipped work is a failure:

- a test with one of `MARKERS` that skips fails instead, with the skip's reason;
- a test module skipped as a whole while being collected fails;
- a run of the whole suite (no paths, ``-m`` or ``-k`` given) fails when no test of one
  of the tools passed (all of them deselected or gone, say).

So the README's command, ``python -m pytest``, is what ``.ci/run`` runs, and the same
command on a laptop still works without npm. Wired in by ``tests/conftest.py``.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

#: Markers of tests that need a real tool, and what each tool is.
MARKERS = {
    "claude": "needs a pinned real Claude Code CLI (2.1.332 bundled in claude-agent-sdk, 2.1.197 from npm)",
    "ccusage": "needs ccusage 20.0.24 (npm; tests/support/install_ccusage.sh)",
    "git": "needs git",
    "tmux": "needs tmux (Debian package tmux), to drive tt chat in a real terminal",
    "postgres": "needs PostgreSQL's initdb/pg_ctl (Debian package postgresql; tests/support/postgres.py)",
}
#: Fixtures that run a real Claude Code CLI (tests/conftest.py and a few test modules).
CLI_FIXTURES = frozenset(
    {
        "claude_332",
        "claude_197",
        "real_session",
        "real_session_197",
        "generated_session",
        "thinking_session",
        "large_session",
    }
)
_passed: Counter[str] = Counter()


def required() -> bool:
    """Whether skipped work must fail the run (CI)."""
    return os.environ.get("CI", "").lower() == "true" or os.environ.get("TT_REQUIRE_REAL_TOOLS") == "1"


def _why() -> str:
    return "CI=true" if os.environ.get("CI", "").lower() == "true" else "TT_REQUIRE_REAL_TOOLS=1"


def _reason(longrepr: Any) -> str:
    # A skip's longrepr is (path, line, "Skipped: reason").
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # tryfirst: before -m deselects, so the added marks count there too.
    for item in items:
        if (
            CLI_FIXTURES & set(getattr(item, "fixturenames", ()))
            and item.get_closest_marker("claude") is None
        ):
            item.add_marker(pytest.mark.claude)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    tools = [m for m in MARKERS if item.get_closest_marker(m) is not None]
    if not tools:
        return
    if report.passed and report.when == "call":
        _passed.update(tools)
    if report.skipped and required() and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = (
            f"{_why()}: a test that {MARKERS[tools[0]]} must run, not skip: {_reason(report.longrepr)}"
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.skipped and required() and isinstance(collector, pytest.Module):
        report.outcome = "failed"
        report.longrepr = f"{_why()}: a test module must not be skipped: {_reason(report.longrepr)}"


def _whole_suite(config: pytest.Config) -> bool:
    o = config.option
    named = config.args_source is pytest.Config.ArgsSource.ARGS
    return not (named or o.markexpr or o.keyword or o.deselect or getattr(o, "lf", False))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not required() or not _whole_suite(session.config) or exitstatus not in (0, 1):
        return
    idle = [m for m in MARKERS if _passed[m] == 0]
    if idle:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(
                f"{_why()}: no test that needs {', '.join(idle)} passed in this run", red=True
            )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
