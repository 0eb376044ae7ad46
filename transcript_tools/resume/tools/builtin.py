"""The file tools (Read, Write, Edit) and `builtin()`, the default set of all six.

Each tool takes Claude Code's input (names, types, defaults) and answers with its
``tool_result`` text and ``toolUseResult`` (observed with Claude Code 2.1.332 against the
stand-in, and in fixtures/real/claude-config-*; docs/format.md §5): Read numbers lines as
``N<TAB>text``; Write and Edit refuse a file that was not read first, or changed since,
and return a ``structuredPatch``. Glob and Grep are in `tools.search`, Bash in
`tools.bash`; the types and helpers all six share are in `tools.base`.

Invariants: every tool returns a `tools.base.ToolOutcome` (errors included) and never
raises for bad input; outputs are capped. This is an adapter: it touches the file system;
`tools.registry` decides whether it may. It sits below the registry and never imports it:
the registry takes its default set from `builtin()`.
"""

from __future__ import annotations

import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..outcome import ToolOutcome
from .base import Tool, ToolContext, cap, mtime, schema
from .bash import Bash
from .search import Glob, Grep

MAX_READ_LINES = 2000
MAX_LINE_CHARS = 2000
MAX_READ_BYTES = 256 * 1024  # a whole-file Read past this asks for offset/limit (Claude Code)
MAX_IMAGE_BYTES = 3_750_000  # 5 MB once base64-encoded, the API's image limit
_IMAGES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
_NOT_READ = "File has not been read yet. Read it first before writing to it."
_CHANGED = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it."


def _check_fresh(path: Path, ctx: ToolContext) -> str | None:
    seen = ctx.files_read.get(str(path))
    if seen is None:
        return _NOT_READ
    if mtime(path) != seen:
        return _CHANGED
    return None


def _missing(ctx: ToolContext) -> ToolOutcome:
    return ToolOutcome.error(
        f"File does not exist. Note: your current working directory is {ctx.cwd}.", wrap=False
    )


# --- Read -------------------------------------------------------------------------------


class Read:
    name = "Read"
    description = (
        "Reads a file from the local filesystem. file_path should be absolute. By default reads up to "
        f"{MAX_READ_LINES} lines from the start; pass offset (1-based line) and limit for more. "
        "Lines are returned as line number, tab, text. Images are returned as images."
    )
    input_schema = schema(
        {
            "file_path": {"type": "string", "description": "The absolute path to the file to read"},
            "offset": {"type": "integer", "description": "The line number to start reading from"},
            "limit": {"type": "integer", "description": "The number of lines to read"},
        },
        ("file_path",),
    )

    def subject(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str | None:
        return str(ctx.resolve(tool_input["file_path"]))

    def paths(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> list[str] | None:
        return [tool_input["file_path"]]

    def run(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        path = ctx.resolve(tool_input["file_path"])
        offset, limit = tool_input.get("offset"), tool_input.get("limit")
        try:
            if path.is_dir():
                return ToolOutcome.error(
                    f"EISDIR: illegal operation on a directory, read '{path}'", wrap=False
                )
            st = path.stat()
            if stat.S_ISFIFO(st.st_mode):
                # Claude Code 2.1.332's answer for a pipe; tt never opens one (a read would block).
                return ToolOutcome.error(
                    "Nothing is writing to this pipe. Check that the app serving it is running and unlocked.",
                    wrap=False,
                )
            if not stat.S_ISREG(st.st_mode):
                return ToolOutcome.error(f"Not a regular file: {path}. Read reads files only.")
            size = st.st_size
            suffix = path.suffix.lower()
            if suffix in _IMAGES:
                return self._image(path, size, _IMAGES[suffix], ctx)
            if size > MAX_READ_BYTES and offset is None and limit is None:
                return ToolOutcome.error(
                    f"File content ({size // 1024}KB) exceeds maximum allowed size ({MAX_READ_BYTES // 1024}KB). "
                    "Please use offset and limit parameters to read specific portions of the file, "
                    "or use the GrepTool to search for specific content."
                )
            data = path.read_bytes() if size <= MAX_READ_BYTES else None
            if data is None:
                with path.open("rb") as f:
                    head = f.read(8192)
            else:
                head = data[:8192]
        except FileNotFoundError:
            return _missing(ctx)
        except OSError as e:
            return ToolOutcome.error(f"{e.strerror}: {path}", wrap=False)
        if b"\x00" in head:
            return ToolOutcome.error(
                f"This tool cannot read binary files. The file appears to be a binary {path.suffix or 'file'}."
            )
        ctx.files_read[str(path)] = mtime(path) or 0
        start = max(1, offset or 1)
        count = limit if isinstance(limit, int) and limit > 0 else MAX_READ_LINES
        if data is None:  # a large file read by offset/limit: streamed, only the lines asked for kept
            chosen, total = _lines_of(path, start, count)
            text = "(large)"
        else:
            text = data.decode("utf-8", "replace")
            lines = text.split("\n")
            total = len(lines)
            chosen = lines[start - 1 : start - 1 + count]
        result = {
            "type": "text",
            "file": {
                "filePath": str(path),
                "content": "\n".join(chosen),
                "numLines": len(chosen),
                "startLine": start,
                "totalLines": total,
            },
        }
        if not text:
            return ToolOutcome(
                "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>",
                result,
            )
        if not chosen:
            return ToolOutcome(
                f"<system-reminder>Warning: the file exists but is shorter than the provided offset ({start}). "
                f"The file has {total} lines.</system-reminder>",
                result,
            )
        numbered = "\n".join(
            f"{start + i}\t{ln if len(ln) <= MAX_LINE_CHARS else ln[:MAX_LINE_CHARS] + '... [line truncated]'}"
            for i, ln in enumerate(chosen)
        )
        return ToolOutcome(cap(numbered, ctx.max_output), result)

    def _image(self, path: Path, size: int, media: str, ctx: ToolContext) -> ToolOutcome:
        if size > MAX_IMAGE_BYTES:
            return ToolOutcome.error(
                f"Image file is too large ({size} bytes; the limit is {MAX_IMAGE_BYTES})."
            )
        import base64

        data = base64.b64encode(path.read_bytes()).decode("ascii")
        ctx.files_read[str(path)] = mtime(path) or 0
        block = {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}
        return ToolOutcome(
            [block], {"type": "image", "file": {"base64": data, "type": media, "originalSize": size}}
        )


def _lines_of(path: Path, start: int, count: int) -> tuple[list[str], int]:
    """Lines ``start .. start+count-1`` (1-based) of a large file and its number of lines
    (as ``str.split("\\n")`` counts them), streamed: only the chosen lines are kept, and
    of a line at most ``MAX_LINE_CHARS * 4`` bytes (the rest is read and dropped)."""
    chosen: list[str] = []
    n = 0
    ended = True
    with path.open("rb") as f:
        while piece := f.readline(MAX_LINE_CHARS * 4):
            ended = piece.endswith(b"\n")
            while not ended and (more := f.readline(1 << 20)):
                ended = more.endswith(b"\n")
            n += 1
            if start <= n < start + count:
                chosen.append(piece.rstrip(b"\n").decode("utf-8", "replace"))
    total = n + 1 if ended else n  # a final newline starts one more (empty) line
    if ended and start <= total < start + count:
        chosen.append("")
    return chosen, total


# --- Write and Edit ---------------------------------------------------------------------


def structured_patch(old: str, new: str) -> list[dict[str, Any]]:
    """Hunks as Claude Code's ``structuredPatch`` (jsdiff's, 3 lines of context)."""
    import difflib

    hunks: list[dict[str, Any]] = []
    a, b = old.splitlines(), new.splitlines()
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(3):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        lines: list[str] = []
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                lines.extend(" " + s for s in a[x1:x2])
                continue
            lines.extend("-" + s for s in a[x1:x2])
            lines.extend("+" + s for s in b[y1:y2])
        hunks.append(
            {"oldStart": i1 + 1, "oldLines": i2 - i1, "newStart": j1 + 1, "newLines": j2 - j1, "lines": lines}
        )
    return hunks


def _write_text(path: Path, text: str, ctx: ToolContext) -> str | None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    except OSError as e:
        return f"Could not write {path}: {e.strerror}"
    ctx.files_read[str(path)] = mtime(path) or 0
    return None


def _read_text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace")


class Write:
    name = "Write"
    description = "Write a file (create or overwrite). An existing file must be Read first."
    input_schema = schema(
        {
            "file_path": {"type": "string", "description": "The absolute path to the file to write"},
            "content": {"type": "string", "description": "The content to write to the file"},
        },
        ("file_path", "content"),
    )

    def subject(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str | None:
        return str(ctx.resolve(tool_input["file_path"]))

    def paths(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> list[str] | None:
        return [tool_input["file_path"]]

    def run(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        path = ctx.resolve(tool_input["file_path"])
        content: str = tool_input["content"]
        if path.is_dir():
            return ToolOutcome.error(f"Path is a directory: {path}")
        original: str | None = None
        if path.exists():
            problem = _check_fresh(path, ctx)
            if problem is not None:
                return ToolOutcome.error(problem)
            original = _read_text(path)
        failed = _write_text(path, content, ctx)
        if failed is not None:
            return ToolOutcome.error(failed)
        if original is None:
            return ToolOutcome(
                f"File created successfully at: {path}",
                {
                    "type": "create",
                    "filePath": str(path),
                    "content": content,
                    "structuredPatch": [],
                    "originalFile": None,
                    "userModified": False,
                },
            )
        return ToolOutcome(
            f"The file {path} has been updated successfully.",
            {
                "type": "update",
                "filePath": str(path),
                "content": content,
                "structuredPatch": structured_patch(original, content),
                "originalFile": original,
                "userModified": False,
            },
        )


class Edit:
    name = "Edit"
    description = (
        "Replace old_string with new_string in a file that was Read first. old_string must occur "
        "exactly once unless replace_all is true."
    )
    input_schema = schema(
        {
            "file_path": {"type": "string", "description": "The absolute path to the file to modify"},
            "old_string": {"type": "string", "description": "The text to replace"},
            "new_string": {"type": "string", "description": "The text to replace it with"},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)"},
        },
        ("file_path", "old_string", "new_string"),
    )

    def subject(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str | None:
        return str(ctx.resolve(tool_input["file_path"]))

    def paths(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> list[str] | None:
        return [tool_input["file_path"]]

    def run(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        path = ctx.resolve(tool_input["file_path"])
        old: str = tool_input["old_string"]
        new: str = tool_input["new_string"]
        replace_all = tool_input.get("replace_all") is True
        if old == new:
            return ToolOutcome.error("No changes to make: old_string and new_string are exactly the same.")
        if not path.exists():
            if old != "":
                return _missing(ctx)
            original, updated = "", new
        else:
            problem = _check_fresh(path, ctx)
            if problem is not None:
                return ToolOutcome.error(problem)
            original = _read_text(path)
            if old == "":
                return ToolOutcome.error("Cannot create new file - file already exists.")
            count = original.count(old)
            if count == 0:
                return ToolOutcome.error(f"String to replace not found in file.\nString: {old}")
            if count > 1 and not replace_all:
                return ToolOutcome.error(
                    f"Found {count} matches of the string to replace, but replace_all is false. To replace all "
                    "occurrences, set replace_all to true. To replace only one occurrence, please provide more "
                    f"context to uniquely identify the instance.\nString: {old}"
                )
            updated = original.replace(old, new) if replace_all else original.replace(old, new, 1)
        failed = _write_text(path, updated, ctx)
        if failed is not None:
            return ToolOutcome.error(failed)
        return ToolOutcome(
            f"The file {path} has been updated successfully.",
            {
                "filePath": str(path),
                "oldString": old,
                "newString": new,
                "originalFile": original,
                "structuredPatch": structured_patch(original, updated),
                "userModified": False,
                "replaceAll": replace_all,
            },
        )


def builtin() -> tuple[Tool, ...]:
    """The six tools, in the order they are offered."""
    return (Read(), Glob(), Grep(), Bash(), Write(), Edit())
