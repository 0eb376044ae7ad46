"""Glob and Grep, as Claude Code shapes them (see `tools.builtin` for where they were observed).

Glob lists paths relative to the cwd, oldest first, at most ``GLOB_LIMIT``; Grep's default
mode lists files newest first ("Found N files"), ``content`` prints ``path:line:text``
with ``-A/-B/-C`` context, ``count`` prints ``path:N``. Both skip VCS and dependency
directories and stop at the context's timeout.

Neither follows a symlink while walking: a symlinked file or directory below the search
root is neither listed nor read (Claude Code 2.1.332 lists and searches none either),
so every file they return lies under the root, which `tools.registry` has checked against the
working directories (`permissions`). Grep skips a file past ``MAX_GREP_FILE_BYTES``
and stops collecting once its output is past twice the cap, so no search floods memory.

Invariant: never raises for bad input (a bad pattern is an ``is_error`` result).
It builds on `tools.base` alone; `tools.builtin` puts both in the default set.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Iterator, Mapping
from itertools import islice
from pathlib import Path
from typing import Any

from ..outcome import ToolOutcome
from .base import SKIP_DIRS, ToolContext, cap, mtime, schema, shown

GLOB_LIMIT = 100
#: Grep does not read a file larger than this (ripgrep streams; tt reads whole files).
MAX_GREP_FILE_BYTES = 16 * 1024 * 1024
#: Content mode keeps at most this many matches of one file.
MAX_HITS_PER_FILE = 10_000


def _walk(base: Path, deadline: float) -> Iterator[Path]:
    """Regular files below ``base``, symlinks and `SKIP_DIRS` left out."""
    for root, dirs, files in os.walk(base):  # followlinks=False: a linked dir is not entered
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not os.path.islink(os.path.join(root, d)))
        for f in sorted(files):
            p = Path(root) / f
            if not p.is_symlink():
                yield p
        if time.monotonic() > deadline:
            return


def _search_base(tool_input: Mapping[str, Any], ctx: ToolContext) -> Path:
    p = tool_input.get("path")
    return ctx.resolve(p) if isinstance(p, str) and p else ctx.cwd


def _glob_root(tool_input: Mapping[str, Any], ctx: ToolContext) -> tuple[Path, str]:
    """Where a Glob searches and the pattern relative to it: an absolute pattern is
    anchored at its longest literal prefix."""
    base = _search_base(tool_input, ctx)
    pattern: str = tool_input["pattern"]
    if pattern.startswith("/"):
        parts = Path(pattern).parts
        k = next((i for i, p in enumerate(parts) if any(c in p for c in "*?[{")), len(parts))
        base, pattern = ctx.resolve(str(Path(*parts[:k]))), "/".join(parts[k:])
    return base, pattern


class Glob:
    name = "Glob"
    description = (
        'Fast file pattern matching ("**/*.py", "src/**/*.ts"). Returns matching file paths, '
        f"oldest modified first, at most {GLOB_LIMIT}."
    )
    input_schema = schema(
        {
            "pattern": {"type": "string", "description": "The glob pattern to match files against"},
            "path": {
                "type": "string",
                "description": "The directory to search in (default: the working directory)",
            },
        },
        ("pattern",),
    )

    def subject(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str | None:
        return str(_glob_root(tool_input, ctx)[0])

    def paths(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> list[str] | None:
        return [str(_glob_root(tool_input, ctx)[0])]

    def run(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        from .permissions import glob_regex

        started = time.monotonic()
        base, pattern = _glob_root(tool_input, ctx)
        if not base.is_dir():
            return ToolOutcome.error(f"Directory does not exist: {base}")
        found: list[tuple[int, str, Path]] = []
        deadline = started + ctx.timeout
        complete = True
        # tt's own walk, not pathlib's glob: it must not follow symlinks (see the docstring).
        rx = glob_regex(pattern) if pattern else None
        for p in _walk(base, deadline):
            if rx is not None and rx.match(p.relative_to(base).as_posix()) is None:
                continue
            found.append((mtime(p) or 0, str(p), p))
        if time.monotonic() > deadline:
            complete = False
        found.sort()
        truncated = len(found) > GLOB_LIMIT
        names = [shown(p, ctx.cwd) for _, _, p in found[:GLOB_LIMIT]]
        result = {
            "filenames": names,
            "durationMs": int((time.monotonic() - started) * 1000),
            "numFiles": len(names),
            "truncated": truncated,
            "totalMatches": len(found),
            "countIsComplete": complete,
        }
        if not names:
            return ToolOutcome("No files found", result)
        text = "\n".join(names)
        if truncated or not complete:
            text += "\n(Results are truncated. Consider using a more specific path or pattern.)"
        return ToolOutcome(cap(text, ctx.max_output), result)


#: ripgrep ``--type`` names tt knows (the common ones).
_TYPES: Mapping[str, tuple[str, ...]] = {
    "py": (".py", ".pyi"),
    "js": (".js", ".mjs", ".cjs", ".jsx"),
    "ts": (".ts", ".tsx", ".mts", ".cts"),
    "rust": (".rs",),
    "go": (".go",),
    "java": (".java",),
    "c": (".c", ".h"),
    "cpp": (".cpp", ".cc", ".hpp", ".hh", ".h"),
    "md": (".md", ".markdown"),
    "json": (".json",),
    "yaml": (".yaml", ".yml"),
    "toml": (".toml",),
    "html": (".html", ".htm"),
    "css": (".css",),
    "sh": (".sh", ".bash"),
    "rb": (".rb",),
    "php": (".php",),
}


def _braces(glob: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", glob)
    if m is None:
        return [glob]
    return [x for alt in m[1].split(",") for x in _braces(glob[: m.start()] + alt + glob[m.end() :])]


class Grep:
    name = "Grep"
    description = (
        "Search file contents with a regular expression. output_mode: files_with_matches (default), "
        "content (matching lines, with -n line numbers and -A/-B/-C context) or count. "
        "Filter files with glob (e.g. *.py) or type (e.g. py)."
    )
    input_schema = schema(
        {
            "pattern": {"type": "string", "description": "The regular expression to search for"},
            "path": {
                "type": "string",
                "description": "File or directory to search (default: the working directory)",
            },
            "glob": {"type": "string", "description": "Glob to filter files, e.g. *.js or *.{ts,tsx}"},
            "type": {"type": "string", "description": "File type to search, e.g. py, js, rust"},
            "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"]},
            "-i": {"type": "boolean", "description": "Case insensitive"},
            "-n": {"type": "boolean", "description": "Line numbers (content mode; default true)"},
            "-A": {"type": "integer"},
            "-B": {"type": "integer"},
            "-C": {"type": "integer"},
            "head_limit": {"type": "integer", "description": "Only the first N lines/entries"},
            "multiline": {"type": "boolean", "description": "Let . match newlines and patterns span lines"},
        },
        ("pattern",),
    )

    def subject(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str | None:
        return str(_search_base(tool_input, ctx))

    def paths(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> list[str] | None:
        return [str(_search_base(tool_input, ctx))]

    def run(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        flags = (
            re.MULTILINE
            | (re.IGNORECASE if tool_input.get("-i") else 0)
            | (re.DOTALL if tool_input.get("multiline") else 0)
        )
        try:
            rx = re.compile(tool_input["pattern"], flags)
        except re.error as e:
            return ToolOutcome.error(f"Invalid regular expression: {e}")
        mode = tool_input.get("output_mode") or "files_with_matches"
        base = _search_base(tool_input, ctx)
        if not base.exists():
            return ToolOutcome.error(f"Path does not exist: {base}")
        files = [base] if base.is_file() else list(_walk(base, time.monotonic() + ctx.timeout))
        globs = _braces(tool_input["glob"]) if isinstance(tool_input.get("glob"), str) else None
        exts = _TYPES.get(tool_input.get("type") or "", None)
        head = tool_input.get("head_limit") if isinstance(tool_input.get("head_limit"), int) else None
        matched: list[tuple[Path, str, list[re.Match[str]]]] = []
        held = 0
        counts: dict[Path, int] = {}
        for f in files:
            if held > 2 * ctx.max_output and mode != "files_with_matches":
                break  # the output would be cut at max_output anyway
            rel = shown(f, ctx.cwd)
            if globs and not any(Path(rel).match(g) or f.match(g) for g in globs):
                continue
            if exts is not None and f.suffix.lower() not in exts:
                continue
            try:
                st = f.stat()
                # Only regular files: a pipe or a device would block or never end.
                if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_GREP_FILE_BYTES:
                    continue
                data = f.read_bytes()
            except OSError:
                continue
            if b"\x00" in data[:8192]:
                continue
            text = data.decode("utf-8", "replace")
            if mode != "content":
                n = sum(1 for _ in rx.finditer(text))  # counted, not held
                if n:
                    matched.append((f, "", []))
                    counts[f] = n
                continue
            hits = list(islice(rx.finditer(text), MAX_HITS_PER_FILE))
            if hits:
                matched.append((f, text, hits))
                held += sum(len(text[max(0, m.start() - 200) : m.end() + 200]) for m in hits[:1000])
        if mode == "content":
            return self._content(matched, tool_input, ctx, head)
        if mode == "count":
            rows = [f"{shown(f, ctx.cwd)}:{counts[f]}" for f, _, _ in matched][:head]
            total = sum(counts.values())
            result = {
                "mode": "count",
                "numFiles": len(matched),
                "filenames": [],
                "content": "\n".join(rows),
                "numMatches": total,
            }
            return ToolOutcome(cap("\n".join(rows), ctx.max_output) if rows else "No matches found", result)
        # Claude Code lists the files newest first.
        matched.sort(key=lambda m: -(mtime(m[0]) or 0))
        names = [shown(f, ctx.cwd) for f, _, _ in matched][:head]
        result = {"mode": "files_with_matches", "filenames": names, "numFiles": len(names)}
        if not names:
            return ToolOutcome("No files found", result)
        word = "file" if len(names) == 1 else "files"
        return ToolOutcome(cap(f"Found {len(names)} {word}\n" + "\n".join(names), ctx.max_output), result)

    def _content(
        self,
        matched: list[tuple[Path, str, list[re.Match[str]]]],
        tool_input: Mapping[str, Any],
        ctx: ToolContext,
        head: int | None,
    ) -> ToolOutcome:
        numbers = tool_input.get("-n", True) is not False
        ctx_c = tool_input.get("-C") or 0
        before = tool_input.get("-B") or ctx_c
        after = tool_input.get("-A") or ctx_c
        out: list[str] = []
        for f, text, hits in matched:
            rel = shown(f, ctx.cwd)
            lines = text.split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            hit_lines = sorted({text.count("\n", 0, m.start()) for m in hits})
            visible: list[int] = []
            for n in hit_lines:
                visible.extend(range(max(0, n - before), min(len(lines), n + after + 1)))
            last = -2
            hit_set = set(hit_lines)
            for n in sorted(set(visible)):
                if (before or after) and last >= 0 and n != last + 1:
                    out.append("--")
                sep = ":" if n in hit_set else "-"
                out.append(f"{rel}{sep}{n + 1}{sep}{lines[n]}" if numbers else f"{rel}{sep}{lines[n]}")
                last = n
        if head is not None:
            out = out[:head]
        content = "\n".join(out)
        result = {"mode": "content", "numFiles": 0, "filenames": [], "content": content, "numLines": len(out)}
        return ToolOutcome(cap(content, ctx.max_output) if out else "No matches found", result)
