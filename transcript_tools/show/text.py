"""Content as text: blocks of a message, tool inputs, folding, Markdown and JSON exports.

`blocks_of` turns a message's ``content`` (a string or a list of blocks) into
`show.items.Block`s; `to_markdown` and `to_json` export display items. Folding keeps
the first lines of long text (tool output, thinking) and says how many were left out.

Invariants: pure; never raises on odd content (unknown block types are kept by name).
Imports only `show.items` of this package: `subagents` and `core` build on it, so
it must not import them back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from .items import Block, Item, Marker, ToolResult


def blocks_of(content: Any) -> list[Block]:
    if isinstance(content, str):
        return [Block("text", content)] if content else []
    if not isinstance(content, list):
        return []
    out: list[Block] = []
    for b in content:
        if not isinstance(b, dict):
            continue
        kind = b.get("type")
        if kind == "text":
            out.append(Block("text", _str(b.get("text")) or ""))
        elif kind == "thinking":
            out.append(Block("thinking", _str(b.get("thinking")) or ""))
        elif kind == "redacted_thinking":
            out.append(Block("thinking", "(redacted)"))
        elif kind == "tool_use" or kind == "server_tool_use":
            out.append(
                Block(
                    "tool_use",
                    name=_str(b.get("name")) or "?",
                    tool_id=_str(b.get("id")) or "",
                    input=b.get("input"),
                )
            )
        elif kind == "tool_result":
            inner = b.get("content")
            images = (
                sum(1 for x in inner if isinstance(x, dict) and x.get("type") == "image")
                if isinstance(inner, list)
                else 0
            )
            res = ToolResult(plain_text(inner), b.get("is_error") is True, images)
            out.append(Block("tool_result", res.text, tool_id=_str(b.get("tool_use_id")) or "", result=res))
        elif kind == "image":
            out.append(Block("image", image_label(b)))
        else:
            out.append(Block(str(kind), json.dumps(b, ensure_ascii=False)[:200]))
    return out


def image_label(block: Mapping[str, Any]) -> str:
    src = _dict(block.get("source"))
    media = _str(src.get("media_type")) or "image"
    data = src.get("data")
    if isinstance(data, str):
        return f"{media}, {len(data) * 3 // 4 / 1024:.0f} KiB"
    return media


def plain_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for b in content:
        if isinstance(b, dict):
            if b.get("type") == "text" and isinstance(b.get("text"), str):
                parts.append(b["text"])
            elif b.get("type") == "image":
                parts.append(f"[image: {image_label(b)}]")
            elif b.get("type") == "tool_reference":
                parts.append(f"[tool reference: {b.get('tool_name') or b.get('name') or '?'}]")
        elif isinstance(b, str):
            parts.append(b)
    return "\n".join(parts)


def fold(text: str, lines: int) -> tuple[str, int]:
    """The first ``lines`` lines of ``text`` (and at most 200 characters a line's worth
    of them) and how many lines were left out; ``lines`` 0 keeps everything."""
    if lines <= 0:
        return text, 0
    parts = text.splitlines()
    kept = "\n".join(parts[:lines])
    cut = max(len(parts) - lines, 0)
    if len(kept) > lines * 200:
        kept = kept[: lines * 200].rstrip() + " …"
    return kept, cut


def tool_input_text(name: str, value: Any) -> str:
    """A tool call's input, the way people read it: the command, path or pattern first,
    then the other fields as ``key: value`` lines."""
    if not isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    lead = next((k for k in _LEAD_KEYS if isinstance(value.get(k), str) and value[k]), None)
    out = [value[lead]] if lead else []
    for k, v in value.items():
        if k == lead:
            continue
        shown = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
        out.append(f"{k}: {shown}")
    return "\n".join(out)


_LEAD_KEYS = (
    "command",
    "file_path",
    "pattern",
    "url",
    "query",
    "prompt",
    "description",
    "path",
    "notebook_path",
    "skill",
)


def to_markdown(items: Iterable[Item], *, fold_lines: int = 0, title: str | None = None) -> str:
    out: list[str] = []
    if title:
        out.append(f"# {title}\n")
    for it in items:
        _md_item(it, out, fold_lines)
    return "\n".join(out).rstrip() + "\n"


def _md_item(it: Item, out: list[str], n: int) -> None:
    q = "> " * it.depth
    if isinstance(it, Marker):
        body = it.text if it.kind != "summary" else fold(it.text, n)[0]
        label = {"summary": "Summary", "compact": "Compacted", "microcompact": "Microcompacted"}.get(
            it.kind, it.kind
        )
        out.append(_quote(f"*{label}:* {body}", q) + "\n")
        return
    head = (
        f"### {'User' if it.role == 'user' else 'Assistant'}"
        + (f" · {it.time}" if it.time else "")
        + (f" · {it.model}" if it.model else "")
    )
    out.append(_quote(head, q) + "\n")
    for b in it.blocks:
        if b.kind == "text":
            out.append(_quote(b.text, q) + "\n")
        elif b.kind == "thinking":
            said = fold(b.text, n)[0] if b.text.strip() else "(not recorded in the transcript)"
            out.append(_quote("*Thinking:* " + said, q) + "\n")
        elif b.kind == "image":
            out.append(_quote(f"*[image: {b.text}]*", q) + "\n")
        elif b.kind == "tool_use":
            out.append(
                _quote(f"**{b.name}**\n\n```\n{fold(tool_input_text(b.name, b.input), n)[0]}\n```", q) + "\n"
            )
            if b.result is not None:
                text, cut = fold(b.result.text, n)
                tag = "Error" if b.result.is_error else "Result"
                more = f"\n… {cut} more lines" if cut else ""
                out.append(_quote(f"*{tag}:*\n\n```\n{text}{more}\n```", q) + "\n")
            for child in b.children:
                _md_item(child, out, n)
        elif b.kind == "tool_result":
            out.append(_quote(f"*Result:*\n\n```\n{fold(b.text, n)[0]}\n```", q) + "\n")
        else:
            out.append(_quote(f"*[{b.kind}]*", q) + "\n")


def _quote(text: str, q: str) -> str:
    if not q:
        return text
    return "\n".join(q + line if line else q.rstrip() for line in text.split("\n"))


def to_json(items: Iterable[Item]) -> list[dict[str, Any]]:
    return [_json_item(it) for it in items]


def _json_item(it: Item) -> dict[str, Any]:
    if isinstance(it, Marker):
        return {"kind": it.kind, "text": it.text, "timestamp": it.time, "line": it.line, "depth": it.depth}
    return {
        "kind": "message",
        "role": it.role,
        "timestamp": it.time,
        "uuid": it.uuid,
        "line": it.line,
        "lines": it.lines,
        "depth": it.depth,
        "model": it.model,
        "blocks": [_json_block(b) for b in it.blocks],
    }


def _json_block(b: Block) -> dict[str, Any]:
    d: dict[str, Any] = {"type": b.kind}
    if b.kind == "tool_use":
        d.update(name=b.name, id=b.tool_id, input=b.input)
        if b.result is not None:
            d["result"] = {"text": b.result.text, "is_error": b.result.is_error, "images": b.result.images}
        if b.children:
            d["subagent"] = [_json_item(c) for c in b.children]
    elif b.kind == "tool_result" and b.result is not None:
        d.update(tool_use_id=b.tool_id, text=b.result.text, is_error=b.result.is_error)
    else:
        d["text"] = b.text
    return d


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}
