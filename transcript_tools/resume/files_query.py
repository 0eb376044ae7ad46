"""``query()``: the Python way into the QueryEngine, shaped like the Agent SDK's ``query()``.

    async for message in query("what next?", QueryOptions(resume="4cd0c8e6")):
        ...

``prompt`` is a string (one turn) or an async iterable of user messages (streaming input:
``{"type": "user", "message": {"role": "user", "content": str | [blocks]}}``, the shape
``claude -p --input-format stream-json`` reads; text and image blocks). Each user message
is one turn, run in order; those that arrive while a turn runs wait for it. An item
``{"type": "control_request", "request": {"subtype": "interrupt"}}`` in the stream, or
`Query.interrupt()`, stops the turn in flight through the engine's Ctrl-C path (the
turn is closed in the file, which both Claude Code and tt resume).

The messages are the Agent SDK's types by name and fields (`SystemMessage` init with the
session id, `AssistantMessage` per content block, `UserMessage` per tool result,
`ResultMessage` with cost and usage per turn, `StreamEvent` with partial messages);
`Query.events()` gives the same stream as the plain dicts ``--output-format
stream-json`` prints. A resume's one-line notices (a model not the session's own, a fork
written, a cwd gone) come first, as ``SystemMessage(subtype="notice", data={"message"})``.

The session is assembled by `files_setup.prepare`, the function ``tt resume`` uses.

Invariants: the engine (synchronous, pure of asyncio) runs in one worker thread; the
asyncio side only moves messages across (the bridge lives here, at the edge). A turn
ended by an `errors.ApiError` ends the stream: its result is yielded, then the error is
raised from the iterator. Closing the iterator early interrupts the turn in flight and
waits for the file to be closed.
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
from collections.abc import AsyncIterable, AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model.errors import UsageError

# --- the Agent SDK's message types (claude_agent_sdk.types, 0.2.189), by name and field --


@dataclass
class TextBlock:
    text: str


@dataclass
class ThinkingBlock:
    thinking: str
    signature: str


@dataclass
class ToolUseBlock:
    id: str
    name: str
    input: dict[str, Any]


@dataclass
class ToolResultBlock:
    tool_use_id: str
    content: str | list[dict[str, Any]] | None = None
    is_error: bool | None = None


ContentBlock = TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock | dict[str, Any]


@dataclass
class SystemMessage:
    subtype: str
    data: dict[str, Any]


@dataclass
class AssistantMessage:
    content: list[ContentBlock]
    model: str
    parent_tool_use_id: str | None = None
    usage: dict[str, Any] | None = None
    message_id: str | None = None
    stop_reason: str | None = None
    session_id: str | None = None
    uuid: str | None = None


@dataclass
class UserMessage:
    content: str | list[ContentBlock]
    uuid: str | None = None
    parent_tool_use_id: str | None = None
    tool_use_result: Any = None


@dataclass
class ResultMessage:
    subtype: str
    duration_ms: int
    duration_api_ms: int
    is_error: bool
    num_turns: int
    session_id: str
    stop_reason: str | None = None
    total_cost_usd: float | None = None
    usage: dict[str, Any] | None = None
    result: str | None = None
    model_usage: dict[str, Any] | None = None
    permission_denials: list[Any] | None = None
    errors: list[str] | None = None
    uuid: str | None = None
    terminal_reason: str | None = None


@dataclass
class StreamEvent:
    uuid: str
    session_id: str
    event: dict[str, Any]
    parent_tool_use_id: str | None = None


Message = SystemMessage | AssistantMessage | UserMessage | ResultMessage | StreamEvent


def _block(b: Mapping[str, Any]) -> ContentBlock:
    t = b.get("type")
    if t == "text":
        return TextBlock(str(b.get("text", "")))
    if t == "thinking":
        return ThinkingBlock(str(b.get("thinking", "")), str(b.get("signature", "")))
    if t == "tool_use":
        return ToolUseBlock(str(b.get("id")), str(b.get("name")), dict(b.get("input") or {}))
    if t == "tool_result":
        return ToolResultBlock(str(b.get("tool_use_id")), b.get("content"), b.get("is_error"))
    return dict(b)  # images, server tools, what a later API adds: passed on as they are


def to_message(event: Mapping[str, Any]) -> Message:
    """One engine event (a stream-json line) as the Agent SDK's message type (pure)."""
    t = event.get("type")
    if t == "assistant":
        m = event["message"]
        return AssistantMessage(
            content=[_block(b) for b in m.get("content") or []],
            model=str(m.get("model", "")),
            usage=m.get("usage"),
            message_id=m.get("id"),
            stop_reason=m.get("stop_reason"),
            session_id=event.get("session_id"),
            uuid=event.get("uuid"),
        )
    if t == "user":
        c = event["message"].get("content")
        return UserMessage(
            content=c if isinstance(c, str) else [_block(b) for b in c or []],
            uuid=event.get("uuid"),
            tool_use_result=event.get("tool_use_result"),
        )
    if t == "result":
        return ResultMessage(
            subtype=event["subtype"],
            duration_ms=event["duration_ms"],
            duration_api_ms=event["duration_api_ms"],
            is_error=event["is_error"],
            num_turns=event["num_turns"],
            session_id=event["session_id"],
            stop_reason=event.get("stop_reason"),
            total_cost_usd=event.get("total_cost_usd"),
            usage=event.get("usage"),
            result=event.get("result"),
            model_usage=event.get("modelUsage"),
            permission_denials=event.get("permission_denials"),
            errors=event.get("errors"),
            uuid=event.get("uuid"),
            terminal_reason=event.get("terminal_reason"),
        )
    if t == "stream_event":
        return StreamEvent(
            event["uuid"], event["session_id"], event["event"], event.get("parent_tool_use_id")
        )
    return SystemMessage(str(event.get("subtype", "")), dict(event))


# --- options ------------------------------------------------------------------------------


@dataclass
class QueryOptions:
    """The subset of the Agent SDK's ``ClaudeAgentOptions`` tt honours, same names."""

    #: The session to continue: a path, a session id or an id prefix.
    resume: str | os.PathLike[str] | None = None
    #: Continue the latest session of ``cwd`` (``-c``).
    continue_conversation: bool = False
    #: Continue into a fork (fresh ids, a new file) instead of the session itself.
    fork_session: bool = False
    model: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    allowed_tools: Sequence[str] = ()
    disallowed_tools: Sequence[str] = ()
    #: Where tools run (default: the session's recorded cwd).
    cwd: str | os.PathLike[str] | None = None
    add_dirs: Sequence[str | os.PathLike[str]] = ()
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    include_partial_messages: bool = False
    max_tokens: int | None = None
    max_retries: int | None = None
    max_bytes: int | None = None
    #: Environment for the key, the endpoint, TT_NOW and the projects folder (default: os.environ).
    env: Mapping[str, str] | None = None


# --- the query ----------------------------------------------------------------------------

_DONE = object()


def user_content(item: Mapping[str, Any]) -> str | list[dict[str, Any]]:
    """The content of a streamed user message, or `UsageError` saying what is wrong."""
    msg = item.get("message")
    if not isinstance(msg, Mapping):
        raise UsageError('a user message needs a "message" object')
    content = msg.get("content")
    if isinstance(content, str):
        if not content.strip():
            raise UsageError("the user message is empty")
        return content
    if (
        isinstance(content, list)
        and content
        and all(isinstance(b, Mapping) and isinstance(b.get("type"), str) for b in content)
    ):
        return [dict(b) for b in content]
    raise UsageError("message.content must be a string or a non-empty list of content blocks")


def merge_prompts(contents: Sequence[str | list[dict[str, Any]]]) -> str | list[dict[str, Any]]:
    """The prompts queued while a turn ran, as the one prompt of the next turn (pure).

    Claude Code 2.1.332 (``claude -p --input-format stream-json``, tried against the
    stand-in) joins what queued into one user message: strings with "\\n" ("queued-a" and
    "two" became "queued-a\\ntwo"); when one is a list of blocks, the blocks in order, a
    string as a text block, each message's last text block but the last message's ending
    in "\\n" ([text "two"] and "three" became [text "two\\n", text "three"]).
    """
    if len(contents) == 1:
        return contents[0]
    if all(isinstance(c, str) for c in contents):
        return "\n".join(c for c in contents if isinstance(c, str))
    out: list[dict[str, Any]] = []
    for k, c in enumerate(contents):
        blocks = [{"type": "text", "text": c}] if isinstance(c, str) else [dict(b) for b in c]
        if k < len(contents) - 1 and blocks and blocks[-1].get("type") == "text":
            blocks[-1] = {**blocks[-1], "text": str(blocks[-1].get("text", "")) + "\n"}
        out.extend(blocks)
    return out


def is_interrupt(item: Mapping[str, Any]) -> bool:
    req = item.get("request")
    return (
        item.get("type") == "control_request"
        and isinstance(req, Mapping)
        and req.get("subtype") == "interrupt"
    )


class Query:
    """An async iterator of messages with `interrupt()` (see the module docstring)."""

    def __init__(
        self,
        prompt: str | AsyncIterable[Mapping[str, Any]],
        options: QueryOptions | None = None,
        *,
        engine: Any = None,
        notices: Sequence[str] = (),
    ) -> None:
        self.options = options or QueryOptions()
        self._prompt = prompt
        self._engine = engine
        self._notices = list(notices)
        self._started = False
        self._iter: AsyncIterator[dict[str, Any]] | None = None
        self._busy = False
        self._lock = threading.Lock()
        self.session_id: str | None = None
        self.path: Path | None = None

    # the SDK-typed stream
    def __aiter__(self) -> AsyncIterator[Message]:
        return self._typed()

    async def _typed(self) -> AsyncIterator[Message]:
        async for ev in self.events():
            if ev.get("type") != "control_response":  # the SDK consumes these itself
                yield to_message(ev)

    def interrupt(self) -> None:
        """Stop the turn in flight (no effect between turns)."""
        with self._lock:
            if self._engine is not None and self._busy:
                self._engine.interrupt()

    def _open(self) -> Any:
        """The engine for the session, assembled as ``tt resume`` assembles it."""
        from ..edge.claude_dir import projects_dir, resolve
        from ..edge.client import DEFAULT_MAX_RETRIES, AnthropicClient, credentials_from_env
        from ..edge.clock import system_clock
        from .files_setup import prepare
        from .tools.registry import ToolRegistry

        o = self.options
        env = dict(os.environ if o.env is None else o.env)
        if o.resume is None and not o.continue_conversation:
            raise UsageError(
                "query() continues a session: pass resume= (a path, id or prefix) or continue_conversation=True"
            )
        registry = ToolRegistry(tuple(o.allowed_tools), tuple(o.disallowed_tools))
        creds = credentials_from_env(env)
        clock = system_clock()
        root = projects_dir(env)
        cwd = Path(o.cwd) if o.cwd is not None else None
        ref = resolve(
            None if o.resume is None else os.fspath(o.resume),
            latest=o.continue_conversation,
            cwd=cwd,
            root=root,
        )
        from ..validate.files_kind import require_session_file

        # As `tt resume` and the API's resume_request: a file that is no transcript is the
        # exit-4 error, a subagent's file a usage error naming its session.
        require_session_file(ref.path, "resume")
        prep = prepare(
            ref,
            clock=clock,
            env=env,
            model=o.model,
            max_budget_usd=o.max_budget_usd,
            fork=o.fork_session,
            cwd=cwd,
            system_prompt=o.system_prompt,
            append_system_prompt=o.append_system_prompt,
            max_bytes=o.max_bytes,
        )
        client = AnthropicClient(
            creds, max_retries=DEFAULT_MAX_RETRIES if o.max_retries is None else o.max_retries
        )
        engine = prep.engine(
            client,
            registry,
            max_turns=o.max_turns,
            max_budget_usd=o.max_budget_usd,
            max_tokens=o.max_tokens,
            include_partial_messages=o.include_partial_messages,
            add_dirs=[Path(d) for d in o.add_dirs],
        )
        self._notices.extend(prep.notices)
        self.path = prep.path
        return engine

    def _queue_op(self, operation: str, content: Any = None) -> None:
        """A ``queue-operation`` record, as Claude Code 2.1.332 writes one for each streamed
        prompt: ``enqueue`` when it arrives (``content`` when it is a string; a list of
        blocks is written without it), ``dequeue`` when a turn takes it (probed with the
        stand-in). Streaming input only: a string prompt is not queued."""
        if isinstance(self._prompt, str) or self._engine is None:
            return
        rec: dict[str, Any] = {
            "type": "queue-operation",
            "operation": operation,
            "timestamp": self._engine.timestamp(),
            "sessionId": self._engine.session_id,
        }
        if isinstance(content, str):
            rec["content"] = content
        self._engine.append_meta(rec)

    def _reload(self, engine: Any) -> None:
        from .files import load_for_resume

        path = getattr(engine.transcript, "path", None)
        if path is None:
            return
        kw = {} if self.options.max_bytes is None else {"max_bytes": self.options.max_bytes}
        engine.messages = list(load_for_resume(path, **kw).conversation.for_model(engine.model).messages)

    async def events(self) -> AsyncIterator[dict[str, Any]]:
        """The stream as plain dicts, one per ``--output-format stream-json`` line."""
        if self._started:
            raise RuntimeError("a Query is iterated once")
        self._started = True
        loop = asyncio.get_running_loop()
        if self._engine is None:
            self._engine = await asyncio.to_thread(self._open)
        engine = self._engine
        self.session_id = engine.session_id
        for note in self._notices:
            yield {"type": "system", "subtype": "notice", "message": note, "session_id": engine.session_id}
        turns: queue.Queue[Any] = queue.Queue()
        out: asyncio.Queue[Any] = asyncio.Queue()

        def emit(item: Any) -> None:
            loop.call_soon_threadsafe(out.put_nowait, item)

        def work() -> None:
            client = getattr(engine, "client", None)
            try:
                done = False
                while not done:
                    content = turns.get()
                    if content is _DONE:
                        return
                    self._queue_op("dequeue")
                    queued = [content]
                    while True:  # what queued while the last turn ran is one turn (`merge_prompts`)
                        try:
                            more = turns.get_nowait()
                        except queue.Empty:
                            break
                        if more is _DONE:
                            done = True
                            break
                        self._queue_op("dequeue")
                        queued.append(more)
                    content = merge_prompts(queued)
                    with self._lock:
                        self._busy = True
                    try:
                        for ev in engine.submit_message(content):
                            emit(ev)
                    except KeyboardInterrupt:
                        # The turn is closed in the file and its result yielded. The next turn
                        # sends what a resume of that file sends (`conversation` rule 7: the
                        # closed turn is answered "No response requested."), not a second copy
                        # of those rules here.
                        self._reload(engine)
                    finally:
                        with self._lock:  # an interrupt is for the turn in flight, never the next one
                            self._busy = False
                            engine.interrupt_requested = False
            finally:  # an ApiError (after its result), a write failure: the stream ends, and the error is raised below
                close = getattr(client, "close", None)
                if close is not None:
                    close()
                emit(_DONE)

        async def feed() -> None:
            try:
                if isinstance(self._prompt, str):
                    turns.put(self._prompt)
                    return
                async for item in self._prompt:
                    if is_interrupt(item):
                        self.interrupt()
                        rid = item.get("request_id")
                        # Claude Code 2.1.332 answers at once; still_queued is what it printed
                        # with a message queued behind the interrupted turn, too: [].
                        emit(
                            {
                                "type": "control_response",
                                "response": {
                                    "subtype": "success",
                                    "request_id": rid,
                                    "response": {"still_queued": []},
                                },
                            }
                        )
                    elif item.get("type") == "user":
                        content = user_content(item)
                        self._queue_op("enqueue", content)
                        turns.put(content)
                    else:
                        raise UsageError(f"unexpected input message type {item.get('type')!r}")
            finally:  # a malformed message (or the iterable's own error) ends the input: raised below
                turns.put(_DONE)

        # The worker's and the feeder's errors travel in their futures (no catch-all here).
        worker = asyncio.ensure_future(asyncio.to_thread(work))
        feeder = asyncio.create_task(feed())
        finished = False
        try:
            while (item := await out.get()) is not _DONE:
                yield item
            finished = True
        finally:
            if not feeder.done():
                feeder.cancel()
            if not worker.done():  # closed early: stop the turn, let it close the file
                self.interrupt()
                turns.put(_DONE)
            await asyncio.wait({worker})
        if finished:
            worker.result()  # raises what ended the turns
            if not feeder.cancelled() and feeder.exception() is not None:
                feeder.result()


def query(prompt: str | AsyncIterable[Mapping[str, Any]], options: QueryOptions | None = None) -> Query:
    """Continue a session; iterate the result for the Agent SDK's message types."""
    return Query(prompt, options)
