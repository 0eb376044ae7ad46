"""compact: the planner. Synthetic conversations (exact costs, no tokenizer) for the rules,
and hypothesis for the invariants: the kept part never splits a response or a tool call
from its result, fits the budget unless the last response alone does not, is the
largest tail that fits, and with the summarised part covers the conversation once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools.compact.plan import (
    DEFAULT_KEEP_TOKENS,
    PLACEHOLDER_TOKENS,
    NodeInfo,
    Plan,
    PlanOptions,
    plan,
    prunes_for,
)
from transcript_tools.model.costs import BlockCost, RecordCost


def user(tokens: int = 10) -> NodeInfo:
    return NodeInfo("user", RecordCost(tokens, (BlockCost("text", tokens),)))


def text(mid: str, tokens: int = 10) -> NodeInfo:
    return NodeInfo("assistant", RecordCost(tokens, (BlockCost("text", tokens),)), message_id=mid)


def think(mid: str, tokens: int = 10) -> NodeInfo:
    return NodeInfo("assistant", RecordCost(tokens, (BlockCost("thinking", tokens),)), message_id=mid)


def call(mid: str, tid: str, tokens: int = 10) -> NodeInfo:
    return NodeInfo(
        "assistant", RecordCost(tokens, (BlockCost("tool_use", tokens),)), message_id=mid, tool_uses=(tid,)
    )


def result(tid: str, tokens: int = 10, images: int = 0) -> NodeInfo:
    return NodeInfo(
        "user", RecordCost(tokens, (BlockCost("tool_output", tokens, images),)), tool_results=(tid,)
    )


def boundary() -> NodeInfo:
    return NodeInfo("system", RecordCost(0), compaction=True)


def summary(tokens: int = 50) -> NodeInfo:
    return NodeInfo("user", RecordCost(tokens, (BlockCost("text", tokens),)), compaction=True)


def progress() -> NodeInfo:
    return NodeInfo("progress", RecordCost(0), progress=True)


@dataclass
class Conv:
    infos: list[NodeInfo]
    #: nodes after these are in the file but not on the conversation
    off: Sequence[NodeInfo] = ()

    def plan(self, keep_tokens: int, *, key: Sequence[int] = (), prune: frozenset[str] = frozenset()) -> Plan:
        reads: list[int] = []
        every = [*self.infos, *self.off]

        def info(i: int) -> NodeInfo:
            reads.append(i)
            return every[i]

        # As the compactor does: the response of a node is known without reading it.
        p = plan(
            list(range(len(self.infos))),
            info,
            nodes=len(every),
            key_nodes=key,
            options=PlanOptions(keep_tokens, prune),
            group=lambda i: every[i].message_id,
        )
        self.reads = reads
        return p


def turns(n: int, tokens: int = 10) -> list[NodeInfo]:
    """n turns: prompt, a call, its result, a text answer (one response of 2 lines)."""
    out: list[NodeInfo] = []
    for k in range(n):
        out += [user(tokens), call(f"m{k}", f"t{k}", tokens), result(f"t{k}", tokens), text(f"n{k}", tokens)]
    return out


def kept_positions(p: Plan, n: int) -> list[int]:
    return [i for i in range(n) if not p.summarised[i]]


def test_default_budget_is_documented() -> None:
    assert DEFAULT_KEEP_TOKENS == 40_000


def test_keeps_the_most_recent_messages_up_to_the_budget() -> None:
    c = Conv(turns(10))  # 40 nodes of 10 tokens
    p = c.plan(95, key=())
    assert p.kept == list(range(31, 40))  # 9 nodes = 90 tokens; a 10th would pass 95
    assert p.kept_tokens == 90 and not p.over_budget
    assert p.summarised_count == 31
    # Only the tail (and the node just before it) was read.
    assert min(c.reads) >= 29


def test_a_cut_never_splits_one_response() -> None:
    infos = [user(), text("m", 10), text("m", 10), text("m", 10), user(), text("x", 10)]
    p = Conv(infos).plan(35)
    # 20 for the last two; the 3-line response would make 50: it is kept whole or not at all.
    assert p.kept == [4, 5]
    p = Conv(infos).plan(50)
    assert p.kept == [1, 2, 3, 4, 5]


def test_a_cut_never_splits_a_response_whose_results_are_between_its_lines() -> None:
    infos = [user(), call("m", "A"), result("A"), call("m", "B"), result("B"), text("z")]
    assert Conv(infos).plan(35).kept == [5]
    assert Conv(infos).plan(50).kept == [1, 2, 3, 4, 5]
    p = Conv(turns(3) + infos).plan(40, key=[15])
    assert {13, 14, 15, 16} <= set(p.kept)


def test_a_cut_never_splits_parallel_calls_from_their_results() -> None:
    infos = [user(), call("m", "A"), call("m", "B"), result("A"), result("B"), text("z")]
    for budget in (15, 25, 35, 45):
        p = Conv(infos).plan(budget)
        kept = set(p.kept)
        if 3 in kept or 4 in kept:
            assert {1, 2, 3, 4} <= kept, (budget, p.kept)
    assert Conv(infos).plan(25).kept == [5]  # 10 fits; the group of 4 would make 50
    assert Conv(infos).plan(50).kept == [1, 2, 3, 4, 5]


def test_the_last_response_is_kept_even_over_budget() -> None:
    infos = [user(), text("a"), user(), call("m", "T", 500), result("T", 5000), text("m2", 300)]
    p = Conv(infos).plan(100)
    assert (p.kept == [5] and not p.over_budget) or p.kept == [5]
    p = Conv([user(), text("a"), user(), text("big", 5000)]).plan(100)
    assert p.kept == [3] and p.over_budget and p.kept_tokens == 5000


def test_compaction_nodes_are_never_kept() -> None:
    infos = [boundary(), summary(), user(), text("a")]
    p = Conv(infos).plan(10_000)
    assert p.kept == [2, 3]
    assert p.summarised[0] and p.summarised[1]
    assert not p.nothing_to_do


def test_nothing_to_do_when_everything_fits() -> None:
    p = Conv(turns(2)).plan(10_000)
    assert p.nothing_to_do and p.kept == list(range(8))


def test_key_nodes_are_kept_with_their_response_and_results() -> None:
    c = Conv(turns(10))
    # Key: the call of turn 2 (position 9): its response and its result come along.
    p = c.plan(60, key=[9])
    assert {9, 10} <= set(p.kept)
    assert p.kept.index(9) < p.kept.index(10)
    assert p.key == [9]
    assert p.kept_tokens <= 60
    # Key nodes are counted against the same budget: the tail is shorter.
    assert p.kept[-4:] == [36, 37, 38, 39] and 35 not in p.kept


def test_a_key_result_brings_its_call() -> None:
    p = Conv(turns(10)).plan(40, key=[10])
    assert {9, 10} <= set(p.kept)


def test_first_request_off_the_conversation_comes_first() -> None:
    c = Conv(turns(5), off=[user(5), user(5)])
    p = c.plan(30, key=[21])  # node 21 is in the file but not on the conversation
    assert p.kept[0] == 21 and p.key == [21]
    assert not p.summarised[21]
    assert p.kept == [21, 19] and p.kept_tokens == 15  # a result (18) needs its call (17): 35 > 30


def test_progress_lines_are_left_out_of_the_copy() -> None:
    infos = [user(), progress(), call("m", "T"), progress(), result("T"), text("z")]
    p = Conv(infos).plan(1000)
    assert p.nothing_to_do
    p = Conv([user(), text("x", 500), *infos]).plan(100)
    assert p.kept == [2, 4, 6, 7]  # the progress lines 3 and 5 are not copied


def test_orphan_results_do_not_block_the_cut() -> None:
    infos = [user(), text("a"), result("nowhere"), text("b")]
    p = Conv(infos).plan(25)
    assert p.kept == [3]
    p = Conv(infos).plan(1000)
    assert "nowhere" in p.orphans


def test_prune_tool_output_lets_more_recent_messages_fit() -> None:
    infos = [*turns(3), user(), call("mx", "X"), result("X", 3000), text("nx"), user(), text("last")]
    plain = Conv(infos).plan(200)
    pruned = Conv(infos).plan(200, prune=frozenset({"tool-output"}))
    assert len(pruned.kept) > len(plain.kept)
    assert pruned.kept_tokens <= 200
    [pr] = pruned.prunes
    assert (pr.kind, pr.node, pr.block) == ("tool-output", 14, 0)
    assert pr.tokens == 3000 - PLACEHOLDER_TOKENS
    assert pruned.pruned_by_kind() == {"tool-output": {"blocks": 1, "tokens": 3000 - PLACEHOLDER_TOKENS}}
    assert pruned.kept_tokens_unpruned - pruned.kept_tokens == pr.tokens


def test_the_last_response_is_never_pruned() -> None:
    infos = [user(), text("a"), user(), call("m", "T"), result("T", 3000)]
    p = Conv(infos).plan(100, prune=frozenset({"tool-output"}))
    assert p.prunes == [] and p.kept == [3, 4] and p.over_budget


def test_small_outputs_are_not_pruned_but_thinking_always_is() -> None:
    infos = [user(), think("m", 50), call("m", "T"), result("T", 100), text("m"), user(), text("end")]
    p = Conv(infos).plan(10_000, prune=frozenset({"tool-output", "thinking"}))
    # nothing to summarise: everything fits
    assert p.nothing_to_do
    infos = [user(), text("z", 1000), *infos]
    p = Conv(infos).plan(300, prune=frozenset({"tool-output", "thinking"}))
    kinds = {(x.kind, x.node) for x in p.prunes}
    assert kinds == {("thinking", 3)}


def test_prunes_for_images() -> None:
    info = NodeInfo(
        "user",
        RecordCost(3300, (BlockCost("tool_output", 3200, images=2), BlockCost("images", 1600))),
        tool_results=("t",),
    )
    ps = prunes_for(7, info, frozenset({"images"}), 500)
    assert [(p.kind, p.block) for p in ps] == [("images", 0), ("images", 1)]
    assert prunes_for(7, info, frozenset(), 500) == []
    ps = prunes_for(7, info, frozenset({"tool-output", "images"}), 500)
    assert [(p.kind, p.block) for p in ps] == [("tool-output", 0), ("images", 1)]


# --- invariants --------------------------------------------------------------------------


@st.composite
def conversations(draw: st.DrawFn) -> list[NodeInfo]:
    out: list[NodeInfo] = []
    if draw(st.booleans()):
        out += [boundary(), summary(draw(st.integers(1, 200)))]
    tid = 0
    for k in range(draw(st.integers(1, 12))):
        out.append(user(draw(st.integers(1, 300))))
        for r in range(draw(st.integers(0, 3))):
            mid = f"m{k}.{r}"
            if draw(st.booleans()):
                out.append(think(mid, draw(st.integers(1, 200))))
            calls = [f"t{tid + j}" for j in range(draw(st.integers(0, 3)))]
            tid += len(calls)
            if draw(st.booleans()):
                # Parallel calls chained call -> result -> call (2.1.2xx writes them so).
                for t in calls:
                    out.append(call(mid, t, draw(st.integers(1, 100))))
                    out.append(result(t, draw(st.integers(1, 2000))))
                continue
            for t in calls:
                out.append(call(mid, t, draw(st.integers(1, 100))))
            if draw(st.booleans()):
                out.append(progress())
            for t in calls:
                out.append(result(t, draw(st.integers(1, 2000))))
        out.append(text(f"e{k}", draw(st.integers(1, 300))))
    return out


def _closed(infos: list[NodeInfo], kept: set[int]) -> None:
    lines: dict[str, set[int]] = {}
    for i, x in enumerate(infos):
        if x.message_id is not None:
            lines.setdefault(x.message_id, set()).add(i)
    for mid, at in lines.items():
        assert at <= kept or not (at & kept), f"response {mid} split: {sorted(at)} vs kept"
    where_use = {t: i for i, x in enumerate(infos) for t in x.tool_uses}
    for i, x in enumerate(infos):
        for t in x.tool_results:
            if i in kept:
                assert where_use[t] in kept, f"result {i} kept without its call"


@settings(max_examples=300, deadline=None)
@given(
    conversations(),
    st.integers(0, 3000),
    st.sampled_from([frozenset(), frozenset({"tool-output", "thinking"})]),
)
def test_plan_invariants(infos: list[NodeInfo], budget: int, prune: frozenset[str]) -> None:
    n = len(infos)
    p = Conv(infos).plan(budget, prune=prune)
    kept_pos = set(kept_positions(p, n))
    # Summarised and kept partition the conversation; progress and compaction nodes
    # are never copied.
    assert all(not infos[i].progress and not infos[i].compaction for i in p.kept)
    assert set(p.kept) == {i for i in kept_pos if not infos[i].progress}
    assert p.summarised_count == n - len(kept_pos)
    _closed(infos, kept_pos | {i for i in range(n) if infos[i].progress and i >= p.tail_start})
    # The kept part is a tail.
    assert kept_pos == set(range(p.tail_start, n))
    # Within budget, unless the smallest possible tail is over it.
    if p.over_budget:
        assert p.kept_tokens > budget
    else:
        assert p.kept_tokens <= budget
    # Pruning never costs tokens.
    assert p.kept_tokens <= p.kept_tokens_unpruned
    assert sum(x.tokens for x in p.prunes) == p.kept_tokens_unpruned - p.kept_tokens


@settings(max_examples=200, deadline=None)
@given(conversations(), st.integers(0, 3000))
def test_the_tail_is_the_largest_that_fits(infos: list[NodeInfo], budget: int) -> None:
    n = len(infos)
    p = Conv(infos).plan(budget)
    if p.over_budget or p.tail_start == 0 or infos[p.tail_start - 1].compaction:
        return
    # Any longer valid tail costs more than the budget.
    for start in range(p.tail_start - 1, -1, -1):
        if infos[start].compaction:
            break
        tail = set(range(start, n))
        try:
            _closed(infos, tail)
        except AssertionError:
            continue
        # (A longer tail that adds only zero-cost entries is not larger.)
        extra = sum(infos[i].cost.tokens for i in range(start, p.tail_start))
        assert sum(infos[i].cost.tokens for i in tail) > budget or extra == 0
        break


def test_key_nodes_invariants() -> None:
    infos = turns(20)
    for k in range(0, 80, 3):
        p = Conv(infos).plan(120, key=[k])
        kept = set(kept_positions(p, len(infos)))
        assert k in kept
        _closed(infos, kept)


@pytest.mark.parametrize("budget", [0, 1, 10])
def test_tiny_budgets_keep_the_last_response(budget: int) -> None:
    p = Conv(turns(3)).plan(budget)
    assert p.kept == [11]


def test_without_a_group_function_responses_are_read() -> None:
    infos = [*turns(2), user(), call("m", "A"), result("A"), call("m", "B"), result("B"), text("z")]
    with_group = Conv(infos).plan(45)
    without = plan(list(range(len(infos))), infos.__getitem__, nodes=len(infos), options=PlanOptions(45))
    assert without.kept == with_group.kept == [13]
    assert plan(
        list(range(len(infos))), infos.__getitem__, nodes=len(infos), options=PlanOptions(60)
    ).kept == [8, 9, 10, 11, 12, 13]
