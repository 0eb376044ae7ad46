"""``tt store`` from the command line: exit codes, two real pushers at once, a real kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import tt as tt_run
from tests.support.cli import tt_popen
from tests.support.paths import REAL
from transcript_tools.edge.store_sqlite import open_sqlite
from transcript_tools.store.engine import StreamKey
from transcript_tools.store.files import AsOf, find_session, session_bytes

SID = str(uuid.UUID(int=7))


def tt(cfg: Path, *args: str, **kw: object) -> subprocess.Popen[bytes]:
    # TT_STORE unset: each test names its store
    return tt_popen(*args, config=cfg, width=None, drop=("TT_STORE",), **kw)


def run(cfg: Path, *args: str) -> tuple[int, str, str]:
    p = tt(cfg, *args)
    out, err = p.communicate(timeout=300)
    return p.returncode, out.decode(), err.decode()


def _session(cfg: Path, data: bytes) -> Path:
    d = cfg / "projects" / "-home-u-p"
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"{SID}.jsonl"
    p.write_bytes(data)
    return p


def _stored(db: Path, as_of: AsOf = AsOf()) -> bytes:
    s = open_sqlite(db, lambda: time.time_ns() // 1_000_000)
    return session_bytes(s, find_session(s, SID), as_of)[""]


def _versions(db: Path) -> list[int]:
    s = open_sqlite(db, lambda: 0)
    with s.read() as cur:
        info = s.stream(cur, StreamKey("-home-u-p", SID))
        assert info is not None
        return [v.version for v in s.versions(cur, info.id)]


def _lines(start: int, n: int, pad: int = 0) -> bytes:
    return b"".join(
        json.dumps(
            {
                "type": "user",
                "uuid": str(uuid.UUID(int=start + i + 1000)),
                "sessionId": SID,
                "message": {"role": "user", "content": f"line {start + i} " + f"{start + i:x}" * pad},
            }
        ).encode()
        + b"\n"
        for i in range(n)
    )


def test_push_log_pull_and_their_exit_codes(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    src = (REAL / "v2.1.38-tool-heavy.jsonl").read_bytes()
    p = _session(cfg, src)
    db = tmp_path / "s.db"
    url = f"sqlite:///{db}"
    code, out, err = run(cfg, "store", "push", SID, "--store", url, "--json")
    assert code == 0, err
    assert json.loads(out)["sessions"][0]["streams"][0]["status"] == "new"
    code, out, _ = run(cfg, "store", "push", SID, "--store", url, "--json")
    assert json.loads(out)["sessions"][0]["streams"][0]["status"] == "unchanged"
    code, out, _ = run(cfg, "store", "log", SID[:8], "--store", url, "--json")
    (v,) = json.loads(out)["versions"]
    assert (v["version"], v["bytes"], v["lines"]) == (1, len(src), src.count(b"\n"))
    assert run(cfg, "store", "pull", SID, "--store", url)[0] == 6  # exists: never overwritten
    assert p.read_bytes() == src
    code, out, err = run(cfg, "store", "pull", SID, "--store", url, "--cwd", "/elsewhere/dir", "--json")
    assert code == 0, err
    moved = (cfg / "projects" / "-elsewhere-dir" / f"{SID}.jsonl").read_bytes()
    assert {json.loads(ln).get("cwd") for ln in moved.splitlines()} - {None} == {"/elsewhere/dir"}
    code, _, err = run(tmp_path / "cfg2", "store", "pull", SID, "--store", url)
    assert code == 0, err
    assert (tmp_path / "cfg2" / "projects" / "-home-u-p" / f"{SID}.jsonl").read_bytes() == src
    assert run(cfg, "store", "log", "0000dead", "--store", url)[0] == 3
    assert run(cfg, "store", "push", "--store", url)[0] == 2
    assert run(cfg, "store", "pull", SID, "--store", url, "--as-of", "yesterday")[0] == 2
    code, out, _ = run(cfg, "store", "search", "spotter", "--store", url, "--json")
    assert code == 0 and json.loads(out)["sessions"][0]["hits"]


def test_a_corrupt_sqlite_file_is_exit_4_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"SQLite format 3\x00" + b"\x07" * 5000)
    code, _out, err = run(tmp_path, "store", "ls", "--store", f"sqlite:///{bad}")
    assert code == 4 and "Traceback" not in err and err.startswith("tt: ")


def test_two_pushers_at_once_neither_lose_nor_duplicate_a_line(tmp_path: Path) -> None:
    """While the session grows, two real `tt store push` processes race after each append."""
    cfg = tmp_path / "cfg"
    p = _session(cfg, b"")
    db = tmp_path / "s.db"
    url = f"sqlite:///{db}"
    data = b""
    for rnd in range(4):
        more = _lines(rnd * 300, 300, pad=50)
        with p.open("ab") as f:
            f.write(more)
        data += more
        procs = [tt(cfg, "store", "push", SID, "--store", url, "--no-validate", "--json") for _ in range(2)]
        results = [q.communicate(timeout=300) for q in procs]
        assert [q.returncode for q in procs] == [0, 0], results
        statuses = sorted(json.loads(o)["sessions"][0]["streams"][0]["status"] for o, _ in results)
        assert statuses in (["new", "unchanged"], ["appended", "unchanged"]), statuses
        assert _stored(db) == data
    assert _versions(db) == [1]
    s = open_sqlite(db, lambda: 0)
    with s.read() as cur:
        assert cur.execute("SELECT COUNT(*), COUNT(DISTINCT uuid) FROM tt_line").fetchone() == (1200, 1200)


def test_a_push_killed_mid_way_leaves_the_last_complete_version(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    first = _lines(0, 50)
    p = _session(cfg, first)
    db = tmp_path / "s.db"
    url = f"sqlite:///{db}"
    assert run(cfg, "store", "push", SID, "--store", url, "--no-validate")[0] == 0
    # Then a large append (distinct 3 KB strings: one blob each), and a push killed once it
    # is writing (its write-ahead log growing).
    with p.open("ab") as f:
        f.write(_lines(50, 20_000, pad=400))
    wal = Path(str(db) + "-wal")
    base = wal.stat().st_size if wal.exists() else 0
    q = tt(cfg, "store", "push", SID, "--store", url, "--no-validate")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and q.poll() is None:
        if wal.exists() and wal.stat().st_size > base + 2_000_000:
            break
        time.sleep(0.02)
    assert q.poll() is None, "the push ended before it could be killed: make the append larger"
    q.send_signal(signal.SIGKILL)
    q.communicate(timeout=60)
    assert q.returncode == -signal.SIGKILL
    assert _stored(db) == first
    assert run(cfg, "store", "push", SID, "--store", url, "--no-validate")[0] == 0
    assert _stored(db) == p.read_bytes() and _versions(db) == [1]


@pytest.mark.parametrize("name", ["push", "pull", "log", "ls", "search"])
def test_every_store_subcommand_has_json_and_store(name: str) -> None:
    from transcript_tools.cli.store import store_command

    cmd = store_command.commands[name]
    opts = {o for p in cmd.params for o in getattr(p, "opts", [])}
    assert {"--json", "--store"} <= opts


def test_push_all_in_several_processes_stores_every_session_exactly(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    sources = sorted(p for p in REAL.glob("*.jsonl"))[:10]
    paths = []
    for i, src in enumerate(sources):
        d = cfg / "projects" / f"-home-u-p{i % 3}"
        d.mkdir(parents=True, exist_ok=True)
        p = d / f"{uuid.UUID(int=100 + i)}.jsonl"
        p.write_bytes(src.read_bytes())
        paths.append(p)
    db = tmp_path / "s.db"
    code, out, err = run(cfg, "store", "push", "--all", "--store", f"sqlite:///{db}", "--json")
    assert code == 0, err
    assert sorted(s["session_id"] for s in json.loads(out)["sessions"]) == sorted(p.stem for p in paths)
    s = open_sqlite(db, lambda: 0)
    for p in paths:
        assert session_bytes(s, find_session(s, p.stem), AsOf())[""] == p.read_bytes()


def test_tt_search_with_store_answers_from_the_index(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    _session(cfg, (REAL / "v2.1.38-tool-heavy.jsonl").read_bytes())
    url = f"sqlite:///{tmp_path / 's.db'}"
    assert run(cfg, "store", "push", SID, "--store", url, "--no-validate")[0] == 0
    code, out, err = run(cfg, "search", "spotter", "--store", url, "--json")
    assert code == 0, err
    (s,) = json.loads(out)["sessions"]
    assert s["session_id"] == SID and s["hits"]
    assert run(cfg, "search", "zzzunfindable", "--store", url)[0] == 1
    assert run(cfg, "search", "spot.*", "--regex", "--store", url)[0] == 2


def test_tt_ls_with_store_lists_the_stored_sessions(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    _session(cfg, (REAL / "v2.1.38-tool-heavy.jsonl").read_bytes())
    url = f"sqlite:///{tmp_path / 's.db'}"
    assert run(cfg, "store", "push", SID, "--store", url, "--no-validate")[0] == 0
    code, out, err = run(cfg, "ls", "--store", url, "--json")
    assert code == 0, err
    (row,) = json.loads(out)["sessions"]
    _code2, out2, _ = run(cfg, "ls", "-a", "--json")
    (file_row,) = json.loads(out2)["sessions"]
    assert {k: v for k, v in row.items() if k not in ("path", "modified_ms", "mtime_ms", "modified")} == {
        k: v for k, v in file_row.items() if k not in ("path", "modified_ms", "mtime_ms", "modified")
    }
    assert run(cfg, "ls", "--store", url, "--check")[0] == 2


def _strings(v: object) -> list[str]:
    if isinstance(v, str):
        return [v]
    if isinstance(v, dict):
        return [s for x in v.values() for s in _strings(x)]
    if isinstance(v, list):
        return [s for x in v for s in _strings(x)]
    return []


def test_store_search_shows_the_matched_text_and_exits_1_on_no_match_as_tt_search_does(
    tmp_path: Path,
) -> None:
    # Issue 16, a new user's finding: `tt store search` printed `<session>:<line> <uuid>`
    # with no text and exited 0 when nothing matched, where `tt search` shows the match in
    # context and exits 1. Now it is `tt search --store`'s search, flags and output.
    cfg = tmp_path / "cfg"
    src = (REAL / "v2.1.38-tool-heavy.jsonl").read_bytes()
    _session(cfg, src)
    url = f"sqlite:///{tmp_path / 's.db'}"
    assert run(cfg, "store", "push", SID, "--store", url, "--no-validate")[0] == 0
    code, out, err = run(cfg, "store", "search", "spotter", "--store", url, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert run(cfg, "search", "spotter", "--store", url, "--json")[1] == out  # the same document
    (s,) = doc["sessions"]
    assert s["session_id"] == SID and s["hits"]
    # Each snippet is cut from the text of the line it names, read here with the json module.
    lines = src.splitlines()
    for h in s["hits"]:
        texts = [" ".join(t.split()) for t in _strings(json.loads(lines[h["line"] - 1]))]
        core = " ".join(h["snippet"].strip("…").split())
        assert "spotter" in core.lower() and any(core in t for t in texts), h
    # Against `tt search` on the file itself: the same hits (the word is whole everywhere).
    files = json.loads(run(cfg, "search", "spotter", "--all", "--json", "--per-session", "1000")[1])
    stored = json.loads(
        run(cfg, "store", "search", "spotter", "--store", url, "--json", "--per-session", "1000")[1]
    )
    assert stored["sessions"][0]["hits"] == files["sessions"][0]["hits"]
    # The text form shows the matched text, as tt search does.
    code, text, _ = run(cfg, "store", "search", "spotter", "--store", url)
    assert code == 0 and "spotter" in text.lower() and "line " in text
    assert text == run(cfg, "search", "spotter", "--store", url)[1]
    # Nothing matched: exit 1, as tt search; -n/--limit counts sessions as there.
    code, out, err = run(cfg, "store", "search", "zzzunfindable", "--store", url)
    assert (code, out) == (1, "") and "no matches" in err
    assert run(cfg, "search", "zzzunfindable", "--store", url)[0] == 1
    code, out, _ = run(
        cfg, "store", "search", "spotter", "-n", "1", "--per-session", "2", "--store", url, "--json"
    )
    assert code == 0 and [len(x["hits"]) for x in json.loads(out)["sessions"]] == [2]


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_pull_dry_run_refuses_what_the_pull_refuses_and_names_what_force_replaces(tmp_path: Path) -> None:
    # Issue 16, a new user's finding: `tt store pull --dry-run` said it would write a file
    # that the pull then refused (exit 6: a local session there, no --force).
    cfg = tmp_path / "cfg"
    src = (REAL / "v2.1.38-tool-heavy.jsonl").read_bytes()
    p = _session(cfg, src)
    url = f"sqlite:///{tmp_path / 's.db'}"
    assert run(cfg, "store", "push", SID, "--store", url, "--no-validate")[0] == 0
    before = _files(cfg)
    dry = run(cfg, "store", "pull", SID, "--store", url, "--dry-run")
    real = run(cfg, "store", "pull", SID, "--store", url)
    assert dry[0] == real[0] == 6 and dry[1] == "" and dry[2] == real[2]
    assert str(p) in dry[2] and "--force" in dry[2]
    code, out, err = run(cfg, "store", "pull", SID, "--store", url, "--dry-run", "--force", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["would_replace"] == [str(p)] and doc["would_write"] == [] and doc["written"] == []
    code, out, _ = run(cfg, "store", "pull", SID, "--store", url, "--dry-run", "--force")
    assert code == 0 and f"would replace (keeping a .bak) {p}" in out and "nothing written" in out
    assert _files(cfg) == before  # no dry run wrote anything
    # Where nothing is in the way, the dry run names exactly what the pull then writes.
    other = tmp_path / "other"
    code, out, _ = run(other, "store", "pull", SID, "--store", url, "--dry-run", "--json")
    assert code == 0 and not other.exists()
    code, out2, err = run(other, "store", "pull", SID, "--store", url, "--json")
    assert code == 0, err
    assert (
        json.loads(out)["would_write"]
        == json.loads(out2)["written"]
        == [str(x) for x in sorted(other.rglob("*.jsonl"))]
    )


def test_pull_with_cwd_writes_the_bytes_import_with_cwd_writes(tmp_path: Path) -> None:
    # Issue 16, a new user's finding: `tt store pull --cwd` left the records' cwd alone
    # where `tt import --cwd` rewrites them. The oracle is import itself: the same session
    # exported and imported under the same new cwd gives the same files, byte for byte
    # (main transcript, subagent, its meta file, file history).
    from tests.support.trees import stage

    cfg = stage(REAL / "claude-config-2.1.332", tmp_path / "cfg")
    sid = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
    work = (tmp_path / "machine-b" / "src" / "app").resolve()
    url = f"sqlite:///{tmp_path / 's.db'}"
    assert run(cfg, "store", "push", sid, "--store", url, "--no-validate")[0] == 0
    stored = _files(cfg)
    bundle = tmp_path / "s.zip"
    assert run(cfg, "export", sid, "-o", str(bundle))[0] == 0
    imported, pulled = tmp_path / "imported", tmp_path / "pulled"
    code, _, err = run(imported, "import", str(bundle), "--cwd", str(work))
    assert code == 0, err
    code, out, err = run(pulled, "store", "pull", sid, "--store", url, "--cwd", str(work), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert (doc["old_cwd"], doc["cwd"]) == ("/home/dev/demo-app", str(work)) and doc["relocated_lines"] > 0
    got, want = _files(pulled), _files(imported)
    assert got == want and any("subagents" in k for k in got)
    assert b'"cwd":"/home/dev/demo-app"' not in b"".join(got.values())
    assert _files(cfg) == stored  # the pushed session untouched
    s = open_sqlite(tmp_path / "s.db", lambda: 0)
    assert (
        session_bytes(s, find_session(s, sid), AsOf())[""]
        == stored[f"projects/-home-dev-demo-app/{sid}.jsonl"]
    )


@pytest.mark.claude
def test_real_cli_resumes_a_session_pulled_with_cwd_from_the_new_cwd(claude_332: Any, tmp_path: Path) -> None:
    # Issue 16: `tt store pull --cwd DIR` on "another machine", then Claude Code 2.1.332
    # (bundled) resumes it with `--resume ID` run in DIR, against the stand-in: it finds the
    # session in DIR's project folder and sends the whole conversation, the paths under the
    # old cwd now under DIR (tool inputs included), as tt's own resume would send it.
    from tests.support.oracle import compare_histories, conversation_blocks, resume_with_cli
    from tests.support.trees import stage

    cfg = stage(REAL / "claude-config-2.1.332", tmp_path / "cfg")
    sid = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
    url = f"sqlite:///{tmp_path / 's.db'}"
    assert run(cfg, "store", "push", sid, "--store", url)[0] == 0
    other = tmp_path / "machine-b" / ".claude"
    work = (tmp_path / "machine-b" / "src" / "app").resolve()
    work.mkdir(parents=True)
    code, _, err = run(other, "store", "pull", sid, "--store", url, "--cwd", str(work))
    assert code == 0, err
    sent = resume_with_cli(claude_332, other, sid, work)
    assert len(conversation_blocks(sent)) > 10  # the conversation, not a fresh session
    inputs = [
        json.dumps(b["input"])
        for m in sent
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]
    assert any(f"{work}/util.py" in i for i in inputs), inputs  # the Read's file_path, relocated
    assert not any("/home/dev/demo-app" in i for i in inputs)
    r = tt_run(
        "resume",
        sid,
        "-p",
        "Oracle probe: what do you remember?",
        "--dry-run",
        "--json",
        config=other,
        cwd=work,
    )
    assert r.returncode == 0, r.stderr
    assert compare_histories(sent, json.loads(r.stdout)["messages"], labels=("claude", "tt")) == ""


IMPORTS_PROBE = """
import sys
from transcript_tools.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = ("transcript_tools.catalog.listing", "transcript_tools.views.ls", "transcript_tools.views.show",
         "rich.table", "rich.panel")
print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)
"""


def test_store_search_text_form_prints_hits_without_importing_the_listing_or_transcript_views(
    tmp_path: Path,
) -> None:
    # Its text form imported views.ls (for one time format) and views.show (for one clock),
    # and with them the listing and rich's tables and panels: ~60% of its CPU (paired runs).
    cfg = tmp_path / "cfg"
    _session(cfg, (REAL / "v2.1.38-tool-heavy.jsonl").read_bytes())
    url = f"sqlite:///{tmp_path / 's.db'}"
    assert run(cfg, "store", "push", SID, "--store", url, "--no-validate")[0] == 0
    env = {**os.environ, "NO_COLOR": "1", "CLAUDE_CONFIG_DIR": str(cfg)}
    for argv in (["store", "search", "spotter", "--store", url], ["search", "spotter", "--store", url]):
        r = subprocess.run(
            [sys.executable, "-c", IMPORTS_PROBE, *argv], capture_output=True, text=True, env=env, timeout=120
        )
        assert "spotter" in r.stdout.lower(), (argv, r.stdout, r.stderr)
        assert r.stderr.strip().splitlines()[-1] == "[]", (argv, r.stderr)
