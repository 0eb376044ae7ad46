"""The Agent SDK's raw scans of a session file's head and tail, on bytes.

Ported from ``claude_agent_sdk/_internal/sessions.py`` (0.2.189: ``_extract_json_string_field``,
``_extract_last_json_string_field``, ``_extract_first_prompt_from_head``) so that tt
reads the same titles the SDK and the ``/resume`` picker read, byte for byte — including
their quirks: a key is found anywhere in the buffer (not only in title records), a spaced
``"key": "`` match wins over a compact one, and a torn value runs on to the next quote.

They work on bytes rather than on the decoded text the SDK scans: decoding with
``errors="replace"`` never creates or removes an ASCII quote, backslash or newline, so
every match and every value boundary is the same; values are decoded as the SDK would.
(Scanning bytes, from the end, is what lets `tt ls` read 2,000 sessions in about a second.)
One function is tt's own, not the SDK's: `first_record_field`, for the fields where the SDK's
scan takes a nested key for the record's (a session's ``cwd``).

Invariants: pure; never raise on any bytes. ``tests/catalog/test_listing.py`` checks them against
the SDK's own functions on generated and real input.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from .lines import decode_line

_SKIP_FIRST_PROMPT = re.compile(
    r"^(?:<local-command-stdout>|<session-start-hook>|<tick>|<goal>|"
    r"\[Request interrupted by user[^\]]*\]|"
    r"\s*<ide_opened_file>[\s\S]*</ide_opened_file>\s*$|"
    r"\s*<ide_selection>[\s\S]*</ide_selection>\s*$)"
)
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _unescape(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace")
    if "\\" not in text:
        return text
    try:
        value = json.loads(f'"{text}"')
    except ValueError:
        return text
    if not isinstance(value, str):
        return text
    # A "\ud800" escape with no pair decodes to a lone surrogate, which no output can
    # encode (a traceback in `tt ls` and `tt doctor`): shown as U+FFFD, as the bytes are.
    return _LONE_SURROGATE.sub("\ufffd", value)


def _value_end(data: bytes, start: int) -> int:
    """Where the string value starting at ``start`` ends (its closing quote), or -1.
    The SDK walks it char by char, skipping the char after each backslash; a quote
    closes the value iff an even number of backslashes precede it, the same thing."""
    i = start
    while True:
        j = data.find(b'"', i)
        if j < 0:
            return -1
        k = j
        while k > start and data[k - 1] == 0x5C:
            k -= 1
        if (j - k) % 2 == 0:
            return j
        i = j + 1


def has_spaced(data: bytes) -> bool:
    """Whether ``data`` may hold a spaced ``"key": "value"`` at all (Claude Code writes
    compact JSON; spaced keys come from other tools). Lets the scans skip the spaced
    patterns with one search instead of one per key."""
    return b'": "' in data


def first_string_field(data: bytes, key: str, spaced: bool = True) -> str | None:
    """The first ``"key":"value"`` in ``data`` (no JSON parse; works on torn lines).

    Works on the bytes: the SDK decodes with ``errors="replace"`` first, which never
    creates or removes an ASCII quote or backslash, so the matches are the same."""
    k = key.encode()
    for pattern in (b'"%s":"' % k, b'"%s": "' % k) if spaced else (b'"%s":"' % k,):
        idx = data.find(pattern)
        if idx < 0:
            continue
        start = idx + len(pattern)
        end = _value_end(data, start)
        if end >= 0:
            return _unescape(data[start:end])
    return None


def first_record_field(data: bytes, key: str) -> str | None:
    """The first string ``key`` of a record's top level in ``data`` (a head of whole lines,
    maybe torn at its end): not the SDK's scan, which takes a nested one when it comes first.

    Claude Code 2.1.29x writes an assistant line's ``message`` and ``wireIngestContext``
    (``{"toolu_…":{"cwd":"/c/Users/…"}}``, the Git Bash form) before its own ``cwd``
    (``C:\\Users\\…``): a head that begins with such a line (a copy of a session's tail)
    gave the nested one, and `tt doctor` called the session moved. Each line that names the
    key is decoded as every reader of tt decodes it (`lines.decode_line`: a lone surrogate
    or a BOM too); a line it cannot decode, the head's torn end above all (a first line past
    64 KiB), is scanned for the key at its top level, outside strings (`_top_level_string`)."""
    k = key.encode()
    pattern = b'"%s"' % k
    at = 0
    while True:
        idx = data.find(pattern, at)
        if idx < 0:
            return None
        start = data.rfind(b"\n", 0, idx) + 1
        end = data.find(b"\n", idx)
        whole = end >= 0
        end = end if whole else len(data)
        line = data[start:end]
        if whole:
            decoded = decode_line(0, start, line.removesuffix(b"\r"), b"\n", is_last=False)
            if decoded.entries:
                for e in decoded.entries:
                    value = e.record.get(key)
                    if isinstance(value, str):
                        return value
                at = end
                continue
        value = _top_level_string(line, k)
        if value is not None or not whole:
            return value
        at = end


#: The bytes that change a JSON scan's state: quotes, backslashes, brackets.
_STRUCTURE = re.compile(rb'[\\"{}\[\]]')


def _top_level_string(line: bytes, key: bytes) -> str | None:
    """The string value of ``key`` where it is a key of the line's outermost object: a scan
    of the structure (depth, strings and their escapes) that works on a record cut short."""
    depth = 0
    in_string = False
    opened = -1  # where the string being read began
    skip = -1
    n = len(line)
    for m in _STRUCTURE.finditer(line):
        i = m.start()
        if i < skip:
            continue
        c = line[i]
        if in_string:
            if c == 0x5C:  # a backslash: the next byte is escaped
                skip = i + 2
            elif c == 0x22:
                in_string = False
                if depth == 1 and line[opened + 1 : i] == key:
                    j = i + 1
                    while j < n and line[j] in b" \t":
                        j += 1
                    if j < n and line[j] == 0x3A:  # a key: its value follows
                        j += 1
                        while j < n and line[j] in b" \t":
                            j += 1
                        if j < n and line[j] == 0x22:
                            close = _value_end(line, j + 1)
                            return _unescape(line[j + 1 : close]) if close >= 0 else None
            continue
        if c == 0x22:
            in_string, opened = True, i
        elif c == 0x7B or c == 0x5B:
            depth += 1
        elif c == 0x7D or c == 0x5D:
            depth -= 1
    return None


def last_string_field(data: bytes, key: str, spaced: bool = True) -> str | None:
    """The last ``"key":"value"`` in ``data``, as the SDK's forward scan finds it.

    A match of the spaced pattern (``"key": "``) wins over the compact one wherever it
    is, as in the SDK. Searched from the end (the forward scan reads the whole buffer
    for every key: too slow for 2,000 files), then corrected for the one way the two
    differ: on a torn line, the value of one match can run on to the opening quote of
    the next, and the forward scan then skips that next match."""
    k = key.encode()
    for pattern in (b'"%s": "' % k, b'"%s":"' % k) if spaced else (b'"%s":"' % k,):
        found = _last_match(data, pattern)
        if found is not None:
            return _unescape(data[found[0] : found[1]])
    return None


def last_titles(data: bytes, spaced: bool = True) -> tuple[str | None, str | None]:
    """``(last customTitle, last aiTitle)``, each as `last_string_field` finds it, from
    one backward search for their common ``Title":"`` (a title-less file, the usual
    case, costs one read of the buffer instead of two)."""
    out: dict[str, str | None] = {"customTitle": None, "aiTitle": None}
    for suffix in (b'Title": "', b'Title":"') if spaced else (b'Title":"',):
        lasts = _last_title_indexes(data, suffix)
        for key in out:
            if out[key] is None and key in lasts:
                pattern = b'"%s%s' % (key[:-5].encode(), suffix)
                m = _last_match(data, pattern, lasts[key])
                if m is not None:
                    out[key] = _unescape(data[m[0] : m[1]])
    return out["customTitle"], out["aiTitle"]


def _last_title_indexes(data: bytes, suffix: bytes) -> dict[str, int]:
    """Where the last ``"customTitle<suffix>`` and ``"aiTitle<suffix>`` start."""
    found: dict[str, int] = {}
    h = data.rfind(suffix)
    while h >= 0 and len(found) < 2:
        for key, lead in (("customTitle", b'"custom'), ("aiTitle", b'"ai')):
            if key not in found and h >= len(lead) and data.startswith(lead, h - len(lead)):
                found[key] = h - len(lead)
        h = data.rfind(suffix, 0, h)
    return found


def _last_match(data: bytes, pattern: bytes, last: int | None = None) -> tuple[int, int] | None:
    """``(value_start, value_end)`` of the last match the SDK's forward scan takes
    (``last``: where the last occurrence of ``pattern`` is, when already known)."""
    n = len(pattern)
    idx = data.rfind(pattern) if last is None else last
    while idx >= 0:
        end = _value_end(data, idx + n)
        if end >= 0:
            break
        idx = data.rfind(pattern, 0, idx)  # unterminated: the forward scan stops before it
    else:
        return None
    # The forward scan skips a match that starts inside the value of a match it took.
    # That happens only on damaged lines (a torn value runs on to the next quote), when
    # the nearest unescaped quote before the match closes another match's pattern.
    chain = [idx]
    while (m := _swallower(data, pattern, chain[-1])) is not None:
        chain.append(m)
    # chain[-1] is taken; each match after a taken one is skipped, and so on.
    if len(chain) % 2 == 1:
        return idx + n, end
    # Skipped: the match before it is taken, and its value runs to or past this one.
    return chain[1] + n, _value_end(data, chain[1] + n)


def _swallower(data: bytes, pattern: bytes, pos: int) -> int | None:
    q = data.rfind(b'"', 0, pos)
    while q >= 0:
        k = q
        while k > 0 and data[k - 1] == 0x5C:
            k -= 1
        if (q - k) % 2 == 0:
            break
        q = data.rfind(b'"', 0, q)
    if q < 0:
        return None
    m = q + 1 - len(pattern)
    return m if m >= 0 and data.startswith(pattern, m) else None


def marker_lines(
    data: bytes, markers: tuple[bytes, ...], start: int = 0, stop: int | None = None
) -> Iterator[tuple[int, int, int]]:
    """``(line_start, line_end, first_marker_at)`` of each line of ``data[start:stop]``
    holding one of ``markers``, in order, each line once (found with ``bytes.find``,
    not by splitting: most lines are never looked at)."""
    stop = len(data) if stop is None else stop
    pos = {m: data.find(m, start, stop) for m in markers}
    pos = {m: i for m, i in pos.items() if i >= 0}
    while pos:
        i = min(pos.values())
        nl = data.rfind(b"\n", start, i)
        ls = start if nl < 0 else nl + 1
        le = data.find(b"\n", i, stop)
        if le < 0:
            le = stop
        yield ls, le, i
        for m in [m for m, j in pos.items() if j < le]:
            j = data.find(m, le, stop)
            if j < 0:
                del pos[m]
            else:
                pos[m] = j


def first_prompt(head: bytes, spaced: bool = True) -> str:
    """The first meaningful user prompt in the head, as the SDK picks it ("" if none)."""
    fallback = ""
    markers = (b'"type":"user"', b'"type": "user"') if spaced else (b'"type":"user"',)
    for ls, le, _ in marker_lines(head, markers):
        raw_line = head[ls:le]
        if b'"tool_result"' in raw_line:
            continue
        if b'"isMeta":true' in raw_line or b'"isMeta": true' in raw_line:
            continue
        if b'"isCompactSummary":true' in raw_line or b'"isCompactSummary": true' in raw_line:
            continue
        try:
            entry = json.loads(raw_line.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            continue
        if not isinstance(entry, dict) or entry.get("type") != "user":
            continue
        message = entry.get("message")
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        texts: list[str] = []
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(
                b["text"]
                for b in content
                if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
            )
        for raw in texts:
            result = raw.replace("\n", " ").strip()
            if not result:
                continue
            cmd = _COMMAND_NAME.search(result)
            if cmd:
                fallback = fallback or cmd.group(1)
                continue
            if _SKIP_FIRST_PROMPT.match(result):
                continue
            if len(result) > 200:
                result = result[:200].rstrip() + "\u2026"
            return result
    return fallback
