"""The records a turn appends to a transcript, built as Claude Code builds them.

Pure builders for the lines Claude Code 2.1.x writes per turn (docs/format.md §14, §2, §3;
compared field by field with fixtures/real/claude-config-2.1.197 and -2.1.332):

- the prompt: a ``user`` line with ``promptId``, written *before* the model is called,
  so a kill mid-request leaves a resumable session;
- the answer: one ``assistant`` line per content block, all sharing ``message.id``
  (and ``requestId``), each with the final ``usage`` and ``stop_reason`` (2.1.97+),
  chained by ``parentUuid``;
- tool results: one ``user`` line per ``tool_result`` block, with ``toolUseResult``
  and ``sourceToolAssistantUUID`` (the line that made the call), sharing the turn's
  ``promptId``;
- after the turn, a ``last-prompt`` record (what the SDK's listing and ``/resume`` show);
  an interactive session (``tt chat``) then re-appends its ``mode`` (``normal``: tt is never
  in coordinator mode) and ``permission-mode``, as interactive Claude Code 2.1.332 does
  after each turn — and writes the same two first in a new session (seen under tmux:
  ``mode``, ``permission-mode``, then the prompt, whose ``permissionMode`` is the mode).

Every conversation line carries the envelope: ``parentUuid``, ``isSidechain``,
``uuid``, ``timestamp`` (``...sss Z``), ``userType``, ``entrypoint``, ``cwd``,
``sessionId``, ``version``, ``gitBranch``, in Claude Code's key order.

Invariants: pure (``uuid`` and ``timestamp`` come from the caller); a builder never
mutates what it is given (message dicts are copied per line).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: The interrupt markers Claude Code writes (slopus/happy-cli fixture, docs/format.md §3.1).
INTERRUPTED = "[Request interrupted by user]"
INTERRUPTED_FOR_TOOL_USE = "[Request interrupted by user for tool use]"


@dataclass(frozen=True, slots=True)
class Envelope:
    """The fields every line of this session shares."""

    session_id: str
    cwd: str
    version: str
    git_branch: str
    #: tt writes its own name: the field says who wrote the line (Claude Code writes
    #: "cli", "sdk-cli", "sdk-py" ...; readers treat it as free text).
    entrypoint: str = "tt"
    user_type: str = "external"
    slug: str | None = None

    def tail(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "userType": self.user_type,
            "entrypoint": self.entrypoint,
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": self.version,
            "gitBranch": self.git_branch,
        }
        if self.slug:
            d["slug"] = self.slug
        return d


def user_prompt(
    env: Envelope,
    *,
    parent: str | None,
    uuid: str,
    timestamp: str,
    content: str | Sequence[Mapping[str, Any]],
    prompt_id: str,
    permission_mode: str = "default",
) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "promptId": prompt_id,
        "type": "user",
        "message": {
            "role": "user",
            "content": content if isinstance(content, str) else [dict(b) for b in content],
        },
        "uuid": uuid,
        "timestamp": timestamp,
        "permissionMode": permission_mode,
        "promptSource": "sdk",
        **env.tail(),
    }


def user_text(
    env: Envelope, *, parent: str | None, uuid: str, timestamp: str, text: str, prompt_id: str | None
) -> dict[str, Any]:
    """A plain user text line (the interrupt marker)."""
    rec: dict[str, Any] = {"parentUuid": parent, "isSidechain": False}
    if prompt_id is not None:
        rec["promptId"] = prompt_id
    rec.update(
        {
            "type": "user",
            "message": {"role": "user", "content": [{"type": "text", "text": text}]},
            "uuid": uuid,
            "timestamp": timestamp,
            **env.tail(),
        }
    )
    return rec


def assistant_lines(
    env: Envelope,
    *,
    parent: str | None,
    message: Mapping[str, Any],
    request_id: str | None,
    uuids: Sequence[str],
    timestamp: str,
) -> list[dict[str, Any]]:
    """One line per content block of ``message`` (len(uuids) == len(content))."""
    content = list(message.get("content") or [])
    if len(uuids) != len(content):
        raise ValueError("one uuid per content block")
    lines: list[dict[str, Any]] = []
    prev = parent
    for block, uid in zip(content, uuids, strict=True):  # lengths checked above
        msg = {
            "id": message.get("id"),
            "type": "message",
            "role": "assistant",
            "model": message.get("model"),
            "content": [block],
            "stop_reason": message.get("stop_reason"),
            "stop_sequence": message.get("stop_sequence"),
            "usage": message.get("usage") or {},
        }
        rec: dict[str, Any] = {"parentUuid": prev, "isSidechain": False, "message": msg}
        if request_id:
            rec["requestId"] = request_id
        rec.update({"type": "assistant", "uuid": uid, "timestamp": timestamp, **env.tail()})
        lines.append(rec)
        prev = uid
    return lines


def tool_result(
    env: Envelope,
    *,
    parent: str | None,
    uuid: str,
    timestamp: str,
    block: Mapping[str, Any],
    tool_use_result: Any,
    source_assistant_uuid: str | None,
    prompt_id: str | None,
) -> dict[str, Any]:
    rec: dict[str, Any] = {"parentUuid": parent, "isSidechain": False}
    if prompt_id is not None:
        rec["promptId"] = prompt_id
    rec.update(
        {
            "type": "user",
            "message": {"role": "user", "content": [dict(block)]},
            "uuid": uuid,
            "timestamp": timestamp,
            "toolUseResult": tool_use_result,
        }
    )
    if source_assistant_uuid is not None:
        rec["sourceToolAssistantUUID"] = source_assistant_uuid
    rec.update(env.tail())
    return rec


def last_prompt(session_id: str, prompt: str, leaf: str | None) -> dict[str, Any]:
    rec: dict[str, Any] = {"type": "last-prompt", "lastPrompt": prompt}
    if leaf is not None:
        rec["leafUuid"] = leaf
    rec["sessionId"] = session_id
    return rec


def mode_record(session_id: str, mode: str = "normal") -> dict[str, Any]:
    """``{"type": "mode"}``: ``normal``, or ``coordinator`` in Claude Code's coordinator mode."""
    return {"type": "mode", "mode": mode, "sessionId": session_id}


def permission_mode_record(session_id: str, mode: str) -> dict[str, Any]:
    return {"type": "permission-mode", "permissionMode": mode, "sessionId": session_id}


def prompt_text(content: str | Sequence[Mapping[str, Any]]) -> str:
    """The text of a prompt, for ``last-prompt`` and the result's title."""
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content if b.get("type") == "text")
