"""`tt show` on text of wide characters: a real session whose words are written in CJK
ideographs (two terminal cells each) keeps its layout, and rich is not made to measure
the padding of every line character by character.

The session is the 2.1.332 fixture with every ASCII letter of its prompts, replies,
thinking and tool results replaced by an ideograph (`wide_copy`), so its shape (lines,
blocks, calls) is a real one. Widths are measured here with `unicodedata`, not with rich.
"""

from __future__ import annotations

import io
import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import tt
from tests.support.paths import REAL

S332 = REAL / "claude-config-2.1.332/projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
TOOL_HEAVY = REAL / "v2.1.38-tool-heavy.jsonl"  # long tool results: rich table cells

#: Each ASCII letter to its own CJK ideograph (U+4E00…): one character, two cells.
WIDE = {c: chr(0x4E00 + i) for i, c in enumerate(range(ord("a"), ord("z") + 1))} | {
    c: chr(0x4E80 + i) for i, c in enumerate(range(ord("A"), ord("Z") + 1))
}


def _wide(s: str) -> str:
    # Tags (<command-name>, <local-command-stdout>) and markers ("[Request interrupted by
    # user]") are matched by tt to tell prompts from commands: left as they are.
    return s if s.startswith(("<", "[")) else s.translate(WIDE)


def _content(c: Any) -> Any:
    if isinstance(c, str):
        return _wide(c)
    if not isinstance(c, list):
        return c
    out = []
    for b in c:
        if isinstance(b, dict):
            b = dict(b)
            kind = b.get("type")
            if kind == "text" and isinstance(b.get("text"), str):
                b["text"] = _wide(b["text"])
            elif kind == "thinking" and isinstance(b.get("thinking"), str):
                b["thinking"] = _wide(b["thinking"])
            elif kind == "tool_result":
                b["content"] = _content(b.get("content"))
        out.append(b)
    return out


def wide_copy(src: Path, dst: Path) -> list[str]:
    """Write ``src`` with the letters of its messages made wide; returns the wide texts
    of its prompts (user text that is neither a tag, a marker, a tool result nor a
    compaction's summary)."""
    prompts = []
    with open(src, encoding="utf-8") as f, open(dst, "w", encoding="utf-8") as o:
        for line in f:
            r = json.loads(line)
            msg = r.get("message")
            if isinstance(msg, dict):
                r["message"] = dict(msg, content=_content(msg.get("content")))
                c = r["message"]["content"]
                said = r.get("type") == "user" and not r.get("isMeta") and not r.get("isCompactSummary")
                if said and isinstance(c, str) and c[:1] not in "<[":
                    prompts.append(c)
            o.write(json.dumps(r, ensure_ascii=False) + "\n")
    return prompts


def cells(line: str) -> int:
    """Terminal cells of ``line``: wide and full-width characters take two."""
    return sum(
        2 if unicodedata.east_asian_width(ch) in "WF" else 0 if unicodedata.combining(ch) else 1
        for ch in line
    )


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    dst = tmp_path_factory.mktemp("wide") / S332.name
    prompts = wide_copy(S332, dst)
    assert prompts and all(any(cells(ch) == 2 for ch in p) for p in prompts)
    return dst, prompts


def test_a_wide_session_to_a_pipe_shows_every_prompt_line_whole_with_no_padding(
    wide: tuple[Path, list[str]],
) -> None:
    path, prompts = wide
    r = tt("show", "--full", str(path), width=None)  # not a terminal: nothing is wrapped
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert not [ln for ln in lines if ln != ln.rstrip()], "trailing padding reached a pipe"
    for p in prompts:
        for pl in p.rstrip().splitlines():
            assert pl.rstrip() in lines, pl


@pytest.mark.parametrize("width", [40, 61, 100])
def test_a_wide_session_fits_the_width_and_results_hang_under_their_start(
    wide: tuple[Path, list[str]], width: int
) -> None:
    path, _ = wide
    r = tt("show", "--full", "--fold", "0", str(path), width=width)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert max(cells(ln) for ln in lines) <= width
    # A result's wrapped and following lines start under the first character of its body:
    # the width of "  ⎿ result: " in spaces, never at the margin.
    hang = " " * cells("  ⎿ result: ")
    starts = [i for i, ln in enumerate(lines) if ln.startswith("  ⎿ result: ") and len(ln) > len(hang)]
    assert len(starts) >= 5
    wrapped = 0
    for i in starts:
        for nxt in lines[i + 1 :]:
            if not nxt.strip() or not nxt.startswith(hang):
                break
            wrapped += 1
    # Wide bodies wrap at this width, so continuation lines exist, and a result's lines
    # are followed only by a blank line, the next call or the next message.
    assert wrapped > len(starts)


@pytest.mark.parametrize("src", [S332, TOOL_HEAVY], ids=["2.1.332", "tool-heavy"])
def test_rich_measures_wide_text_about_once_not_its_padding(
    src: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The defect: every line of a result (a rich table cell) and of a reply (markdown) was
    padded to the console's width (4,096 columns to a pipe) before rich measured it, and
    rich measures a line holding a wide character one character at a time, several times
    over: a 7.6 MB CJK session took 6.9 s against 2.1 s for its ASCII twin (--fold 0).
    Counted here: the characters rich measures one by one, against those printed, for
    replies (markdown: the 2.1.332 session) and results (table cells: the tool-heavy one)."""
    import rich.cells

    from transcript_tools.cli.common import PIPE_HEIGHT, PIPE_WIDTH
    from transcript_tools.show.core import build
    from transcript_tools.show.files import load_for_show
    from transcript_tools.views.show import render_items

    measured = 0
    slow = rich.cells._cell_len

    def counting(text: str, unicode_version: str) -> int:
        nonlocal measured
        if not rich.cells._is_single_cell_widths(text):
            measured += len(text)
        return slow(text, unicode_version)

    monkeypatch.setattr(rich.cells, "_cell_len", counting)
    rich.cells.cached_cell_len.cache_clear()
    path = tmp_path / src.name
    wide_copy(src, path)
    shown = load_for_show(path, max_bytes=1 << 30, full=True, subagents=True)
    items = build(shown.session, full=True, verbose=False, subagents=shown.subagents)
    con = rich.console.Console(
        width=PIPE_WIDTH, height=PIPE_HEIGHT, file=io.StringIO(), highlight=False, soft_wrap=False
    )
    with con.capture() as cap:
        render_items(con, items, fold_lines=0)
    printed = len(cap.get().replace(" ", ""))
    assert printed > 5_000
    # rich measures a long line a few times (to wrap it, to crop it, as a table cell): 1.3x
    # and 3.2x the characters printed here. With each line padded to 4,096 columns before
    # it was measured: 21x and 42x.
    assert measured < 5 * printed, (measured, printed)
