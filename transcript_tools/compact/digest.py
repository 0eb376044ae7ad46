"""What a summary of a stretch of conversation needs, gathered one record at a time.

`Digest` is fed the records of the messages being summarised, in order, and keeps the
facts the extractive summary is made of: the user's requests, the files read, written and
edited (from the tools' structured ``toolUseResult``, docs/format.md §5, else their input),
the commands run and which failed, errors and what later fixed them, the last todo list,
the last thing the assistant said and any earlier compaction summary. (`excerpt` keeps
the text of the same stretch for a model to summarise.)

Invariants:
- Bounded memory whatever the input size: every list is capped (the first and the last
  requests, the last commands and errors, at most ``MAX_FILES`` paths per kind); counts
  keep counting past the caps.
- Deterministic: the same records give the same digest (no clock, no randomness).
- Pure: no I/O; records are never mutated.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_FILES = 300
HEAD_REQUESTS = 12
TAIL_REQUESTS = 24
REQUEST_CHARS = 600
FIRST_REQUEST_CHARS = 3000
MAX_COMMANDS = 30
MAX_FAILED = 20
MAX_ERRORS = 20
MAX_PENDING_CALLS = 4096
LAST_TEXT_CHARS = 1500
SUMMARY_CHARS = 6000

#: User text that is not something the user asked (Claude Code's wrappers; docs/format.md §3.1
#: and the Agent SDK's first-prompt rules in ``_parse_session_info_from_lite``).
_NOT_A_REQUEST = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<task-notification>",
    "<system-reminder>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<session-start-hook>",
    "<tick>",
    "[Request interrupted by user",
    "Caveat: The messages below were generated",
)
_COMMAND = re.compile(r"<command-name>\s*(.*?)\s*</command-name>", re.S)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
#: Slash commands that are about the session, not the work.
_SESSION_COMMANDS = frozenset(
    {"/compact", "/clear", "/cost", "/context", "/status", "/help", "/model", "/resume", "/exit"}
)

FILE_TOOLS = {
    "Read": "read",
    "NotebookRead": "read",
    "Write": "written",
    "Edit": "edited",
    "MultiEdit": "edited",
    "NotebookEdit": "edited",
}
SHELL_TOOLS = frozenset({"Bash", "BashOutput", "PowerShell"})


def prompt_text(record: Mapping[str, Any]) -> str | None:
    """What the user asked in this record, or None when it is not a human request
    (tool results, meta lines, compact summaries, command output, reminders)."""
    if record.get("type") != "user" or record.get("isMeta") is True or record.get("isCompactSummary") is True:
        return None
    msg = record.get("message")
    if not isinstance(msg, Mapping):
        return None
    content = msg.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts: list[str] = []
        for b in content:
            if not isinstance(b, Mapping):
                continue
            if b.get("type") == "tool_result":
                return None
            if b.get("type") == "text" and isinstance(b.get("text"), str):
                if not b["text"].lstrip().startswith(_NOT_A_REQUEST):
                    parts.append(b["text"])
            elif b.get("type") == "image":
                parts.append("[image]")
        text = "\n".join(parts)
    else:
        return None
    text = text.strip()
    if not text or text.startswith(_NOT_A_REQUEST):
        return None
    m = _COMMAND.search(text)
    if m is not None:
        name = m.group(1).strip()
        if not name.startswith("/"):
            name = "/" + name
        if name in _SESSION_COMMANDS:
            return None
        args = _COMMAND_ARGS.search(text)
        a = args.group(1).strip() if args else ""
        return f"{name} {a}".strip()
    return text


_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
#: Paragraphs Claude Code (and tt) put around a compact summary (compact/form.py's wording).
_WRAPPER_START = "This session is being continued from a previous conversation"
_WRAPPER_ENDS = (
    "If you need specific details from before compaction",
    "Continue the conversation from where it left off",
)


def unwrap_summary(text: str) -> str:
    """The summary inside an ``isCompactSummary`` message, without Claude Code's wrapper."""
    text = _REMINDER.sub("", text).strip()
    if text.startswith(_WRAPPER_START):
        _, _, rest = text.partition("\n\n")
        text = rest if rest else ""
    cut = min((k for k in (text.find(m) for m in _WRAPPER_ENDS) if k >= 0), default=-1)
    if cut >= 0:
        text = text[:cut]
    return text.strip()


def clip(s: str, n: int) -> str:
    s = s.strip()
    return s if len(s) <= n else s[: n - 1].rstrip() + "…"


def one_line(s: str, n: int = 200) -> str:
    return clip(" ".join(s.split()), n)


@dataclass(slots=True)
class ErrorFact:
    tool: str
    target: str
    message: str
    fixed_by: str | None = None


@dataclass(frozen=True, slots=True)
class Command:
    text: str
    failed: bool
    detail: str = ""


@dataclass(slots=True)
class _Call:
    name: str
    target: str
    input: Mapping[str, Any]


@dataclass(slots=True)
class Digest:
    """Facts of the summarised messages (see module docstring)."""

    #: Messages (user and assistant records) read as the part being summarised, and
    #: those read for context only (the history behind earlier compactions, key
    #: messages kept verbatim): `tt compact`'s plan and the summary's header give both.
    messages: int = 0
    context_messages: int = 0
    requests: int = 0
    first_requests: list[str] = field(default_factory=list)
    last_requests: deque[str] = field(default_factory=lambda: deque(maxlen=TAIL_REQUESTS))
    files: dict[str, dict[str, None]] = field(
        default_factory=lambda: {"read": {}, "written": {}, "edited": {}}
    )
    commands: deque[Command] = field(default_factory=lambda: deque(maxlen=MAX_COMMANDS))
    command_count: int = 0
    failed_commands: deque[Command] = field(default_factory=lambda: deque(maxlen=MAX_FAILED))
    failed_count: int = 0
    errors: deque[ErrorFact] = field(default_factory=lambda: deque(maxlen=MAX_ERRORS))
    error_count: int = 0
    tools: Counter[str] = field(default_factory=Counter)
    todos: list[tuple[str, str]] = field(default_factory=list)
    last_text: str = ""
    last_request: str = ""
    answered: bool = True
    summaries: deque[str] = field(default_factory=lambda: deque(maxlen=2))
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    _calls: dict[str, _Call] = field(default_factory=dict)
    _open: dict[tuple[str, str], ErrorFact] = field(default_factory=dict)

    def feed(self, record: Mapping[str, Any], *, context: bool = False) -> None:
        """One record; ``context``: read for context, not part of what is summarised."""
        t = record.get("type")
        if t not in ("user", "assistant"):
            return
        ts = record.get("timestamp")
        if isinstance(ts, str):
            self.first_timestamp = self.first_timestamp or ts
            self.last_timestamp = ts
        msg = record.get("message")
        if not isinstance(msg, Mapping):
            return
        if context:
            self.context_messages += 1
        else:
            self.messages += 1
        if record.get("isCompactSummary") is True:
            c = msg.get("content")
            text = unwrap_summary(c if isinstance(c, str) else "\n".join(_texts(c)))
            if text:
                self.summaries.append(clip(text, SUMMARY_CHARS))
            return
        if t == "user":
            self._user(record, msg)
        else:
            self._assistant(record, msg)

    # --- user ---------------------------------------------------------------

    def _user(self, record: Mapping[str, Any], msg: Mapping[str, Any]) -> None:
        req = prompt_text(record)
        if req is not None:
            self.requests += 1
            if len(self.first_requests) < HEAD_REQUESTS:
                limit = FIRST_REQUEST_CHARS if not self.first_requests else REQUEST_CHARS
                self.first_requests.append(clip(req, limit))
            else:
                self.last_requests.append(clip(req, REQUEST_CHARS))
            self.last_request = clip(req, REQUEST_CHARS)
            self.answered = False
            return
        content = msg.get("content")
        if not isinstance(content, list):
            return
        result = record.get("toolUseResult")
        for b in content:
            if isinstance(b, Mapping) and b.get("type") == "tool_result":
                self._result(b, result)

    def _result(self, block: Mapping[str, Any], result: Any) -> None:
        tid = block.get("tool_use_id")
        call = self._calls.pop(tid, None) if isinstance(tid, str) else None
        name = call.name if call else "tool"
        target = call.target if call else ""
        failed = block.get("is_error") is True or (
            isinstance(result, str) and result.lstrip().startswith("Error")
        )
        text = result_text(block.get("content"))
        if call is not None and not failed:
            self._files(call, result)
        if name in SHELL_TOOLS and call is not None:
            cmd = call.input.get("command")
            if isinstance(cmd, str):
                c = Command(one_line(cmd, 200), failed, one_line(text, 200) if failed else "")
                self.command_count += 1
                self.commands.append(c)
                if failed:
                    self.failed_count += 1
                    self.failed_commands.append(c)
        key = (name, target)
        if failed:
            e = ErrorFact(name, target, one_line(text, 300))
            self.error_count += 1
            self.errors.append(e)
            self._open[key] = e
        else:
            fixed = self._open.pop(key, None)
            if fixed is not None:
                fixed.fixed_by = f"a later {name}{' of ' + target if target else ''} succeeded"
        if name == "TodoWrite" and not failed:
            todos = result.get("newTodos") if isinstance(result, Mapping) else None
            if not isinstance(todos, list) and call is not None:
                todos = call.input.get("todos")
            if isinstance(todos, list):
                self.todos = [
                    (one_line(str(t.get("content", "")), 160), str(t.get("status", "")))
                    for t in todos[:50]
                    if isinstance(t, Mapping)
                ]

    def _files(self, call: _Call, result: Any) -> None:
        kind = FILE_TOOLS.get(call.name)
        if kind is None:
            return
        path = None
        if isinstance(result, Mapping):
            path = result.get("filePath")
            f = result.get("file")
            if path is None and isinstance(f, Mapping):
                path = f.get("filePath")
        if not isinstance(path, str) or not path:
            path = call.target
        if not path:
            return
        d = self.files[kind]
        d.pop(path, None)
        d[path] = None
        if len(d) > MAX_FILES:
            del d[next(iter(d))]

    # --- assistant ----------------------------------------------------------

    def _assistant(self, record: Mapping[str, Any], msg: Mapping[str, Any]) -> None:
        if record.get("isApiErrorMessage") is True:
            text = " ".join(_texts(msg.get("content")))
            self.error_count += 1
            self.errors.append(ErrorFact("API", "", one_line(text, 300) or str(record.get("error", "error"))))
            return
        content = msg.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            return
        for b in content:
            if not isinstance(b, Mapping):
                continue
            bt = b.get("type")
            if bt == "text" and isinstance(b.get("text"), str) and b["text"].strip():
                self.last_text = clip(b["text"], LAST_TEXT_CHARS)
                self.answered = True
            elif bt == "tool_use":
                n = b.get("name")
                name = n if isinstance(n, str) else "tool"
                i = b.get("input")
                inp: Mapping[str, Any] = i if isinstance(i, Mapping) else {}
                self.tools[name] += 1
                tid = b.get("id")
                if isinstance(tid, str):
                    self._calls[tid] = _Call(name, _target(name, inp), inp)
                    if len(self._calls) > MAX_PENDING_CALLS:
                        del self._calls[next(iter(self._calls))]

    @property
    def pending_todos(self) -> list[tuple[str, str]]:
        return [(c, s) for c, s in self.todos if s not in ("completed", "done")]


def _target(name: str, inp: Mapping[str, Any]) -> str:
    for k in ("file_path", "notebook_path", "path"):
        v = inp.get(k)
        if isinstance(v, str) and v:
            return v
    if name in SHELL_TOOLS:
        v = inp.get("command")
        return one_line(v, 200) if isinstance(v, str) else ""
    for k in ("pattern", "url", "query", "description"):
        v = inp.get(k)
        if isinstance(v, str) and v:
            return one_line(v, 120)
    return ""


def _texts(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for b in content:
            if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str):
                yield b["text"]


def result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(_texts(content))
