"""What `tt show` displays: a session's conversation as a flat list of display items.

`build` walks the conversation a resume sends (`active.conversation_nodes`: the active
chain, preserved segments spliced in, parallel tool calls recovered), or with ``full``
the whole history back through every compaction (`history_segments`), and turns its
entries into `Message`s (an assistant response's split lines joined again, each tool
call paired with its result) and `Marker`s (compactions, summaries, slash commands,
interrupts, API errors). A subagent's conversation follows the call that spawned it,
one level deeper (``depth``): 2.1.x ``subagents/`` files are linked by their
``.meta.json`` ``toolUseId``, the result's ``toolUseResult.agentId`` or ``agent_progress``
lines; 1.0.x inline sidechains by their first prompt, which is the Task call's prompt.

The top of a one-way stack: the values themselves are `show.items` (re-exported
here); `show.text` turns content into blocks and exports items (Markdown, JSON);
`subagents` finds which transcript a call spawned. None of them imports this module.
Folding long text is for the views and exports; items keep it whole.

Invariants: pure (sessions in, values out); every entry shown at most once; a tool
result is shown under its call when the call is shown, else on its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..model.active import conversation_nodes
from ..model.chain import ASSISTANT, BOUNDARY, META, SIDECHAIN, SUMMARY, USER
from ..model.lines import Entry
from ..model.session import Session
from .items import Block, Item, Marker, Message, ToolResult
from .subagents import Sub, inline_sidechains
from .text import blocks_of, plain_text

# The display values live in `show.items` (the bottom of the render stack); they are
# named here too because callers know them as ``show.core.Message`` and so on.
__all__ = [
    "Block",
    "Item",
    "Marker",
    "Message",
    "NotShown",
    "ToolResult",
    "build",
    "history_segments",
    "not_shown",
    "previous_leaf",
]

# --- the history ---------------------------------------------------------------------------


def history_segments(session: Session, *, full: bool) -> list[list[int]]:
    """The conversation as segments of node indexes, oldest first; each later segment
    starts at a compaction. Without ``full``, only the last segment (what a resume
    sends). With it, each segment's root leads back: a compact boundary through its
    ``logicalParentUuid``; a 1.0.x summary root (no boundary) to the latest main
    message before it in the file."""
    ix = session.index
    chain = ix.active_chain()
    if not chain:
        return []
    segments = [conversation_nodes(ix, session.facts, chain)]
    if not full:
        return segments
    seen = set(segments[0])
    roots = {chain[0]}
    root = chain[0]
    while True:
        prev = previous_leaf(session, root)
        if prev is None:
            break
        # The preserved segment of a 2.1.x compaction is already spliced in after the
        # summary; the rest of that chain is the history before it.
        seg_chain = list(ix.walk_up(prev))[::-1]
        seg = [i for i in conversation_nodes(ix, session.facts, seg_chain) if i not in seen]
        if not seg or seg_chain[0] in roots:
            break
        seen.update(seg)
        segments.insert(0, seg)
        root = seg_chain[0]
        roots.add(root)
    return segments


def previous_leaf(session: Session, root: int) -> int | None:
    """Where the conversation before a root went on from: a compact boundary's
    ``logicalParentUuid``; for a 1.0.x summary root (no boundary, no link), the latest
    main message written before it. None for any other root."""
    ix = session.index
    flags = ix.flags[root]
    if flags & BOUNDARY:
        lp = ix.logical.get(root)
        return ix.find(lp) if lp is not None else None
    if flags & SUMMARY and ix.parent[root] < 0:
        for i in range(root - 1, -1, -1):
            f = ix.flags[i]
            if f & (USER | ASSISTANT) and not f & (SIDECHAIN | META):
                return i
    return None


# --- what is not shown -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NotShown:
    """The main-conversation message lines (user and assistant, not a subagent's) `build`
    does not show, because the conversation a resume rebuilds holds none of them: Claude
    Code chains messages by ``uuid``/``parentUuid`` from the last one back (2.1.332 resumes
    a file with two roots as the last message's chain alone, and a file whose records have
    no uuid as no conversation at all: empty from its project's directory, "No
    conversation found" from another; tests/show/test_show_claude.py).
    ``--full`` history (every compaction) counts as shown: the ``earlier`` marker says so."""

    off_chain: tuple[int, ...] = ()  # on no chain a resume sends: another root, a dead branch
    no_uuid: tuple[int, ...] = ()  # no uuid: nothing can chain to them, nor they to anything

    def __bool__(self) -> bool:
        return bool(self.off_chain or self.no_uuid)

    def to_dict(self) -> dict[str, list[int]]:
        return {"off_chain": list(self.off_chain), "no_uuid": list(self.no_uuid)}


def not_shown(session: Session) -> NotShown:
    """The message lines of ``session`` that no segment of its whole history holds
    (`history_segments` with ``full``), by why."""
    ix = session.index
    kept = {i for seg in history_segments(session, full=True) for i in seg}
    off: list[int] = []
    bare: list[int] = []
    for e in session.entries:
        if e.type not in ("user", "assistant") or e.is_sidechain:
            continue
        uuid = e.uuid
        if uuid is None:
            bare.append(e.line)
            continue
        i = ix.find(uuid)
        if i is not None and i not in kept and ix.line[i] == e.line:
            off.append(e.line)
    return NotShown(tuple(off), tuple(bare))


# --- building items ---------------------------------------------------------------------


def build(
    session: Session,
    *,
    full: bool = False,
    verbose: bool = False,
    subagents: Mapping[str, Sub] | None = None,
) -> list[Item]:
    """Display items of a session's conversation. ``subagents`` maps tool_use ids to
    the subagent transcripts they spawned (see `subagents.link_subagents`)."""
    subs = dict(subagents or {})
    subs.update(inline_sidechains(session))
    segments = history_segments(session, full=full)
    out: list[Item] = []
    if not segments:
        return out
    first = segments[0][0] if segments[0] else None
    if not full and first is not None and _has_earlier(session, first):
        out.append(Marker("earlier", "earlier messages are before this compaction (--full shows them)"))
    for k, seg in enumerate(segments):
        if k > 0 and not session.index.flags[seg[0]] & BOUNDARY and not session.index.flags[seg[0]] & SUMMARY:
            out.append(
                Marker("history-joined", "the conversation continues (its link to the part above is missing)")
            )
        out.extend(_items(session, seg, 0, verbose, subs, set()))
    return out


def _has_earlier(session: Session, first: int) -> bool:
    return previous_leaf(session, first) is not None or (session.index.flags[first] & BOUNDARY) != 0


def _items(
    session: Session,
    nodes: Sequence[int],
    depth: int,
    verbose: bool,
    subs: Mapping[str, Sub],
    shown: set[int],
) -> list[Item]:
    out: list[Item] = []
    calls: dict[str, Block] = {}
    current: Message | None = None
    current_mid: str | None = None
    for i in nodes:
        e = session.nodes[i]
        rec = e.record
        t = rec.get("type")
        ts = _str(rec.get("timestamp"))
        if t == "assistant":
            msg = _dict(rec.get("message"))
            mid = _str(msg.get("id"))
            if rec.get("isApiErrorMessage") is True:
                out.append(
                    Marker("api-error", plain_text(msg.get("content")) or "API error", ts, e.line, depth)
                )
                current = None
                continue
            if current is not None and mid is not None and mid == current_mid:
                current.lines += 1
            else:
                current = Message(
                    "assistant", ts, _str(rec.get("uuid")), e.line, depth, _str(msg.get("model"))
                )
                current_mid = mid
                out.append(current)
            for b in blocks_of(msg.get("content")):
                current.blocks.append(b)
                if b.kind == "tool_use":
                    calls[b.tool_id] = b
                    sub = subs.get(b.tool_id)
                    if sub is not None and id(sub) not in shown:
                        shown.add(id(sub))
                        b.children = _sub_items(sub, depth + 1, verbose, subs, shown)
                        b.agent = sub.name
            continue
        if t == "user":
            items = _user(rec, e, depth, calls, verbose)
            if items:
                current = None
                out.extend(items)
            continue
        current = None
        marker = _other(rec, e, depth, verbose)
        if marker is not None:
            out.append(marker)
    return out


def _sub_items(sub: Sub, depth: int, verbose: bool, subs: Mapping[str, Sub], shown: set[int]) -> list[Item]:
    s = sub.session
    nodes = list(sub.nodes) if sub.nodes is not None else conversation_nodes(s.index, s.facts)
    return _items(s, nodes, depth, verbose, subs, shown)


def _user(rec: Mapping[str, Any], e: Entry, depth: int, calls: dict[str, Block], verbose: bool) -> list[Item]:
    ts = _str(rec.get("timestamp"))
    msg = _dict(rec.get("message"))
    content = msg.get("content")
    if rec.get("isCompactSummary") is True:
        return [Marker("summary", plain_text(content), ts, e.line, depth)]
    if rec.get("isMeta") is True and not verbose:
        return []
    out: list[Item] = []
    blocks: list[Block] = []
    for b in blocks_of(content):
        if b.kind == "tool_result":
            call = calls.get(b.tool_id)
            if call is not None and call.result is None:
                call.result = b.result
            else:
                blocks.append(b)  # its call is not shown: show the result on its own
        else:
            blocks.append(b)
    if not blocks:
        return out
    text = blocks[0].text.strip() if len(blocks) == 1 and blocks[0].kind == "text" else ""
    if text.startswith(("<command-name>", "<command-message>")):
        return [Marker("command", _command(text), ts, e.line, depth)]
    if text.startswith(("<local-command-stdout>", "<local-command-stderr>")):
        return [Marker("command-output", _strip_tags(text), ts, e.line, depth)]
    if text.startswith("<local-command-caveat>") and not verbose:
        return []
    if text.startswith("[Request interrupted by user"):
        return [Marker("interrupted", text.strip("[]"), ts, e.line, depth)]
    out.append(Message("user", ts, _str(rec.get("uuid")), e.line, depth, blocks=blocks))
    return out


def _other(rec: Mapping[str, Any], e: Entry, depth: int, verbose: bool) -> Marker | None:
    t = rec.get("type")
    ts = _str(rec.get("timestamp"))
    if t == "system":
        sub = rec.get("subtype")
        if sub == "compact_boundary":
            md = _dict(rec.get("compactMetadata"))
            trig = md.get("trigger")
            pre = md.get("preTokens")
            detail = ", ".join(
                x
                for x in (str(trig) if trig else "", f"{pre:,} tokens before" if isinstance(pre, int) else "")
                if x
            )
            return Marker(
                "compact", "conversation compacted" + (f" ({detail})" if detail else ""), ts, e.line, depth
            )
        if sub == "microcompact_boundary":
            md = _dict(rec.get("microcompactMetadata"))
            saved = md.get("tokensSaved")
            return Marker(
                "microcompact",
                "old tool results cleared" + (f" ({saved:,} tokens saved)" if isinstance(saved, int) else ""),
                ts,
                e.line,
                depth,
            )
        if sub == "api_error":
            return Marker("api-error", _api_error(rec), ts, e.line, depth)
        if sub == "local_command":
            return Marker("command", _command(_str(rec.get("content")) or ""), ts, e.line, depth)
        if verbose or sub is None:
            return Marker(
                "system",
                f"{sub or 'system'}: {_str(rec.get('content')) or ''}".strip(": "),
                ts,
                e.line,
                depth,
            )
        return None
    if t == "attachment":
        att = _dict(rec.get("attachment"))
        if att.get("type") == "queued_command" and isinstance(att.get("prompt"), str):
            return Marker("queued", att["prompt"], ts, e.line, depth)
        if verbose:
            return Marker("attachment", str(att.get("type") or "attachment"), ts, e.line, depth)
    return None


def _command(text: str) -> str:
    name = re.search(r"<command-name>(.*?)</command-name>", text, re.S)
    args = re.search(r"<command-args>(.*?)</command-args>", text, re.S)
    out = (name.group(1).strip() if name else _strip_tags(text)).strip()
    if args and args.group(1).strip():
        out += " " + args.group(1).strip()
    return out


def _strip_tags(text: str) -> str:
    return re.sub(r"</?[a-z-]+>", "", text).strip()


def _api_error(rec: Mapping[str, Any]) -> str:
    err = rec.get("error")
    msg = ""
    if isinstance(err, dict):
        inner = _dict(err.get("error")) or err
        msg = _str(inner.get("message")) or _str(inner.get("type")) or ""
    attempt = rec.get("retryAttempt")
    return (
        "API error"
        + (f": {msg}" if msg else "")
        + (f" (retry {attempt})" if isinstance(attempt, int) else "")
    )


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}
