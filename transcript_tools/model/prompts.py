"""Which user records are prompts a person sent: the turns of a session.

Not prompts: tool results, ``isMeta`` lines (caveats, injected context), compact
summaries, lines only shown in the transcript, sidechain lines, slash-command echoes
(``<command-name>``) and their output (``<local-command-stdout>``), interrupt markers,
and prompts the client made itself (2.1.33x ``promptSource: "system"``, e.g. task
notifications). Used by `stats` (turns, tokens per turn) and `tree` (a line per turn).

Invariants: pure; never raises on any record shape.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_NOT_A_PROMPT = re.compile(
    r"^\s*(?:<command-name>|<command-message>|<local-command-|<task-notification>|<session-start-hook>|"
    r"<tick>|<goal>|\[Request interrupted by user)"
)


def is_prompt(rec: Mapping[str, Any]) -> bool:
    """Whether a user record is a prompt a person sent (a turn)."""
    if rec.get("type") != "user" or rec.get("isSidechain") is True:
        return False
    if (
        rec.get("isMeta") is True
        or rec.get("isCompactSummary") is True
        or rec.get("isVisibleInTranscriptOnly") is True
    ):
        return False
    if rec.get("promptSource") == "system":  # 2.1.33x: task notifications and the like
        return False
    msg = rec.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return False
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        text = next((x for x in texts if isinstance(x, str)), "")
        if not text and not any(isinstance(b, dict) and b.get("type") == "image" for b in content):
            return False
    else:
        return False
    return not _NOT_A_PROMPT.match(text)
