"""Where the QueryEngine's file tools may go: the working directories and path rules.

Pure: no I/O. Paths come in already resolved by the caller (`tools.base.ToolContext.locate`,
the adapter): ``requested`` is the path the model named, made absolute (``~`` expanded,
relative to the cwd) and normalised (``..`` folded) but not through symlinks; ``real``
is the same path with every symlink resolved. Both are absolute POSIX paths.

The rules, each observed with Claude Code 2.1.332 in ``-p`` mode against the stand-in
(``tests/resume/tools/test_permissions_real_cli.py`` replays them through 2.1.332, 2.1.197 and ``tt
resume``), and where tt is stricter it says so:

1. The working directories are the session's cwd plus every ``--add-dir DIR``.
   A path is *inside* when it equals one of them or lies below it.
2. Read, Glob and Grep (tt's defaults) read anything inside; Write and Edit need an
   allow rule (``Write``, ``Edit``). A path outside is denied with Claude Code's text:
   "Claude requested permissions to read from P, but you haven't granted it yet." (Read,
   Glob, Grep) or "... to write to P, ..." (Write, Edit), P being ``requested``.
   Glob's and Grep's path is their search root; an absolute Glob pattern is checked at
   its literal prefix (2.1.332 does the same; 2.1.197 listed the names outside).
3. Symlinks count where they lead: a ``requested`` inside whose ``real`` is outside is
   denied, and the text goes on " P resolves through a symlink to R, which is outside
   the allowed working directories." (2.1.332, Read and Grep/Glob roots). Glob and Grep
   do not follow symlinks while walking (2.1.332 lists and searches none) — see
   `tools.search`.
4. An allow rule naming the path allows it: ``Read(//abs/path)``, ``Read(~/notes/**)``,
   ``Read(./rel)`` or ``Read(rel)`` (relative to the cwd), and ``Read(/p)`` — relative
   to the cwd too, as in Claude Code, where ``/`` anchors at the project root
   (2.1.332 denies ``Read(/abs/outside/file)`` and allows ``Read(//abs/outside/file)``).
   ``*`` matches within one path segment, ``**`` across segments. A rule is matched
   against ``real``, so it names what is actually read. A rule grants only its own tool.
   A write outside is denied whatever the rule (2.1.332 denied a Write there under
   ``Write(//outside/**)``); ``--add-dir`` is the way to let writes out.
5. **tt is stricter here:** Claude Code lets a bare ``Read`` (or ``Write``, ``Glob``,
   ``Grep``) in ``--allowedTools`` reach any path (2.1.332 read an outside file, and a
   symlink inside pointing out, with ``--allowedTools Read``). In tt a bare rule, like
   the defaults, grants the tool inside the working directories only; outside needs
   ``--add-dir`` or a rule that names the path.
6. Write and Edit never touch a sensitive file, allowed or not (2.1.332: "Claude
   requested permissions to edit P which is a sensitive file."): a path with a
   component in `SENSITIVE_DIRS` (``.git``, ``.claude``, ...), under ``.config/git``, or
   whose name is in `SENSITIVE_FILES` (shell profiles, ``.gitconfig``, ``.npmrc``, ...;
   the lists are 2.1.332's). Reading them inside is allowed, as in 2.1.332.
7. A disallow rule (``--disallowed-tools``) beats every allow (as before).

8. Bash (opt-in). A bare ``Bash`` rule runs any command, as in Claude Code (2.1.332 ran
   ``cat /outside/file`` and ``cd /outside && ls`` under ``--allowedTools Bash``): tt
   cannot confine a shell, so granting bare Bash grants what the user can read. A
   prefix rule (``Bash(cat:*)``) covers a command only when no argument leads outside
   the working directories (2.1.332: "cat in 'P' was blocked. For security, Claude Code
   may only concatenate files from the allowed working directories for this session:
   'D'."; tt says "access" for commands other than ``cat``) and the command does not
   join, pipe or redirect (`SHELL_META`; stricter: 2.1.332 splits and checks each part).

Claude Code's permission modes: ``acceptEdits`` allows writes inside only and changes
nothing for reads outside (2.1.332); ``bypassPermissions`` / ``--dangerously-skip-
permissions`` is refused when run as root. tt has neither mode.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

#: Directories a write never enters (Claude Code 2.1.332's list), matched case-insensitively.
SENSITIVE_DIRS = frozenset(
    {".git", ".vscode", ".idea", ".claude", ".husky", ".cargo", ".devcontainer", ".yarn", ".mvn"}
)
#: File names a write never touches (Claude Code 2.1.332's list), matched case-insensitively.
SENSITIVE_FILES = frozenset(
    n.lower()
    for n in (
        ".gitconfig",
        ".gitmodules",
        ".bashrc",
        ".bash_profile",
        ".zshrc",
        ".zprofile",
        ".profile",
        ".zshenv",
        ".zlogin",
        ".zlogout",
        ".bash_login",
        ".bash_aliases",
        ".bash_logout",
        ".envrc",
        ".ripgreprc",
        ".mcp.json",
        ".claude.json",
        ".npmrc",
        ".yarnrc",
        ".yarnrc.yml",
        ".pnp.cjs",
        ".pnp.loader.mjs",
        ".pnp.js",
        ".pnp.data.json",
        ".pnpmfile.cjs",
        "bunfig.toml",
        ".bunfig.toml",
        ".bazelrc",
        ".bazelversion",
        ".bazeliskrc",
        ".pre-commit-config.yaml",
        "lefthook.yml",
        ".lefthook.yml",
        "lefthook.yaml",
        ".lefthook.yaml",
        "gradle-wrapper.properties",
        "maven-wrapper.properties",
        ".devcontainer.json",
        "pyrightconfig.json",
    )
)

WRITERS = frozenset({"Write", "Edit"})


def inside(path: str, dirs: Iterable[str]) -> bool:
    """``path`` equals one of ``dirs`` or lies below it (all absolute and normalised)."""
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in dirs)


def is_sensitive(path: str) -> bool:
    parts = [p.lower() for p in path.split("/") if p]
    if any(p in SENSITIVE_DIRS for p in parts[:-1]) or (parts and parts[-1] in SENSITIVE_DIRS):
        return True
    if any(parts[i : i + 2] == [".config", "git"] for i in range(len(parts) - 1)):
        return True
    return bool(parts) and parts[-1] in SENSITIVE_FILES


def anchor(pattern: str, cwd: str, home: str) -> str:
    """A rule's path pattern made absolute, as Claude Code reads it: ``//x`` is ``/x``,
    ``~/x`` is under the home, ``/x``, ``./x`` and ``x`` are under the cwd."""
    if pattern.startswith("//"):
        return posixpath.normpath("/" + pattern.lstrip("/"))
    if pattern == "~" or pattern.startswith("~/"):
        return posixpath.normpath(home + pattern[1:])
    rel = pattern.lstrip("/")
    rel = rel[2:] if rel.startswith("./") else rel
    return posixpath.normpath(posixpath.join(cwd, rel)) if rel else cwd


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """``*`` and ``?`` within a segment, ``**`` across segments (``a/**`` also matches
    ``a`` itself), ``[...]`` a class, ``{a,b}`` alternatives."""
    out = ""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if pattern.startswith("/**", i) and i + 3 == len(pattern):
            out += "(?:/.*)?"
            i += 3
            continue
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            continue
        if c == "*":
            out += "[^/]*"
        elif c == "?":
            out += "[^/]"
        elif c == "[":
            j = pattern.find("]", i + 2)
            if j < 0:
                out += re.escape(c)
            else:
                body = pattern[i + 1 : j]
                out += "[" + ("^" + re.escape(body[1:]) if body.startswith("!") else re.escape(body)) + "]"
                i = j
        elif c == "{":
            j = pattern.find("}", i)
            if j < 0:
                out += re.escape(c)
            else:
                out += (
                    "(?:" + "|".join(glob_regex(a).pattern[4:-3] for a in pattern[i + 1 : j].split(",")) + ")"
                )
                i = j
        else:
            out += re.escape(c)
        i += 1
    return re.compile(rf"(?s:{out})\Z")


def path_matches(pattern: str, path: str, cwd: str, home: str) -> bool:
    """A ``Tool(pattern)`` path rule against an absolute path."""
    return glob_regex(anchor(pattern, cwd, home)).match(path) is not None


@dataclass(frozen=True, slots=True)
class PathCheck:
    """One path a file tool would touch, resolved at the edge."""

    requested: str
    real: str


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    message: str | None = None  # the is_error text of a denial


ALLOW = Verdict(True)


def decide_path(
    tool: str,
    check: PathCheck,
    *,
    dirs: Sequence[str],
    bare: bool,
    patterns: Sequence[str],
    cwd: str,
    home: str,
) -> Verdict:
    """May ``tool`` touch ``check``? ``bare``: the tool is granted as a whole (a default
    or a bare rule); ``patterns``: the path patterns of its allow rules."""
    writer = tool in WRITERS
    if writer and (is_sensitive(check.requested) or is_sensitive(check.real)):
        return Verdict(
            False, f"Claude requested permissions to edit {check.requested} which is a sensitive file."
        )
    named = any(path_matches(p, check.real, cwd, home) for p in patterns)
    if writer and not inside(check.real, dirs):
        named = False  # 2.1.332 denied Write(//outside/**) for a write there: only --add-dir opens it
    if named or (bare and inside(check.real, dirs)):
        return ALLOW
    verb = "write to" if writer else "read from"
    msg = f"Claude requested permissions to {verb} {check.requested}, but you haven't granted it yet."
    if inside(check.requested, dirs) and not inside(check.real, dirs):
        msg += (
            f" {check.requested} resolves through a symlink to {check.real},"
            " which is outside the allowed working directories."
        )
    return Verdict(False, msg)


# --- Bash -------------------------------------------------------------------------------

#: Characters that join or redirect commands: a prefix rule (``Bash(git log:*)``) does not
#: match a command holding any of them (tt is stricter than Claude Code, which splits
#: compound commands and checks each part).
SHELL_META = frozenset(";&|<>`$\n()")


def bash_prefix_safe(command: str) -> bool:
    return not any(c in SHELL_META for c in command)


def bash_outside_paths(
    words: Sequence[str], dirs: Sequence[str], real_of: Callable[[str], PathCheck]
) -> list[str]:
    """The argument words of a command (an option's ``--x=value`` value too) that lead
    outside ``dirs``: ``/x``, ``~/x``, ``../x``, or a symlink inside pointing out.
    ``real_of`` is the resolver (`tools.base.ToolContext.locate`). Used for commands a
    prefix rule allows: Claude Code 2.1.332 blocks ``cat /outside`` under ``Bash(cat:*)``;
    tt checks every argument of every command (stricter: 2.1.332 checks the arguments of
    the commands it knows to take paths)."""
    found: list[str] = []
    for w in words[1:]:
        candidate = w.split("=", 1)[1] if w.startswith("-") and "=" in w else w
        if not candidate or candidate.startswith("-"):
            continue
        check = real_of(candidate)
        if not (inside(check.requested, dirs) and inside(check.real, dirs)):
            found.append(check.requested)
    return found
