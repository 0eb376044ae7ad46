"""The line decoder: every damage kind, exact byte accounting, never a crash."""

from __future__ import annotations

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools.model.lines import decode_line, looks_like

REC = b'{"type":"user","uuid":"11111111-1111-4111-8111-111111111111","sessionId":"s","message":{"role":"user","content":"hi"}}'
REC2 = b'{"type":"assistant","uuid":"22222222-2222-4222-8222-222222222222","parentUuid":"11111111-1111-4111-8111-111111111111","sessionId":"s","message":{"role":"assistant","content":[{"type":"text","text":"yo"}]}}'


def dec(data: bytes, *, last: bool = False, term: bytes = b"\n", number: int = 5):
    return decode_line(number, 100, data, b"" if last else term, is_last=last)


def codes(d) -> list[str]:
    return [p.code for p in d.pieces]


def test_whole_record_is_one_entry_with_its_bytes() -> None:
    d = dec(REC)
    assert codes(d) == [] and len(d.entries) == 1
    e = d.entries[0]
    assert e.raw == REC and e.offset == 100 and e.line == 5
    assert e.type == "user" and e.uuid.startswith("1111") and e.lenient == ()
    assert d.clean


def test_torn_tail_only_on_the_last_unterminated_line() -> None:
    torn = REC2[:70]
    assert codes(dec(torn, last=True)) == ["torn-tail"]
    assert codes(dec(torn)) == ["truncated-record"]


def test_fused_record_keeps_the_whole_one() -> None:
    d = dec(REC2[:90] + REC)
    assert codes(d) == ["fused-records"]
    assert [e.raw for e in d.entries] == [REC]
    assert d.entries[0].offset == 100 + 90
    assert d.pieces[0].start == 0 and d.pieces[0].end == 90


def test_torn_record_whose_prefix_ends_on_a_content_block_is_not_a_record() -> None:
    # The nested {"type":"text",...} block ends the line but has no record keys.
    torn = b'{"type":"assistant","uuid":"x","message":{"content":[{"type":"text","text":"yo"}'
    d = dec(torn, last=True)
    assert codes(d) == ["torn-tail"] and d.entries == []


def test_whole_record_followed_by_torn_tail() -> None:
    d = dec(REC + REC2[:40], last=True)
    assert [e.raw for e in d.entries] == [REC]
    assert codes(d) == ["torn-tail"]


def test_nul_runs_around_a_record() -> None:
    d = dec(b"\x00" * 7 + REC + b"\x00\x00")
    assert codes(d) == ["nul-run", "nul-run"]
    assert [e.raw for e in d.entries] == [REC]
    assert d.pieces[0].end - d.pieces[0].start == 7


def test_garbage_and_not_object() -> None:
    assert codes(dec(b"hello world")) == ["garbage"]
    assert codes(dec(b"[]")) == ["not-object"]
    assert codes(dec(b"null")) == ["not-object"]
    assert codes(dec(b"")) == ["blank-line"]


def test_invalid_utf8_inside_a_record_is_kept_leniently() -> None:
    raw = REC.replace(b'"hi"', b'"h\xff\xfei"')
    d = dec(raw)
    assert codes(d) == []
    (e,) = d.entries
    assert e.lenient == ("invalid-utf8",)
    assert e.raw == raw
    assert e.record["message"]["content"] == "h\ufffd\ufffdi"


def test_lone_surrogate_escape_is_replaced() -> None:
    raw = REC.replace(b'"hi"', b'"h\\ud83di"')
    (e,) = dec(raw).entries
    assert e.lenient == ("lone-surrogate",)
    assert e.record["message"]["content"] == "h\ufffdi"
    # A proper pair is not damage.
    ok = REC.replace(b'"hi"', b'"\\ud83d\\ude00"')
    (e2,) = dec(ok).entries
    assert e2.lenient == () and e2.record["message"]["content"] == "\U0001f600"


def test_bom_only_on_the_first_line() -> None:
    d = decode_line(1, 0, b"\xef\xbb\xbf" + REC, b"\n", is_last=False)
    assert codes(d) == ["bom"] and [e.raw for e in d.entries] == [REC]


def test_nan_is_not_json_for_claude_code() -> None:
    assert codes(dec(b'{"type":"user","uuid":"a","x":NaN}')) == ["truncated-record"]


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=400), st.booleans())
def test_any_bytes_are_accounted_for_and_never_crash(data: bytes, last: bool) -> None:
    data = data.replace(b"\n", b"")
    d = dec(data, last=last)
    assert d.accounted_bytes() == len(data)
    spans = sorted(
        [(e.offset - 100, e.offset - 100 + len(e.raw)) for e in d.entries]
        + [(p.start, p.end) for p in d.pieces]
    )
    pos = 0
    for a, b in spans:
        assert a == pos
        pos = b
    assert pos == len(data)


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=len(REC2)), st.binary(max_size=20))
def test_damaged_real_shaped_line_keeps_every_whole_record(cut: int, junk: bytes) -> None:
    junk = junk.replace(b"\n", b"")
    data = REC2[:cut] + junk + REC
    d = dec(data)
    assert d.accounted_bytes() == len(data)
    # The whole record at the end survives whatever precedes it on the line.
    # (JSON whitespace before it, e.g. a stray CR, belongs to the record's bytes.)
    assert (
        d.entries and d.entries[-1].raw.endswith(REC) and not d.entries[-1].raw[: -len(REC)].strip(b" \t\r")
    )
    assert d.entries[-1].record == orjson.loads(REC)


# --- naming a file that is not a transcript -------------------------------------------------


def test_looks_like_names_what_the_file_is() -> None:
    pretty = orjson.dumps(
        {"sessionId": "s", "messages": [{"type": "user", "content": "hi"}]}, option=orjson.OPT_INDENT_2
    )
    cases = {
        b"": "an empty file",
        b"\0" * 300: "NUL bytes only",
        b"\x7fELF\x02\x01\x01\0\0\0": "binary data",
        bytes(range(0x80, 0x100)) * 4: "binary data",
        pretty: "pretty-printed JSON",
        b'[\n  {"a": 1}\n]\n': "a pretty-printed JSON array",
        b'[{"a": 1}, {"b": 2}]\n': "a JSON array",
        b"[1]\n[2]\n": "JSON arrays, one a line",
        b'{"type":"user","message":{"content":"cut': "an incomplete JSON object",
        b'"a string"\n42\n': "JSON values that are not objects",
        b"# Notes\n\nSome markdown.\n": "text that is not JSON",
        b"\n\n  \n": "blank lines only",
    }
    for head, want in cases.items():
        assert looks_like(head, len(head)) == want, head[:40]
    # A head cut inside a multi-byte character is still text.
    assert looks_like(("# é" * 10).encode()[:-1], 1000) == "text that is not JSON"


def test_nul_run_inside_a_record_is_the_record_read_without_it() -> None:
    # New user report 2, finding 1: 200 NULs inserted into a real line lost the record and
    # gave three diagnostics. Without the NULs the line is the record: one lenient entry.
    raw = REC2[:60] + b"\x00" * 200 + REC2[60:]
    d = dec(raw)
    assert codes(d) == [] and d.accounted_bytes() == len(raw)
    (e,) = d.entries
    assert e.raw == raw and e.lenient == ("nul-run-in-record",)
    assert e.record == orjson.loads(REC2)


def test_nuls_that_replaced_bytes_stay_pieces() -> None:
    # A torn write zero-filled: the NULs stand where bytes were; without them it is no JSON.
    raw = REC2[:60] + b"\x00" * 40 + REC2[100:]
    d = dec(raw)
    assert d.entries == [] and "nul-run" in codes(d)
    # NULs before or after a whole record, or between two, are a piece beside it as before.
    assert codes(dec(b"\x00" * 9 + REC)) == ["nul-run"]
    assert codes(dec(REC + b"\x00" * 9)) == ["nul-run"]
    two = dec(REC + b"\x00" * 9 + REC2)
    assert codes(two) == ["nul-run"] and [e.raw for e in two.entries] == [REC, REC2]
    # An object that is not shaped as a record (no record key) is not taken for one.
    assert dec(b'{"type":"text",\x00\x00"text":"x"}').entries == []


def test_json_size_is_the_compact_length_or_the_other_measure() -> None:
    from transcript_tools.model.lines import json_size

    assert json_size({"a": [1, "é"], "b": None}, -1) == len('{"a":[1,"é"],"b":null}'.encode())
    # orjson reads nesting to depth 1024 and writes 254 levels: a record it read must still
    # be measured (the caller's other measure, the line's length), not end in a traceback.
    deep = b'{"type":"user","x":' + b"[" * 1000 + b"]" * 1000 + b"}"
    d = decode_line(1, 0, deep, b"\n", is_last=False)
    assert len(d.entries) == 1 and not d.pieces
    assert json_size(d.entries[0].record, 12345) == 12345
