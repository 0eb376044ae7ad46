"""The console script's last step (`cli.run`): output flushed, exit code kept, no traceback,
and the process ended without tearing the heap down."""

from __future__ import annotations

import os
import subprocess
from functools import partial
from pathlib import Path

import orjson
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


def test_a_record_nested_as_deep_as_orjson_reads_is_no_traceback(tmp_path: Path) -> None:
    # A tool's JSON output can nest deep; orjson reads 1,024 levels. Every command takes such
    # a record: the ones that rewrite or search records walk it a frame or two a level, past
    # Python's default recursion limit (fork, redact and export ended in a RecursionError).
    from transcript_tools.model.lines import MAX_JSON_DEPTH

    src = (
        REAL / "claude-config-2.1.332/projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
    )
    lines = src.read_bytes().splitlines(keepends=True)
    boundary = next(i for i, ln in enumerate(lines) if b'"compact_boundary"' in ln)
    # One in the history before the compact boundary (beside a message's content), one in
    # the input of the last call (after it: what a resume sends and a compaction keeps).
    first = next(i for i, ln in enumerate(lines) if b'"toolUseResult"' in ln)
    last = max(i for i, ln in enumerate(lines) if b'"type":"tool_use"' in ln)
    assert first < boundary < last
    deeps = []
    for at, key, levels in ((first, b'"content":', 2), (last, b'"input":{', 5)):
        inner = MAX_JSON_DEPTH - levels  # the levels around it: record, message, (content, block, input)
        deep = b"[" * inner + b"]" * inner
        if key == b'"content":':  # beside the message's content
            grown = lines[at].replace(key, b'"odd":' + deep + b"," + key, 1)
        else:  # first in the call's input (an empty object takes no comma)
            after = lines[at][lines[at].index(key) + len(key) :][:1]
            grown = lines[at].replace(key, key + b'"odd":' + deep + (b"" if after == b"}" else b","), 1)
        assert orjson.loads(grown)  # as deep as orjson reads
        with pytest.raises(orjson.JSONDecodeError):  # one level more is no JSON to orjson
            orjson.loads(grown.replace(deep, b"[" + deep + b"]"))
        lines[at] = grown
        deeps.append(deep)
    config = tmp_path / "claude"
    path = config / "projects" / "-home-dev-demo-app" / src.name
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(lines))
    f = str(path)
    runs = [
        ("validate", f),
        ("show", f),
        ("show", "--json", f),
        ("stats", f),
        ("search", "-a", "hello"),
        ("ls", "-a"),
        ("resume", "--dry-run", f),
        ("resume", "--dry-run", "--json", f),
        ("repair", "--dry-run", f),
        ("compact", "--dry-run", f),
        ("compact", f, "--keep-tokens", "3000", "--even-if-larger", "-o", str(tmp_path / "compacted.jsonl")),
        ("redact", f, "-o", str(tmp_path / "redacted.jsonl")),
        ("export", f, "-o", str(tmp_path / "bundle.zip")),
        ("fork", f, "-o", str(tmp_path / "forked.jsonl")),
    ]
    for args in runs:
        done = cli.tt(*args, config=config)
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr, args
    sent = cli.tt("resume", "--dry-run", "--json", f, config=config).stdout
    assert deeps[1].decode() in sent  # the request carries the call's input whole
    assert deeps[0] in (tmp_path / "forked.jsonl").read_bytes()  # written back whole
    assert deeps[1] in (tmp_path / "compacted.jsonl").read_bytes()  # kept verbatim
