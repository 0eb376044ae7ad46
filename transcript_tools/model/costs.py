"""Token costs of transcript records, as values: what `tokenizer` measures and `compact.plan` plans with.

A `RecordCost` is the estimated number of tokens one record adds to a resumed request,
split into `BlockCost`s, one per top-level content block, so the planner can see what
pruning a block would save without reading the record again.

Invariants: pure data; ``RecordCost.tokens`` is the sum of its blocks plus
`MESSAGE_OVERHEAD` (0 for a record that is not sent).
"""

from __future__ import annotations

from dataclasses import dataclass

#: Tokens counted for one image (Anthropic's vision docs: about width*height/750, ~1,600
#: for the largest images sent without resizing).
IMAGE_TOKENS = 1600
#: Role and framing tokens around each message (an estimate; the API does not document it).
MESSAGE_OVERHEAD = 4
#: Kinds of content a cost is split into.
KINDS = ("text", "tool_use", "tool_output", "thinking", "images", "other")


@dataclass(frozen=True, slots=True)
class BlockCost:
    """Estimated tokens of one top-level content block (or of a string content)."""

    kind: str  # one of KINDS
    tokens: int
    #: image blocks inside a tool_result (counted in ``tokens`` too, IMAGE_TOKENS each)
    images: int = 0


@dataclass(frozen=True, slots=True)
class RecordCost:
    """Estimated tokens of one transcript record as a resume sends it."""

    tokens: int
    blocks: tuple[BlockCost, ...] = ()

    def by_kind(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for b in self.blocks:
            if b.images and b.kind == "tool_output":
                img = b.images * IMAGE_TOKENS
                out["images"] = out.get("images", 0) + img
                out[b.kind] = out.get(b.kind, 0) + b.tokens - img
            else:
                out[b.kind] = out.get(b.kind, 0) + b.tokens
        return out
