"""What the Messages API would reject in a conversation, judged on small per-node facts.

`api_findings` walks the nodes a resume sends (`active.conversation_nodes`, user and
assistant only) with their `active.NodeFacts` and yields ``(code, node, message)`` for:
tool calls left unanswered, results with no call before them, one response's lines split
apart by other messages, empty content, images over 5 MB, a request over 32 MB, one
``tool_use`` id used twice, and the block-level rules of `api_rules` (empty text blocks,
unsigned or cut thinking signatures, NULs, tool names past the API's limits, empty error
results), one finding per rule and message. (A persisted "Prompt is too long" is judged by
the streaming validator itself: it needs no facts.)

Invariants: pure (no I/O); the facts are all it reads, so the streaming validator and the
in-memory repair judge alike.
"""

from __future__ import annotations

from collections.abc import Iterator

from .active import NodeFacts
from .api_rules import (
    CODE_OF_BIT,
    HUGE_IMAGE,
    IMAGES_SHIFT,
    MANY_IMAGE_MESSAGE,
    MANY_IMAGES,
    RULE_BITS,
    WIDE_IMAGE,
)
from .chain import ASSISTANT, USER, ChainIndex

#: The Messages API's request size limit (32 MB), Anthropic API docs "Request size limits".
MAX_REQUEST_BYTES = 32 * 1000 * 1000

#: The first record of a forked subagent's transcript (Claude Code 2.1.332 writes
#: ``{type, agentId, parentSessionId, parentLastUuid, contextLength}``): the fork was sent
#: the parent's first ``contextLength`` messages, up to ``parentLastUuid``, and the file
#: holds only what came after, beginning with the result of the parent's call that
#: spawned it (its ``tool_use`` is in the parent's file).
FORK_CONTEXT_REF = "fork-context-ref"


def api_findings(
    ix: ChainIndex, facts: dict[int, NodeFacts], nodes: list[int], *, continues: bool = False
) -> Iterator[tuple[str, int, str]]:
    """What the Messages API would reject in this conversation: (code, node, message).

    ``nodes`` are user/assistant nodes in the order a resume sends them. Consecutive
    lines of one role form one API message (Claude Code merges them). From 2.1.2xx the
    lines of one response are chained with their own tool results between them
    (call a, result a, call b, result b): that is one response, not a split one.

    ``continues``: the file continues a context it does not hold (a forked subagent's
    transcript, which begins with a ``fork-context-ref`` record: `FORK_CONTEXT_REF`), so
    the results before its first response answer calls of that context, not orphans.
    """
    seen_mids: set[str] = set()
    cur_mid: str | None = None
    broken = False  # a real user message came after the current response's lines
    prev_role = 0
    open_uses: dict[str, int] = {}  # tool_use id -> node, awaiting a result
    cur_uses: set[str] = set()  # every call of the current response
    total = 0
    reported: set[str] = set()
    all_uses: set[str] = set()  # every tool_use id sent so far (the API wants them unique)
    images = 0  # images in the conversation (past MANY_IMAGES, 2000 px is the limit)
    wide: list[int] = []  # nodes with an image past 2000 px (and none past 8000)
    answered_before = continues  # results still answering the context the file continues
    for i in nodes:
        f = facts.get(i, _NO_FACTS)
        role = ix.flags[i] & (USER | ASSISTANT)
        total += f.size
        if f.empty:
            yield "empty-content", i, "message content is empty"
        if f.bad:
            images += f.bad >> IMAGES_SHIFT
            if f.bad & WIDE_IMAGE and not f.bad & HUGE_IMAGE:
                wide.append(i)
            for bit in RULE_BITS:
                if f.bad & bit:
                    code, what = CODE_OF_BIT[bit]
                    yield code, i, what
        if f.big_images:
            yield "image-too-large", i, f"{f.big_images} image(s) over the API's 5 MB limit"
        if role == ASSISTANT:
            answered_before = False
            mid = f.message_id
            same = mid is not None and mid == cur_mid
            if prev_role != ASSISTANT and not (same and not broken):
                # A new response: the calls of the previous one must have been answered.
                yield from _unanswered(open_uses)
                open_uses = {}
            if not same:
                if cur_mid is not None:
                    seen_mids.add(cur_mid)
                if mid is not None and mid in seen_mids and mid not in reported:
                    reported.add(mid)
                    yield (
                        "split-message-noncontiguous",
                        i,
                        f"lines of message {mid} are split apart by other messages",
                    )
                cur_mid, broken, cur_uses = mid, False, set()
            elif broken and mid is not None and mid not in reported:  # (same: mid is not None)
                reported.add(mid)
                yield (
                    "split-message-noncontiguous",
                    i,
                    f"lines of message {mid} are split apart by other messages",
                )
            for u in f.tool_uses:
                if u in all_uses:
                    yield "tool-use-id-duplicate", i, f"tool_use id {u} is used by an earlier call too"
                all_uses.add(u)
                open_uses[u] = i
                cur_uses.add(u)
        elif role == USER:
            for r in f.tool_results:
                if r in open_uses:
                    del open_uses[r]
                elif r not in cur_uses and not answered_before:
                    yield "tool-result-orphan", i, f"tool_result for {r} has no tool_use before it"
            if f.plain or not f.tool_results:
                broken = True
                if open_uses and prev_role == ASSISTANT and not f.tool_results:
                    yield from _unanswered(open_uses)
                    open_uses = {}
        prev_role = role
    yield from _unanswered(open_uses)
    if images > MANY_IMAGES:
        for i in wide:
            yield "image-dimensions-too-large", i, MANY_IMAGE_MESSAGE
    if total > MAX_REQUEST_BYTES:
        yield (
            "request-too-large",
            -1,
            f"the conversation is about {total / 1e6:.1f} MB, over the API's 32 MB request limit",
        )


#: What api_findings assumes of a node without facts (shared: NodeFacts is frozen).
_NO_FACTS = NodeFacts()


def _unanswered(open_uses: dict[str, int]) -> Iterator[tuple[str, int, str]]:
    for u, node in open_uses.items():
        yield "tool-use-unpaired", node, f"tool_use {u} has no tool_result after it"
