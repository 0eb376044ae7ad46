"""``request-too-large`` with the real CLIs (issue 14): a freshly generated session with
one tool result grown to 33 MB (`tests.damage.request_too_large`). Resumed alone, the
CLI's request is over the API's 32 MB and the strict stand-in answers it the API's 413;
after ``tt repair`` (an offline compaction appended, nothing
removed) both pinned CLIs resume from the compaction and are accepted, the 33 MB result
summarised, not sent."""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path

import orjson
import pytest

from tests.damage import request_too_large
from tests.model.test_api_rules_claude import resume_strict
from tests.support.sessions import GeneratedSession
from transcript_tools.repair.files import repair_file

pytestmark = pytest.mark.claude

ROW = "build step ok: compiled module with 0 warnings and 0 errors"


def test_refused_alone_and_accepted_after_repair(generated_session: GeneratedSession, faketime: None) -> None:
    s = generated_session
    d = request_too_large(s.transcript.read_bytes())
    alone = resume_strict(s, d.data)
    # Both pinned CLIs send the whole 33 MB body and get the API's 413 (seen: 2.1.332, 2.1.197).
    assert not alone.accepted and alone.error == "Request exceeds the maximum size"
    with tempfile.TemporaryDirectory(prefix="tt-rtl-") as scratch:
        p = Path(scratch) / "s.jsonl"
        p.write_bytes(d.data)
        r = repair_file(p, in_place=True, now="2026-12-01T12:00:00.000Z", new_id=lambda: str(uuid.uuid4()))
        assert [a.code for a in r.actions] == ["request-too-large"] and not r.remaining
        fixed = p.read_bytes()
    assert fixed.startswith(d.data)  # nothing removed: a compaction appended
    after = resume_strict(s, fixed)
    assert after.accepted, after.error
    sent = orjson.dumps(after.messages)
    assert len(sent) < 1_000_000 and ROW.encode() not in sent
