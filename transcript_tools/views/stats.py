"""Rendering `tt stats` with rich: tokens by model, the rest in a few lines, and a
small bar chart of tokens per turn."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..catalog.stats import Stats
from ..model.pricing import UNPRICED, prices_note, total_usd, usd
from .layout import DECOR_WIDTH
from .ls import short_model

if TYPE_CHECKING:
    from pathlib import Path

BAR = "█"
PARTIAL = " ▏▎▍▌▋▊▉"
#: Most rows the per-turn chart draws; more turns are grouped.
CHART_ROWS = 24


def tokens(n: int) -> str:
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            return f"{n / div:.1f}{unit}"
    return str(n)


def money(x: float | None) -> str:
    # The same words as tt chat's /cost (`pricing.usd`).
    return f"[dim]{UNPRICED}[/]" if x is None else usd(x)


def duration(s: float | None) -> str:
    if s is None:
        return "-"
    s = int(s)
    if s < 60:
        return f"{s}s"
    m, s = divmod(s, 60)
    if m < 60:
        return f"{m}m {s:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h {m:02d}m"


def models_table(st: Stats) -> Table:
    t = Table(box=None, header_style="bold", pad_edge=False)
    t.add_column("model")
    for name in ("calls", "input", "output", "cache write", "cache read", "total"):
        t.add_column(name, justify="right")
    costs = [money(u.cost) for u in st.by_model()] + [cost_cell(st)]
    t.add_column("cost", justify="right", no_wrap=True, min_width=_cells(costs))
    rows = st.by_model()
    # Two models of one short name (claude-opus-4 and claude-opus-4-20250514) keep their ids.
    shorts = Counter(short_model(u.model) for u in rows)
    for u in rows:
        k = u.tokens
        label = short_model(u.model)
        t.add_row(
            escape(label if shorts[label] == 1 else u.model),
            str(u.calls),
            tokens(k.input),
            tokens(k.output),
            tokens(k.cache_write),
            tokens(k.cache_read),
            tokens(k.total),
            money(u.cost),
        )
    k = st.tokens
    if len(st.by_model()) > 1:
        t.add_row(
            "[bold]total[/]",
            str(len(st.ledger.calls())),
            tokens(k.input),
            tokens(k.output),
            tokens(k.cache_write),
            tokens(k.cache_read),
            f"[bold]{tokens(k.total)}[/]",
            f"[bold]{cost_cell(st)}[/]",
        )
    return t


def summary_lines(st: Stats, each: list[Stats] | None = None) -> list[str]:
    """``each``: the sessions ``st`` totals; their durations add up to the total's (the time
    from the first record of one to the last of another would be no session's)."""
    out = []
    out.append(f"[dim]{escape(prices_note(st.unpriced))}[/]")
    active = f" (active {duration(st.active_ms / 1000)})" if st.active_ms else ""
    comp = f"{st.compactions}" + (f" (+{st.microcompactions} micro)" if st.microcompactions else "")
    sub_tokens = st.subagent_tokens().total
    if st.subagent_files:
        sub = f"{st.subagent_files} file(s), {tokens(sub_tokens)} tokens"
    elif sub_tokens:
        # 2.1.1x wrote a subagent's calls as progress records in the main file, with no file of its own.
        sub = f"{tokens(sub_tokens)} tokens (from progress records; no subagent files)"
    else:
        sub = "none"
    if each is None:
        took = duration(st.duration_s)
    else:
        spans = [x.duration_s for x in each if x.duration_s is not None]
        took = f"{duration(sum(spans)) if spans else '-'} in sessions"
    out.append(
        f"[bold]turns[/] {st.turns}   [bold]duration[/] {took}{active}   [bold]compactions[/] {comp}   [bold]subagents[/] {sub}"
    )
    if st.tools:
        parts = []
        for name, n in st.tools.most_common():
            err = st.tool_errors.get(name, 0)
            parts.append(f"{escape(name)} {n}" + (f" [red]({err} failed)[/]" if err else ""))
        out.append("[bold]tool calls[/] " + ", ".join(parts))
    errs = sum(st.tool_errors.values())
    out.append(
        f"[bold]errors[/] {errs} tool, {st.api_errors} API retries, {st.error_messages} API error messages"
        if errs or st.api_errors or st.error_messages
        else "[bold]errors[/] none"
    )
    if st.ledger.duplicate_copies:
        out.append(
            f"[dim]{st.ledger.duplicate_copies} subagent call(s) mirrored in agent_progress lines counted once[/]"
        )
    return out


def chart(per_turn: list[int], width: int, first: int = 1) -> list[str]:
    """Horizontal bars, one per turn (or per group of turns when there are many), labelled
    from ``first``: 0 when the first value is what came before the first prompt (a copy of
    a session's tail, a subagent's file), which is no turn (`Stats.tokens_per_turn`)."""
    if not per_turn or not any(per_turn):
        return []
    group = -(-len(per_turn) // CHART_ROWS)
    rows = []
    for i in range(0, len(per_turn), group):
        chunk = per_turn[i : i + group]
        n = i + first
        label = f"{n}" if group == 1 else f"{n}-{n + len(chunk) - 1}"
        rows.append((label, sum(chunk)))
    top = max(v for _, v in rows) or 1
    lw = max(len(lbl) for lbl, _ in rows)
    span = max(10, width - lw - 12)
    out = []
    for lbl, v in rows:
        cells = v / top * span
        full = int(cells)
        bar = BAR * full + (PARTIAL[int((cells - full) * 8)] if full < span else "")
        out.append(f"  {lbl:>{lw}} [cyan]{bar.rstrip()}[/] {tokens(v)}")
    return out


def _cells(values: list[str]) -> int:
    """The width of the widest of these cells: a cost column is never cut short, so a
    small cost keeps its digits ("$0.0012", not "$0.00…") on a narrow terminal; the
    columns beside it give way instead."""
    return max((Text.from_markup(v).cell_len for v in values), default=4)


def cost_cell(st: Stats) -> str:
    return total_usd(st.cost, bool(st.unpriced))


def render_one(con: Any, st: Stats, path: Path, title: str | None = None) -> None:
    con.print(f"[bold]{escape(st.sessions[0])}[/]  {escape(title or '')}")
    con.print(f"[dim]{escape(str(path))}[/]")
    if st.ledger.calls():
        con.print(models_table(st))
    else:
        con.print("[dim]no API calls recorded[/]")
    for line in summary_lines(st):
        con.print(line)
    per = st.tokens_per_turn()
    # One value more than the turns: the first is what came before the first prompt.
    before = len(per) > st.turns
    bars = chart(per, min(con.width, DECOR_WIDTH), 0 if before else 1)
    if bars:
        note = "main thread; 0: before the first prompt" if before else "main thread"
        con.print(f"[bold]tokens per turn[/] [dim]({note})[/]")
        for b in bars:
            con.print(b)
    _skipped(con, st)


def render_many(
    con: Any,
    each: list[Stats],
    paths: list[Path],
    total: Stats,
    *,
    not_transcripts: Sequence[tuple[Path, str]] = (),
) -> None:
    t = Table(box=None, header_style="bold", pad_edge=False)
    for name, just in (
        ("session", "left"),
        ("turns", "right"),
        ("calls", "right"),
        ("tokens", "right"),
        ("cost", "right"),
        ("duration", "right"),
    ):
        # A cost is never cut short ("$0.00…" hid $0.0012 on a narrow terminal).
        wide = {"no_wrap": True, "min_width": _cells([cost_cell(x) for x in each])} if name == "cost" else {}
        t.add_column(name, justify=just, **wide)  # type: ignore[arg-type]
    for st in sorted(each, key=lambda s: s.last or "", reverse=True):
        t.add_row(
            escape(st.sessions[0][:8]),
            str(st.turns),
            str(len(st.ledger.calls())),
            tokens(st.tokens.total),
            cost_cell(st),
            duration(st.duration_s),
        )
    con.print(t)
    con.print(f"[bold]total of {len(each)} session(s)[/]")
    # As for one session: an empty model table read as a rendering fault (new-user pass).
    con.print(models_table(total) if total.ledger.calls() else "[dim]no API calls recorded[/]")
    for line in summary_lines(total, each):
        con.print(line)
    shared = sum(len(s.ledger.calls()) for s in each) - len(total.ledger.calls())
    if shared:
        con.print(
            f"[dim]{shared} API call(s) found in more than one session file, counted once in the total[/]"
        )
    _skipped(con, total)
    for p, what in not_transcripts:
        con.print(f"[dim]{escape(str(p))}: not a transcript ({escape(what)}), not counted[/]", soft_wrap=True)


def _skipped(con: Any, st: Stats) -> None:
    for s in st.skipped[:10]:
        con.print(f"[yellow]{escape(s.path)}:{s.line} skipped ({s.code})[/]")
    if len(st.skipped) > 10:
        con.print(f"[yellow]… and {len(st.skipped) - 10} more skipped lines[/]")
