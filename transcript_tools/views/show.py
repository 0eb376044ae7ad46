"""Rendering `tt show` with rich: the conversation and the ``--tree`` forest.

Roles in colour, times in local time, assistant text as markdown, thinking dimmed, tool
calls with their input and result folded to a few lines, images as placeholders,
compactions as rules with the summary in a dim panel, subagents indented under the call
that spawned them. (Paging output taller than the terminal is the CLI's: `cli.common.page_or_print`.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from rich.constrain import Constrain
from rich.padding import Padding
from rich.panel import Panel
from rich.rule import Rule
from rich.text import Text

from ..show.items import Block, Item, Marker
from ..show.text import fold, tool_input_text
from ..show.tree import ACTIVE, DEAD, DETACHED, HISTORY, Branch, Forest, Group
from .layout import DECOR_WIDTH
from .times import Clock

ROLE_STYLE = {"user": "bold cyan", "assistant": "bold magenta"}
STATUS_STYLE = {ACTIVE: "green", HISTORY: "default", DEAD: "red", DETACHED: "yellow"}


def render_items(con: Any, items: Iterable[Item], *, fold_lines: int = 6, clock: Clock | None = None) -> None:
    clock = clock or Clock()
    for it in items:
        for r in item_renderables(it, fold_lines, clock):
            con.print(Padding(r, (0, 0, 0, 4 * it.depth), expand=False) if it.depth else r)


def item_renderables(it: Item, n: int, clock: Clock) -> list[Any]:
    if isinstance(it, Marker):
        return _marker(it, n, clock)
    out: list[Any] = []
    when = clock(it.time)
    meta = " · ".join(x for x in (when, it.model or "", f"line {it.line}") if x)
    head = Text.assemble(
        ("User" if it.role == "user" else "Assistant", ROLE_STYLE[it.role]), ("  " + meta, "dim")
    )
    out.append(Text(""))
    out.append(head)
    for b in it.blocks:
        out.extend(_block(b, n, clock, it.role))
    return out


def _block(b: Block, n: int, clock: Clock, role: str) -> list[Any]:
    if b.kind == "text":
        if role == "assistant":
            # Imported here: markdown-it is a fifth of `tt search`'s start-up, which needs
            # only this module's clock.
            from rich.markdown import Markdown

            # Paragraphs not padded to the width ("left" pads each line with spaces: 4,096
            # columns to a pipe, stripped again by `page_or_print`; on a terminal, blank
            # on screen), so rich measures the text, not the padding (`_hanging` says why
            # that matters for wide text).
            return [Markdown(b.text, justify="default")]
        text, cut = fold(b.text, max(n * 4, 0) if n else 0)
        return [Text(text)] + ([Text(f"… {cut} more lines", style="dim")] if cut else [])
    if b.kind == "thinking":
        if not b.text.strip():
            # No thinking text (a block kept for its signature): a bare "✻" read as a
            # rendering fault (new-user pass).
            return [Text("✻ (thinking not recorded in the transcript)", style="dim italic")]
        text, cut = fold(b.text, n)
        return [Text("✻ " + text + (f"\n… {cut} more lines" if cut else ""), style="dim italic")]
    if b.kind == "image":
        return [Text(f"[image: {b.text}]", style="yellow")]
    if b.kind == "tool_use":
        out: list[Any] = []
        body, cut = fold(tool_input_text(b.name, b.input), n)
        first, _, rest = body.partition("\n")
        shown = Text(first)
        if rest:
            shown.append("\n" + rest, style="dim")
        if cut:
            shown.append(f"\n… {cut} more lines of input", style="dim")
        out.append(_hanging(Text(f"▶ {b.name}  ", style="bold blue"), shown))
        if b.children:
            sub = Clock()
            sub.day = clock.day
            out.append(Text(f"  ┌ subagent {b.agent}".rstrip(), style="dim"))
            for child in b.children:
                out.extend(Padding(r, (0, 0, 0, 4), expand=False) for r in item_renderables(child, n, sub))
            out.append(Text("  └ end of subagent", style="dim"))
        if b.result is not None:
            out.extend(_result(b.result.text, b.result.is_error, b.result.images, n))
        return out
    if b.kind == "tool_result":
        return _result(
            b.text,
            b.result.is_error if b.result else False,
            b.result.images if b.result else 0,
            n,
            orphan=True,
        )
    return [Text(f"[{b.kind}]", style="dim")]


def _result(text: str, is_error: bool, images: int, n: int, orphan: bool = False) -> list[Any]:
    body, cut = fold(text.rstrip(), n)
    style = "red" if is_error else "dim"
    label = ("error" if is_error else "result") + (" (its call is not shown)" if orphan else "")
    t = Text(body or "(empty)", style=style)
    if cut:
        t.append(f"\n… {cut} more lines", style="dim")
    if images:
        t.append(f"\n[{images} image(s)]", style="yellow")
    return [_hanging(Text(f"  ⎿ {label}: ", style=style), t)]


def _hanging(head: Text, body: Text) -> Any:
    """``head`` then ``body``, wrapped lines of the body indented under its start.

    The body is not justified: a cell's column justification ("left") pads every line of
    the text to the column's width (the longest line's, up to 4,096 columns to a pipe)
    before rich measures it, and rich measures a string holding a wide or non-Latin
    character (CJK, "→", "—") one character at a time in Python, several times a line:
    a CJK session took 3.3x its ASCII twin's time (`tests/show/test_show_wide.py`). Left
    unjustified, the cell is padded by a separate run of spaces (measured at once). To a
    pipe the output is the same bytes; on a terminal the same characters, the cell's
    trailing spaces written after the body's style ends instead of inside it (the same
    on screen: tt gives these texts no background colour)."""
    from rich.table import Table

    grid = Table.grid(padding=0)
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    body.justify = "default"
    grid.add_row(head, body)
    return grid


def _marker(m: Marker, n: int, clock: Clock) -> list[Any]:
    when = clock(m.time)
    if m.kind in ("compact", "microcompact"):
        rule = Rule(f"{m.text}" + (f" · {when}" if when else ""), style="yellow")
        return [Text(""), Constrain(rule, DECOR_WIDTH)]
    if m.kind == "summary":
        text, cut = fold(m.text, n * 2 if n else 0)
        panel = Panel(
            Text(text + (f"\n… {cut} more lines" if cut else ""), style="dim"),
            title="summary",
            title_align="left",
            border_style="yellow",
        )
        return [Constrain(panel, DECOR_WIDTH)]
    if m.kind == "command":
        return [Text.assemble(("› ", "bold cyan"), (m.text, "cyan"), ("  " + when, "dim"))]
    if m.kind == "command-output":
        return [Text("  " + fold(m.text, n)[0], style="dim")]
    if m.kind == "interrupted":
        return [Text(f"⏹ {m.text}", style="yellow")]
    if m.kind == "api-error":
        return [Text(f"✗ {m.text}", style="red")]
    if m.kind == "queued":
        return [Text.assemble(("User (queued)  ", "cyan"), (m.text, ""))]
    if m.kind in ("earlier", "history-joined", "history-cut"):
        return [Text(f"… {m.text}", style="dim italic")]
    return [Text(f"· {m.text}", style="dim")]


# --- the tree ---------------------------------------------------------------------------------


def render_tree(con: Any, forest: Forest, label: Callable[[Group], str]) -> None:
    for k, root in enumerate(forest.branches()):
        if k:
            con.print()
        _draw(con, root, "", label, first=True)


def _draw(con: Any, b: Branch, prefix: str, label: Callable[[Group], str], *, first: bool) -> None:
    for g in b.groups:
        style = STATUS_STYLE[g.status]
        dot = "✗" if g.status == DEAD else "●" if g.status == ACTIVE else "○"
        con.print(Text(prefix) + Text.from_markup(f"[{style}]{dot} {label(g)}[/]"))
    forks = b.forks
    for k, f in enumerate(forks):
        if f.link == "compaction":
            con.print(Text(prefix) + Text("── compacted ──", style="yellow"))
            _draw(con, f, prefix, label, first=False)
            continue
        last = k == len(forks) - 1
        tag = {DEAD: "dead branch", DETACHED: "detached", ACTIVE: "active", HISTORY: "history"}[f.status]
        con.print(
            Text(prefix) + Text.from_markup(f"{'└' if last else '├'}─┬ [{STATUS_STYLE[f.status]}]{tag}[/]")
        )
        _draw(con, f, prefix + ("  " if last else "│ ") + "│ ", label, first=False)
