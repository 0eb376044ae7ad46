"""Planning a compaction: what to keep verbatim, what to prune, what to summarise.

`plan` takes the conversation a resume sends (node indexes, in order) and reads what it
needs of each node through ``info`` (its token cost, message id, tool ids), from the end
backwards, so only the kept part is ever read. The plan:

- keeps the most recent messages verbatim, up to ``keep_tokens`` (`DEFAULT_KEEP_TOKENS`);
- keeps the key nodes whatever their age: the first human request and the nodes named
  with ``--keep``; their cost counts against the same budget;
- never splits the lines of one API response (one ``message.id``, docs/format.md §3.2.1) nor
  a ``tool_use`` from its ``tool_result``: a cut that would moves back until it does not;
  key nodes grow to the whole response and its results the same way;
- never keeps a compact boundary or an earlier compact summary verbatim: the new summary
  replaces them, and they are summarised with the rest;
- with ``prune`` (the cheap tier, `PRUNE_KINDS`), replaces big tool outputs and images
  with a short placeholder, and drops thinking blocks, inside the kept part (not in its
  last response, which stays exactly as it was), so more recent messages fit;
- summarises everything else on the conversation.

The kept tail always holds at least the last response (and its results), even when
that alone is over the budget (``Plan.over_budget`` says so): a resume without the last
state of the work would be worse than a large one.

Why 40,000 tokens by default: a fifth of the 200k-token context window Claude Code works
in. It is room for the last few turns with their tool output, so the work can go on
without re-reading files, and it leaves about three quarters of the window free, so
Claude Code does not auto-compact again right after the resume (it does so near the top
of the window).

Invariants:
- Pure: no I/O; ``info`` is the only way content is seen.
- The kept positions are a set of contiguous spans closed under the two rules above
  (except tool ids with no partner within `MAX_PAIR_DISTANCE` nodes: orphans, noted).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ..model.costs import IMAGE_TOKENS, BlockCost, RecordCost

DEFAULT_KEEP_TOKENS = 40_000
#: CLI names of the prune kinds -> the cost kind they act on.
PRUNE_KINDS = {"tool-output": "tool_output", "thinking": "thinking", "images": "images"}
#: A tool output or image is pruned only from this size on (thinking always: the API
#: does not show a model the thinking of earlier turns, Anthropic's extended-thinking docs).
PRUNE_MIN_TOKENS = 500
#: What a placeholder costs (its text, estimated).
PLACEHOLDER_TOKENS = 30
#: How far (in nodes) a tool_use is looked for behind its tool_result, and back.
MAX_PAIR_DISTANCE = 2000
#: How far (in nodes) the other lines of one API response are looked for.
RESPONSE_WINDOW = 500


@dataclass(frozen=True, slots=True)
class PlanOptions:
    keep_tokens: int = DEFAULT_KEEP_TOKENS
    prune: frozenset[str] = frozenset()  # keys of PRUNE_KINDS
    prune_min_tokens: int = PRUNE_MIN_TOKENS


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """What the planner knows of one node once read."""

    type: str | None
    cost: RecordCost
    message_id: str | None = None
    tool_uses: tuple[str, ...] = ()
    tool_results: tuple[str, ...] = ()
    #: a compact boundary or a compact summary: never kept verbatim
    compaction: bool = False
    progress: bool = False


@dataclass(frozen=True, slots=True)
class Prune:
    """Replace (or drop) one content block of a kept node."""

    node: int
    block: int  # index in message.content
    kind: str  # a key of PRUNE_KINDS
    tokens: int  # estimated tokens saved


@dataclass(slots=True)
class Plan:
    conversation: int  # nodes on the conversation
    kept: list[int]  # node indexes to copy, in output order (progress lines left out)
    key: list[int]  # the key nodes asked for (first request, --keep) that are kept
    tail_start: int  # position in the conversation where the verbatim tail begins
    summarised: bytearray  # per node: 1 when summarised
    summarised_count: int
    summarised_tokens_estimate: int = 0  # filled by the caller after the second pass
    kept_tokens: int = 0  # after pruning
    kept_tokens_unpruned: int = 0
    prunes: list[Prune] = field(default_factory=list)
    over_budget: bool = False
    orphans: list[str] = field(default_factory=list)
    last_node: int | None = None  # the conversation's last node (the pre-compaction leaf)

    @property
    def nothing_to_do(self) -> bool:
        return self.summarised_count == 0

    def pruned_by_kind(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for p in self.prunes:
            d = out.setdefault(p.kind, {"blocks": 0, "tokens": 0})
            d["blocks"] += 1
            d["tokens"] += p.tokens
        return out


def prunes_for(node: int, info: NodeInfo, kinds: frozenset[str], min_tokens: int) -> list[Prune]:
    """The prunes one node allows under ``kinds`` (see module docstring)."""
    if not kinds or info.type not in ("user", "assistant"):
        return []
    out: list[Prune] = []
    for k, b in enumerate(info.cost.blocks):
        p = _block_prune(b, kinds, min_tokens)
        if p is not None:
            out.append(Prune(node, k, p[0], p[1]))
    return out


def _block_prune(b: BlockCost, kinds: frozenset[str], min_tokens: int) -> tuple[str, int] | None:
    if b.kind == "thinking" and "thinking" in kinds:
        return "thinking", b.tokens
    if b.kind == "tool_output":
        if "tool-output" in kinds and b.tokens >= min_tokens:
            return "tool-output", max(0, b.tokens - PLACEHOLDER_TOKENS)
        if "images" in kinds and b.images:
            return "images", max(0, b.images * (IMAGE_TOKENS - PLACEHOLDER_TOKENS))
    if b.kind == "images" and "images" in kinds:
        return "images", max(0, b.tokens - PLACEHOLDER_TOKENS)
    return None


class _Reader:
    """Caches ``info`` so each node is read once."""

    def __init__(self, info: Callable[[int], NodeInfo]) -> None:
        self._info = info
        self._cache: dict[int, NodeInfo] = {}

    def __call__(self, node: int) -> NodeInfo:
        got = self._cache.get(node)
        if got is None:
            got = self._cache[node] = self._info(node)
        return got


def plan(
    conversation: Sequence[int],
    info: Callable[[int], NodeInfo],
    *,
    nodes: int,
    key_nodes: Iterable[int] = (),
    options: PlanOptions = PlanOptions(),
    group: Callable[[int], object] | None = None,
) -> Plan:
    """Plan the compaction of ``conversation`` (``nodes``: how many nodes the file has).

    ``group(node)`` names the API response a node belongs to (falsy for none) without
    reading it (the outline's message-id hash); by default it is read through ``info``."""
    read = _Reader(info)
    grp: Callable[[int], object] = group if group is not None else (lambda n: read(n).message_id)
    conv = conversation
    pos = array("q", [-1]) * nodes
    for p, n in enumerate(conv):
        pos[n] = p
    kinds = frozenset(options.prune)
    prunes: dict[int, list[Prune]] = {}

    def cost(node: int, protected: bool) -> tuple[int, int]:
        inf = read(node)
        full = inf.cost.tokens
        if protected or not kinds or inf.progress:
            return full, full
        ps = prunes_for(node, inf, kinds, options.prune_min_tokens)
        if not ps:
            return full, full
        prunes[node] = ps
        return full - sum(p.tokens for p in ps), full

    # 1. Key nodes: each grows to a span that keeps responses and tool pairs whole.
    spans: list[tuple[int, int]] = []
    off_conversation: list[int] = []
    key: list[int] = []
    for k in dict.fromkeys(key_nodes):
        p = pos[k] if 0 <= k < nodes else -1
        if p < 0:
            off_conversation.append(k)
            key.append(k)
            continue
        if read(k).compaction:
            continue
        spans.append(_grow(conv, read, grp, p))
        key.append(k)
    spans = _merge(spans)
    key_cost = 0
    key_full = 0
    for a, b in spans:
        for p in range(a, b + 1):
            c, f = cost(conv[p], False)
            key_cost += c
            key_full += f
    for k in off_conversation:
        c, f = cost(k, False)
        key_cost += c
        key_full += f

    # 2. The tail, from the end back, within what the key nodes left of the budget.
    budget = max(0, options.keep_tokens - key_cost)
    start, protected, tail_cost, tail_full, orphans = _tail(conv, read, grp, budget, cost)
    # Key spans reaching into the tail are part of it; their cost was counted twice.
    for a, b in spans:
        for p in range(max(a, start), b + 1):
            c, f = cost(conv[p], False)
            key_cost -= c
            key_full -= f
    kept_pos = sorted({p for a, b in spans for p in range(a, b + 1)} | set(range(start, len(conv))))
    kept_set = set(kept_pos)
    kept = list(off_conversation) + [conv[p] for p in kept_pos if not read(conv[p]).progress]
    summarised = bytearray(nodes)
    count = 0
    for p, n in enumerate(conv):
        if p not in kept_set:
            summarised[n] = 1
            count += 1
    kept_nodes = set(kept) - {conv[p] for p in range(protected, len(conv))}
    chosen = [p for n, ps in prunes.items() if n in kept_nodes for p in ps]
    total = key_cost + tail_cost
    return Plan(
        conversation=len(conv),
        kept=kept,
        key=key,
        tail_start=start,
        summarised=summarised,
        summarised_count=count,
        kept_tokens=total,
        kept_tokens_unpruned=key_full + tail_full,
        prunes=chosen,
        over_budget=total > options.keep_tokens,
        orphans=orphans,
        last_node=conv[-1] if conv else None,
    )


def _response_start(conv: Sequence[int], grp: Callable[[int], object], p: int, key: object) -> int:
    """The first position of the response ``key`` at or before ``p`` (within a window):
    a response's lines need not be adjacent (its first calls' results are written between
    them, docs/format.md §3.2.1), but the rebuild makes them one message."""
    first = p
    q = p
    while q > 0 and p - q < RESPONSE_WINDOW:
        q -= 1
        if grp(conv[q]) == key:
            first = q
    return first


def _response_end(conv: Sequence[int], grp: Callable[[int], object], p: int, key: object) -> int:
    last = p
    q = p
    while q + 1 < len(conv) and q - p < RESPONSE_WINDOW:
        q += 1
        if grp(conv[q]) == key:
            last = q
    return last


def _tail(
    conv: Sequence[int],
    read: _Reader,
    grp: Callable[[int], object],
    budget: int,
    cost: Callable[[int, bool], tuple[int, int]],
) -> tuple[int, int, int, int, list[str]]:
    """The verbatim tail: (start position, start of its protected last response, cost,
    unpruned cost, orphan tool ids)."""
    needed: dict[str, int] = {}  # tool_use id -> position its result was seen at
    responses: set[object] = set()
    bound = len(conv)  # the cut must be at or before this: every kept response starts after it
    orphans: list[str] = []
    cum = full = 0
    best: tuple[int, int, int] | None = None
    protected = len(conv)
    p = len(conv)
    stopped = False
    while p > 0:
        node = conv[p - 1]
        inf = read(node)
        if inf.compaction:
            break
        c, f = cost(node, best is None)
        cum += c
        full += f
        p -= 1
        key = grp(node)
        if key and key not in responses:
            responses.add(key)
            bound = min(bound, _response_start(conv, grp, p, key))
        for t in inf.tool_results:
            needed.setdefault(t, p)
        for t in inf.tool_uses:
            needed.pop(t, None)
        for t, at in list(needed.items()):
            if at - p > MAX_PAIR_DISTANCE:
                orphans.append(t)
                del needed[t]
        if not needed and p <= bound:
            if best is None:
                protected = p
            if best is None or cum <= budget:
                best = (p, cum, full)
            if cum >= budget:
                stopped = True
                break
        elif best is not None and cum > budget:
            stopped = True
            break
    if not stopped and needed:
        # Reached the start (or a boundary) with results whose call is not on the
        # conversation: orphans (the rebuild drops them). Everything after the boundary
        # is a valid tail then.
        orphans.extend(needed)
        if best is None:
            protected = p
        if best is None or cum <= budget:
            best = (p, cum, full)
    if best is None:
        best = (p, cum, full)
        protected = p
    return best[0], protected, best[1], best[2], orphans


def _grow(conv: Sequence[int], read: _Reader, grp: Callable[[int], object], p: int) -> tuple[int, int]:
    """The smallest span around position ``p`` that keeps responses and tool pairs whole."""
    a = b = p
    n = len(conv)
    while True:
        a0, b0 = a, b
        for q in range(a0, b0 + 1):
            key = grp(conv[q])
            if key:
                a = min(a, _response_start(conv, grp, q, key))
                b = max(b, _response_end(conv, grp, q, key))
        uses: set[str] = set()
        results: set[str] = set()
        for q in range(a, b + 1):
            inf = read(conv[q])
            uses.update(inf.tool_uses)
            results.update(inf.tool_results)
        missing_results = uses - results
        q = b
        while missing_results and q + 1 < n and q - b < MAX_PAIR_DISTANCE:
            q += 1
            inf = read(conv[q])
            if missing_results & set(inf.tool_results):
                missing_results -= set(inf.tool_results)
                b = q
        missing_uses = results - uses
        q = a
        while missing_uses and q > 0 and a - q < MAX_PAIR_DISTANCE:
            q -= 1
            inf = read(conv[q])
            if inf.compaction:
                break
            if missing_uses & set(inf.tool_uses):
                missing_uses -= set(inf.tool_uses)
                a = q
        if (a, b) == (a0, b0):
            return a, b


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out
