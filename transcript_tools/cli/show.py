"""``tt show``: a session's conversation, its tree, or an export of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..edge import claude_dir as store
from ..model.errors import UsageError
from ..show.core import NotShown, build, not_shown
from ..show.files import Shown, load_for_show
from ..show.text import to_json, to_markdown
from ..show.tree import build_forest, describe
from ..store.files_materialise import materialised
from ..views.show import render_items, render_tree
from .common import (
    console,
    continue_option,
    emit_json,
    json_option,
    max_bytes_option,
    page_or_print,
    require_transcript,
)
from .from_store import no_local_scope, store_option


@click.command("show")
@click.argument("session", required=False)
@continue_option
@click.option(
    "--tree",
    is_flag=True,
    help="Draw the parentUuid forest: the active chain, dead branches (rewinds), compactions.",
)
@click.option("--full", is_flag=True, help="Follow compactions back through the whole history.")
@click.option("--markdown", "as_markdown", is_flag=True, help="Print the conversation as Markdown.")
@click.option(
    "--fold",
    "fold_lines",
    type=click.IntRange(min=0),
    default=6,
    show_default=True,
    help="Lines of tool input/output and thinking to show (0: all; --markdown: all unless given).",
)
@click.option("-v", "--verbose", is_flag=True, help="Also show meta lines, attachments and system records.")
@click.option("--no-subagents", is_flag=True, help="Do not show subagent conversations under their calls.")
@click.option(
    "--pager/--no-pager", default=None, help="Page the output (default: when it is taller than the terminal)."
)
@max_bytes_option
@store_option
@json_option
def show_command(
    session: str | None,
    latest: bool,
    tree: bool,
    full: bool,
    as_markdown: bool,
    fold_lines: int,
    verbose: bool,
    no_subagents: bool,
    pager: bool | None,
    max_bytes: int,
    as_json: bool,
    store_url: str | None = None,
) -> int:
    """Show a session's conversation: SESSION is a path, an id or an id prefix (or -c).

    By default what a resume would send (from the last compaction on); --full goes
    back through every compaction. Damaged lines are repaired in memory, as a resume
    would, and listed at the end; the file is not touched. With --store, SESSION is a
    stored session's id (or prefix), named <project>/<id>.jsonl.
    """
    if as_json and as_markdown:
        raise UsageError("give --json or --markdown, not both")
    if session is None and not latest:
        raise UsageError("name a session (a path, an id or an id prefix), or -c for the latest")
    if store_url is not None:
        no_local_scope(store_url, **{"-c": latest})
        assert session is not None
        with materialised(store_url, [session]) as m:
            return _show(
                m.refs[0],
                tree,
                full,
                as_markdown,
                fold_lines,
                verbose,
                no_subagents,
                pager,
                max_bytes,
                as_json,
            )
    return _show(
        store.resolve(session, latest=latest),
        tree,
        full,
        as_markdown,
        fold_lines,
        verbose,
        no_subagents,
        pager,
        max_bytes,
        as_json,
    )


def _show(
    ref: store.SessionRef,
    tree: bool,
    full: bool,
    as_markdown: bool,
    fold_lines: int,
    verbose: bool,
    no_subagents: bool,
    pager: bool | None,
    max_bytes: int,
    as_json: bool,
) -> int:
    require_transcript(ref.path)
    shown = load_for_show(
        ref.path, max_bytes=max_bytes, full=full or tree, subagents=not no_subagents and not tree
    )
    con = console()
    if tree:
        forest = build_forest(shown.session, sidechains=ref.path.name.startswith("agent-"))
        if as_json:
            emit_json(_tree_json(shown, forest))
            return 0
        label = _labeller(forest)

        def draw_tree(c: Any) -> None:
            render_tree(c, forest, label)
            _footer(c, shown, forest)

        page_or_print(con, draw_tree, pager=pager)
        return 0
    items = build(shown.session, full=full, verbose=verbose, subagents=shown.subagents)
    skipped = not_shown(shown.session)
    if as_json:
        emit_json(
            {
                "session": ref.session_id,
                "path": str(ref.path),
                "items": to_json(items),
                "not_shown": skipped.to_dict(),
                **_damage_json(shown),
            }
        )
        return 0
    if as_markdown:
        # An export is whole unless --fold is asked for, and headed by the session's title
        # (the one the /resume picker shows), its id beneath.
        ctx = click.get_current_context()
        whole = ctx.get_parameter_source("fold_lines") is click.core.ParameterSource.DEFAULT
        click.echo(to_markdown(items, fold_lines=0 if whole else fold_lines, title=_title(ref)), nl=False)
        _notes(console(stderr=True), shown, skipped, bool(items))
        return 0

    def draw(c: Any) -> None:
        render_items(c, items, fold_lines=fold_lines)
        _notes(c, shown, skipped, bool(items))

    page_or_print(con, draw, pager=pager)
    return 0


def _labeller(forest: Any):
    from rich.markup import escape

    from ..views.times import Clock

    clock = Clock()

    def label(g: Any) -> str:
        d = describe(forest, g)
        extra = []
        if d.replies and d.role == "user":
            extra.append(f"{d.replies} repl{'y' if d.replies == 1 else 'ies'}")
        if d.tool_calls:
            extra.append(f"{d.tool_calls} tool call(s)")
        lines = (
            f"line {d.first_line}" if d.first_line == d.last_line else f"lines {d.first_line}-{d.last_line}"
        )
        if d.sent_with is not None:
            # A line of the response on line N written in another tree: a resume sends it.
            lines += f", sent with line {d.sent_with}: same message.id"
        return f"{d.role} [dim]{clock(d.time)}[/] {escape(d.text)} [dim]({', '.join([*extra, lines])})[/]"

    return label


def _footer(con: Any, shown: Shown, forest: Any) -> None:
    dead = forest.dead_branches()
    lines = shown.session.index.line
    if dead:
        con.print(
            f"\n[red]{len(dead)} dead branch(es)[/] (left by rewinds or edits; a resume never sends them):"
        )
        for d in dead:
            at = f"after line {lines[d.fork]}" if d.fork is not None else "on a root of its own"
            span = ", ".join(str(lines[n]) for n in d.nodes) if len(d.nodes) <= 3 else ""
            span = span or f"{lines[d.nodes[0]]}-{lines[d.leaf]}"
            con.print(
                f"  [red]✗[/] {len(d.nodes)} message line(s), line{'s' if len(d.nodes) > 1 else ''} {span}, forked {at}"
            )
    else:
        con.print("\n[green]no dead branches[/]")
    # The tree draws every root; only the messages with no uuid are in none of its trees.
    _notes(con, shown, NotShown(no_uuid=not_shown(shown.session).no_uuid), True)


def _lines(lines: tuple[int, ...]) -> str:
    shown = ", ".join(map(str, lines[:8]))
    return (
        f"line {shown}"
        if len(lines) == 1
        else f"lines {shown}" + (f", … ({len(lines)} in all)" if len(lines) > 8 else "")
    )


def _skipped(con: Any, skipped: NotShown, anything: bool) -> None:
    """Say which message lines are not shown and why (`show.core.NotShown`)."""
    if skipped.no_uuid:
        n = len(skipped.no_uuid)
        if not anything:
            con.print(
                f"[yellow]no message here has a uuid: Claude Code rebuilds no conversation from this file "
                f"(a resume sends none of it); {n} message line(s) not shown ({_lines(skipped.no_uuid)})[/]",
                soft_wrap=True,
            )
        else:
            con.print(
                f"[yellow]{n} message line(s) without a uuid not shown ({_lines(skipped.no_uuid)}): "
                "Claude Code chains messages by uuid, so a resume does not send them[/]",
                soft_wrap=True,
            )
    if skipped.off_chain:
        n = len(skipped.off_chain)
        con.print(
            f"[yellow]{n} message line(s) on no chain a resume sends not shown ({_lines(skipped.off_chain)}): "
            "another root or a dead branch, which Claude Code leaves out as well; `tt show --tree` draws them[/]",
            soft_wrap=True,
        )


def _notes(con: Any, shown: Shown, skipped: NotShown | None = None, anything: bool = True) -> None:
    if skipped:
        _skipped(con, skipped, anything)
    for name, s in shown.unlinked:
        n = sum(1 for e in s.entries if e.type in ("user", "assistant"))
        what = "the compaction summarizer" if "acompact" in name else "not linked to a call"
        con.print(f"[dim]subagent {name}: {n} message line(s), {what}[/]")
    for note in shown.notes:
        con.print(f"[yellow]{note}[/]")
    for path, a in shown.actions:
        where = f"{Path(path).name}:{a.line}" if a.line is not None else Path(path).name
        con.print(f"[yellow]{where}: {a.code or a.fix} — {a.fix} in memory ({a.detail})[/]")


def _damage_json(shown: Shown) -> dict[str, Any]:
    return {
        "repaired_in_memory": [{"path": p} | a.to_dict() for p, a in shown.actions],
        "notes": shown.notes,
        "unlinked_subagents": [name for name, _ in shown.unlinked],
    }


def _tree_json(shown: Shown, forest: Any) -> dict[str, Any]:
    lines = shown.session.index.line

    def branch(b: Any) -> dict[str, Any]:
        return {
            "status": b.status,
            "link": b.link or None,
            "groups": [{"status": g.status, **describe(forest, g).to_dict()} for g in b.groups],
            "forks": [branch(f) for f in b.forks],
        }

    return {
        "path": str(shown.path),
        "trees": [branch(b) for b in forest.branches()],
        "dead_branches": [
            {
                "fork_line": lines[d.fork] if d.fork is not None else None,
                "lines": [lines[n] for n in d.nodes],
                "leaf_line": lines[d.leaf],
            }
            for d in forest.dead_branches()
        ],
        **_damage_json(shown),
    }


def _title(ref: store.SessionRef) -> str:
    from ..catalog.listing import parse_lite
    from ..edge.reader import read_head_tail

    head, tail, st = read_head_tail(ref.path)
    name = ref.path.name.removesuffix(".jsonl")
    title = parse_lite(ref.session_id or name, head, tail, st.st_size).title
    if not title:
        return ref.session_id or name
    return f"{title}\n\n`{ref.session_id}`" if ref.session_id else title
