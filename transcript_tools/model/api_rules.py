"""Block-level rules of the Messages API that a transcript can break, and their fixes.

Each rule is one bit of `content_problems` (what ``tt validate`` reports, through
`active.NodeFacts.bad`), one `diagnostics` code, and one fix used alike by ``tt repair``
(`repair.records.edit_record`, written to the file with the original line quarantined)
and by ``tt resume`` (`conversation.api_messages`, in memory). The 400 bodies are the
ones users report; the README's catalogue names the public threads.

- ``BLANK_TEXT`` (``empty-text-block``): a text block whose text is empty or only
  whitespace. API: ``messages: text content blocks must be non-empty`` /
  ``... must contain non-whitespace text``, and with ``cache_control`` on it
  ``messages.N.content.M.text: cache_control cannot be set for empty text blocks``.
  Fix: drop the block. It carries nothing, so nothing is lost; a message left with no
  block at all is dropped and its children relinked (repair) or merged (resume).
- ``UNSIGNED_THINKING`` (``thinking-unsigned``): a ``thinking`` block with no signature
  or an empty one (a response cut off before its ``signature_delta``). API:
  ``messages.N.content.M.thinking.signature: Field required`` / ``Invalid `signature` in
  `thinking` block``. Fix: drop the block. The API cannot verify it, so no request may
  carry it; the model never sees earlier turns' thinking anyway (only the last
  assistant turn's is used), so the conversation loses nothing the model would read.
- ``CUT_SIGNATURE`` (``thinking-signature-truncated``): a ``thinking`` block whose
  signature is cut short (a stream or a persister stopped mid-signature; claude-code#21726
  found 24-character ones, openclaw/openclaw#92201 and #108443 elided ones). API:
  ``messages.N.content.M: Invalid `signature` in `thinking` block``. Only the API holds
  the key, but every signature the API has issued (all 263 distinct ones in fixtures/,
  Claude Code 2.0 to 2.1.332) is standard base64 of one whole protobuf message (first
  byte 0x08 or 0x12, every field complete); a cut one is either not base64 or ends
  inside a field (of every prefix of those 263, 99.97 % are caught; the rest end exactly
  on a field boundary). Only a signature that begins as the API's do is judged: one of
  another shape (a proxy's, a stand-in's, a placeholder) is left alone. Fix: drop the
  block, as for ``UNSIGNED_THINKING``.
- ``EMPTY_ERROR_RESULT`` (``tool-error-result-empty``): a ``tool_result`` with
  ``is_error: true`` and no content (``""``, ``[]`` or none: a tool that failed without a
  message). API: ``messages.N.content.M.tool_result: content cannot be empty if
  `is_error` is true`` (jlevy/markform#153; the same rule on Bedrock,
  aws-samples/sample-multi-agent-orchestration-chat-on-agentcore#15). Fix: the content
  becomes a text saying the tool failed without a message: there was nothing to lose, the
  call stays answered (dropping the result would leave the call unpaired) and the error
  flag stays.
- ``NUL_CHAR`` (``nul-in-content``): U+0000 in a text block or in a tool result's text
  (a Bash tool reading a binary). Claude Code sends a body cut at the NUL and the API
  answers ``The request body is not valid JSON: unexpected end of data``. Fix: each
  U+0000 becomes U+2400 (SYMBOL FOR NULL, "␀"): the text keeps its length and shows
  where the NULs were; the original bytes are in the quarantine.
- ``NUL_IN_INPUT`` (``nul-in-tool-input``): U+0000 in a string of a ``tool_use``'s input
  (a key too): a call carrying what a binary read gave it (a Write of bytes, a command
  pasted from one). The body is cut at the NUL as for ``NUL_CHAR`` (both pinned CLIs:
  tests/model/test_api_rules_claude.py). Fix: each U+0000 of the input becomes U+2400,
  as for ``NUL_CHAR``. That loses least: the call stays a call (id, name, its result
  still paired with it) and every other character of its input stays where it was;
  sending the call as text (``tool-call-to-text``) would lose the call's structure, and
  dropping it would leave its result orphaned. The original bytes are in the quarantine.
- ``NO_THINKING_TEXT`` (``thinking-text-missing``): a signed ``thinking`` block with no
  ``thinking`` field at all (or one that is not a string): a client that dropped an
  empty text when it wrote or replayed the block. API: ``messages.N.content.M.thinking.
  thinking: Field required`` (LibreChat-AI/agents#279); the same family of 400 users of
  Claude Code report for hollow thinking blocks (``... .thinking: each thinking block
  must contain thinking``, anthropics/claude-code#46843; farion1231/cc-switch#3930).
  Fix: drop the block, as for ``UNSIGNED_THINKING``: a request without it is accepted
  (the API takes a history whose earlier thinking is left out), and it holds no text to
  lose. A block whose ``thinking`` is the empty *string* and whose signature is whole is
  *not* judged: the API issues exactly that when a model's thinking display is omitted,
  and takes it back (fixtures/real/v2.1.237-attachments-chained-parallel-tools.jsonl:
  15 such blocks of claude-fable-5, 14 of them sent back in the next request of the same
  tool loop and answered; tests/model/test_api_rules.py).
- ``LONG_TOOL_NAME`` (``tool-name-too-long``): a ``tool_use`` whose name is longer than
  200 characters (a model emitting a whole shell command as a tool name). API:
  ``messages.N.content.M.tool_use.name: String should have at most 200 characters``.
  Fix: the call is kept as a text block naming the tool and its input, and its result
  as text (as ``orphan-result-to-text`` does): the model still reads what was tried
  and what came back; shortening the name would invent a call that never happened.
- ``LONG_TOOL_REFERENCE`` (``tool-reference-too-long``): a ``tool_reference`` block in a
  tool result (ToolSearch) naming a tool of more than 64 characters (long MCP names).
  API: ``...tool_result.content.K.tool_reference.tool_name: String should have at most
  64 characters``. Fix: the reference becomes a text block with the name.
- ``BAD_TOOL_ID`` (``tool-use-id-invalid``): a ``tool_use`` id, or a ``tool_result``'s
  ``tool_use_id``, that is not of the API's pattern ``[a-zA-Z0-9_-]+``: a session that ran
  against another provider's Anthropic-compatible endpoint (Kimi, DeepSeek: ids such as
  ``functions.Bash:0``) and is then resumed against the API, or an MCP server name that
  leaked into ids. API: ``messages.N.content.M.tool_use.id: String should match pattern
  '^[a-zA-Z0-9_-]+$'`` (maximhq/bifrost#5097, BlockRunAI/ClawRouter#17,
  RooCodeInc/Roo-Code#10649, HKUDS/nanobot#4356), and ``... Field required`` for a block
  with no id at all. Fix: every such id becomes `valid_tool_id` of it, in the call and in
  its results alike (a function of the id alone, so each record is fixed on its own and
  the pair stays paired); a call or a result with no string id at all is kept as text
  (no result can answer a call without an id). Nothing is lost: the old id is in the
  quarantine, the new one keeps its readable part. It is applied after every other fix
  of the record (`fix_content` with this bit alone, last), because the other fixes name
  blocks by their old ids.

- ``BIG_IMAGE`` (``image-too-large``): an image over 5 MB. API: ``messages.N.content.M.
  image.source.base64: image exceeds 5 MB maximum``. Fix: the image becomes a text
  placeholder naming its type and size. tt has no image decoder to scale it down; the
  original bytes stay in the quarantine, and a 5 MB image is rarely what the next turn
  needs (``--max-image-bytes`` sets a lower limit).

- ``HUGE_IMAGE`` / ``WIDE_IMAGE`` (``image-dimensions-too-large``): an image past 8000
  px on a side, or past 2000 px in a request of more than 20 images. API: ``...image.
  source.base64.data: At least one of the image dimensions exceed max allowed size: 8000
  pixels`` / ``... for many-image requests: 2000 pixels``. The size is read from the
  PNG, GIF, JPEG or WebP header. Fix: a text placeholder with its size, as for
  ``BIG_IMAGE`` (scaling it would need an image codec tt does not ship).

Duplicate ``tool_use`` ids (``tool-use-id-duplicate``, API: ``messages.N.content.M:
`tool_use` ids must be unique``) span messages, so `api_checks` finds them and
`rename_duplicate_ids` fixes them: the later call and the result that answers it get a
fresh id (``<id>_dup<k>``): both stay, paired, and nothing is lost.

Invariants: pure (no I/O); a fix never mutates its input (changed blocks are copies);
every fixed content has none of the bits it fixed (`content_problems` is 0 for them).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any

BLANK_TEXT = 1
UNSIGNED_THINKING = 2
NUL_CHAR = 4
LONG_TOOL_NAME = 8
LONG_TOOL_REFERENCE = 16
#: An image over the API's 5 MB (found by `active.facts_of`, not `content_problems`).
BIG_IMAGE = 32
#: An image past 8000 px on a side (always refused), or past 2000 px (refused when the
#: request holds more than 20 images).
HUGE_IMAGE = 64
WIDE_IMAGE = 128
#: Every block would go (after the fixes the message holds nothing): set with the others.
ALL_GONE = 1 << 8
#: A thinking block whose signature is cut short (`signature_cut`).
CUT_SIGNATURE = 1 << 9
#: A tool_result with is_error true and no content.
EMPTY_ERROR_RESULT = 1 << 10
#: A NUL character in a string of a tool_use's input (`nul_in`).
NUL_IN_INPUT = 1 << 11
#: A signed thinking block with no ``thinking`` text field (not even an empty string).
NO_THINKING_TEXT = 1 << 12
#: A tool_use id or a tool_result's tool_use_id missing or not of the API's pattern.
BAD_TOOL_ID = 1 << 13
#: The rule bits of a `content_problems` value (the rest: ALL_GONE, the image count).
RULE_MASK = 0xFF | CUT_SIGNATURE | EMPTY_ERROR_RESULT | NUL_IN_INPUT | NO_THINKING_TEXT | BAD_TOOL_ID
#: Is this string a tool id the API takes? (``tool_use.id`` and ``tool_result.tool_use_id``:
#: ``^[a-zA-Z0-9_-]+$``.)
tool_id_ok = re.compile(r"[a-zA-Z0-9_-]+").fullmatch
_NOT_ID_CHAR = re.compile(r"[^a-zA-Z0-9_-]")
#: The text an empty error result gets (`EMPTY_ERROR_RESULT`).
EMPTY_ERROR_TEXT = "[tt: the tool reported an error without a message]"
#: ``bits >> IMAGES_SHIFT`` is the number of images in the content (capped at 255).
IMAGES_SHIFT = 16
#: The API's image dimension limits (Messages API docs, "Vision"): 8000 px a side, and
#: 2000 px a side when a request holds more than 20 images.
MAX_IMAGE_SIDE = 8000
MAX_MANY_IMAGE_SIDE = 2000
MANY_IMAGES = 20

#: The API's limit for one image (base64 data decoded), Messages API docs.
MAX_IMAGE_BYTES = 5 * 1024 * 1024
#: The API's limits: tool_use.name (200 characters), tool_reference.tool_name (64).
MAX_TOOL_NAME = 200
MAX_TOOL_REFERENCE = 64

#: Bit -> (diagnostic code, message).
CODE_OF_BIT: dict[int, tuple[str, str]] = {
    BLANK_TEXT: ("empty-text-block", "an empty or whitespace-only text block (the API rejects it)"),
    UNSIGNED_THINKING: ("thinking-unsigned", "a thinking block with an empty or missing signature"),
    CUT_SIGNATURE: ("thinking-signature-truncated", "a thinking block whose signature is cut short"),
    EMPTY_ERROR_RESULT: ("tool-error-result-empty", "a tool_result with is_error true and no content"),
    NUL_CHAR: ("nul-in-content", "a NUL character (U+0000) in text or tool output"),
    NUL_IN_INPUT: ("nul-in-tool-input", "a NUL character (U+0000) in a tool call's input"),
    NO_THINKING_TEXT: ("thinking-text-missing", "a signed thinking block with no thinking text field"),
    LONG_TOOL_NAME: ("tool-name-too-long", f"a tool_use name over the API's {MAX_TOOL_NAME} characters"),
    LONG_TOOL_REFERENCE: (
        "tool-reference-too-long",
        f"a tool_reference name over the API's {MAX_TOOL_REFERENCE} characters",
    ),
    BAD_TOOL_ID: (
        "tool-use-id-invalid",
        "a tool id missing or not of the API's pattern [a-zA-Z0-9_-]+ (a call's id or a result's tool_use_id)",
    ),
    BIG_IMAGE: ("image-too-large", "an image over the API's 5 MB limit"),
    HUGE_IMAGE: ("image-dimensions-too-large", f"an image over the API's {MAX_IMAGE_SIDE} pixels on a side"),
}
#: The code of a WIDE_IMAGE finding (`api_checks` decides it: it depends on the request).
MANY_IMAGE_MESSAGE = (
    f"an image over {MAX_MANY_IMAGE_SIDE} pixels on a side in a request of more than {MANY_IMAGES} images"
)
RULE_BITS = tuple(b for b in CODE_OF_BIT if b != BIG_IMAGE)  # the bits `content_problems` finds
#: The fix of every bit (diagnostics.CODES names them too).
FIX_OF_BIT = {
    BLANK_TEXT: "drop-empty-blocks",
    UNSIGNED_THINKING: "drop-unsigned-thinking",
    CUT_SIGNATURE: "drop-truncated-thinking",
    EMPTY_ERROR_RESULT: "fill-error-result",
    NUL_CHAR: "replace-nul",
    NUL_IN_INPUT: "replace-nul-in-input",
    NO_THINKING_TEXT: "drop-textless-thinking",
    LONG_TOOL_NAME: "tool-call-to-text",
    LONG_TOOL_REFERENCE: "tool-reference-to-text",
    BAD_TOOL_ID: "rename-invalid-tool-id",
    BIG_IMAGE: "shrink-image",
    HUGE_IMAGE: "image-to-text",
    WIDE_IMAGE: "image-to-text",
}

NUL_SUBSTITUTE = "\u2400"


def nul_in(v: Any) -> bool:
    """Does a JSON value hold U+0000 in any string (keys included)?"""
    t = type(v)
    if t is str:
        return "\x00" in v
    if t is dict:
        for k, x in v.items():
            if "\x00" in k or (type(x) is not int and nul_in(x)):
                return True
    elif t is list:
        for x in v:
            if nul_in(x):
                return True
    return False


def _without_nul(v: Any) -> Any:
    """``v`` with every U+0000 of its strings (keys included) replaced by U+2400 (a copy)."""
    t = type(v)
    if t is str:
        return v.replace("\x00", NUL_SUBSTITUTE)
    if t is dict:
        return {k.replace("\x00", NUL_SUBSTITUTE): _without_nul(x) for k, x in v.items()}
    if t is list:
        return [_without_nul(x) for x in v]
    return v


def _text_bad(text: Any) -> int:
    if not isinstance(text, str) or not text or text.isspace():
        return BLANK_TEXT
    return NUL_CHAR if "\x00" in text else 0


def _result_bad(block: dict[str, Any]) -> int:
    inner = block.get("content")
    if isinstance(inner, str):
        return NUL_CHAR if "\x00" in inner else 0
    bad = images = 0
    if isinstance(inner, list):
        for x in inner:
            if not isinstance(x, dict):
                continue
            xt = x.get("type")
            if xt == "text":
                t = x.get("text")
                if isinstance(t, str) and "\x00" in t:
                    bad |= NUL_CHAR
            elif xt == "tool_reference":
                n = x.get("tool_name")
                if isinstance(n, str) and len(n) > MAX_TOOL_REFERENCE:
                    bad |= LONG_TOOL_REFERENCE
            elif xt == "image":
                bad |= _image_bad(x)
                images += 1
    return bad | images << IMAGES_SHIFT


def thinking_bad(block: dict[str, Any]) -> int:
    """The rule a thinking block breaks (0: none, the API verifies it): no signature, one cut
    short, or no thinking text beside it. `content_problems` and `active.facts_of` ask it."""
    sig = block.get("signature")
    if type(sig) is not str or not sig:
        return UNSIGNED_THINKING
    if signature_cut(sig):
        return CUT_SIGNATURE
    if type(block.get("thinking")) is not str:
        return NO_THINKING_TEXT
    return 0


def content_problems(content: Any, assistant: bool = False) -> int:
    """The rule bits broken by one message's content (0: none), plus ``ALL_GONE`` when the
    fixes would leave the message without a block, plus the number of images
    (``>> IMAGES_SHIFT``).

    A rule changed here must change in `active.facts_of` too, which repeats this loop fused
    with its own for speed (a third of the cost per message);
    ``tests/model/test_active_facts.py`` fails while the two disagree on any block shape.

    ``assistant``: blank text blocks of an assistant message are not reported: both
    pinned CLIs leave them out of the request themselves (checked on
    fixtures/real/v2.1.38-tool-heavy.jsonl, whose responses open with a ``"\n\n"``
    text line; tests/model/test_api_rules.py), so they never reach the API.

    Runs once per message of files of any size (validate, resume): exact type tests and
    the common block types first."""
    if type(content) is str:
        return NUL_CHAR if "\x00" in content else 0
    if type(content) is not list:
        return 0
    bad = images = kept = 0
    for b in content:
        if type(b) is not dict:
            continue
        bt = b.get("type")
        if bt == "tool_use":
            n = b.get("name")
            if type(n) is str and len(n) > MAX_TOOL_NAME:
                bad |= LONG_TOOL_NAME
            inp = b.get("input")
            if inp and nul_in(inp):
                bad |= NUL_IN_INPUT
            i = b.get("id")
            if type(i) is not str or not tool_id_ok(i):
                bad |= BAD_TOOL_ID
            kept += 1
        elif bt == "tool_result":
            i = b.get("tool_use_id")
            if type(i) is not str or not tool_id_ok(i):
                bad |= BAD_TOOL_ID
            inner = b.get("content")
            if not inner and b.get("is_error") is True:
                bad |= EMPTY_ERROR_RESULT
            elif type(inner) is str:
                if "\x00" in inner:
                    bad |= NUL_CHAR
            else:
                r = _result_bad(b)
                bad |= r & 0xFFFF
                images += r >> IMAGES_SHIFT
            kept += 1
        elif bt == "text":
            t = b.get("text")
            if type(t) is str and t and not t.isspace():
                if "\x00" in t:
                    bad |= NUL_CHAR
                kept += 1
            elif not assistant:
                bad |= BLANK_TEXT
        elif bt == "thinking":
            r = thinking_bad(b)
            bad |= r
            kept += not r
        elif bt == "image":
            bad |= _image_bad(b)
            images += 1
            kept += 1
        else:
            kept += 1
    if bad and not kept:
        bad |= ALL_GONE
    return bad | min(images, 255) << IMAGES_SHIFT if images else bad


_B64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def signature_cut(sig: str) -> bool:
    """Is this (non-empty) thinking signature cut short? Judged only for a signature that
    begins as every one the API issued does (base64 of a protobuf message that starts
    with field 2, "E…", or with field 1 = 2 then field 2, "CAIS…"): True when it is shorter
    than one base64 quantum, not whole base64, or the message ends inside a field. Another issuer's shape (a proxy's, a stand-in's) is not judged. Module
    docstring: why."""
    raw = sig.encode("ascii", "replace")
    if raw[:1] not in (b"C", b"E") or not _B64.issuperset(raw[:4]):
        return False  # 0x08 / 0x12 are "C" / "E" in base64: another shape, not judged
    if len(raw) < 4:
        return True
    if raw[:4] not in (b"CAIS",) and raw[:1] == b"C":
        return False  # 0x08 then not the API's second field: not judged
    if len(raw) % 4:
        return True
    # A character outside the base64 alphabet makes the strict decode below fail (a cut
    # signature, as before): no Python-level pass over the characters (5 us a signature).
    try:
        d = base64.b64decode(raw, validate=True)
    except ValueError:
        return True
    if not d or d[0] not in (0x08, 0x12):
        return False
    return not _whole_protobuf(d)


def _whole_protobuf(d: bytes) -> bool:
    n = len(d)
    i = 0
    while i < n:
        tag, i = _varint(d, i)
        if tag < 8:
            return False
        wire = tag & 7
        if wire == 0:
            _, i = _varint(d, i)
        elif wire == 2:
            size, i = _varint(d, i)
            if size < 0:
                return False
            i += size
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            return False
        if i < 0 or i > n:
            return False
    return True


def _varint(d: bytes, i: int) -> tuple[int, int]:
    """(value, next index); (-1, -1) when the bytes end inside it."""
    v = shift = 0
    n = len(d)
    while i < n:
        c = d[i]
        i += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, i
        shift += 7
    return -1, -1


def _image_bad(block: dict[str, Any]) -> int:
    dims = image_size(block)
    if dims is None:
        return 0
    side = max(dims)
    return (
        HUGE_IMAGE | WIDE_IMAGE if side > MAX_IMAGE_SIDE else WIDE_IMAGE if side > MAX_MANY_IMAGE_SIDE else 0
    )


def image_size(block: dict[str, Any]) -> tuple[int, int] | None:
    """(width, height) of a base64 PNG, GIF, JPEG or WebP image block, from its header;
    None when it cannot be read (then no dimension rule is judged)."""
    src = block.get("source")
    if not isinstance(src, dict) or src.get("type") != "base64" or not isinstance(src.get("data"), str):
        return None
    data = src["data"]
    try:
        head = base64.b64decode(data[:64], validate=False)
        if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
            return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
        if head[:6] in (b"GIF87a", b"GIF89a"):
            return int.from_bytes(head[6:8], "little"), int.from_bytes(head[8:10], "little")
        if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
            return _webp(head)
        if head[:2] == b"\xff\xd8":
            # The frame header follows the EXIF/ICC segments: usually in the first KBs.
            for n in (1 << 13, 1 << 18):
                got = _jpeg(base64.b64decode(data[:n], validate=False))
                if got is not None or n >= len(data):
                    return got
    except (ValueError, IndexError):
        return None
    return None


def _webp(h: bytes) -> tuple[int, int] | None:
    kind = h[12:16]
    if kind == b"VP8X" and len(h) >= 30:
        return 1 + int.from_bytes(h[24:27], "little"), 1 + int.from_bytes(h[27:30], "little")
    if kind == b"VP8L" and len(h) >= 25:
        bits = int.from_bytes(h[21:25], "little")
        return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
    if kind == b"VP8 " and len(h) >= 30:
        return int.from_bytes(h[26:28], "little") & 0x3FFF, int.from_bytes(h[28:30], "little") & 0x3FFF
    return None


def _jpeg(d: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(d):
        if d[i] != 0xFF:
            i += 1
            continue
        marker = d[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7 or marker == 0xFF:
            i += 1 if marker == 0xFF else 2
            continue
        length = int.from_bytes(d[i + 2 : i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            return int.from_bytes(d[i + 7 : i + 9], "big"), int.from_bytes(d[i + 5 : i + 7], "big")
        i += 2 + length
    return None


def fix_content(content: list[Any], bits: int, text_calls: set[str] | None = None) -> list[Any]:
    """``content`` with the rules of ``bits`` fixed (the input is not changed).

    ``text_calls``: ids of calls kept as text (``tool-call-to-text``); their results in
    this content become text too. Returns ``content`` itself when nothing changed.
    """
    out: list[Any] = []
    changed = False
    for b in content:
        if not isinstance(b, dict):
            out.append(b)
            continue
        bt = b.get("type")
        if bt == "text":
            t = b.get("text")
            if bits & BLANK_TEXT and _text_bad(t) == BLANK_TEXT:
                changed = True
                continue
            if bits & NUL_CHAR and isinstance(t, str) and "\x00" in t:
                out.append({**b, "text": t.replace("\x00", NUL_SUBSTITUTE)})
                changed = True
                continue
        elif bt == "thinking" and bits & (UNSIGNED_THINKING | CUT_SIGNATURE | NO_THINKING_TEXT):
            s = b.get("signature")
            if not isinstance(s, str) or not s:
                if bits & UNSIGNED_THINKING:
                    changed = True
                    continue
            elif (bits & CUT_SIGNATURE and signature_cut(s)) or (
                bits & NO_THINKING_TEXT and not isinstance(b.get("thinking"), str)
            ):
                changed = True
                continue
        elif bt == "tool_use" and bits & (LONG_TOOL_NAME | NUL_IN_INPUT | BAD_TOOL_ID):
            n = b.get("name")
            i = b.get("id")
            if (bits & LONG_TOOL_NAME and isinstance(n, str) and len(n) > MAX_TOOL_NAME) or (
                bits & BAD_TOOL_ID and not isinstance(i, str)
            ):
                out.append(call_as_text(b))
                changed = True
                continue
            if bits & NUL_IN_INPUT and nul_in(b.get("input")):
                b = {**b, "input": _without_nul(b["input"])}
                changed = True
            if bits & BAD_TOOL_ID and isinstance(i, str) and not tool_id_ok(i):
                b = {**b, "id": valid_tool_id(i)}
                changed = True
        elif bt == "image" and _image_goes(b, bits):
            out.append(image_placeholder(b))
            changed = True
            continue
        elif bt == "tool_result":
            i = b.get("tool_use_id")
            if (text_calls and i in text_calls) or (bits & BAD_TOOL_ID and not isinstance(i, str)):
                out.extend(result_as_text(b, bits))
                changed = True
                continue
            fixed = _fix_result(b, bits)
            if bits & BAD_TOOL_ID and isinstance(i, str) and not tool_id_ok(i):
                fixed = {**fixed, "tool_use_id": valid_tool_id(i)}
            if fixed is not b:
                out.append(fixed)
                changed = True
                continue
        out.append(b)
    return out if changed else content


def valid_tool_id(old: str) -> str:
    """The id `fix_content` gives a tool id the API refuses (``BAD_TOOL_ID``): its
    characters outside ``[a-zA-Z0-9_-]`` become ``_``, and 8 hex digits of its SHA-256
    follow, so ids that differ only in those characters stay apart (``functions.Bash:0``
    and ``functions.Bash_0`` would both be ``functions_Bash_0`` without them). A function
    of the id alone: the call and each result that names it get the same new id, whichever
    record is fixed first, in repair as in resume."""
    digest = hashlib.sha256(old.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{_NOT_ID_CHAR.sub('_', old)}_{digest}"


def fix_string(content: str) -> str:
    """A string content with its NULs replaced (the one rule a string can break)."""
    return content.replace("\x00", NUL_SUBSTITUTE)


def _fix_result(b: dict[str, Any], bits: int) -> dict[str, Any]:
    inner = b.get("content")
    if bits & EMPTY_ERROR_RESULT and not inner and b.get("is_error") is True:
        return {**b, "content": EMPTY_ERROR_TEXT}
    if isinstance(inner, str):
        if bits & NUL_CHAR and "\x00" in inner:
            return {**b, "content": fix_string(inner)}
        return b
    if not isinstance(inner, list):
        return b
    new: list[Any] = []
    changed = False
    for x in inner:
        if isinstance(x, dict):
            xt = x.get("type")
            if xt == "text" and bits & NUL_CHAR and isinstance(x.get("text"), str) and "\x00" in x["text"]:
                new.append({**x, "text": fix_string(x["text"])})
                changed = True
                continue
            if xt == "image" and _image_goes(x, bits):
                new.append(image_placeholder(x))
                changed = True
                continue
            if xt == "tool_reference" and bits & LONG_TOOL_REFERENCE:
                n = x.get("tool_name")
                if isinstance(n, str) and len(n) > MAX_TOOL_REFERENCE:
                    new.append({"type": "text", "text": f"[tt: tool reference {n}]"})
                    changed = True
                    continue
        new.append(x)
    return {**b, "content": new} if changed else b


def image_bytes(block: dict[str, Any]) -> int:
    """The decoded size of a base64 image block (0 for other sources)."""
    src = block.get("source")
    if not isinstance(src, dict) or src.get("type") != "base64":
        return 0
    data = src.get("data")
    return len(data) * 3 // 4 if isinstance(data, str) else 0


def _image_goes(block: dict[str, Any], bits: int) -> bool:
    if bits & BIG_IMAGE and image_bytes(block) > MAX_IMAGE_BYTES:
        return True
    if bits & (HUGE_IMAGE | WIDE_IMAGE):
        got = _image_bad(block)
        return bool((got & HUGE_IMAGE and bits & HUGE_IMAGE) or (got & WIDE_IMAGE and bits & WIDE_IMAGE))
    return False


def image_placeholder(block: dict[str, Any]) -> dict[str, Any]:
    """A text block standing for an image the API cannot take."""
    src = block.get("source")
    media = src.get("media_type") if isinstance(src, dict) else None
    dims = image_size(block)
    size = f"{dims[0]}x{dims[1]} px, " if dims else ""
    return {
        "type": "text",
        "text": f"[tt: a {media or 'base64'} image ({size}{image_bytes(block) / 1e6:.1f} MB) was left out here: over the API's limits]",
    }


def call_as_text(block: dict[str, Any]) -> dict[str, Any]:
    """A ``tool_use`` the API cannot take, as the text of what was called."""
    args = json.dumps(block.get("input"), ensure_ascii=False, separators=(",", ":"))
    ident = block.get("id")
    call = f"tool call {ident}" if isinstance(ident, str) else "a tool call without an id"
    return {
        "type": "text",
        "text": f"[tt: {call} to a tool named {block.get('name')!s} with input {args}]",
    }


def result_as_text(block: dict[str, Any], bits: int = 0, *, head: str | None = None) -> list[dict[str, Any]]:
    """The result of a call kept as text, as text (images kept), under ``head`` (by
    default: the result of a call the API could not take; repair's orphans name theirs)."""
    if head is None:
        ident = block.get("tool_use_id")
        call = f"tool call {ident}" if isinstance(ident, str) else "a tool call it names by no id"
        head = f"[tt: result of {call}" + (" (an error)]" if block.get("is_error") is True else "]")
    inner = block.get("content")
    texts = [head]
    images: list[dict[str, Any]] = []
    if isinstance(inner, str):
        texts.append(inner)
    elif isinstance(inner, list):
        for x in inner:
            if isinstance(x, dict) and x.get("type") == "text" and isinstance(x.get("text"), str):
                texts.append(x["text"])
            elif isinstance(x, dict) and x.get("type") == "image":
                images.append(x)
            else:
                texts.append(json.dumps(x, ensure_ascii=False, separators=(",", ":")))
    text = "\n".join(t for t in texts if t)
    if bits & NUL_CHAR or "\x00" in text:
        text = fix_string(text)
    return [{"type": "text", "text": text}, *images]


def long_named_calls(content: Iterable[Any]) -> list[str]:
    """Ids of the calls in ``content`` whose name is past the API's limit."""
    return [
        b["id"]
        for b in content
        if isinstance(b, dict)
        and b.get("type") == "tool_use"
        and isinstance(b.get("id"), str)
        and isinstance(b.get("name"), str)
        and len(b["name"]) > MAX_TOOL_NAME
    ]


def renamed_id(old: str, taken: set[str]) -> str:
    """A fresh id for a duplicate call: ``<old>_dup<k>``, the first ``k`` not taken
    (the API's id pattern is ``[a-zA-Z0-9_-]+``, which this keeps)."""
    k = 2
    while f"{old}_dup{k}" in taken:
        k += 1
    return f"{old}_dup{k}"


#: A rename of one id (every block with it), or of its k-th block (0-based, in content
#: order, among the blocks of that kind with that id: two calls of one message sharing an
#: id keep the first and rename the second).
IdRenames = dict[str | tuple[str, int], str]


def rename_ids(content: list[Any], uses: IdRenames, results: IdRenames) -> list[Any]:
    """``content`` with ``tool_use`` ids in ``uses`` and ``tool_result`` ids in ``results``
    renamed (old -> new; an ``(old, k)`` key renames the k-th block with that id only,
    before an ``old`` key does). Returns ``content`` itself when nothing changed."""
    out: list[Any] = []
    changed = False
    seen: dict[tuple[str, Any], int] = {}  # (kind, id) -> blocks of it met so far
    for b in content:
        if isinstance(b, dict):
            bt = b.get("type")
            field = "id" if bt == "tool_use" else "tool_use_id" if bt == "tool_result" else None
            renames = uses if bt == "tool_use" else results
            if field is not None and renames:
                old = b.get(field)
                if isinstance(old, str):
                    k = seen.get((field, old), 0)
                    seen[(field, old)] = k + 1
                    new = renames.get((old, k), renames.get(old))
                    if new is not None:
                        b = {**b, field: new}
                        changed = True
        out.append(b)
    return out if changed else content


#: The text of Claude Code's persisted error for a request past the context window
#: (2.1.197 and 2.1.332 write it as an ``isApiErrorMessage`` assistant record, model
#: ``<synthetic>``, with the API's body in ``errorDetails``; 2.1.332 adds
#: ``resendCannotCure: true``).
PROMPT_TOO_LONG = "Prompt is too long"


def prompt_too_long(record: dict[str, Any]) -> str | None:
    """For Claude Code's persisted "Prompt is too long" error record: what the API said
    (``prompt is too long: N tokens > M maximum`` when the record keeps it), else None.

    Neither pinned CLI sends this record again; what blocks every retry is the history
    before it, which the API refused as past the context window and which every resume
    sends again, plus the new prompt (``prompt-too-long``; README "Requests the API
    refuses"). Only the last response of a conversation is judged (by the callers), and
    only an error written after the conversation's last compact boundary (`refused_since`):
    a compaction's kept copy of it keeps its old timestamp."""
    if record.get("isApiErrorMessage") is not True:
        return None
    msg = record.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if not isinstance(content, list) or not any(
        isinstance(b, dict) and isinstance(b.get("text"), str) and b["text"].startswith(PROMPT_TOO_LONG)
        for b in content
    ):
        return None
    details = record.get("errorDetails")
    if isinstance(details, str):
        k = details.find("prompt is too long")
        if k >= 0:
            return details[k:].split('"', 1)[0]
    return PROMPT_TOO_LONG


def refused_since(record: dict[str, Any], boundary_ts: Any) -> bool:
    """Was this error written after the compact boundary of time ``boundary_ts`` (None:
    no boundary)? A compaction (Claude Code's or tt's) may copy the error into its kept
    tail; the copy keeps the original's timestamp, older than the boundary."""
    ts = record.get("timestamp")
    return not isinstance(boundary_ts, str) or not isinstance(ts, str) or ts > boundary_ts
