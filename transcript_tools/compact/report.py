"""The report of a compaction: what was read, kept, pruned, summarised and written.

`Result` is filled in by `compact.files` as it goes; `Result.to_dict` is the ``--json`` shape
of ``tt compact`` (views render the same dict). Token counts are estimates unless named
``exact``; the dict says so next to them.

Invariants: plain data; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path


@dataclass(slots=True)
class Result:
    """What a compaction did (the report; `to_dict` is the ``--json`` shape)."""

    source: Path
    session_id: str | None
    mode: str
    summarizer: str
    output: Path | None = None
    new_session_id: str | None = None
    backup: Path | None = None
    tokens_before: int = 0
    tokens_before_exact: bool = False
    tokens_after: int = 0
    tokens_after_exact: int | None = None
    summary_tokens: int = 0
    kept_tokens: int = 0
    kept_tokens_unpruned: int = 0
    budget: int = 0
    over_budget: bool = False
    last_reported_tokens: int | None = None
    bytes_before: int = 0
    conversation_bytes_before: int = 0
    bytes_after: int = 0  # bytes written (in place without drop_history: appended)
    file_after: int | None = None  # the file's size after an in-place write
    drop_history: bool = False  # in place: the file was replaced by the compaction alone
    conversation: int = 0
    summarised: int = 0  # messages of the conversation the summary replaces
    context: int = 0  # messages read for the summary's context only (earlier history, key messages)
    kept: int = 0
    key: list[str] = field(default_factory=list)
    tail_first: str | None = None
    prune: dict[str, dict[str, int]] = field(default_factory=dict)
    damage_pieces: int = 0
    damage_bytes: int = 0
    repaired: bool = False
    repair_actions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    nothing_to_do: bool = False
    #: the compaction would not shrink the request, so it was not written (compact/files.py docstring)
    grows: bool = False
    #: the whole conversation was copied without the records a resume never sends (no summary)
    slim: bool = False
    summary: str = ""
    seconds: float = 0.0
    #: what the token counter says of its counts (`tokenizer.ESTIMATE_NOTE`), set by the caller
    tokens_note: str = ""
    records: list[dict[str, Any]] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": str(self.source),
            "session_id": self.session_id,
            "mode": self.mode,
            "output": str(self.output) if self.output else None,
            "new_session_id": self.new_session_id,
            "backup": str(self.backup) if self.backup else None,
            "summarizer": self.summarizer,
            "nothing_to_do": self.nothing_to_do,
            "grows": self.grows,
            "slim": self.slim,
            "tokens": {
                "before": self.tokens_before,
                "after": self.tokens_after,
                "after_exact": self.tokens_after_exact,
                "summary": self.summary_tokens,
                "kept": self.kept_tokens,
                "kept_unpruned": self.kept_tokens_unpruned,
                "budget": self.budget,
                "over_budget": self.over_budget,
                "last_reported_by_api": self.last_reported_tokens,
                "estimate": True,
                "note": self.tokens_note,
            },
            "bytes": {
                "before": self.bytes_before,
                "conversation_before": self.conversation_bytes_before,
                "after": self.bytes_after,
                "file_after": self.file_after,
            },
            "drop_history": self.drop_history,
            "messages": {
                "conversation": self.conversation,
                "summarised": self.summarised,
                "read_for_context": self.context,
                "kept": self.kept,
                "key": self.key,
                "first_kept_of_tail": self.tail_first,
            },
            "prune": self.prune,
            "damage": {
                "skipped_pieces": self.damage_pieces,
                "skipped_bytes": self.damage_bytes,
                "repaired_in_memory": self.repaired,
                "repair_actions": self.repair_actions,
            },
            "notes": self.notes,
            "seconds": round(self.seconds, 3),
        }
