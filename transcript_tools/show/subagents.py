"""Which subagent transcript a tool call spawned, for `tt show`.

- 2.1.x ``<session>/subagents/agent-<id>.jsonl``: the ``.meta.json`` sidecar names the
  ``toolUseId``; else the call's result says ``toolUseResult.agentId``, or the main
  file's ``agent_progress`` lines pair ``data.agentId`` with ``parentToolUseID``.
- 2.0.x ``agent-<8hex>.jsonl`` beside the session: the same ``agentId`` links, when the
  result carries them (the startup "Warmup" agents are linked to nothing).
- 1.0.x inline sidechains (``isSidechain`` lines in the main file, no ``agentId``): the
  first prompt of the sidechain is the Task call's ``prompt``, and nothing else links
  them (docs/format.md §6).

Invariants: pure; each call gets at most one transcript and each transcript at most
one call; what cannot be linked is returned, never dropped. Reads content through
`show.text` and is read by `show.core` (``build`` shows a `Sub` under its call), so it
must not import `show.core`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..model.active import conversation_nodes
from ..model.chain import SIDECHAIN, USER
from ..model.session import Session
from .text import blocks_of, plain_text


@dataclass(frozen=True, slots=True)
class Sub:
    """A subagent transcript to show under a call: its session and, for an inline 1.0.x
    sidechain, the nodes of its chain in the main session."""

    session: Session
    nodes: tuple[int, ...] | None = None
    name: str = ""


def inline_sidechains(session: Session) -> dict[str, Sub]:
    """1.0.x sidechains written into the main file, by the Task call whose prompt is
    their first message (they carry no other link)."""
    ix = session.index
    roots = [i for i in ix.roots() if ix.flags[i] & SIDECHAIN and ix.flags[i] & USER]
    if not roots:
        return {}
    prompts: dict[str, str] = {}
    for e in session.nodes:
        if e.type != "assistant" or e.is_sidechain:
            continue
        for b in blocks_of(e.content):
            if b.kind == "tool_use" and isinstance(b.input, dict) and isinstance(b.input.get("prompt"), str):
                prompts.setdefault(b.input["prompt"].strip(), b.tool_id)
    # The latest leaf of each sidechain tree is its conversation's end.
    last_leaf: dict[int, int] = {}
    for leaf in ix.leaf_candidates():
        if ix.flags[leaf] & SIDECHAIN:
            r = ix.root_of(leaf)
            last_leaf[r] = max(leaf, last_leaf.get(r, -1))
    out: dict[str, Sub] = {}
    for r in roots:
        tool_id = prompts.get(plain_text(session.nodes[r].content).strip())
        if tool_id is None or tool_id in out:
            continue
        leaf = last_leaf.get(r, r)
        nodes = list(ix.walk_up(leaf))
        nodes.reverse()
        out[tool_id] = Sub(session, tuple(conversation_nodes(ix, session.facts, nodes)), "sidechain")
    return out


def agent_links(session: Session) -> dict[str, str]:
    """agentId → tool_use id, from what the main file says: a result's
    ``toolUseResult.agentId`` and ``agent_progress`` lines (``data.agentId`` with the
    line's ``parentToolUseID``)."""
    out: dict[str, str] = {}
    for e in session.entries:
        rec = e.record
        tur = rec.get("toolUseResult")
        if isinstance(tur, dict) and isinstance(tur.get("agentId"), str):
            for b in blocks_of(e.content):
                if b.kind == "tool_result" and b.tool_id:
                    out.setdefault(tur["agentId"], b.tool_id)
        if rec.get("type") == "progress":
            data = rec.get("data")
            if (
                isinstance(data, dict)
                and data.get("type") == "agent_progress"
                and isinstance(data.get("agentId"), str)
            ):
                parent = rec.get("parentToolUseID")
                if isinstance(parent, str):
                    out.setdefault(data["agentId"], parent)
    return out


def link_subagents(
    main: Session, subs: Iterable[tuple[str, Session, str | None]]
) -> tuple[dict[str, Sub], list[tuple[str, Session]]]:
    """Link subagent transcripts ``(name, session, toolUseId from .meta.json)`` to the
    calls that spawned them (the tool_use id); the rest come back unlinked. Calls made
    inside subagents link the same way, so nested agents find their parent call."""
    known = agent_links(main)
    for _, s, _ in subs:
        known.update({k: v for k, v in agent_links(s).items() if k not in known})
    linked: dict[str, Sub] = {}
    rest: list[tuple[str, Session, str | None]] = []
    for name, s, tool_use in subs:
        agent = next(
            (e.record.get("agentId") for e in s.entries if isinstance(e.record.get("agentId"), str)), None
        )
        tid = tool_use or (known.get(agent) if isinstance(agent, str) else None)
        if tid and tid not in linked:
            linked[tid] = Sub(s, None, name)
        else:
            rest.append((name, s, tool_use))
    return linked, [(n, s) for n, s, _ in rest]
