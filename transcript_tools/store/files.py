"""The session store's file side: push a session from a config dir, pull one into it.

`push_session` sends a session's main transcript, its subagent transcripts
(``<id>/subagents/**/agent-*.jsonl``, subpath ``subagents/…`` as the Agent SDK names them),
the other files of its ``<id>/`` folder (``.meta.json``, tool results) and its
``file-history/<id>/`` backups. Each transcript is one stream, pushed in one transaction:

- unchanged (same size and mtime as the last push): nothing is read, nothing written;
- the file starts with exactly the bytes pushed last time (SHA-256 of that prefix): only
  what follows is stored, in the same version (a torn last line pushed before is replaced
  by the whole line once the rest of it arrives);
- otherwise (``compact --in-place``, ``repair --in-place``, a hand edit): a new version
  with all the lines; the old versions stay.

Each version carries the diagnostics of `tt validate` on the file as pushed; nothing is
repaired: the bytes stored are the bytes read. The CPU work (parse, split, compress) is done
before the write lock on the state read then; under the lock the state is read again and the
work redone if it moved, so two pushes of one session at once store each line once, and
`push_many` can run several sessions' work side by side in worker processes.

`pull_session` writes a session back under a config dir (``--cwd`` picks the project folder
of another directory), as of a version or a time; it refuses to overwrite an existing file
unless ``force``, and then replaces it atomically keeping a backup.

Invariants: the pulled bytes of a version are the pushed bytes of that version; files are
only read by push, and only created (or, with force, atomically replaced) by pull.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..edge import claude_dir as cfg
from ..edge.writer import replace_atomically, write_new
from ..model.errors import AmbiguousSession, NotFound, Unreadable, UsageError, WriteFailed
from .engine import Store
from .find import lite_json
from .layers import digest
from .model import StreamInfo, StreamKey
from .prepare import prepare_lines
from .records import split_lines

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


def push_stream(store: Store, key: StreamKey, path: Path, diagnose: Diagnose | None) -> Pushed:
    st = _stat(path)
    with store.read() as cur:
        s = store.stream(cur, key)
        v = store.version(cur, s.id, s.current_version) if s and s.current_version else None
        if v is not None and v.nbytes == st.st_size and v.file_mtime_ns == st.st_mtime_ns:
            return Pushed(key, v.version, "unchanged", 0, 0)
        data = _read(path)
        # The CPU work (parse, split, compress) before the lock, on the state read now;
        # under the lock the plan is made again and the work redone only if it changed.
        plan = _plan(store, cur, s.id if s else None, v, data)
    prepared = prepare_lines(
        split_lines(data[plan[2] :]), seq=plan[1], offset=plan[2], known=store.known_blobs
    )
    diags = diagnose(path) if diagnose else None
    # Pure work out of the write lock too: other pushes wait while it is held.
    lite = lite_json(key.session_id, data) if not key.subpath else None
    sha = digest(data)
    with store.write() as cur:
        s = store.stream(cur, key, create=True)
        assert s is not None
        v = store.version(cur, s.id, s.current_version) if s.current_version else None
        again = _plan(store, cur, s.id, v, data)
        if again != plan:
            plan = again
            prepared = prepare_lines(
                split_lines(data[plan[2] :]), seq=plan[1], offset=plan[2], known=store.known_blobs
            )
        status, seq, off, torn = plan
        if status in ("new", "rewritten"):
            version = store.new_version(cur, s, "first push" if v is None else "rewritten", str(path))
        else:
            assert v is not None
            version = v.version
            if torn is not None:
                store.delete_lines_from(cur, s.id, version, torn)
        end, _ = store.insert_prepared(cur, s.id, version, prepared)
        store.set_version_state(
            cur,
            s.id,
            version,
            nbytes=len(data),
            sha256=sha,
            file_mtime_ns=st.st_mtime_ns,
            diagnostics=diags,
            lite=lite,
        )
    return Pushed(key, version, status, end - seq, len(data) - off)


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
    """``(relpath, path)`` of a session's files that are not transcripts."""
    sid = session_path.name[: -len(".jsonl")]
    streams = set(cfg.subagent_files(session_path))
    out = [
        (f"session/{p.relative_to(session_path.with_suffix('')).as_posix()}", p)
        for p in _walk(session_path.with_suffix(""))
        if p not in streams
    ]
    hist = config / "file-history" / sid
    out += [(f"file-history/{p.relative_to(hist).as_posix()}", p) for p in _walk(hist)]
    return out


def push_session(
    store: Store, session_path: Path, *, config: Path, diagnose: Diagnose | None = validate_diagnostics
) -> SessionPush:
    pk = session_path.parent.name
    sid = session_path.name[: -len(".jsonl")]
    out = SessionPush(pk, sid)
    out.streams.append(push_stream(store, StreamKey(pk, sid), session_path, diagnose))
    base = session_path.with_suffix("")
    for p in cfg.subagent_files(session_path):
        sub = p.relative_to(base).as_posix()[: -len(".jsonl")]
        out.streams.append(push_stream(store, StreamKey(pk, sid, sub), p, diagnose))
    files = side_files(session_path, config)
    if files:
        with store.write() as cur:
            for rel, p in files:
                out.files += store.put_file(cur, pk, sid, rel, _read(p), _stat(p).st_mtime_ns)
    return out


_worker_store: Store | None = None


def _push_job(job: tuple[str, Path, Path, bool]) -> SessionPush:
    global _worker_store
    url, path, config, validate = job
    if _worker_store is None:
        from ..edge.store_url import open_store

        _worker_store = open_store(url, config=config)
    return push_session(
        _worker_store, path, config=config, diagnose=validate_diagnostics if validate else None
    )


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
    per CPU up to 4, from 8 sessions on). Each process has its own connection; they contend
    only for the short write transactions, the parsing and compressing run side by side."""
    if workers is None:
        workers = min(os.cpu_count() or 1, 4) if len(paths) >= 8 else 1
    if workers <= 1:
        for p in paths:
            yield push_session(store, p, config=config, diagnose=validate_diagnostics if validate else None)
        return
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(_push_job, [(url, p, config, validate) for p in paths], chunksize=1)


# --- pull ---------------------------------------------------------------------------


def find_session(store: Store, spec: str, project_key: str | None = None) -> list[StreamInfo]:
    """The streams of the one stored session ``spec`` names (an id or a unique prefix)."""
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
            f"{spec!r} matches {len(mains)} stored sessions: {names}", hint="give more of the id"
        )
    m = mains[0].key
    return [s for s in rows if s.key.project_key == m.project_key and s.key.session_id == m.session_id]


@dataclass(frozen=True, slots=True)
class AsOf:
    version: int | None = None
    time_ms: int | None = None


def session_bytes(store: Store, streams: list[StreamInfo], as_of: AsOf) -> dict[str, bytes]:
    """subpath -> the stream's bytes as of ``as_of`` (streams that did not exist yet are left out)."""
    out: dict[str, bytes] = {}
    with store.read() as cur:
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
        for s in streams:
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
            out[s.key.subpath] = b"".join(x[4] for x in store.lines(cur, s.id, chosen, as_of_ms=limit))
    if "" not in out:
        raise NotFound(f"session {main.key.session_id} was not in the store at that time")
    return out


def pull_session(
    store: Store,
    streams: list[StreamInfo],
    *,
    config: Path,
    cwd: str | None = None,
    as_of: AsOf = AsOf(),
    force: bool = False,
) -> list[Path]:
    main = next(s for s in streams if s.key.subpath == "")
    sid = main.key.session_id
    cfg._check_id(sid)
    project = (
        config / "projects" / (cfg.project_dir_name(cfg.canonical_cwd(cwd)) if cwd else main.key.project_key)
    )
    data = session_bytes(store, streams, as_of)
    with store.read() as cur:
        side = store.files(cur, main.key.project_key, sid)
    targets: list[tuple[Path, bytes]] = []
    for sub, b in sorted(data.items()):
        targets.append((project / f"{sid}.jsonl" if sub == "" else project / sid / f"{sub}.jsonl", b))
    for rel, b, _ in side:
        kind, _, rest = rel.partition("/")
        base = project / sid if kind == "session" else config / "file-history" / sid
        targets.append((base / rest, b))
    for p, _ in targets:
        if ".." in p.relative_to(config).parts:
            raise Unreadable(f"{store.url}: stored path {p} leaves the config dir")
    clash = [p for p, _ in targets if p.exists()]
    if clash and not force:
        raise WriteFailed(
            f"{clash[0]}: already exists; tt never overwrites",
            hint="pass --force to replace it (a backup is kept)",
        )
    for p, b in targets:
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise WriteFailed(f"{p.parent}: cannot create ({e.strerror})") from e
        if p.exists():
            replace_atomically(p, [b], backup=True, force=True)
        else:
            write_new(p, [b])
    return [p for p, _ in targets]


def session_arg(spec: str) -> str:
    if not spec or "/" in spec:
        raise UsageError(f"{spec!r}: name a stored session by its id")
    return spec
