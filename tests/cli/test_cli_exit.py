"""The console script's last step (`cli.run`): output flushed, exit code kept, no traceback,
and the process ended without tearing the heap down."""

from __future__ import annotations

import os
import subprocess
from functools import partial
from pathlib import Path

import pytest

from tests.support import cli
from tests.support.paths import REAL
from transcript_tools.cli import common

BIG = REAL / "v2.1.237-attachments-chained-parallel-tools.jsonl"


tt = partial(cli.tt_popen, width=None)


def test_a_reader_that_goes_away_is_not_an_error() -> None:
    # tt show ... | head -c 100: megabytes of output, the reader leaves after 100 bytes.
    with tt("show", str(BIG), "--json", stdout=subprocess.PIPE, stderr=subprocess.PIPE) as p:
        assert p.stdout is not None and p.stderr is not None
        assert len(p.stdout.read(100)) == 100
        p.stdout.close()
        err = p.stderr.read().decode()
        assert p.wait(timeout=120) == 0, err
    assert "Traceback" not in err and "Exception ignored" not in err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux) to fail a write")
def test_output_that_cannot_be_written_is_exit_6_in_one_line() -> None:
    with (
        open("/dev/full", "wb") as full,
        tt("show", str(BIG), "--json", stdout=full, stderr=subprocess.PIPE) as p,
    ):
        assert p.stderr is not None
        err = p.stderr.read().decode()
        code = p.wait(timeout=120)
    assert code == 6, err
    assert "tt: cannot write the output" in err and "Traceback" not in err


def test_the_exit_code_is_mains(tmp_path: Path) -> None:
    # Usage (2), not found (3), findings (1), ok (0): as `main` gives them in-process.
    cases = [
        (["resume", "--max-turns", "0", "x"], 2),
        (["show", str(tmp_path / "nope.jsonl")], 3),
        (["--version"], 0),
    ]
    for args, want in cases:
        with tt(*args, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as p:
            _out, err = p.communicate(timeout=120)
        assert p.returncode == want, (args, err)
        assert b"Traceback" not in err


def test_leave_to_exit_keeps_nothing_in_process() -> None:
    # In-process (tests, library callers) memory is returned as usual.
    assert common.quick_exit is False
    before = len(common._left)
    common.leave_to_exit(object())
    assert len(common._left) == before


def test_columns_sets_the_width_and_decorations_stay_narrow_in_a_pipe() -> None:
    # Found trying tt as a new user: to a pipe, `tt show`'s rules and `tt stats`' bars were
    # 4096 columns wide and COLUMNS was ignored.
    from tests.support.cli import tt as run
    from tests.support.paths import CONFIG_332
    from transcript_tools.views.layout import DECOR_WIDTH

    show = run("show", "4cd0", config=CONFIG_332, width=None)
    assert show.returncode == 0, show.stderr
    rules = [ln for ln in show.stdout.splitlines() if ln.count("─") > 20]
    assert rules and all(len(ln) <= DECOR_WIDTH for ln in rules)
    stats = run("stats", "4cd0", config=CONFIG_332, width=None)
    assert stats.returncode == 0 and max(len(ln) for ln in stats.stdout.splitlines()) < 400
    narrow = run("ls", "-a", config=CONFIG_332, width=None, env={"COLUMNS": "60"})
    assert narrow.returncode == 0 and max(len(ln) for ln in narrow.stdout.splitlines()) <= 60
    wide = run("ls", "-a", config=CONFIG_332, width=None)
    assert max(len(ln) for ln in wide.stdout.splitlines()) > 60  # to a pipe: not wrapped
