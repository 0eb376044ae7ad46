"""``tt stats``: tokens, cost, turns, tools, errors and time of sessions."""

from __future__ import annotations

import click

from ..catalog.files_scope import project_dirs
from ..catalog.files_usage import many_stats, many_stats_dicts, session_stats, sessions_in
from ..edge import claude_dir as store
from ..model.errors import NotFound, UsageError
from ..validate.files_kind import split_transcripts
from .common import console, continue_option, emit_json, json_option, require_transcript
from .from_store import no_local_scope, store_option


@click.command("stats")
@click.argument("session", required=False)
@continue_option
@click.option(
    "-p", "--project", metavar="DIR", help="Every session of a project (its working directory or its folder)."
)
@click.option("-a", "--all", "all_", is_flag=True, help="Every session under the Claude config dir.")
@click.option("--no-subagents", is_flag=True, help="Leave the subagent files out.")
@store_option
@json_option
def stats_command(
    session: str | None,
    latest: bool,
    project: str | None,
    all_: bool,
    no_subagents: bool,
    as_json: bool,
    store_url: str | None = None,
) -> int:
    """Tokens by model, cost, turns, tool calls, errors, duration and compactions.

    SESSION is a path, a session id or an id prefix; without one, every session of the
    current directory's project (or --project, --all). Each API call is counted once
    (split lines, subagent copies), as ccusage counts them. With --store, SESSION is a
    stored session's id (or prefix), named <project>/<id>.jsonl.
    """
    if store_url is not None:
        no_local_scope(store_url, **{"-c": latest, "-p": project, "-a": all_})
        if session is None:
            raise UsageError("--store: name a stored session (`tt ls --store URL` lists them)")
        from ..store.files_materialise import materialised  # only with --store: 15 ms of imports

        with materialised(store_url, [session]) as m:
            return _one(m.refs[0], no_subagents, as_json)
    if session is not None or latest:
        if project is not None or all_:
            raise UsageError("give a session, or --project/--all, not both")
        return _one(store.resolve(session, latest=latest), no_subagents, as_json)
    # A binary or empty file named like a session is no session: not counted, named once.
    paths, others = split_transcripts(sessions_in(project_dirs(project, all_=all_)))
    not_transcripts = [{"path": str(p), "looks_like": what} for p, what in others]
    if not paths:
        raise NotFound(
            f"no sessions: the {len(others)} file(s) there are not transcripts ("
            + "; ".join(f"{p.name}: {what}" for p, what in others[:3])
            + ("; …" if len(others) > 3 else "")
            + ")"
        )
    if as_json:
        dicts, total = many_stats_dicts(paths, subagents=not no_subagents)
        emit_json(
            {
                "sessions": [d | {"path": str(p)} for d, p in zip(dicts, paths, strict=True)],
                "total": total.to_dict(),
                "not_transcripts": not_transcripts,
            }
        )
    else:
        from ..views.stats import render_many  # rich: only for text output

        each, total = many_stats(paths, subagents=not no_subagents)
        render_many(console(), each, paths, total, not_transcripts=others)
    return 0


def _one(ref: store.SessionRef, no_subagents: bool, as_json: bool) -> int:
    from ..catalog.files import read_row  # one session: its title (the listing's reader)

    require_transcript(ref.path)
    one = session_stats(ref.path, subagents=not no_subagents)
    row = read_row(ref.path)
    title = row.lite.title if row is not None else None
    if as_json:
        emit_json(one.to_dict() | {"path": str(ref.path), "title": title})
    else:
        from ..views.stats import render_one

        render_one(console(), one, ref.path, title)
    return 0
