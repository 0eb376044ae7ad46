"""`tt ls`, `tt show`, `tt stats`, `tt search`: wiring, exit codes, --json shapes, damage.

Each test runs the real command line in a subprocess on a temp config dir holding real
fixtures (and damaged copies of one), as a user would.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from functools import partial
from pathlib import Path

import pytest

from tests import damage
from tests.support import cli
from tests.support.paths import CONFIG_332, REAL
from tests.support.trees import stage

S332_DIR = REAL / "claude-config-2.1.332"
S332_ID = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
REWIND_DIR = REAL / "claude-config-2.1.332-rewind-resume-session-at"


tt = partial(cli.tt, width=160, timeout=180)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """Two real config dirs merged, plus a project of damaged copies of one session."""
    cfg = tmp_path / "claude"
    stage(S332_DIR / "projects", cfg / "projects")
    shutil.copytree(REWIND_DIR / "projects", cfg / "projects", dirs_exist_ok=True)
    bad = cfg / "projects" / "-home-dev-damaged"
    bad.mkdir()
    src = (S332_DIR / "projects/-home-dev-demo-app" / f"{S332_ID}.jsonl").read_bytes()
    for kind in (
        "torn-tail",
        "fused-records",
        "nul-run",
        "garbage",
        "not-object",
        "invalid-utf8",
        "cycle",
        "dangling-parent",
    ):
        (bad / f"{uuid.uuid5(uuid.NAMESPACE_URL, kind)}.jsonl").write_bytes(damage.KINDS[kind](src).data)
    return cfg


def test_ls_json_shape_and_order(config: Path) -> None:
    r = tt("ls", "--all", "--json", config=config)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    rows = doc["sessions"]
    assert len(rows) == 10 and doc["checked"] is False
    assert [x["modified_ms"] for x in rows] == sorted((x["modified_ms"] for x in rows), reverse=True)
    one = next(x for x in rows if x["session_id"] == S332_ID)
    assert one["title"] and one["title_source"] == "last-prompt"
    assert one["subagents"] == 1 and one["model"] == "claude-opus-5-5" and one["health"] is None
    assert {
        "messages",
        "compactions",
        "counts_exact",
        "size",
        "path",
        "project",
        "skipped",
        "hidden",
    } <= one.keys()
    torn = next(x for x in rows if x["session_id"] == str(uuid.uuid5(uuid.NAMESPACE_URL, "torn-tail")))
    assert [s["code"] for s in torn["skipped"]] == ["torn-tail"]


def test_ls_check_gives_health_and_exit_1_on_damage(config: Path) -> None:
    r = tt("ls", "--all", "--check", "--json", config=config)
    assert r.returncode == 1, r.stderr
    rows = {x["session_id"]: x for x in json.loads(r.stdout)["sessions"]}
    assert rows[S332_ID]["health"] == "clean" and rows[S332_ID]["counts_exact"]
    assert rows[str(uuid.uuid5(uuid.NAMESPACE_URL, "fused-records"))]["health"] == "repairable"
    assert "fused-records" in rows[str(uuid.uuid5(uuid.NAMESPACE_URL, "fused-records"))]["error_codes"]
    r = tt("ls", "--project", str(config / "projects/-home-dev-demo-app"), "--check", config=config)
    assert r.returncode == 0 and "clean" in r.stdout


def test_ls_project_of_the_current_directory(config: Path, tmp_path: Path) -> None:
    # Found by a new user: `tt ls` where no session was ever made was exit 3 while `tt ls -p`
    # on an empty project folder was "no sessions", exit 0. An empty listing is exit 0 both
    # ways; only a -p that names no folder and no directory is not found (exit 3).
    r = tt("ls", config=config, cwd=tmp_path)
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.startswith(f"no sessions for {tmp_path.resolve()} under ") and "--all" in r.stdout
    r = tt("ls", "-p", str(tmp_path), "--json", config=config)
    assert r.returncode == 0 and json.loads(r.stdout)["sessions"] == []
    (config / "projects" / "-empty-project").mkdir()
    r = tt("ls", "-p", str(config / "projects" / "-empty-project"), config=config)
    assert (r.returncode, r.stdout) == (0, "no sessions\n")
    r = tt("ls", "-p", str(tmp_path / "missing"), config=config)
    assert r.returncode == 3 and "neither a project folder" in r.stderr
    r = tt("ls", "--project", "-home-dev-demo-app", config=config)
    assert r.returncode == 0 and S332_ID[:8] in r.stdout
    # A config dir copied from another machine: the project's path there (absent here)
    # names the folder Claude Code made for it, for every command with -p.
    assert not Path("/home/dev/demo-app").exists()
    for command in (["ls"], ["stats"], ["validate", "-q"], ["doctor"]):
        r = tt(*command, "-p", "/home/dev/demo-app", config=config)
        assert r.returncode in (0, 1) and r.stderr == "", (command, r.stderr)
    assert S332_ID[:8] in tt("ls", "-p", "/home/dev/demo-app", config=config).stdout


def test_show_text_markdown_json(config: Path) -> None:
    r = tt("show", S332_ID[:8], "--full", "--no-pager", config=config)
    assert r.returncode == 0, r.stderr
    assert "Project kickoff" in r.stdout and "▶ Agent" in r.stdout and "subagent agent-" in r.stdout
    assert "compacted" in r.stdout
    r = tt("show", S332_ID, "--markdown", config=config)
    assert r.returncode == 0 and f"`{S332_ID}`" in r.stdout.split("### User")[0] and "### User" in r.stdout
    r = tt("show", S332_ID, "--json", config=config)
    doc = json.loads(r.stdout)
    assert (
        doc["session"] == S332_ID and doc["items"][0]["kind"] == "earlier" and doc["repaired_in_memory"] == []
    )
    assert tt("show", "--json", "--markdown", S332_ID, config=config).returncode == 2
    assert tt("show", "ffffffff", config=config).returncode == 3


def test_show_tree_shows_the_dead_branch(config: Path) -> None:
    sid = next((REWIND_DIR / "projects").rglob("*.jsonl")).stem
    r = tt("show", sid, "--tree", config=config)
    assert r.returncode == 0, r.stderr
    assert "dead branch" in r.stdout and "Second idea, later abandoned" in r.stdout
    doc = json.loads(tt("show", sid, "--tree", "--json", config=config).stdout)
    (d,) = doc["dead_branches"]
    assert d["fork_line"] < d["lines"][0] <= d["leaf_line"]


def test_stats_json_for_one_and_all(config: Path) -> None:
    r = tt("stats", S332_ID, "--json", config=config)
    assert r.returncode == 0, r.stderr
    one = json.loads(r.stdout)
    assert one["totals"]["calls"] > 0 and one["prices_read_on"] and one["turns"] > 0
    assert one["subagents"]["files"] == 1 and one["compactions"] == 1 and "Agent" in one["tools"]
    r = tt("stats", "--all", "--json", config=config)
    doc = json.loads(r.stdout)
    assert len(doc["sessions"]) == 10
    assert doc["total"]["totals"]["total_tokens"] <= sum(s["totals"]["total_tokens"] for s in doc["sessions"])
    # The damaged copies share the original's calls: the total counts them once.
    assert doc["total"]["totals"]["calls"] < sum(s["totals"]["calls"] for s in doc["sessions"])
    r = tt("stats", config=config)
    assert r.returncode == 3
    assert tt("stats", S332_ID, "--all", config=config).returncode == 2


def test_stats_of_many_add_the_sessions_durations_and_keep_model_ids_apart(tmp_path: Path) -> None:
    # Two copies of a real session, the second a year later, one of its calls on a model
    # whose short name is another's: the total's duration is the time in the sessions, not
    # from the first's start to the second's end; the two models keep their ids.
    src = (S332_DIR / "projects/-home-dev-demo-app" / f"{S332_ID}.jsonl").read_bytes()
    proj = tmp_path / "claude" / "projects" / "-p"
    proj.mkdir(parents=True)
    later = src.replace(b'"timestamp":"2026-', b'"timestamp":"2027-')
    lines = later.splitlines(keepends=True)
    i = next(n for n, ln in enumerate(lines) if b'"role":"assistant","model":"claude-opus-5-5"' in ln)
    # (another message id too: a call both files hold is counted once, under the first's model)
    lines[i] = lines[i].replace(b'"model":"claude-opus-5-5"', b'"model":"claude-opus-5-5-20260101"')
    lines[i] = lines[i].replace(b'"id":"msg_', b'"id":"msg_later_')
    later = b"".join(lines)
    assert later != src and b"claude-opus-5-5-20260101" in later
    (proj / f"{S332_ID}.jsonl").write_bytes(src)
    (proj / f"{uuid.UUID(int=7)}.jsonl").write_bytes(later)
    each = json.loads(tt("stats", "--all", "--json", config=tmp_path / "claude").stdout)["sessions"]
    spans = [s["duration_s"] for s in each]
    assert len(spans) == 2 and 0 < spans[0] < 86400
    r = tt("stats", "--all", config=tmp_path / "claude")
    assert r.returncode == 0, r.stderr
    from transcript_tools.views.stats import duration

    assert f"duration {duration(sum(spans))} in sessions" in r.stdout
    assert "claude-opus-5-5-20260101" in r.stdout and "claude-opus-5-5 " in r.stdout


def test_search_json_hits_and_exit_codes(config: Path) -> None:
    r = tt("search", "After compaction", "--all", "--json", "--per-session", "2", config=config)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["ignore_case"] is False
    for s in doc["sessions"]:
        assert len(s["hits"]) <= 2
        for h in s["hits"]:
            a, b = h["snippet_spans"][0]
            assert h["snippet"][a:b] == "After compaction"
    damaged = [s for s in doc["sessions"] if s["skipped"]]
    assert damaged  # a torn or fused line that could have matched is said so
    assert tt("search", "zzqqxx-nothing", "--all", config=config).returncode == 1
    assert tt("search", "(", "--regex", "--all", config=config).returncode == 2


@pytest.mark.parametrize("command", [["ls", "--all"], ["stats", "--all"], ["search", "def", "--all"]])
def test_damaged_files_do_not_crash_and_are_named(config: Path, command: list[str]) -> None:
    r = tt(*command, config=config)
    assert r.returncode in (0, 1), r.stderr
    assert "Traceback" not in r.stderr
    assert "skipped" in r.stdout


def test_show_every_damaged_copy(config: Path) -> None:
    for f in sorted((config / "projects/-home-dev-damaged").iterdir()):
        for extra in ([], ["--tree"]):
            r = tt("show", str(f), "--no-pager", *extra, config=config)
            assert r.returncode == 0, (f.name, r.stderr)
            assert "Traceback" not in r.stderr


HEAVY_PROBE = """
import sys
from transcript_tools.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(sorted(m for m in ("anthropic", "tiktoken", "httpx") if m in sys.modules), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "command", [["ls", "--all"], ["show", S332_ID], ["stats", S332_ID], ["search", "x", "--all"]]
)
def test_no_heavy_imports(config: Path, command: list[str]) -> None:
    env = {**os.environ, "NO_COLOR": "1", "CLAUDE_CONFIG_DIR": str(config)}
    r = subprocess.run(
        [sys.executable, "-c", HEAVY_PROBE, *command, "--no-pager"]
        if command[0] == "show"
        else [sys.executable, "-c", HEAVY_PROBE, *command],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.stderr.strip().splitlines()[-1] == "[]", r.stderr


def test_ls_filters_by_the_tag_and_title_tt_wrote(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    stage(CONFIG_332, cfg)

    def tt(*a: str) -> subprocess.CompletedProcess[str]:
        return cli.tt(*a, config=cfg, width=None)

    def ids(*a: str) -> list[str]:
        r = tt("ls", "--all", "--json", *a)
        assert r.returncode == 0, r.stderr
        return [s["session_id"] for s in json.loads(r.stdout)["sessions"]]

    assert tt("rename", "4cd0", "Parser rewrite").returncode == 0
    assert tt("tag", "4cd0", "exp-1").returncode == 0
    sid = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
    assert ids("--tag", "exp-1") == [sid]
    assert ids("--tag", "other") == []
    assert ids("--title", "PARSER") == [sid]
    assert ids("--title", "nothing like it") == []
    # A title with line breaks is accepted (Claude Code stores it as given), and listed on
    # one line: the row stays whole (new-user pass: it split the table).
    assert tt("rename", "4cd0", "first line\nsecond  line").returncode == 0
    r = tt("ls", "--all")
    [row] = [line for line in r.stdout.splitlines() if "4cd0c8e6" in line]
    assert "first line second line" in row


# --- what a new user meets: damaged untitled sessions, narrow screens, pipes, typos ------


def _untitled_damaged(config: Path) -> str:
    """A session the picker hides (no title: only tool traffic and an assistant answer)
    whose last line was torn by a crash."""
    sid = "d0d0d0d0-0000-4000-8000-000000000001"
    proj = config / "projects" / "-home-dev-untitled"
    proj.mkdir()
    base = {
        "sessionId": sid,
        "cwd": "/home/dev/untitled",
        "version": "2.1.332",
        "isSidechain": False,
        "userType": "external",
    }
    lines = [
        {
            **base,
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": None,
            "timestamp": "2026-11-29T10:00:00Z",
            "message": {
                "id": "msg_1",
                "role": "assistant",
                "model": "claude-opus-5-5",
                "content": [{"type": "text", "text": "hi"}],
            },
        },
    ]
    data = (
        b"".join(json.dumps(x).encode() + b"\n" for x in lines)
        + b'{"type":"user","sessionId":"'
        + sid.encode()
        + b'","mess'
    )
    (proj / f"{sid}.jsonl").write_bytes(data)
    return sid


def test_ls_lists_a_damaged_session_the_picker_would_hide(config: Path) -> None:
    sid = _untitled_damaged(config)
    r = tt("ls", "--all", "--json", config=config)
    row = next(x for x in json.loads(r.stdout)["sessions"] if x["session_id"] == sid)
    assert row["hidden"] == "no-title" and [s["code"] for s in row["skipped"]] == ["torn-tail"]
    assert sid[:8] in tt("ls", "--all", config=config).stdout


def test_ls_keeps_every_promised_column_at_80_columns(config: Path) -> None:
    r = cli.tt("ls", "--all", config=config, width=80, timeout=60)
    header = r.stdout.splitlines()[0].split()
    assert header == ["id", "title", "modified", "size", "msgs", "cmp", "sub", "model", "health"]
    assert all(len(line) <= 80 for line in r.stdout.splitlines())


def test_output_to_a_pipe_is_not_wrapped(config: Path) -> None:
    r = cli.tt("ls", "--all", config=config, width=None, drop=("TT_WIDTH", "COLUMNS"), timeout=60)
    lines = r.stdout.splitlines()
    ids = [
        x["session_id"][:8] for x in json.loads(tt("ls", "--all", "--json", config=config).stdout)["sessions"]
    ]
    # One line per session (nothing wrapped), the project column shown, the footer whole.
    assert sorted(line[:8] for line in lines[1 : 1 + len(ids)]) == sorted(ids)
    assert lines[0].split()[:3] == ["id", "project", "title"]
    assert lines[-1].startswith(f"{len(ids)} session(s)") and lines[-1].endswith(
        "(--check reads files whole)"
    )
    assert any(len(line) > 80 for line in lines)


def test_bare_tt_prints_the_help_once_and_a_typo_gets_a_suggestion(config: Path) -> None:
    r = tt(config=config)
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.count("Usage: tt") == 1 and "Commands:" in r.stdout
    typo = tt("valdate", "x", config=config)
    assert typo.returncode == 2 and typo.stdout == ""
    assert typo.stderr == "tt: no such command 'valdate'; did you mean 'validate'?  (see 'tt --help')\n"
    none = tt("zzz", config=config)
    assert none.returncode == 2 and none.stderr == "tt: no such command 'zzz'  (see 'tt --help')\n"
    # An option missing its value points at its command's help (new-user pass: tt's own).
    bare = tt("resume", "4cd0", "-p", config=config)
    assert (
        bare.returncode == 2
        and bare.stderr == "tt: Option '-p' requires an argument.  (see 'tt resume --help')\n"
    )


def test_markdown_export_is_whole_and_headed_by_the_title(config: Path) -> None:
    r = tt("show", S332_ID, "--markdown", config=config)
    assert r.returncode == 0, r.stderr
    title = json.loads(tt("ls", "--all", "--json", config=config).stdout)
    [row] = [x for x in title["sessions"] if x["session_id"] == S332_ID]
    lines = r.stdout.splitlines()
    assert lines[0] == f"# {row['title']}" and lines[2] == f"`{S332_ID}`"
    assert "more lines" not in r.stdout  # nothing folded in an export...
    folded = tt("show", S332_ID, "--markdown", "--fold", "1", config=config)
    assert "more lines" in folded.stdout  # ...unless asked for


#: The order `tt ls --help` documents, without --check (health is "?" on every row).
WAITING = ["project", "cmp", "sub", "health", "size", "msgs", "model", "modified"]


def _title_width(header: str) -> int:
    cols = header.split()
    k = cols.index("title")
    end = header.index(" " + cols[k + 1] + (" " if k + 2 < len(cols) else "")) if k + 1 < len(cols) else None
    return (len(header) if end is None else end) - header.index("title")


@pytest.mark.parametrize("width", [40, 50, 60, 70])
def test_ls_on_a_narrow_terminal_keeps_the_title_readable(config: Path, width: int) -> None:
    # New user report 2, finding 3: at COLUMNS=60 the title was 2 characters ("Lo…") while
    # model and health kept their full width. The title keeps 20 columns; others wait.
    r = cli.tt("ls", "--all", config=config, width=None, env={"COLUMNS": str(width)}, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert all(len(line) <= width for line in lines)
    header = lines[0]
    cols = header.split()
    assert cols[:2] == ["id", "title"] and _title_width(header) >= 20
    # What is gone went in the documented order.
    gone = [c for c in WAITING if c not in cols]
    assert gone == WAITING[: len(gone)]
    help_text = " ".join(cli.tt("ls", "--help").stdout.split())
    assert "title keeps at least 20 columns" in help_text


def test_ls_check_on_a_narrow_terminal_keeps_the_health(config: Path) -> None:
    r = cli.tt("ls", "--all", "--check", config=config, width=None, env={"COLUMNS": "60"}, timeout=120)
    cols = r.stdout.splitlines()[0].split()
    assert "health" in cols and "size" not in cols and _title_width(r.stdout.splitlines()[0]) >= 20


def test_stats_on_a_narrow_terminal_keeps_a_small_cost_whole() -> None:
    # New user report 2, finding 3: at COLUMNS=60 a cost under a cent read "$0.00…" (the
    # column was cut); it reads as at full width ("$0.0002" here), the other columns give way.
    path = str(REAL / "handwritten-2.1.80-2.1.220-trimmed-composite.jsonl")

    def costs(text: str) -> list[str]:
        return [ln.split()[-1] for ln in text.splitlines() if ln.split()[:1] in (["opus-5"], ["total"])]

    full = cli.tt("stats", path)
    assert full.returncode == 0, full.stderr
    assert costs(full.stdout) == ["$0.0002", "$0.0002"]
    for width in (50, 60):
        narrow = cli.tt("stats", path, width=None, env={"COLUMNS": str(width)})
        assert narrow.returncode == 0, narrow.stderr
        got = [ln.split()[-1] for ln in narrow.stdout.splitlines() if ln.startswith(("opus", "total"))]
        assert got == costs(full.stdout)
        assert all(len(ln) <= width for ln in narrow.stdout.splitlines())


def test_a_config_dir_without_projects_says_which_dir_it_read(tmp_path: Path) -> None:
    # New-user pass: "hint: set CLAUDE_CONFIG_DIR" with CLAUDE_CONFIG_DIR set.
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    r = cli.tt("ls", "--all", config=cfg)
    assert r.returncode == 3
    assert f"no Claude projects folder at {cfg / 'projects'}" in r.stderr
    assert f"CLAUDE_CONFIG_DIR is {cfg}" in r.stderr and "set CLAUDE_CONFIG_DIR" not in r.stderr


def test_ls_shows_as_much_of_each_id_as_tells_them_apart() -> None:
    # New-user pass: three sessions listed as "00000000", which cannot be pasted back.
    from transcript_tools.views.ls import _id_width

    ids = {"4cd0c8e6-36cd-4af9-9a2d-9191b504fada", "8c2f9135-4610-4218-97b1-bc3e03643255"}
    assert _id_width(ids) == 8
    same8 = {"00000000-0000-4000-8000-000000000001", "00000000-1111-4000-8000-000000000002"}
    assert _id_width(same8) == 10  # "00000000-0" and "00000000-1"
    assert _id_width({"aaaaaaaa-0000-4000-8000-000000000001", "aaaaaaaa-0000-4000-8000-000000000002"}) == 36
    assert _id_width(set()) == 8
