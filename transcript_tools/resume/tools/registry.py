"""The QueryEngine's tools: a small registry, its permission rules and how a call is run.

Six tools, named and shaped as Claude Code's so a session moves between tt and
``claude --resume`` without the model noticing (inputs, ``tool_result`` text and the
``toolUseResult`` each writes are Claude Code 2.1.332's, docs/format.md §5; the
implementations are in `tools.builtin`, `tools.search` and `tools.bash`, on the types of
`tools.base`):

- ``Read``, ``Glob``, ``Grep`` are allowed by default (they only read), inside the
  working directories;
- ``Bash``, ``Write``, ``Edit`` only when allowed (``--allowed-tools``);
- ``--disallowed-tools`` removes any of them.

Rules are ``Name`` or ``Name(pattern)`` as Claude Code writes them: for Bash the pattern
is a command (``Bash(git log:*)`` allows every command starting with ``git log``, and
not joined to another, with no argument leading outside), for the file tools a path
pattern anchored as Claude Code anchors it (``Read(//abs/**)``, ``Read(~/notes/**)``,
``Edit(src/**)`` under the cwd). Every path a file tool touches (Read/Write/Edit's
file, Glob's and Grep's root) is resolved here (`ToolContext.locate`) and decided by
the pure `permissions` module, whose docstring has the rules and their evidence (the
working directories: the cwd and ``--add-dir``). A disallow rule beats an allow rule.

What the model is offered: the tools with an allow rule (whole or by pattern) that are
not wholly disallowed. A call that is not allowed — a tool without an allow rule, a
pattern that does not match, a name tt does not know or ``--disallowed-tools`` removed —
is not run: it gets an ``is_error`` result worded as Claude Code words it ("Claude
requested permissions to ...", "No such tool available: ..."), and becomes a
*permission denial* (``tool_name``,
``tool_use_id``, ``tool_input``: the Agent SDK's result field). Claude Code 2.1.332
does not count unknown tools as denials; the issue asks tt to, so a script sees them.

This is the top of the tools stack (drawn in `tools.base`): it imports the default set
from `tools.builtin` and nothing below imports it back.

Invariants:
- A tool never runs without an allow rule matching the call; a file tool never runs on
  a path `permissions` denies.
- Tools run in the session's cwd, with a timeout and a cap on their output; the
  caller gets a `ToolOutcome` whatever happens (failures are ``is_error`` results),
  except KeyboardInterrupt, which propagates so Ctrl-C ends the turn.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ...model.errors import UsageError
from ..outcome import ToolOutcome as ToolOutcome

# Re-exported (``X as X``): a caller of the registry (engine) takes the ToolContext a call
# needs and the ToolOutcome it gives from this one module; the types live in tools.base
# so that the tools below can use them without importing this.
from .base import Tool
from .base import ToolContext as ToolContext
from .builtin import builtin
from .permissions import bash_outside_paths, bash_prefix_safe, decide_path, path_matches

DEFAULT_ALLOWED = ("Read", "Glob", "Grep")


@dataclass(frozen=True, slots=True)
class Rule:
    tool: str
    pattern: str | None = None

    def matches(self, tool: str, subject: str | None) -> bool:
        if tool != self.tool:
            return False
        if self.pattern is None:
            return True
        if subject is None:
            return False
        if self.pattern.endswith(":*"):  # Claude Code's prefix form, Bash(npm run:*)
            prefix = self.pattern[:-2]
            return subject == prefix or subject.startswith(prefix + " ")
        return fnmatch.fnmatchcase(subject, self.pattern) or subject == self.pattern


_RULE = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)


def parse_rules(specs: Iterable[str], known: Iterable[str]) -> list[Rule]:
    """``["Bash(git log:*)", "Read,Edit"]`` -> rules. Unknown tool names are a usage error."""
    names = set(known)
    out: list[Rule] = []
    for spec in specs:
        for part in _split(spec):
            m = _RULE.match(part)
            if m is None:
                raise UsageError(f"{part!r} is not a tool rule; write Name or Name(pattern)")
            if m[1] not in names:
                raise UsageError(f"tt has no tool {m[1]!r}", hint="its tools are " + ", ".join(sorted(names)))
            out.append(Rule(m[1], m[2].strip() if m[2] is not None else None))
    return out


def _split(spec: str) -> list[str]:
    """Split on commas and spaces outside parentheses (Claude Code accepts both)."""
    parts: list[str] = []
    depth = 0
    cur = ""
    for ch in spec:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        if depth == 0 and ch in ", ":
            if cur.strip():
                parts.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


@dataclass(frozen=True, slots=True)
class Denial:
    """One entry of the result's ``permission_denials`` (the Agent SDK's shape)."""

    tool_name: str
    tool_use_id: str
    tool_input: Any

    def to_dict(self) -> dict[str, Any]:
        return {"tool_name": self.tool_name, "tool_use_id": self.tool_use_id, "tool_input": self.tool_input}


@dataclass(frozen=True, slots=True)
class CallResult:
    outcome: ToolOutcome
    denial: Denial | None = None


class ToolRegistry:
    """The tools one engine may use, with its allow and deny rules."""

    def __init__(
        self,
        allowed: Iterable[str] = (),
        disallowed: Iterable[str] = (),
        *,
        tools: Iterable[Tool] | None = None,
        ask: Callable[[str, Mapping[str, Any]], str] | None = None,
    ) -> None:
        """``ask`` (``tt chat``): asked before a call that only lacks an allow rule is denied;
        it answers "yes" (this call), "always" (the tool, for the rest of the session) or
        "no". With it, every tool not wholly denied is offered to the model."""
        self.ask = ask
        if tools is None:
            tools = builtin()
        self._tools: dict[str, Tool] = {t.name: t for t in tools}
        names = list(self._tools)
        self.allow = [Rule(n) for n in DEFAULT_ALLOWED if n in self._tools] + parse_rules(allowed, names)
        self.deny = parse_rules(disallowed, names)

    @property
    def offered(self) -> list[str]:
        """Tool names offered to the model, in registry order."""
        wholly_denied = {r.tool for r in self.deny if r.pattern is None}
        allowed = set(self._tools) if self.ask is not None else {r.tool for r in self.allow}
        return [n for n in self._tools if n in allowed and n not in wholly_denied]

    def definitions(self) -> list[dict[str, Any]]:
        """The ``tools`` parameter of a Messages API request."""
        return [
            {
                "name": n,
                "description": self._tools[n].description,
                "input_schema": dict(self._tools[n].input_schema),
            }
            for n in self.offered
        ]

    def call(self, name: str, tool_use_id: str, tool_input: Any, ctx: ToolContext) -> CallResult:
        tool = self._tools.get(name)
        # Unknown, or removed by --disallowed-tools: the model was never offered it. A tool
        # it was not offered only for want of an allow rule is denied below, in Claude
        # Code's words, so the model learns it needs permission.
        if tool is None or any(r.tool == name and r.pattern is None for r in self.deny):
            msg = f"No such tool available: {name}"
            return CallResult(
                ToolOutcome.error(f"Error: {msg}", result=f"Error: {msg}"),
                Denial(name, tool_use_id, tool_input),
            )
        if not isinstance(tool_input, Mapping):
            return CallResult(ToolOutcome.error(f"InputValidationError: {name} expects an object as input"))
        problem = validate_input(tool.input_schema, tool_input, name)
        if problem is not None:
            return CallResult(ToolOutcome.error(problem))
        # A tool without ``paths`` (a test's own) is not a file tool.
        paths = tool.paths(tool_input, ctx) if hasattr(tool, "paths") else None
        if paths is not None:
            return self._call_file_tool(tool, tool_use_id, tool_input, ctx, paths)
        subject = tool.subject(tool_input, ctx)
        if any(r.matches(name, subject) for r in self.deny):
            return CallResult(_denied(name, tool_input, ctx), Denial(name, tool_use_id, dict(tool_input)))
        if not any(r.matches(name, subject) for r in self.allow) and not self._asked(name, tool_input):
            return CallResult(_denied(name, tool_input, ctx), Denial(name, tool_use_id, dict(tool_input)))
        if name == "Bash" and not any(r.tool == name and r.pattern is None for r in self.allow):
            blocked = _bash_outside(str(subject or ""), ctx)
            if blocked is not None:
                return CallResult(
                    ToolOutcome.error(blocked, wrap=False), Denial(name, tool_use_id, dict(tool_input))
                )
        return CallResult(tool.run(tool_input, ctx))

    def _asked(self, name: str, tool_input: Mapping[str, Any]) -> bool:
        if self.ask is None:
            return False
        answer = self.ask(name, tool_input)
        if answer == "always":
            self.allow.append(Rule(name))
        return answer in ("yes", "always")

    def _call_file_tool(
        self, tool: Tool, tool_use_id: str, tool_input: Mapping[str, Any], ctx: ToolContext, paths: list[str]
    ) -> CallResult:
        """Read, Write, Edit, Glob, Grep: every path they touch checked by `permissions`."""
        name = tool.name
        cwd, home = str(ctx.cwd), str(ctx.home_dir)
        shown_input = _normalised_input(tool_input, ctx)
        bare = any(r.tool == name and r.pattern is None for r in self.allow)
        patterns = [r.pattern for r in self.allow if r.tool == name and r.pattern is not None]
        if not bare and not patterns:
            if not self._asked(name, tool_input):
                return CallResult(_denied(name, tool_input, ctx), Denial(name, tool_use_id, shown_input))
            bare = True  # allowed by the person: the working-directory rules still hold
        for p in paths:
            try:
                check = ctx.locate(p)
            except ValueError:  # a NUL byte: no such path can exist, nothing to run
                return CallResult(ToolOutcome.error(f"Invalid path {p!r}: it contains a NUL byte."))
            if any(
                r.tool == name
                and r.pattern is not None
                and (
                    path_matches(r.pattern, check.real, cwd, home)
                    or path_matches(r.pattern, check.requested, cwd, home)
                )
                for r in self.deny
            ):
                return CallResult(_denied(name, tool_input, ctx), Denial(name, tool_use_id, shown_input))
            verdict = decide_path(
                name, check, dirs=ctx.work_dirs, bare=bare, patterns=patterns, cwd=cwd, home=home
            )
            if not verdict.allowed:
                return CallResult(
                    ToolOutcome.error(str(verdict.message), wrap=False),
                    Denial(name, tool_use_id, shown_input),
                )
        return CallResult(tool.run(tool_input, ctx))


def _normalised_input(tool_input: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """A denial records ``file_path`` / ``path`` made absolute (``..`` folded), as Claude
    Code 2.1.332 does (``../out/f`` is recorded as ``/abs/out/f``)."""
    out = dict(tool_input)
    for key in ("file_path", "path"):
        if isinstance(out.get(key), str) and out[key]:
            out[key] = str(ctx.resolve(out[key]))
    return out


def _bash_outside(command: str, ctx: ToolContext) -> str | None:
    """Why a command only a prefix rule allows may not run: it joins or redirects
    commands, or an argument leads outside the working directories (see
    `permissions.bash_outside_paths`). None when it may."""
    import shlex

    if not bash_prefix_safe(command):
        return f"Claude requested permissions to use Bash for `{command}`, but you haven't granted it yet: a prefix rule does not cover a command that joins, pipes or redirects commands."
    try:
        words = shlex.split(command)
    except ValueError:
        return f"Claude requested permissions to use Bash for `{command}`, but you haven't granted it yet."
    try:
        outside = bash_outside_paths(words, ctx.work_dirs, ctx.locate)
    except ValueError:  # a NUL byte in an argument: bash could not be given it anyway
        return f"Claude requested permissions to use Bash for `{command}`, but you haven't granted it yet."
    if not outside:
        return None
    # Claude Code 2.1.332's words for `cat` under Bash(cat:*); tt says "access" for any command.
    verb = "concatenate" if words[0] == "cat" else "access"
    dirs = ", ".join(f"'{d}'" for d in (str(ctx.cwd), *map(str, ctx.add_dirs)))
    return (
        f"{words[0]} in '{outside[0]}' was blocked. For security, Claude Code may only {verb} files "
        f"from the allowed working directories for this session: {dirs}."
    )


def _denied(name: str, tool_input: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
    # Claude Code 2.1.332's wording in -p mode (no prompt to ask): "... to write to <path>"
    # for the file writers, "... to use <Tool>" otherwise.
    path = tool_input.get("file_path")
    if name in ("Write", "Edit") and isinstance(path, str) and path:
        msg = f"Claude requested permissions to write to {ctx.resolve(path)}, but you haven't granted it yet."
    else:
        msg = f"Claude requested permissions to use {name}, but you haven't granted it yet."
    return ToolOutcome.error(msg, wrap=False)


_JSON_TYPES: Mapping[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


def validate_input(schema: Mapping[str, Any], tool_input: Mapping[str, Any], name: str) -> str | None:
    """The first problem with ``tool_input`` as Claude Code reports it, or None."""
    props = schema.get("properties", {})
    for key in schema.get("required", ()):
        if key not in tool_input:
            return f"InputValidationError: {name} failed due to the following issue:\nThe required parameter `{key}` is missing"
    for key, value in tool_input.items():
        spec = props.get(key)
        if spec is None:
            continue
        types = _JSON_TYPES.get(spec.get("type", ""), ())
        bad_bool = isinstance(value, bool) and spec.get("type") in ("integer", "number")
        if types and (not isinstance(value, types) or bad_bool):
            return (
                f"InputValidationError: {name} failed due to the following issue:\n"
                f"The parameter `{key}` type is expected as `{spec.get('type')}` but provided as `{type(value).__name__}`"
            )
        enum = spec.get("enum")
        if enum is not None and value not in enum:
            return f"InputValidationError: {name} failed due to the following issue:\nThe parameter `{key}` must be one of {enum}"
    return None
