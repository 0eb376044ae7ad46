"""The Messages API request of one model call: its shape and tt's defaults for it.

`engine` builds one `ModelRequest` per model call and `client` sends it; ``tt resume
--dry-run`` prints one without loading either (they pull in the pricing table, the
retry machinery and the turn records, a sixth of a dry run's start-up).

Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: ``max_tokens`` of each model call unless ``--max-tokens`` says otherwise.
DEFAULT_MAX_TOKENS = 32_000

#: tt's system prompt (``{cwd}``: where the tools run); ``--system-prompt`` replaces it.
DEFAULT_SYSTEM_PROMPT = (
    "You are Claude, continuing a Claude Code session headlessly through tt (transcript_tools). "
    "The conversation so far is the session's own history. Use the tools you are given to read and, "
    "when allowed, change files in the working directory; answer concisely.\n"
    "Working directory: {cwd}"
)


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One Messages API call: what `client.AnthropicClient.create` sends."""

    model: str
    messages: list[dict[str, Any]]
    max_tokens: int
    system: str | list[dict[str, Any]] | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)

    def params(self) -> dict[str, Any]:
        """The request body (without ``stream``), as --dry-run prints it."""
        p: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens}
        if self.system:
            p["system"] = self.system
        if self.tools:
            p["tools"] = self.tools
        p["messages"] = self.messages
        return p
