"""Pass 2 of repair: the plan applied to the input's lines, in order.

`apply` yields, for each input line, the output lines it becomes (`Out`) and, when the
line is not written back as it was, one `Quarantined` record holding the whole original
line; records added by the plan follow the line they were planned after.

The input can be `DecodedLine`s (in-memory users), or raw lines as `reader.iter_raw`
yields them: then only the lines the plan touches are decoded again, so pass 2 of a file
repair runs at close to disk speed.

Invariants:
- A line the plan does not touch comes out byte for byte (data and terminator); a final
  line without a newline gets one only when a record is added after it.
- Every input line that does not come out byte for byte is quarantined whole, so output
  plus quarantine hold every input byte.
- Records kept from a rewritten line keep their exact bytes unless something in them
  changed; changed and added records are serialised as Claude Code writes them.
- Pure: no I/O.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..model.lines import DecodedLine, Entry, decode_line
from ..model.wire import dumps_lenient as dumps
from .plan import Plan
from .records import edit_record, interrupted_result
from .survey import Reason

RawLine = tuple[int, int, bytes, bytes, bool]  # as reader.iter_raw yields


@dataclass(frozen=True, slots=True)
class Out:
    """One output line: its bytes (with the newline) and, when known, its record."""

    data: bytes
    entry: Entry | None
    source: int | None  # the input line it came from; None for an added record
    verbatim: bool  # the input line's bytes, unchanged


@dataclass(frozen=True, slots=True)
class Quarantined:
    """An input line that is not in the output as it was (see `quarantine_record`)."""

    record: dict[str, Any]
    size: int


def apply(
    items: Iterable[DecodedLine | RawLine], plan: Plan, *, now: str, out_lines_before: int = 0
) -> Iterator[Out | Quarantined]:
    """``out_lines_before``: output lines already written before ``items`` (when the
    caller copies untouched stretches itself), for the quarantine's ``output_lines``."""
    touched = plan.reasons  # (a dict: membership is all that is asked of it)
    inserts = plan.inserts
    out_line = out_lines_before
    for item in items:
        if isinstance(item, DecodedLine):
            ln: DecodedLine | None = item
            number, offset, data, term = item.line, item.offset, item.data, item.terminator
            last = False
        else:
            ln = None
            number, offset, data, term, last = item
        reasons = touched.get(number)
        if reasons is None and number not in inserts:
            out_line += 1
            yield Out(data + term, ln.entries[0] if ln is not None and ln.entries else None, number, True)
            continue
        if reasons is not None and number not in inserts and all(r.code == "crlf" for r in reasons):
            # Only the line end changes: no need to decode the record again.
            out_line += 1
            yield Out(data + b"\n", ln.entries[0] if ln is not None and ln.entries else None, number, False)
            yield Quarantined(
                quarantine_record(number, offset, data + term, reasons, [out_line]), len(data) + len(term)
            )
            continue
        is_touched = reasons is not None
        if ln is None:
            ln = decode_line(number, offset, data, term, is_last=last)
        if is_touched:
            written: list[int] = []
            for k, e in enumerate(ln.entries):
                key = (number, k)
                if key in plan.drop:
                    continue
                edit = plan.edits.get(key)
                if edit is None and not e.lenient:
                    new = e
                else:
                    # Lenient records already read bad bytes / lone surrogates as U+FFFD.
                    rec = edit_record(e.record, edit) if edit is not None else e.record
                    new = Entry(e.line, e.offset, dumps(rec), rec)
                out_line += 1
                written.append(out_line)
                yield Out(new.raw + b"\n", new, number, False)
            yield Quarantined(
                quarantine_record(number, offset, data + term, plan.reasons[number], written),
                len(data) + len(term),
            )
        else:
            out_line += 1
            # Only a final line lacks a newline; a record is about to follow it.
            yield Out(data + (term or b"\n"), ln.entries[0] if ln.entries else None, number, term != b"")
        for ins in inserts.get(number, ()):
            call = ln.entries[ins.call[1]].record
            rec = interrupted_result(call, ins.tool_use_id, uuid=ins.uuid, parent=ins.parent, now=now)
            raw = dumps(rec)
            out_line += 1
            yield Out(raw + b"\n", Entry(number, offset + len(data) + len(term), raw, rec), None, False)


def quarantine_record(
    line: int, offset: int, raw: bytes, reasons: list[Reason], written: list[int]
) -> dict[str, Any]:
    """``{line, offset, length, reason, fix, reasons, output_lines, text | base64}``.

    ``raw`` is the original line, terminator included; ``text`` holds it when it is valid
    UTF-8, else ``base64`` does. ``output_lines`` are the 1-based output lines its records
    became (none when it was dropped).
    """
    first = reasons[0] if reasons else Reason(None, "rewrite")
    rec: dict[str, Any] = {
        "line": line,
        "offset": offset,
        "length": len(raw),
        "reason": first.code,
        "fix": first.fix,
        "reasons": [r.to_dict() for r in reasons],
        "output_lines": written,
    }
    try:
        rec["text"] = raw.decode("utf-8")
    except UnicodeDecodeError:
        rec["base64"] = base64.b64encode(raw).decode("ascii")
    return rec


def original_bytes(qrec: dict[str, Any]) -> bytes:
    """The input bytes a quarantine record holds."""
    if "text" in qrec:
        return str(qrec["text"]).encode("utf-8")
    return base64.b64decode(qrec["base64"])
