"""The records of a compaction, in Claude Code's own form.

What Claude Code 2.x writes for ``/compact`` (docs/format.md §7; the shipped fixtures
``claude-config-2.1.197`` and ``-2.1.332``), and what `compaction_records` writes:

1. a ``system``/``compact_boundary`` line: ``parentUuid: null`` (the chain is cut here),
   ``logicalParentUuid`` (the last message before compaction), ``compactMetadata`` with
   ``trigger``, ``preTokens``, ``postTokens`` and, when messages are kept,
   ``preservedSegment {headUuid, anchorUuid, tailUuid}``; its ``subtype`` within the
   first 256 bytes of the line, where Claude Code 2.1.332's loader looks for it;
2. the ``isCompactSummary`` user line (``isVisibleInTranscriptOnly``), worded as Claude
   Code words it ("This session is being continued from a previous conversation that
   ran out of context. ..."), holding the summary;
3. the kept messages, copied with fresh uuids and re-parented one after the other onto
   the summary (the form ``claude --fork-session`` writes, so readers that only walk
   ``parentUuid`` — tt, the Agent SDK — see them too). The ``preservedSegment`` names
   them (head = first copy, anchor = the summary, tail = last copy): Claude Code then
   treats them as its own preserved messages (their old ``usage`` is not taken for the
   context size after the resume, ``postTokens`` is). Message ids, request ids, tool ids
   and usage stay as they were, so cost tools that dedupe by ``message.id`` count them
   once;
4. a ``last-prompt`` record naming the new leaf (Claude Code re-appends one each turn),
   and for a new file the session's title records (``custom-title`` ... ) so the
   ``/resume`` picker shows it.

Pruned copies (``--prune``) get a short placeholder for a tool output or an image, and
lose their thinking blocks; an assistant line left with no block is not copied.

Invariants:
- Pure: records in, records out; inputs are never mutated (changed parts are copied);
  ``now`` and ``new_id`` come from the caller.
- No kept copy shares a uuid with any input entry; every copy's ``parentUuid`` is the
  previous copy (the first one's is the summary's uuid).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..model.wire import dumps_lenient
from .plan import Prune

SUMMARY_PREAMBLE = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation."
)
TRANSCRIPT_HINT = (
    "If you need specific details from before compaction (like exact code snippets, error messages, "
    "or content you generated), read the full transcript at: {path}"
)
CONTINUE = (
    "Continue the conversation from where it left off without asking the user any further questions. "
    "Resume directly — do not acknowledge the summary, do not recap what was happening, do not preface "
    'with "I\'ll continue" or similar. Pick up the last task as if the break never happened.'
)
KEPT_NOTE = (
    "The messages after this summary are the most recent messages from before compaction, kept verbatim. "
    "The summary was written without seeing them, so something it says has not happened yet may already "
    "have happened in them."
)
KEPT_NOTE_WITH_FIRST = (
    "The messages after this summary were kept verbatim: first the user's original request, then the most "
    "recent messages from before compaction. The summary was written without seeing the recent ones, so "
    "something it says has not happened yet may already have happened in them."
)
#: Envelope fields copied from the last entry onto the boundary and summary lines.
ENVELOPE = ("userType", "entrypoint", "cwd", "sessionId", "version", "gitBranch", "slug")
#: Entry fields that name other entries by uuid (docs/format.md §4.1).
_REFERENCES = ("supersedesUuids", "retractedMessageUuids")
_REFERENCE = ("sourceToolAssistantUUID", "refusedUserMessageUuid")


def summary_content(
    summary: str, *, transcript_path: str | None, kept: bool, first_request_kept: bool = False
) -> str:
    """The text of the ``isCompactSummary`` line (Claude Code 2.1.332's wording)."""
    parts = [SUMMARY_PREAMBLE, summary.strip()]
    tail = []
    if transcript_path:
        tail.append(TRANSCRIPT_HINT.format(path=transcript_path))
    tail.append(CONTINUE)
    parts.append("\n".join(tail))
    if kept:
        parts.append(KEPT_NOTE_WITH_FIRST if first_request_kept else KEPT_NOTE)
    return "\n\n".join(parts)


@dataclass(slots=True)
class Output:
    records: list[dict[str, Any]]
    boundary_uuid: str
    summary_uuid: str
    leaf_uuid: str
    copies: int = 0
    dropped: int = 0  # kept entries left out because pruning emptied them
    pruned_bytes: dict[str, int] = field(default_factory=dict)
    mapping: dict[str, str] = field(default_factory=dict)  # old uuid -> copy's uuid


def compaction_records(
    kept: Sequence[Mapping[str, Any]],
    summary_text: str,
    *,
    session_id: str,
    new_id: Callable[[], str],
    now: str,
    envelope: Mapping[str, Any],
    logical_parent: str | None,
    pre_tokens: int,
    post_tokens: int,
    prunes: Iterable[tuple[int, Prune]] = (),
    new_session: bool = False,
    last_prompt: str | None = None,
    metadata: Sequence[Mapping[str, Any]] = (),
    trigger: str = "manual",
) -> Output:
    """The lines to write (module docstring). ``kept`` are the records to copy, in order;
    ``prunes`` are (position in ``kept``, prune) pairs."""
    env = {k: envelope[k] for k in ENVELOPE if k in envelope}
    env["sessionId"] = session_id
    if new_session:
        env.pop("slug", None)
    b_uuid, s_uuid = new_id(), new_id()
    by_pos: dict[int, list[Prune]] = {}
    for k, p in prunes:
        by_pos.setdefault(k, []).append(p)
    mapping: dict[str, str] = {}
    for r in kept:
        u = r.get("uuid")
        if isinstance(u, str):
            mapping[u] = new_id()
    out = Output([], b_uuid, s_uuid, s_uuid, mapping=mapping)
    copies: list[dict[str, Any]] = []
    parent = s_uuid
    for k, r in enumerate(kept):
        rec: dict[str, Any] | None = _copy(r, mapping, parent, session_id, new_session)
        ps = by_pos.get(k)
        if ps and rec is not None:
            rec = _apply_prunes(rec, ps, out.pruned_bytes)
        if rec is None:
            out.dropped += 1
            continue
        copies.append(rec)
        parent = rec["uuid"]
    out.leaf_uuid = parent
    out.copies = len(copies)
    md: dict[str, Any] = {"trigger": trigger, "preTokens": pre_tokens, "postTokens": post_tokens}
    if copies:
        md["preservedSegment"] = {
            "headUuid": copies[0]["uuid"],
            "anchorUuid": s_uuid,
            "tailUuid": copies[-1]["uuid"],
        }
    boundary: dict[str, Any] = {
        "parentUuid": None,
        "logicalParentUuid": logical_parent,
        "isSidechain": False,
        "type": "system",
        "subtype": "compact_boundary",
        "content": "Conversation compacted",
        "isMeta": False,
        "timestamp": now,
        "uuid": b_uuid,
        "level": "info",
        "compactMetadata": md,
        **env,
    }
    summary: dict[str, Any] = {
        "parentUuid": b_uuid,
        "isSidechain": False,
        "type": "user",
        "message": {"role": "user", "content": summary_text},
        "isVisibleInTranscriptOnly": True,
        "isCompactSummary": True,
        "uuid": s_uuid,
        "timestamp": now,
        **env,
    }
    out.records = [boundary, summary, *copies]
    if last_prompt:
        out.records.append(
            {
                "type": "last-prompt",
                "lastPrompt": last_prompt,
                "leafUuid": out.leaf_uuid,
                "sessionId": session_id,
            }
        )
    for m in metadata:
        r = dict(m)
        if "sessionId" in r or new_session:
            r["sessionId"] = session_id
        if isinstance(r.get("uuid"), str):
            r["uuid"] = new_id()
        out.records.append(r)
    return out


def slim_records(
    kept: Sequence[Mapping[str, Any]],
    *,
    session_id: str,
    new_id: Callable[[], str],
    last_prompt: str | None = None,
    metadata: Sequence[Mapping[str, Any]] = (),
) -> Output:
    """The whole conversation of a new session without a summary (``--prune progress``
    when there is nothing worth summarising): ``kept`` copied as a compaction copies its
    kept messages (fresh uuids, each re-parented onto the one before), the first one a
    root, then the ``last-prompt`` and title records. No boundary: nothing was cut, so a
    resume sends the same messages; what is gone is what it never sends (progress
    lines, dead branches, request logs ...)."""
    mapping = {u: new_id() for u in (r.get("uuid") for r in kept) if isinstance(u, str)}
    out = Output([], "", "", "", mapping=mapping)
    parent: str | None = None
    for r in kept:
        rec = _copy(r, mapping, parent, session_id, True)  # type: ignore[arg-type]
        out.records.append(rec)
        parent = rec["uuid"]
    out.copies = len(out.records)
    out.leaf_uuid = parent or ""
    if last_prompt and parent:
        out.records.append(
            {"type": "last-prompt", "lastPrompt": last_prompt, "leafUuid": parent, "sessionId": session_id}
        )
    for m in metadata:
        r = dict(m)
        r["sessionId"] = session_id
        if isinstance(r.get("uuid"), str):
            r["uuid"] = new_id()
        out.records.append(r)
    return out


def problems(kept: Sequence[Mapping[str, Any]]) -> list[str]:
    """What in the records to copy the Messages API would reject (the validator's api
    family, judged on the kept part alone): calls without results, results without
    calls, empty messages, images over the API's limit."""
    from ..model.active import MAX_IMAGE_BYTES

    uses: dict[str, int] = {}
    results: dict[str, int] = {}
    out: list[str] = []
    for k, r in enumerate(kept):
        if r.get("type") not in ("user", "assistant"):
            continue
        msg = r.get("message")
        content = msg.get("content") if isinstance(msg, Mapping) else None
        if content in ("", [], None):
            out.append(f"an empty {r.get('type')} message ({r.get('uuid')})")
            continue
        if not isinstance(content, list):
            continue
        for b in content:
            if not isinstance(b, Mapping):
                continue
            if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                uses[b["id"]] = k
            elif b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str):
                results[b["tool_use_id"]] = k
                inner = b.get("content")
                for x in inner if isinstance(inner, list) else []:
                    if _big_image(x, MAX_IMAGE_BYTES):
                        out.append(f"an image over the API's limit ({r.get('uuid')})")
            elif _big_image(b, MAX_IMAGE_BYTES):
                out.append(f"an image over the API's limit ({r.get('uuid')})")
    for t in uses.keys() - results.keys():
        out.append(f"tool call {t} has no result")
    for t in results.keys() - uses.keys():
        out.append(f"tool result {t} answers no call")
    return out


def _big_image(b: Any, limit: int) -> bool:
    if not isinstance(b, Mapping) or b.get("type") != "image":
        return False
    src = b.get("source")
    data = src.get("data") if isinstance(src, Mapping) else None
    return isinstance(data, str) and len(data) * 3 // 4 > limit


def _copy(
    r: Mapping[str, Any], mapping: Mapping[str, str], parent: str, session_id: str, new_session: bool
) -> dict[str, Any]:
    rec = dict(r)
    rec["parentUuid"] = parent
    rec["uuid"] = mapping[r["uuid"]]
    rec["sessionId"] = session_id
    if "session_id" in rec:
        rec["session_id"] = session_id
    rec.pop("logicalParentUuid", None)
    if new_session:
        rec.pop("slug", None)
    for key in _REFERENCE:
        v = rec.get(key)
        if isinstance(v, str):
            if v in mapping:
                rec[key] = mapping[v]
            else:
                del rec[key]
    for key in _REFERENCES:
        v = rec.get(key)
        if isinstance(v, list):
            rec[key] = [mapping[x] for x in v if isinstance(x, str) and x in mapping]
    return rec


def _size(v: Any) -> int:
    return len(dumps_lenient(v))


def _apply_prunes(
    rec: dict[str, Any], prunes: Sequence[Prune], saved: dict[str, int]
) -> dict[str, Any] | None:
    """The record with ``prunes`` applied, or None when nothing is left of it."""
    msg = rec.get("message")
    if not isinstance(msg, dict) or not isinstance(msg.get("content"), list):
        return rec
    before = _size(rec)
    content = list(msg["content"])
    drop: set[int] = set()
    for p in sorted(prunes, key=lambda p: p.block):
        if not 0 <= p.block < len(content):
            continue
        b = content[p.block]
        if not isinstance(b, dict):
            continue
        if p.kind == "thinking":
            drop.add(p.block)
        elif p.kind == "tool-output" and b.get("type") == "tool_result":
            content[p.block] = _pruned_result(b)
            rec.pop("toolUseResult", None)
        elif p.kind == "images":
            if b.get("type") == "tool_result":
                content[p.block] = _without_inner_images(b)
                rec.pop("toolUseResult", None)
            else:
                content[p.block] = {"type": "text", "text": _image_placeholder(b)}
    content = [b for k, b in enumerate(content) if k not in drop]
    if not content:
        saved_kinds = {p.kind for p in prunes}
        for kind in saved_kinds:
            saved[kind] = saved.get(kind, 0) + before // len(saved_kinds)
        return None
    rec = dict(rec)
    rec["message"] = {**msg, "content": content}
    after = _size(rec)
    kinds = sorted({p.kind for p in prunes})
    for kind in kinds:
        saved[kind] = saved.get(kind, 0) + (before - after) // len(kinds)
    return rec


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _pruned_result(b: Mapping[str, Any]) -> dict[str, Any]:
    text = _result_text(b.get("content"))
    head = " ".join(text[:400].split())[:240]
    note = f"[tool output pruned by tt compact: {len(text):,} characters"
    if isinstance(b.get("content"), list):
        n = sum(1 for x in b["content"] if isinstance(x, dict) and x.get("type") == "image")
        if n:
            note += f" and {n} image(s)"
    note += "]"
    if head:
        note += f" It began: {head}…"
    out = {k: v for k, v in b.items() if k != "content"}
    out["content"] = note
    return out


def _without_inner_images(b: Mapping[str, Any]) -> dict[str, Any]:
    inner = b.get("content")
    if not isinstance(inner, list):
        return dict(b)
    new = [
        {"type": "text", "text": _image_placeholder(x)}
        if isinstance(x, dict) and x.get("type") == "image"
        else x
        for x in inner
    ]
    return {**b, "content": new}


def _image_placeholder(b: Mapping[str, Any]) -> str:
    src = b.get("source")
    media = src.get("media_type") if isinstance(src, dict) else None
    data = src.get("data") if isinstance(src, dict) else None
    size = f", {len(data) * 3 // 4 // 1024:,} KB" if isinstance(data, str) else ""
    return f"[image pruned by tt compact ({media or 'image'}{size})]"
