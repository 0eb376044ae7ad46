"""The disk side of `tt ls` and `tt search`: which sessions, and reading them.

`project_dirs` turns the scope the user gave (this directory's project, ``--project``,
``--all``) into project folders; a working directory's project spans the folders of
every git worktree of its repository (`claude_dir.session_folders`), as in the Agent SDK's
``list_sessions(directory=...)`` and the /resume picker. `list_sessions` reads each
session file's 64 KiB head and tail (`reader.read_head_tail`) and parses them with
`listing.parse_lite`, or, with ``check=True``, streams the whole file through the
validator for exact counts and health.

Invariants:
- Without ``check`` a session file is never read past its first and last 64 KiB (the
  ``tt ls`` speed promise: 2,000 sessions in about a second); subagent files are only
  counted (a directory listing), 2.0.x ``agent-*.jsonl`` beside them read for 4 KiB.
- A file that vanishes while listing is left out; one that cannot be read is a row with
  ``unreadable`` set. Damage never raises: it is reported in ``Row.skipped``.
- One row per session id, however many folders hold a copy: the newest of the copies
  the SDK lists, else the newest copy (what the SDK lists is what `tt ls` shows).
- `search_files` streams: a file is read in 1 MiB chunks for the raw-bytes prefilter, and
  only the lines that pass it are parsed (`search.search_lines`).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..edge import claude_dir as store
from ..edge.reader import MAX_TRANSCRIPT_READ_BYTES, iter_lines, iter_raw, read_head_tail
from ..model.errors import NotFound, Unreadable
from ..model.lines import Entry
from ..validate.core import Report
from ..validate.files_kind import not_transcript_bytes, split_transcripts
from .files_scope import LegacyAgents, agent_files
from .listing import Counts, Lite, Row, Skipped, count_entries, health_of, parse_lite, sort_rows
from .search import Matcher, SessionHits, search_lines
from .search import SkippedLine as SearchSkipped

#: From how many files on a listing is spread over processes (forking costs ~20 ms).
PARALLEL_FROM = 400


def list_sessions(
    dirs: Iterable[Path],
    *,
    check: bool = False,
    cap: int = MAX_TRANSCRIPT_READ_BYTES,
    workers: int | None = None,
    others: bool = False,
) -> list[Row]:
    """Rows for the sessions of these project folders, newest first, including those
    the Agent SDK does not list (``row.lite.hidden`` says why). With ``check`` or
    ``others``, also a row for each transcript that is no session's (`_strays`: named
    otherwise, a subagent file whose session is gone).

    ``workers``: processes to read with; by default one per CPU (up to 4) from
    `PARALLEL_FROM` files on, else this process. The work is bytes searching, which
    holds the GIL, so threads would not help.
    """
    jobs: list[tuple[Path, Counter[str], tuple[Path, ...]]] = []
    strays: list[Path] = []
    for d in dirs:
        by_session = store.legacy_agents_by_session(d)
        legacy = Counter({sid: len(paths) for sid, paths in by_session.items()})
        mains = store.session_files(d)
        # With --check a session's subagent files are checked with it, as `tt validate` checks
        # them when given the session or its folder.
        found = [(path, legacy, tuple(agent_files(path, by_session)) if check else ()) for path in mains]
        jobs.extend(found)
        if check or others:
            strays.extend(_strays(d, mains, by_session))
    if workers is None:
        workers = min(os.cpu_count() or 1, 4) if len(jobs) >= PARALLEL_FROM else 1
    if workers <= 1:
        rows = [read_row(p, check=check, cap=cap, legacy_agents=lg, agents=ag) for p, lg, ag in jobs]
    else:
        rows = _read_in_processes(jobs, workers, check=check, cap=cap)
    sessions = sort_rows(_listed_copies_first([r for r in rows if r is not None]))
    if not strays:
        return sessions
    extra = [r for r in (other_row(p, cap=cap, check=check) for p in strays) if r is not None]
    return sorted(sessions + extra, key=lambda r: r.mtime_ms, reverse=True)


def strays_in(dirs: Iterable[Path], *, in_session_folders: bool = True) -> list[Path]:
    """The transcripts of these project folders that are no session's file nor one of its
    subagents' (`_strays`): what `tt ls --hidden` lists apart and `tt store push` cannot key
    by a session. Not ``in_session_folders``: without the other files of a session's folder
    (a workflow's ``journal.jsonl``), which `tt store push` sends with the session."""
    return [
        p
        for d in dirs
        for p in _strays(d, store.session_files(d), store.legacy_agents_by_session(d), in_session_folders)
    ]


def _strays(
    project: Path, mains: list[Path], by_session: dict[str, list[Path]], in_session_folders: bool = True
) -> list[Path]:
    """The transcripts `tt validate PROJECT` checks (`claude_dir.jsonl_under`) that are
    neither one of its sessions' files (``mains``) nor one of their subagents': a file named
    otherwise (a hand-made copy), a subagent file whose session is gone. `tt ls --check` left
    them out, and with them their damage (new-user pass): they are rows of their own. A
    session's subagents are found by path (`agent_files`' ``<id>/subagents/**/agent-*.jsonl``
    and the 2.0.x ``by_session`` files), in the one walk of the folder."""
    present = {m.stem for m in mains}
    known = {str(m) for m in mains} | {
        str(a) for sid, agents in by_session.items() if sid in present for a in agents
    }
    prefix = len(str(project)) + 1
    out: list[Path] = []
    for p in store.jsonl_under(project):
        parts = p[prefix:].split("/")
        if p in known or (
            len(parts) > 1
            and parts[0] in present
            and (not in_session_folders or (parts[1] == "subagents" and parts[-1].startswith("agent-")))
        ):
            continue
        out.append(Path(p))
    return out


def other_row(path: Path, *, cap: int = MAX_TRANSCRIPT_READ_BYTES, check: bool = True) -> Row | None:
    """A `tt ls --check` (or ``--hidden``) row for a transcript that is no session (`_strays`):
    hidden from the picker (`Lite.hidden` ``name-not-an-id`` unless the lite parse has a
    reason already), named by its path in the project folder, and with ``check`` checked as
    `tt validate` checks it."""
    name = f"{path.parent.name}/{path.name}" if path.parent.name == "subagents" else path.name
    try:
        head, tail, st = read_head_tail(path)
    except NotFound:
        return None
    except Unreadable as e:
        lite = Lite(name, None, None, hidden="unreadable")
        return Row(str(path), _project_of(path), 0, 0, lite, unreadable=e.message)
    lite = parse_lite(name, head, tail, st.st_size)
    lite = replace(lite, hidden=lite.hidden or "name-not-an-id")
    if not check:
        mtime = int(st.st_mtime * 1000)
        return Row(
            str(path), _project_of(path), mtime, st.st_size, lite, 0, lite.counts, skipped=lite.skipped
        )
    report = _validated(path, cap)
    if report is None:
        return None
    return Row(
        str(path),
        _project_of(path),
        int(st.st_mtime * 1000),
        st.st_size,
        lite,
        0,
        lite.counts,
        health=health_of(report),
        errors=report.errors,
        warnings=report.warnings,
        codes=_error_codes(report),
        skipped=lite.skipped,
    )


def _project_of(path: Path) -> str:
    # <project>/<file>, or <project>/<session>/subagents/<file>
    return path.parent.parent.parent.name if path.parent.name == "subagents" else path.parent.name


def _listed_copies_first(rows: list[Row]) -> list[Row]:
    """Leave out the hidden copies of a session that has a copy the SDK lists.

    The SDK drops hidden files before it keeps the newest copy of each session id, so a
    newer copy that it hides (an empty or title-less file beside a worktree's transcript)
    must not win over the older copy it shows (`listing.sort_rows` keeps the newest).
    """
    listed = {r.session_id for r in rows if r.lite.hidden is None}
    return [r for r in rows if r.lite.hidden is None or r.session_id not in listed]


def _read_in_processes(
    jobs: list[tuple[Path, Counter[str], tuple[Path, ...]]], workers: int, *, check: bool, cap: int
) -> list[Row | None]:
    """`read_row` of each job, in order, in runs over ``workers`` processes: forked where the
    platform allows (`edge.forks`: this process reads too, and each takes the next run when
    it is free), else a `ProcessPoolExecutor`."""
    from ..edge import forks

    size = max(1, len(jobs) // (workers * 8), -(-len(jobs) // forks.MAX_TASKS))
    if forks.available():
        runs = [jobs[i : i + size] for i in range(0, len(jobs), size)]
        parts = forks.run_forked(
            lambda i: [_read_job(j, check=check, cap=cap) for j in runs[i]], len(runs), workers
        )
        return [r for part in parts for r in part]
    from concurrent.futures import ProcessPoolExecutor
    from functools import partial

    read = partial(_read_job, check=check, cap=cap)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(read, jobs, chunksize=size))


def _read_job(job: tuple[Path, Counter[str], tuple[Path, ...]], *, check: bool, cap: int) -> Row | None:
    return read_row(job[0], check=check, cap=cap, legacy_agents=job[1], agents=job[2])


def read_row(
    path: Path,
    *,
    check: bool = False,
    cap: int = MAX_TRANSCRIPT_READ_BYTES,
    legacy_agents: Counter[str] | None = None,
    agents: tuple[Path, ...] = (),
) -> Row | None:
    """One row; None when the file vanished meanwhile. With ``check``, ``agents`` (the
    session's subagent files, `agent_files`) are checked too, as `tt validate` checks them,
    and their errors are the session's (`_with_agents`)."""
    sid = path.name[:-6] if path.name.endswith(".jsonl") else path.name
    try:
        head, tail, st = read_head_tail(path)
    except NotFound:
        return None
    except Unreadable as e:
        return Row(
            str(path),
            path.parent.name,
            0,
            0,
            Lite(sid, None, None, hidden="unreadable"),
            unreadable=e.message,
        )
    lite = parse_lite(sid, head, tail, st.st_size)
    # (Only when the head holds a whole line: a session whose first line is past 64 KiB
    # cannot be told from the bytes read; it stays a session.)
    conclusive = b"\n" in head or st.st_size <= len(head)
    if not lite.counts.messages and conclusive and not_transcript_bytes(head, tail, st.st_size) is not None:
        # A file named like a session that is none (binary, empty, NULs, other JSON): listed
        # with --hidden only, as the SDK leaves it out, and not as a damaged session.
        lite = replace(lite, hidden="not-a-transcript", skipped=())
    subagents = len(store.subagent_files(path)) + (legacy_agents or Counter()).get(sid, 0)
    mtime_ms = int(st.st_mtime * 1000)
    if not check:
        return Row(
            str(path),
            path.parent.name,
            mtime_ms,
            st.st_size,
            lite,
            subagents,
            lite.counts,
            health="past-cap" if st.st_size > cap else None,
            skipped=lite.skipped,
        )
    counts, report_row = _full_check(path, st.st_size, cap)
    if agents:
        report_row = _with_agents(report_row, agents, cap)
    return Row(str(path), path.parent.name, mtime_ms, st.st_size, lite, subagents, counts, **report_row)


#: Health of a session from its files: the worst of these (a main file past the cap or no
#: transcript keeps its own health: nothing else is known of it).
_RANK = {"clean": 0, "repairable": 1, "damaged": 2}


def _with_agents(row: dict[str, Any], agents: tuple[Path, ...], cap: int) -> dict[str, Any]:
    """The main file's check (`_full_check`) with the session's subagent files' added: a
    session one of whose subagent files `tt validate` finds damaged is not clean (`tt ls
    --check` called it clean: new-user pass). Which files is ``damaged_subagents``."""
    out = dict(row)
    bad: list[str] = []
    for a in agents:
        report = _validated(a, cap)
        if report is None or (not report.errors and not report.warnings):
            continue
        out["errors"] += report.errors
        out["warnings"] += report.warnings
        if report.errors:
            bad.append(str(a))
            out["codes"] = tuple(dict.fromkeys((*out["codes"], *_error_codes(report))))
            h = health_of(report)
            if out["health"] in _RANK and _RANK.get(h, 2) > _RANK[out["health"]]:
                out["health"] = h if h in _RANK else "damaged"
    out["damaged_subagents"] = tuple(bad)
    return out


def _error_codes(report: Report) -> tuple[str, ...]:
    return tuple(dict.fromkeys(d.code for d in report.diagnostics if d.severity.value == "error"))


def _full_check(path: Path, size: int, cap: int) -> tuple[Counts, dict]:
    """One streaming pass: the checks `tt validate` runs on a session's main file (the
    settings of `validate.files.new_validator`: line, schema, chain and API families),
    and exact counts.
    The schema check was once left to `tt validate` for speed, and a new user saw
    ``clean`` here for files validate called ``schema-invalid``: a health that disagrees
    with validate's is no health (the cost, measured on the `tt ls` bench set, is in the
    README's `tt ls` paragraph)."""
    skipped: list[Skipped] = []
    counts, report = _checked(path, size, cap, skipped)
    return counts, {
        "health": health_of(report),
        "errors": report.errors,
        "warnings": report.warnings,
        "codes": _error_codes(report),
        "skipped": tuple(skipped),
    }


def _checked(path: Path, size: int, cap: int, skipped: list[Skipped] | None = None) -> tuple[Counts, Report]:
    """`tt validate`'s report of one file (its validator and its conclusion:
    `validate.files.new_validator`, `conclude`) and the file's exact counts, in one pass."""
    # Imported here: the schemas (jsonschema-rs) are for --check, not for a plain `tt ls`.
    from ..validate.files import conclude, new_validator

    v = new_validator(path, size, cap=cap)

    def entries() -> Iterator[Entry]:
        for ln in iter_lines(path):
            v.feed(ln)
            if skipped is not None:
                skipped.extend(
                    Skipped(ln.line, ln.offset + p.start, p.code) for p in ln.pieces if p.code != "blank-line"
                )
            yield from ln.entries

    counts = count_entries(entries())
    return counts, conclude(v, path, lambda start: iter_raw(path, start))


def _validated(path: Path, cap: int) -> Report | None:
    """`tt validate`'s report of ``path`` (`_checked`); None when the file went meanwhile."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return None
    try:
        return _checked(path, size, cap)[1]
    except NotFound:
        return None


# --- tt search ------------------------------------------------------------------------------

#: Bytes read at a time by the whole-file prefilter of `search_files`.
_CHUNK = 1 << 20


def search_files(
    dirs: Iterable[Path], matcher: Matcher, *, per_session: int = 5, subagents: bool = True
) -> Iterator[SessionHits]:
    """Sessions with hits, newest first, as they are found (a generator: the CLI prints
    while it searches). Files are read in 1 MiB chunks for the prefilter and parsed
    line by line only where it matched. A file named like a session that is no
    transcript (binary, other JSON: `split_transcripts`) is not searched, as `tt stats`
    does not count it: its lines were each noted as "a match could not be read"."""
    files: list[tuple[Path, bool]] = []
    for d in dirs:
        mains = store.session_files(d)
        files += [(p, False) for p in mains]
        if subagents:
            # The transcripts that are no session's (a subagent file whose session's file is
            # gone, a copy named otherwise), as `tt validate DIR` and `tt ls --hidden` read
            # them: a new user's word in one was "no matches".
            files += [(p, True) for p in _strays(d, mains, store.legacy_agents_by_session(d))]
    searched = set(split_transcripts(p for p, _ in files)[0])
    stamped = []
    for p, stray in files:
        if p not in searched:
            continue
        try:
            stamped.append((p.stat().st_mtime, p, stray))
        except FileNotFoundError:
            continue
    agents = LegacyAgents()
    for mtime, path, stray in sorted(stamped, reverse=True):
        found = SessionHits(path, None, int(mtime * 1000))
        for f, agent in [(path, None)] + (
            [(a, a.stem) for a in agents(path)] if subagents and not stray else []
        ):
            if not _file_may_match(f, matcher):
                continue
            for got in search_lines(iter_raw(f), matcher):
                if isinstance(got, SearchSkipped):
                    found.skipped.append((str(f), got))
                elif len(found.hits) < per_session:
                    found.hits.append((agent, got))
                else:
                    found.more += 1
        if found.hits or found.skipped:
            row = other_row(path, check=False) if stray else read_row(path)
            found.title = row.lite.title if row is not None else None
            yield found


def _file_may_match(path: Path, matcher: Matcher) -> bool:
    if matcher.needle is None:
        return True
    keep = 6 * len(matcher.pattern) + 16  # overlap: longer than the escaped pattern can be
    try:
        with open(path, "rb") as f:
            tail = b""
            while chunk := f.read(_CHUNK):
                if matcher.needle.search(tail + chunk):
                    return True
                tail = chunk[-keep:]
    except FileNotFoundError:
        return False
    except OSError as e:
        raise Unreadable(f"{path}: cannot read ({e.strerror})") from e
    return False
