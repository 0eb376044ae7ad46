"""`render` and `tree` (what `tt show` displays), and `viewing` (loading it).

The checks compare what is shown with what the file holds, counted independently: every
prompt and reply of the conversation is shown once, every call has its result, each
subagent sits under the call that spawned it, and the only dead branches are rewinds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests import damage
from tests.support.cli import tt
from tests.support.paths import PUBLIC, REAL
from transcript_tools.edge.reader import load
from transcript_tools.model.active import conversation_nodes
from transcript_tools.model.prompts import is_prompt
from transcript_tools.model.session import Session
from transcript_tools.show.core import Marker, Message, build, history_segments, not_shown
from transcript_tools.show.files import load_for_show
from transcript_tools.show.text import fold, to_json, to_markdown
from transcript_tools.show.tree import ACTIVE, DEAD, build_forest, dead_branches, describe

S332 = REAL / "claude-config-2.1.332/projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
S197 = REAL / "claude-config-2.1.197/projects/-home-dev-demo-app/8c2f9135-4610-4218-97b1-bc3e03643255.jsonl"
REWIND = next((REAL / "claude-config-2.1.332-rewind-resume-session-at/projects").rglob("*.jsonl"))
INLINE = REAL / "v1.0.51-inline-sidechains-two-compactions.jsonl"
#: 1.0.51 wrote a response's line again as a new root (same message.id); the prompt before
#: the first copy is dead (new user report 2, finding 2).
REROOTED = REAL / "v1.0.51-response-line-rewritten-as-root.jsonl"
MAIN_FILES = sorted(
    p for p in REAL.rglob("*.jsonl") if not p.name.startswith("agent-") and "subagents" not in p.parts
)


def session(path: Path) -> Session:
    return Session.from_entries(load(path).entries, path)


def walk(items: list) -> list:  # type: ignore[type-arg]
    """Items and, depth first, the subagent items under calls."""
    out = []
    for it in items:
        out.append(it)
        if isinstance(it, Message):
            for b in it.blocks:
                out.extend(walk(b.children))
    return out


@pytest.mark.parametrize("path", MAIN_FILES, ids=lambda p: p.name[:40])
def test_every_prompt_and_reply_of_the_conversation_is_shown_once(path: Path) -> None:
    s = session(path)
    items = build(s)
    nodes = [s.nodes[i] for i in conversation_nodes(s.index, s.facts)]
    prompts = [e.uuid for e in nodes if e.type == "user" and is_prompt(e.record)]
    replies = {
        e.message_id
        for e in nodes
        if e.type == "assistant" and e.message_id and not e.record.get("isApiErrorMessage")
    }
    shown = [it for it in items if isinstance(it, Message) and it.depth == 0]
    shown_prompts = [m.uuid for m in shown if m.role == "user" and m.uuid in set(prompts)]
    assert shown_prompts == prompts
    by_uuid = {e.uuid: e for e in nodes}
    shown_replies = [by_uuid[m.uuid].message_id for m in shown if m.role == "assistant"]
    assert set(shown_replies) == replies
    # A reply split by its own tool results (2.1.2xx) shows as several parts; never repeated otherwise.
    assert len(shown_replies) >= len(replies)


@pytest.mark.parametrize("path", MAIN_FILES, ids=lambda p: p.name[:40])
def test_calls_carry_their_results(path: Path) -> None:
    s = session(path)
    nodes = [s.nodes[i] for i in conversation_nodes(s.index, s.facts)]
    results = {
        b["tool_use_id"]
        for e in nodes
        if e.type == "user" and isinstance(e.content, list)
        for b in e.content
        if isinstance(b, dict) and b.get("type") == "tool_result"
    }
    for it in build(s):
        if isinstance(it, Message) and it.role == "assistant":
            for b in it.blocks:
                if b.kind == "tool_use" and b.tool_id in results:
                    assert b.result is not None, (path.name, b.tool_id)


def test_full_goes_back_through_compactions() -> None:
    for path in (S332, S197, INLINE, REAL / "v2.0.76-compact-boundary-partial-copy.jsonl"):
        s = session(path)
        short, full = history_segments(s, full=False), history_segments(s, full=True)
        assert len(short) == 1 and len(full) >= 2, path.name
        items = build(s, full=True)
        assert [m.kind for m in items if isinstance(m, Marker) and m.kind == "summary"]
        assert isinstance(build(s)[0], Marker) and build(s)[0].kind == "earlier"
        # Every message of the file's main chains is in the full history, once.
        seen = [i for seg in full for i in seg]
        assert len(seen) == len(set(seen))


def test_subagent_is_shown_under_the_call_that_spawned_it() -> None:
    for path in (S332, S197):
        sh = load_for_show(path, full=True)
        items = build(sh.session, full=True, subagents=sh.subagents)
        calls = [
            b
            for it in items
            if isinstance(it, Message)
            for b in it.blocks
            if b.kind == "tool_use" and b.name in ("Agent", "Task")
        ]
        (call,) = calls
        assert call.children and call.agent.startswith("agent-")
        sub_prompt = next(c for c in call.children if isinstance(c, Message) and c.role == "user")
        assert sub_prompt.blocks[0].text == call.input["prompt"]
        assert all(c.depth == 1 for c in call.children)


def test_inline_sidechains_go_under_their_task_calls() -> None:
    s = session(INLINE)
    items = build(s, full=True)
    tasks = [
        b
        for it in items
        if isinstance(it, Message)
        for b in it.blocks
        if b.kind == "tool_use" and b.name == "Task"
    ]
    linked = [b for b in tasks if b.children]
    roots = [i for i in s.index.roots() if s.nodes[i].is_sidechain]
    assert len(linked) == len(roots)  # every inline sidechain found its call
    for b in linked:
        first = b.children[0]
        assert isinstance(first, Message) and first.blocks[0].text.strip() == b.input["prompt"].strip()
    # Sidechain messages are not shown at the top level.
    assert not any(
        isinstance(it, Message) and it.depth == 0 and s.node(it.uuid or "") and s.node(it.uuid).is_sidechain
        for it in items
    )  # type: ignore[union-attr]


def test_rewind_fixture_has_one_dead_branch_the_abandoned_turns() -> None:
    s = session(REWIND)
    (d,) = dead_branches(s)
    prompts = [s.nodes[i].content for i in d.nodes if s.nodes[i].type == "user"]
    assert prompts == ["Second idea, later abandoned", "Third step on the abandoned branch"]
    fork = s.nodes[d.fork]  # type: ignore[index]
    rewound = next(
        e for e in s.entries if e.type == "user" and e.content == "Rewound: a different second idea"
    )
    assert rewound.parent_uuid == fork.uuid  # the rewind branched where the dead branch did
    forest = build_forest(s)
    assert forest.status[s.index.find(rewound.uuid)] == ACTIVE  # type: ignore[index]


@pytest.mark.parametrize(
    "path", [p for p in MAIN_FILES if p not in (REWIND, REROOTED)], ids=lambda p: p.name[:40]
)
def test_no_dead_branches_without_a_rewind(path: Path) -> None:
    # Parallel tool results and compactions fork the raw graph; they are not dead.
    assert dead_branches(session(path)) == []


def test_parallel_results_are_raw_forks_but_not_dead() -> None:
    s = session(REAL / "v2.1.38-tool-heavy.jsonl")
    assert s.index.dead_branches()  # the raw graph forks at parallel calls...
    assert dead_branches(s) == []  # ...which the forest folds back


@pytest.mark.parametrize("path", MAIN_FILES, ids=lambda p: p.name[:40])
def test_the_tree_forks_only_where_something_leaves_the_history(path: Path) -> None:
    # Parallel tool calls hang their lines side by side; drawn as forks, each indented the
    # tree a level deeper. A fork is drawn only where a dead or detached part leaves.
    forest = build_forest(session(path))

    def check(b) -> int:  # type: ignore[no-untyped-def]
        real = [f for f in b.forks if f.link != "compaction"]
        if real:
            assert any(f.status not in (ACTIVE, "history") for f in real), path.name
        return len(real) + sum(check(f) for f in b.forks)

    drawn = sum(check(b) for b in forest.branches())
    assert (drawn > 0) == (path == REWIND)  # detached parts are roots of their own, not forks


def test_tree_groups_cover_every_kept_node_once() -> None:
    for path in (REWIND, S332, INLINE, REAL / "v2.1.38-tool-heavy.jsonl"):
        forest = build_forest(session(path))
        seen: list[int] = []

        def visit(b) -> None:  # type: ignore[no-untyped-def]
            for g in b.groups:
                seen.extend(g.nodes)  # noqa: B023 (visit runs within this iteration)
                describe(forest, g)  # noqa: B023
            for f in b.forks:
                visit(f)

        for b in forest.branches():
            visit(b)
        minor = {i for i in forest.kept if forest._minor(i)}
        assert sorted(seen) == sorted(set(forest.kept) - minor)
        assert any(forest.status[i] == DEAD for i in seen) == (path == REWIND)


def test_exports_hold_every_prompt() -> None:
    s = session(S332)
    items = build(s, full=True)
    md = to_markdown(items, fold_lines=0)
    js = to_json(items)
    for e in s.entries:
        if e.type == "user" and is_prompt(e.record) and isinstance(e.content, str):
            assert e.content in md
    assert sum(1 for x in js if x["kind"] == "message" and x["role"] == "user") == sum(
        1 for it in items if isinstance(it, Message) and it.role == "user"
    )


def test_fold() -> None:
    assert fold("a\nb\nc", 2) == ("a\nb", 1)
    assert fold("a\nb", 0) == ("a\nb", 0)
    text, cut = fold("x" * 5000, 2)
    assert len(text) <= 402 and cut == 0


@pytest.mark.parametrize("kind", sorted(damage.KINDS))
def test_damaged_sessions_show_and_say_what_was_skipped(kind: str, tmp_path: Path) -> None:
    try:
        d = damage.KINDS[kind](S332.read_bytes())
    except ValueError as e:  # split-message needs a response written as several text lines
        pytest.skip(f"{kind} cannot be made from this fixture: {e}")
    bad = tmp_path / S332.name
    bad.write_bytes(d.data)
    sh = load_for_show(bad, full=True)
    items = build(sh.session, full=True, subagents=sh.subagents)
    assert any(isinstance(it, Message) for it in items)
    fixable = {x.code for x in damage.validate_bytes(d.data).diagnostics if x.fix}
    done = {a.code for _, a in sh.actions}
    assert fixable <= done  # every damage repair knows is named
    build_forest(sh.session).branches()


# --- new user report 2, finding 2: show said a line was dead that a resume sends -----------


def _resumed_uuids(path: Path) -> set[str]:
    from transcript_tools.resume.files import load_for_resume

    entries = load_for_resume(path).conversation.entries
    assert entries  # both load paths keep the entries they built the messages from
    return {e.uuid for e in entries if e.uuid}


@pytest.mark.parametrize("path", MAIN_FILES, ids=lambda p: p.name[:40])
def test_no_line_of_a_dead_branch_is_sent_by_a_resume(path: Path) -> None:
    s = session(path)
    dead = {s.nodes[i].uuid for d in dead_branches(s) for i in d.nodes}
    assert not dead & _resumed_uuids(path)


def test_a_response_line_written_again_as_a_root_is_sent_with_it_not_dead() -> None:
    s = session(REROOTED)
    line = {s.index.line[i]: i for i in range(len(s.index))}
    (d,) = dead_branches(s)
    assert [s.index.line[i] for i in d.nodes] == [1]  # the prompt only; it was lines 1-2
    forest = build_forest(s)
    assert forest.status[line[2]] == ACTIVE and forest.status[line[1]] == DEAD
    assert forest.sent_with == {line[2]: line[3]}
    assert s.nodes[line[2]].message_id == s.nodes[line[3]].message_id
    # What tt resume sends (as 2.1.332 does, the user checked): line 2 with line 3, not line 1.
    sent = _resumed_uuids(REROOTED)
    assert s.nodes[line[2]].uuid in sent and s.nodes[line[1]].uuid not in sent
    r = tt("show", str(REROOTED), "--tree")
    assert r.returncode == 0, r.stderr
    assert "(line 2, sent with line 3: same message.id)" in r.stdout
    assert "1 message line(s), line 1, forked on a root of its own" in r.stdout
    doc = json.loads(tt("show", str(REROOTED), "--tree", "--json").stdout)
    assert [x["lines"] for x in doc["dead_branches"]] == [[1]]
    assert [g["sent_with_line"] for g in doc["trees"][0]["groups"]] == [None, 3]


@given(
    st.dictionaries(st.integers(0, 8), st.integers(-1, 8), max_size=9),  # small: cycles are common
    st.lists(st.integers(-1, 9), max_size=30),
)
def test_tree_roots_are_the_walk_up_from_each_node(parent: dict[int, int], asked: list[int]) -> None:
    # `tree._roots` remembers the walks it made (one walk per node was quadratic: 15 s for
    # an 18,000-line session's `show --tree`); in any order of questions, on forests with
    # cycles too, it answers what walking up from the node answers.
    from transcript_tools.show.tree import _roots

    def walked(i: int) -> int:
        seen = set()
        while i in parent and i not in seen:
            seen.add(i)
            i = parent[i]
        return i

    root = _roots(parent)
    assert [root(i) for i in asked] == [walked(i) for i in asked]


ALPHA = PUBLIC / "projects" / "-tmp-alpha" / "11111111-1111-1111-1111-111111111111.jsonl"
GOLDEN = PUBLIC / "projects" / "-tmp-golden" / "11111111-2222-3333-4444-555555555555.jsonl"


def test_show_says_which_message_lines_it_does_not_show_and_why() -> None:
    # Found by a new user: `tt show` of a file with two roots showed its last message alone,
    # and of a file whose records have no uuid only "subagent …: not linked to a call",
    # without a word on the rest. What it shows is what Claude Code 2.1.332 rebuilds
    # (tests/show/test_show_claude.py); now it also says what it left out.
    r = tt("show", str(ALPHA), "--no-pager")
    assert r.returncode == 0, r.stderr
    assert "Three." in r.stdout and "Count the widgets." not in r.stdout
    assert (
        "1 message line(s) on no chain a resume sends not shown (line 1): another root or a dead branch"
        in r.stdout
    )
    doc = json.loads(tt("show", str(ALPHA), "--json").stdout)
    assert doc["not_shown"] == {"off_chain": [1], "no_uuid": []}
    # The tree draws line 1 (a root of its own): no note there.
    assert "not shown" not in tt("show", str(ALPHA), "--tree", "--no-pager").stdout

    r = tt("show", str(GOLDEN), "--no-pager")
    assert r.returncode == 0, r.stderr
    messages = [
        n
        for n, ln in enumerate(GOLDEN.read_text().splitlines(), 1)
        if json.loads(ln)["type"] in ("user", "assistant")
    ]
    assert not_shown(load_for_show(GOLDEN).session).no_uuid == tuple(messages) and len(messages) == 18
    assert (
        "no message here has a uuid: Claude Code rebuilds no conversation from this file (a resume"
        in r.stdout
    )
    assert "18 message line(s) not shown (lines 2, 3, 4, 5, 6, 9, 10, 11, … (18 in all))" in r.stdout
    doc = json.loads(tt("show", str(GOLDEN), "--json").stdout)
    assert doc["items"] == [] and doc["not_shown"] == {"off_chain": [], "no_uuid": messages}


def test_not_shown_is_empty_or_a_dead_branch_on_every_real_transcript() -> None:
    # On the files Claude Code wrote, a message line show leaves out is one the tree calls
    # dead (a rewind's): every other line is shown, none is lost.
    for path in sorted(REAL.rglob("*.jsonl")):
        if "handwritten" in str(path):
            continue
        s = load_for_show(path).session
        dead = {s.index.line[i] for d in dead_branches(s) for i in d.nodes}
        ns = not_shown(s)
        assert not ns.no_uuid and set(ns.off_chain) <= dead, path


def test_finding_an_empty_thinking_block_says_it_was_not_recorded(tmp_path: Path) -> None:
    """New-user pass: a 2.1.206 thinking block with "thinking":"" and only a signature showed
    as a bare "✻" (and "*Thinking:* " in --markdown)."""
    from tests.resume_helpers import SESSION, Builder, text, thinking
    from tests.support.cli import tt

    b = Builder()
    b.user("a question")
    b.assistant(thinking(""), text("the answer"))
    path = b.write(tmp_path / f"{SESSION}.jsonl")
    r = tt("show", str(path), width=120)
    assert r.returncode == 0, r.stderr
    assert "✻ (thinking not recorded in the transcript)" in r.stdout
    md = tt("show", str(path), "--markdown").stdout
    assert "*Thinking:* (not recorded in the transcript)" in md


def test_the_tree_of_a_subagent_s_own_file_is_its_conversation() -> None:
    # A new user's find: `tt show --tree agent-….jsonl` printed "no dead branches" and
    # nothing else; every entry of a subagent's file is a sidechain, which the tree hid.
    from tests.support.paths import CONFIG_332

    [agent] = sorted(CONFIG_332.rglob("subagents/agent-*.jsonl"))[:1]
    [prompt] = [
        r["message"]["content"]
        for r in (json.loads(x) for x in agent.read_bytes().splitlines())
        if r.get("type") == "user" and isinstance(r["message"]["content"], str)
    ][:1]
    r = tt("show", str(agent), "--tree", "--no-pager")
    assert r.returncode == 0, r.stderr
    assert prompt[:20] in r.stdout and "● user" in r.stdout
    doc = json.loads(tt("show", str(agent), "--tree", "--json").stdout)
    [tree] = doc["trees"]
    assert tree["status"] == "active" and tree["groups"][0]["text"] == prompt
