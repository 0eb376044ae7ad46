"""Validating transcripts on disk: the reader fed into the `validate.core.Validator`.

Invariants:
- Streams: memory does not grow with what the records hold (the second pass, for files
  past the cap, re-reads the part a resume sends — what follows the last compact
  boundary, or the whole file when it has none — keeping a few hundred bytes of facts
  per message of it).
- Never writes; never raises for damage (that is what Diagnostics are for), only for
  files that cannot be read at all (`NotFound`, `Unreadable`).
- A file in which no line is a whole JSON object is not a transcript: its report has
  ``not_transcript`` (what it looks like) and no diagnostics, whoever asks.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..edge import claude_dir as store
from ..edge.collector import gc_paused
from ..edge.reader import MAX_TRANSCRIPT_READ_BYTES, file_size, iter_raw, lines_of
from ..edge.siblings import found_elsewhere
from ..model.errors import NotFound, Unreadable
from ..model.session import session_id_from_name
from .core import Report, Validator
from .files_kind import settle_not_transcript


def _schema_check() -> Callable[[dict], list]:
    from .files_schema import default_checker

    return default_checker().check


def _fast_schema() -> Mapping[str, Any]:
    from .files_schema import default_checker

    return default_checker().fast_validators


class _BytesAt:
    """``(offset, length) -> bytes`` of one file, read on demand (`core.Validator`'s
    ``line_at``: only a duplicate uuid asks, to compare its record with the first one)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._fd: int | None = None

    def __call__(self, offset: int, length: int) -> bytes:
        try:
            if self._fd is None:
                self._fd = os.open(self._path, os.O_RDONLY)
            return os.pread(self._fd, length, offset)
        except OSError as e:
            raise Unreadable(f"{self._path}: cannot read ({e.strerror})") from e

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def is_subagent_path(path: Path) -> bool:
    return path.name.startswith("agent-")


def new_validator(
    path: Path,
    size: int,
    *,
    cap: int = MAX_TRANSCRIPT_READ_BYTES,
    schema: bool = True,
    line_at: Callable[[int, int], bytes] | None = None,
) -> Validator:
    """The validator `tt validate` runs on ``path`` (its settings read from the path: the
    session id its name gives, a subagent file by name), for `validate_path` and for a
    caller that feeds it lines it decoded itself (`store.files_checks`). ``line_at``: the
    file's bytes at an offset (`_BytesAt`), for a validator that keeps no hash per line."""
    sub = is_subagent_path(path)
    return Validator(
        str(path),
        size=size,
        cap=cap,
        schema_check=_schema_check() if schema else None,
        fast_schema=_fast_schema() if schema else None,
        expected_session=None if sub else session_id_from_name(path.name),
        is_subagent=sub,
        line_at=line_at,
    )


RawLines = Iterable[tuple[int, int, bytes, bytes, bool]]


def conclude(v: Validator, path: Path, rest: Callable[[int], RawLines]) -> Report:
    """What follows the first pass, the same for every caller: past the cap, the part a
    resume sends again for its facts (``rest(offset)``: `reader.iter_raw` tuples from that
    offset, `need_second_pass`), parents held by another file of the session (links, not
    damage), and the one rule for a file that is not a transcript."""
    start = v.need_second_pass()
    if start is not None:
        v.feed_facts_raw(rest(start))
    report = v.finish(lambda keys: found_elsewhere(path, keys))
    return settle_not_transcript(report, path)


def validate_path(
    path: Path | str,
    *,
    cap: int = MAX_TRANSCRIPT_READ_BYTES,
    schema: bool = True,
    keep: Callable[[object], None] | None = None,
) -> Report:
    """``keep``: given the validator's working state (its chain index and facts, ~10^5
    small objects on a 50 MB file) once the report is made, instead of letting it be
    freed on return; the CLI passes `cli.common.leave_to_exit` for a single file, whose
    process then ends without freeing them one by one. ``path``: a `Path` or a string, as
    every public function takes it (a string was an AttributeError: a new user's script)."""
    path = Path(path)
    bytes_at = _BytesAt(path)
    v = new_validator(path, file_size(path), cap=cap, schema=schema, line_at=bytes_at)
    # The pass allocates a dict per line and keeps small acyclic objects per node.
    try:
        with gc_paused():
            with lines_of(path) as f:
                v.feed_chunks(f)
            report = conclude(v, path, lambda start: iter_raw(path, start))
    finally:
        bytes_at.close()
    if keep is not None:
        keep(v)
    return report


def files_named(specs: tuple[str, ...], all_: bool, project: str | None, subagents: bool) -> list[Path]:
    """The files ``tt validate`` checks: each spec resolved (a directory: every transcript
    in it but tt's by-products, and its agent files unless not ``subagents``; a session:
    its main file and, with ``subagents``, its subagent transcripts), then the sessions
    of ``project`` / ``all_``; each once, in the order given."""
    out: list[Path] = []
    if all_ or project is not None:
        from ..catalog.files_scope import config_hint, project_dirs

        if all_ and not store.projects_dir().is_dir():
            raise NotFound(
                f"no Claude config dir with projects at {store.projects_dir()}", hint=config_hint()
            )
        # The same scope as tt ls / stats / search: every project, or a project's folders.
        specs = specs + tuple(str(d) for d in project_dirs(project, all_=all_))
    for spec in specs:
        p = Path(spec).expanduser()
        if p.is_dir():
            found = store.transcripts_under(p)
            if not subagents:
                found = [q for q in found if not q.name.startswith("agent-")]
            if not found:
                raise NotFound(f"{spec}: no .jsonl transcripts in this directory")
            out.extend(found)
            continue
        ref = store.resolve(spec)
        out.append(ref.path)
        if subagents and ref.session_id is not None:
            out.extend(store.subagent_files(ref.path))
    # One report per file, in the order given.
    return list(dict.fromkeys(out))
