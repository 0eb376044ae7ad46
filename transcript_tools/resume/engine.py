"""The QueryEngine: one conversation, continued turn by turn through the Messages API.

A `QueryEngine` holds what a headless Claude Code session holds between turns: the API
``messages``, the session id and cwd, the model, usage and cost so far (per model,
priced by `pricing`, whose table says when its prices were read), the permission
denials, and the files its tools have read. Its tools stay inside the working
directories (the cwd and ``add_dirs``) unless an allow rule names a path (`permissions`). `QueryEngine.submit_message(prompt)` runs
one turn and yields events shaped like the Agent SDK's messages (what
``claude -p --output-format stream-json`` prints):

    {"type": "system", "subtype": "init", "session_id", "cwd", "model", "tools", ...}
    {"type": "assistant", "message": {... one content block ...}, "session_id", "uuid"}   per block
    {"type": "user", "message": {... one tool_result ...}, "tool_use_result", "uuid"}      per tool call
    {"type": "result", "subtype", "is_error", "num_turns", "result", "usage",
     "modelUsage", "total_cost_usd", "permission_denials", "duration_ms", ...}

It calls the model while the answer stops with ``tool_use`` (running the tools in
between), and ends with ``error_max_turns`` when ``max_turns`` is reached (Claude Code
counts the call the tools would lead to, so ``num_turns`` is then ``max_turns + 1``) or
``error_max_budget_usd`` when the cost so far reaches ``max_budget_usd`` before another
call.

The transcript (a `TranscriptSink`, optional) gets the records of `turns` as they
happen: the prompt before the model call, each answer's lines after it completes, each
tool result as soon as the tool returns — one append per record. Ctrl-C
(KeyboardInterrupt) ends the turn — and so does `QueryEngine.interrupt()`, called from
another thread (the ``query()`` API, streaming input): it raises KeyboardInterrupt in the
turn at the next stream event, tool call or model call, so both take one path (then,
as Claude Code 2.1.332 does for an interrupt control request, the marker is also yielded
as a ``user`` event and the result's ``terminal_reason`` is ``"aborted_streaming"``): unanswered calls get an interrupted result, an
interrupt marker closes the turn, a ``result`` event with ``terminal_reason:
"interrupted"`` is yielded, and the KeyboardInterrupt goes on to the caller. An
`errors.ApiError` from the client is yielded as an ``error_during_execution`` result,
then raised.

The world comes in through the constructor: the model client, the tool registry and the
tools' context (where they run), the transcript sink, the clock (``now`` for record
timestamps, ``clock`` for durations) and ``new_id`` (uuids). `files_setup` assembles them
(`files_setup.engine_world`); the engine itself does no I/O of its own.

Invariants: the file is only appended to; after every record written the transcript is
a valid session a resume can continue; every ``tool_use`` written gets a
``tool_result`` written (run, denied or interrupted).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..model.errors import ApiError, UsageError
from ..model.pricing import PRICES_READ_ON, Tokens, cost_usd, price_for
from ..model.request import DEFAULT_MAX_TOKENS, DEFAULT_SYSTEM_PROMPT, ModelRequest
from . import turns
from .outcome import ToolOutcome

if TYPE_CHECKING:
    from pathlib import Path

    from ..edge.client import Event, ModelClient, ModelResponse
    from .tools.registry import CallResult, Denial, ToolContext, ToolRegistry


def check_budget_model(model: str) -> None:
    """A budget needs a price: `UsageError` for a model the pricing table lacks."""
    if price_for(model) is None:
        raise UsageError(
            f"no price is known for model {model!r}, so --max-budget-usd cannot be enforced",
            hint=f"prices in tt's table were read on {PRICES_READ_ON}; drop the budget or pick a priced model",
        )


class TranscriptSink(Protocol):
    def append(self, record: Mapping[str, Any]) -> None: ...


def _n(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


@dataclass(slots=True)
class Usage:
    """Running totals: tokens per model and their cost (None when a model has no price).

    `restore` starts them from a session's last ``cost-state`` (Claude Code 2.1.332 does:
    `resume.state`): the recorded tokens and ``costUSD`` stay as recorded, and only what
    is spent from then on is priced by tt's table."""

    by_model: dict[str, Tokens] = field(default_factory=dict)
    cost_by_model: dict[str, float | None] = field(default_factory=dict)
    base: dict[str, tuple[Tokens, float | None]] = field(default_factory=dict)
    fresh: dict[str, Tokens] = field(default_factory=dict)
    #: What is known of each model's cost (the restored part stays when new spend has no price).
    known_cost: dict[str, float] = field(default_factory=dict)

    def restore(self, model_usage: Mapping[str, Any]) -> None:
        for m, u in model_usage.items():
            if not isinstance(u, Mapping):
                continue
            t = Tokens(
                _n(u.get("inputTokens")),
                _n(u.get("outputTokens")),
                _n(u.get("cacheCreationInputTokens")),
                _n(u.get("cacheReadInputTokens")),
                _n(u.get("cacheCreationEphemeral1hInputTokens")),
            )
            c = u.get("costUSD")
            self.base[m] = (t, float(c) if isinstance(c, (int, float)) else None)
            self.by_model[m], self.cost_by_model[m] = self.base[m]
            self.known_cost[m] = self.base[m][1] or 0.0

    def add(self, model: str, usage: Mapping[str, Any] | None) -> None:
        new = self.fresh.get(model, Tokens()) + Tokens.from_usage(usage)
        self.fresh[model] = new
        base_t, base_c = self.base.get(model, (Tokens(), 0.0))
        self.by_model[model] = base_t + new
        c = cost_usd(model, new)
        self.cost_by_model[model] = None if c is None or base_c is None else base_c + c
        self.known_cost[model] = (base_c or 0.0) + (c or 0.0)

    @property
    def total(self) -> Tokens:
        out = Tokens()
        for t in self.by_model.values():
            out = out + t
        return out

    @property
    def cost(self) -> float:
        return sum(self.known_cost.values())

    @property
    def cost_known(self) -> bool:
        return all(c is not None for c in self.cost_by_model.values())

    def usage_dict(self) -> dict[str, int]:
        # This run's tokens: after a restore, Claude Code 2.1.332's result ``usage`` is the
        # run's own while ``modelUsage`` and ``total_cost_usd`` are the session's (probed).
        t = Tokens()
        for f in self.fresh.values():
            t = t + f
        return {
            "input_tokens": t.input,
            "cache_creation_input_tokens": t.cache_write,
            "cache_read_input_tokens": t.cache_read,
            "output_tokens": t.output,
        }

    def model_usage(self) -> dict[str, dict[str, Any]]:
        return {
            m: {
                "inputTokens": t.input,
                "outputTokens": t.output,
                "cacheReadInputTokens": t.cache_read,
                "cacheCreationInputTokens": t.cache_write,
                "costUSD": self.cost_by_model.get(m),
            }
            for m, t in self.by_model.items()
        }


class QueryEngine:
    """One conversation. See the module docstring."""

    def __init__(
        self,
        *,
        client: ModelClient,
        session_id: str,
        cwd: Path,
        model: str,
        envelope: turns.Envelope,
        messages: Sequence[dict[str, Any]] = (),
        leaf_uuid: str | None = None,
        registry: ToolRegistry,
        system: str | list[dict[str, Any]] | None = None,
        max_turns: int | None = None,
        max_budget_usd: float | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        transcript: TranscriptSink | None = None,
        include_partial_messages: bool = False,
        now: Callable[[], str],
        new_id: Callable[[], str],
        clock: Callable[[], float],
        tool_context: ToolContext,
        cost_state: Mapping[str, Any] | None = None,
        permission_mode: str | None = None,
    ) -> None:
        if max_budget_usd is not None:
            check_budget_model(model)
        self.client = client
        self.session_id = session_id
        self.cwd = cwd
        self.model = model
        self.envelope = envelope
        self.messages: list[dict[str, Any]] = list(messages)
        self.leaf_uuid = leaf_uuid
        self.registry = registry
        self.system = system if system is not None else DEFAULT_SYSTEM_PROMPT.format(cwd=cwd)
        self.max_turns = max_turns
        self.max_budget_usd = max_budget_usd
        self.max_tokens = max_tokens
        self.transcript = transcript
        self.include_partial_messages = include_partial_messages
        self._now = now
        self._new_id = new_id
        self._clock = clock
        # The working directories: the cwd and ``add_dirs`` (`permissions`).
        self.tools = tool_context
        self.usage = Usage()
        # The session's last cost-state (`resume.state`): the totals start there, and a
        # new cost-state is appended after each turn, as Claude Code 2.1.332 appends one
        # after each run (only to a session that has them: older CLIs never wrote one).
        self.cost_state = dict(cost_state) if cost_state is not None else None
        if self.cost_state is not None:
            self.usage.restore(self.cost_state.get("modelUsage") or {})
        self.permission_mode = permission_mode or "default"
        #: An interactive session (``tt chat``): the prompt carries ``permission_mode`` and
        #: each turn re-appends ``mode`` and ``permission-mode`` (`turns`); ``-p`` runs write
        #: "default" and neither record, as ``claude -p`` 2.1.332 does (probed).
        self.interactive = False
        #: Records written before the next prompt (a new session's ``mode`` and
        #: ``permission-mode``, `turns`), then cleared.
        self.opening: list[dict[str, Any]] = []
        #: Called with each raw stream event as it arrives (``tt chat`` prints text live).
        self.on_stream: Callable[[Event], None] | None = None
        self.permission_denials: list[Denial] = []
        self.api_ms = 0
        self.interrupt_requested = False
        self._interrupt_reason: str | None = None

    @property
    def files_read(self) -> dict[str, int]:
        return self.tools.files_read

    @property
    def total_cost_usd(self) -> float:
        return self.usage.cost

    def append_meta(self, record: dict[str, Any]) -> None:
        """Append a record outside the chain (no uuid: the leaf stays), e.g. a queue-operation."""
        if self.transcript is not None:
            self.transcript.append(record)

    def timestamp(self) -> str:
        return self._now()

    def interrupt(self, reason: str = "aborted_streaming") -> None:
        """Ask the turn in flight to stop (one flag, read between steps; the caller clears
        ``interrupt_requested`` between turns if an interrupt then should not carry over)."""
        self._interrupt_reason = reason
        self.interrupt_requested = True

    def _check(self) -> None:
        if self.interrupt_requested:
            self.interrupt_requested = False
            raise KeyboardInterrupt

    def request(self, extra: Sequence[dict[str, Any]] = ()) -> ModelRequest:
        """The request the next model call sends (``extra``: messages not yet added)."""
        return ModelRequest(
            model=self.model,
            messages=[*self.messages, *extra],
            max_tokens=self.max_tokens,
            system=self.system,
            tools=self.registry.definitions(),
        )

    # --- the turn ---------------------------------------------------------------------

    def submit_message(self, prompt: str | Sequence[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
        started = self._clock()
        yield self._init_event()
        state = _Turn(prompt_id=self._new_id())
        content: str | list[dict[str, Any]] = prompt if isinstance(prompt, str) else [dict(b) for b in prompt]
        if self.opening and self.transcript is not None:
            for rec in self.opening:
                self.transcript.append(rec)
            self.opening = []
        self._write(
            turns.user_prompt(
                self.envelope,
                parent=self.leaf_uuid,
                uuid=self._new_id(),
                timestamp=self._now(),
                content=content,
                prompt_id=state.prompt_id,
                permission_mode=self.permission_mode if self.interactive else "default",
            )
        )
        self.messages.append({"role": "user", "content": content})
        num_turns = 1
        try:
            while True:
                self._check()
                response = self._call(state)
                yield from self._answer(response, state)
                if response.message.get("stop_reason") != "tool_use" or not state.pending:
                    yield self._result("success", num_turns, started, response, prompt)
                    return
                yield from self._run_tools(state)
                num_turns += 1
                if self.max_turns is not None and num_turns > self.max_turns:
                    yield self._result(
                        "error_max_turns",
                        num_turns,
                        started,
                        response,
                        prompt,
                        errors=[f"Reached maximum number of turns ({self.max_turns})"],
                    )
                    return
                if self.max_budget_usd is not None and self.usage.cost >= self.max_budget_usd:
                    yield self._result(
                        "error_max_budget_usd",
                        num_turns,
                        started,
                        response,
                        prompt,
                        errors=[
                            f"Reached maximum budget (${self.max_budget_usd:g}): ${self.usage.cost:.6f} spent"
                        ],
                    )
                    return
        except KeyboardInterrupt:
            marker = self._close_interrupted(state)
            reason, self._interrupt_reason = self._interrupt_reason, None
            if reason is not None:  # asked for, not Ctrl-C: Claude Code 2.1.332 shows the marker too
                yield self._user_event(marker)
            yield self._result(
                "error_during_execution",
                num_turns,
                started,
                None,
                prompt,
                errors=["Interrupted by the user"],
                reason=reason or "interrupted",
            )
            raise
        except ApiError as e:
            yield self._result(
                "error_during_execution",
                num_turns,
                started,
                None,
                prompt,
                errors=[e.message],
                reason="api_error",
            )
            raise

    def _call(self, state: _Turn) -> ModelResponse:
        keep: Callable[[Event], None] | None = None
        if self.include_partial_messages:
            state.partial = []
            keep = state.partial.append

        def on_event(event: Event) -> None:
            self._check()  # an interrupt lands at the next stream event
            if keep is not None:
                keep(event)
            if self.on_stream is not None:
                self.on_stream(event)

        before = self._clock()
        try:
            return self.client.create(self.request(), on_event)
        finally:
            self.api_ms += int((self._clock() - before) * 1000)

    def _answer(self, response: ModelResponse, state: _Turn) -> Iterator[dict[str, Any]]:
        for event in state.partial:
            yield {
                "type": "stream_event",
                "event": dict(event),
                "session_id": self.session_id,
                "parent_tool_use_id": None,
                "uuid": self._new_id(),
            }
        state.partial = []
        message = response.message
        model = message.get("model") or self.model
        self.usage.add(model, message.get("usage"))
        blocks: list[dict[str, Any]] = list(message.get("content") or [])
        if not blocks:
            # An empty answer (max_tokens hit at once): nothing to write or send back.
            state.pending = []
            return
        uuids = [self._new_id() for _ in blocks]
        lines = turns.assistant_lines(
            self.envelope,
            parent=self.leaf_uuid,
            message=message,
            request_id=response.request_id,
            uuids=uuids,
            timestamp=self._now(),
        )
        state.pending = []
        for block, line in zip(blocks, lines, strict=True):
            self._write(line)
            if block.get("type") == "tool_use":
                state.pending.append((block, line["uuid"]))
            yield {
                "type": "assistant",
                "message": line["message"],
                "parent_tool_use_id": None,
                "session_id": self.session_id,
                "uuid": line["uuid"],
                "timestamp": line["timestamp"],
                "request_id": response.request_id,
            }
        self.messages.append({"role": "assistant", "content": blocks})
        state.last_text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")

    def _run_tools(self, state: _Turn) -> Iterator[dict[str, Any]]:
        results: list[dict[str, Any]] = []
        state.results = results
        for block, line_uuid in list(state.pending):
            self._check()
            call: CallResult = self.registry.call(
                str(block.get("name")), str(block.get("id")), block.get("input"), self.tools
            )
            if call.denial is not None:
                self.permission_denials.append(call.denial)
            yield self._record_result(block, line_uuid, call.outcome, state)
        state.pending = []
        self.messages.append({"role": "user", "content": results})
        state.results = None

    def _record_result(
        self, block: Mapping[str, Any], line_uuid: str, outcome: ToolOutcome, state: _Turn
    ) -> dict[str, Any]:
        result_block = outcome.block(str(block.get("id")))
        rec = turns.tool_result(
            self.envelope,
            parent=self.leaf_uuid,
            uuid=self._new_id(),
            timestamp=self._now(),
            block=result_block,
            tool_use_result=outcome.result,
            source_assistant_uuid=line_uuid,
            prompt_id=state.prompt_id,
        )
        self._write(rec)
        if state.results is not None:
            state.results.append(result_block)
        state.answered.add(str(block.get("id")))
        return self._user_event(rec, outcome.result)

    def _user_event(self, rec: Mapping[str, Any], *tool_use_result: Any) -> dict[str, Any]:
        out = {
            "type": "user",
            "message": rec["message"],
            "parent_tool_use_id": None,
            "session_id": self.session_id,
            "uuid": rec["uuid"],
            "timestamp": rec["timestamp"],
        }
        if tool_use_result:  # a tool's result (the interrupt marker has none)
            out["tool_use_result"] = tool_use_result[0]
        return out

    def _close_interrupted(self, state: _Turn) -> dict[str, Any]:
        """Leave the file a resumable session after Ctrl-C: answer what was asked, mark it."""
        unanswered = [(b, u) for b, u in state.pending if str(b.get("id")) not in state.answered]
        if state.results is None and unanswered:
            state.results = []
        for block, line_uuid in unanswered:
            self._record_result(
                block, line_uuid, ToolOutcome.error(turns.INTERRUPTED_FOR_TOOL_USE, wrap=False), state
            )
        if state.results is not None:
            self.messages.append({"role": "user", "content": state.results})
        marker = turns.INTERRUPTED_FOR_TOOL_USE if state.pending else turns.INTERRUPTED
        rec = turns.user_text(
            self.envelope,
            parent=self.leaf_uuid,
            uuid=self._new_id(),
            timestamp=self._now(),
            text=marker,
            prompt_id=state.prompt_id,
        )
        self._write(rec)
        state.pending = []
        return rec

    # --- events and records -----------------------------------------------------------

    def _write(self, record: dict[str, Any]) -> None:
        if self.transcript is not None:
            self.transcript.append(record)
        u = record.get("uuid")
        if isinstance(u, str):
            self.leaf_uuid = u

    def _init_event(self) -> dict[str, Any]:
        from .. import __version__

        return {
            "type": "system",
            "subtype": "init",
            "cwd": str(self.cwd),
            "session_id": self.session_id,
            "tools": self.registry.offered,
            "mcp_servers": [],
            "model": self.model,
            "permissionMode": self.permission_mode,
            "apiKeySource": getattr(getattr(self.client, "credentials", None), "source", "none"),
            "tt_version": __version__,
            "uuid": self._new_id(),
        }

    def _result(
        self,
        subtype: str,
        num_turns: int,
        started: float,
        response: ModelResponse | None,
        prompt: str | Sequence[Mapping[str, Any]],
        *,
        errors: list[str] | None = None,
        reason: str | None = None,
    ) -> dict[str, Any]:
        stop = response.message.get("stop_reason") if response is not None else None
        out: dict[str, Any] = {
            "type": "result",
            "subtype": subtype,
            "is_error": subtype != "success",
            "duration_ms": int((self._clock() - started) * 1000),
            "duration_api_ms": self.api_ms,
            "num_turns": num_turns,
            "stop_reason": stop,
            "session_id": self.session_id,
            "total_cost_usd": round(self.usage.cost, 6),
            "cost_known": self.usage.cost_known,
            "prices_read_on": PRICES_READ_ON,
            "usage": self.usage.usage_dict(),
            "modelUsage": self.usage.model_usage(),
            "permission_denials": [d.to_dict() for d in self.permission_denials],
            "terminal_reason": reason
            or ("completed" if subtype == "success" else subtype.removeprefix("error_")),
            "uuid": self._new_id(),
        }
        if subtype == "success":
            last = self.messages[-1] if self.messages and self.messages[-1]["role"] == "assistant" else None
            out["result"] = (
                "".join(b.get("text", "") for b in last["content"] if b.get("type") == "text") if last else ""
            )
        if errors:
            out["errors"] = errors
        if self.transcript is not None:
            text = turns.prompt_text(prompt if isinstance(prompt, str) else list(prompt))
            self.transcript.append(turns.last_prompt(self.session_id, text, self.leaf_uuid))
            if self.interactive:
                self.transcript.append(turns.mode_record(self.session_id))
                self.transcript.append(turns.permission_mode_record(self.session_id, self.permission_mode))
            if self.cost_state is not None:
                self.transcript.append(self._cost_state())
        return out

    def _cost_state(self) -> dict[str, Any]:
        """The session's cost-state with this run's spend added (fields tt does not track,
        such as lines added, are carried as recorded)."""
        rec = dict(self.cost_state or {})
        rec["totalCostUSD"] = round(self.usage.cost, 6)
        rec["totalAPIDuration"] = _n(rec.get("totalAPIDuration")) + self.api_ms
        usage = dict(rec.get("modelUsage") or {})
        for m, t in self.usage.by_model.items():
            # A model new to the session gets every field 2.1.332 writes (zero when tt does
            # not count it), so the CLI adds to numbers, not to missing fields.
            u = {**_MODEL_USAGE_FIELDS, **(usage.get(m) or {})}
            u.update(
                inputTokens=t.input,
                outputTokens=t.output,
                cacheReadInputTokens=t.cache_read,
                cacheCreationInputTokens=t.cache_write,
                costUSD=round(self.usage.known_cost.get(m, 0.0), 6),
            )
            usage[m] = u
        rec["modelUsage"] = usage
        rec["hasUnknownModelCost"] = not self.usage.cost_known
        rec["sessionId"] = self.session_id
        return rec


#: A ``cost-state`` ``modelUsage`` entry's fields, in 2.1.332's order (fixtures/real).
_MODEL_USAGE_FIELDS: dict[str, Any] = {
    "inputTokens": 0,
    "outputTokens": 0,
    "thinkingTokens": 0,
    "cacheReadInputTokens": 0,
    "cacheCreationInputTokens": 0,
    "cacheCreationEphemeral5mInputTokens": 0,
    "cacheCreationEphemeral1hInputTokens": 0,
    "webSearchRequests": 0,
    "costUSD": 0,
}


@dataclass(slots=True)
class _Turn:
    prompt_id: str
    pending: list[tuple[dict[str, Any], str]] = field(default_factory=list)  # (tool_use block, its line uuid)
    answered: set[str] = field(default_factory=set)
    results: list[dict[str, Any]] | None = None
    partial: list[Event] = field(default_factory=list)
    last_text: str = ""
