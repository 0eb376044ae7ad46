"""Summarisers: the text that replaces the summarised part of a conversation.

One small interface, `Summarizer`: ``summarize(material) -> str``. The `Material` is what
the compaction gathered in its streaming pass over the summarised messages: a
`digest.Digest` of facts and, for summarisers that read (``wants_excerpt``), a bounded
plain-text `digest.Excerpt`.

- `Extractive` (``extractive``, the default): offline and deterministic. The user's
  requests in order, the files read, written and edited, the commands run and the ones
  that failed, errors and what fixed them, the last state of the work and what was
  pending; nothing is invented, everything is quoted or counted from the transcript.
- `AnthropicSummarizer` (``anthropic``): a model writes the summary, following the
  recipe Claude Code's own compaction documents (intent, key concepts, files and code,
  errors and fixes, problem solving, the user's messages, pending tasks, current work,
  next step), optionally focused by ``--instructions``. It sends one request through
  `client.ModelClient`, the client ``tt resume`` uses (same credentials, retries and
  errors).

Invariants:
- A summariser never writes anything and never sees the kept messages (Claude Code's
  wording tells the model so).
- `Extractive` output is bounded (`MAX_SUMMARY_CHARS`) and the same for the same input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from .digest import Digest, clip

#: Upper bound of the extractive summary (about 4-5k tokens).
MAX_SUMMARY_CHARS = 18_000
#: How much conversation text a model summariser is given (about 100k tokens): the
#: first request and the most recent part of what is summarised, plus the digest.
EXCERPT_CHARS = 400_000
DEFAULT_SUMMARY_MAX_TOKENS = 8192
#: When the session names no usable model.
FALLBACK_MODEL = "claude-sonnet-4-5"


@dataclass(frozen=True, slots=True)
class Material:
    digest: Digest
    excerpt: str = ""
    source: str = ""  # the transcript's path, for the reader of the summary
    kept_messages: int = 0


class Summarizer(Protocol):
    name: str
    wants_excerpt: bool

    def summarize(self, material: Material) -> str: ...


# --- extractive ------------------------------------------------------------------------


class Extractive:
    """Facts from the transcript, in Claude Code's summary sections (module docstring)."""

    name = "extractive"
    wants_excerpt = False

    def summarize(self, material: Material) -> str:
        d = material.digest
        out: list[str] = []
        span = ""
        if d.first_timestamp and d.last_timestamp:
            span = f", {d.first_timestamp[:16].replace('T', ' ')} to {d.last_timestamp[:16].replace('T', ' ')} UTC"
        out.append(
            f"[Extractive summary written offline by tt compact of {d.messages} earlier message(s)"
            + (
                f" (and {d.context_messages} read for context: history before earlier compactions, key messages)"
                if d.context_messages
                else ""
            )
            + f"{span}. "
            "It lists what the transcript records; it does not interpret it.]"
        )
        for s in d.summaries:
            out.append(
                "Summary of the conversation before that (from an earlier compaction):\n"
                + _indent(clip(s, 4000))
            )
        out.append(_section("1. User requests, in order", self._requests(d)))
        out.append(_section("2. Files", self._files(d)))
        out.append(_section("3. Commands run", self._commands(d)))
        out.append(_section("4. Errors and fixes", self._errors(d)))
        out.append(_section("5. Last state of the work and what was pending", self._state(d)))
        tools = ", ".join(f"{n} ×{c}" for n, c in sorted(d.tools.items(), key=lambda x: (-x[1], x[0]))[:20])
        if tools:
            out.append(f"Tools used: {tools}.")
        text = "\n\n".join(x for x in out if x)
        return clip(text, MAX_SUMMARY_CHARS)

    @staticmethod
    def _requests(d: Digest) -> list[str]:
        if not d.requests:
            return ["(no user request in this part)"]
        lines = []
        for k, r in enumerate(d.first_requests):
            label = "First request" if k == 0 else f"Request {k + 1}"
            lines.append(f"{label}: {_quote(r)}")
        skipped = d.requests - len(d.first_requests) - len(d.last_requests)
        if skipped > 0:
            lines.append(f"... {skipped} more requests ...")
        first_tail = d.requests - len(d.last_requests) + 1
        for k, r in enumerate(d.last_requests):
            lines.append(f"Request {first_tail + k}: {_quote(r)}")
        return lines

    @staticmethod
    def _files(d: Digest) -> list[str]:
        lines = []
        for kind in ("edited", "written", "read"):
            paths = list(d.files[kind])
            if paths:
                lines.append(
                    f"{kind.capitalize()} ({len(paths)}): "
                    + ", ".join(paths[-60:])
                    + (" ..." if len(paths) > 60 else "")
                )
        return lines or ["(no file read, written or edited)"]

    @staticmethod
    def _commands(d: Digest) -> list[str]:
        if not d.command_count:
            return ["(no shell command)"]
        lines = [f"{d.command_count} command(s), {d.failed_count} failed. The last ones:"]
        lines.extend(f"`{c.text}`" + (" -> failed" if c.failed else "") for c in d.commands)
        if d.failed_count:
            lines.append("Failed:")
            lines.extend(f"`{c.text}`: {c.detail}" for c in d.failed_commands)
        return lines

    @staticmethod
    def _errors(d: Digest) -> list[str]:
        if not d.error_count:
            return ["(no tool error recorded)"]
        lines = [f"{d.error_count} error(s); the last ones:"]
        for e in d.errors:
            where = f" ({e.target})" if e.target else ""
            fix = f" — fixed: {e.fixed_by}" if e.fixed_by else " — not seen fixed in this part"
            lines.append(f"{e.tool}{where}: {e.message}{fix}")
        return lines

    @staticmethod
    def _state(d: Digest) -> list[str]:
        lines = []
        if d.last_request:
            lines.append(f"Last request in this part: {_quote(d.last_request)}")
            if not d.answered:
                lines.append("Its answer, if any, is in the messages kept after this summary.")
        if d.last_text:
            lines.append(f"Last thing the assistant said: {_quote(d.last_text)}")
        pending = d.pending_todos
        if pending:
            lines.append("Open todo items:")
            lines.extend(f"[{s or 'pending'}] {c}" for c, s in pending)
        elif d.todos:
            lines.append("All todo items were completed.")
        return lines or ["(nothing recorded)"]


def _section(title: str, lines: list[str]) -> str:
    return title + ":\n" + "\n".join("- " + ln for ln in lines)


def _quote(s: str) -> str:
    return '"' + s.replace("\n", " ⏎ ") + '"'


def _indent(s: str) -> str:
    return "\n".join("  " + ln for ln in s.splitlines())


# --- a model -----------------------------------------------------------------------------

SYSTEM_PROMPT = "You write the summary that lets a Claude Code session continue in a fresh context window."

RECIPE = """Your task is to create a detailed summary of the conversation so far, paying close attention to the user's explicit requests and the assistant's previous actions. The summary must capture the technical details, code patterns and decisions needed to continue the work without losing context.

Above is the earlier part of the conversation (its first request and its most recent part, if it was too long to give in full), and facts tt extracted from all of it.

Write the summary in these sections:
1. Primary Request and Intent: all of the user's explicit requests and intents, in detail.
2. Key Technical Concepts: technologies, frameworks and concepts discussed.
3. Files and Code Sections: files examined, modified or created, why each matters, with the important code snippets.
4. Errors and Fixes: every error met and how it was fixed, including user feedback on the fixes.
5. Problem Solving: problems solved and troubleshooting still going on.
6. All User Messages: every user message that is not a tool result, briefly.
7. Pending Tasks: tasks the user asked for that are not done.
8. Current Work: precisely what was being worked on last, with file names and snippets.
9. Optional Next Step: the next step, only if it follows directly from the latest request; quote the request it serves.

Answer with the summary only, inside <summary></summary> tags. Do not call tools."""

_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.S)
_ANALYSIS = re.compile(r"<analysis>.*?</analysis>", re.S)


def summary_prompt(material: Material, instructions: str | None = None) -> str:
    extract = Extractive().summarize(material)
    parts = [
        "<transcript>\n" + (material.excerpt or "(no text)") + "\n</transcript>",
        "<facts>\n" + extract + "\n</facts>",
        RECIPE,
    ]
    if instructions and instructions.strip():
        parts.append("Additional instructions for this summary:\n" + instructions.strip())
    return "\n\n".join(parts)


def extract_summary(text: str) -> str:
    """The text inside ``<summary>`` (Claude Code's format), else the answer without its analysis."""
    m = _SUMMARY.search(text)
    if m is not None:
        return m.group(1).strip()
    return _ANALYSIS.sub("", text).strip()


class AnthropicSummarizer:
    """A model's summary through `client.ModelClient` (module docstring)."""

    name = "anthropic"
    wants_excerpt = True

    def __init__(
        self,
        client: Any,
        *,
        model: str,
        instructions: str | None = None,
        max_tokens: int = DEFAULT_SUMMARY_MAX_TOKENS,
    ) -> None:
        self.client = client
        self.model = model
        self.instructions = instructions
        self.max_tokens = max_tokens
        self.usage: dict[str, Any] = {}

    def request(self, material: Material) -> Any:
        from ..model.request import ModelRequest

        return ModelRequest(
            model=self.model,
            messages=[{"role": "user", "content": summary_prompt(material, self.instructions)}],
            max_tokens=self.max_tokens,
            system=SYSTEM_PROMPT,
        )

    def summarize(self, material: Material) -> str:
        from ..model.errors import ApiError

        response = self.client.create(self.request(material))
        message = response.message
        self.usage = dict(message.get("usage") or {})
        text = "\n".join(
            b.get("text", "")
            for b in message.get("content") or []
            if isinstance(b, dict) and b.get("type") == "text"
        )
        summary = extract_summary(text)
        if not summary:
            raise ApiError(
                f"the model ({self.model}) answered without a summary",
                hint="try again, or use --summarizer extractive",
            )
        return summary
