"""What one tool call produced, as the transcript and the model see it: `ToolOutcome`.

Shared by the tools (`resume.tools`, which act on the world and answer every call with
one) and the engine (which writes an interrupted result for a call that never ran).

Invariants: plain data; pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What one call produced: the ``tool_result`` content the model sees and the
    ``toolUseResult`` Claude Code writes beside it."""

    content: str | list[dict[str, Any]]
    result: Any  # toolUseResult: a dict per tool, a string ("Error: ...") on failure
    is_error: bool = False
    #: The result block carries ``"is_error": false`` explicitly (Claude Code's Bash does).
    explicit_ok: bool = False

    @classmethod
    def error(cls, message: str, *, wrap: bool = True, result: str | None = None) -> ToolOutcome:
        """Claude Code's error form: ``<tool_use_error>message</tool_use_error>`` (or the
        bare message) for the model, ``"Error: message"`` as the toolUseResult."""
        content = f"<tool_use_error>{message}</tool_use_error>" if wrap else message
        return cls(content, result if result is not None else f"Error: {message}", is_error=True)

    def block(self, tool_use_id: str) -> dict[str, Any]:
        """The ``tool_result`` block, keys in Claude Code's order."""
        if self.is_error:
            return {
                "type": "tool_result",
                "content": self.content,
                "is_error": True,
                "tool_use_id": tool_use_id,
            }
        b: dict[str, Any] = {"tool_use_id": tool_use_id, "type": "tool_result", "content": self.content}
        if self.explicit_ok:
            b["is_error"] = False
        return b
