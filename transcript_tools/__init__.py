"""tt — transcript_tools: read, check, repair, shrink, branch and continue Claude Code sessions.

The library never prints and never exits; `transcript_tools.cli` is the command line.
"""

from __future__ import annotations

from .check import validate_path
from .diagnostics import CODES, Diagnostic, Severity
from .errors import (
    ApiError,
    CredentialsError,
    NotFound,
    TranscriptTooLarge,
    TTError,
    Unreadable,
    UsageError,
    WriteFailed,
)
from .lines import Entry
from .reader import MAX_TRANSCRIPT_READ_BYTES, Transcript, iter_lines, load
from .store import SessionRef, resolve
from .validate import Report

__version__ = "0.1.0"

__all__ = [
    "ApiError",
    "CODES",
    "CredentialsError",
    "Diagnostic",
    "Entry",
    "MAX_TRANSCRIPT_READ_BYTES",
    "NotFound",
    "Report",
    "SessionRef",
    "Severity",
    "TTError",
    "Transcript",
    "TranscriptTooLarge",
    "Unreadable",
    "UsageError",
    "WriteFailed",
    "iter_lines",
    "load",
    "resolve",
    "validate_path",
    "__version__",
]
