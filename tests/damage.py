"""Damage a real transcript the ways crashes, full disks and parallel writers do.

Each function takes a real transcript's bytes and returns a `Damaged`: the damaged bytes,
the ``tt validate`` codes the damage must produce, the uuids of the records it
physically destroyed (nothing can bring those back), and what it did. Targets are
chosen in the part of the conversation a resume sends (after the last compact
boundary when there is one), so the real CLI's resume shows the effect.

The kinds (docs/format.md §10; the Claude Code issues cited in issue 4):

- ``torn-tail``: the file ends half-way through its last message line (crash mid-write).
- ``fused-records``: a message line is torn and the next record is written straight after
  it, with no newline between.
- ``nul-run``: 4 KiB of NUL bytes (preallocated space after a crash) before a record.
- ``garbage``: a line of bytes that are not JSON; ``not-object``: a line ``[]``.
- ``invalid-utf8``: two invalid bytes inside a message's text; ``lone-surrogate``: a lone
  ``\\ud800`` escape inside it.
- ``crlf``: every line end CRLF; ``bom``: a UTF-8 BOM before the first line.
- ``duplicate-line``: a message line written twice; ``duplicate-uuid``: written twice,
  the copy differing in one key (``cwd``), as seen in the wild.
- ``dangling-parent``: a middle message line deleted; ``dangling-logical-parent``: the
  line a compact boundary's ``logicalParentUuid`` names deleted; ``cycle``: a message's
  ``parentUuid`` pointed at its own child.
- ``tool-use-unpaired``: the file cut right after a ``tool_use`` line (crash mid-tool);
  ``tool-result-orphan``: a ``tool_use`` line deleted, its result kept.
- ``split-message-noncontiguous``: the user's next prompt chained in between the lines of
  one response (a prompt written while the response streamed), as a parallel writer
  leaves it. Needs a transcript whose responses span several lines.

Text-changing kinds only *insert* bytes, so a reader that drops U+FFFD and lone
surrogates from a text gets the original back (`normalise_text`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

NUL_RUN = 4096
GARBAGE = b"#!\x89garbage \xff\xfe not json }\n"
BAD_UTF8 = b"\xff\xfe"
LONE_SURROGATE = b"\\ud800"


@dataclass(frozen=True, slots=True)
class Damaged:
    kind: str
    data: bytes
    codes: tuple[str, ...]  # tt validate codes the damaged file must show
    destroyed: tuple[str, ...]  # uuids of records physically gone
    note: str


class _Transcript:
    """The lines (terminators kept) and records of a transcript, for choosing targets."""

    def __init__(self, data: bytes) -> None:
        self.lines: list[bytes] = data.splitlines(keepends=True)
        self.records: list[dict[str, Any] | None] = []
        for ln in self.lines:
            try:
                r = orjson.loads(ln)
            except orjson.JSONDecodeError:
                r = None
            self.records.append(r if isinstance(r, dict) else None)
        self.by_uuid = {
            r["uuid"]: i
            for i, r in enumerate(self.records)
            if r is not None and isinstance(r.get("uuid"), str)
        }
        self.children: dict[str, list[int]] = {}
        for i, r in enumerate(self.records):
            if r is not None and isinstance(r.get("parentUuid"), str):
                self.children.setdefault(r["parentUuid"], []).append(i)
        # A subagent file: every entry is on a sidechain; damage those.
        self.sidechain_file = not any(
            r is not None and r.get("type") in ("user", "assistant") and r.get("isSidechain") is not True
            for r in self.records
        )
        boundaries = [
            i for i, r in enumerate(self.records) if r is not None and r.get("subtype") == "compact_boundary"
        ]
        self.last_boundary = boundaries[-1] if boundaries else None
        # 1.0.x compactions have no boundary record: a root user line with isCompactSummary.
        roots = [
            i
            for i, r in enumerate(self.records)
            if r is not None
            and r.get("isCompactSummary")
            and r.get("parentUuid") is None
            and r.get("isSidechain") is not True
        ]
        self.start = max([b + 1 for b in boundaries] + [r + 1 for r in roots] + [0])

    def uuid(self, i: int) -> str:
        r = self.records[i]
        assert r is not None
        return str(r["uuid"])

    def is_message(self, i: int) -> bool:
        r = self.records[i]
        return (
            r is not None
            and r.get("type") in ("user", "assistant")
            and isinstance(r.get("uuid"), str)
            and (r.get("isSidechain") is not True or self.sidechain_file)
            and not r.get("isMeta")
            and not r.get("isCompactSummary")
        )

    def messages(self) -> list[int]:
        return [i for i in range(self.start, len(self.lines)) if self.is_message(i)]

    def last(self, candidates: list[int]) -> int:
        if not candidates:
            raise ValueError("no line of the transcript fits this damage")
        return candidates[-1]

    def blocks(self, i: int) -> list[dict[str, Any]]:
        msg = (self.records[i] or {}).get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []

    def kinds(self, i: int) -> set[str]:
        return {str(b.get("type")) for b in self.blocks(i)}

    def is_plain_prompt(self, i: int) -> bool:
        r = self.records[i]
        if (
            not self.is_message(i)
            or r is None
            or r.get("type") != "user"
            or not isinstance(r.get("message"), dict)
        ):
            return False
        c = r["message"].get("content")
        return (isinstance(c, str) and not c.startswith("<")) or (
            isinstance(c, list) and self.kinds(i) == {"text"}
        )

    def middle(self, candidates: list[int]) -> int:
        if not candidates:
            raise ValueError("no line of the transcript fits this damage")
        return candidates[len(candidates) // 2]

    def join(self, lines: list[bytes] | None = None) -> bytes:
        return b"".join(self.lines if lines is None else lines)

    def destroyed_from(self, i: int) -> tuple[str, ...]:
        return tuple(self.uuid(j) for j in range(i, len(self.lines)) if self.is_message(j))


def _line(rec: dict[str, Any], old: bytes) -> bytes:
    return orjson.dumps(rec) + (b"\r\n" if old.endswith(b"\r\n") else b"\n")


def torn_tail(data: bytes) -> Damaged:
    t = _Transcript(data)
    i = t.last(t.messages())
    torn = t.lines[i].rstrip(b"\r\n")
    out = t.join(t.lines[:i]) + torn[: len(torn) // 2]
    return Damaged(
        "torn-tail", out, ("torn-tail",), t.destroyed_from(i), f"cut half-way through line {i + 1}"
    )


def fused_records(data: bytes) -> Damaged:
    t = _Transcript(data)
    cands = [i for i in t.messages() if i + 1 < len(t.lines) and t.is_message(i + 1)]
    # A tool call torn with its result fused on: the case where Claude Code 2.1.197 loses
    # both without a word (docs/format.md §10). Any two message lines in a row otherwise.
    calls = [i for i in cands if "tool_use" in t.kinds(i) and "tool_result" in t.kinds(i + 1)]
    cands = calls or cands
    if not cands:
        raise ValueError("no two message lines in a row")
    i = cands[0]
    torn = t.lines[i].rstrip(b"\r\n")
    lines = [*t.lines[:i], torn[: len(torn) // 2] + t.lines[i + 1], *t.lines[i + 2 :]]
    return Damaged(
        "fused-records",
        t.join(lines),
        ("fused-records",),
        (t.uuid(i),),
        f"line {i + 1} torn, line {i + 2} fused onto it",
    )


def nul_run(data: bytes) -> Damaged:
    t = _Transcript(data)
    i = t.middle(t.messages())
    lines = [*t.lines[:i], b"\x00" * NUL_RUN + t.lines[i], *t.lines[i + 1 :]]
    return Damaged(
        "nul-run", t.join(lines), ("nul-run",), (), f"{NUL_RUN} NUL bytes before line {i + 1}'s record"
    )


def garbage(data: bytes) -> Damaged:
    t = _Transcript(data)
    i = t.middle(t.messages())
    lines = [*t.lines[:i], GARBAGE, *t.lines[i:]]
    return Damaged("garbage", t.join(lines), ("garbage",), (), f"a garbage line before line {i + 1}")


def not_object(data: bytes) -> Damaged:
    t = _Transcript(data)
    i = t.middle(t.messages())
    lines = [*t.lines[:i], b"[]\n", *t.lines[i:]]
    return Damaged("not-object", t.join(lines), ("not-object",), (), f"a line [] before line {i + 1}")


def _text_target(t: _Transcript) -> tuple[int, int]:
    """A message line with a text value, and the byte offset just after its second char."""
    for i in [*t.messages()[::-1]]:
        m = re.search(rb'"text":"[^"\\]{2}', t.lines[i]) or re.search(rb'"content":"[^"\\<]{2}', t.lines[i])
        if m:
            return i, m.end()
    raise ValueError("no message line with a text value")


def _insert(t: _Transcript, kind: str, junk: bytes, code: str) -> Damaged:
    i, at = _text_target(t)
    ln = t.lines[i]
    lines = [*t.lines[:i], ln[:at] + junk + ln[at:], *t.lines[i + 1 :]]
    return Damaged(kind, t.join(lines), (code,), (), f"{junk!r} inserted in a text on line {i + 1}")


def invalid_utf8(data: bytes) -> Damaged:
    return _insert(_Transcript(data), "invalid-utf8", BAD_UTF8, "invalid-utf8")


def lone_surrogate(data: bytes) -> Damaged:
    return _insert(_Transcript(data), "lone-surrogate", LONE_SURROGATE, "lone-surrogate")


def crlf(data: bytes) -> Damaged:
    t = _Transcript(data)
    lines = [ln[:-1] + b"\r\n" if ln.endswith(b"\n") and not ln.endswith(b"\r\n") else ln for ln in t.lines]
    return Damaged("crlf", t.join(lines), ("crlf",), (), "every line end made CRLF")


def bom(data: bytes) -> Damaged:
    return Damaged("bom", b"\xef\xbb\xbf" + data, ("bom",), (), "a UTF-8 BOM before the first line")


def duplicate_line(data: bytes) -> Damaged:
    t = _Transcript(data)
    i = t.middle(t.messages())
    lines = [*t.lines[: i + 1], t.lines[i], *t.lines[i + 1 :]]
    return Damaged("duplicate-line", t.join(lines), ("duplicate-line",), (), f"line {i + 1} written twice")


def duplicate_uuid(data: bytes) -> Damaged:
    t = _Transcript(data)
    i = t.middle(t.messages())
    rec = dict(t.records[i] or {})
    key = "cwd" if "cwd" in rec else "gitBranch" if "gitBranch" in rec else "promptId"
    rec[key] = f"{rec.get(key, '')}-other"
    lines = [*t.lines[: i + 1], _line(rec, t.lines[i]), *t.lines[i + 1 :]]
    return Damaged(
        "duplicate-uuid",
        t.join(lines),
        ("duplicate-uuid",),
        (),
        f"line {i + 1} written again with another {key}",
    )


def dangling_parent(data: bytes) -> Damaged:
    t = _Transcript(data)
    cands = [i for i in t.messages() if t.children.get(t.uuid(i)) and t.is_plain_prompt(i)]
    cands = cands or [i for i in t.messages() if t.children.get(t.uuid(i))]
    i = t.middle(cands)
    lines = [*t.lines[:i], *t.lines[i + 1 :]]
    return Damaged(
        "dangling-parent", t.join(lines), ("dangling-parent",), (t.uuid(i),), f"line {i + 1} deleted"
    )


def dangling_logical_parent(data: bytes) -> Damaged:
    t = _Transcript(data)
    if t.last_boundary is None:
        raise ValueError("no compact boundary")
    b = t.records[t.last_boundary] or {}
    i = t.by_uuid.get(b.get("logicalParentUuid"))  # type: ignore[arg-type]
    if i is None:
        raise ValueError("the boundary's logicalParentUuid is not in the file")
    lines = [*t.lines[:i], *t.lines[i + 1 :]]
    gone = (t.uuid(i),) if t.is_message(i) or t.records[i] else ()
    codes = ("dangling-logical-parent",) + (("dangling-parent",) if t.children.get(t.uuid(i)) else ())
    return Damaged(
        "dangling-logical-parent",
        t.join(lines),
        codes,
        gone,
        f"line {i + 1} (the boundary's logical parent) deleted",
    )


def cycle(data: bytes) -> Damaged:
    t = _Transcript(data)
    cands = [i for i in t.messages() if any(t.is_message(c) for c in t.children.get(t.uuid(i), []))]
    i = t.middle(cands)
    child = next(c for c in t.children[t.uuid(i)] if t.is_message(c))
    rec = dict(t.records[i] or {})
    rec["parentUuid"] = t.uuid(child)
    lines = [*t.lines[:i], _line(rec, t.lines[i]), *t.lines[i + 1 :]]
    return Damaged(
        "cycle",
        t.join(lines),
        ("cycle",),
        (),
        f"line {i + 1}'s parentUuid set to its child (line {child + 1})",
    )


def tool_use_unpaired(data: bytes) -> Damaged:
    t = _Transcript(data)
    i = t.last([i for i in t.messages() if "tool_use" in t.kinds(i)])
    return Damaged(
        "tool-use-unpaired",
        t.join(t.lines[: i + 1]),
        ("tool-use-unpaired",),
        t.destroyed_from(i + 1),
        f"file cut right after the tool_use on line {i + 1}",
    )


def tool_result_orphan(data: bytes) -> Damaged:
    t = _Transcript(data)
    cands = [
        i
        for i in t.messages()
        if "tool_use" in t.kinds(i)
        and any("tool_result" in t.kinds(c) for c in t.children.get(t.uuid(i), []))
    ]
    # Prefer a response with one call: deleting one of parallel calls leaves its result
    # on a side branch no resume sends (repair keeps it in the file, off the chain).
    uses: dict[str | None, int] = {}
    for i in cands:
        mid = _mid(t.records[i] or {})
        uses[mid] = uses.get(mid, 0) + 1
    single = [i for i in cands if uses[_mid(t.records[i] or {})] == 1]
    i = t.middle(single or cands)
    lines = [*t.lines[:i], *t.lines[i + 1 :]]
    return Damaged(
        "tool-result-orphan",
        t.join(lines),
        ("tool-result-orphan", "dangling-parent"),
        (t.uuid(i),),
        f"the tool_use line {i + 1} deleted, its result kept",
    )


def split_message(data: bytes) -> Damaged:
    """Chain the user's next prompt in between the last two lines of one response:
    ``A1 -> A2 -> U -> C`` becomes ``A1 -> U -> A2 -> C`` (lines stay where they are)."""
    t = _Transcript(data)
    for k in t.messages():
        rk = t.records[k] or {}
        if rk.get("type") != "assistant" or "tool_use" in t.kinds(k):
            continue
        p = t.by_uuid.get(rk.get("parentUuid"))  # type: ignore[arg-type]
        if p is None:
            continue
        rp = t.records[p]
        if rp is None or rp.get("type") != "assistant" or _mid(rp) is None or _mid(rp) != _mid(rk):
            continue
        kids = [c for c in t.children.get(t.uuid(k), []) if t.is_plain_prompt(c)]
        if not kids:
            continue
        u = kids[0]
        grand = [c for c in t.children.get(t.uuid(u), []) if t.is_message(c) or t.records[c]]
        ru, rk2 = dict(t.records[u] or {}), dict(rk)
        ru["parentUuid"] = t.uuid(p)
        rk2["parentUuid"] = t.uuid(u)
        lines = list(t.lines)
        for c in grand:
            rc = dict(t.records[c] or {})
            rc["parentUuid"] = t.uuid(k)
            lines[c] = _line(rc, t.lines[c])
        lines[u] = _line(ru, t.lines[u])
        lines[k] = _line(rk2, t.lines[k])
        return Damaged(
            "split-message-noncontiguous",
            t.join(lines),
            ("split-message-noncontiguous",),
            (),
            f"the prompt on line {u + 1} chained between lines {p + 1} and {k + 1} of one response",
        )
    raise ValueError("no response of several lines followed by a prompt")


def _mid(rec: dict[str, Any]) -> str | None:
    msg = rec.get("message")
    mid = msg.get("id") if isinstance(msg, dict) else None
    return mid if isinstance(mid, str) else None


#: kind -> damage function, in the order of issue 4.
KINDS: dict[str, Callable[[bytes], Damaged]] = {
    "torn-tail": torn_tail,
    "fused-records": fused_records,
    "nul-run": nul_run,
    "garbage": garbage,
    "not-object": not_object,
    "invalid-utf8": invalid_utf8,
    "lone-surrogate": lone_surrogate,
    "crlf": crlf,
    "bom": bom,
    "duplicate-line": duplicate_line,
    "duplicate-uuid": duplicate_uuid,
    "dangling-parent": dangling_parent,
    "dangling-logical-parent": dangling_logical_parent,
    "cycle": cycle,
    "tool-use-unpaired": tool_use_unpaired,
    "tool-result-orphan": tool_result_orphan,
    "split-message-noncontiguous": split_message,
}


# --- shapes the Messages API refuses (issue 14; README "Requests the API refuses") --------
# Each edits records in place (nothing is destroyed); ``destroyed`` names the records
# edited, whose blocks a fix may change.


def _edit(t: _Transcript, i: int, rec: dict[str, Any]) -> list[bytes]:
    lines = list(t.lines)
    lines[i] = _line(rec, t.lines[i])
    return lines


def _copy(t: _Transcript, i: int) -> dict[str, Any]:
    r = t.records[i]
    assert r is not None
    return orjson.loads(orjson.dumps(r))


def _results_of(t: _Transcript, tool_id: str) -> list[int]:
    return [
        i
        for i in t.messages()
        if any(b.get("type") == "tool_result" and b.get("tool_use_id") == tool_id for b in t.blocks(i))
    ]


def empty_text_block(data: bytes) -> Damaged:
    """A user prompt with an empty text block beside its text (a pasted image's empty
    caption, anthropics/claude-code#54988)."""
    t = _Transcript(data)
    i = t.middle([i for i in t.messages() if t.is_plain_prompt(i)])
    rec = _copy(t, i)
    c = rec["message"]["content"]
    rec["message"]["content"] = ([{"type": "text", "text": c}] if isinstance(c, str) else c) + [
        {"type": "text", "text": ""}
    ]
    return Damaged(
        "empty-text-block",
        t.join(_edit(t, i, rec)),
        ("empty-text-block",),
        (t.uuid(i),),
        f"empty text block added to line {i + 1}",
    )


def thinking_unsigned(data: bytes) -> Damaged:
    """A response whose thinking block lost its signature (a stream cut before
    ``signature_delta``)."""
    t = _Transcript(data)
    i = t.middle(
        [i for i in t.messages() if (t.records[i] or {}).get("type") == "assistant" and "text" in t.kinds(i)]
    )
    rec = _copy(t, i)
    rec["message"]["content"] = [
        {"type": "thinking", "thinking": "Considering the request.", "signature": ""}
    ] + rec["message"]["content"]
    return Damaged(
        "thinking-unsigned",
        t.join(_edit(t, i, rec)),
        ("thinking-unsigned",),
        (t.uuid(i),),
        f"unsigned thinking block on line {i + 1}",
    )


def _after_last_boundary(t: _Transcript, candidates: list[int]) -> list[int]:
    """The candidates a resume sends for sure: those after the last compact boundary."""
    cut = max(
        (i for i, r in enumerate(t.records) if r and r.get("subtype") == "compact_boundary"), default=-1
    )
    return [i for i in candidates if i > cut] or candidates


def empty_content(data: bytes) -> Damaged:
    """A response whose content is an empty list (a stream cut before its first block;
    anthropics/claude-code#2196, #4416)."""
    t = _Transcript(data)
    texts = [
        i for i in t.messages() if (t.records[i] or {}).get("type") == "assistant" and t.kinds(i) == {"text"}
    ]
    i = t.middle(_after_last_boundary(t, texts))
    rec = _copy(t, i)
    rec["message"]["content"] = []
    return Damaged(
        "empty-content",
        t.join(_edit(t, i, rec)),
        ("empty-content",),
        (t.uuid(i),),
        f"empty content on line {i + 1}",
    )


#: A real signature (fixtures/real, Claude Code 2.1.x), cut to 24 characters as the ones
#: anthropics/claude-code#21726 found.
_CUT_SIGNATURE = "EogDCkYIBRgCKkAbFspga3DT"


def thinking_signature_truncated(data: bytes) -> Damaged:
    """A response whose thinking block's signature was cut short (#21726)."""
    t = _Transcript(data)
    i = t.middle(
        [i for i in t.messages() if (t.records[i] or {}).get("type") == "assistant" and "text" in t.kinds(i)]
    )
    rec = _copy(t, i)
    rec["message"]["content"] = [
        {"type": "thinking", "thinking": "Considering the request.", "signature": _CUT_SIGNATURE}
    ] + rec["message"]["content"]
    return Damaged(
        "thinking-signature-truncated",
        t.join(_edit(t, i, rec)),
        ("thinking-signature-truncated",),
        (t.uuid(i),),
        f"a thinking block with a 24-character signature on line {i + 1}",
    )


def nul_in_content(data: bytes) -> Damaged:
    """A tool result holding NUL characters (a binary read as text, #94055)."""
    t = _Transcript(data)
    i = t.middle([i for i in t.messages() if "tool_result" in t.kinds(i)])
    rec = _copy(t, i)
    for b in rec["message"]["content"]:
        if b.get("type") == "tool_result":
            c = b.get("content")
            if isinstance(c, list):
                b["content"] = [*c, {"type": "text", "text": "ELF\x00\x00\x01"}]
            else:
                b["content"] = f"{c or ''}ELF\x00\x00\x01"
            break
    return Damaged(
        "nul-in-content",
        t.join(_edit(t, i, rec)),
        ("nul-in-content",),
        (t.uuid(i),),
        f"NULs in the tool result on line {i + 1}",
    )


def nul_in_tool_input(data: bytes) -> Damaged:
    """A tool call whose input holds NUL characters (a command or file content taken from
    a binary): the first string of its input gets ``ELF\\x00\\x00\\x01`` appended."""
    t = _Transcript(data)
    i = t.middle(
        [
            i
            for i in t.messages()
            if any(
                b.get("type") == "tool_use"
                and isinstance(b.get("input"), dict)
                and any(isinstance(v, str) for v in b["input"].values())
                for b in t.blocks(i)
            )
        ]
    )
    rec = _copy(t, i)
    for b in rec["message"]["content"]:
        if b.get("type") == "tool_use" and isinstance(b.get("input"), dict):
            k = next((k for k, v in b["input"].items() if isinstance(v, str)), None)
            if k is not None:
                b["input"][k] += "ELF\x00\x00\x01"
                break
    return Damaged(
        "nul-in-tool-input",
        t.join(_edit(t, i, rec)),
        ("nul-in-tool-input",),
        (t.uuid(i),),
        f"NULs in the input of the tool call on line {i + 1}",
    )


#: A whole signature of the API's shape (field 2 of 4 bytes, field 3 = 1): not cut.
_WHOLE_SIGNATURE = "EgRhYmNkGAE="


def thinking_text_missing(data: bytes) -> Damaged:
    """A response whose signed thinking block lost its ``thinking`` field (a client that
    dropped the empty text of an omitted-display block: LibreChat-AI/agents#279; the
    hollow blocks of anthropics/claude-code#46843)."""
    t = _Transcript(data)
    i = t.middle(
        [i for i in t.messages() if (t.records[i] or {}).get("type") == "assistant" and "text" in t.kinds(i)]
    )
    rec = _copy(t, i)
    rec["message"]["content"] = [{"type": "thinking", "signature": _WHOLE_SIGNATURE}] + rec["message"][
        "content"
    ]
    return Damaged(
        "thinking-text-missing",
        t.join(_edit(t, i, rec)),
        ("thinking-text-missing",),
        (t.uuid(i),),
        f"a signed thinking block without its text field on line {i + 1}",
    )


def tool_name_too_long(data: bytes) -> Damaged:
    """A call whose tool name is a whole shell command past 200 characters (#94799)."""
    t = _Transcript(data)
    i = t.middle([i for i in t.messages() if "tool_use" in t.kinds(i)])
    rec = _copy(t, i)
    for b in rec["message"]["content"]:
        if b.get("type") == "tool_use":
            b["name"] = "git log --oneline " + "--grep=x " * 22
            tid = b["id"]
            break
    return Damaged(
        "tool-name-too-long",
        t.join(_edit(t, i, rec)),
        ("tool-name-too-long",),
        (t.uuid(i), *(t.uuid(j) for j in _results_of(t, tid))),
        f"tool name of 216 characters on line {i + 1}",
    )


def _give_call_id(t: _Transcript, call: int, old: str, new: str) -> tuple[list[bytes], list[int]]:
    """The lines with the call of id ``old`` on line index ``call``, and the results that
    answer it, given the id ``new``; and the indexes of the lines edited."""
    lines = list(t.lines)
    touched = [call, *_results_of(t, old)]
    for j in touched:
        rec = _copy(t, j)
        for b in rec["message"]["content"]:
            if b.get("type") == "tool_use" and b.get("id") == old:
                b["id"] = new
            elif b.get("type") == "tool_result" and b.get("tool_use_id") == old:
                b["tool_use_id"] = new
        lines[j] = _line(rec, t.lines[j])
    return lines, touched


def tool_use_id_duplicate(data: bytes) -> Damaged:
    """A later call (and its result) reusing an earlier call's id (#20901, #28515)."""
    t = _Transcript(data)
    calls = [i for i in t.messages() if [b.get("type") for b in t.blocks(i)].count("tool_use") == 1]
    first, later = calls[0], calls[len(calls) // 2] if len(calls) > 2 else calls[-1]
    old = next(b["id"] for b in t.blocks(first) if b.get("type") == "tool_use")
    lid = next(b["id"] for b in t.blocks(later) if b.get("type") == "tool_use")
    lines, touched = _give_call_id(t, later, lid, old)
    return Damaged(
        "tool-use-id-duplicate",
        t.join(lines),
        ("tool-use-id-duplicate",),
        tuple(t.uuid(j) for j in touched),
        f"the call on line {later + 1} reuses the id of line {first + 1}",
    )


def tool_reference_too_long(data: bytes) -> Damaged:
    """A ToolSearch result naming an MCP tool past 64 characters (#20643, #22455)."""
    t = _Transcript(data)
    i = t.middle([i for i in t.messages() if "tool_result" in t.kinds(i)])
    rec = _copy(t, i)
    for b in rec["message"]["content"]:
        if b.get("type") == "tool_result":
            b["content"] = [
                {
                    "type": "tool_reference",
                    "tool_name": "mcp__claude_ai_Cloudflare_Developer_Platform_2__search_cloudflare_documentation",
                }
            ]
            break
    return Damaged(
        "tool-reference-too-long",
        t.join(_edit(t, i, rec)),
        ("tool-reference-too-long",),
        (t.uuid(i),),
        f"long tool_reference on line {i + 1}",
    )


def image_too_large(data: bytes) -> Damaged:
    """A prompt carrying a 5.5 MB PNG (a pasted full-page screenshot)."""
    import base64

    t = _Transcript(data)
    i = t.middle([i for i in t.messages() if t.is_plain_prompt(i)])
    rec = _copy(t, i)
    c = rec["message"]["content"]
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * (5_500_000 // 256)
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(png).decode()},
    }
    rec["message"]["content"] = ([{"type": "text", "text": c}] if isinstance(c, str) else c) + [image]
    return Damaged(
        "image-too-large",
        t.join(_edit(t, i, rec)),
        ("image-too-large",),
        (t.uuid(i),),
        f"a 5.5 MB image on line {i + 1}",
    )


def png(width: int, height: int) -> bytes:
    """A real grey PNG of that size (tiny: every row is zeros)."""
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    rows = b"".join(b"\x00" + b"\x00" * width for _ in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


def _png_block(width: int, height: int) -> dict[str, Any]:
    import base64

    return {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": "image/png",
            "data": base64.b64encode(png(width, height)).decode(),
        },
    }


def _prompt_with(t: _Transcript, images: list[dict[str, Any]]) -> tuple[int, dict[str, Any]]:
    i = t.middle([i for i in t.messages() if t.is_plain_prompt(i)])
    rec = _copy(t, i)
    c = rec["message"]["content"]
    rec["message"]["content"] = ([{"type": "text", "text": c}] if isinstance(c, str) else c) + images
    return i, rec


def image_past_8000px(data: bytes) -> Damaged:
    """A prompt with an image 8100 px wide (a long page screenshot, #5147)."""
    t = _Transcript(data)
    i, rec = _prompt_with(t, [_png_block(8100, 8)])
    return Damaged(
        "image-past-8000px",
        t.join(_edit(t, i, rec)),
        ("image-dimensions-too-large",),
        (t.uuid(i),),
        f"an 8100 px image on line {i + 1}",
    )


def many_images_past_2000px(data: bytes) -> Damaged:
    """21 screenshots 2100 px wide in one prompt (#34120, #51540)."""
    t = _Transcript(data)
    i, rec = _prompt_with(t, [_png_block(2100, 8) for _ in range(21)])
    return Damaged(
        "many-images-past-2000px",
        t.join(_edit(t, i, rec)),
        ("image-dimensions-too-large",),
        (t.uuid(i),),
        f"21 images 2100 px wide on line {i + 1}",
    )


def prompt_too_long(data: bytes) -> Damaged:
    """A session grown past the context window by one huge tool result (a 1 MB build log),
    whose last turn Claude Code saved as its "Prompt is too long" error: the record as
    2.1.332 writes it when the API refuses the request (seen against the stand-in; the
    body is the one anthropics/claude-code#7866 reports)."""
    t = _Transcript(data)
    i = t.middle(_after_last_boundary(t, [i for i in t.messages() if "tool_result" in t.kinds(i)]))
    rec = _copy(t, i)
    log = "".join(
        f"test_case_{n:06d} ... FAILED (see build log above for the traceback)\n" for n in range(14_000)
    )
    for b in rec["message"]["content"]:
        if b.get("type") == "tool_result":
            b["content"] = log
            break
    lines = _edit(t, i, rec)
    last = t.messages()[-1]
    env = {
        k: v
        for k, v in (t.records[last] or {}).items()
        if k in ("userType", "entrypoint", "cwd", "sessionId", "version", "gitBranch")
    }
    when = (t.records[last] or {}).get("timestamp")
    prompt_uuid, error_uuid = "7e57c0de-0000-4000-8000-00000000a001", "7e57c0de-0000-4000-8000-00000000a002"
    prompt = {
        "parentUuid": t.uuid(last),
        "isSidechain": False,
        "type": "user",
        "message": {"role": "user", "content": "Now summarise every failure in that log."},
        "uuid": prompt_uuid,
        "timestamp": when,
        **env,
    }
    said = "prompt is too long: 262511 tokens > 200000 maximum"
    error = {
        "parentUuid": prompt_uuid,
        "isSidechain": False,
        "type": "assistant",
        "uuid": error_uuid,
        "timestamp": when,
        "message": {
            "id": "3f1c1b8e-2a57-4b7e-9a8e-5c0f1d2e3a4b",
            "container": None,
            "model": "<synthetic>",
            "role": "assistant",
            "stop_reason": "stop_sequence",
            "stop_sequence": "",
            "type": "message",
            "usage": {"input_tokens": 0, "output_tokens": 0},
            "content": [{"type": "text", "text": "Prompt is too long"}],
        },
        "error": "invalid_request",
        "errorDetails": '400 {"type":"error","error":{"type":"invalid_request_error","message":"'
        + said
        + '"},"request_id":"req_0"}',
        "isApiErrorMessage": True,
        "apiErrorStatus": 400,
        "apiErrorType": "invalid_request_error",
        "resendCannotCure": True,
        **env,
    }
    extra = [orjson.dumps(prompt) + b"\n", orjson.dumps(error) + b"\n"]
    return Damaged(
        "prompt-too-long",
        b"".join(lines) + b"".join(extra),
        ("prompt-too-long",),
        (t.uuid(i),),
        f"a 1 MB tool result on line {i + 1} and Claude Code's persisted error after it",
    )


def request_too_large(data: bytes, size: int = 33_000_000) -> Damaged:
    """A session whose conversation is over the API's 32 MB request limit (a 413
    ``request_too_large`` on every turn): one tool result in the middle grown to ``size``
    bytes of build log (a `cat` of a huge file, as anthropics/claude-code users report),
    the turns after it as they were."""
    t = _Transcript(data)
    i = t.middle(_after_last_boundary(t, [i for i in t.messages() if "tool_result" in t.kinds(i)]))
    rec = _copy(t, i)
    row = "2026-11-30T10:00:00Z build step ok: compiled module with 0 warnings and 0 errors\n"
    log = row * (size // len(row) + 1)
    for b in rec["message"]["content"]:
        if b.get("type") == "tool_result":
            b["content"] = log
            break
    return Damaged(
        "request-too-large",
        b"".join(_edit(t, i, rec)),
        ("request-too-large",),
        (),
        f"a {size / 1e6:.0f} MB tool result on line {i + 1}",
    )


def tool_error_result_empty(data: bytes) -> Damaged:
    """A tool result flagged as an error with no content (a tool that failed without a
    message; jlevy/markform#153)."""
    t = _Transcript(data)
    i = t.middle(_after_last_boundary(t, [i for i in t.messages() if "tool_result" in t.kinds(i)]))
    rec = _copy(t, i)
    for b in rec["message"]["content"]:
        if b.get("type") == "tool_result":
            b["content"] = ""
            b["is_error"] = True
            break
    return Damaged(
        "tool-error-result-empty",
        t.join(_edit(t, i, rec)),
        ("tool-error-result-empty",),
        (t.uuid(i),),
        f"an empty error result on line {i + 1}",
    )


def tool_use_id_invalid(data: bytes) -> Damaged:
    """A call and its result with an id another provider's endpoint gave (Kimi's
    ``functions.<Tool>:<n>``): the session ran against it, then resumes against the API
    (maximhq/bifrost#5097, BlockRunAI/ClawRouter#17, RooCodeInc/Roo-Code#10649)."""
    t = _Transcript(data)
    i = t.middle([i for i in t.messages() if [b.get("type") for b in t.blocks(i)].count("tool_use") == 1])
    call = next(b for b in t.blocks(i) if b.get("type") == "tool_use")
    new = f"functions.{call.get('name')}:3"
    lines, touched = _give_call_id(t, i, call["id"], new)
    return Damaged(
        "tool-use-id-invalid",
        t.join(lines),
        ("tool-use-id-invalid",),
        tuple(t.uuid(j) for j in touched),
        f"the call on line {i + 1} and its result carry the id {new}",
    )


API_KINDS: dict[str, Callable[[bytes], Damaged]] = {
    "image-past-8000px": image_past_8000px,
    "many-images-past-2000px": many_images_past_2000px,
    "image-too-large": image_too_large,
    "empty-text-block": empty_text_block,
    "empty-content": empty_content,
    "thinking-unsigned": thinking_unsigned,
    "thinking-signature-truncated": thinking_signature_truncated,
    "nul-in-content": nul_in_content,
    "nul-in-tool-input": nul_in_tool_input,
    "thinking-text-missing": thinking_text_missing,
    "tool-name-too-long": tool_name_too_long,
    "tool-use-id-duplicate": tool_use_id_duplicate,
    "tool-use-id-invalid": tool_use_id_invalid,
    "tool-reference-too-long": tool_reference_too_long,
    "tool-error-result-empty": tool_error_result_empty,
}


def normalise_text(s: str) -> str:
    """Text with U+FFFD and lone surrogates removed: what the inserted junk leaves behind."""
    return "".join(ch for ch in s if ch != "\ufffd" and not "\ud800" <= ch <= "\udfff")


# --- checking a repair ------------------------------------------------------------------
# Helpers for the repair tests and the comparison script: run the core on bytes, and
# check that output + quarantine account for every input byte.


def raw_lines(data: bytes) -> list[tuple[int, int, bytes, bytes, bool]]:
    """``(line, offset, data, terminator, is_last)`` as `reader.iter_raw` yields for a file."""
    from transcript_tools.model.lines import split_terminator

    out: list[tuple[int, int, bytes, bytes, bool]] = []
    pos = 0
    n = len(data)
    while pos < n:
        j = data.find(b"\n", pos)
        end = n if j < 0 else j + 1
        chunk = data[pos:end]
        body, term = split_terminator(chunk)
        out.append((len(out) + 1, pos, body, term, end == n))
        pos = end
    return out


def decoded(data: bytes) -> list[Any]:
    from transcript_tools.model.lines import decode_line

    return [decode_line(*r[:4], is_last=r[4]) for r in raw_lines(data)]


@dataclass(frozen=True, slots=True)
class Repaired:
    data: bytes
    quarantine: list[dict[str, Any]]
    plan: Any


def id_source(seed: int = 0) -> Callable[[], str]:
    """Deterministic fresh uuids for tests."""
    import uuid

    counter = iter(range(seed << 32, (seed + 1) << 32))
    return lambda: str(uuid.UUID(int=(0xABCD << 112) | next(counter), version=4))


NOW = "2026-11-30T12:00:00.000Z"


def repair_bytes(data: bytes, options: Any = None, *, seed: int = 0) -> Repaired:
    """The core's repair of ``data`` (what ``tt repair -o`` writes, without files)."""
    from transcript_tools.repair.core import Out, RepairOptions, apply, plan_lines

    opts = options or RepairOptions()
    plan = plan_lines(decoded(data), opts, new_id=id_source(seed))
    out: list[bytes] = []
    quarantine: list[dict[str, Any]] = []
    for item in apply(raw_lines(data), plan, now=NOW):
        if isinstance(item, Out):
            out.append(item.data)
        else:
            quarantine.append(item.record)
    return Repaired(b"".join(out), quarantine, plan)


def check_accounting(data: bytes, repaired: Repaired) -> None:
    """Every input line is in the output byte for byte, or whole in the quarantine (at
    its offset); nothing else is quarantined."""
    from collections import Counter

    from transcript_tools.repair.core import original_bytes

    q = {r["line"]: r for r in repaired.quarantine}
    assert len(q) == len(repaired.quarantine), "a line quarantined twice"
    outs = Counter(d + t for _, _, d, t, _ in raw_lines(repaired.data))
    seen = set()
    total = 0
    for line, offset, body, term, _last in raw_lines(data):
        seen.add(line)
        if line in q:
            assert q[line]["offset"] == offset and original_bytes(q[line]) == body + term, f"line {line}"
            assert q[line]["length"] == len(body) + len(term)
        else:
            # A final line without newline gains one when a record is added after it.
            key = body + term if outs[body + term] else body + b"\n"
            assert outs[key] > 0, f"input line {line} is neither in the output nor quarantined"
            outs[key] -= 1
        total += len(body) + len(term)
    assert set(q) <= seen
    assert total == len(data)


def validate_bytes(data: bytes, *, subagent: bool = False) -> Any:
    """``tt validate`` (without schemas) of ``data``: the report."""
    from transcript_tools.validate.core import Validator

    v = Validator(
        "<bytes>",
        size=len(data),
        cap=max(len(data), 1),
        schema_check=None,
        expected_session=None,
        is_subagent=subagent,
    )
    for ln in decoded(data):
        v.feed(ln)
    return v.finish()
