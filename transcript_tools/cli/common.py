"""Options and small pieces shared by the commands (no command logic here)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import orjson

from ..edge.reader import MAX_TRANSCRIPT_READ_BYTES
from ..model.errors import UsageError
from ..model.wire import dumps_lenient

#: Set by `cli.run` (the console script), which ends the process without freeing memory.
quick_exit = False
_left: list[object] = []


def leave_to_exit(value: object) -> None:
    """Keep ``value`` alive until the process ends, instead of freeing it on return.

    Under `cli.run` the process ends without freeing anything, so a loaded session need
    not be taken apart object by object when the command returns: about 0.07 s for the
    million objects of a 50 MB resume. When the CLI runs in-process (tests) this does
    nothing and memory is returned as usual.
    """
    if quick_exit:
        _left.append(value)


def json_option(f: Any) -> Any:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")(f)


def max_bytes_option(f: Any) -> Any:
    return click.option(
        "--max-bytes",
        type=click.IntRange(min=1),
        default=MAX_TRANSCRIPT_READ_BYTES,
        show_default=True,
        help="Cap for loading a conversation into memory.",
    )(f)


def tool_options(f: Any) -> Any:
    """What the QueryEngine's tools may do, the same on ``tt resume`` and ``tt chat``
    (Claude Code's flag names, its camelCase spellings too): allow and deny rules, more
    working directories, and where tools run."""
    for opt in reversed(
        (
            click.option(
                "--allowed-tools",
                "--allowedTools",
                "allowed",
                multiple=True,
                metavar="RULES",
                help="Allow tools: Bash, Write, Edit, or Name(pattern), e.g. 'Bash(git log:*)'.",
            ),
            click.option(
                "--disallowed-tools",
                "--disallowedTools",
                "disallowed",
                multiple=True,
                metavar="RULES",
                help="Deny tools (beats --allowed-tools).",
            ),
            click.option(
                "--add-dir",
                "add_dirs",
                multiple=True,
                type=click.Path(exists=True, file_okay=False, path_type=Path),
                metavar="DIR",
                help="Also let the file tools into DIR (repeatable), as `claude --add-dir`.",
            ),
            click.option(
                "--cwd",
                "cwd_opt",
                type=click.Path(file_okay=False, path_type=Path),
                metavar="DIR",
                help="Run tools here (default: the session's cwd).",
            ),
        )
    ):
        f = opt(f)
    return f


def continue_option(f: Any) -> Any:
    return click.option(
        "-c", "--continue", "latest", is_flag=True, help="The latest session of this directory's project."
    )(f)


def sessions_options(f: Any) -> Any:
    """``-c``, ``-p DIR`` and ``-a``: which sessions a command that takes several TARGETS
    checks (validate, doctor, repair), with one meaning and one help text."""
    for opt in reversed(
        (
            continue_option,
            click.option(
                "-p",
                "--project",
                metavar="DIR",
                help="Every session of a project (its working directory, or its folder under projects/).",
            ),
            click.option(
                "-a", "--all", "all_", is_flag=True, help="Every session under the Claude config dir."
            ),
        )
    ):
        f = opt(f)
    return f


def named_session(session: str | None, latest: bool) -> Any:
    """The session a one-session command works on: SESSION, or with ``-c`` the latest of
    this directory's project; neither is a usage error, as for show, export and resume (a
    bare `tt fork` forked whichever session was latest, unasked)."""
    from ..edge.claude_dir import resolve

    if session is None and not latest:
        raise UsageError("name a session (a path, an id or an id prefix), or -c for the latest one here")
    return resolve(session, latest=latest)


def latest_session(
    targets: tuple[str, ...], latest: bool, all_: bool, project: str | None
) -> tuple[str, ...]:
    """``-c`` on a command that takes several TARGETS (validate, repair, doctor): the
    latest session of this directory's project, named by its path (its subagents come too;
    its id alone is ambiguous when a copy of the session is in another project)."""
    if not latest:
        return targets
    if targets or all_ or project is not None:
        raise click.UsageError("give TARGETS, -p/--all or -c, not two of them")
    from ..edge.claude_dir import resolve

    return (str(resolve(None, latest=True).path),)


def one_output(output: object, in_place: bool, dry_run: bool, *, required: bool = False) -> None:
    """``-o``, ``--in-place`` and ``--dry-run`` exclude each other (repair, redact,
    compact); ``required``: one of them must be given."""
    chosen = sum((output is not None, in_place, dry_run))
    if chosen > 1 or (required and chosen == 0):
        raise click.UsageError("choose one of -o OUT, --in-place or --dry-run")


def emit_json(value: Any) -> None:
    """Write one JSON document to stdout."""
    sys.stdout.buffer.write(dumps_lenient(value, orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS) + b"\n")
    sys.stdout.flush()


#: The width of output that goes to a pipe or a file: wide enough that no line is wrapped
#: and no path split (a reader, grep or a diff wants whole lines), narrow enough to stay
#: a width rich can lay a table out in.
PIPE_WIDTH = 4096
#: ... and its height (rich's default when it cannot ask a terminal).
PIPE_HEIGHT = 25


def console(stderr: bool = False) -> Any:
    """A rich console honouring NO_COLOR (rich does), TT_WIDTH (tests) and COLUMNS; to a
    pipe or a file (not a terminal) nothing is wrapped (`PIPE_WIDTH`), and decorations
    stay `views.layout.DECOR_WIDTH` wide."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            # rich exits 1 when the reader goes away (tt ls | head); hand it to cli.main,
            # which treats a closed pipe as a normal end (exit 0).
            self.quiet = True
            raise BrokenPipeError

    stream = sys.stderr if stderr else sys.stdout
    # TT_WIDTH (tests), then COLUMNS (a user's explicit width, as rich honours it on a
    # terminal), else the terminal's own width, and to a pipe no wrapping at all.
    tty = stream.isatty()
    width = _given_width() or (None if tty else PIPE_WIDTH)
    # A height too, to a pipe or a file: with both given, rich stops asking the terminal and
    # the environment for its size at every print (a fifth of `tt show`'s time to a pipe).
    height = None if tty else PIPE_HEIGHT
    return _Console(stderr=stderr, width=width, height=height, highlight=False, soft_wrap=False)


def _given_width() -> int | None:
    return _int_or_none(os.environ.get("TT_WIDTH") or os.environ.get("COLUMNS"))


def prints_as_is(text: str) -> bool:
    """Would `console` print ``text`` to stdout exactly as written (then a newline)?

    True when stdout is no terminal as rich judges it (not a tty, no ``FORCE_COLOR``, no
    ``TTY_COMPATIBLE=1``: rich then writes no escape codes), ``text`` is printable ASCII
    (one cell per character, nothing rich strips) and fits the console's width (no
    wrapping). The caller prints it as a `rich.text.Text` (no markup or ``:emoji:`` code
    read). A command may then write such a line itself and leave rich unimported (~20 ms
    of start-up).
    """
    if not (text.isascii() and text.isprintable()):
        return False
    env = os.environ
    if env.get("FORCE_COLOR") or env.get("TTY_COMPATIBLE") == "1":
        return False
    try:
        if sys.stdout.isatty():
            return False
    except (AttributeError, ValueError):  # no stdout, or a closed one: let rich decide
        return False
    return len(text) <= (_given_width() or PIPE_WIDTH)


def _int_or_none(text: str | None) -> int | None:
    try:
        n = int(text) if text else None
    except ValueError:
        return None
    return n if n is not None and n > 0 else None


def require_transcript(path: Any, *, session_verb: str | None = None) -> None:
    """`validate.files_kind.require_transcript` (one clear error, exit 4), imported when a
    command asks: the rule reads the file's head, which `tt --help` never needs.

    ``session_verb``: the command works on a session, not on a subagent's transcript
    (fork, rewind, export, resume, chat): an ``agent-*.jsonl`` is a usage error naming
    its session, where each said something else ("no messages to fork", "no session id")."""
    from ..validate.files_kind import require_session_file
    from ..validate.files_kind import require_transcript as require

    if session_verb is None:
        require(path)
    else:
        require_session_file(path, session_verb)


def page_or_print(con: Any, draw: Callable[[Any], None], *, pager: bool | None) -> None:
    """Draw into a capture; page it when it is taller than the terminal (``pager``
    None: only on a terminal), else write it out."""
    with con.capture() as cap:
        draw(con)
    text = cap.get()
    if not con.is_terminal:
        text = re.sub(r"[ \t]+(?=\n|$)", "", text)  # rich pads lines to the width
    tall = text.count("\n") > max(con.height - 2, 1)
    if pager or (pager is None and con.is_terminal and tall):
        import pydoc  # here: its imports cost every other command's start-up

        os.environ.setdefault("LESS", "-RFX")  # keep colours; quit if it fits after all
        pydoc.pager(text)
    else:
        con.file.write(text)
        con.file.flush()
