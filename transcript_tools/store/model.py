"""The session store's values and the seam between its logic and an engine (pure).

`StreamKey` names a transcript file of a session (the Agent SDK's ``SessionKey``);
`LEGACY_AGENT` the side-file kind of a 2.0.x subagent transcript;
`StreamInfo`, `Version` and `SearchHit` are rows as `engine.Store` returns them; `Dialect` is
what an engine adapter (`edge.store_sqlite`, `edge.store_postgres`) provides. `redacted` is
how a store URL appears in any message: without its password.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol


class Dialect(Protocol):
    name: str
    script: str
    db_errors: tuple[type[BaseException], ...]

    def translate(self, e: BaseException, url: str) -> Exception: ...

    def sql(self, q: str) -> str: ...
    def begin(self, cur: Any) -> None: ...
    def init_lock(self, cur: Any) -> None: ...
    def has_table(self, cur: Any, name: str) -> bool: ...
    def lock_stream(self, cur: Any, stream_id: int) -> None: ...
    def reserve_line_ids(self, cur: Any, n: int) -> list[int]: ...
    def insert_lines(self, cur: Any, rows: list[tuple[Any, ...]]) -> None: ...
    def index_texts(self, cur: Any, rows: list[tuple[int, str]]) -> None: ...
    def unindex_text(self, cur: Any, line_id: int, text: str) -> None: ...
    # (The SQL of a search, and the function that makes its parameters from the pattern.)
    def search_sql(self, limit: int) -> tuple[str, Callable[[str], tuple[str, ...]]]: ...
    def search_ids_sql(self, limit: int) -> tuple[str, Callable[[str], tuple[str, ...]]]: ...


#: The side-file kind of a Claude Code 2.0.x subagent transcript: ``project/agent-<id>.jsonl``,
#: a file of the project folder beside the main transcript, where 2.0.x writes it (the
#: Agent SDK's keys have no place for it, so it is no stream).
LEGACY_AGENT = "project"


@dataclass(frozen=True, slots=True)
class StreamKey:
    project_key: str
    session_id: str
    subpath: str = ""


@dataclass(frozen=True, slots=True)
class Version:
    version: int
    created_ms: int
    updated_ms: int
    reason: str
    source: str | None
    nbytes: int
    sha256: str | None
    file_mtime_ns: int | None
    nlines: int
    diagnostics: list[dict[str, Any]] | None


@dataclass(frozen=True, slots=True)
class StreamInfo:
    id: int
    key: StreamKey
    current_version: int
    mtime_ms: int
    summary: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class SearchHit:
    key: StreamKey
    version: int
    seq: int
    uuid: str | None
    line: bytes


def redacted(url: str) -> str:
    """The URL as messages show it: a password in it becomes ``***``."""
    url = re.sub(r"(://[^:/@]*):[^/]*@", r"\1:***@", url)
    return re.sub(r"(?i)(password=)[^&]*", r"\1***", url)
