"""The compatibility bench of the API's request rules, with the real CLIs (issue 14).

For each shape of `tests.damage.API_KINDS`, applied to the session each pinned CLI just
generated (one per CLI, reused), at a pinned clock: the CLI resumes the damaged file
against the strict stand-in (does it survive alone?), then the file ``tt repair`` wrote
(accepted, and every block of the undamaged session's request is sent but those of the
edited records); and the conversation ``tt resume`` builds from the damaged file is
accepted by the same strict rules. `rows` gives the README table
(``python benchmarks/api_rules_vs_claude.py``).
"""

from __future__ import annotations

import json
import tempfile
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.damage import API_KINDS
from tests.model.test_api_rules import tt_resume_strict
from tests.support.claude_cli import ClaudeRunError, Sandbox, run_claude
from tests.support.oracle import DEFAULT_PROBE, _is_probe_turn, conversation_blocks
from tests.support.sessions import GeneratedSession, stage_config
from tests.support.standin import ApiError, StandIn
from transcript_tools.repair.files import repair_file

pytestmark = pytest.mark.claude

#: The CLIs run at this instant (libfaketime), so the verdict is the same on any day.
CLOCK = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Outcome:
    accepted: bool
    error: str  # the 400's message when refused
    messages: list[dict]


def resume_strict(session: GeneratedSession, data: bytes) -> Outcome:
    """The CLI resumes a copy of ``session`` whose transcript is ``data``, against the
    strict stand-in: the first main-conversation request, and whether it was accepted."""
    with tempfile.TemporaryDirectory(prefix="tt-strict-") as scratch:
        root = Path(scratch)
        config = stage_config(session.config_dir, root / "claude-config")
        next(config.glob(f"projects/*/{session.session_id}.jsonl")).write_bytes(data)
        sandbox = Sandbox.create(root, config_dir=config)
        with StandIn(strict=True) as api:
            said = ""
            try:
                run = run_claude(
                    session.cli,
                    DEFAULT_PROBE,
                    sandbox=sandbox,
                    cwd=session.cwd,
                    base_url=api.base_url,
                    resume=session.session_id,
                    clock=CLOCK,
                    check=False,
                )
                said = str(run.result.get("result") or run.stderr.strip() or f"exit {run.returncode}")
            except ClaudeRunError as e:
                said = str(e).splitlines()[0] if str(e) else "timed out"
            ex = [
                e for e in api.exchanges if e.request.is_messages and _is_probe_turn(e.request, DEFAULT_PROBE)
            ]
    if not ex:
        return Outcome(False, f"no request sent; the CLI said: {said.splitlines()[0] if said else ''}", [])
    e = ex[0]
    if isinstance(e.reply, ApiError):
        return Outcome(False, e.reply.message, e.request.messages)
    return Outcome(True, "", e.request.messages)


def tt_resume_accepted(data: bytes) -> bool:
    """``tt resume`` on the damaged file, end to end against the strict stand-in."""
    with tempfile.TemporaryDirectory(prefix="tt-strict-") as scratch:
        refused, code, _ = tt_resume_strict(data, Path(scratch))
    return not refused and code == 0


@dataclass(frozen=True, slots=True)
class Row:
    kind: str
    version: str
    alone: Outcome
    repaired: Outcome
    lost: list  # blocks of the undamaged request the repaired one lacks (edited records' aside)
    tt_resume: bool
    alone_lost: list  # ... that the damaged file's request lacks, when the CLI survived it
    kept: int  # blocks of the undamaged request outside the edited records

    def cell_alone(self) -> str:
        if not self.alone.accepted and self.alone.error.startswith("no request"):
            return f'**fails before sending**: "{_short(self.alone.error.split("the CLI said: ", 1)[-1])}"'
        if not self.alone.accepted:
            return f"**400** {_code(_short(self.alone.error))}"
        return "accepted, " + _blocks(self.kept, self.alone_lost, self.alone.messages)

    def cell_repaired(self) -> str:
        if not self.repaired.accepted:
            return f"**400** {_code(_short(self.repaired.error))}"
        return "accepted, " + _blocks(self.kept, self.lost, self.repaired.messages)


def _blocks(kept: int, lost: list, messages: list[dict]) -> str:
    """sent/expected of the blocks outside the edited records, and (+n) the other blocks
    sent: the edited records' own (and tt's texts for them)."""
    got = kept - len(lost)
    n = f"{got}/{kept}" if not lost else f"**{got}/{kept}**"
    return f"{n} (+{len(conversation_blocks(messages)) - got})"


def _code(text: str) -> str:
    """A markdown code span, also for text holding backticks."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _short(message: str) -> str:
    if message.startswith("messages") and ": " in message:
        message = message.split(": ", 1)[1]  # the position, e.g. messages.11.content.1, left out
    return message if len(message) <= 80 else message[:77] + "..."


_BASE: dict[str, list] = {}


def measure(session: GeneratedSession, kind: str) -> Row:
    src = session.transcript.read_bytes()
    if session.session_id not in _BASE:
        base = resume_strict(session, src)
        assert base.accepted, base.error
        _BASE[session.session_id] = conversation_blocks(base.messages)
    d = API_KINDS[kind](src)
    alone = resume_strict(session, d.data)
    with tempfile.TemporaryDirectory(prefix="tt-strict-") as scratch:
        p = Path(scratch) / f"{session.session_id}.jsonl"
        p.write_bytes(d.data)
        repair_file(p, in_place=True, now="2026-12-01T12:00:00.000Z", new_id=lambda: str(uuid.uuid4()))
        fixed = p.read_bytes()
    repaired = resume_strict(session, fixed)
    edited = _edited_blocks(src, set(d.destroyed))
    got = conversation_blocks(repaired.messages)
    keep = [b for b in _BASE[session.session_id] if b not in edited]
    lost = [b for b in keep if b not in got]
    alone_got = conversation_blocks(alone.messages)
    alone_lost = [b for b in keep if b not in alone_got] if alone.accepted else []
    return Row(
        kind, session.cli.version, alone, repaired, lost, tt_resume_accepted(d.data), alone_lost, len(keep)
    )


def _edited_blocks(src: bytes, uuids: set[str]) -> list:
    out: list = []
    for line in src.splitlines():
        rec = json.loads(line)
        if rec.get("uuid") in uuids and isinstance(rec.get("message"), dict):
            m = rec["message"]
            out.extend(conversation_blocks([{"role": m.get("role"), "content": m.get("content")}]))
    return out


@pytest.mark.parametrize("kind", sorted(API_KINDS))
def test_repaired_file_is_accepted_and_tt_resume_never_sends_a_refused_request(
    kind: str, generated_session: GeneratedSession, faketime: None
) -> None:
    row = measure(generated_session, kind)
    assert row.tt_resume, f"{kind}: tt resume would send a request the API refuses"
    assert row.repaired.accepted, (
        f"{kind}: Claude Code {row.version} on the repaired file: {row.repaired.error}"
    )
    assert row.lost == [], row.lost
    # What the CLI does alone is measured, not asserted (the README table):
    assert row.alone.accepted or row.alone.error
