"""The scripted "model" the stand-in plays when no reply is queued.

It is the same protocol Claude Code's real runs in ``/work/shared/fixtures/real`` were
recorded with, so a test can drive the real CLI with prompts alone:

- the newest user message holds a ``tool_result``    -> text ``TOOL-RESULT-SEEN n=<len(messages)>``
- its text has a line ``TOOL:<Name> <json input>``  -> a ``tool_use`` of that tool
- anything else                                      -> text ``ACK n=<len(messages)> last=<first line>``

Claude Code also makes calls of its own; they get answers that let it go on:
- compaction ("Your task is to create a detailed summary ...") -> a ``<summary>`` block
  ``SUMMARY n=<len(messages)> last=<last real prompt>``;
- title / topic / quota / any request that offers no tools -> a short plain text
  (a JSON title object when the request asks for one).

``is_main_turn(request)`` tells the real conversation turn from those side calls; tests
use it to match scripted replies and the oracle uses it to pick the resume request.
Pure functions over ``RecordedRequest``; no I/O.
"""

from __future__ import annotations

import json
import re

from tests.support.standin import JSON, RecordedRequest, Reply, Text, ToolUse

TOOL_LINE = re.compile(r"^TOOL:(?P<name>[A-Za-z_][\w-]*)\s+(?P<input>\{.*\})\s*$", re.MULTILINE | re.DOTALL)
COMPACT_MARKER = "Your task is to create a detailed summary"
REMINDER_PREFIXES = ("<system-reminder>", "<local-command-caveat>")


def text_blocks(message: dict[str, JSON]) -> list[str]:
    """The text of a message's text blocks (a string content is one block)."""
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text" and "text" in b]
    return []


def has_tool_result(message: dict[str, JSON]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def last_user(request: RecordedRequest) -> dict[str, JSON] | None:
    for message in reversed(request.messages):
        if message.get("role") == "user":
            return message
    return None


def prompt_text(message: dict[str, JSON]) -> str:
    """What the user typed: the last text block that is not a reminder Claude Code
    wrapped around it (it adds ``<system-reminder>`` blocks before and after)."""
    for text in reversed(text_blocks(message)):
        if not text.lstrip().startswith(REMINDER_PREFIXES):
            return text.strip()
    return ""


def is_compaction(request: RecordedRequest) -> bool:
    last = last_user(request)
    return last is not None and any(COMPACT_MARKER in t for t in text_blocks(last))


def is_main_turn(request: RecordedRequest) -> bool:
    """A request of the conversation itself (main agent or a subagent): it offers
    tools and is not the compaction summarizer. Title, topic and quota calls offer none."""
    return request.is_messages and bool(request.tool_names) and not is_compaction(request)


def claude_code_policy(request: RecordedRequest) -> Reply:
    n = len(request.messages)
    last = last_user(request)
    if last is None:
        return Text(f"ACK n={n} last=")
    if is_compaction(request):
        return Text(f"<summary>\nSUMMARY n={n} last={_first_line(_last_prompt(request))}\n</summary>")
    if not request.tool_names:
        return _side_answer(request)
    if has_tool_result(last):
        return Text(f"TOOL-RESULT-SEEN n={n}")
    prompt = prompt_text(last)
    match = TOOL_LINE.search(prompt)
    if match is not None:
        return ToolUse(match["name"], json.loads(match["input"]))
    return Text(f"ACK n={n} last={_first_line(prompt)}")


def _side_answer(request: RecordedRequest) -> Reply:
    # Title generation asks for JSON ({"title": ...}); others accept any short text.
    wants_json = "json" in request.system_text.lower() or _asks_for_json_output(request)
    if wants_json:
        return Text(json.dumps({"title": "Stand-in session", "isNewTopic": False}))
    return Text("stand-in")


def _asks_for_json_output(request: RecordedRequest) -> bool:
    body = request.body if isinstance(request.body, dict) else {}
    output = body.get("output_format") or body.get("output_config", {}).get("format")
    return isinstance(output, dict) and output.get("type") == "json_schema"


def _last_prompt(request: RecordedRequest) -> str:
    # The newest user text before the summarizer's own instruction.
    for message in reversed(request.messages[:-1]):
        if message.get("role") == "user" and not has_tool_result(message):
            text = prompt_text(message)
            if text:
                return text
    return ""


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""
