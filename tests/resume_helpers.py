"""Building small transcripts for the resume tests (conversation, engine, CLI).

Records are shaped as Claude Code 2.1.332 writes them (fixtures/real/claude-config-2.1.332):
one content block per assistant line sharing ``message.id``, tool results as user lines
with ``toolUseResult`` and ``sourceToolAssistantUUID``. `Builder` chains each new entry
onto the previous one unless told otherwise.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

from tests.support.paths import REAL
from transcript_tools.model.lines import Entry

SESSION = "5e5510a0-0000-4000-8000-000000000001"
MODEL = "claude-sonnet-4-5-20250929"

S332 = REAL / "claude-config-2.1.332/projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
S197 = REAL / "claude-config-2.1.197/projects/-home-dev-demo-app/8c2f9135-4610-4218-97b1-bc3e03643255.jsonl"
#: Every real transcript in fixtures/real (main files, not subagents).
REAL_FILES = sorted(
    list(REAL.glob("*.jsonl"))
    + list(REAL.glob("claude-config-*/projects/*/*.jsonl"))
    + [p for p in REAL.glob("v2.0.28-project/*/*.jsonl") if not p.name.startswith("agent-")]
)
#: Hand-written composites whose uuids are all "[trimmed for fixture]": no real chain.
NOT_A_CHAIN = {"handwritten-2.1.80-2.1.220-trimmed-composite.jsonl"}


class Builder:
    """Records of one session, in file order."""

    def __init__(self, cwd: str = "/tmp/project", version: str = "2.1.332") -> None:
        self.records: list[dict[str, Any]] = []
        self._n = itertools.count(1)
        self._m = itertools.count(1)
        self.cwd = cwd
        self.version = version
        self.last: str | None = None

    def uid(self) -> str:
        return f"00000000-0000-4000-8000-{next(self._n):012d}"

    def _env(self, parent: str | type[Ellipsis] | None, **extra: Any) -> dict[str, Any]:
        p = self.last if parent is ... else parent
        u = self.uid()
        rec = {
            "parentUuid": p,
            "isSidechain": False,
            **extra,
            "uuid": u,
            "timestamp": "2026-11-29T14:24:38.144Z",
            "userType": "external",
            "entrypoint": "sdk-cli",
            "cwd": self.cwd,
            "sessionId": SESSION,
            "version": self.version,
            "gitBranch": "main",
        }
        return rec

    def add(self, rec: dict[str, Any], chain: bool = True) -> dict[str, Any]:
        self.records.append(rec)
        if chain and "uuid" in rec:
            self.last = rec["uuid"]
        return rec

    def user(self, content: str | list[dict[str, Any]], parent: Any = ..., **extra: Any) -> dict[str, Any]:
        rec = self._env(parent, type="user", message={"role": "user", "content": content}, **extra)
        return self.add(rec)

    def assistant(
        self,
        *blocks: dict[str, Any],
        mid: str | None = None,
        parent: Any = ...,
        model: str = MODEL,
        stop: str | None = None,
        **extra: Any,
    ) -> list[dict[str, Any]]:
        """One line per block, sharing a message id (the split Claude Code writes)."""
        mid = mid or f"msg_{next(self._m):024d}"
        out = []
        for k, b in enumerate(blocks):
            msg = {
                "id": mid,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [b],
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": 10,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": 5,
                },
            }
            out.append(
                self.add(
                    self._env(
                        parent if k == 0 else ..., type="assistant", message=msg, requestId="req_1", **extra
                    )
                )
            )
        return out

    def result(
        self, tool_use_id: str, content: Any = "ok", *, parent: Any = ..., is_error: bool | None = None
    ) -> dict[str, Any]:
        block: dict[str, Any] = {"tool_use_id": tool_use_id, "type": "tool_result", "content": content}
        if is_error is not None:
            block["is_error"] = is_error
        return self.add(
            self._env(
                parent,
                type="user",
                message={"role": "user", "content": [block]},
                toolUseResult={"stdout": str(content)},
            )
        )

    def attachment(self, attachment: dict[str, Any], parent: Any = ...) -> dict[str, Any]:
        return self.add(self._env(parent, type="attachment", attachment=attachment))

    def system(self, subtype: str, parent: Any = ..., **extra: Any) -> dict[str, Any]:
        return self.add(self._env(parent, type="system", subtype=subtype, **extra))

    def meta(self, rec: dict[str, Any]) -> dict[str, Any]:
        return self.add(rec, chain=False)

    def entries(self) -> list[Entry]:
        return entries_of(self.records)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in self.records))
        return path


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def tool_use(tid: str, name: str = "Read", **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": name, "input": inp or {"file_path": "/x"}}


def thinking(t: str = "hmm") -> dict[str, Any]:
    return {"type": "thinking", "thinking": t, "signature": "c2ln"}


def entries_of(records: Iterable[dict[str, Any]]) -> list[Entry]:
    return [Entry(i, 0, orjson.dumps(r), r) for i, r in enumerate(records, 1)]


def read_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def roles(messages: Sequence[dict[str, Any]]) -> list[str]:
    return [m["role"] for m in messages]


def blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    c = message["content"]
    return [{"type": "text", "text": c}] if isinstance(c, str) else list(c)


def check_api_shape(messages: Sequence[dict[str, Any]]) -> None:
    """What the Messages API requires of a conversation tt sends (asserts)."""
    assert messages, "no messages"
    for k, m in enumerate(messages):
        bs = blocks(m)
        assert bs, f"message {k} is empty"
        assert m["role"] in ("user", "assistant")
        if m["role"] == "assistant":
            assert not all(b.get("type") in ("thinking", "redacted_thinking") for b in bs), (
                f"message {k}: thinking only"
            )
            assert any(b.get("type") != "text" or b.get("text", "").strip() for b in bs), (
                f"message {k}: blank"
            )
            uses = [b["id"] for b in bs if b.get("type") == "tool_use"]
            assert all("caller" not in b for b in bs if b.get("type") == "tool_use")
            if uses:
                assert k + 1 < len(messages) and messages[k + 1]["role"] == "user", (
                    f"calls of message {k} unanswered"
                )
                nxt = blocks(messages[k + 1])
                results = [b["tool_use_id"] for b in nxt if b.get("type") == "tool_result"]
                assert sorted(results) == sorted(uses), f"message {k + 1} answers {results}, not {uses}"
                n = len(results)
                assert all(b.get("type") == "tool_result" for b in nxt[:n]), "tool results must come first"
        else:
            prev = messages[k - 1] if k else None
            calls = (
                {b["id"] for b in blocks(prev) if b.get("type") == "tool_use"}
                if prev and prev["role"] == "assistant"
                else set()
            )
            for b in bs:
                if b.get("type") == "tool_result":
                    assert b["tool_use_id"] in calls, (
                        f"message {k}: result {b['tool_use_id']} answers no call"
                    )
        if k:
            assert not (m["role"] == "user" and messages[k - 1]["role"] == "user"), (
                f"messages {k - 1},{k}: two user turns"
            )
