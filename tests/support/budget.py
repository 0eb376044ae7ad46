"""How much of ``tt compact --keep-tokens N`` the request after a real resume carries.

``measure(cli, budgets, root, mb=...)`` has the real CLI write a session (`BUDGET_SCRIPT`
through `sessions.generate_session`: plain turns and tool calls with outputs of a few
hundred to a few thousand tokens, no ``/compact``; every ``claude -p`` run writes its
attachment records — prompt snapshots holding the system prompt and tool list, skill and
agent listings, environment ...), grows it to ``mb`` MB beside it (`benchmarks/grow.py`:
fresh uuids and ids per copy, chained into one long conversation), then,
per budget, runs ``tt compact FILE --keep-tokens N -o <project folder>`` as a user would,
resumes the output with the real CLI (`oracle.resume_request`) and counts the tokens of
the kept messages in the request it sends (`kept_tokens`).

What counts as "kept messages": every block of the ``user``/``assistant`` messages except
the compact summary (the text opening "This session is being continued") and the probe;
``role: "system"`` messages and ``<system-reminder>`` texts are Claude Code's own runtime
renderings on every request (what the oracle drops too), not transcript content. The
tokenizer is tt's (`tokens.TokenCounter`), with `costs.MESSAGE_OVERHEAD` per message
that holds a kept block — the same units as ``--keep-tokens``.

Used by tests/compact/test_compact_budget.py (a smaller file) and benchmarks/bench_compact_budget.py
(the README's table, at >= 4 MB).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from tests.support.claude_cli import ClaudeCLI
from tests.support.cli import TT
from tests.support.oracle import resume_request
from tests.support.paths import ROOT
from tests.support.sessions import generate_session, project_folder_name
from transcript_tools.edge.tokenizer import TokenCounter
from transcript_tools.model.costs import MESSAGE_OVERHEAD

#: Tool outputs from ~300 to ~2,500 tokens, so the cut can land near any budget.
#: {cwd} is the session's cwd. No /compact: the grown file is one conversation.
BUDGET_SCRIPT = (
    "Project kickoff: we work on app.py",
    'TOOL:Bash {"command": "seq 1 3000 > {cwd}/numbers.txt", "description": "make data"}',
    'TOOL:Read {"file_path": "{cwd}/numbers.txt", "limit": 400}',
    "Plain question about the design?",
    'TOOL:Edit {"file_path": "{cwd}/app.py", "old_string": "hello", "new_string": "hello world"}',
    'TOOL:Read {"file_path": "{cwd}/numbers.txt", "offset": 401, "limit": 100}',
    'TOOL:Grep {"pattern": "def|print", "path": "{cwd}"}',
    "Last turn: what is next?",
)
SUMMARY_OPENING = "This session is being continued"
PROBE = "Probe after tt compact --keep-tokens"
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)


@dataclass(frozen=True, slots=True)
class Row:
    budget: int
    #: tokens of the kept messages in the request the CLI sent after resuming the output
    sent: int
    #: tt's own estimate of the kept messages (its report's ``tokens.kept``)
    planned: int
    #: messages tt kept verbatim (its report's ``messages.kept``)
    kept_messages: int

    @property
    def ratio(self) -> float:
        return self.sent / self.budget


def grown_session(cli: ClaudeCLI, root: Path, mb: float) -> tuple[Path, Path, str]:
    """(config dir, cwd, session id) of a session ``cli`` wrote (`BUDGET_SCRIPT`), grown
    to ``mb`` MB under a new id in the same project folder."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from grow import grow
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    s = generate_session(cli, root, prompts=BUDGET_SCRIPT, checkpointing=False)
    scratch = root / "grown.jsonl"
    grow(s.transcript, scratch, int(mb * 1_000_000))
    with scratch.open("rb") as f:
        sid = next(r["sessionId"] for r in map(orjson.loads, f) if "sessionId" in r)
    scratch.rename(s.project_dir / f"{sid}.jsonl")
    return s.config_dir, s.cwd, sid


def kept_tokens(
    messages: Iterable[Mapping[str, Any]], probe: str = PROBE, counter: TokenCounter | None = None
) -> int:
    """Tokens of the kept messages in a request (module docstring)."""
    c = counter or TokenCounter()
    total = 0
    for m in messages:
        if m.get("role") not in ("user", "assistant"):
            continue
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        n = 0
        kept = False
        for b in blocks:
            if not isinstance(b, Mapping):
                continue
            if b.get("type") == "text":
                text = _REMINDER.sub("", str(b.get("text", ""))).strip()
                if not text or text.startswith(SUMMARY_OPENING) or text == probe:
                    continue
                b = {**b, "text": text}
            n += c.block(b).tokens
            kept = True
        total += n + (MESSAGE_OVERHEAD if kept else 0)
    return total


def tt_compact(path: Path, budget: int, out: Path) -> dict[str, Any]:
    """``tt compact PATH --keep-tokens N -o OUT --json``, as a user runs it."""
    r = subprocess.run(
        [
            *TT,
            "compact",
            str(path),
            "--keep-tokens",
            str(budget),
            "-o",
            str(out),
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    if r.returncode != 0:
        raise AssertionError(f"tt compact exited {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


def measure(cli: ClaudeCLI, budgets: Sequence[int], root: Path, *, mb: float) -> list[Row]:
    """One row per budget (module docstring): one ``tt compact`` and one CLI resume each."""
    return measure_on(cli, *grown_session(cli, root, mb), budgets)


def measure_on(cli: ClaudeCLI, config: Path, cwd: Path, sid: str, budgets: Sequence[int]) -> list[Row]:
    """`measure` on a session already grown (`grown_session`); it is only read."""
    project = config / "projects" / project_folder_name(cwd)
    rows = []
    for budget in budgets:
        report = tt_compact(project / f"{sid}.jsonl", budget, project)
        if not report.get("new_session_id"):
            raise AssertionError(
                f"tt compact --keep-tokens {budget} wrote nothing: {report['notes']} (grow the session more)"
            )
        request = resume_request(cli, config, report["new_session_id"], cwd, PROBE)
        rows.append(
            Row(budget, kept_tokens(request.messages), report["tokens"]["kept"], report["messages"]["kept"])
        )
    return rows
