"""`tt validate` against what real Claude Code writes today (the compatibility bench).

Pins tt's model of the current format to the real writer: a session the pinned CLIs
just wrote — tools, a subagent, /compact and turns after it — validates with no error
and no warning, main file and subagent files alike, through the library and the CLI.
"""

from __future__ import annotations

import json

import pytest

from tests.support.cli import tt
from transcript_tools.edge import claude_dir as store
from transcript_tools.edge.reader import load
from transcript_tools.model.session import Session
from transcript_tools.validate.files import validate_path

pytestmark = pytest.mark.claude


def test_generated_session_validates_clean(generated_session) -> None:  # type: ignore[no-untyped-def]
    s = generated_session
    files = [s.transcript, *store.subagent_files(s.transcript)]
    assert len(files) >= 2, "the script spawns a subagent"
    for f in files:
        r = validate_path(f)
        assert [d.to_dict() for d in r.diagnostics] == [], f
        assert r.entries > 0


def test_generated_session_chain_has_the_compaction_and_the_turns_after_it(generated_session) -> None:  # type: ignore[no-untyped-def]
    sess = Session.from_entries(load(generated_session.transcript).entries)
    conv = sess.conversation()
    assert conv[0].is_compact_boundary
    assert conv[1].record.get("isCompactSummary") is True
    # The active leaf is the last main-chain message of the file.
    last_msg = [
        e
        for e in load(generated_session.transcript).entries
        if e.type in ("user", "assistant") and not e.is_sidechain
    ][-1]
    assert conv[-1].uuid == last_msg.uuid


def test_cli_validates_the_session_by_id(generated_session) -> None:  # type: ignore[no-untyped-def]
    s = generated_session
    r = tt("validate", "--json", s.session_id, config=s.config_dir, width=None)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert doc["errors"] == 0 and doc["warnings"] == 0
    assert len(doc["files"]) >= 2
