"""``tt store`` from the command line: exit codes, two real pushers at once, a real kill."""

from __future__ import annotations

import json
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

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
    assert (cfg / "projects" / "-elsewhere-dir" / f"{SID}.jsonl").read_bytes() == src
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
