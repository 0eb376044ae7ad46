"""tt's store as the Agent SDK's ``SessionStore`` (``ClaudeAgentOptions(session_store=…)``).

`TTSessionStore` implements the protocol's six methods (``append``, ``load``,
``list_sessions``, ``list_session_summaries``, ``delete``, ``list_subkeys``) over the same
tables `tt store push` writes, so a session mirrored by the SDK is a stored session like any
other (`tt store log/pull`, search). It imports nothing from the SDK at import time; the one
SDK function it calls, the public `fold_session_summary` (the protocol asks stores to keep
summaries with it), is imported when the first main-transcript append happens.

Mapping: an SDK ``SessionKey`` is a stream (``subpath`` absent → ``''``). An append extends
the stream's current version (version 1 is created by the first append, reason
``agent sdk``); each entry becomes one line, ``json.dumps`` compact with non-ASCII kept (as
Claude Code's ``JSON.stringify`` writes), and an entry whose ``uuid`` the version holds
already is skipped (the protocol's idempotency key; entries without one are always
appended). ``load`` parses the current version's lines back; a line that is not a JSON
object (a torn line a push stored) is left out of what the SDK sees, and stays stored.
Summaries are stamped with the stream's storage write time (the ``mtime`` that
``list_sessions`` reports), inside the append's transaction, so racing appends cannot
fold over each other.

Invariants: every method is one transaction; ``load`` returns entries deep-equal to those
appended; the connection is used by one call at a time (a lock), whatever thread the SDK
calls from.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from .engine import Store
from .model import StreamKey


def _key(key: Any) -> StreamKey:
    return StreamKey(key["project_key"], key["session_id"], key.get("subpath") or "")


def entry_line(entry: Any) -> bytes:
    """One entry as a JSONL line (with its newline)."""
    text = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        # A lone surrogate (JSON allows "\ud800"): escaped, it round-trips; raw, it is no UTF-8.
        return json.dumps(entry, separators=(",", ":")).encode("ascii") + b"\n"


def parse_line(raw: bytes) -> dict[str, Any] | None:
    try:
        v = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return v if isinstance(v, dict) else None


class TTSessionStore:
    """An Agent SDK session store backed by a tt store (SQLite or PostgreSQL)."""

    def __init__(self, store: Store | Callable[[], Store]) -> None:
        self._store = store if isinstance(store, Store) else None
        self._open = None if isinstance(store, Store) else store
        self._lock = threading.Lock()

    @property
    def store(self) -> Store:
        if self._store is None:
            assert self._open is not None
            self._store = self._open()
        return self._store

    async def append(self, key: Any, entries: list[Any]) -> None:
        if not entries:
            return
        k = _key(key)
        with self._lock:
            self._append(k, key, entries)

    def _append(self, k: StreamKey, key: Any, entries: list[Any]) -> None:
        st = self.store
        with st.write() as cur:
            s = st.stream(cur, k, create=True)
            assert s is not None
            version = s.current_version or st.new_version(cur, s, "agent sdk", None)
            have = st.uuids(cur, s.id, version)
            lines = []
            for e in entries:
                u = e.get("uuid") if isinstance(e, dict) else None
                if isinstance(u, str):
                    if u in have:
                        continue
                    have.add(u)
                lines.append(entry_line(e))
            last = st.last_line(cur, s.id, version)
            v = st.version(cur, s.id, version)
            assert v is not None
            _, end = st.append_lines(
                cur, s.id, version, lines, seq=last[0] + 1 if last else 0, offset=v.nbytes
            )
            st.set_version_state(
                cur, s.id, version, nbytes=end, sha256=None, file_mtime_ns=None, diagnostics=v.diagnostics
            )
            if not k.subpath:
                from claude_agent_sdk import fold_session_summary

                prev = None
                if s.summary is not None:
                    prev = {
                        "session_id": k.session_id,
                        "mtime": s.summary["mtime"],
                        "data": s.summary["data"],
                    }
                folded = fold_session_summary(prev, key, entries)  # type: ignore[arg-type]
                now = st.touch(cur, s.id)
                st.set_summary(cur, s.id, {"mtime": now, "data": folded["data"]})

    async def load(self, key: Any) -> list[Any] | None:
        k = _key(key)
        with self._lock:
            st = self.store
            with st.read() as cur:
                s = st.stream(cur, k)
                if s is None or not s.current_version:
                    return None
                out = []
                for *_, raw in st.lines(cur, s.id, s.current_version):
                    e = parse_line(raw)
                    if e is not None:
                        out.append(e)
                return out

    async def list_sessions(self, project_key: str) -> list[Any]:
        with self._lock:
            st = self.store
            with st.read() as cur:
                rows = st.list_streams(cur, project_key)
        return [{"session_id": s.key.session_id, "mtime": s.mtime_ms} for s in rows if not s.key.subpath]

    async def list_session_summaries(self, project_key: str) -> list[Any]:
        with self._lock:
            st = self.store
            with st.read() as cur:
                rows = st.list_streams(cur, project_key)
        return [
            {"session_id": s.key.session_id, "mtime": s.summary["mtime"], "data": s.summary["data"]}
            for s in rows
            if not s.key.subpath and s.summary is not None
        ]

    async def delete(self, key: Any) -> None:
        k = _key(key)
        with self._lock:
            st = self.store
            with st.write() as cur:
                for s in st.list_streams(cur, k.project_key, k.session_id):
                    if k.subpath in ("", s.key.subpath):
                        st.delete_stream(cur, s)
                if not k.subpath:
                    st.delete_files(cur, k.project_key, k.session_id)

    async def list_subkeys(self, key: Any) -> list[str]:
        with self._lock:
            st = self.store
            with st.read() as cur:
                rows = st.list_streams(cur, key["project_key"], key["session_id"])
        return [s.key.subpath for s in rows if s.key.subpath]
