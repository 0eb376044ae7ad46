"""``tt store``: sessions in a database (SQLite by default, PostgreSQL for a team).

``push`` sends sessions from the config dir (incremental; a rewritten file becomes a new
version), ``pull`` writes one back (as of a version or a time; with ``--cwd`` into another project
folder, its records' paths relocated as ``tt import --cwd`` relocates them; never over an
existing file without ``--force``, and ``--dry-run`` refuses the same), ``log`` lists a
session's versions with their diagnostics, ``ls`` the stored sessions, ``search`` their
text through the engine's full-text index (what ``tt search --store`` prints, with its
flags and exit codes: 1 when nothing matched). The store is ``--store URL``, else
``$TT_STORE``, else ``<config dir>/tt-store.sqlite3``; a URL's password is never shown.

Exit codes as everywhere: 3 no such session, 4 a damaged or foreign SQLite file, 5 an
unreachable PostgreSQL or refused credentials, 6 a file that cannot be written.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from ..edge import claude_dir as cfg
from ..model.errors import NotFound, UsageError
from ..model.ids import is_session_id
from .common import console, emit_json, json_option


def _store_option(f: Any) -> Any:
    return click.option(
        "--store",
        "store_url",
        metavar="URL",
        default=None,
        help="sqlite:///PATH or postgresql://… (default: $TT_STORE, else <config dir>/tt-store.sqlite3).",
    )(f)


def _open(url: str | None, *, create: bool = True) -> Any:
    from ..edge.store_url import open_store

    return open_store(url, config=cfg.config_dir(), create=create)


@click.group("store", invoke_without_command=False)
@json_option
@click.pass_context
def store_command(ctx: click.Context, as_json: bool) -> None:
    """Keep sessions in a database: push, pull, log, ls, search.

    Each subcommand takes --store URL and --json (`tt store --json ls` works too).
    """
    # Given before the subcommand, --json is the subcommand's (it was accepted and ignored).
    ctx.obj = {"json": as_json}


def _json(as_json: bool) -> bool:
    """The subcommand's --json, or the group's (`tt store --json ls`)."""
    ctx = click.get_current_context()
    return as_json or bool(ctx.parent is not None and (ctx.parent.obj or {}).get("json"))


@store_command.command("push")
@click.argument("session", required=False)
@click.option("-a", "--all", "all_", is_flag=True, help="Push every session of every project.")
@click.option(
    "-p", "--project", metavar="DIR", default=None, help="Push every session of this project directory."
)
@click.option("--no-validate", is_flag=True, help="Do not run tt validate's checks (no diagnostics stored).")
@_store_option
@json_option
def push(
    session: str | None,
    all_: bool,
    project: str | None,
    no_validate: bool,
    store_url: str | None,
    as_json: bool,
) -> None:
    """Send sessions to the store: only what was appended since the last push.

    A session goes with its subagents (2.0.x's agent-*.jsonl beside it included), its
    folder's other files and its file history. A file in which no line is a JSON object
    is not a transcript: named, exit 4; in --all or --project, noted and skipped.
    """
    as_json = _json(as_json)
    from ..store.files import push_many, transcripts

    if sum(x is not None for x in (session, project, all_ or None)) != 1:
        raise UsageError("name a SESSION, or give --all or --project DIR")
    strays: list[Path] = []
    if all_ or project is not None:
        from ..catalog.files import strays_in

        folders = list(cfg.all_projects()) if all_ else cfg.session_folders(project or ".")
        paths = sorted(p for d in folders for p in cfg.session_files(d))
        # Not a session's: the store keys a file by its session (new-user pass: skipped unsaid).
        strays = strays_in(folders, in_session_folders=False)  # those go with their session
    else:
        assert session is not None
        paths = [cfg.resolve(session).path]
    for p in strays:
        click.echo(
            f"tt: {p}: not a session's file (its name is no session id, or it is a subagent's whose "
            "session's file is gone): not pushed; `tt ls --hidden` lists it",
            err=True,
        )
    if not paths:
        raise NotFound("no sessions to push")
    paths, skipped = transcripts(paths)
    if session is not None and skipped:
        raise skipped[0]  # named on its own: the error tt validate gives it (exit 4)
    if session is not None and not is_session_id(paths[0].name.removesuffix(".jsonl")):
        # The store keys a session by its id, as --all passes such a file over (above);
        # named alone it was stored as session "loose" (a new user's copy). A subagent's
        # file goes with its session.
        from ..validate.files_kind import subagent_session

        owner = subagent_session(paths[0]) if paths[0].name.startswith("agent-") else None
        raise UsageError(
            f"{paths[0]}: not a session's file (its name is no session id): not pushed",
            hint=f"a subagent's transcript goes with its session: tt store push {owner}"
            if owner
            else "rename it to the session id its records carry (tt doctor FILE prints the mv)",
        )
    for e in skipped:
        # In a batch a stray file is noted and passed over, as `tt repair -a` does.
        click.echo(f"tt: {e.message}: skipped", err=True)

    from ..edge.store_url import resolve_url

    st = _open(store_url)  # the schema made here, before any worker opens the store
    url = resolve_url(store_url, cfg.config_dir())
    out: list[dict[str, Any]] = []
    for r in push_many(st, url, paths, config=cfg.config_dir(), validate=not no_validate):
        out.append(
            {
                "project": r.project_key,
                "session_id": r.session_id,
                "files": r.files,
                "streams": [
                    {
                        "subpath": s.key.subpath,
                        "version": s.version,
                        "status": s.status,
                        "lines": s.lines,
                        "bytes": s.bytes,
                    }
                    for s in r.streams
                ],
            }
        )
    if as_json:
        emit_json(
            {
                "store": _shown(st.url),
                "sessions": out,
                "skipped": [e.message for e in skipped],
                "not_pushed": [str(p) for p in strays],
            }
        )
        return
    c = console()
    changed = 0
    for o in out:
        main = o["streams"][0]
        if all(s["status"] == "unchanged" for s in o["streams"]) and not o["files"]:
            continue
        changed += 1
        subs = len(o["streams"]) - 1
        c.print(
            f"{o['session_id']}  v{main['version']} {main['status']}, +{main['lines']} lines"
            + (f", {subs} subagents" if subs else "")
            + (f", {o['files']} files" if o["files"] else ""),
            highlight=False,
        )
    c.print(f"{changed} of {len(out)} sessions changed → {_shown(st.url)}", highlight=False)


def _as_of(value: str | None) -> Any:
    from ..store.files import AsOf

    if value is None:
        return AsOf()
    if re.fullmatch(r"v?\d+", value):
        return AsOf(version=int(value.lstrip("v")))
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as e:
        raise UsageError(
            f"--as-of {value!r}: give a version number or an ISO time (2026-12-01T04:00:00Z)"
        ) from e
    if t.tzinfo is None:
        t = t.astimezone()
    return AsOf(time_ms=int(t.timestamp() * 1000))


@store_command.command("pull")
@click.argument("session")
@click.option(
    "--as-of",
    metavar="VERSION|TIME",
    default=None,
    help="A version number, or an ISO time: the session as it was stored then.",
)
@click.option(
    "--cwd",
    metavar="DIR",
    default=None,
    help="Put it in the project folder of DIR (default: the folder it was pushed from).",
)
@click.option("--force", is_flag=True, help="Replace existing files (atomically, keeping a backup).")
@click.option("--dry-run", is_flag=True, help="Show what would be written; write nothing.")
@_store_option
@json_option
def pull(
    session: str,
    as_of: str | None,
    cwd: str | None,
    force: bool,
    dry_run: bool,
    store_url: str | None,
    as_json: bool,
) -> None:
    """Write a stored session (subagents and file history included) into the config dir.

    A file there already with the stored bytes is left alone: pulling what is there
    writes nothing and says so (exit 0). With --cwd DIR it goes to DIR's project folder and its records' cwd (and the paths
    under it) are rewritten for DIR, as `tt import --cwd` does; the store is not changed.
    --dry-run writes nothing and refuses what the pull would refuse (exit 6).
    """
    as_json = _json(as_json)
    from ..store.files import find_session, plan_pull, session_arg, write_pull

    st = _open(store_url, create=False)
    streams = find_session(st, session_arg(session))
    plan = plan_pull(st, streams, config=cfg.config_dir(), cwd=cwd, as_of=_as_of(as_of))
    if dry_run:
        plan.check(force)  # the pull's own refusal: the same message and exit code
        replaced = set(plan.existing)
        if as_json:
            emit_json(
                {
                    "session_id": plan.session_id,
                    "dry_run": True,
                    "would_write": [str(p) for p, _ in plan.targets if p not in replaced],
                    "would_replace": [str(p) for p in plan.existing],
                    "unchanged": [str(p) for p in plan.unchanged],
                    "cwd": plan.cwd,
                    "old_cwd": plan.old_cwd,
                    "relocated_lines": plan.relocated_lines,
                    "written": [],
                }
            )
            return
        c = console()
        for p, b in plan.targets:
            what = "replace (keeping a .bak)" if p in replaced else "write"
            c.print(f"would {what} {p} ({len(b)} bytes)", highlight=False, soft_wrap=True)
        if plan.unchanged:
            c.print(_unchanged_note(plan), highlight=False, soft_wrap=True)
        if plan.cwd is not None:
            c.print(
                f"would rewrite {plan.relocated_lines} lines for the new cwd: {plan.old_cwd} → {plan.cwd}",
                highlight=False,
                soft_wrap=True,
            )
        c.print("dry run: nothing written", highlight=False)
        return
    written = write_pull(plan, force=force)
    if as_json:
        emit_json(
            {
                "session_id": plan.session_id,
                "written": [str(p) for p in written],
                "unchanged": [str(p) for p in plan.unchanged],
                "cwd": plan.cwd,
                "old_cwd": plan.old_cwd,
                "relocated_lines": plan.relocated_lines,
            }
        )
        return
    for p in written:
        console().print(str(p), highlight=False, soft_wrap=True)
    if plan.unchanged:
        console().print(_unchanged_note(plan), highlight=False, soft_wrap=True)


def _unchanged_note(plan: Any) -> str:
    """What a pull says of the files there already with the stored bytes (left alone)."""
    n = len(plan.unchanged)
    if plan.nothing_to_do():
        return (
            f"nothing to do: session {plan.session_id} is there already, byte for byte as stored "
            f"({n} file(s): {plan.unchanged[0]})"
        )
    return f"{n} file(s) there already, byte for byte as stored: left alone"


@store_command.command("log")
@click.argument("session")
@_store_option
@json_option
def log(session: str, store_url: str | None, as_json: bool) -> None:
    """List a stored session's versions, with the diagnostics stored with each."""
    as_json = _json(as_json)
    from ..store.files import find_session, session_arg

    st = _open(store_url, create=False)
    streams = find_session(st, session_arg(session))
    rows = []
    with st.read() as cur:
        for s in streams:
            for v in st.versions(cur, s.id):
                diags = v.diagnostics or []
                rows.append(
                    {
                        "subpath": s.key.subpath,
                        "version": v.version,
                        "current": v.version == s.current_version,
                        "created": _iso(v.created_ms),
                        "updated": _iso(v.updated_ms),
                        "reason": v.reason,
                        "bytes": v.nbytes,
                        "lines": v.nlines,
                        "sha256": v.sha256,
                        "errors": sum(1 for d in diags if d.get("severity") == "error"),
                        "warnings": sum(1 for d in diags if d.get("severity") == "warning"),
                        "diagnostics": diags,
                    }
                )
    if as_json:
        emit_json(
            {"project": streams[0].key.project_key, "session_id": streams[0].key.session_id, "versions": rows}
        )
        return
    c = console()
    for r in rows:
        codes = sorted({d["code"] for d in r["diagnostics"]})
        c.print(
            f"{r['subpath'] or 'main'}  v{r['version']}{' *' if r['current'] else ''}  {r['created']}  {r['reason']}  "
            f"{r['lines']} lines {r['bytes']} bytes  {r['errors']} errors {r['warnings']} warnings"
            + (f" ({', '.join(codes)})" if codes else ""),
            highlight=False,
            soft_wrap=True,
        )


@store_command.command("ls")
@_store_option
@json_option
def ls(store_url: str | None, as_json: bool) -> None:
    """List the stored sessions, newest first."""
    as_json = _json(as_json)
    st = _open(store_url, create=False)
    with st.read() as cur:
        rows = st.overview(cur)
    out = [
        {"project": pk, "session_id": sid, "version": v, "updated": _iso(mtime), "lines": n, "bytes": b}
        for pk, sid, v, mtime, n, b in rows
    ]
    if as_json:
        emit_json({"store": _shown(st.url), "sessions": out})
        return
    c = console()
    for o in out:
        c.print(
            f"{o['updated']}  {o['session_id']}  v{o['version']}  {o['lines']:>6} lines  {o['project']}",
            highlight=False,
            soft_wrap=True,
        )


@store_command.command("search")
@click.argument("words", nargs=-1, required=True)
@click.option("-i", "--ignore-case", "case", flag_value="insensitive", help="Ignore case.")
@click.option("-s", "--case-sensitive", "case", flag_value="sensitive", help="Match case.")
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="At most N sessions (with hits).",
)
@click.option(
    "--per-session", type=click.IntRange(min=1), default=5, show_default=True, help="Hits shown per session."
)
@click.option("--no-subagents", is_flag=True, help="Leave subagent files out.")
@_store_option
@json_option
@click.pass_context
def search(
    ctx: click.Context,
    words: tuple[str, ...],
    case: str | None,
    limit: int,
    per_session: int,
    no_subagents: bool,
    store_url: str | None,
    as_json: bool,
) -> int:
    """Search the stored sessions' text through the engine's full-text index, newest pushed
    first: what `tt search WORDS --store URL` prints (the session, its title, the match in
    context; --json the same document), from this command's store.

    The WORDS are one pattern, as `tt search "WORDS"` takes it; whole words only (the
    index's), but a pattern the index cannot see (symbols only, a CJK or Thai word in
    running text) is matched on the stored lines, the newest pushed 64 MiB. Exit 0 when something matched, 1 when nothing did.
    """
    as_json = _json(as_json)
    # One search, not two: `tt search --store` does the work (`store.find.search_store`),
    # so both print the same hits the same way and agree on the exit code.
    from ..edge.store_url import resolve_url
    from .search import search_command

    code: int = ctx.invoke(
        search_command,
        pattern=" ".join(words),
        regex=False,
        case=case,
        project=None,
        all_=False,
        limit=limit,
        per_session=per_session,
        no_subagents=no_subagents,
        as_json=as_json,
        store_url=resolve_url(store_url, cfg.config_dir()),
    )
    return code


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"


def _shown(url: str) -> str:
    from ..store.model import redacted

    return redacted(url)
