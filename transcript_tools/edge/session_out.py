"""Where ``-o`` puts a session: one rule for every command that writes one (repair, redact,
fork; compact writes a main file only, by the same rule).

A session on disk is Claude Code's layout: ``<name>.jsonl`` and, beside it, the folder
``<name>/`` holding ``subagents/**/agent-*.jsonl`` (and their ``.meta.json``), docs/format.md §1;
Claude Code 2.1.x and the Agent SDK find a session's subagents only there
(``_resolve_subagents_dir``: the session file's path without ``.jsonl``, then
``subagents``). So:

- ``-o PATH`` names the main file, and its subagent files go beside it at the same place
  relative to its folder: ``tt repair X.jsonl -o fixed.jsonl`` writes ``fixed.jsonl`` and
  ``fixed/subagents/agent-….jsonl``. Renaming the pair to ``<id>.jsonl`` and ``<id>/`` in a
  project folder is what Claude Code resumes.
- ``-o DIR`` (a folder that exists, or a path written with a trailing ``/``) holds the
  main file under its own name (a new session's id for fork and compact), and its folder.
- A main file whose name does not end in ``.jsonl`` keeps its files in ``<name>.d/``
  (`session_dir`), so the folder never collides with the file.

Invariants: pure path arithmetic plus ``is_dir`` on the given path; nothing is created
here; commands write every output exclusively (never over an existing file).
"""

from __future__ import annotations

import os
from pathlib import Path


def session_dir(path: Path) -> Path:
    """The folder of a session file's own files (``<id>/`` beside ``<id>.jsonl``); a file not
    named ``*.jsonl`` gets ``<name>.d/``, so the folder never collides with the file."""
    return (
        path.with_name(path.name[:-6]) if path.name.endswith(".jsonl") else path.with_name(path.name + ".d")
    )


def names_folder(spec: str | os.PathLike[str]) -> bool:
    """Whether ``-o`` names a folder to write into (it exists as one, or ends with ``/``)."""
    s = os.fspath(spec)
    return s.endswith(("/", os.sep)) or Path(s).expanduser().is_dir()


def main_output(spec: str | os.PathLike[str], name: str) -> Path:
    """Where the main file goes for ``-o spec``; ``name`` is its file name in a folder."""
    p = Path(os.fspath(spec)).expanduser()
    return p / name if names_folder(spec) else p


def session_outputs(files: list[Path], spec: str | os.PathLike[str]) -> list[Path]:
    """Where each file of a session goes for ``-o spec``: ``files[0]`` is the main file, the
    rest are under its folder (`session_dir`) and keep their place relative to it."""
    main = main_output(spec, files[0].name)
    src, dst = session_dir(files[0]), session_dir(main)
    return [main] + [dst / f.relative_to(src) for f in files[1:]]


def first_taken(files: list[Path], outs: list[Path]) -> Path | None:
    """The first output that exists already: a file's copy, or the ``.meta.json`` sidecar a
    subagent's copy gets beside it when the original has one. Checked before anything is
    written, so an ``-o`` that would clash leaves nothing half-written (a new user's clash
    on a subagent's sidecar came after the main file and the subagent were written, and the
    message said neither)."""
    for f, o in zip(files, outs, strict=True):
        if o.exists():
            return o
        if f.name.startswith("agent-") and f.name.endswith(".jsonl"):
            meta = f.with_name(f.name[: -len(".jsonl")] + ".meta.json")
            out_meta = o.with_name(o.name[: -len(".jsonl")] + ".meta.json")
            if meta.is_file() and out_meta.exists():
                return out_meta
    return None
