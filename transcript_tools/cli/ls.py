"""``tt ls``: the sessions of a project (or all), newest first, from a lite read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..catalog.files import list_sessions
from ..catalog.files_scope import project_dirs
from ..model.errors import NotFound
from ..views.ls import render_rows
from .common import console, emit_json, json_option, max_bytes_option
from .from_store import store_option


@click.command("ls")
@click.option(
    "-p",
    "--project",
    metavar="DIR",
    help="A project: its working directory, or its folder (or folder name) under projects/.",
)
@click.option("-a", "--all", "all_", is_flag=True, help="Every project under the Claude config dir.")
@click.option(
    "--check",
    is_flag=True,
    help="Read each file whole: exact counts and health (clean / repairable / damaged / past-cap) from the checks `tt validate` runs.",
)
@click.option(
    "--hidden",
    is_flag=True,
    help="Also list files the Agent SDK's list_sessions leaves out (sidechain-only, no title, not named by a session id); damaged ones are always listed. `tt doctor` says what the interactive /resume picker shows.",
)
@click.option(
    "--tag", "tag", metavar="TAG", help="Only sessions with this tag (as `tt tag` and the Agent SDK set it)."
)
@click.option(
    "--title", "title", metavar="TEXT", help="Only sessions whose title contains TEXT (case-insensitive)."
)
@click.option("-n", "--limit", type=click.IntRange(min=1), help="At most N sessions.")
@max_bytes_option
@store_option
@json_option
def ls_command(
    project: str | None,
    all_: bool,
    check: bool,
    hidden: bool,
    tag: str | None,
    title: str | None,
    limit: int | None,
    max_bytes: int,
    as_json: bool,
    store_url: str | None = None,
) -> int:
    """List sessions, newest first: id, title, modified, size, messages, compactions,
    subagents, model and health.

    Titles are the ones the /resume picker shows (custom title, AI title, last prompt,
    summary, first prompt). Only the first and last 64 KiB of each file are read, so
    counts of larger files are lower bounds (N+) unless --check reads them whole;
    --check also gives each file's health, from the same checks as `tt validate` (the
    schema's too: the error count is validate's), and exits 1 when one has errors.

    On a narrow terminal the title keeps at least 20 columns: the other columns wait for
    room, in this order: project (shown from 110 columns), cmp, sub, health (without
    --check; with it, after model), size, msgs, model, modified. All of them fit in 80
    columns.
    """
    none_here = None
    if store_url is not None:
        rows, dirs = _from_store(store_url, project, check), []
    else:
        try:
            dirs = project_dirs(project, all_=all_)
        except NotFound as e:
            # A working directory (this one, or -p DIR) with no project folder is an empty
            # listing, exit 0 as for an empty project folder (found by a new user: one was
            # exit 3, the other 0). Exit 3 is for a -p that names nothing (README, exit codes).
            if all_ or (project is not None and not Path(project).expanduser().is_dir()):
                raise
            dirs, none_here = [], e
        # --hidden lists every file the SDK leaves out: also the ones that are no
        # session's file (a copy named otherwise, a subagent file whose session is gone).
        rows = list_sessions(dirs, check=check, cap=max_bytes, others=hidden)
    if tag is not None:
        rows = [r for r in rows if r.lite.tag == tag]
    if title is not None:
        needle = title.casefold()
        rows = [r for r in rows if needle in (r.lite.title or "").casefold()]
    # A damaged session is listed even when the SDK would hide it for want of a title:
    # it is the one a user comes looking for.
    listed = [r for r in rows if hidden or r.lite.hidden is None or r.damaged]
    left_out = len(rows) - len(listed)
    shown = listed[:limit]
    if as_json:
        emit_json({"sessions": [r.to_dict() for r in shown], "hidden": left_out, "checked": check})
    elif none_here is not None:
        console().print(f"[dim]{none_here.message}; {none_here.hint}[/]", soft_wrap=True)
    else:
        render_rows(
            console(),
            shown,
            hidden=left_out,
            show_project=all_ or len(dirs) > 1 or store_url is not None,
            checked=check,
        )
    # With --check, damage is a finding (exit 1), as for `tt validate`.
    return 1 if any(r.errors for r in shown) else 0


def _from_store(url: str, project: str | None, check: bool) -> list[Any]:
    """Rows of the stored sessions (`store.find.store_rows`); ``-p DIR`` picks the
    project folder DIR's sessions were pushed from."""
    from ..catalog.listing import sort_rows
    from ..edge import claude_dir as cfg
    from ..edge.store_url import open_store
    from ..model.errors import UsageError
    from ..store.find import store_rows

    if check:
        raise UsageError("--check reads files; with --store, `tt store log` shows each version's diagnostics")
    key = None
    if project is not None:
        key = project if "/" not in project else cfg.project_dir_name(cfg.canonical_cwd(project))
    return sort_rows(store_rows(open_store(url, config=cfg.config_dir(), create=False), key))
