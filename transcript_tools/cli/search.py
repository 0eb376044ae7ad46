"""``tt search``: find text across sessions (prompts, replies, tool inputs and outputs)."""

from __future__ import annotations

from collections.abc import Iterable

import click

from ..catalog.search import SessionHits, make_matcher
from ..model.errors import UsageError
from .common import console, emit_json, json_option
from .from_store import store_option


@click.command("search")
@click.argument("pattern")
@click.option("-e", "--regex", is_flag=True, help="PATTERN is a regular expression (Python syntax).")
@click.option("-i", "--ignore-case", "case", flag_value="insensitive", help="Ignore case.")
@click.option("-s", "--case-sensitive", "case", flag_value="sensitive", help="Match case.")
@click.option(
    "-p",
    "--project",
    metavar="DIR",
    help="A project (its working directory or its folder); default: this directory's.",
)
@click.option("-a", "--all", "all_", is_flag=True, help="Every project under the Claude config dir.")
@click.option("-n", "--limit", type=click.IntRange(min=1), help="At most N sessions (with hits).")
@click.option(
    "--per-session", type=click.IntRange(min=1), default=5, show_default=True, help="Hits shown per session."
)
@click.option("--no-subagents", is_flag=True, help="Leave subagent files out.")
@store_option
@json_option
def search_command(
    pattern: str,
    regex: bool,
    case: str | None,
    project: str | None,
    all_: bool,
    limit: int | None,
    per_session: int,
    no_subagents: bool,
    as_json: bool,
    store_url: str | None = None,
) -> int:
    """Search the text of sessions, newest first: the session, its title, the time and
    the match in context. Case is ignored unless PATTERN has a capital (-i, -s decide).

    With --store, the store's full-text index answers: whole words, no --regex, -p or -a;
    a pattern the index cannot see (symbols only, a CJK or Thai word in running text) is
    matched on the stored lines instead, the newest pushed 64 MiB.
    Exit 0 when something matched, 1 when nothing did.
    """
    try:
        matcher = make_matcher(pattern, regex=regex, case=case or "smart")
    except ValueError as e:
        raise UsageError(str(e)) from e
    if store_url is not None:
        if regex or project is not None or all_:
            raise UsageError("--store searches the store's index: without --regex, -p or -a")
        from ..edge import claude_dir as cfg
        from ..edge.store_url import open_store
        from ..store.find import search_store

        st = open_store(store_url, config=cfg.config_dir(), create=False)
        searched = search_store(
            st, pattern, matcher, per_session=per_session, subagents=not no_subagents, sessions=limit
        )
        found: Iterable[SessionHits] = searched
    else:
        from ..catalog.files import search_files
        from ..catalog.files_scope import project_dirs

        found = search_files(
            project_dirs(project, all_=all_), matcher, per_session=per_session, subagents=not no_subagents
        )
    sessions = []
    if not as_json:  # rich only for text: `tt search --store --json` starts without it
        from ..views.search import render_session_hits

        con = console()

    hits = 0
    for k, sh in enumerate(found):
        if limit is not None and k >= limit:
            break
        hits += len(sh.hits) + sh.more
        if as_json:
            sessions.append(sh)
        else:
            render_session_hits(con, sh)
    if as_json:
        emit_json(
            {
                "pattern": pattern,
                "regex": regex,
                "ignore_case": matcher.ignore_case,
                "sessions": [
                    {
                        "session_id": s.session_id,
                        "path": str(s.path),
                        "title": s.title,
                        "modified_ms": s.mtime_ms,
                        "hits": [h.to_dict() | {"subagent": agent} for agent, h in s.hits],
                        "more": s.more,
                        "skipped": [{"path": p, "line": x.line, "code": x.code} for p, x in s.skipped],
                    }
                    for s in sessions
                ],
            }
        )
    elif not hits:
        console(stderr=True).print("[dim]no matches[/]")
    if store_url is not None and (note := searched.note(bool(hits))) is not None:
        # How the store found them (a scan cut short, or whole words only): on stderr, as
        # "no matches", whatever the output's form.
        console(stderr=True).print(
            f"note: {note}", style="dim", soft_wrap=True, markup=False, highlight=False
        )
    return 0 if hits else 1
