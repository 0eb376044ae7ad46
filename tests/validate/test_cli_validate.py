"""`tt validate` wiring: exit codes, --json shape, one clear line for bad input."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import tt, tt_env
from tests.support.paths import CONFIG_332, REAL, ROOT
from tests.support.trees import stage

DAMAGED = ROOT / "fixtures" / "damaged"
S332 = REAL / "claude-config-2.1.332/projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"


def test_clean_session_exits_0() -> None:
    r = tt("validate", str(S332))
    assert r.returncode == 0, r.stderr
    assert "0 error(s)" in r.stdout


def test_damaged_exits_1_with_codes_and_lines() -> None:
    r = tt("validate", str(DAMAGED / "torn-tail+fused-records+nul-run+dangling-parent.jsonl"))
    assert r.returncode == 1
    for code in ("torn-tail", "fused-records", "nul-run", "dangling-parent"):
        assert code in r.stdout
    assert r.stderr == ""


def test_json_shape() -> None:
    r = tt("validate", "--json", str(DAMAGED / "nul-run.jsonl"))
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["errors"] == 1
    (f,) = doc["files"]
    (d,) = f["diagnostics"]
    assert d == {
        "code": "nul-run",
        "family": "line",
        "severity": "error",
        "path": str(DAMAGED / "nul-run.jsonl"),
        "line": 65,
        "offset": d["offset"],
        "uuid": None,
        "message": "a run of 300 NUL bytes",
        "fix": "quarantine-bytes",
    }


@pytest.mark.parametrize(
    "setup,code,needle",
    [
        ("missing", 3, "no such file"),
        ("empty", 4, "empty file"),
        ("random", 4, "not a transcript"),
        ("emptydir", 3, "no .jsonl transcripts"),
        ("noargs", 2, "name a file"),
        ("badid", 3, "no session"),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path: Path, setup: str, code: int, needle: str) -> None:
    args: list[str]
    if setup == "missing":
        args = [str(tmp_path / "nope.jsonl")]
    elif setup == "empty":
        (tmp_path / "e.jsonl").write_bytes(b"")
        args = [str(tmp_path / "e.jsonl")]
    elif setup == "random":
        (tmp_path / "r.jsonl").write_bytes(os.urandom(5000).replace(b"{", b"x"))
        args = [str(tmp_path / "r.jsonl")]
    elif setup == "emptydir":
        (tmp_path / "d").mkdir()
        args = [str(tmp_path / "d")]
    elif setup == "noargs":
        args = []
    else:
        args = ["deadbeef"]
    r = tt("validate", *args, env={"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")})
    assert r.returncode == code, (r.stdout, r.stderr)
    assert needle in r.stderr
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) <= 3


def test_session_id_validates_main_and_subagents_and_all(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    stage(CONFIG_332, cfg)
    r = tt("validate", "--json", "4cd0c8e6", env={"CLAUDE_CONFIG_DIR": str(cfg)})
    assert r.returncode == 0, r.stderr
    names = [Path(f["path"]).name for f in json.loads(r.stdout)["files"]]
    assert names == ["4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl", "agent-a57f9afd470043d69.jsonl"]
    r = tt("validate", "--all", env={"CLAUDE_CONFIG_DIR": str(cfg)})
    assert r.returncode == 0 and "2 file(s) checked" in r.stdout


def test_python_m_works_like_tt() -> None:
    r = tt("--help")
    assert r.returncode == 0 and "validate" in r.stdout


# --- a file that is not a transcript: one rule, whether named alone or found in a folder ------

OTHER_TOOL = ROOT / "fixtures" / "other-tools" / "gemini-cli-chat-pretty-printed.jsonl"


def test_another_tools_pretty_printed_session_named_alone_is_not_a_transcript() -> None:
    r = tt("validate", str(OTHER_TOOL))
    assert r.returncode == 4, (r.stdout, r.stderr)
    assert r.stderr.strip() == f"tt: {OTHER_TOOL}: pretty-printed JSON; this is not a transcript"
    assert r.stdout == ""


def test_the_same_file_in_a_folder_is_counted_apart_not_as_errors(tmp_path: Path) -> None:
    # As an archive of agent sessions keeps them: another agent's beside Claude Code's.
    shutil.copy(OTHER_TOOL, tmp_path / OTHER_TOOL.name)
    shutil.copy(S332, tmp_path / S332.name)
    r = tt("validate", str(tmp_path))
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert r.stdout.splitlines()[-1] == "2 file(s) checked: 0 error(s), 0 warning(s); 1 not a transcript"
    assert "not a transcript (pretty-printed JSON)" in r.stdout
    for code in ("truncated-record", "garbage", "torn-tail"):
        assert code not in r.stdout
    doc = json.loads(tt("validate", "--json", str(tmp_path)).stdout)
    assert (doc["errors"], doc["warnings"], doc["not_transcripts"]) == (0, 0, 1)
    real, other = sorted(doc["files"], key=lambda f: Path(f["path"]).name)  # 4cd0c8e6… before gemini…
    assert (other["not_transcript"], other["diagnostics"], other["errors"]) == ("pretty-printed JSON", [], 0)
    assert real["not_transcript"] is None and real["entries"] > 0


def test_a_folder_with_a_real_error_and_another_tools_file_still_exits_1(tmp_path: Path) -> None:
    shutil.copy(OTHER_TOOL, tmp_path / OTHER_TOOL.name)
    shutil.copy(DAMAGED / "nul-run.jsonl", tmp_path / "nul-run.jsonl")
    r = tt("validate", "-q", str(tmp_path))
    assert r.returncode == 1
    assert (
        r.stdout.strip()
        == "2 file(s) checked: 1 error(s), 0 warning(s); 1 file(s) with errors; 1 not a transcript"
    )


def test_other_commands_name_it_the_same_way() -> None:
    r = tt("show", str(OTHER_TOOL))
    assert r.returncode == 4 and "pretty-printed JSON; this is not a transcript" in r.stderr


def _mixed_folder(tmp_path: Path) -> Path:
    """A torn session (an error) beside a clean one holding a record type of the future (a warning)."""
    d = tmp_path / "mixed"
    d.mkdir()
    shutil.copy(DAMAGED / "torn-tail.jsonl", d / "torn-tail.jsonl")
    future = b'{"type":"some-future-record","sessionId":"4cd0c8e6-36cd-4af9-9a2d-9191b504fada","uuid":"zz"}\n'
    (d / S332.name).write_bytes(S332.read_bytes() + future)
    return d


def test_many_files_get_a_table_by_code_and_an_errors_only_view(tmp_path: Path) -> None:
    d = _mixed_folder(tmp_path)
    r = tt("validate", str(d))
    assert r.returncode == 1
    out = r.stdout.splitlines()
    at = out.index(next(line for line in out if line.strip() == "by code"))
    rows = [line.split() for line in out[at + 2 : at + 4]]
    assert rows == [["torn-tail", "error", "1", "1"], ["unknown-type", "warning", "1", "1"]]
    errors = tt("validate", str(d), "--errors")
    assert "unknown-type" not in errors.stdout and "4cd0c8e6" not in errors.stdout
    assert "torn-tail" in errors.stdout and errors.returncode == 1
    doc = json.loads(tt("validate", str(d), "--errors", "--json").stdout)
    assert [Path(f["path"]).name for f in doc["files"]] == ["torn-tail.jsonl"]
    assert doc["by_code"] == {
        "torn-tail": {"severity": "error", "count": 1, "files": 1},
        "unknown-type": {"severity": "warning", "count": 1, "files": 1},
    }
    assert (doc["errors"], doc["warnings"]) == (1, 1)  # the totals still count everything


def test_damaged_fixtures_by_code(tmp_path: Path) -> None:
    # Each fixture is named for what it holds; the fused record's child also loses its parent,
    # and the combined file has two dangling parents (fixtures/README.md).
    doc = json.loads(tt("validate", str(DAMAGED), "--json").stdout)
    files = {c: v["files"] for c, v in doc["by_code"].items()}
    assert files == {"dangling-parent": 3, "fused-records": 2, "nul-run": 2, "torn-tail": 2}
    assert doc["by_code"]["dangling-parent"]["count"] == 4


def test_project_and_all_scope_like_ls(tmp_path: Path) -> None:
    config = tmp_path / "config"
    stage(CONFIG_332, config)
    env = {"CLAUDE_CONFIG_DIR": str(config)}
    by_all = json.loads(tt("validate", "-a", "--json", env=env).stdout)
    by_project = json.loads(tt("validate", "-p", "-home-dev-demo-app", "--json", env=env).stdout)
    names = sorted(Path(f["path"]).name for f in by_all["files"])
    assert names == sorted(Path(f["path"]).name for f in by_project["files"])
    assert "4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl" in names and any(
        n.startswith("agent-") for n in names
    )


# --- the summary line without rich ---------------------------------------------------------

RICH_PROBE = """
import sys
from transcript_tools.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(sorted(m for m in sys.modules if m == "rich" or m.startswith("rich.")), file=sys.stderr)
"""


def _rich_rendering(reports: list, **kw: bool) -> str:
    """What `views.diagnostics.render_reports` prints through rich to a pipe."""
    import io

    from rich.console import Console

    from transcript_tools.cli.common import PIPE_WIDTH
    from transcript_tools.views.diagnostics import render_reports

    out = io.StringIO()
    con = Console(file=out, width=PIPE_WIDTH, highlight=False, soft_wrap=False)
    assert not con.is_terminal
    render_reports(con, reports, **kw)
    return out.getvalue()


@pytest.mark.parametrize(
    "targets,args",
    [
        ((S332,), ("-q",)),  # clean, with its subagent: two files
        ((S332,), ()),  # the same without -q: still only the summary line
        ((DAMAGED / "nul-run.jsonl",), ("-q",)),  # errors
        ((REAL / "v1.0.51-response-line-rewritten-as-root.jsonl",), ("-q",)),  # a warning
        ((REAL / "v1.0.51-response-line-rewritten-as-root.jsonl",), ()),  # ... listed
        ((REAL / "v1.0.71-summaries-sdk-ends-mid-tool.jsonl",), ("-q", "--errors")),
        ((DAMAGED, OTHER_TOOL.parent), ("-q",)),  # many files, one not a transcript
        ((DAMAGED / "torn-tail+fused-records+nul-run+dangling-parent.jsonl",), ()),  # a report
        ((DAMAGED / "torn-tail+fused-records+nul-run+dangling-parent.jsonl",), ("--errors",)),
        ((DAMAGED,), ()),  # many files: tables, rich draws them
        (("[bold]:smile:-x.jsonl",), ()),  # markup and an emoji code in the path: printed as is
        (("café-report.jsonl",), ()),  # not ASCII: rich prints it
    ],
)
def test_what_tt_writes_itself_is_what_rich_prints(
    targets: tuple[str | Path, ...], args: tuple[str, ...], tmp_path: Path
) -> None:
    from transcript_tools.validate.files import files_named, validate_path

    if isinstance(targets[0], str):  # a damaged file under that name
        dest = tmp_path / targets[0]
        dest.write_bytes((DAMAGED / "nul-run.jsonl").read_bytes())
        targets = (dest,)
    r = tt("validate", *args, *map(str, targets))
    assert r.returncode in (0, 1), r.stderr
    reports = [validate_path(p) for p in files_named(tuple(map(str, targets)), False, None, True)]
    expected = _rich_rendering(reports, quiet="-q" in args, errors_only="--errors" in args)
    assert r.stdout == expected
    assert expected.endswith(" checked: " + expected.split(" checked: ")[-1])  # the summary is last


def test_validate_of_one_file_to_a_pipe_does_not_import_rich() -> None:
    env = tt_env()
    one = [str(DAMAGED / "nul-run.jsonl")]
    for args, imported in (
        (["-q", *one], False),
        (one, False),
        (["-q", "--json", *one], False),
        ([*one, str(DAMAGED / "torn-tail.jsonl")], True),  # several files: a table
        (["-q", *one, str(DAMAGED / "torn-tail.jsonl")], False),  # (more than 3: a progress bar)
    ):
        r = subprocess.run(
            [sys.executable, "-c", RICH_PROBE, "validate", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert (r.stderr.strip().splitlines()[-1] != "[]") is imported, (args, r.stderr)


@pytest.mark.parametrize(
    "env,plain",
    [
        ({}, True),
        ({"TT_WIDTH": "65"}, False),  # rich would wrap the line: rich prints it
        ({"TT_WIDTH": "66"}, True),  # exactly as wide as the line
        ({"FORCE_COLOR": "1", "NO_COLOR": ""}, False),  # rich would colour it
        ({"FORCE_COLOR": "", "NO_COLOR": ""}, True),  # an empty FORCE_COLOR forces nothing (rich: the same)
        ({"TTY_COMPATIBLE": "1", "NO_COLOR": ""}, False),
    ],
)
def test_tt_writes_the_summary_itself_only_where_rich_would_print_it_as_is(
    env: dict[str, str], plain: bool
) -> None:
    line = "1 file(s) checked: 1 error(s), 0 warning(s); 1 file(s) with errors"
    assert len(line) == 66
    # rich, to a pipe, prints the line as is at 66 columns and wraps it at 65.
    import io

    from rich.console import Console

    for width, same in ((66, True), (65, False)):
        out = io.StringIO()
        Console(file=out, width=width, highlight=False, soft_wrap=False, force_terminal=False).print(
            f"[red]{line}[/]"
        )
        assert (out.getvalue() == line + "\n") is same
    r = tt("validate", "-q", str(DAMAGED / "nul-run.jsonl"), width=None, env=env)
    assert r.returncode == 1, r.stderr
    if plain:
        assert r.stdout == line + "\n"
    else:
        assert r.stdout != line + "\n" and "1 file(s) checked" in r.stdout.replace("\n", " ")


def test_the_table_of_many_files_names_them_from_their_common_folder(tmp_path: Path) -> None:
    # A new user's `tt validate -a` at 120 columns wrapped every absolute path over two or
    # three lines while the status column stood empty.
    deep = tmp_path / "projects" / "-home-someone-work-a-project-with-a-long-name"
    deep.mkdir(parents=True)
    names = ["torn-tail.jsonl", "nul-run.jsonl", "dangling-parent.jsonl"]
    for n in names:
        shutil.copy(
            DAMAGED / n, deep / ("0a1b2c3d-0000-4000-8000-00000000000" + str(names.index(n)) + "-" + n)
        )
    r = tt("validate", str(tmp_path / "projects"), width=120)
    assert r.returncode == 1, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].strip() == f"files under {deep}"
    rows = [ln for ln in lines if "0a1b2c3d-" in ln and ln.startswith(" ")]
    assert len(rows) == 3  # one line each: no name folded
    for ln in rows:
        assert ln.split()[0].startswith("0a1b2c3d-0000-4000-8000-00000000000") and str(tmp_path) not in ln
