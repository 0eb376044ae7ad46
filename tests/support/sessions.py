"""Real Claude Code sessions, made here by driving the real CLI through a script.

``generate_session(cli, root)`` creates ``root/demo-app`` (the session's cwd, holding
``app.py``), starts a stand-in with the default policy and runs one ``claude -p`` per
prompt of ``SCRIPT`` (the first with ``--session-id``, the rest with ``--resume``):
plain turns, Read/Bash/Write/Edit/Glob/Grep tool calls, a subagent through the Agent tool,
``/compact`` (a prompt like any other in ``-p`` mode), and turns after it. File
checkpointing is on, so ``file-history/`` is written too.

It returns a ``GeneratedSession``: paths and ids only, plus the API requests the CLI made.
Callers share one generated session (session-scoped fixtures), so they must not change
it: ``copy_to(dest)`` gives a private copy of the config dir to mutate.
Invariant: a failed or timed-out CLI run raises ``ClaudeRunError``; a half-made session is
never returned.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from tests.support.claude_cli import ClaudeCLI, ClaudeRunError, Sandbox, run_claude
from tests.support.standin import RecordedRequest, StandIn
from tests.support.trees import stage

# {cwd} is replaced by the session's working directory.
SCRIPT: tuple[str, ...] = (
    "Project kickoff: we work on app.py",
    'TOOL:Read {"file_path": "{cwd}/app.py"}',
    'TOOL:Bash {"command": "python3 app.py", "description": "run app"}',
    "Plain question about the design?",
    'TOOL:Write {"file_path": "{cwd}/util.py", "content": "def add(a, b):\\n    return a + b\\n"}',
    'TOOL:Edit {"file_path": "{cwd}/app.py", "old_string": "hello", "new_string": "hello world"}',
    'TOOL:Glob {"pattern": "*.py"}',
    'TOOL:Grep {"pattern": "def", "path": "{cwd}"}',
    'TOOL:Agent {"description": "explore", "prompt": "List the python files", "subagent_type": "general-purpose"}',
    "/compact",
    "After compaction, turn 1",
    'TOOL:Bash {"command": "ls", "description": "list"}',
    'TOOL:Read {"file_path": "{cwd}/util.py"}',
    "After compaction, turn 2",
)


def project_folder_name(cwd: Path | str) -> str:
    """Claude Code's project folder for a cwd: every char outside [A-Za-z0-9] -> '-'.
    (Paths whose name passes 200 chars get a hash suffix; docs/format.md §1.1. Not needed here.)"""
    return re.sub(r"[^A-Za-z0-9]", "-", str(cwd))


@dataclass(frozen=True, slots=True)
class GeneratedSession:
    cli: ClaudeCLI
    home: Path
    config_dir: Path
    cwd: Path
    session_id: str
    prompts: tuple[str, ...]
    seconds: float  # wall time of the generation
    requests: tuple[RecordedRequest, ...]  # every API request the CLI made, in order

    @property
    def project_dir(self) -> Path:
        return self.config_dir / "projects" / project_folder_name(self.cwd)

    @property
    def transcript(self) -> Path:
        return self.project_dir / f"{self.session_id}.jsonl"

    @property
    def session_dir(self) -> Path:
        """``<project>/<session id>/``: ``subagents/`` lives here."""
        return self.project_dir / self.session_id

    def copy_to(self, dest: Path) -> GeneratedSession:
        """A private copy of the config dir under ``dest`` (same cwd and session id)."""
        return replace(self, config_dir=stage_config(self.config_dir, dest / "claude-config"))


def stage_config(src: Path, dest: Path, *, recorded_cwd: str | None = None, cwd: Path | None = None) -> Path:
    """Copy a Claude config dir (``projects/``, ``file-history/``, ...) to ``dest``, writable.

    With ``recorded_cwd`` and ``cwd``, the project folder of ``recorded_cwd`` is renamed to
    the one of ``cwd``, so the CLI run in ``cwd`` finds the session: how a shipped fixture
    recorded in ``/home/dev/demo-app`` is resumed from a temp dir (checked with 2.1.197 and
    2.1.332: they look the session up by the folder of the current cwd and do not mind
    the ``cwd`` fields inside)."""
    stage(src, dest)
    if recorded_cwd is not None and cwd is not None:
        projects = dest / "projects"
        (projects / project_folder_name(recorded_cwd)).rename(projects / project_folder_name(cwd))
    return dest


def generate_session(
    cli: ClaudeCLI,
    root: Path,
    *,
    prompts: Sequence[str] = SCRIPT,
    checkpointing: bool = True,
    timeout: float = 90.0,
) -> GeneratedSession:
    started = time.monotonic()
    root.mkdir(parents=True, exist_ok=True)
    sandbox = Sandbox.create(root)
    # resolve(): the project folder name comes from the real path of the cwd.
    cwd = (root / "demo-app").resolve()
    cwd.mkdir()
    (cwd / "app.py").write_text("print('hello')\n")
    session_id = str(uuid.uuid4())
    # str.replace, not str.format: the prompts are full of JSON braces.
    expanded = tuple(p.replace("{cwd}", str(cwd)) for p in prompts)
    with StandIn() as api:
        for i, prompt in enumerate(expanded):
            run_claude(
                cli,
                prompt,
                sandbox=sandbox,
                cwd=cwd,
                base_url=api.base_url,
                session_id=session_id if i == 0 else None,
                resume=None if i == 0 else session_id,
                checkpointing=checkpointing,
                timeout=timeout,
            )
        requests = tuple(api.requests)
        if api.errors:
            raise ClaudeRunError(f"the stand-in failed while serving {cli}: {api.errors!r}")
    return GeneratedSession(
        cli=cli,
        home=sandbox.home,
        config_dir=sandbox.config_dir,
        cwd=cwd,
        session_id=session_id,
        prompts=expanded,
        seconds=time.monotonic() - started,
        requests=requests,
    )
