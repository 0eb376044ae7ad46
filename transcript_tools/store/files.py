"""The session store's file side: push a session from a config dir, pull one into it.

`push_session` sends a session's main transcript, its subagent transcripts
(``<id>/subagents/**/agent-*.jsonl``, subpath ``subagents/…`` as the Agent SDK names them),
the other files of its ``<id>/`` folder (``.meta.json``, tool results), its
``file-history/<id>/`` backups and, for a Claude Code 2.0.x session, the ``agent-<id>.jsonl``
subagent transcripts beside it in the project folder whose records name it (side file
``project/agent-….jsonl``: the Agent SDK has no key for them), all in one transaction. A file
in which no line is a JSON object (empty, random bytes) is refused as every command refuses
it (`NotATranscript`, exit 4); a batch notes it and pushes the rest (`transcripts`). Each
transcript is one stream:

- unchanged (same size and mtime as the last push): nothing is read, nothing written;
- the file starts with exactly the bytes pushed last time (SHA-256 of that prefix): only
  what follows is stored, in the same version (a torn last line pushed before is replaced
  by the whole line once the rest of it arrives);
- otherwise (``compact --in-place``, ``repair --in-place``, a hand edit): a new version
  with all the lines; the old versions stay.

Each version carries the diagnostics of `tt validate` on the file as pushed; nothing is
repaired: the bytes stored are the bytes read. The CPU work (parse, split, compress,
validate: `prepare_stream`) is done with no lock held, on the state read then; under the
write lock (`apply_stream`) that state is read again and the work redone if it moved, so
two pushes of one session at once store each line once. `push_many` writes a batch of
sessions per transaction (a killed push leaves whole sessions as of the last commit) from
several worker processes, which meet only in those transactions.

`pull_session` writes a session back under a config dir, as of a version or a time, each
file where Claude Code keeps it; a file there already with the same bytes is left alone (a
pull of what is there writes nothing), a file with other bytes is not overwritten unless
``force``, and then replaced atomically keeping a backup. What it writes is `plan_pull`'s plan, which ``--dry-run`` shows, so a dry
run refuses what the pull refuses (`PullPlan.check`, exit 6). ``--cwd`` puts the session in
another directory's project folder and relocates its transcripts (subagents included) as
`tt import --cwd` does, with import's code (`bundle.core.Relocation`): the ``cwd`` fields
and the paths under the old cwd, project folder and file history (2.0.x agent files
included); only the copy written changes, never the stored bytes.

Invariants: the pulled bytes of a version are the pushed bytes of that version (without
``--cwd``); files are only read by push, and only created (or, with force, atomically
replaced) by pull.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..edge import claude_dir as cfg
from ..edge.collector import gc_paused
from ..edge.writer import replace_atomically, write_new
from ..model.errors import (
    AmbiguousSession,
    NotATranscript,
    NotFound,
    Unreadable,
    UsageError,
    WriteFailed,
)
from .engine import Store
from .find import lite_json
from .layers import digest
from .model import LEGACY_AGENT, StreamInfo, StreamKey, Version
from .prepare import Parsed, Prepared, Preparer, parse_lines, raw_lines

Diagnose = Callable[[Path], list[dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class Pushed:
    key: StreamKey
    version: int
    status: str  # "new" | "appended" | "rewritten" | "unchanged"
    lines: int
    bytes: int


@dataclass(slots=True)
class SessionPush:
    project_key: str
    session_id: str
    streams: list[Pushed] = field(default_factory=list)
    files: int = 0


def validate_diagnostics(path: Path) -> list[dict[str, Any]]:
    from ..validate.files import validate_path

    return [d.to_dict() for d in validate_path(path).diagnostics]


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as e:
        raise Unreadable(f"{path}: cannot read ({e.strerror})") from e


def _stat(path: Path) -> os.stat_result:
    try:
        return path.stat()
    except OSError as e:
        raise NotFound(f"{path}: cannot stat ({e.strerror})") from e


def _plan(
    store: Store, cur: Any, stream_id: int | None, v: Any, data: bytes
) -> tuple[str, int, int, int | None]:
    """(status, seq, offset, torn seq to drop) for pushing ``data`` over version ``v``."""
    if (
        v is not None
        and v.sha256 is not None
        and len(data) >= v.nbytes
        and digest(data[: v.nbytes]) == v.sha256
    ):
        assert stream_id is not None
        last = store.last_line(cur, stream_id, v.version)
        status = "appended" if len(data) > v.nbytes else "unchanged"
        if last is not None and not last[2]:
            return status, last[0], last[1], last[0]
        return status, (last[0] + 1 if last else 0), v.nbytes, None
    return ("new" if v is None else "rewritten"), 0, 0, None


def _basis(store: Store, cur: Any, s: Any, v: Any) -> tuple[Any, ...]:
    """The store state a plan depends on: the same basis under the lock, the same plan."""
    if s is None or v is None:
        return (s.current_version if s else 0,)
    return (s.current_version, v.nbytes, v.sha256, store.last_line(cur, s.id, v.version))


@dataclass(slots=True)
class StreamJob:
    """One stream's push with its CPU work done (`prepare_stream`), ready for `apply_stream`
    under the write lock. Picklable: worker processes hand it to the one writer."""

    key: StreamKey
    path: Path
    unchanged: Pushed | None = None
    basis: tuple[Any, ...] = ()
    plan: tuple[str, int, int, int | None] = ("new", 0, 0, None)
    prepared: Prepared | None = None
    nbytes: int = 0
    sha256: str = ""
    mtime_ns: int = 0
    diagnostics: list[dict[str, Any]] | None = None
    lite: str | None = None


def prepare_stream(
    store: Store,
    key: StreamKey,
    path: Path,
    diagnose: Diagnose | None,
    pending: set[str] | None = None,
) -> StreamJob:
    """Read the file and do the CPU work (parse, split, compress, validate) on the store's
    state read now, outside any lock. ``pending``: hashes of blobs that jobs written before
    this one (in the same or an earlier transaction) carry: not encoded again, and this
    job's new blobs are added to it. With `validate_diagnostics` as ``diagnose``, each line
    is decoded once, for the rows and for the checks (`files_checks`)."""
    st = _stat(path)
    with store.read() as cur:
        s = store.stream(cur, key)
        v = store.version(cur, s.id, s.current_version) if s and s.current_version else None
        if v is not None and v.nbytes == st.st_size and v.file_mtime_ns == st.st_mtime_ns:
            return StreamJob(key, path, unchanged=Pushed(key, v.version, "unchanged", 0, 0))
        data = _read(path)
        plan = _plan(store, cur, s.id if s else None, v, data)
        basis = _basis(store, cur, s, v)
    # The pass allocates a dict per line and frees them as it goes.
    with gc_paused():
        prep = Preparer(seq=plan[1], offset=plan[2])
        if diagnose is validate_diagnostics:
            from .files_checks import Checks

            checks = Checks(path, len(data))
            checks.feed(_tap(parse_lines(data), plan[2], prep.add))
            diagnostics: list[dict[str, Any]] | None = checks.diagnostics(data)
        else:
            add = prep.add
            for _n, _o, body, term, _last, rec in _parse_objects(data, plan[2]):
                add(body, term, rec)
            diagnostics = diagnose(path) if diagnose else None
        prepared = prep.done(_known(store, pending))
    if pending is not None:
        pending.update(prepared.blobs)
    return StreamJob(
        key,
        path,
        basis=basis,
        plan=plan,
        prepared=prepared,
        nbytes=len(data),
        sha256=digest(data),
        mtime_ns=st.st_mtime_ns,
        diagnostics=diagnostics,
        lite=lite_json(key.session_id, data) if not key.subpath else None,
    )


def _tap(lines: Iterable[Parsed], start: int, add: Callable[[bytes, bytes, Any], None]) -> Iterator[Parsed]:
    """``lines`` passed on to the checks; each from byte ``start`` on (what this push
    stores) also handed to ``add`` once the checks are done with it."""
    for ln in lines:
        yield ln
        if ln[1] >= start:
            add(ln[2], ln[3], ln[5])


def _parse_objects(data: bytes, start: int) -> Iterator[Parsed]:
    # Without the checks only JSON objects need decoding (the store's columns).
    loads = orjson.loads
    error = orjson.JSONDecodeError
    for number, offset, body, term, last in raw_lines(data, start):
        rec = None
        if body[:1] == b"{":
            try:
                rec = loads(body)
            except error:
                rec = None
        yield number, offset, body, term, last, rec


def _known(store: Store, pending: set[str] | None) -> Callable[[Iterable[str]], set[str]]:
    if not pending:
        return store.known_blobs

    def known(hashes: Iterable[str]) -> set[str]:
        want = set(hashes)
        here = want & pending
        return here | store.known_blobs(want - here) if want - here else here

    return known


def apply_stream(store: Store, cur: Any, job: StreamJob, diagnose: Diagnose | None) -> Pushed:
    """Store a prepared stream inside the write transaction ``cur``. If another writer moved
    the stream since the job was prepared, the work is done again on the state now."""
    if job.unchanged is not None:
        return job.unchanged
    key = job.key
    s = store.stream(cur, key, create=True)
    assert s is not None
    v = store.version(cur, s.id, s.current_version) if s.current_version else None
    if _basis(store, cur, s, v) != job.basis:
        # Another push got there first: read the file again and plan on what is stored now
        # (this cursor's transaction sees it; the lock keeps it so).
        job = prepare_stream(store, key, job.path, diagnose)
        if job.unchanged is not None:
            return job.unchanged
    status, seq, off, torn = job.plan
    assert job.prepared is not None
    if status in ("new", "rewritten"):
        version = store.new_version(cur, s, "first push" if v is None else "rewritten", str(job.path))
    else:
        assert v is not None
        version = v.version
        if torn is not None:
            store.delete_lines_from(cur, s.id, version, torn)
    end, _ = store.insert_prepared(cur, s.id, version, job.prepared)
    store.set_version_state(
        cur,
        s.id,
        version,
        nbytes=job.nbytes,
        sha256=job.sha256,
        file_mtime_ns=job.mtime_ns,
        diagnostics=job.diagnostics,
        lite=job.lite,
    )
    return Pushed(key, version, status, end - seq, job.nbytes - off)


def push_stream(store: Store, key: StreamKey, path: Path, diagnose: Diagnose | None) -> Pushed:
    job = prepare_stream(store, key, path, diagnose)
    if job.unchanged is not None:
        return job.unchanged
    with store.write() as cur:
        return apply_stream(store, cur, job, diagnose)


def _regular(p: Path) -> bool:
    try:
        return stat.S_ISREG(p.lstat().st_mode)
    except OSError:
        return False


def _walk(root: Path) -> list[Path]:
    if not root.is_dir() or root.is_symlink():
        return []
    return sorted(p for p in root.rglob("*") if _regular(p))


def side_files(session_path: Path, config: Path) -> list[tuple[str, Path]]:
    """``(relpath, path)`` of a session's files that are not streams: the files of its
    ``<id>/`` folder but the subagent transcripts (``session/…``), its file-history backups
    (``file-history/…``) and the 2.0.x subagent transcripts beside it (``project/agent-….jsonl``,
    `legacy_agents`)."""
    sid = session_path.name[: -len(".jsonl")]
    streams = set(cfg.subagent_files(session_path))
    out = [
        (f"session/{p.relative_to(session_path.with_suffix('')).as_posix()}", p)
        for p in _walk(session_path.with_suffix(""))
        if p not in streams
    ]
    hist = config / "file-history" / sid
    out += [(f"file-history/{p.relative_to(hist).as_posix()}", p) for p in _walk(hist)]
    out += [(f"{LEGACY_AGENT}/{p.name}", p) for p in legacy_agents(session_path)]
    return out


_legacy_seen: dict[Path, tuple[int, dict[str, list[Path]]]] = {}


def legacy_agents(session_path: Path) -> list[Path]:
    """The 2.0.x ``agent-*.jsonl`` files beside ``session_path`` whose records name it
    (`claude_dir.legacy_agents_by_session`, the rule `tt export`, `stats` and `delete` use),
    regular files only. A project folder's agent files are read once while its listing
    stays the same (its mtime), not once per session of a ``push --all``."""
    if not cfg.is_session_file(session_path):
        return []
    project = session_path.parent
    try:
        mtime = project.stat().st_mtime_ns
    except OSError:
        return []
    seen = _legacy_seen.get(project)
    if seen is None or seen[0] != mtime:
        _legacy_seen.clear()  # one project at a time: push goes through them in order
        seen = _legacy_seen[project] = (mtime, cfg.legacy_agents_by_session(project))
    return [p for p in seen[1].get(session_path.name[: -len(".jsonl")], []) if _regular(p)]


def not_a_transcript(path: Path) -> NotATranscript | None:
    """The error every command gives a file that is not a transcript (empty, random bytes,
    NULs only, other JSON: `validate.files_kind.not_transcript`, the one rule), None for a
    transcript, however damaged: a damaged one is pushed as it is, with its diagnostics."""
    from ..validate.files_kind import not_transcript

    what = not_transcript(path)
    return None if what is None else NotATranscript(f"{path}: {what}; this is not a transcript")


def transcripts(paths: Iterable[Path]) -> tuple[list[Path], list[NotATranscript]]:
    """``paths`` split into the transcripts and the errors of those that are none, for a
    batch that notes a stray file and pushes the rest (as ``tt repair -a`` does)."""
    ok: list[Path] = []
    refused: list[NotATranscript] = []
    for p in paths:
        err = not_a_transcript(p)
        if err is None:
            ok.append(p)
        else:
            refused.append(err)
    return ok, refused


@dataclass(slots=True)
class SessionJob:
    """A session's streams prepared and its side files read: `apply_session` stores it."""

    project_key: str
    session_id: str
    streams: list[StreamJob]
    files: list[tuple[str, bytes, int]]

    def unchanged(self) -> bool:
        return not self.files and all(j.unchanged is not None for j in self.streams)


def project_key_of(session_path: Path) -> str:
    """The project a session is stored under: its folder's name under ``projects/``; for a
    file elsewhere (a copy in a downloads folder), the folder Claude Code gives the cwd it
    recorded (a new user's copy was stored under "newuser2", and a pull then wrote it into
    a project folder of that name), else its folder's name."""
    folder = session_path.parent
    if folder.parent.name == "projects":
        return folder.name
    from ..edge.reader import read_head_tail
    from ..model.titles import first_record_field

    head, _tail, _st = read_head_tail(session_path)
    cwd = first_record_field(head, "cwd")
    return cfg.project_dir_name(cwd) if cwd else folder.name


def prepare_session(
    store: Store,
    session_path: Path,
    *,
    config: Path,
    diagnose: Diagnose | None = validate_diagnostics,
    pending: set[str] | None = None,
) -> SessionJob:
    pk = project_key_of(session_path)
    sid = session_path.name[: -len(".jsonl")]
    jobs = [prepare_stream(store, StreamKey(pk, sid), session_path, diagnose, pending)]
    base = session_path.with_suffix("")
    for p in cfg.subagent_files(session_path):
        sub = p.relative_to(base).as_posix()[: -len(".jsonl")]
        jobs.append(prepare_stream(store, StreamKey(pk, sid, sub), p, diagnose, pending))
    files = [(rel, _read(p), _stat(p).st_mtime_ns) for rel, p in side_files(session_path, config)]
    return SessionJob(pk, sid, jobs, files)


def put_blobs(store: Store, cur: Any, jobs: list[SessionJob]) -> None:
    """The blobs of every job of a transaction, first and in hash order (`Store.put_blobs`:
    no deadlock between two PostgreSQL writers storing the same blobs)."""
    new: dict[str, tuple[str, bytes, int]] = {}
    maybe: dict[str, bytes] = {}
    for job in jobs:
        for j in job.streams:
            if j.prepared is not None:
                new.update(j.prepared.blobs)
                maybe.update(j.prepared.maybe_known)
        for _rel, data, _mtime in job.files:
            maybe[digest(data)] = data
    store.put_blobs(cur, new, maybe)


def apply_session(store: Store, cur: Any, job: SessionJob, diagnose: Diagnose | None) -> SessionPush:
    out = SessionPush(job.project_key, job.session_id)
    for j in job.streams:
        out.streams.append(apply_stream(store, cur, j, diagnose))
    for rel, data, mtime_ns in job.files:
        out.files += store.put_file(cur, job.project_key, job.session_id, rel, data, mtime_ns)
    return out


def push_session(
    store: Store, session_path: Path, *, config: Path, diagnose: Diagnose | None = validate_diagnostics
) -> SessionPush:
    """A session's transcripts and side files, in one transaction (none when nothing changed);
    `NotATranscript` (exit 4) for a file in which no line is a JSON object."""
    if (err := not_a_transcript(session_path)) is not None:
        raise err
    job = prepare_session(store, session_path, config=config, diagnose=diagnose)
    if job.unchanged():
        return apply_session(store, None, job, diagnose)
    with store.write() as cur:
        put_blobs(store, cur, [job])
        return apply_session(store, cur, job, diagnose)


_worker_store: Store | None = None


def _push_chunk(job: tuple[str, list[Path], Path, bool]) -> list[SessionPush]:
    global _worker_store
    url, paths, config, validate = job
    if _worker_store is None:
        from ..edge.store_url import open_store

        _worker_store = open_store(url, config=config)
    st = _worker_store
    diagnose = validate_diagnostics if validate else None
    pending: set[str] = set()
    jobs = (prepare_session(st, p, config=config, diagnose=diagnose, pending=pending) for p in paths)
    return list(_commit_batches(st, jobs, diagnose))


#: A batch of sessions is committed once it holds this many sessions or prepared bytes.
BATCH_SESSIONS = 64
BATCH_BYTES = 32 << 20


def _job_bytes(job: SessionJob) -> int:
    return sum(j.nbytes for j in job.streams if j.unchanged is None) + sum(len(f[1]) for f in job.files)


def _commit_batches(
    store: Store, jobs: Iterator[SessionJob], diagnose: Diagnose | None
) -> Iterator[SessionPush]:
    batch: list[SessionJob] = []
    size = 0

    def flush() -> list[SessionPush]:
        if not any(not j.unchanged() for j in batch):
            return [apply_session(store, None, j, diagnose) for j in batch]
        # The batch holds up to BATCH_BYTES of prepared rows (small objects, no cycles),
        # and writing them allocates more (as while preparing, `prepare_session`). Paused
        # here too: a first push of 400 bench sessions into SQLite took 6.25 s of CPU
        # against 6.70 s (medians of 3 interleaved; 5.31 against 5.99 s wall).
        with gc_paused(), store.write() as cur:
            put_blobs(store, cur, batch)
            return [apply_session(store, cur, j, diagnose) for j in batch]

    for job in jobs:
        batch.append(job)
        size += _job_bytes(job)
        if len(batch) >= BATCH_SESSIONS or size >= BATCH_BYTES:
            yield from flush()
            batch, size = [], 0
    if batch:
        yield from flush()


#: Sessions a worker process prepares, then writes in one transaction.
CHUNK = 16


def push_many(
    store: Store,
    url: str,
    paths: list[Path],
    *,
    config: Path,
    validate: bool = True,
    workers: int | None = None,
) -> Iterator[SessionPush]:
    """`push_session` for each path, in order, with up to ``workers`` processes (default: one
    per CPU up to 4, from 8 sessions on). Sessions are written a batch per transaction: a
    process does the CPU work (read, validate, parse, split, compress) of up to `CHUNK`
    sessions (`BATCH_SESSIONS`, `BATCH_BYTES` in one process) with no lock held, then takes
    the write lock once to insert them all, so a killed push leaves whole sessions as of the
    last commit. Each process has its own connection; results stay in the worker that
    wrote them (only the small `SessionPush` reports travel), and processes meet only in
    the write transactions."""
    diagnose = validate_diagnostics if validate else None
    if workers is None:
        workers = min(os.cpu_count() or 1, 4) if len(paths) >= 8 else 1
    if workers <= 1:
        pending: set[str] = set()
        yield from _commit_batches(
            store,
            (prepare_session(store, p, config=config, diagnose=diagnose, pending=pending) for p in paths),
            diagnose,
        )
        return
    from concurrent.futures import ProcessPoolExecutor

    chunks = [paths[i : i + CHUNK] for i in range(0, len(paths), CHUNK)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for done in pool.map(_push_chunk, [(url, c, config, validate) for c in chunks]):
            yield from done


# --- pull ---------------------------------------------------------------------------


def find_session(store: Store, spec: str, project_key: str | None = None) -> list[StreamInfo]:
    """The streams of the one stored session ``spec`` names: an id or a unique prefix, or
    ``<project>/<id>`` (as an ambiguous id's message names them: one id pushed from two
    projects, a copy of a session beside the original)."""
    if "/" in spec:
        project_key, spec = spec.split("/", 1)
    with store.read() as cur:
        rows = store.list_streams(cur, project_key)
    mains = [s for s in rows if s.key.subpath == "" and s.key.session_id == spec] or [
        s for s in rows if s.key.subpath == "" and s.key.session_id.startswith(spec)
    ]
    if not mains:
        raise NotFound(f"no session {spec!r} in {store.url}", hint="`tt store ls` lists the stored sessions")
    if len(mains) > 1:
        names = ", ".join(f"{s.key.project_key}/{s.key.session_id}" for s in mains[:5])
        raise AmbiguousSession(
            f"{spec!r} matches {len(mains)} stored sessions: {names}",
            hint="give more of the id, or name one as <project>/<id> (after `--`: project folders begin with '-')",
        )
    m = mains[0].key
    return [s for s in rows if s.key.project_key == m.project_key and s.key.session_id == m.session_id]


@dataclass(frozen=True, slots=True)
class AsOf:
    version: int | None = None
    time_ms: int | None = None


def _chosen(
    store: Store, cur: Any, streams: list[StreamInfo], as_of: AsOf
) -> list[tuple[StreamInfo, Version, int | None]]:
    """``(stream, version, time limit)`` of each stream as of ``as_of`` (the main stream
    first; streams that did not exist yet are left out)."""
    main = next(s for s in streams if s.key.subpath == "")
    t = as_of.time_ms
    if as_of.version is not None:
        mv = store.version(cur, main.id, as_of.version)
        if mv is None:
            raise NotFound(
                f"session {main.key.session_id} has no version {as_of.version}",
                hint="`tt store log` lists its versions",
            )
        t = mv.updated_ms
    out: list[tuple[StreamInfo, Version, int | None]] = []
    for s in sorted(streams, key=lambda x: x.key.subpath != ""):
        vs = store.versions(cur, s.id)
        if s is main and as_of.version is not None:
            chosen, limit = as_of.version, None
        elif t is None:
            chosen, limit = s.current_version, None
        else:
            older = [v for v in vs if v.created_ms <= t]
            if not older:
                continue
            chosen, limit = older[-1].version, t
        out.append((s, next(v for v in vs if v.version == chosen), limit))
    if not out or out[0][0] is not main:
        raise NotFound(f"session {main.key.session_id} was not in the store at that time")
    return out


def session_bytes(store: Store, streams: list[StreamInfo], as_of: AsOf) -> dict[str, bytes]:
    """subpath -> the stream's bytes as of ``as_of`` (streams that did not exist yet are left out)."""
    with store.read() as cur:
        return {
            s.key.subpath: b"".join(x[4] for x in store.lines(cur, s.id, v.version, as_of_ms=limit))
            for s, v, limit in _chosen(store, cur, streams, as_of)
        }


@dataclass(slots=True)
class PullPlan:
    """What a pull writes (`plan_pull`): the same for ``--dry-run`` and the pull itself."""

    session_id: str
    targets: list[tuple[Path, bytes]]  # (file, bytes) to write, the main transcript first
    existing: list[Path]  # targets there already with other bytes: refused without force
    cwd: str | None = None  # --cwd: the new working directory
    old_cwd: str | None = None  # the session's, as recorded (`model.session.first_cwd`)
    relocated_lines: int = 0  # transcript lines whose paths were rewritten for the new cwd
    unchanged: list[Path] = field(default_factory=list)  # there already, the same bytes: left alone

    def nothing_to_do(self) -> bool:
        """Every file is there already with the bytes it would get: nothing is written."""
        return not self.targets and bool(self.unchanged)

    def check(self, force: bool) -> None:
        """The refusal of a pull over existing files without ``force`` (exit 6)."""
        if self.existing and not force:
            raise WriteFailed(
                f"{self.existing[0]}: already exists; tt never overwrites",
                hint="pass --force to replace it (a backup is kept)",
            )


def plan_pull(
    store: Store,
    streams: list[StreamInfo],
    *,
    config: Path,
    cwd: str | None = None,
    as_of: AsOf = AsOf(),
) -> PullPlan:
    """The files a pull of ``streams`` writes under ``config``, with their bytes; reads the
    store only. With ``cwd`` the session goes to that directory's project folder and its
    transcripts (subagents included) are relocated as `tt import --cwd` relocates a bundle's
    (`bundle.core.Relocation`: the ``cwd`` fields and the paths under the old cwd, project
    folder and file-history folder); the stored bytes are not changed, only the copy."""
    main = next(s for s in streams if s.key.subpath == "")
    sid = main.key.session_id
    cfg._check_id(sid)
    new_cwd = None
    if cwd is not None:
        from ..bundle.files_import import import_cwd

        new_cwd = cfg.canonical_cwd(import_cwd(cwd))
    project = config / "projects" / (cfg.project_dir_name(new_cwd) if new_cwd else main.key.project_key)
    with store.read() as cur:
        chosen = _chosen(store, cur, streams, as_of)
        data = {
            s.key.subpath: b"".join(x[4] for x in store.lines(cur, s.id, v.version, as_of_ms=limit))
            for s, v, limit in chosen
        }
        side = store.files(cur, main.key.project_key, sid)
    # The 2.0.x subagent transcripts (side files beside the main one) are transcripts too:
    # --cwd relocates them with the others.
    legacy = {rel: b for rel, b, _ in side if rel.partition("/")[0] == LEGACY_AGENT}
    plan = PullPlan(sid, [], [], new_cwd)
    if new_cwd is not None:
        moved = {**data, **legacy}
        plan.old_cwd, plan.relocated_lines = _relocate(
            moved, chosen[0][1].source, sid, new_cwd, project, config
        )
        data = {k: moved[k] for k in data}
        legacy = {k: moved[k] for k in legacy}
    targets = [
        (project / f"{sid}.jsonl" if sub == "" else project / sid / f"{sub}.jsonl", b)
        for sub, b in sorted(data.items())
    ]
    for rel, b, _ in side:
        kind, _, rest = rel.partition("/")
        if kind == LEGACY_AGENT:
            targets.append((project / _legacy_name(store, rest), legacy[rel]))
            continue
        base = project / sid if kind == "session" else config / "file-history" / sid
        targets.append((base / rest, b))
    for p, _ in targets:
        if ".." in p.relative_to(config).parts:
            raise Unreadable(f"{store.url}: stored path {p} leaves the config dir")
    for p, b in targets:
        if _same_bytes(p, b):
            plan.unchanged.append(p)
        else:
            plan.targets.append((p, b))
    plan.existing = [p for p, _ in plan.targets if p.exists()]
    return plan


def _legacy_name(store: Store, name: str) -> str:
    """A stored 2.0.x agent file's name, checked: a plain ``agent-*.jsonl``, never another
    session's transcript or a path (the store may be anyone's)."""
    if "/" in name or not (name.startswith("agent-") and name.endswith(".jsonl")):
        raise Unreadable(f"{store.url}: stored file {LEGACY_AGENT}/{name} is not a 2.0.x subagent transcript")
    return name


def _same_bytes(p: Path, data: bytes) -> bool:
    """``p`` is a regular file holding exactly ``data`` (then a pull has nothing to write)."""
    try:
        if not stat.S_ISREG(p.lstat().st_mode) or p.stat().st_size != len(data):
            return False
        return p.read_bytes() == data
    except OSError:
        return False


def _relocate(
    data: dict[str, bytes], source: str | None, sid: str, new_cwd: str, project: Path, config: Path
) -> tuple[str | None, int]:
    """Relocate the transcripts in ``data`` (in place) with `tt import`'s own code
    (`bundle.files_import._relocate_file`, the mapping `import_bundle` builds from a bundle's
    manifest, here from the stored records and the path the version was pushed from);
    returns the old cwd and the number of lines changed."""
    import tempfile

    import orjson

    from ..bundle.core import Relocation
    from ..bundle.files_import import _relocate_file
    from ..model.session import first_cwd

    def records() -> Iterator[dict[str, Any]]:
        for ln in data[""].splitlines():
            try:
                rec = orjson.loads(ln)
            except orjson.JSONDecodeError:
                continue
            if isinstance(rec, dict):
                yield rec

    old_cwd = first_cwd(records())
    pairs: dict[str, str] = {}
    if source and Path(source).name == f"{sid}.jsonl" and Path(source).parent.parent.name == "projects":
        # Pushed from a file: its project folder and its config dir's file history move too,
        # as a bundle's manifest.project_dir and config_dir do on import.
        pairs[str(Path(source).parent)] = str(project)
        pairs[f"{Path(source).parent.parent.parent}/file-history/{sid}"] = str(config / "file-history" / sid)
    if old_cwd:
        pairs[old_cwd] = new_cwd
    reloc = Relocation(pairs)
    if not reloc:
        return old_cwd, 0
    changed = 0
    with tempfile.TemporaryDirectory(prefix="tt-pull-") as tmp:
        for i, (sub, b) in enumerate(sorted(data.items())):
            src, dst = Path(tmp) / f"{i}.jsonl", Path(tmp) / f"{i}.reloc"
            src.write_bytes(b)
            changed += _relocate_file(src, dst, reloc)
            data[sub] = dst.read_bytes()
    return old_cwd, changed


def pull_session(
    store: Store,
    streams: list[StreamInfo],
    *,
    config: Path,
    cwd: str | None = None,
    as_of: AsOf = AsOf(),
    force: bool = False,
) -> list[Path]:
    """Write the session `plan_pull` plans; refused (exit 6) over an existing file unless
    ``force``, which replaces it atomically keeping a backup."""
    return write_pull(plan_pull(store, streams, config=config, cwd=cwd, as_of=as_of), force=force)


def write_pull(plan: PullPlan, *, force: bool = False) -> list[Path]:
    plan.check(force)
    for p, b in plan.targets:
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise WriteFailed(f"{p.parent}: cannot create ({e.strerror})") from e
        if p.exists():
            replace_atomically(p, [b], backup=True, force=True)
        else:
            write_new(p, [b])
    return [p for p, _ in plan.targets]


def session_arg(spec: str) -> str:
    """A stored session's name: an id (or prefix), or ``<project>/<id>`` (`find_session`)."""
    project, _, sid = spec.rpartition("/")
    if not sid or "/" in project or (spec.count("/") == 1 and not project):
        raise UsageError(f"{spec!r}: name a stored session by its id, or as <project>/<id>")
    return spec
