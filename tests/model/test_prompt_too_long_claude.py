"""A persisted "Prompt is too long", with the real CLIs (issue 14).

1. What the CLIs write: against a stand-in that refuses every request as past the
   context window, both pinned CLIs end the turn with an ``isApiErrorMessage``
   assistant record, model ``<synthetic>``, text "Prompt is too long", the API's body in
   ``errorDetails`` (after failing compaction attempts of their own); `prompt_too_long`
   (tests/damage.py) writes that record.
2. What they send next: neither CLI sends the error record again; the history before it
   is what the API refuses, every time. On a session grown past the window the strict
   stand-in refuses each CLI's request, or the CLI fails on its own; after ``tt repair``
   (an offline compaction appended) both are accepted and the refused prompt is sent.
3. What the CLIs write when the API refuses a turn as too long once and the compaction
   that follows succeeds: a ``compact_boundary`` with ``trigger: auto``, then the
   ``isCompactSummary`` line, then the turn, answered (no error record).
   ``tt resume`` on the damaged file appends tt's compaction in that form before its turn; the file it leaves resumes with
   each CLI against the strict stand-in, and keeps every byte it had.
"""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path

import orjson
import pytest

from tests.damage import prompt_too_long
from tests.model.test_api_rules import tt_resume_strict
from tests.model.test_api_rules_claude import CLOCK, resume_strict
from tests.support.claude_cli import ClaudeRunError, Sandbox, run_claude
from tests.support.policy import is_main_turn
from tests.support.sessions import GeneratedSession, stage_config
from tests.support.standin import ApiError, StandIn
from transcript_tools.model.api_rules import prompt_too_long as persisted
from transcript_tools.repair.files import repair_file

pytestmark = pytest.mark.claude


def test_both_clis_persist_the_error_and_never_send_it_again(
    generated_session: GeneratedSession, faketime: None
) -> None:
    s = generated_session
    src = s.transcript.read_bytes()
    refuse = ApiError(
        400, "prompt is too long: 205123 tokens > 200000 maximum", error_type="invalid_request_error"
    )
    with tempfile.TemporaryDirectory(prefix="tt-ptl-") as scratch:
        root = Path(scratch)
        config = stage_config(s.config_dir, root / "claude-config")
        t = next(config.glob(f"projects/*/{s.session_id}.jsonl"))
        with StandIn() as api:
            # Every request refused, compaction attempts included (the history cannot shrink).
            api.script(*[refuse] * 60, match=lambda r: r.is_messages)
            try:
                run_claude(
                    s.cli,
                    "Turn that hits the limit",
                    sandbox=Sandbox.create(root, config_dir=config),
                    cwd=s.cwd,
                    base_url=api.base_url,
                    resume=s.session_id,
                    clock=CLOCK,
                    check=False,
                )
            except ClaudeRunError:
                pass
        written = t.read_bytes()
    new = [orjson.loads(x) for x in written[len(src) :].splitlines()]
    errors = [r for r in new if r.get("type") == "assistant" and persisted(r) is not None]
    assert errors, [r.get("type") for r in new]
    e = errors[-1]
    assert e["message"]["model"] == "<synthetic>"
    assert persisted(e) == "prompt is too long: 205123 tokens > 200000 maximum"
    # Resumed against the plain strict stand-in (no window problem: a small session), the
    # CLI leaves the error record out: the refused prompt and the new one are sent.
    after = resume_strict(s, written)
    assert after.accepted, after.error
    sent = orjson.dumps(after.messages).decode()
    assert "Prompt is too long" not in sent and "Turn that hits the limit" in sent


def test_a_session_past_the_window_is_refused_alone_and_accepted_after_repair(
    generated_session: GeneratedSession, faketime: None
) -> None:
    s = generated_session
    d = prompt_too_long(s.transcript.read_bytes())
    alone = resume_strict(s, d.data)
    assert not alone.accepted  # a 400 "prompt is too long", or the CLI gave up first
    with tempfile.TemporaryDirectory(prefix="tt-ptl-") as scratch:
        p = Path(scratch) / "s.jsonl"
        p.write_bytes(d.data)
        repair_file(p, in_place=True, now="2026-12-01T12:00:00.000Z", new_id=lambda: str(uuid.uuid4()))
        fixed = p.read_bytes()
    assert fixed.startswith(d.data)  # nothing removed: a compaction appended
    after = resume_strict(s, fixed)
    assert after.accepted, after.error
    assert "Now summarise every failure in that log." in orjson.dumps(after.messages).decode()


def test_the_file_tt_resume_compacted_resumes_with_the_cli(
    generated_session: GeneratedSession, faketime: None
) -> None:
    s = generated_session
    d = prompt_too_long(s.transcript.read_bytes())
    with tempfile.TemporaryDirectory(prefix="tt-ptl-") as scratch:
        refused, code, _ = tt_resume_strict(d.data, Path(scratch))
        assert refused == [] and code == 0
        resumed = next(Path(scratch).glob("*.jsonl")).read_bytes()
    assert resumed.startswith(d.data)  # nothing removed: the compaction and tt's turn appended
    after = resume_strict(s, resumed)
    assert after.accepted, after.error
    sent = orjson.dumps(after.messages).decode()
    # The CLI continues from tt's compaction: its summary, the refused prompt, tt's turn.
    assert "Now summarise every failure in that log." in sent and "Go on" in sent
    assert "test_case_013999" not in sent  # the 1 MB result is summarised, not sent again


def test_the_cli_compacts_a_refused_turn_with_trigger_auto(
    generated_session: GeneratedSession, faketime: None
) -> None:
    """The form `tt resume` writes (resume/files_setup._compact_too_long) is the CLI's own
    for this case: refused once as too long, it compacts (trigger auto) and goes on."""
    s = generated_session
    src = s.transcript.read_bytes()
    refuse = ApiError(
        400, "prompt is too long: 205123 tokens > 200000 maximum", error_type="invalid_request_error"
    )
    with tempfile.TemporaryDirectory(prefix="tt-ptl-") as scratch:
        root = Path(scratch)
        config = stage_config(s.config_dir, root / "claude-config")
        t = next(config.glob(f"projects/*/{s.session_id}.jsonl"))
        with StandIn() as api:
            api.script(refuse, match=is_main_turn)  # once; the compaction and the retry answered
            run_claude(
                s.cli,
                "Turn that hits the limit",
                sandbox=Sandbox.create(root, config_dir=config),
                cwd=s.cwd,
                base_url=api.base_url,
                resume=s.session_id,
                clock=CLOCK,
                check=False,
            )
        written = t.read_bytes()
    new = [orjson.loads(x) for x in written[len(src) :].splitlines()]
    kinds = [(r.get("type"), r.get("subtype")) for r in new]
    b = kinds.index(("system", "compact_boundary"))
    assert new[b]["compactMetadata"]["trigger"] == "auto"
    summary = next(r for r in new[b:] if r.get("isCompactSummary") is True)
    assert summary["type"] == "user" and summary["isVisibleInTranscriptOnly"] is True
    assert not [r for r in new if persisted(r) is not None]
    assert any(r.get("type") == "assistant" for r in new[b:])
