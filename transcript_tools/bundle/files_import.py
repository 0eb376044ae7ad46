"""Reading a session bundle (`tt import`; the format is in `bundle.core`).

`import_bundle` checks an archive before it extracts a byte: the member count, every
name (`bundle.core.member_problem`), that every member is a regular file (no symlink, device
or folder entry), the declared sizes against `bundle.core.Limits`, and that the members are
exactly those the manifest lists. It refuses a session id that exists already. Then it
extracts into a staging folder inside the config dir, reading each member with a bound
(a member that inflates past its declared size is refused) and checking its sha256;
relocates the transcripts' paths (`bundle.core.Relocation`) from the bundle's cwd to the new
one, writing untouched lines byte for byte; and moves everything into place, the main
transcript last, never over an existing file (``os.link``). On any failure what this run
created is removed again.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..edge import claude_dir as store
from ..edge.reader import iter_lines
from ..edge.writer import undo_created
from ..model.errors import NotFound, Unreadable, WriteFailed
from ..model.wire import dumps_lenient
from .core import (
    HISTORY_DIR,
    MANIFEST,
    TRANSCRIPT_DIR,
    Limits,
    Manifest,
    Member,
    Relocation,
    member_problem,
    parse_manifest,
)

_CHUNK = 1 << 20


@dataclass(slots=True)
class Imported:
    manifest: Manifest
    session_id: str
    path: Path  # the main transcript where it now lives
    cwd: str
    files: list[Path]
    relocated_lines: int


def _refuse(archive: Path, what: str, *, limit: bool = False) -> Unreadable:
    """``limit``: refused for a size or count past a limit, which may be the caller's own
    (`--max-bytes`): the bundle may be fine (a new user's was told it was unsafe)."""
    hint = (
        "nothing was extracted; raise --max-bytes if the bundle is yours"
        if limit
        else "the archive is unsafe or damaged; nothing was extracted from it"
    )
    return Unreadable(f"refusing {archive}: {what}", hint=hint)


def _check_directory(archive: Path, zf: zipfile.ZipFile, limits: Limits) -> dict[str, zipfile.ZipInfo]:
    infos = zf.infolist()
    if len(infos) > limits.members:
        raise _refuse(archive, f"{len(infos)} members, past the limit of {limits.members}")
    by_name: dict[str, zipfile.ZipInfo] = {}
    total = 0
    for info in infos:
        name = info.filename
        if name in by_name:
            raise _refuse(archive, f"member {name!r} appears twice")
        mode = info.external_attr >> 16
        kind = stat.S_IFMT(mode)
        if info.is_dir() or kind == stat.S_IFDIR:
            raise _refuse(archive, f"member {name!r} is a folder entry (a bundle holds files only)")
        if kind == stat.S_IFLNK:
            raise _refuse(archive, f"member {name!r} is a symbolic link")
        if kind not in (0, stat.S_IFREG):
            raise _refuse(archive, f"member {name!r} is a device or special file")
        if info.flag_bits & 0x1:
            raise _refuse(archive, f"member {name!r} is encrypted")
        if info.file_size > limits.member_bytes:
            raise _refuse(
                archive,
                f"member {name!r} is {info.file_size} bytes, past the limit of {limits.member_bytes}",
                limit=True,
            )
        total += info.file_size
        by_name[name] = info
    if total > limits.total_bytes:
        raise _refuse(
            archive, f"{total} bytes uncompressed, past the limit of {limits.total_bytes}", limit=True
        )
    # Names are checked (for escapes) before the manifest is even read.
    for name in by_name:
        if name.startswith("/") or ".." in name.split("/") or "\\" in name:
            raise _refuse(
                archive,
                f"member {name!r}: {member_problem(name, '') or 'a path that escapes the target folder'}",
            )
    return by_name


def _read(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, archive: Path, limit: int, sink: IO[bytes] | None = None
) -> tuple[bytes, str]:
    """A member's bytes (or streamed to ``sink``), never more than ``limit``; its sha256."""
    h = hashlib.sha256()
    got: list[bytes] = []
    n = 0
    try:
        with zf.open(info) as r:
            while chunk := r.read(_CHUNK):
                n += len(chunk)
                if n > limit:
                    raise _refuse(archive, f"member {info.filename!r} inflates past its declared size")
                h.update(chunk)
                if sink is None:
                    got.append(chunk)
                else:
                    sink.write(chunk)
    except (zipfile.BadZipFile, EOFError, ValueError, NotImplementedError) as e:
        raise _refuse(archive, f"member {info.filename!r} is damaged ({e})") from e
    return b"".join(got), h.hexdigest()


def read_manifest(archive: Path, *, limits: Limits = Limits()) -> Manifest:
    """Open a bundle, check its directory and return its manifest (extracts nothing)."""
    with _open_zip(archive) as zf:
        return _checked_manifest(archive, zf, limits)[0]


def _open_zip(archive: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(archive)
    except FileNotFoundError as e:
        raise NotFound(f"{archive}: no such file") from e
    except (zipfile.BadZipFile, OSError) as e:
        raise Unreadable(
            f"{archive}: not a zip archive ({e})", hint="give a bundle written by `tt export`"
        ) from e


def _checked_manifest(
    archive: Path, zf: zipfile.ZipFile, limits: Limits
) -> tuple[Manifest, dict[str, zipfile.ZipInfo]]:
    by_name = _check_directory(archive, zf, limits)
    info = by_name.get(MANIFEST)
    if info is None:
        raise _refuse(archive, "no manifest.json")
    if info.file_size > limits.manifest_bytes:
        raise _refuse(archive, "manifest.json is too large")
    data, _ = _read(zf, info, archive, limits.manifest_bytes)
    manifest = parse_manifest(data, str(archive))
    sid = manifest.session_id
    for name in by_name:
        problem = member_problem(name, sid)
        if problem is not None:
            raise _refuse(archive, f"member {name!r}: {problem}")
    listed = {m.path: m for m in manifest.members}
    extra = sorted(set(by_name) - set(listed) - {MANIFEST})
    missing = sorted(set(listed) - set(by_name))
    if extra or missing:
        raise _refuse(
            archive,
            f"the members do not match the manifest (not listed: {extra[:3]}, missing: {missing[:3]})",
        )
    if f"{TRANSCRIPT_DIR}/{sid}.jsonl" not in listed:
        raise _refuse(archive, "the manifest lists no main transcript")
    for m in manifest.members:
        if by_name[m.path].file_size != m.size:
            raise _refuse(
                archive, f"member {m.path!r}: size {by_name[m.path].file_size} but the manifest says {m.size}"
            )
    return manifest, by_name


def existing(sid: str, config: Path | None = None) -> list[Path]:
    """What of session ``sid`` this config dir holds already (its transcripts in any
    project, its file history): an import refuses to write over any of it."""
    return _existing(sid, store.config_dir() if config is None else config)


def _existing(sid: str, config: Path) -> list[Path]:
    found = [p for p in store.all_session_files(config / "projects") if p.name == f"{sid}.jsonl"]
    fh = config / "file-history" / sid
    if fh.exists():
        found.append(fh)
    return found


def import_cwd(cwd: str | Path | None) -> str:
    """The project folder an import goes under: ``cwd`` (``~`` expanded), else the
    current directory."""
    return os.getcwd() if cwd is None else str(Path(cwd).expanduser())


def import_bundle(
    archive: Path, cwd: str | Path, *, config: Path | None = None, limits: Limits = Limits()
) -> Imported:
    """Import the bundle at ``archive`` for a project at ``cwd`` (see module doc)."""
    config = store.config_dir() if config is None else config
    new_cwd = store.canonical_cwd(cwd)
    with _open_zip(archive) as zf:
        manifest, by_name = _checked_manifest(archive, zf, limits)
        sid = manifest.session_id
        clash = _existing(sid, config)
        if clash:
            raise WriteFailed(
                f"session {sid} exists already: {clash[0]}",
                hint="tt never overwrites; delete it first (`tt delete`) if the bundle should replace it",
            )
        project = config / "projects" / store.project_dir_name(new_cwd)
        history = config / "file-history" / sid
        pairs = {
            manifest.project_dir: str(project),
            f"{manifest.config_dir.rstrip('/')}/file-history/{sid}": str(history),
        }
        if manifest.cwd:
            pairs[manifest.cwd] = new_cwd
        reloc = Relocation(pairs)
        made: list[Path] = []
        made_dirs: list[Path] = []
        try:
            _mkdirs(config, made_dirs)
            stage = Path(tempfile.mkdtemp(prefix=".tt-import-", dir=config))
        except OSError as e:
            raise WriteFailed(f"{config}: cannot create a staging folder ({e.strerror})") from e
        done = False
        try:
            relocated, main = _extract(
                zf, archive, manifest, by_name, stage, project, history, reloc, made, made_dirs
            )
            done = True
        except OSError as e:
            raise WriteFailed(f"import into {config} failed ({e.strerror}); nothing was left behind") from e
        finally:
            if not done:  # whatever stopped us (a refusal, a write error, ^C): leave nothing
                _undo(made, made_dirs)
            shutil.rmtree(stage, ignore_errors=True)
    return Imported(manifest, sid, main, new_cwd, made, relocated)


def _extract(
    zf: zipfile.ZipFile,
    archive: Path,
    manifest: Manifest,
    by_name: dict[str, zipfile.ZipInfo],
    stage: Path,
    project: Path,
    history: Path,
    reloc: Relocation,
    made: list[Path],
    made_dirs: list[Path],
) -> tuple[int, Path]:
    """Stage and verify every member, relocate the transcripts, move all into place."""
    sid = manifest.session_id
    staged: list[tuple[Member, Path]] = []
    for i, m in enumerate(manifest.members):
        tmp = stage / f"{i}.part"
        with open(tmp, "xb") as sink:
            _, digest = _read(zf, by_name[m.path], archive, m.size, sink)
        if digest != m.sha256:
            raise _refuse(archive, f"member {m.path!r} does not match its sha256 checksum")
        staged.append((m, tmp))
    relocated = 0
    final: list[tuple[Path, Path]] = []
    for m, tmp in staged:
        dest = _destination(m.path, project, history)
        if m.path.endswith(".jsonl") and reloc:
            out = tmp.with_suffix(".reloc")
            relocated += _relocate_file(tmp, out, reloc)
            tmp = out
        final.append((tmp, dest))
    main = project / f"{sid}.jsonl"
    final.sort(key=lambda t: t[1] == main)  # the main transcript last
    for tmp, dest in final:
        _mkdirs(dest.parent, made_dirs)
        try:
            os.link(tmp, dest)  # never over an existing file
        except FileExistsError as e:
            raise WriteFailed(f"{dest}: already exists; tt never overwrites") from e
        made.append(dest)
        os.chmod(dest, 0o600)
    return relocated, main


def _destination(name: str, project: Path, history: Path) -> Path:
    parts = name.split("/")
    if parts[0] == HISTORY_DIR:
        return history / parts[1]
    return project.joinpath(*parts[1:])


def _relocate_file(src: Path, dst: Path, reloc: Relocation) -> int:
    changed = 0
    with open(dst, "xb") as out:
        for ln in iter_lines(src):
            if not ln.entries or ln.pieces:
                out.write(ln.data + ln.terminator)
                continue
            parts: list[bytes] = []
            pos = 0
            for e in ln.entries:
                new = reloc.record(e.record)
                if new is e.record:
                    continue
                start = e.offset - ln.offset
                parts.append(ln.data[pos:start])
                parts.append(dumps_lenient(new))
                pos = start + len(e.raw)
            if not parts:
                out.write(ln.data + ln.terminator)
                continue
            changed += 1
            parts.append(ln.data[pos:])
            out.write(b"".join(parts) + ln.terminator)
    return changed


def _mkdirs(d: Path, made: list[Path]) -> None:
    missing: list[Path] = []
    p = d
    while not p.exists():
        missing.append(p)
        p = p.parent
    for m in reversed(missing):
        m.mkdir(mode=0o700)
        made.append(m)


def _undo(made: list[Path], made_dirs: list[Path]) -> None:
    undo_created(made, made_dirs)
