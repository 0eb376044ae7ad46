"""The public surface of ``transcript_tools`` is pinned (as httpx's
tests/test_exported_members.py pins its own): adding or removing a public name is a
decision this test makes visible. Every name resolves, every verb and
its report class has a docstring, and importing the package imports none of the verbs' modules."""

from __future__ import annotations

import inspect
import subprocess
import sys

import transcript_tools

PUBLIC = {
    "__version__",
    # readers and the shared model
    "CODES",
    "Diagnostic",
    "Entry",
    "MAX_TRANSCRIPT_READ_BYTES",
    "Report",
    "Session",
    "SessionRef",
    "Severity",
    "Transcript",
    "iter_lines",
    "load",
    "load_session",
    "resolve",
    "validate_path",
    # the exception tree (each carries the CLI's exit code)
    "ApiError",
    "CredentialsError",
    "NotFound",
    "TTError",
    "TranscriptTooLarge",
    "Unreadable",
    "UsageError",
    "WriteFailed",
    # one function per verb (transcript_tools/api.py) and the reports only they return
    "validate_session",
    "repair_session",
    "redact_session",
    "compact_session",
    "fork_session",
    "rewind_session",
    "resume_request",
    "export_session",
    "import_session",
    "list_sessions",
    "search_sessions",
    "get_session_stats",
    "rename_session",
    "tag_session",
    "delete_session",
    "doctor_session",
    "ExportResult",
    "ForkResult",
    "RecordResult",
    "ResumeRequest",
    "RewindResult",
    # query(), shaped after the Agent SDK's, and the messages it yields
    "query",
    "Query",
    "QueryOptions",
    "AssistantMessage",
    "UserMessage",
    "SystemMessage",
    "ResultMessage",
    "TextBlock",
    "ThinkingBlock",
    "ToolUseBlock",
    "ToolResultBlock",
}

VERBS = {
    "validate_session",
    "repair_session",
    "redact_session",
    "compact_session",
    "fork_session",
    "rewind_session",
    "resume_request",
    "export_session",
    "import_session",
    "list_sessions",
    "search_sessions",
    "get_session_stats",
    "rename_session",
    "tag_session",
    "delete_session",
    "doctor_session",
}


def test_all_is_pinned() -> None:
    assert set(transcript_tools.__all__) == PUBLIC
    assert sorted(transcript_tools.__all__) == transcript_tools.__all__


def test_every_public_name_resolves() -> None:
    for name in transcript_tools.__all__:
        assert getattr(transcript_tools, name) is not None, name


def test_every_verb_and_its_report_is_documented() -> None:
    for name in VERBS | {"ExportResult", "ForkResult", "RecordResult", "ResumeRequest", "RewindResult"}:
        doc = inspect.getdoc(getattr(transcript_tools, name)) or ""
        assert len(doc.split()) >= 10, name


def test_verbs_take_a_session_or_scope_first_and_are_keyword_only_after() -> None:
    # The Agent SDK's shape: the session (or the search pattern, the archive) first; the
    # options by keyword, so adding one never breaks a caller.
    for name in VERBS:
        params = list(inspect.signature(getattr(transcript_tools, name)).parameters.values())
        positional = [p for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
        assert 1 <= len(positional) <= 2, name
        assert all(p.kind is p.KEYWORD_ONLY for p in params[len(positional) :]), name
        assert any(p.name == "directory" for p in params) or name == "import_session", name


def test_importing_the_package_imports_no_verb() -> None:
    # `tt ls` and `tt resume --dry-run` start fast only while the package's __init__ stays
    # empty of imports: the names load on first use (PEP 562).
    code = "import sys, transcript_tools; print(sorted(m for m in sys.modules if m.startswith('transcript_tools')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['transcript_tools']"
