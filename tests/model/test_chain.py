"""The chain model: active leaf as the Agent SDK picks it, cycles, dead branches."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools.model.chain import (
    ASSISTANT,
    BOUNDARY,
    META,
    SIDECHAIN,
    USER,
    ChainIndex,
    key_uuid,
    uuid_key,
)


def u(n: int) -> str:
    return f"{n:08x}-0000-4000-8000-000000000000"


def build(edges: list[tuple[int, int | None, int]]) -> ChainIndex:
    ix = ChainIndex()
    for n, p, flags in edges:
        ix.add(u(n), None if p is None else u(p), n, flags)
    ix.finish()
    return ix


def test_uuid_keys_round_trip() -> None:
    for s in [u(5), "edge_010", "[trimmed for fixture]"]:
        assert key_uuid(uuid_key(s)) == s
    # UUIDs compare by their hex digits; they render in Claude Code's lowercase form.
    assert (
        key_uuid(uuid_key("ABCDEF00-0000-4000-8000-000000000000")) == "abcdef00-0000-4000-8000-000000000000"
    )
    assert len(uuid_key(u(1))) == 16


def test_active_leaf_is_latest_main_leaf_and_walk_stops_at_boundary() -> None:
    ix = build(
        [
            (1, None, USER),
            (2, 1, ASSISTANT),
            (3, 2, USER),  # rewound: dead branch
            (4, 2, USER | META),  # a meta leaf is never chosen over a main one
            (5, None, BOUNDARY),
            (6, 5, USER),
            (7, 6, ASSISTANT),
            (8, None, USER | SIDECHAIN),  # a later sidechain leaf loses too
        ]
    )
    assert ix.uuid(ix.active_leaf()) == u(7)
    assert [ix.uuid(i) for i in ix.active_chain()] == [u(5), u(6), u(7)]
    dead = {ix.uuid(i) for i in ix.dead_branches()}
    assert dead == {u(3)}


def test_terminal_progress_walks_up_to_its_message() -> None:
    ix = build([(1, None, USER), (2, 1, ASSISTANT), (3, 2, 0), (4, 3, 0)])
    assert ix.uuid(ix.active_leaf()) == u(2)


def test_cycle_is_found_and_walks_end() -> None:
    ix = ChainIndex()
    ix.add(u(1), u(3), 1, USER)
    ix.add(u(2), u(1), 2, ASSISTANT)
    ix.add(u(3), u(2), 3, USER)
    ix.add(u(4), None, 4, USER)
    ix.finish()
    cyc = ix.cycles()
    assert len(cyc) == 1 and sorted(cyc[0]) == [0, 1, 2]
    assert len(list(ix.walk_up(0))) == 3


def test_duplicates_and_dangling() -> None:
    ix = ChainIndex()
    assert ix.add(u(1), None, 1, USER) == 0
    assert ix.add(u(1), None, 2, USER) == -1
    ix.add(u(2), u(99), 3, ASSISTANT)
    ix.add(u(3), u(4), 4, USER)  # parent written later: resolves
    ix.add(u(4), u(1), 5, ASSISTANT)
    ix.finish()
    assert [(d.uuid, d.line, d.first_line) for d in ix.duplicates] == [(u(1), 2, 1)]
    assert list(ix.dangling()) == [(1, u(99))]
    assert ix.parent[2] == 3


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 30),
            st.one_of(st.none(), st.integers(0, 30)),
            st.sampled_from([USER, ASSISTANT, 0, USER | SIDECHAIN]),
        ),
        max_size=40,
    )
)
def test_walks_end_on_any_graph(edges: list[tuple[int, int | None, int]]) -> None:
    ix = ChainIndex()
    for line, (n, p, f) in enumerate(edges):
        ix.add(u(n), None if p is None else u(p), line, f)
    ix.finish()
    for i in range(len(ix)):
        walk = list(ix.walk_up(i))
        assert len(walk) == len(set(walk)) <= len(ix)
    chain = ix.active_chain()
    assert len(chain) == len(set(chain))
    ix.cycles()


def test_a_graph_added_by_key_is_the_graph_added_by_uuid() -> None:
    # Repair rebuilds its output graph from another index's keys (`add_key`); the result
    # must be what `add` makes of the same nodes, out-of-order parents included.
    edges = [(1, None, USER), (3, 2, USER), (2, 1, ASSISTANT), (4, 9, USER), (5, 3, ASSISTANT)]
    by_uuid = build(edges)
    by_key = ChainIndex()
    for n, p, flags in edges:
        by_key.add_key(uuid_key(u(n)), None if p is None else uuid_key(u(p)), n, flags, None)
    by_key.finish()
    assert list(by_key.parent) == list(by_uuid.parent)
    assert list(by_key.line) == list(by_uuid.line) and by_key.flags == by_uuid.flags
    assert [by_key.uuid(i) for i in range(len(by_key))] == [u(n) for n, _, _ in edges]
    assert list(by_key.unresolved()) == list(by_uuid.unresolved()) == [(3, u(9))]


def test_path_up_is_the_walk_up_list_on_any_graph() -> None:
    """`ChainIndex.path_up` (the fast walk) against `walk_up` on graphs with parents
    written after their children, self-loops and cycles."""
    import random

    rng = random.Random(5)
    for _ in range(300):
        n = rng.randint(1, 12)
        ix = ChainIndex()
        for i in range(n):
            p = rng.choice([None, *range(n)])
            ix.add(f"n{i}", None if p is None else f"n{p}", i + 1, 0)
        ix.finish()
        for i in range(n):
            assert ix.path_up(i) == list(ix.walk_up(i))


def test_answered_roots_are_the_roots_a_model_answered_under() -> None:
    ix = build(
        [
            (1, None, USER | META),  # a /clear's caveat, its command, the command's output
            (2, 1, USER),
            (3, 2, 0),
            (4, None, 0),  # the SessionStart hook's attachment, rooted afresh
            (5, 4, USER),
            (6, 5, ASSISTANT),
            (7, None, USER),  # a root whose only answer is a sidechain's
            (8, 7, ASSISTANT | SIDECHAIN),
        ]
    )
    roots = ix.roots()
    assert [ix.uuid(i) for i in roots] == [u(1), u(4), u(7)]
    assert [ix.uuid(i) for i in ix.answered_roots(roots)] == [u(4)]


def test_answered_roots_is_the_walk_s_answer_on_any_graph() -> None:
    """The one-pass root table against `root_of` (the cycle-safe walk) on graphs with
    parents written after their children, self-loops and cycles."""
    import random

    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(1, 12)
        ix = ChainIndex()
        for i in range(n):
            p = rng.choice([None, None, *range(n)])
            ix.add(f"n{i}", None if p is None else f"n{p}", i + 1, rng.choice([0, USER, ASSISTANT]))
        ix.finish()
        roots = ix.roots()
        answered = {ix.root_of(i) for i in range(n) if ix.flags[i] & ASSISTANT}
        assert ix.answered_roots(roots) == [r for r in roots if r in answered]
