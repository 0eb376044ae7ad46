"""Diagnostics: problems found in a transcript, as values.

A `Diagnostic` names one problem with a stable `code` (documented in the README and in
`CODES` below), a severity, where it is (`path:line`, byte offset, uuid), a message for
people, and the `tt repair` fix that resolves it (``None`` when repair leaves it alone).

Invariants:
- Codes never change meaning once released; new codes are added, old ones retired.
- Every code belongs to exactly one family: ``line`` (bytes that are not one whole JSON
  object), ``schema`` (a record that does not fit the entry schemas), ``chain`` (the
  uuid/parentUuid graph) or ``api`` (what the Messages API would reject on resume).
- Pure: no I/O, no printing.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Severity(str, Enum):  # noqa: UP042 (StrEnum would change str(member): no behaviour change here)
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, slots=True)
class Code:
    code: str
    family: str
    severity: Severity
    fix: str | None
    summary: str


def _c(code: str, family: str, severity: Severity, fix: str | None, summary: str) -> Code:
    return Code(code, family, severity, fix, summary)


E, W, I = Severity.ERROR, Severity.WARNING, Severity.INFO  # noqa: E741 (the catalogue's one-letter columns)

#: The catalogue of codes. The README's table is generated from this list (tests pin it).
CODES: dict[str, Code] = {
    c.code: c
    for c in (
        # line family: the reader's findings
        _c(
            "torn-tail",
            "line",
            E,
            "cut-torn-tail",
            "the last line is an incomplete record (a crash mid-write)",
        ),
        _c(
            "fused-records",
            "line",
            E,
            "split-fused",
            "a torn record and a whole one share a line (no newline between)",
        ),
        _c(
            "truncated-record", "line", E, "quarantine-line", "an incomplete record in the middle of the file"
        ),
        _c("nul-run", "line", E, "quarantine-bytes", "a run of NUL bytes (a crash left preallocated space)"),
        _c(
            "nul-run-in-record",
            "line",
            E,
            "drop-nul-run",
            "NUL bytes inserted inside a record: without them it is whole (kept)",
        ),
        _c("garbage", "line", E, "quarantine-line", "bytes that are not JSON"),
        _c("not-object", "line", E, "quarantine-line", "valid JSON that is not an object (e.g. [] or null)"),
        _c(
            "invalid-utf8",
            "line",
            E,
            "replace-invalid-utf8",
            "bytes that are not valid UTF-8 inside a record",
        ),
        _c("lone-surrogate", "line", E, "replace-lone-surrogate", "a \\uD800-\\uDFFF escape with no partner"),
        _c("crlf", "line", W, "normalise-line-ends", "a CRLF line end (Claude Code writes LF)"),
        _c("bom", "line", W, "normalise-line-ends", "a UTF-8 byte-order mark at the start of the file"),
        _c("blank-line", "line", I, "drop-blank-lines", "an empty line"),
        _c("no-final-newline", "line", I, None, "the last record has no newline after it"),
        _c(
            "line-separator",
            "line",
            W,
            None,
            "raw U+2028/U+2029/U+0085 in a record: str.splitlines-based readers split it there",
        ),
        # schema family
        _c("schema-invalid", "schema", E, None, "a record does not fit the schema of its type"),
        _c("unknown-type", "schema", W, None, "an entry type tt has no schema for (kept as is)"),
        # chain family
        _c("duplicate-line", "chain", W, "drop-duplicates", "a line repeated byte for byte"),
        _c("duplicate-uuid", "chain", E, "drop-duplicates", "two records share one uuid"),
        _c("dangling-parent", "chain", E, "relink-parent", "parentUuid names no entry in the file"),
        _c(
            "dangling-logical-parent",
            "chain",
            W,
            "relink-logical-parent",
            "a compact boundary's logicalParentUuid names no entry",
        ),
        _c("dangling-leaf", "chain", I, None, "a summary/last-prompt leafUuid names no entry in this file"),
        _c("cycle", "chain", E, "break-cycle", "parentUuid links form a loop"),
        _c(
            "multiple-roots",
            "chain",
            W,
            None,
            "more than one root that a model answered under, without a compact boundary",
        ),
        _c("session-mismatch", "chain", W, None, "a record's sessionId differs from the session's"),
        _c(
            "sidechain-in-main",
            "chain",
            E,
            "relink-parent",
            "the active main chain passes through a sidechain entry",
        ),
        _c("no-conversation", "chain", W, None, "no user or assistant entry outside sidechains"),
        _c(
            "compact-metadata-missing",
            "chain",
            W,
            "restore-compact-metadata",
            "a compact boundary without compactMetadata (Claude Code 2.1.197's next /compact fails)",
        ),
        # api family: judged on the conversation a resume would send
        _c(
            "tool-use-unpaired", "api", E, "add-interrupted-result", "a tool_use with no tool_result after it"
        ),
        _c(
            "tool-result-orphan",
            "api",
            E,
            "orphan-result-to-text",
            "a tool_result whose tool_use is not before it",
        ),
        _c(
            "split-message-noncontiguous",
            "api",
            E,
            "regroup-split-message",
            "lines of one message.id are split apart by other messages",
        ),
        _c(
            "empty-content",
            "api",
            E,
            "drop-empty-message",
            "a message with empty content (the API rejects it)",
        ),
        _c(
            "empty-text-block",
            "api",
            E,
            "drop-empty-blocks",
            "an empty or whitespace-only text block (with cache_control too)",
        ),
        _c(
            "thinking-unsigned",
            "api",
            E,
            "drop-unsigned-thinking",
            "a thinking block whose signature is empty or missing",
        ),
        _c(
            "thinking-signature-truncated",
            "api",
            E,
            "drop-truncated-thinking",
            "a thinking block whose signature is cut short (not whole base64 or protobuf)",
        ),
        _c(
            "tool-error-result-empty",
            "api",
            E,
            "fill-error-result",
            "a tool_result with is_error true and no content",
        ),
        _c("nul-in-content", "api", E, "replace-nul", "a NUL character (U+0000) in text or tool output"),
        _c(
            "nul-in-tool-input",
            "api",
            E,
            "replace-nul-in-input",
            "a NUL character (U+0000) in a string of a tool call's input",
        ),
        _c(
            "thinking-text-missing",
            "api",
            E,
            "drop-textless-thinking",
            "a signed thinking block with no thinking text field (not even an empty string)",
        ),
        _c(
            "tool-name-too-long",
            "api",
            E,
            "tool-call-to-text",
            "a tool_use name over the API's 200 characters",
        ),
        _c(
            "tool-reference-too-long",
            "api",
            E,
            "tool-reference-to-text",
            "a tool_reference name over the API's 64 characters",
        ),
        _c(
            "tool-use-id-duplicate",
            "api",
            E,
            "rename-duplicate-tool-id",
            "one tool_use id used by two calls of the conversation",
        ),
        _c(
            "tool-use-id-invalid",
            "api",
            E,
            "rename-invalid-tool-id",
            "a tool id missing or not of the API's pattern [a-zA-Z0-9_-]+ (another provider's ids, such as functions.Bash:0)",
        ),
        _c("image-too-large", "api", E, "shrink-image", "an image over the API's 5 MB limit"),
        _c(
            "image-dimensions-too-large",
            "api",
            E,
            "image-to-text",
            "an image past 8000 px a side, or past 2000 px in a request of over 20 images",
        ),
        _c(
            "prompt-too-long",
            "api",
            E,
            "compact-history",
            'the session ends in Claude Code\'s persisted "Prompt is too long" error: its history is past the context window',
        ),
        _c(
            "request-too-large",
            "api",
            E,
            "compact-history",
            "the rebuilt request is over the API's 32 MB limit",
        ),
        _c("past-cap", "api", W, None, "the file is past the 50 MiB cap for in-memory loads"),
    )
}


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    message: str
    path: str | None = None
    line: int | None = None
    offset: int | None = None
    uuid: str | None = None

    @property
    def info(self) -> Code:
        return CODES[self.code]

    @property
    def severity(self) -> Severity:
        return CODES[self.code].severity

    @property
    def family(self) -> str:
        return CODES[self.code].family

    @property
    def fix(self) -> str | None:
        return CODES[self.code].fix

    @property
    def where(self) -> str:
        if self.path is None:
            return f"line {self.line}" if self.line is not None else ""
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    def to_dict(self) -> dict[str, object]:
        return {
            "code": self.code,
            "family": self.family,
            "severity": self.severity.value,
            "path": self.path,
            "line": self.line,
            "offset": self.offset,
            "uuid": self.uuid,
            "message": self.message,
            "fix": self.fix,
        }
