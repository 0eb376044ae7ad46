"""One vocabulary of flags across commands (CONTRIBUTING.md, "Flags"): read from every
command's own options, so a new command or option that breaks a convention fails here."""

from __future__ import annotations

import click
import pytest

from transcript_tools.cli import COMMANDS, cli

#: A short flag means one long option everywhere.
SHORT = {
    "-o": "--output",
    "-a": "--all",
    "-p": "--project",
    "-n": "--limit",
    "-c": "--continue",
    "-y": "--yes",
    "-q": "--quiet",
    "-h": "--help",
    "-v": "--verbose",
    "-e": "--regex",
    "-i": "--ignore-case",
    "-s": "--case-sensitive",
}
#: The one exception, on purpose: `tt resume -p` is `claude -p`, the prompt.
EXCEPTIONS = {("resume", "-p"): "--prompt"}
#: A long option is a flag everywhere, or takes a value everywhere (with the same metavar).
FLAGS = {
    "--json",
    "--dry-run",
    "--in-place",
    "--force",
    "--no-backup",
    "--all",
    "--continue",
    "--yes",
    "--quiet",
    "--no-subagents",
}
VALUES = {
    "--output": None,
    "--project": "DIR",
    "--limit": None,
    "--at": "UUID|N",
    "--max-bytes": None,
    "--model": None,
    "--store": "URL",
    "--cwd": "DIR",
    "--add-dir": "DIR",
}
#: Commands that change or create files, and so have --dry-run.
WRITERS = {
    "repair",
    "compact",
    "fork",
    "resume",
    "rename",
    "tag",
    "delete",
    "redact",
    "export",
    "import",
    "rewind",
}


def _command(name: str) -> click.Command:
    ctx = click.Context(cli)
    cmd = cli.get_command(ctx, name)
    assert cmd is not None, name
    return cmd


def _options(name: str) -> list[click.Option]:
    return [p for p in _command(name).params if isinstance(p, click.Option)]


def _names(name: str) -> set[str]:
    return {n for o in _options(name) for n in o.opts}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_json(name: str) -> None:
    assert "--json" in _names(name)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_short_flag_means_one_long_option(name: str) -> None:
    for o in _options(name):
        shorts = [n for n in o.opts if not n.startswith("--")]
        longs = [n for n in o.opts if n.startswith("--")]
        for s in shorts:
            assert s in SHORT, f"tt {name}: {s} is not in the shared list (add it, or use a long option)"
            want = EXCEPTIONS.get((name, s), SHORT[s])
            assert want in longs, f"tt {name}: {s} is {longs}, elsewhere {SHORT[s]}"
    # And a long option of the list has its short form wherever it appears.
    for o in _options(name):
        for short, long in SHORT.items():
            if long in o.opts and long != "--help":
                assert short in o.opts, f"tt {name}: {long} without {short}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_long_option_is_a_flag_or_takes_a_value_everywhere(name: str) -> None:
    for o in _options(name):
        for n in o.opts:
            if n in FLAGS:
                assert o.is_flag, f"tt {name}: {n} takes a value here, elsewhere it is a flag"
            if n in VALUES:
                assert not o.is_flag, f"tt {name}: {n} is a flag here, elsewhere it takes a value"
                if VALUES[n] is not None:
                    assert o.metavar == VALUES[n], f"tt {name}: {n} {o.metavar}, elsewhere {VALUES[n]}"


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_every_command_that_writes_has_a_dry_run(name: str) -> None:
    assert "--dry-run" in _names(name)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_in_place_comes_with_force_and_no_backup(name: str) -> None:
    names = _names(name)
    if "--in-place" in names:
        assert {"--force", "--no-backup", "--dry-run", "--output"} <= names


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_all_and_project_come_together(name: str) -> None:
    names = _names(name)
    assert ("--all" in names) == ("--project" in names), f"tt {name}: -a/--all and -p/--project go together"


def test_the_renamed_options_are_gone() -> None:
    # fork --at and rewind --at name the same thing; --keep is a message (compact), not a backup.
    assert "--at" in _names("fork") and "--at" in _names("rewind") and "--to" not in _names("rewind")
    assert (
        "--keep" in _names("compact")
        and "--keep" not in _names("rewind")
        and "--no-backup" in _names("rewind")
    )
    # -n is --limit in ls and search alike.
    assert "-n" in _names("ls") and "-n" in _names("search")


#: Commands that take a session but no -c, each for a reason.
NO_CONTINUE = {
    "delete": "deleting is only ever of a session named in full",
    "rename": "SESSION is followed by the title, both positional",
    "tag": "SESSION is followed by the tag, both positional",
}


def test_every_command_that_takes_a_session_offers_continue() -> None:
    # Found trying tt as a new user: -c worked on show and resume but not on validate,
    # repair, redact or export.
    ctx = click.Context(cli)
    missing = []
    for name in cli.list_commands(ctx):
        cmd = cli.get_command(ctx, name)
        assert cmd is not None
        args = [p.name for p in cmd.params if isinstance(p, click.Argument)]
        opts = {o for p in cmd.params if isinstance(p, click.Option) for o in p.opts}
        if args and args[0] in ("session", "target", "targets") and name not in NO_CONTINUE:
            if "-c" not in opts:
                missing.append(name)
    assert missing == []


#: Old spellings kept working (scripts written against them) but shown nowhere: each is the
#: documented option's former name (round 2 of issue 18: `rewind --backup` where the others
#: say --no-backup, `import --max-size` where the others say --max-bytes).
ALIASES = {("rewind", "--backup"): "--no-backup", ("import", "--max-size"): "--max-bytes"}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_only_hidden_options_are_old_spellings_of_documented_ones(name: str) -> None:
    from click.testing import CliRunner

    shown = CliRunner().invoke(cli, [name, "--help"]).output
    for o in _options(name):
        for n in o.opts:
            if o.hidden:
                assert (name, n) in ALIASES, f"tt {name}: {n} is hidden and is no known old spelling"
                assert ALIASES[name, n] in _names(name) and f"{n} " not in shown
            else:
                assert (name, n) not in ALIASES


def test_doctor_names_sessions_with_the_options_of_validate() -> None:
    # Found trying tt as a new user: `tt doctor --all` was exit 2; -a, -p and -c are now
    # the same options as validate's (same names, metavar, help and kind).
    def opts(name: str) -> dict[str, tuple[object, ...]]:
        return {
            o.opts[-1]: (tuple(o.opts), o.metavar, o.help, o.is_flag)
            for o in _options(name)
            if {"-a", "-p", "-c"} & set(o.opts)
        }

    assert opts("doctor") == opts("validate") and len(opts("doctor")) == 3


@pytest.mark.parametrize(
    "command",
    [
        ["show"],
        ["export", "--dry-run"],
        ["fork", "--dry-run"],
        ["compact", "--dry-run"],
        ["rewind", "--list"],
    ],
    ids=lambda c: c[0],
)
def test_a_one_session_command_without_a_session_or_c_is_a_usage_error(
    command: list[str], tmp_path: object
) -> None:
    # New-user pass: show and export said "name a session … or -c" (exit 2) while fork,
    # compact and rewind took whichever session was latest here, unasked (a bare `tt fork`
    # wrote a fork of it). One rule: SESSION, or -c for the latest.
    from pathlib import Path

    from tests.support.cli import tt
    from tests.support.paths import CONFIG_332

    cwd = Path(str(tmp_path))
    r = tt(*command, config=CONFIG_332, cwd=cwd)
    assert r.returncode == 2 and "name a session" in r.stderr and "-c" in r.stderr, r.stderr
