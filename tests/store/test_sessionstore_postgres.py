"""The session store on a real PostgreSQL (a throwaway cluster, tests/support/postgres.py):
the SDK's conformance suite, byte-faithful push/pull, the same schema as SQLite, two real
pushers at once, and credentials that never show."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import postgres as pg
from tests.support.cli import tt_popen
from tests.support.paths import CONFIG_197, REAL
from tests.support.trees import stage

pytestmark = pytest.mark.postgres


SID = str(uuid.UUID(int=9))
_n = itertools.count()


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    if pg.find_bin() is None:
        pytest.skip("PostgreSQL not installed (apt-get install postgresql): no initdb/pg_ctl")
    pytest.importorskip("psycopg")
    with pg.cluster() as url:
        yield url


@pytest.fixture
def db(cluster: str) -> str:
    return pg.fresh_database(cluster, f"t{os.getpid()}_{next(_n)}")


def _clock() -> int:
    return time.time_ns() // 1_000_000


def _open(url: str):
    from transcript_tools.edge.store_postgres import open_postgres

    return open_postgres(url, _clock)


def test_postgres_store_passes_the_agent_sdk_conformance_suite(cluster: str) -> None:
    from claude_agent_sdk.testing import run_session_store_conformance

    from transcript_tools.store.sdk import TTSessionStore

    asyncio.run(
        run_session_store_conformance(
            lambda: TTSessionStore(_open(pg.fresh_database(cluster, f"c{next(_n)}")))
        )
    )


def test_an_entry_with_a_nul_round_trips_where_jsonb_would_refuse_it(db: str) -> None:
    from transcript_tools.store.sdk import TTSessionStore

    s = TTSessionStore(_open(db))
    key = {"project_key": "p", "session_id": "s"}
    e = {"type": "user", "uuid": "u", "toolUseResult": {"stdout": "bin\x00ary\x00"}}
    asyncio.run(s.append(key, [e]))
    assert asyncio.run(s.load(key)) == [e]


@pytest.mark.parametrize(
    "name",
    [
        "v2.1.29-user-image-partial-copy.jsonl",
        "handwritten-edge-cases-not-object-lines.jsonl",
        "v1.0.51-inline-sidechains-two-compactions.jsonl",
    ],
)
def test_real_and_damaged_sessions_pull_back_byte_identical(tmp_path: Path, db: str, name: str) -> None:
    from transcript_tools.store.files import AsOf, find_session, push_session, session_bytes

    data = (REAL / name).read_bytes() + b'\x00\x00\xff{"type":"torn'
    d = tmp_path / "cfg" / "projects" / "p"
    d.mkdir(parents=True)
    p = d / f"{SID}.jsonl"
    p.write_bytes(data)
    s = _open(db)
    push_session(s, p, config=tmp_path / "cfg")
    assert session_bytes(s, find_session(s, SID), AsOf())[""] == data


def test_one_schema_for_both_engines(tmp_path: Path, db: str) -> None:
    from transcript_tools.edge.store_sqlite import open_sqlite

    lite = open_sqlite(tmp_path / "s.db", _clock)
    post = _open(db)
    tables = ["tt_meta", "tt_blob", "tt_stream", "tt_version", "tt_line", "tt_file"]
    for t in tables:
        a = [r[1] for r in lite.conn.execute(f"PRAGMA table_info({t})").fetchall()]
        b = [
            r[0]
            for r in post.conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = %s ORDER BY ordinal_position",
                (t,),
            ).fetchall()
        ]
        assert a == b and a, t


def test_search_finds_the_same_lines_on_both_engines(tmp_path: Path, db: str) -> None:
    from transcript_tools.catalog.search import texts_of
    from transcript_tools.edge.store_sqlite import open_sqlite
    from transcript_tools.store.files import push_session

    src = REAL / "v2.1.38-tool-heavy.jsonl"
    d = tmp_path / "cfg" / "projects" / "p"
    d.mkdir(parents=True)
    p = d / f"{SID}.jsonl"
    p.write_bytes(src.read_bytes())
    lite, post = open_sqlite(tmp_path / "s.db", _clock), _open(db)
    for s in (lite, post):
        push_session(s, p, config=tmp_path / "cfg", diagnose=None)
    # The oracle: lines whose searchable texts hold the word, read with the json module.
    want = [
        i
        for i, ln in enumerate(src.read_bytes().splitlines())
        if any("spotter" in re.split(r"[\W_]+", t.lower()) for _, _, t in texts_of(json.loads(ln)))
    ]
    got_lite = sorted(h.seq for h in lite.search("spotter", limit=1000))
    got_post = sorted(h.seq for h in post.search("spotter", limit=1000))
    assert got_lite == got_post == want and want


def _tt(cfg: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return tt_popen(*args, config=cfg, env=env, width=None)


def test_two_pushers_at_once_on_postgres(tmp_path: Path, db: str) -> None:
    from transcript_tools.store.files import AsOf, find_session, session_bytes

    cfg = tmp_path / "cfg"
    d = cfg / "projects" / "p"
    d.mkdir(parents=True)
    p = d / f"{SID}.jsonl"
    data = b""
    for rnd in range(3):
        more = b"".join(
            json.dumps({"type": "user", "uuid": str(uuid.UUID(int=rnd * 1000 + i + 1)), "n": i}).encode()
            + b"\n"
            for i in range(300)
        )
        with p.open("ab") as f:
            f.write(more)
        data += more
        procs = [_tt(cfg, "store", "push", SID, "--store", db, "--no-validate") for _ in range(2)]
        outs = [q.communicate(timeout=300) for q in procs]
        assert [q.returncode for q in procs] == [0, 0], outs
        assert all(pg.PASSWORD.encode() not in o + e for o, e in outs)
    s = _open(db)
    assert session_bytes(s, find_session(s, SID), AsOf())[""] == data
    assert s.conn.execute("SELECT COUNT(*), COUNT(DISTINCT uuid) FROM tt_line").fetchone() == (900, 900)


def test_unreachable_server_and_wrong_password_are_exit_5_without_the_password(
    tmp_path: Path, cluster: str
) -> None:
    wrong = cluster.replace(pg.PASSWORD, "not-the-Pa55word")
    p = _tt(tmp_path, "store", "ls", "--store", wrong)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 5 and b"not-the-Pa55word" not in out + err and err.startswith(b"tt: "), err
    nowhere = cluster.split("?host=")[0] + f"?host={tmp_path}"
    p = _tt(tmp_path, "store", "ls", "--store", nowhere)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 5 and pg.PASSWORD.encode() not in out + err and b"Traceback" not in err, err
    # Credentials from the PG* variables: the URL names only the socket.
    host = cluster.split("?host=")[1]
    p = _tt(
        tmp_path,
        "store",
        "ls",
        "--store",
        f"postgresql:///postgres?host={host}",
        env={"PGUSER": pg.USER, "PGPASSWORD": pg.PASSWORD},
    )
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err


def test_show_stats_and_validate_with_a_postgres_store_print_what_they_print_for_the_file(
    tmp_path: Path, db: str
) -> None:

    sid, pk = "8c2f9135-4610-4218-97b1-bc3e03643255", "-home-dev-demo-app"
    cfg = tmp_path / "cfg"
    stage(CONFIG_197, cfg)  # a real session with subagents
    path = cfg / "projects" / pk / f"{sid}.jsonl"

    def tt(*args: str) -> tuple[int, str, str]:
        p = _tt(cfg, *args, env={"TT_WIDTH": "200"})
        out, err = p.communicate(timeout=300)
        assert pg.PASSWORD.encode() not in out + err
        return p.returncode, out.decode(), err.decode()

    assert tt("store", "push", sid, "--store", db)[0] == 0
    for args in (
        ("show", "--json"),
        ("show", "--no-pager"),
        ("stats", "--json"),
        ("stats",),
        ("validate", "--json"),
    ):
        want = tt(args[0], str(path), *args[1:])
        got = tt(args[0], sid[:8], *args[1:], "--store", db)
        assert got[0] == want[0] == 0, (args, got[2])
        named = want[1].replace(str(cfg / "projects") + "/", "")
        assert re.sub(" +", " ", got[1]) == re.sub(" +", " ", named) and got[1].strip(), args
    assert tt("show", "0000dead", "--store", db)[0] == 3
    wrong = db.replace(pg.PASSWORD, "not-the-Pa55word")
    code, out, err = tt("stats", sid, "--store", wrong)
    assert code == 5 and "not-the-Pa55word" not in out + err and err.startswith("tt: ")


def test_the_words_indexed_are_the_words_of_the_reference_cut(db: str) -> None:
    """`store_postgres.words` (byte table + a regex for non-ASCII only) gives PostgreSQL the
    same ``tsvector`` as the plain regex cut it replaced, on the search text of every line of
    every real fixture and on Unicode edge cases (separators, combining marks, other scripts)."""
    import psycopg

    from transcript_tools.edge.store_postgres import words
    from transcript_tools.store import prepare, records

    texts = [
        "héllo—wörld→x_y",
        "日本語テキスト、です。",
        "a\u00a0b\u2028c\x85d",
        "①②③ ５６ Ⅻ",
        "e\u0301cole",
        "😀emoji😀x",
        "Ǆ ǅ ǆ",
        "tab\there_\x7fdel",
    ]
    for p in sorted(REAL.rglob("*.jsonl")):
        for raw in records.split_lines(p.read_bytes()):
            f = records.facts(raw)
            if f.text:
                texts.append(prepare.clean_text(f.text))
    reference = re.compile(r"[\W_]+")
    assert any(not t.isascii() for t in texts) and len(texts) > 1000
    with psycopg.connect(db, autocommit=True) as c:
        for t in texts:
            fast, ref = words(t), reference.sub(" ", t)
            assert fast.split() == ref.split(), t[:80]
            same = c.execute(
                "SELECT to_tsvector('simple', %s) = to_tsvector('simple', %s)", (fast, ref)
            ).fetchone()
            assert same == (True,), t[:80]
