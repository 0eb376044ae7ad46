"""The scripted "model" the stand-in plays when no reply is queued.

It is the same protocol the project's real config-dir fixtures (``fixtures/real/claude-config-*``)
were recorded with, so a test can drive the real CLI with prompts alone:

- the newest user message holds a ``tool_result``    -> text ``TOOL-RESULT-SEEN n=<len(messages)>``
- its text has a line ``TOOL:<Name> <json input>``  -> a ``tool_use`` of that tool
- anything else                                      -> text ``ACK n=<len(messages)> last=<first line>``

A ``TOOL:`` line only becomes a tool call when the request offers tools; otherwise (a
plain ``anthropic`` client call) it is ACKed like any text.

Claude Code also makes calls of its own; they get answers that let it go on:
- compaction ("Your task is to create a detailed summary ...", sent *with* the tools
  offered in 2.1.197 and 2.1.332) -> ``<summary>SUMMARY n=<len> last=<last prompt></summary>``,
  which CC stores as "Summary:\nSUMMARY n=.." in the ``isCompactSummary`` entry;
- calls asking for structured output (``output_format``/``output_config.format`` of type
  ``json_schema``, e.g. session titles) -> JSON with the schema's required properties;
- anything else (quota checks, ...) -> the ACK text above.
With ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` neither 2.1.197 nor 2.1.332 made any
such side call in ``-p`` mode here; only 2.1.197 sends a ``HEAD /`` first (404 is fine).

``is_main_turn(request)`` tells the real conversation turn from those side calls; tests
use it to match scripted replies and the oracle uses it to pick the resume request.
Pure functions over ``RecordedRequest``; no I/O.
"""

from __future__ import annotations

import json
import re

from tests.support.wire import JSON, RecordedRequest, Reply, Text, ToolUse

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
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


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
    """A request of the conversation itself (main agent or a subagent): it offers tools
    and is not the compaction summarizer. Side calls such as titles or quota checks are
    expected to offer none (none were seen here with non-essential traffic off)."""
    return request.is_messages and bool(request.tool_names) and not is_compaction(request)


def claude_code_policy(request: RecordedRequest) -> Reply:
    n = len(request.messages)
    last = last_user(request)
    if last is None:
        return Text(f"ACK n={n} last=")
    if is_compaction(request):
        return Text(f"<summary>\nSUMMARY n={n} last={_first_line(_last_prompt(request))}\n</summary>")
    schema = _output_schema(request)
    if schema is not None:
        # Structured side calls (session titles and the like) must get parseable JSON.
        return Text(json.dumps(_instance_of(schema)))
    if has_tool_result(last):
        return Text(f"TOOL-RESULT-SEEN n={n}")
    prompt = prompt_text(last)
    match = TOOL_LINE.search(prompt)
    if match is not None and request.tool_names:
        return ToolUse(match["name"], json.loads(match["input"]))
    return Text(f"ACK n={n} last={_first_line(prompt)}")


def _output_schema(request: RecordedRequest) -> dict[str, JSON] | None:
    body = request.body if isinstance(request.body, dict) else {}
    config = body.get("output_config")
    output = body.get("output_format") or (config.get("format") if isinstance(config, dict) else None)
    schema = (
        output.get("schema") if isinstance(output, dict) and output.get("type") == "json_schema" else None
    )
    return schema if isinstance(schema, dict) else None


def _instance_of(schema: dict[str, JSON]) -> JSON:
    """A small value that satisfies a simple JSON schema (required properties only)."""
    kind = schema.get("type")
    if schema.get("enum"):
        return schema["enum"][0]
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        return {name: _instance_of(properties.get(name, {})) for name in schema.get("required", [])}
    if kind == "array":
        return []
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        return 0
    return "Stand-in"


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
