"""Redacting transcript files on disk (the adapter around `redact.core`).

`scan_file` streams a file and returns what `redact.core` would replace; `redact_to` writes the
redacted copy to a new file (exclusive create: never overwrites); `redact_in_place`
replaces the file atomically through `writer.replace_atomically` (temp file, fsync,
rename, ``.bak`` of the original unless ``backup=False``, refused if the file changed
meanwhile). All three stream: memory does not grow with the file's text, only with
its distinct flagged values (`redact.core.collect`).

Each reads the file twice: `redact.core.collect` first (the file's ids and secrets: a value is
redacted everywhere in the file or nowhere), then the redaction with that `Known`.

Invariants: lines without findings are written back byte for byte (`redact.core`); the
findings never carry a secret's value; OSError is translated by `reader` / `writer`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..edge.reader import iter_lines
from ..edge.writer import replace_atomically, snapshot, write_new
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
