"""Shared fixtures: the Messages-API stand-in, the pinned real Claude Code CLIs and the
real sessions generated with them.

Generated sessions are session-scoped: made once per test run (about 10-20 s per CLI
version), shared by every test that asks. Tests must not change them: call
``session.copy_to(tmp_path)`` first. Fixtures that need a CLI skip with the reason when it
is not installed (2.1.332 comes with the ``claude-agent-sdk`` test dependency; 2.1.197 is
installed by ``tests/support/install_claude_197.sh``), except in CI (``CI=true``), where that
skip is a failure (``tests/support/real_tools.py``). Tests using them are marked
``@pytest.mark.claude`` (added automatically when missing).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.claude_cli import (
    BUNDLED_VERSION,
    NPM_VERSION,
    ClaudeCLI,
    faketime_library,
    find_cli,
    npm_cache_dir,
)

# In CI a skipped test that needs a real tool fails the run (see tests/support/real_tools.py).
from tests.support.real_tools import (  # noqa: F401  (pytest hooks, found by name here)
    pytest_collection_modifyitems,
    pytest_make_collect_report,
    pytest_runtest_makereport,
    pytest_sessionfinish,
)
from tests.support.sessions import GeneratedSession, generate_session
from tests.support.standin import StandIn

CLI_VERSIONS = (BUNDLED_VERSION, NPM_VERSION)


def require_cli(version: str) -> ClaudeCLI:
    cli = find_cli(version)
    if cli is None:
        if version == BUNDLED_VERSION:
            pytest.skip(
                f"Claude Code {version} not found: install claude-agent-sdk==0.2.189 (pip install -e '.[test]')"
            )
        pytest.skip(
            f"Claude Code {version} not installed in {npm_cache_dir()}: run tests/support/install_claude_197.sh"
        )
    return cli


@pytest.fixture
def standin() -> Iterator[StandIn]:
    """A running stand-in with the default policy and an empty script."""
    with StandIn() as api:
        yield api


@pytest.fixture(scope="session")
def faketime() -> None:
    """libfaketime, to run a real CLI at a pinned clock (`claude_cli.clock_env`)."""
    if faketime_library() is None:
        pytest.skip("libfaketime not installed (apt-get install faketime): the CLI's clock cannot be pinned")


@pytest.fixture(scope="session")
def claude_332() -> ClaudeCLI:
    return require_cli(BUNDLED_VERSION)


@pytest.fixture(scope="session")
def claude_197() -> ClaudeCLI:
    return require_cli(NPM_VERSION)


class _SessionCache:
    """One generated session per CLI version per test run."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self._factory = factory
        self._made: dict[str, GeneratedSession] = {}

    def get(self, version: str) -> GeneratedSession:
        if version not in self._made:
            cli = require_cli(version)
            root = self._factory.mktemp(f"real-session-{version}-")
            self._made[version] = generate_session(cli, root)
        return self._made[version]


@pytest.fixture(scope="session")
def _session_cache(tmp_path_factory: pytest.TempPathFactory) -> _SessionCache:
    return _SessionCache(tmp_path_factory)


@pytest.fixture(scope="session")
def real_session(_session_cache: _SessionCache) -> GeneratedSession:
    """A real session written by Claude Code 2.1.332 (see tests/support/sessions.py)."""
    return _session_cache.get(BUNDLED_VERSION)


@pytest.fixture(scope="session")
def real_session_197(_session_cache: _SessionCache) -> GeneratedSession:
    """The same script written by Claude Code 2.1.197 (npm)."""
    return _session_cache.get(NPM_VERSION)


@pytest.fixture(scope="session", params=CLI_VERSIONS, ids=lambda v: f"cc-{v}")
def generated_session(request: pytest.FixtureRequest, _session_cache: _SessionCache) -> GeneratedSession:
    """Each CLI version's generated session in turn: the fixture for checks that must hold
    for whatever real Claude Code writes (e.g. ``tt validate`` reports it clean)."""
    return _session_cache.get(request.param)
