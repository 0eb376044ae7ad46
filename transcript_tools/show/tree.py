"""The parentUuid forest of a session as people read it: trunk, dead branches, detached parts.

Rewinds (``/rewind``, editing a sent prompt, ``--resume-session-at``) and ``/branch``
leave the abandoned messages in the file: a *dead branch* is a run of main-chain
messages that forks off the history and that no resume will ever send. Three things
look like forks in the raw graph and are not dead branches, so this module sets them
apart:

- *parallel tool calls*: each call's result hangs off its own call line, so a response
  with N calls forks N ways; `active.conversation_nodes` puts them back, and so do we;
- *compactions*: a compact boundary starts a new root (``parentUuid: null``) but names
  the message it follows in ``logicalParentUuid``; 1.0.x compactions name nothing, and
  their summary root follows the latest main message written before it;
- *lines of one response in another tree*: Claude Code 1.0.51 could write a response's
  line again as a new root (``parentUuid: null``, the same ``message.id``); a resume sends
  the old line's blocks with the new one (`active.conversation_nodes`, as 2.1.332 does:
  new user report 2, finding 2), so that line is history, drawn where it is with the
  line it is sent with (``sent_with``), and the dead branch around it leaves it out;
- *detached parts*: a tree not connected to the history at all (a partial copy whose
  first line's parent is missing, a conversation restarted from scratch). Its own last
  leaf is its trunk; forks inside it are dead branches all the same.

The history is `render.history_segments(..., full=True)`: the conversation a resume
sends, followed back through every compaction.

Invariants: pure; every node is in exactly one branch; a node on the history is never
dead, nor in a `DeadBranch`; walks end on cycles (`ChainIndex.walk_up`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..model.active import conversation_nodes
from ..model.chain import ASSISTANT, BOUNDARY, META, SIDECHAIN, SUMMARY, USER
from ..model.prompts import is_prompt
from ..model.session import Session

ACTIVE, HISTORY, DEAD, DETACHED = "active", "history", "dead", "detached"


@dataclass(slots=True)
class Group:
    """A run of nodes drawn as one line: a prompt and what followed it, unbroken."""

    nodes: list[int]
    status: str
    minor: int = 0  # parallel results folded into the run


@dataclass(slots=True)
class Branch:
    status: str
    groups: list[Group] = field(default_factory=list)
    forks: list[Branch] = field(default_factory=list)  # where this branch splits, after its groups
    link: str = ""  # "compaction" when it continues across a compact boundary


@dataclass(frozen=True, slots=True)
class DeadBranch:
    fork: int | None  # the last history node before it (None: it is a root of its own)
    nodes: tuple[int, ...]  # its message nodes, in file order
    leaf: int  # its latest node


@dataclass(slots=True)
class Forest:
    session: Session
    kept: list[int]
    parent: dict[int, int]  # kept node -> kept parent (contracted; compactions followed)
    link: dict[int, str]  # kept node -> "compaction" when its parent edge is one
    children: dict[int, list[int]]
    status: dict[int, str]
    roots: list[int]
    #: History node in another tree than the chain line of its response -> that line.
    sent_with: dict[int, int] = field(default_factory=dict)

    def dead_branches(self) -> list[DeadBranch]:
        out: list[DeadBranch] = []
        for i in self.kept:
            if self.status[i] != DEAD:
                continue
            p = self.parent.get(i)
            if p is not None and self.status[p] == DEAD:
                continue  # inside a dead branch found from its top
            # Only its dead nodes: a line below it can be history all the same (sent with
            # its response's line elsewhere, `sent_with`).
            nodes = sorted(n for n in self._subtree(i) if self.status[n] == DEAD)
            out.append(DeadBranch(p, tuple(nodes), max(nodes)))
        return out

    def _subtree(self, i: int) -> list[int]:
        out, stack = [], [i]
        while stack:
            n = stack.pop()
            out.append(n)
            stack.extend(self.children.get(n, ()))
        return out

    def branches(self) -> list[Branch]:
        """The forest for drawing: one `Branch` per root, forks nested."""
        return [self._branch(r) for r in self.roots]

    def _branch(self, start: int) -> Branch:
        b = Branch(self.status[start], link=self.link.get(start, ""))
        group = Group([], self.status[start])
        n: int | None = start
        # History nodes that hang side by side (the lines of parallel tool calls each carry
        # what follows them): one conversation, drawn in file order, not a fork.
        later: list[int] = []
        while n is not None:
            if group.nodes and (self._is_prompt(n) or self.status[n] != group.status or n in self.link):
                b.groups.append(group)
                if n in self.link:
                    # Across a compaction the branch continues as a new one, linked.
                    b.forks.append(self._branch(n))
                    return b
                group = Group([], self.status[n])
            group.nodes.append(n)
            kids = self.children.get(n, [])
            major = [k for k in kids if not self._minor(k)]
            group.minor += len(kids) - len(major)
            if len(major) > 1 and all(self.status[k] in (ACTIVE, HISTORY) for k in major):
                later = sorted(major[1:] + later)
                major = major[:1]
            if not major and later:
                major = [later.pop(0)]
            if len(major) == 1:
                n = major[0]
                continue
            b.groups.append(group)
            # Dead and detached forks first; the one that goes on (history) last.
            order = sorted(major, key=lambda k: (self.status[k] in (ACTIVE, HISTORY), k))
            b.forks.extend(self._branch(k) for k in order)
            return b
        return b

    def _minor(self, i: int) -> bool:
        # A parallel call's result: a leaf on the history that forked off its call line.
        return (
            not self.children.get(i)
            and self.status[i] in (ACTIVE, HISTORY)
            and self.parent.get(i) is not None
            and i not in self.link
            and not self._is_prompt(i)
            and self.session.index.flags[i] & USER != 0
        )

    def _is_prompt(self, i: int) -> bool:
        return bool(self.session.index.flags[i] & USER) and is_prompt(self.session.nodes[i].record)


def build_forest(session: Session, *, sidechains: bool = False) -> Forest:
    """``sidechains``: keep sidechain entries (a subagent's own file, every entry of which is
    one: without them its tree was empty, "no dead branches" and nothing else)."""
    from .core import history_segments, previous_leaf

    ix = session.index
    hide = 0 if sidechains else SIDECHAIN
    kept = [
        i
        for i in range(len(ix))
        if ix.flags[i] & (USER | ASSISTANT | BOUNDARY) and not ix.flags[i] & (META | hide)
    ]
    keep = set(kept)
    parent: dict[int, int] = {}
    link: dict[int, str] = {}
    for i in kept:
        p = _kept_ancestor(session, ix.parent[i], keep)
        if p is None and (ix.flags[i] & (BOUNDARY | SUMMARY)):
            prev = previous_leaf(session, i)
            p = _kept_ancestor(session, prev, keep) if prev is not None else None
            if p is not None:
                link[i] = "compaction"
        if p is not None:
            parent[i] = p
    children: dict[int, list[int]] = {}
    for i in kept:
        if i in parent:
            children.setdefault(parent[i], []).append(i)
    roots = [i for i in kept if i not in parent]

    segments = history_segments(session, full=True)
    status: dict[int, str] = {}
    for k, seg in enumerate(segments):
        for i in seg:
            if i in keep:
                status[i] = ACTIVE if k == len(segments) - 1 else HISTORY
    root = _roots(parent)
    on_tree = {root(i) for i in status}
    for r in roots:
        if r in on_tree:
            continue
        # A detached tree: its own latest main leaf is its trunk.
        members = _members(children, r)
        leaves = [i for i in members if not children.get(i) and not ix.flags[i] & hide]
        if leaves:
            leaf = max(leaves)
            chain = []
            n: int | None = leaf
            while n is not None:
                chain.append(n)
                n = parent.get(n)
            for i in conversation_nodes(ix, session.facts, list(ix.walk_up(leaf))[::-1]):
                if i in keep:
                    status.setdefault(i, DETACHED)
            for i in chain:
                status.setdefault(i, DETACHED)
    for i in kept:
        status.setdefault(i, DEAD)
    return Forest(session, kept, parent, link, children, status, roots, _sent_with(session, segments, root))


def _sent_with(session: Session, segments: list[list[int]], root: Callable[[int], int]) -> dict[int, int]:
    """History lines of a response whose chain line is in another tree: line -> chain line."""
    ix = session.index
    out: dict[int, int] = {}
    for seg in segments:
        by_id: dict[str, list[int]] = {}
        for i in seg:
            mid = session.nodes[i].message_id if ix.flags[i] & ASSISTANT else None
            if mid is not None:
                by_id.setdefault(mid, []).append(i)
        for group in by_id.values():
            # conversation_nodes puts a response's lines off the chain after its last line on
            # it: the first line of the group is on the chain.
            anchor = group[0]
            for i in group[1:]:
                if root(i) != root(anchor):
                    out[i] = anchor
    return out


def dead_branches(session: Session) -> list[DeadBranch]:
    return build_forest(session).dead_branches()


def _kept_ancestor(session: Session, i: int | None, keep: set[int]) -> int | None:
    if i is None or i < 0:
        return None
    for j in session.index.walk_up(i):
        if j in keep:
            return j
    return None


def _roots(parent: dict[int, int]) -> Callable[[int], int]:
    """``i`` -> the root of its tree (up ``parent`` until a node without one; in a cycle, the
    first node met twice). Each walk that ends at a root is remembered for every node it
    passed, so a forest's nodes are walked once in all (one walk per node was quadratic:
    15 s for an 18,000-line session); a walk into a cycle is not remembered, since where it
    stops depends on where it began."""
    memo: dict[int, int] = {}

    def root(i: int) -> int:
        path: list[int] = []
        seen: set[int] = set()
        while i not in memo and i in parent and i not in seen:
            seen.add(i)
            path.append(i)
            i = parent[i]
        if i in memo:
            i = memo[i]
        elif i in seen:
            return i  # a cycle
        for n in path:
            memo[n] = i
        return i

    return root


def _members(children: dict[int, list[int]], r: int) -> list[int]:
    out, stack = [], [r]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(children.get(n, ()))
    return out


@dataclass(frozen=True, slots=True)
class GroupInfo:
    """What a tree line says about a `Group`."""

    role: str  # of its first node: user, assistant, system (a compact boundary)
    time: str | None
    text: str  # a one-line snippet of its first node
    first_line: int
    last_line: int
    replies: int  # assistant responses (split lines counted once)
    tool_calls: int
    minor: int  # parallel results folded in
    sent_with: int | None = None  # the line a resume sends its first node's blocks with

    def to_dict(self) -> dict[str, object]:
        return {
            "role": self.role,
            "timestamp": self.time,
            "text": self.text,
            "first_line": self.first_line,
            "last_line": self.last_line,
            "replies": self.replies,
            "tool_calls": self.tool_calls,
            "sent_with_line": self.sent_with,
        }


def describe(forest: Forest, g: Group) -> GroupInfo:
    s = forest.session
    first = s.nodes[g.nodes[0]]
    replies: set[str] = set()
    calls = 0
    for i in g.nodes:
        e = s.nodes[i]
        if e.type == "assistant":
            replies.add(e.message_id or str(i))
            c = e.content
            if isinstance(c, list):
                calls += sum(1 for b in c if isinstance(b, dict) and b.get("type") == "tool_use")
    role = first.type or "?"
    ts = first.record.get("timestamp")
    return GroupInfo(
        role,
        ts if isinstance(ts, str) else None,
        snippet(first.record),
        s.index.line[g.nodes[0]],
        s.index.line[g.nodes[-1]],
        len(replies),
        calls,
        g.minor,
        s.index.line[forest.sent_with[g.nodes[0]]] if g.nodes[0] in forest.sent_with else None,
    )


def snippet(rec: dict, width: int = 72) -> str:  # type: ignore[type-arg]
    """One line saying what a record holds."""
    if rec.get("type") == "system":
        return str(rec.get("content") or rec.get("subtype") or "system")
    msg = rec.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    text = ""
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        for b in content:
            if not isinstance(b, dict):
                continue
            t = b.get("type")
            if t == "text" and isinstance(b.get("text"), str) and b["text"].strip():
                text = b["text"]
                break
            if t == "tool_use":
                text = f"→ {b.get('name')}"
                break
            if t == "tool_result":
                text = "← tool result" + (" (error)" if b.get("is_error") is True else "")
                break
            if t == "thinking":
                text = "(thinking)"
            elif t == "image" and not text:
                text = "[image]"
    if rec.get("isCompactSummary") is True:
        text = "summary: " + text
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"
