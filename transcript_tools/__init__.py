"""tt — transcript_tools: read, check, repair, shrink, branch and continue Claude Code sessions.

The library never prints and never exits; `transcript_tools.cli` is the command line.
Public names are imported on first use (PEP 562), so ``tt resume --dry-run`` and
``tt ls`` do not pay for modules they never touch.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "validate_path": "validate.files",
    "CODES": "model.diagnostics",
    "Diagnostic": "model.diagnostics",
    "Severity": "model.diagnostics",
    "ApiError": "model.errors",
    "CredentialsError": "model.errors",
    "NotFound": "model.errors",
    "TranscriptTooLarge": "model.errors",
    "TTError": "model.errors",
    "Unreadable": "model.errors",
    "UsageError": "model.errors",
    "WriteFailed": "model.errors",
    "Entry": "model.lines",
    "MAX_TRANSCRIPT_READ_BYTES": "edge.reader",
    "Transcript": "edge.reader",
    "iter_lines": "edge.reader",
    "load": "edge.reader",
    "SessionRef": "edge.claude_dir",
    "resolve": "edge.claude_dir",
    "Report": "validate.core",
    "load_session": "edge.loader",
    "Session": "model.session",
    # One function per verb (`api`), shaped after the Agent SDK's session functions.
    "validate_session": "api",
    "repair_session": "api",
    "redact_session": "api",
    "compact_session": "api",
    "fork_session": "api",
    "rewind_session": "api",
    "resume_request": "api",
    "export_session": "api",
    "import_session": "api",
    "list_sessions": "api",
    "search_sessions": "api",
    "get_session_stats": "api",
    "rename_session": "api",
    "tag_session": "api",
    "delete_session": "api",
    "doctor_session": "api",
    "ExportResult": "api",
    "ForkResult": "api",
    "RecordResult": "api",
    "ResumeRequest": "api",
    "RewindResult": "api",
    # The Agent SDK's query(), on tt's engine (`resume.files_query`): a session continued from Python.
    "query": "resume.files_query",
    "Query": "resume.files_query",
    "QueryOptions": "resume.files_query",
    "AssistantMessage": "resume.files_query",
    "UserMessage": "resume.files_query",
    "SystemMessage": "resume.files_query",
    "ResultMessage": "resume.files_query",
    "TextBlock": "resume.files_query",
    "ThinkingBlock": "resume.files_query",
    "ToolUseBlock": "resume.files_query",
    "ToolResultBlock": "resume.files_query",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str) -> Any:
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'transcript_tools' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
