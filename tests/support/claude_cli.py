"""The real Claude Code CLI, pinned, run offline against the stand-in.

Two versions are used as references:
- 2.1.332, bundled in the ``claude-agent-sdk==0.2.189`` wheel at
  ``claude_agent_sdk/_bundled/claude`` (a test dependency of tt);
- 2.1.197, from npm (``@anthropic-ai/claude-code@2.1.197``), installed by
  ``tests/support/install_claude_197.sh`` into ``$TT_CLAUDE_CACHE``, else
  ``$TT_CACHE/claude-code-2.1.197``, else ``<repo>/.cache/claude-code-2.1.197``.
``find_cli(version)`` returns None when one is not there; tests then skip (a failure in CI:
``tests/support/real_tools.py``).

``run_claude`` runs one ``claude -p`` turn in a ``Sandbox`` (a temp ``HOME`` with
``CLAUDE_CONFIG_DIR=<home>/.claude`` and its own ``TMPDIR``). Invariants:
- The environment is built from a short allow-list, so no real ``ANTHROPIC_*`` /
  ``CLAUDE*`` variable, credential or proxy setting of the host reaches the CLI; the
  only API it is given is ``ANTHROPIC_BASE_URL`` (the stand-in on 127.0.0.1) with the
  key ``test-key``, and auto-update, telemetry and other non-essential traffic is off.
- Tools are granted with ``--allowedTools`` (never ``--dangerously-skip-permissions``,
  which Claude Code refuses as root).
  Note: a bare name there (``Read``, ``Write``) lets the tool reach paths outside the cwd
  (2.1.332 and 2.1.197, issue 19); pass ``allowed_tools=None`` for the default checks.
- Every run has a timeout; on expiry the whole process group is killed and
  ``ClaudeRunError`` raised with the output so far. Nothing is printed.
- ``clock=``: the run happens at that instant, through libfaketime (Debian package
  ``faketime``, preloaded; its clock starts there and runs on). Claude Code's behaviour
  depends on the date (its model retirement table), so a test that compares with it pins
  the clock and gives the same verdict on any day. ``tz`` sets the zone the CLI sees.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.support.paths import ROOT

BUNDLED_VERSION = "2.1.332"
NPM_VERSION = "2.1.197"
ALLOWED_TOOLS = "Bash,Read,Write,Edit,Glob,Grep,Agent"
DEFAULT_TIMEOUT = 90.0
REPO_ROOT = ROOT

# Host variables a CLI run may see; everything else (ANTHROPIC_*, CLAUDE*, AWS_*,
# *_PROXY, OTEL_*, ...) is left out on purpose.
# libfaketime's variables pass too: a suite run under a shifted clock (README, Development)
# shifts the CLI's clock with it; a pinned run (``clock=``) replaces them.
_PASSED_THROUGH = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TERM",
    "SHELL",
    "USER",
    "LOGNAME",
    "LD_PRELOAD",
    "FAKETIME",
    "FAKETIME_DISABLE_SHM",
)


#: Where Debian's ``faketime`` package puts the preload library (per architecture).
_FAKETIME_LIBS = (
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
)


def faketime_library() -> Path | None:
    """libfaketime's preload library, when the ``faketime`` package is installed."""
    for candidate in _FAKETIME_LIBS:
        if Path(candidate).is_file():
            return Path(candidate)
    return None


def clock_env(at: datetime, tz: str = "UTC") -> dict[str, str]:
    """The variables that start a process's clock at ``at`` (aware) in zone ``tz``."""
    lib = faketime_library()
    if lib is None:
        raise ClaudeRunError(
            "libfaketime is not installed (apt-get install faketime): cannot pin the CLI's clock"
        )
    utc = at.astimezone(UTC)
    # "@..." is an absolute start that then advances; libfaketime reads it as UTC (seen:
    # the CLI under TZ=America/Los_Angeles and "@2026-11-30 07:59:00" sees 07:59Z).
    # No shared memory: several pinned runs at once must not share one clock.
    return {
        "LD_PRELOAD": str(lib),
        "FAKETIME": "@" + utc.strftime("%Y-%m-%d %H:%M:%S"),
        "FAKETIME_DISABLE_SHM": "1",
        "TZ": tz,
    }


class ClaudeRunError(RuntimeError):
    """A CLI run failed or timed out; the message carries its output tails."""


@dataclass(frozen=True, slots=True)
class ClaudeCLI:
    path: Path
    version: str

    def __str__(self) -> str:
        return f"claude {self.version} ({self.path})"


def bundled_cli() -> ClaudeCLI | None:
    """2.1.332 from the installed claude-agent-sdk wheel, if any."""
    try:
        import claude_agent_sdk
    except ImportError:
        return None
    bundled = Path(claude_agent_sdk.__file__).parent / "_bundled"
    path = bundled / "claude"
    if not path.is_file():
        return None
    version_file = bundled / "claude.version"
    # claude.version reads "2.1.332 (Claude Code)"; trust it over a guess from the wheel.
    version = version_file.read_text().split()[0] if version_file.is_file() else BUNDLED_VERSION
    return ClaudeCLI(path, version)


def npm_cache_dir() -> Path:
    """Where install_claude_197.sh puts 2.1.197: $TT_CLAUDE_CACHE, else $TT_CACHE/claude-code-2.1.197,
    else <repo>/.cache/claude-code-2.1.197."""
    configured = os.environ.get("TT_CLAUDE_CACHE")
    if configured:
        return Path(configured)
    return Path(os.environ.get("TT_CACHE") or REPO_ROOT / ".cache") / f"claude-code-{NPM_VERSION}"


def npm_cli(cache: Path | None = None) -> ClaudeCLI | None:
    """2.1.197 from the npm cache folder, if ``install_claude_197.sh`` put it there."""
    package = (cache or npm_cache_dir()) / "node_modules" / "@anthropic-ai" / "claude-code"
    manifest = package / "package.json"
    binary = package / "bin" / "claude.exe"
    if not (manifest.is_file() and binary.is_file()):
        return None
    version = json.loads(manifest.read_text()).get("version")
    # Before the postinstall runs, bin/claude.exe is a 500-byte shell stub that exits 1.
    if version != NPM_VERSION or binary.stat().st_size < 1_000_000:
        return None
    return ClaudeCLI(binary, version)


def find_cli(version: str) -> ClaudeCLI | None:
    for cli in (bundled_cli(), npm_cli()):
        if cli is not None and cli.version == version:
            return cli
    return None


@dataclass(frozen=True, slots=True)
class Sandbox:
    """A throw-away HOME for the CLI; the config dir is ``<home>/.claude`` unless given."""

    home: Path
    config_dir: Path

    @classmethod
    def create(cls, root: Path, config_dir: Path | None = None) -> Sandbox:
        home = root / "home"
        (home / "tmp").mkdir(parents=True, exist_ok=True)
        config = config_dir or home / ".claude"
        config.mkdir(parents=True, exist_ok=True)
        return cls(home, config)

    def env(
        self, base_url: str, *, checkpointing: bool = False, extra: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        env = {name: os.environ[name] for name in _PASSED_THROUGH if name in os.environ}
        env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
        env.setdefault("LANG", "C.UTF-8")
        env.update(
            HOME=str(self.home),
            CLAUDE_CONFIG_DIR=str(self.config_dir),
            # Claude Code keeps task output under $TMPDIR/claude-<uid>/ (2.1.332).
            TMPDIR=str(self.home / "tmp"),
            ANTHROPIC_BASE_URL=base_url,
            ANTHROPIC_API_KEY="test-key",
            DISABLE_AUTOUPDATER="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
            NO_PROXY="127.0.0.1,localhost",
        )
        if checkpointing:
            # -p mode writes file-history only with this (what the Agent SDK's
            # enable_file_checkpointing sets); see docs/format.md §13.
            env["CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"] = "true"
        env.update(extra or {})
        return env


@dataclass(frozen=True, slots=True)
class CLIRun:
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    result: Mapping[str, Any] = field(default_factory=dict)  # the --output-format json object

    @property
    def session_id(self) -> str | None:
        value = self.result.get("session_id")
        return value if isinstance(value, str) else None


def run_claude(
    cli: ClaudeCLI,
    prompt: str,
    *,
    sandbox: Sandbox,
    cwd: Path,
    base_url: str,
    resume: str | None = None,
    session_id: str | None = None,
    fork_session: bool = False,
    checkpointing: bool = False,
    extra_args: Sequence[str] = (),
    timeout: float = DEFAULT_TIMEOUT,
    check: bool = True,
    clock: datetime | None = None,
    tz: str = "UTC",
    extra_env: Mapping[str, str] | None = None,
    allowed_tools: str | None = ALLOWED_TOOLS,
) -> CLIRun:
    """One ``claude -p <prompt> --output-format json`` run. ``check``: raise
    ``ClaudeRunError`` on a non-zero exit or an error result. ``allowed_tools``: the
    ``--allowedTools`` value (None: no such flag, Claude Code's defaults alone)."""
    args = [str(cli.path), "-p", prompt, "--output-format", "json"]
    if allowed_tools is not None:
        args += ["--allowedTools", allowed_tools]
    if resume is not None:
        args += ["--resume", resume]
    if session_id is not None:
        args += ["--session-id", session_id]
    if fork_session:
        args.append("--fork-session")
    args += list(extra_args)
    started = time.monotonic()
    # A new session so a timeout can kill the CLI together with the tools it spawned.
    process = subprocess.Popen(
        args,
        cwd=cwd,
        env=sandbox.env(
            base_url,
            checkpointing=checkpointing,
            extra={**(clock_env(clock, tz) if clock else {}), **(extra_env or {})},
        ),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        raise ClaudeRunError(_describe(f"timed out after {timeout:g}s", args, stdout, stderr)) from None
    run = CLIRun(
        tuple(args), process.returncode, stdout, stderr, time.monotonic() - started, _parse_result(stdout)
    )
    if check and (run.returncode != 0 or run.result.get("is_error") is True):
        raise ClaudeRunError(_describe(f"exited {run.returncode}", args, stdout, stderr))
    return run


def _parse_result(stdout: str) -> dict[str, Any]:
    # --output-format json prints one JSON object; take the last line that is one.
    for line in reversed(stdout.strip().splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return {}


def _describe(what: str, args: Sequence[str], stdout: str, stderr: str) -> str:
    shown = " ".join(args[1:4])
    return (
        f"claude {shown} ... {what}\n--- stdout (tail)\n{stdout[-2000:]}\n--- stderr (tail)\n{stderr[-2000:]}"
    )
