"""The ``tt`` command line: a thin layer over the library.

Each command lives in its own module under ``cli/`` and is imported only when it runs
(`LazyGroup`), so ``tt ls`` does not pay for anthropic or tiktoken.

The one boundary between errors and exit codes is `main`: a `TTError` becomes one
line on stderr and its class's exit code; click's usage errors exit 2. No traceback
for bad input; a traceback means a bug.

Exit codes: 0 ok, 1 findings, 2 usage, 3 not found, 4 unreadable or too large,
5 API or credentials, 6 write failed (130 when interrupted).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Any, NoReturn

import click

from ..model.errors import TTError
from ..model.lines import MAX_JSON_DEPTH

#: command name -> "module:attribute" (relative to this package)
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("validate", "Check transcripts: schema, chain and what the API rejects."),
    "repair": ("repair", "Recover a crash-damaged transcript, losing nothing."),
    "doctor": ("doctor", "Why a session is missing from /resume, and the fix."),
    "compact": ("compact", "Summarise and truncate a session to a token budget."),
    "fork": ("fork", "Branch a session, optionally at a message, with fresh ids."),
    "resume": ("resume", "Continue a session headlessly through the Anthropic API."),
    "chat": ("chat", "Continue a session interactively."),
    "ls": ("ls", "List sessions, newest first."),
    "show": ("show", "Show a session's conversation."),
    "stats": ("stats", "Tokens, cost, tools and turns of sessions."),
    "search": ("search", "Search the text of sessions."),
    "rename": ("manage", "Set a session's title."),
    "tag": ("manage", "Tag a session (an empty tag clears it)."),
    "delete": ("manage", "Delete a session with its subagents and file history."),
    "redact": ("redact", "Find and replace secrets in a session."),
    "export": ("bundle", "Pack a session into a portable archive."),
    "import": ("bundle", "Unpack a session archive into this machine's config dir."),
    "rewind": ("rewind", "Restore files (and optionally the conversation) to a message."),
    "store": ("store", "Keep sessions in a database (SQLite, PostgreSQL): push, pull, log."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return [n for n in COMMANDS if self._available(n)]

    @staticmethod
    def _available(name: str) -> bool:
        mod = COMMANDS[name][0]
        return importlib.util.find_spec(f"{__name__}.{mod}") is not None

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if args and self.get_command(ctx, name) is None and not name.startswith("-"):
            import difflib

            close = difflib.get_close_matches(name, self.list_commands(ctx), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            ctx.fail(f"no such command '{name}'{hint}")
        return super().resolve_command(ctx, args)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS or not self._available(cmd_name):
            return None
        mod = importlib.import_module(f"{__name__}.{COMMANDS[cmd_name][0]}")
        cmd = getattr(mod, cmd_name.replace("-", "_") + "_command")
        assert isinstance(cmd, click.Command)
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(n, COMMANDS[n][1]) for n in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="transcript-tools", prog_name="tt")
def cli() -> None:
    """tt: read, check, repair, shrink, branch and continue Claude Code sessions.

    Sessions are named by path, by id, or by an unambiguous id prefix; they are looked
    up under $CLAUDE_CONFIG_DIR/projects (default ~/.claude/projects).

    Exit codes: 0 ok, 1 findings, 2 usage, 3 not found, 4 unreadable or too large,
    5 API or credentials, 6 write failed.
    """


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI and turn errors into exit codes (the only place that exits)."""
    code: Any
    args = sys.argv[1:] if argv is None else argv
    # A record orjson reads may nest 1,024 levels deep (a tool's JSON output); the
    # walkers that rewrite or search records (redaction, the standard encoder that writes
    # what orjson cannot) take a frame or two a level, past Python's default limit of 1,000.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4 * MAX_JSON_DEPTH))
    if not args:
        # Bare ``tt``: the help, once, on stdout (click would make it a usage error).
        with cli.make_context("tt", ["--help"], resilient_parsing=True) as ctx:
            click.echo(ctx.get_help())
        sys.exit(0)
    try:
        code = cli.main(args=argv, prog_name="tt", standalone_mode=False)
    except click.exceptions.Exit as e:
        code = e.exit_code
    except SystemExit as e:
        # click turns EPIPE (tt ls | head) into exit 1 after wrapping stdout in its
        # (private, renamed across versions) PacifyFlushWrapper; a reader that went
        # away is not a failure of ours.
        code = 0 if type(sys.stdout).__name__.endswith("PacifyFlushWrapper") else e.code
    except click.UsageError as e:
        # One line, not click's four: what is wrong, then where the usage is.
        where = e.ctx.command_path if e.ctx is not None else "tt"
        # click reports an option missing its value (`tt resume ID -p`) from the group's
        # context: the command is still the first argument when it names one.
        if where == "tt" and args and args[0] in COMMANDS:
            where = f"tt {args[0]}"
        click.echo(f"tt: {e.format_message()}  (see '{where} --help')", err=True)
        code = 2
    except click.Abort:
        click.echo("tt: aborted", err=True)
        code = 130
    except click.ClickException as e:
        e.show()
        code = e.exit_code
    except TTError as e:
        click.echo(f"tt: {e}", err=True)
        code = e.exit_code
    except KeyboardInterrupt:
        click.echo("tt: interrupted", err=True)
        code = 130
    except BrokenPipeError:
        # The reader of our stdout went away (tt ls | head): not an error of ours.
        _drop_stdout()
        code = 0
    except OSError as e:
        # Every file tt reads or writes turns its OSError into a TTError where it happens;
        # what reaches here is the output itself failing (a full disk behind a redirect).
        _drop_stdout()
        click.echo(f"tt: cannot write the output ({e.strerror or e})", err=True)
        code = 6
    sys.exit(code if isinstance(code, int) else 0)


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so what is still buffered for it goes nowhere quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def run() -> NoReturn:
    """The console script (``tt``, ``python -m transcript_tools``): `main`, then a quick exit.

    A command that loaded a large session leaves millions of small objects behind; the
    interpreter's teardown frees them one by one and runs a last full collection, about
    0.1 s after a 50 MB resume (a sixth of the run) for nothing. Everything tt writes goes
    through ``with`` blocks or is flushed record by record, so once stdout and stderr are
    flushed no work is left and the process ends at once (commands may leave their
    largest results to it: `common.leave_to_exit`). `main` itself exits normally: tests
    call it in-process.
    """
    from . import common

    common.quick_exit = True
    code: Any = 0
    try:
        main()
    except SystemExit as e:
        code = e.code
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        pass  # the reader went away (tt ls | head), or stdout was closed: nothing to flush to
    except OSError as e:  # a full disk behind a redirect, say: the output is incomplete
        code = 6
        try:
            sys.stderr.write(f"tt: cannot write the output ({e.strerror})\n")
        except OSError:
            pass
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code if isinstance(code, int) else 0)  # as `main`: its codes are ints
