"""Redacting transcript files on disk (the adapter around `redact.core`).

`scan_file` streams a file and returns what `redact.core` would replace; `redact_to` writes the
redacted copy to a new file (exclusive create: never overwrites); `redact_in_place`
replaces the file atomically through `writer.replace_atomically` (temp file, fsync,
rename, ``.bak`` of the original unless ``backup=False``, refused if the file changed
meanwhile). All three stream: memory does not grow with the file's text, only with
its distinct flagged values (`redact.core.collect`).

Each reads the file twice: `redact.core.collect` first (the file's ids and secrets: a value is
redacted everywhere in the file or nowhere), then the redaction with that `Known`.

`redact_session` is the one path of ``tt redact`` and the API's ``redact_session``: the
files of a session (its subagent transcripts too, unless a file was named), each
scanned, redacted to ``output`` (Claude Code's layout, `session_out.session_outputs`)
or in place.

Invariants: lines without findings are written back byte for byte (`redact`); the
findings never carry a secret's value; OSError is translated by `reader` / `writer`;
no output is the input itself (refused before anything is written).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..edge import claude_dir as store
from ..edge.reader import iter_lines
from ..edge.session_out import first_taken, session_outputs
from ..edge.writer import replace_atomically, snapshot, write_new
from ..model.errors import UsageError, WriteFailed
from .core import Finding, collect, redact_lines
from .rules import Known


@dataclass(slots=True)
class FileResult:
    path: Path
    lines: int = 0
    changed_lines: int = 0
    findings: list[Finding] = field(default_factory=list)
    written: Path | None = None  # where the redacted copy went (None: report only)
    backup: Path | None = None

    def to_dict(self) -> dict[str, object]:
        kinds: dict[str, int] = {}
        for f in self.findings:
            kinds[f.kind] = kinds.get(f.kind, 0) + 1
        return {
            "path": str(self.path),
            "lines": self.lines,
            "changed_lines": self.changed_lines,
            "findings": [f.to_dict() for f in self.findings],
            "by_kind": dict(sorted(kinds.items())),
            "written": None if self.written is None else str(self.written),
            "backup": None if self.backup is None else str(self.backup),
        }


def _chunks(path: Path, result: FileResult, known: Known) -> Iterator[bytes]:
    for rl in redact_lines(iter_lines(path), known):
        result.lines += 1
        if rl.findings:
            result.changed_lines += 1
            result.findings.extend(rl.findings)
        yield rl.chunk


def scan_file(path: Path, known: Known | None = None) -> FileResult:
    result = FileResult(path)
    known = collect(iter_lines(path)) if known is None else known
    for _ in _chunks(path, result, known):
        pass
    return result


def redact_to(path: Path, out: Path) -> FileResult:
    """Write the redacted copy of ``path`` to ``out`` (which must not exist)."""
    result = FileResult(path)
    write_new(out, _chunks(path, result, collect(iter_lines(path))))
    result.written = out
    return result


def redact_in_place(path: Path, *, backup: bool = True, force: bool = False) -> FileResult:
    """Replace ``path`` by its redacted copy; untouched when there is nothing to redact."""
    before = snapshot(path)
    known = collect(iter_lines(path))
    found = scan_file(path, known)
    if not found.findings:
        return found
    result = FileResult(path)
    result.backup = replace_atomically(
        path, _chunks(path, result, known), expect=before, backup=backup, force=force
    )
    result.written = path
    return result


#: How the command line says to redact a file named as its own output (the API passes its own words).
SAME_INPUT_HINT = "use --in-place, or choose another -o path"


def session_files(spec: str, ref: store.SessionRef, subagents: bool) -> list[Path]:
    """The files ``spec`` (resolved to ``ref``) names: a session named by id or prefix
    covers its subagent transcripts (``subagents``); a file named by path is just that file."""
    files = [ref.path]
    if subagents and not Path(spec).expanduser().is_file():
        files += store.subagent_files(ref.path)
    return files


def redact_session(
    files: list[Path],
    *,
    output: str | None = None,
    in_place: bool = False,
    backup: bool = True,
    force: bool = False,
    hint: str = SAME_INPUT_HINT,
) -> list[FileResult]:
    """Redact ``files`` (a session's: `session_files`) to ``output``, or ``in_place``, or
    only report (neither)."""
    if output is not None:
        outs = _outputs(files, output, hint)
        results = []
        for src, dst in zip(files, outs, strict=True):
            _make_parent(dst)
            results.append(redact_to(src, dst))
            # A subagent's `.meta.json` beside its copy, as repair -o and fork -o put it
            # (README, "What tt writes"), redacted as `tt export` redacts it: its
            # description is the model's text of the call that started the subagent.
            _sidecar(src, results[-1], write_to=dst)
        return results
    if in_place:
        results = [redact_in_place(f, backup=backup, force=force) for f in files]
        for f, r in zip(files, results, strict=True):
            _sidecar(f, r, in_place=True, backup=backup)
        return results
    results = [scan_file(f) for f in files]
    for f, r in zip(files, results, strict=True):
        _sidecar(f, r)
    return results


def _sidecar(
    transcript: Path,
    result: FileResult,
    *,
    write_to: Path | None = None,
    in_place: bool = False,
    backup: bool = True,
) -> None:
    """A subagent's ``agent-<id>.meta.json`` (`fork.files.sidecar`), scanned as `tt export`
    redacts it (`redact.core.redact_bytes`): its findings join the subagent's ``result``
    (``where`` names the sidecar); written redacted beside ``write_to``, or replaced
    atomically ``in_place`` when it held any. A review found `-o` copying it as it was."""
    from ..fork.files import read_sidecar, sidecar
    from .core import redact_bytes

    if not transcript.name.startswith("agent-"):
        return  # a session's main file has none
    data = read_sidecar(transcript)
    if data is None:
        return
    meta = sidecar(transcript)
    new, kinds = redact_bytes(data)
    result.findings.extend(Finding(1, kind, f"({meta.name})") for kind in kinds)
    if write_to is not None:
        write_new(sidecar(write_to), [new], exclusive=True)
    elif in_place and kinds:
        replace_atomically(meta, [new], backup=backup)


def _outputs(files: list[Path], out: str, hint: str) -> list[Path]:
    """Where each redacted copy goes (`session_out`: the main file at ``out``, or in it when
    it is a folder; subagent files beside it in Claude Code's layout)."""
    outs = session_outputs(files, out)
    for f, o in zip(files, outs, strict=True):
        if o.exists() and o.samefile(f):
            raise UsageError(f"{o}: that is the input itself", hint=hint)
    taken = first_taken(files, outs)
    if taken is not None:
        raise WriteFailed(
            f"{taken}: already exists; tt never overwrites (nothing was written)",
            hint="choose another -o path",
        )
    return outs


def _make_parent(p: Path) -> None:
    try:
        p.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as e:
        raise WriteFailed(f"{p.parent}: cannot create ({e.strerror})") from e
