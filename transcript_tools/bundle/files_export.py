"""Writing a session bundle (`tt export`; the format is in `bundle.core`).

`export_session` packs one session — its transcript, everything in its ``<session-id>/``
folder (subagents and their ``.meta.json``, tool results), 2.0.x ``agent-*.jsonl`` files
that name it, and its ``file-history/<session-id>/`` backups — into a new zip file,
redacting every text member through `redact.core` unless asked not to, and writes the manifest
with the sizes and sha256 of what was stored. Symlinks and other non-regular files in the
session's folders are left out (listed in `Exported.skipped`).

`export_to` is what ``tt export`` and the API's ``export_session`` call: the bundle's
path (``<session id>.zip`` by default, or in a folder named), the export, and for a dry
run the same export made in a temporary folder and thrown away.

Invariants: streams each transcript (memory does not grow with it); never overwrites
(the archive is created exclusively and removed again if writing fails); the original
files are only read.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..edge import claude_dir as store
from ..edge.reader import iter_lines
from ..edge.writer import is_by_product, iso_now
from ..model.errors import Unreadable, UsageError, WriteFailed
from ..model.lines import Entry
from ..redact.core import collect, redact_bytes, redact_line
from .core import HISTORY_DIR, MANIFEST, TRANSCRIPT_DIR, Manifest, Member, member_problem


def tt_version() -> str:
    from .. import __version__

    return __version__


@dataclass(slots=True)
class Exported:
    path: Path
    manifest: Manifest
    skipped: list[str] = field(default_factory=list)

    @property
    def bytes(self) -> int:
        return self.path.stat().st_size


@dataclass(slots=True)
class _Facts:
    cwd: str | None = None
    versions: set[str] = field(default_factory=set)
    redactions: Counter[str] = field(default_factory=Counter)


def _regular(p: Path) -> bool:
    try:
        return stat.S_ISREG(p.lstat().st_mode)
    except OSError:
        return False


def _walk(root: Path, skipped: list[str]) -> list[Path]:
    """Regular files under ``root`` (symlinks are neither followed nor taken)."""
    out: list[Path] = []
    if not root.is_dir() or root.is_symlink():
        return out
    for dirpath, dirnames, names in os.walk(root):
        d = Path(dirpath)
        for n in list(dirnames):
            if (d / n).is_symlink():
                skipped.append(str(d / n))
                dirnames.remove(n)
        for n in sorted(names):
            p = d / n
            if _regular(p):
                out.append(p)
            else:
                skipped.append(str(p))
    return sorted(out)


def _legacy_agents(project: Path, sid: str) -> list[Path]:
    return [p for p in store.legacy_agents_by_session(project).get(sid, []) if _regular(p)]


def _observe(facts: _Facts, entries: list[Entry], main: bool) -> None:
    for e in entries:
        v = e.record.get("version")
        if isinstance(v, str) and v:
            facts.versions.add(v)
        if main and facts.cwd is None:
            c = e.record.get("cwd")
            if isinstance(c, str) and c:
                facts.cwd = c


def _transcript_chunks(path: Path, facts: _Facts, redact: bool, main: bool) -> Iterator[bytes]:
    # Redacting reads the file twice (`redact.core.collect`): a value is redacted everywhere in
    # it or nowhere, as `tt redact` does.
    known = collect(iter_lines(path)) if redact else None
    for ln in iter_lines(path):
        _observe(facts, ln.entries, main)
        if known is not None:
            rl = redact_line(ln, known)
            for f in rl.findings:
                facts.redactions[f.kind] += 1
            yield rl.chunk
        else:
            yield ln.data + ln.terminator


def _file_chunks(path: Path, facts: _Facts, redact: bool) -> Iterator[bytes]:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise Unreadable(f"{path}: cannot read ({e.strerror})") from e
    if redact:
        data, kinds = redact_bytes(data)
        facts.redactions.update(kinds)
    yield data


def _add(zf: zipfile.ZipFile, name: str, chunks: Iterator[bytes], mtime: float) -> tuple[int, str]:
    info = zipfile.ZipInfo(name, date_time=_date_time(mtime))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (stat.S_IFREG | 0o600) << 16
    h = hashlib.sha256()
    n = 0
    with zf.open(info, "w", force_zip64=True) as w:
        for c in chunks:
            h.update(c)
            n += len(c)
            w.write(c)
    return n, h.hexdigest()


def _date_time(mtime: float) -> tuple[int, int, int, int, int, int]:
    t = time.gmtime(mtime)
    return (max(1980, t.tm_year), t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec)


@dataclass(frozen=True, slots=True)
class ExportReport:
    """What `export_to` wrote (or, in a dry run, would write)."""

    #: where the bundle is (a dry run: where it would go)
    path: Path
    bytes: int
    manifest: Manifest
    skipped: list[str]
    written: bool
    #: a dry run: something is at ``path`` already (a real export would refuse to overwrite it)
    exists: bool = False


def export_to(
    ref: store.SessionRef, output: Path | None, *, redact: bool = True, dry_run: bool = False
) -> ExportReport:
    """Export the session at ``ref`` to ``output`` (default: ``<session id>.zip`` in the
    current directory; a folder: that name in it). A dry run builds the bundle whole in a
    private temporary folder, reports it and throws it away: the report is the one a real
    export gives, and nothing is left at the destination."""
    out = (output or Path(f"{ref.path.stem}.zip")).expanduser()
    if out.is_dir():
        out = out / f"{ref.path.stem}.zip"
    if not dry_run:
        e = export_session(ref, out, redact=redact)
        return ExportReport(e.path, e.bytes, e.manifest, list(e.skipped), True)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tt-export-") as scratch:
        e = export_session(ref, Path(scratch) / out.name, redact=redact)
        size = e.bytes
    return ExportReport(out, size, e.manifest, list(e.skipped), False, out.exists())


def export_session(
    ref: store.SessionRef, out: Path, *, redact: bool = True, config: Path | None = None
) -> Exported:
    """Write the bundle of the session at ``ref`` to ``out`` (which must not exist)."""
    sid = ref.session_id
    if sid is None:
        raise UsageError(f"{ref.path}: the file name is not a session id; only a session can be exported")
    config = store.config_dir() if config is None else config
    skipped: list[str] = []
    session_dir = ref.path.with_suffix("")
    # tt's own backups and quarantines are not the session (writer.by_product).
    inside = [
        (p, p.relative_to(ref.project_dir).as_posix())
        for p in _walk(session_dir, skipped)
        if not is_by_product(p.name)
    ]
    legacy = [(p, p.name) for p in _legacy_agents(ref.project_dir, sid)]
    history = [
        (p, p.name)
        for p in _walk(config / "file-history" / sid, skipped)
        if p.parent == config / "file-history" / sid
    ]
    facts = _Facts()
    members: list[Member] = []
    try:
        f = open(out, "xb")  # noqa: SIM115 (a `with` follows; opened apart for its own error message)
    except FileExistsError as e:
        raise WriteFailed(f"{out}: already exists; tt never overwrites", hint="choose another -o path") from e
    except OSError as e:
        raise WriteFailed(f"{out}: cannot create ({e.strerror})") from e
    done = False
    try:
        with f, zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:

            def put(src: Path, name: str, role: str, chunks: Iterator[bytes]) -> None:
                size, digest = _add(zf, name, chunks, src.stat().st_mtime)
                members.append(Member(name, role, size, digest))

            put(
                ref.path,
                f"{TRANSCRIPT_DIR}/{sid}.jsonl",
                "transcript",
                _transcript_chunks(ref.path, facts, redact, True),
            )
            for p, rel in inside:
                name = f"{TRANSCRIPT_DIR}/{rel}"
                if p.suffix == ".jsonl":
                    role = "subagent" if "subagents" in p.parts else "session-file"
                    put(p, name, role, _transcript_chunks(p, facts, redact, False))
                else:
                    role = "subagent-meta" if p.name.endswith(".meta.json") else "session-file"
                    put(p, name, role, _file_chunks(p, facts, redact))
            for p, rel in legacy:
                put(
                    p,
                    f"{TRANSCRIPT_DIR}/{rel}",
                    "legacy-subagent",
                    _transcript_chunks(p, facts, redact, False),
                )
            for p, rel in history:
                put(p, f"{HISTORY_DIR}/{rel}", "file-history", _file_chunks(p, facts, redact))
            for m in members:
                if member_problem(m.path, sid) is not None:
                    raise UsageError(
                        f"{m.path}: a file name tt cannot bundle ({member_problem(m.path, sid)})"
                    )
            manifest = Manifest(
                session_id=sid,
                cwd=facts.cwd,
                project_dir_name=ref.project_dir.name,
                project_dir=str(ref.project_dir),
                config_dir=str(config),
                claude_code_versions=tuple(sorted(facts.versions, key=_version_key)),
                tt_version=tt_version(),
                created=iso_now(),
                redacted=redact,
                redactions=dict(sorted(facts.redactions.items())),
                members=tuple(members),
            )
            zf.writestr(_manifest_info(), manifest.to_bytes())
        done = True
    except OSError as e:
        raise WriteFailed(f"{out}: write failed ({e.strerror})") from e
    finally:
        if not done:
            out.unlink(missing_ok=True)
    return Exported(out, manifest, skipped)


def _manifest_info() -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(MANIFEST, date_time=_date_time(time.time()))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (stat.S_IFREG | 0o600) << 16
    return info


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) if x.isdigit() else -1 for x in v.split("."))
