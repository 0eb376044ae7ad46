"""The oracle: what history does real Claude Code rebuild from a transcript?

``resume_with_cli`` runs ``claude -p <probe> --resume <id> --output-format json`` against a
fresh stand-in and returns the ``messages`` of the request that carried the probe: the
conversation exactly as that CLI version recovered it from the files. It works on a
private copy of the config dir, so the caller's files are never appended to.

``conversation_blocks`` reduces a ``messages`` list to comparable ``Block``s
(role, kind, value): text -> its text; tool_use -> "id name"; tool_result -> its
tool_use_id. It drops what Claude Code re-renders from its own runtime on every request
rather than reads from the transcript:
- ``role: "system"`` messages (2.1.19x/2.1.33x put environment, agent/skill/deferred-tool
  listings and reminders there);
- text blocks that are ``<system-reminder>`` blocks (date/context, attribution, attachment
  renderings such as "Called the Read tool ...", task notifications), and
  ``<system-reminder>`` sections inside a text (the compact summary carries one);
- ``cache_control`` and any other per-request decoration, and message boundaries (CC merges
  consecutive user messages; the block sequence is what counts).
``compare_histories(a, b)`` diffs the two block lists; "" means equal.
"""

from __future__ import annotations

import difflib
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.support.claude_cli import ClaudeCLI, Sandbox, run_claude
from tests.support.policy import is_compaction, last_user, prompt_text
from tests.support.sessions import stage_config
from tests.support.standin import RecordedRequest, StandIn

DEFAULT_PROBE = "Oracle probe: what do you remember?"
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)


class OracleError(AssertionError):
    """The CLI did not send the request the oracle looks for."""


def resume_request(
    cli: ClaudeCLI,
    config_dir: Path,
    session_id: str,
    cwd: Path,
    probe: str = DEFAULT_PROBE,
    *,
    timeout: float = 90.0,
    clock: datetime | None = None,
    tz: str = "UTC",
    extra_args: Sequence[str] = (),
) -> RecordedRequest:
    """The first request of the resumed main conversation (see module docstring);
    ``clock``: the CLI runs at that instant in zone ``tz`` (`claude_cli.clock_env`)."""
    with tempfile.TemporaryDirectory(prefix="tt-oracle-") as scratch:
        root = Path(scratch)
        config = stage_config(config_dir, root / "claude-config")
        sandbox = Sandbox.create(root, config_dir=config)
        with StandIn() as api:
            run_claude(
                cli,
                probe,
                sandbox=sandbox,
                cwd=cwd,
                base_url=api.base_url,
                resume=session_id,
                timeout=timeout,
                clock=clock,
                tz=tz,
                extra_args=extra_args,
            )
            requests = api.message_requests
            if api.errors:
                raise OracleError(f"the stand-in failed while serving {cli}: {api.errors!r}")
    for request in requests:
        if _is_probe_turn(request, probe):
            return request
    sent = "\n".join(f"  {r.index}: {r.path} messages={len(r.messages)}" for r in requests)
    raise OracleError(
        f"{cli} sent no main-conversation request ending in the probe {probe!r}; it sent:\n{sent}"
    )


def resume_with_cli(
    cli: ClaudeCLI,
    config_dir: Path,
    session_id: str,
    cwd: Path,
    probe: str = DEFAULT_PROBE,
    *,
    timeout: float = 90.0,
    clock: datetime | None = None,
) -> list[dict[str, Any]]:
    """The ``messages`` Claude Code sent when resuming ``session_id`` with ``probe``."""
    return resume_request(cli, config_dir, session_id, cwd, probe, timeout=timeout, clock=clock).messages


def _is_probe_turn(request: RecordedRequest, probe: str) -> bool:
    # Side calls (titles, quota) offer no tools; the summarizer ends in its own
    # instruction; a subagent's first request ends in the agent prompt, not the probe.
    if not request.tool_names or is_compaction(request):
        return False
    last = last_user(request)
    return last is not None and prompt_text(last) == probe.strip()


@dataclass(frozen=True, slots=True)
class Block:
    role: str
    kind: str  # text | tool_use | tool_result | thinking | image | <other block type>
    value: str

    def __str__(self) -> str:
        value = self.value if len(self.value) <= 200 else self.value[:197] + "..."
        return f"{self.role:9} {self.kind:11} {value!r}"


def _text(text: str) -> str:
    return _REMINDER.sub("", text).strip()


def conversation_blocks(messages: Iterable[Mapping[str, Any]]) -> list[Block]:
    """The comparable conversation in ``messages`` (see module docstring for what is dropped)."""
    blocks: list[Block] = []
    for message in messages:
        role = str(message.get("role"))
        if role == "system":
            continue
        content = message.get("content")
        items = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for item in items:
            if not isinstance(item, Mapping):
                continue
            kind = str(item.get("type"))
            if kind == "text":
                text = _text(str(item.get("text", "")))
                if text:
                    blocks.append(Block(role, "text", text))
            elif kind == "tool_use":
                blocks.append(Block(role, "tool_use", f"{item.get('id')} {item.get('name')}"))
            elif kind == "tool_result":
                blocks.append(Block(role, "tool_result", str(item.get("tool_use_id"))))
            elif kind == "thinking":
                blocks.append(Block(role, "thinking", str(item.get("thinking", "")).strip()))
            elif kind == "image":
                source = item.get("source")
                media = source.get("media_type", "") if isinstance(source, Mapping) else ""
                blocks.append(Block(role, "image", str(media)))
            else:
                blocks.append(Block(role, kind, ""))
    return blocks


def compare_histories(
    a: Iterable[Mapping[str, Any]],
    b: Iterable[Mapping[str, Any]],
    *,
    labels: tuple[str, str] = ("a", "b"),
) -> str:
    """A unified diff of the two histories' blocks; "" when they are the same."""
    left = [str(x) for x in conversation_blocks(a)]
    right = [str(x) for x in conversation_blocks(b)]
    if left == right:
        return ""
    return "\n".join(difflib.unified_diff(left, right, labels[0], labels[1], lineterm="", n=2))
