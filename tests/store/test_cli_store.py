"""``tt store`` from the command line: exit codes, two real pushers at once, a real kill."""

from __future__ import annotations

import json
import os
import shutil
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
from tests.support.paths import CONFIG_332, FIXTURES, REAL
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
    p.write_bytes(src + _lines(0, 1))  # the local file went on: other bytes than stored
    assert run(cfg, "store", "pull", SID, "--store", url)[0] == 6  # exists: never overwritten
    assert p.read_bytes() == src + _lines(0, 1)
    p.write_bytes(src)
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


def _unwritable_dirs(tmp_path: Path) -> list[Path]:
    """Directories no store can be created in: one under a regular file (no directory can
    be made there), ``/proc`` (not even root writes a file there), and a read-only
    directory unless we are root (root writes there anyway)."""
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    out = [a_file / "sub"]
    if Path("/proc/self").is_dir():
        out.append(Path("/proc"))
    if os.geteuid() != 0:
        ro = tmp_path / "read-only"
        ro.mkdir()
        ro.chmod(0o555)
        out.append(ro)
    return out


def test_finding_a_store_that_cannot_be_created_is_a_failed_write_exit_6(tmp_path: Path) -> None:
    """New-user pass: `tt store push --store` into a place no file can be made said exit 4
    ("cannot open"), the code of a store that is there and cannot be read."""
    cfg = tmp_path / "cfg"
    _session(cfg, (REAL / "v2.1.38-tool-heavy.jsonl").read_bytes())
    for d in _unwritable_dirs(tmp_path):
        for url in (str(d / "x.db"), f"sqlite:///{d / 'x.db'}"):
            code, _out, err = run(cfg, "store", "push", "--all", "--store", url)
            assert code == 6, (url, err)
            assert err.startswith(f"tt: {url}: cannot create the store (") and "Traceback" not in err
            assert err.count("\ntt: ") == 0 and "hint: name a file in a directory you can write" in err
            assert not (d / "x.db").exists()
    # A store that is there but cannot be read stays exit 4 (test_a_corrupt_sqlite_file_is_exit_4_in_one_line).


@pytest.mark.parametrize("url", ["sqlite://x", "sqlite:x", "sqlite://", "mysql://h/db"])
def test_finding_a_malformed_store_url_is_a_usage_error_showing_the_forms(tmp_path: Path, url: str) -> None:
    """New-user pass: ``--store sqlite://x`` (two slashes) said "no such store" (exit 3), as if
    it named a file, and left the user guessing the URL's form."""
    for cmd in (("ls",), ("store", "ls"), ("search", "x")):
        code, _out, err = run(tmp_path, *cmd, "--store", url)
        assert code == 2, (cmd, err)
        assert f"{url}: not a store URL" in err and "sqlite:////absolute/path" in err, err
        assert "sqlite:///relative/path" in err and "postgresql://" in err
    assert list(tmp_path.iterdir()) == []  # no file made under either name


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


def test_finding_ls_with_store_orders_sessions_as_ls_orders_their_files(tmp_path: Path) -> None:
    """New-user pass: `tt ls --store` ordered sessions by when they were pushed, `tt ls` by
    their last activity (the file's mtime). Three real sessions pushed one by one in an
    order that is neither their activity order nor its reverse: both listings agree."""
    cfg = tmp_path / "cfg"
    d = cfg / "projects" / "-home-u-p"
    d.mkdir(parents=True)
    sources = sorted(REAL.glob("*.jsonl"))[:3]
    sids = [str(uuid.UUID(int=300 + i)) for i in range(3)]
    day = 1_780_000_000  # a fixed instant: the order never depends on today's date
    for i, (sid, src) in enumerate(zip(sids, sources, strict=True)):
        f = d / f"{sid}.jsonl"
        f.write_bytes(src.read_bytes())
        os.utime(f, (day + 3600 * i, day + 3600 * i))  # sids[2] is the newest, then 1, then 0
    url = f"sqlite:///{tmp_path / 's.db'}"
    for sid in (sids[1], sids[2], sids[0]):  # pushed: 1, 2, 0 (newest push: 0)
        code, _, err = run(cfg, "store", "push", sid, "--store", url)
        assert code == 0, err

    def order(*args: str) -> list[tuple[str, int]]:
        code, out, err = run(cfg, "ls", "--hidden", "--json", *args)
        assert code == 0, err
        return [(r["session_id"], r["modified_ms"]) for r in json.loads(out)["sessions"]]

    files = order("-p", str(d))
    assert files == [(sids[i], (day + 3600 * i) * 1000) for i in (2, 1, 0)]
    assert order("--store", url) == files  # the same order, and the same time shown

    # Found by the next new user: `tt search --store` dated each session by its push.
    def dated(*args: str) -> dict[str, int]:
        code, out, err = run(cfg, "search", "the", "--json", "-n", "10", *args)
        assert code == 0, err
        return {s["session_id"]: s["modified_ms"] for s in json.loads(out)["sessions"]}

    assert dated("--store", url) == dated("-p", str(d)) == dict(files)


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
    p.write_bytes(src + _lines(0, 1))  # the local session went on since the push
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


# --- issue 16, a new user's second round ---------------------------------------------

#: A real Claude Code 2.0.28 project folder: the session and its two subagent transcripts
#: beside it (``agent-<id>.jsonl``, where 2.0.x writes them).
V2028 = REAL / "v2.0.28-project"
SID2028 = "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9"
PK2028 = "-Users-zawakin-agent-sample"


def test_finding_push_all_takes_2_0_x_agent_files_with_their_session_and_store_reads_see_them(
    tmp_path: Path,
) -> None:
    # Issue 16, a new user's finding (high): `tt store push --all` then `tt store pull`
    # brought back the main transcript of a 2.0.x session without its subagent files, and
    # `tt stats --store` said "subagents none" where `tt stats FILE` counts 2 files.
    from tests.support.trees import stage

    cfg = stage(V2028, tmp_path / "cfg" / "projects").parent
    main = cfg / "projects" / PK2028 / f"{SID2028}.jsonl"
    url = f"sqlite:///{tmp_path / 's.db'}"
    code, out, err = run(cfg, "store", "push", "--all", "--store", url, "--json")
    assert code == 0, err
    (pushed,) = json.loads(out)["sessions"]  # the agent files are no sessions of their own
    assert pushed["session_id"] == SID2028 and pushed["files"] == 2
    code, out, _ = run(cfg, "store", "ls", "--store", url, "--json")
    assert [s["session_id"] for s in json.loads(out)["sessions"]] == [SID2028]
    # --json before the subcommand is the subcommand's (a new user's: accepted and ignored).
    for sub in (("ls",), ("log", SID2028[:4])):
        before = run(cfg, "store", "--json", *sub, "--store", url)
        after = run(cfg, "store", *sub, "--store", url, "--json")
        assert before == after and before[0] == 0 and json.loads(before[1]), sub
    # Read from the store, the session has its subagents as the files have them.
    for args in (("stats", "--json"), ("show", "--json"), ("validate", "--json"), ("ls", "--json")):
        want = run(cfg, args[0], *((str(main),) if args[0] != "ls" else ("-a",)), *args[1:])
        got = run(cfg, args[0], *((SID2028[:4],) if args[0] != "ls" else ()), *args[1:], "--store", url)
        assert got[0] == want[0] == 0, (args, got[2])
        named = want[1].replace(str(cfg / "projects") + "/", "")
        if args[0] == "ls":  # each its own mtime: the push time, the file's
            got_rows, want_rows = (
                [
                    {k: v for k, v in r.items() if "modified" not in k and "mtime" not in k}
                    for r in json.loads(x)["sessions"]
                ]
                for x in (got[1], named)
            )
            assert got_rows == want_rows and want_rows[0]["subagents"] == 2
            continue
        assert got[1] == named, args
    assert json.loads(run(cfg, "stats", SID2028, "--store", url, "--json")[1])["subagents"]["files"] == 2
    # Pulled elsewhere: every file back where Claude Code 2.0.x keeps it, byte for byte.
    other = tmp_path / "other"
    code, out, err = run(other, "store", "pull", SID2028[:4], "--store", url)
    assert code == 0, err
    assert _files(other) == _files(cfg) and len(_files(other)) == 3
    # With --cwd, the agent files are relocated with the session, as `tt import --cwd` does.
    work = str((tmp_path / "machine-b" / "app").resolve())
    bundle = tmp_path / "s.zip"
    assert run(cfg, "export", SID2028, "-o", str(bundle))[0] == 0
    imported, pulled = tmp_path / "imported", tmp_path / "pulled"
    assert run(imported, "import", str(bundle), "--cwd", work)[0] == 0
    code, out, err = run(pulled, "store", "pull", SID2028, "--store", url, "--cwd", work, "--json")
    assert code == 0, err
    got_files = _files(pulled)
    assert got_files == _files(imported) and sum("agent-" in k for k in got_files) == 2
    assert all(b'"cwd":"/Users/zawakin/agent-sample"' not in b for b in got_files.values())
    assert all(f'"cwd":"{work}"'.encode() in b for k, b in got_files.items() if "agent-" in k)


def test_finding_push_all_does_not_push_a_2_0_x_agent_file_as_a_session(tmp_path: Path) -> None:
    # `--all` and `-p DIR` take main transcripts only (`<uuid>.jsonl`); an agent file goes
    # with the session its records name, never as a session "agent-…".
    from tests.support.trees import stage

    cfg = stage(V2028, tmp_path / "cfg" / "projects").parent
    url = f"sqlite:///{tmp_path / 's.db'}"
    for how in (("--all",), ("-p", "/Users/zawakin/agent-sample")):
        code, out, err = run(cfg, "store", "push", *how, "--store", url, "--json")
        assert code == 0, (how, err)
        assert [s["session_id"] for s in json.loads(out)["sessions"]] == [SID2028], how
    s = open_sqlite(tmp_path / "s.db", lambda: 0)
    with s.read() as cur:
        assert {x.key.session_id for x in s.list_streams(cur)} == {SID2028}
        assert [rel for rel, _, _ in s.files(cur, PK2028, SID2028)] == [
            "project/agent-0c4c3cf8.jsonl",
            "project/agent-90fa40b6.jsonl",
        ]


def test_finding_push_refuses_a_file_that_is_no_transcript_as_validate_does_and_a_batch_skips_it(
    tmp_path: Path,
) -> None:
    # Issue 16, a new user's finding (medium): `tt store push binary.jsonl` (random bytes)
    # and `empty.jsonl` exited 0 and stored sessions "binary" and "empty", which `tt store
    # pull` would then write into the config dir. Named on its own such a file is exit 4
    # with `tt validate FILE`'s words; in --all it is noted and skipped, the rest pushed, as
    # `tt repair -a` does; a damaged transcript is pushed as it is, with its diagnostics.
    import random

    cfg = tmp_path / "cfg"
    real = _session(cfg, (REAL / "v2.1.38-tool-heavy.jsonl").read_bytes())
    proj = real.parent
    strays = {
        "binary.jsonl": random.Random(16).randbytes(4096),
        "empty.jsonl": b"",
        f"{uuid.UUID(int=21)}.jsonl": b"\0" * 5000,
        f"{uuid.UUID(int=22)}.jsonl": random.Random(22).randbytes(3000),
        f"{uuid.UUID(int=23)}.jsonl": b"",
    }
    for name, data in strays.items():
        (proj / name).write_bytes(data)
    damaged = proj / f"{uuid.UUID(int=24)}.jsonl"
    damaged.write_bytes(
        (FIXTURES / "damaged" / "torn-tail+fused-records+nul-run+dangling-parent.jsonl").read_bytes()
    )
    url = f"sqlite:///{tmp_path / 's.db'}"
    for name in ("binary.jsonl", "empty.jsonl"):
        code, out, err = run(cfg, "store", "push", str(proj / name), "--store", url)
        v = run(cfg, "validate", str(proj / name))
        assert (code, out) == (4, "") and err == v[2] and v[0] == 4, (name, err)
        assert err.startswith(f"tt: {proj / name}: ") and "this is not a transcript" in err
    code, out, err = run(cfg, "store", "push", "--all", "--store", url, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert sorted(s["session_id"] for s in doc["sessions"]) == sorted([real.stem, damaged.stem])
    assert len(doc["skipped"]) == 3 and all("this is not a transcript" in m for m in doc["skipped"])
    # The two not named by a session id are no session's files either: said once more.
    skipped_lines = [ln for ln in err.splitlines() if ln.endswith(": skipped")]
    assert sorted(skipped_lines) == sorted(f"tt: {m}: skipped" for m in doc["skipped"])
    assert sorted(doc["not_pushed"]) == sorted(str(proj / n) for n in ("binary.jsonl", "empty.jsonl"))
    code, out, _ = run(cfg, "store", "log", damaged.stem, "--store", url, "--json")
    (v,) = json.loads(out)["versions"]
    assert v["errors"] > 0 and v["bytes"] == damaged.stat().st_size  # stored as it is, with its damage
    code, out, _ = run(cfg, "store", "ls", "--store", url, "--json")
    assert sorted(s["session_id"] for s in json.loads(out)["sessions"]) == sorted([real.stem, damaged.stem])
    assert run(cfg, "store", "pull", "binary", "--store", url, "--dry-run")[0] == 3


def test_finding_pull_of_what_is_there_already_writes_nothing_and_exits_0(tmp_path: Path) -> None:
    # Issue 16, a new user's finding (low): pulling a session whose local files are
    # byte-identical to the stored version refused with exit 6, and --force wrote a .bak of
    # the same bytes. Nothing to do: said, exit 0, nothing written (dry run too).
    from tests.support.trees import stage

    cfg = stage(REAL / "claude-config-2.1.332", tmp_path / "cfg")
    sid = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
    url = f"sqlite:///{tmp_path / 's.db'}"
    assert run(cfg, "store", "push", sid, "--store", url, "--no-validate")[0] == 0
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in cfg.rglob("*") if p.is_file()}
    main = cfg / "projects" / "-home-dev-demo-app" / f"{sid}.jsonl"
    mine = sorted(
        str(p)
        for p in [main, *main.with_suffix("").rglob("*"), *(cfg / "file-history" / sid).rglob("*")]
        if p.is_file()
    )
    assert len(mine) > 3  # subagent, its meta file, file history
    for extra in ([], ["--force"], ["--dry-run"], ["--dry-run", "--force"]):
        code, out, err = run(cfg, "store", "pull", sid, "--store", url, *extra)
        assert (code, err) == (0, ""), (extra, err)
        assert out.startswith(f"nothing to do: session {sid} is there already, byte for byte as stored"), out
        assert str(main) in out and "would" not in out
        code, out, err = run(cfg, "store", "pull", sid, "--store", url, *extra, "--json")
        doc = json.loads(out)
        assert code == 0 and doc["written"] == [] and sorted(doc["unchanged"]) == mine
        assert doc.get("would_write", []) == doc.get("would_replace", []) == []
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in cfg.rglob("*") if p.is_file()}
    assert after == before  # no .bak, nothing rewritten
    # One file changed locally: only that one is in the way (exit 6); --force replaces it alone.
    main.write_bytes(before[main][0] + b"\n")
    code, _, err = run(cfg, "store", "pull", sid, "--store", url)
    assert code == 6 and str(main) in err
    code, out, err = run(cfg, "store", "pull", sid, "--store", url, "--force", "--json")
    doc = json.loads(out)
    assert (
        code == 0
        and doc["written"] == [str(main)]
        and sorted(doc["unchanged"]) == sorted(set(mine) - {str(main)})
    )
    assert main.read_bytes() == before[main][0]


@pytest.mark.parametrize("damage", ["payload", "missing"])
def test_a_damaged_blob_is_one_message_and_exit_4_never_a_traceback(tmp_path: Path, damage: str) -> None:
    """A blob whose bytes no longer decode (a disk error inside the table: the file still
    opens as SQLite), or a line naming a blob that is gone, makes every reader stop with one
    message and exit 4, as a database SQLite finds corrupt does."""
    import sqlite3

    cfg = tmp_path / "cfg"
    p = _session(cfg, _lines(0, 5, pad=1500))  # texts past `layers.BIG`: each a compressed blob
    db = tmp_path / "s.db"
    url = f"sqlite:///{db}"
    assert run(cfg, "store", "push", str(p), "--store", url)[0] == 0
    c = sqlite3.connect(db)
    with c:
        assert c.execute("SELECT COUNT(*) FROM tt_blob WHERE codec LIKE '%zstd%'").fetchone()[0] > 0
        if damage == "payload":
            c.execute("UPDATE tt_blob SET data = zeroblob(64) WHERE codec LIKE '%zstd%'")
        else:
            c.execute("DELETE FROM tt_blob")
    c.close()
    for args in (
        ("store", "pull", SID[:8], "--store", url, "--cwd", str(tmp_path / "w")),
        ("search", "line", "--store", url),
        ("show", SID[:8], "--store", url),
        ("stats", SID[:8], "--store", url),
    ):
        code, _out, err = run(tmp_path / "other", *args)
        assert code == 4, (args, code, err)
        assert "Traceback" not in err and err.startswith("tt: ") and "the store is damaged" in err, err


def test_a_reader_never_writes_tt_s_tables_into_a_database_that_is_not_a_store(tmp_path: Path) -> None:
    """`tt store ls`, `tt ls --store`, `tt search --store` pointed at another application's
    SQLite file (or an empty one) say there is no tt store there (exit 3) and leave it as it
    was; `tt store push` makes the store, as asked."""
    import sqlite3

    other = tmp_path / "app.db"
    c = sqlite3.connect(other)
    with c:
        c.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        c.execute("INSERT INTO users (name) VALUES ('ada')")
    c.close()
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    for db in (other, empty):
        before = db.read_bytes()
        url = f"sqlite:///{db}"
        for args in (
            ("store", "ls", "--store", url),
            ("ls", "--store", url),
            ("search", "x", "--store", url),
        ):
            code, _out, err = run(tmp_path, *args)
            assert code == 3 and "no tt store here" in err and "Traceback" not in err, (args, err)
        assert db.read_bytes() == before and not list(tmp_path.glob(db.name + "-*"))
    cfg = tmp_path / "cfg"
    p = _session(cfg, _lines(0, 3))
    assert run(cfg, "store", "push", str(p), "--store", f"sqlite:///{other}")[0] == 0
    c = sqlite3.connect(other)
    assert c.execute("SELECT name FROM users").fetchall() == [("ada",)]
    assert c.execute("SELECT COUNT(*) FROM tt_line").fetchone() == (3,)
    c.close()


def test_one_id_pushed_from_two_projects_is_named_as_project_slash_id(tmp_path: Path) -> None:
    """A session copied into another project (a repaired copy, a second checkout) and pushed
    too: its id names two stored sessions. The message names both as ``<project>/<id>``, and
    that form reaches each (a new user's pass: it was refused, exit 2, so neither could be
    reached)."""
    cfg = tmp_path / "cfg"
    p = _session(cfg, _lines(0, 3))
    q = cfg / "projects" / "-home-u-other" / p.name
    q.parent.mkdir(parents=True)
    q.write_bytes(_lines(0, 4))
    url = f"sqlite:///{tmp_path / 's.db'}"
    assert run(cfg, "store", "push", "--all", "--store", url)[0] == 0
    code, _out, err = run(cfg, "store", "log", SID, "--store", url)
    assert code != 0 and f"-home-u-p/{SID}" in err and f"-home-u-other/{SID}" in err, err
    for project, n in (("-home-u-p", 3), ("-home-u-other", 4)):
        code, out, err = run(cfg, "store", "log", "--store", url, "--json", "--", f"{project}/{SID}")
        assert code == 0, err
        assert [v["lines"] for v in json.loads(out)["versions"]] == [n], out
        code, out, err = run(cfg, "show", "--store", url, "--json", "--", f"{project}/{SID[:8]}")
        assert code == 0, err
    for bad in ("a/b/" + SID, "/" + SID, "-home-u-p/"):
        assert run(cfg, "store", "log", "--store", url, "--", bad)[0] == 2, bad


def test_finding_push_says_which_transcripts_are_no_session_s(tmp_path: Path) -> None:
    """New-user pass: `tt store push --all` skipped a subagent file whose session's file is
    gone without a word ("5 of 5 sessions changed"); the store keys a file by its session."""
    from tests.support.paths import CONFIG_332
    from tests.support.trees import stage

    cfg = tmp_path / "cfg"
    stage(CONFIG_332, cfg)
    project = cfg / "projects" / "-home-dev-demo-app"
    (agent,) = project.glob("*/subagents/agent-*.jsonl")
    (project / "4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl").unlink()
    copy = project / "my-copy.jsonl"
    copy.write_bytes((REAL / "v2.1.38-tool-heavy.jsonl").read_bytes())
    shutil.copy(REAL / "v2.1.38-tool-heavy.jsonl", project / f"{SID}.jsonl")  # one session left
    url = f"sqlite:///{tmp_path / 's.db'}"
    code, out, err = run(cfg, "store", "push", "--all", "--store", url, "--json")
    assert code == 0, err
    assert sorted(json.loads(out)["not_pushed"]) == sorted([str(agent), str(copy)])
    assert [s["session_id"] for s in json.loads(out)["sessions"]] == [SID]
    assert f"tt: {agent}: not a session's file" in err and "`tt ls --hidden` lists it" in err


def test_a_session_file_pushed_from_outside_a_config_dir_is_stored_under_its_recorded_project(
    tmp_path: Path,
) -> None:
    # A new user's find: `tt store push ~/downloads/<id>.jsonl` stored the session under a
    # project named after the downloads folder, and `tt store pull` then wrote it into a
    # project folder of that name; a copy not named by a session id was stored as session
    # "loose". The project is now the one of the cwd the records carry (as Claude Code names
    # its folder); a file not named by a session id is refused, as --all passes it over.
    src = CONFIG_332 / "projects" / "-home-dev-demo-app" / "4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
    loose = tmp_path / "downloads"
    loose.mkdir()
    copy = loose / src.name
    copy.write_bytes(src.read_bytes())
    cfg = tmp_path / "cfg"
    url = f"sqlite:///{tmp_path / 's.db'}"
    code, out, err = run(cfg, "store", "push", str(copy), "--store", url, "--json")
    assert code == 0, err
    [pushed] = json.loads(out)["sessions"]
    assert pushed["project"] == "-home-dev-demo-app"  # /home/dev/demo-app, as the records say
    code, _out, err = run(cfg, "store", "pull", "4cd0", "--store", url)
    assert code == 0, err
    assert (cfg / "projects" / "-home-dev-demo-app" / src.name).read_bytes() == src.read_bytes()
    other = loose / "loose.jsonl"
    other.write_bytes(src.read_bytes())
    code, out, err = run(cfg, "store", "push", str(other), "--store", url)
    assert code == 2 and out == "" and "not a session's file (its name is no session id)" in err, err
