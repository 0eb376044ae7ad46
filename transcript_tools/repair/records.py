"""The record-level changes repair makes, as pure functions over wire dicts.

- `interrupted_result`: the record Claude Code 2.1.332 writes for a call whose result the
  file never got, when it resumes the session: content
  `conversation.INTERRUPTED_TOOL_RESULT` ("[Tool call interrupted: the session ended
  before …]") with ``is_error: true``, the same text as ``toolUseResult``, and
  ``toolDenialKind: "interrupted"`` (written only for calls of 2.1.332 on: the version it
  was seen on). It is also what `tt resume` sends for such a call, so a repaired file
  and a resumed one answer it alike. Not "[Request interrupted by user for tool use]":
  that is the marker of a person pressing Esc mid-tool (1.0.51 to 2.1.332,
  `resume.turns`), not of a session that ended (docs/format.md §5;
  `tests/repair/test_interrupted_claude.py` compares with the record 2.1.332 writes).
  The envelope
  (sessionId, cwd, version, gitBranch, userType, entrypoint, slug, isSidechain, agentId)
  is copied from the call's line; ``sourceToolAssistantUUID`` is added for 2.1.x, which
  writes it on every tool result (docs/format.md §5). Its ``timestamp`` is the call's own: a
  record repair adds to a past conversation takes its time from its neighbours, never
  the wall clock (``now`` only when the call has none), so `tt stats` durations and
  timestamp orderings stay what the session recorded.
- `edit_record`: a new parent / logical parent, orphan results made text (or dropped),
  thinking blocks stripped, oversized images replaced by a text placeholder, the
  block-level API rules fixed (`api_rules.fix_content`) and duplicate tool ids renamed.
Records are written with `model.wire.dumps_lenient` (Claude Code's serialisation, with
the stdlib's compact form for the rare record orjson cannot write).

Invariants: inputs are never mutated (edited records are copies, sharing untouched
sub-objects); unknown keys are kept; key order is kept. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

from ..model.api_rules import (
    BAD_TOOL_ID,
    NUL_CHAR,
    fix_content,
    fix_string,
    image_bytes,
    rename_ids,
    result_as_text,
    tool_id_ok,
    valid_tool_id,
)
from ..model.conversation import INTERRUPTED_TOOL_RESULT
from .plan import UNSET, EntryEdit
from .survey import THINKING

#: Keys copied from the call's line onto a synthesised result, in Claude Code 2.1.332's order.
_ENVELOPE = ("userType", "entrypoint", "cwd", "sessionId", "version", "gitBranch", "slug")


def _version(v: Any) -> tuple[int, ...]:
    if not isinstance(v, str):
        return ()
    out: list[int] = []
    for part in v.split(".")[:3]:
        digits = "".join(ch for ch in part if ch.isdigit())
        if not digits:
            break
        out.append(int(digits))
    return tuple(out)


def interrupted_result(
    call: dict[str, Any], tool_use_id: str, *, uuid: str, parent: str, now: str
) -> dict[str, Any]:
    """The user entry answering an interrupted ``tool_use`` (see module docstring)."""
    rec: dict[str, Any] = {"parentUuid": parent, "isSidechain": call.get("isSidechain") is True}
    if "agentId" in call:
        rec["agentId"] = call["agentId"]
    rec["type"] = "user"
    rec["message"] = {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "content": INTERRUPTED_TOOL_RESULT,
                "is_error": True,
                # The call's record gets this id when it is written (`edit_record` renames
                # an id the API refuses last, by the same function of the id).
                "tool_use_id": tool_use_id if tool_id_ok(tool_use_id) else valid_tool_id(tool_use_id),
            }
        ],
    }
    rec["uuid"] = uuid
    ts = call.get("timestamp")
    rec["timestamp"] = ts if isinstance(ts, str) and ts else now
    rec["toolUseResult"] = INTERRUPTED_TOOL_RESULT
    version = _version(call.get("version"))
    if version >= (2, 1, 332):
        rec["toolDenialKind"] = "interrupted"
    if version >= (2, 1) and isinstance(call.get("uuid"), str):
        rec["sourceToolAssistantUUID"] = call["uuid"]
    for k in _ENVELOPE:
        if k in call:
            rec[k] = call[k]
    return rec


def edit_record(record: dict[str, Any], edit: EntryEdit) -> dict[str, Any]:
    rec = dict(record)
    if edit.parent is not UNSET:
        rec["parentUuid"] = edit.parent
    if edit.logical is not UNSET:
        rec["logicalParentUuid"] = edit.logical
    if edit.metadata is not None:
        rec["compactMetadata"] = edit.metadata
    msg = rec.get("message")
    if isinstance(msg, dict) and isinstance(msg.get("content"), str) and edit.api_bits & NUL_CHAR:
        rec["message"] = {**msg, "content": fix_string(msg["content"])}
    if isinstance(msg, dict) and isinstance(msg.get("content"), list):
        content: list[Any] = msg["content"]
        if edit.api_bits & ~BAD_TOOL_ID:
            content = fix_content(content, edit.api_bits & ~BAD_TOOL_ID)
        if edit.uses or edit.results:
            content = rename_ids(content, edit.uses, edit.results)
        if edit.orphans:
            content = orphans_to_text(content, set(edit.orphans), drop=edit.drop_orphans)
        if edit.strip_thinking:
            content = [b for b in content if not (isinstance(b, dict) and b.get("type") in THINKING)]
        if edit.max_image_bytes is not None:
            content = shrink_images(content, edit.max_image_bytes)
        if edit.api_bits & BAD_TOOL_ID:
            # Last: the renames and orphans above name blocks by their old ids.
            content = fix_content(content, BAD_TOOL_ID)
        if content is not msg["content"]:
            rec["message"] = {**msg, "content": content}
    return rec


def orphans_to_text(content: list[Any], ids: set[str], *, drop: bool) -> list[Any]:
    out: list[Any] = []
    for b in content:
        if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") in ids:
            if not drop:
                out.extend(orphan_as_text(b))
            continue
        out.append(b)
    return out


def orphan_as_text(block: dict[str, Any]) -> list[dict[str, Any]]:
    """A tool_result whose call was lost, as plain content: a text block (and any images)."""
    head = f"[tt repair: result of tool call {block.get('tool_use_id')}, whose tool_use was lost"
    head += " (it reported an error)]" if block.get("is_error") is True else "]"
    return result_as_text(block, head=head)


def shrink_images(content: list[Any], limit: int) -> list[Any]:
    out: list[Any] = []
    changed = False
    for b in content:
        if isinstance(b, dict) and b.get("type") == "image" and image_bytes(b) > limit:
            out.append(image_placeholder(b))
            changed = True
        elif isinstance(b, dict) and b.get("type") == "tool_result" and isinstance(b.get("content"), list):
            inner = shrink_images(b["content"], limit)
            if inner is not b["content"]:
                b = {**b, "content": inner}
                changed = True
            out.append(b)
        else:
            out.append(b)
    return out if changed else content


def image_placeholder(block: dict[str, Any]) -> dict[str, Any]:
    src = block.get("source")
    media = src.get("media_type") if isinstance(src, dict) else None
    size = image_bytes(block)
    return {
        "type": "text",
        "text": f"[tt repair: a {media or 'base64'} image of {size / 1e6:.1f} MB was removed here (over the size limit)]",
    }
