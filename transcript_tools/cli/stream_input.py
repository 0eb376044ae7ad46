"""``tt resume --input-format stream-json``: user messages from stdin, events to stdout.

Each stdin line is one JSON object, as ``claude -p --input-format stream-json`` reads
them (Claude Code 2.1.332, tried against the stand-in):

- ``{"type": "user", "message": {"role": "user", "content": str | [blocks]}}``: a prompt
  (text and image blocks). Prompts that arrive while a turn runs are queued and run as
  one turn after it, joined as 2.1.332 joins them (`query.merge_prompts`).
- ``{"type": "control_request", "request_id": R, "request": {"subtype": "interrupt"}}``:
  stops the turn in flight (closed in the file as Ctrl-C closes it), answered at once
  with ``{"type": "control_response", "response": {"subtype": "success", "request_id": R,
  "response": {"still_queued": []}}}`` as 2.1.332 answers it. Other control requests get
  ``{"subtype": "error", "request_id": R, "error": ...}`` (tt honours only the interrupt).

Every event goes out as one ``--output-format stream-json`` line. Where tt departs from
2.1.332 on purpose: a line that is not JSON ends Claude Code's run (exit 1, "Error parsing
streaming input line"), and a line of another type is ignored silently; tt answers either
with ``{"type": "system", "subtype": "input_error", "line": N, "error": ...}`` for that
line and reads on.

The stdin reader is a thread (a blocking read must not stall the event loop); lines go to
`query.Query`, which runs the turns in its worker thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import IO, Any

import orjson

from ..model.errors import TTError


def _reader(stream: IO[bytes], loop: asyncio.AbstractEventLoop, out: asyncio.Queue[bytes | None]) -> None:
    try:
        for line in iter(stream.readline, b""):
            loop.call_soon_threadsafe(out.put_nowait, line)
    finally:
        loop.call_soon_threadsafe(out.put_nowait, None)


def check_line(raw: bytes) -> dict[str, Any] | str:
    """The input message of one line, or why it is rejected (pure)."""
    from ..resume.files_query import user_content

    try:
        item = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        return f"not JSON: {e}"
    if not isinstance(item, dict):
        return "not a JSON object"
    t = item.get("type")
    if t == "user":
        try:
            user_content(item)
        except TTError as e:
            return e.message
        return item
    if t == "control_request":
        if not isinstance(item.get("request"), dict):
            return 'a control_request needs a "request" object'
        return item
    return f'unexpected message type {t!r} (expected "user" or "control_request")'


def run_stream_input(engine: Any, stdin: IO[bytes], stdout: IO[bytes]) -> int:
    """Run the loop until stdin ends; the exit code (1: the last turn failed or a line was rejected)."""
    from ..resume.files_query import Query, is_interrupt

    rejected = 0
    last: dict[str, Any] | None = None

    def write(ev: dict[str, Any]) -> None:
        stdout.write(orjson.dumps(ev) + b"\n")
        stdout.flush()

    async def messages() -> AsyncIterator[dict[str, Any]]:
        nonlocal rejected
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        threading.Thread(target=_reader, args=(stdin, loop, lines), name="tt-stdin", daemon=True).start()
        n = 0
        while (raw := await lines.get()) is not None:
            n += 1
            if not raw.strip():
                continue
            got = check_line(raw)
            if isinstance(got, str):
                rejected += 1
                write(
                    {
                        "type": "system",
                        "subtype": "input_error",
                        "line": n,
                        "error": got,
                        "session_id": engine.session_id,
                    }
                )
            elif got["type"] == "control_request" and not is_interrupt(got):
                sub = got["request"].get("subtype")
                write(
                    {
                        "type": "control_response",
                        "response": {
                            "subtype": "error",
                            "request_id": got.get("request_id"),
                            "error": f"tt does not support the control request {sub!r}",
                        },
                    }
                )
            else:
                yield got

    async def main() -> None:
        nonlocal last
        async for ev in Query(messages(), engine=engine).events():
            if ev.get("type") == "result":
                last = ev
            write(ev)

    asyncio.run(main())
    return 1 if rejected or (last is not None and last["is_error"]) else 0
