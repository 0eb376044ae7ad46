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
from transcript_tools.store.model import StreamKey

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
    # `tt search --store -n N` places each session from the index's line ids: the same hits.
    from transcript_tools.catalog.search import make_matcher
    from transcript_tools.store.find import search_store

    m = make_matcher("spotter")
    for store in (lite, post):
        joined, placed = (
            [
                [(a, h.line, h.spans) for a, h in sh.hits]
                for sh in search_store(store, "spotter", m, sessions=n)
            ]
            for n in (None, 10)
        )
        assert placed == joined and [h[1] - 1 for h in joined[0]] == want[:5]


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
            json.dumps(
                {"type": "user", "sessionId": SID, "uuid": str(uuid.UUID(int=rnd * 1000 + i + 1)), "n": i}
            ).encode()
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
    # Connected and signed in (else exit 5); the database holds no tt tables, and a command
    # that only reads does not write them there.
    assert p.returncode == 3 and b"no tt store here" in err, err
    import psycopg

    with psycopg.connect(cluster) as c:
        assert c.execute("SELECT COUNT(*) FROM pg_tables WHERE tablename LIKE 'tt_%'").fetchone() == (0,)


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


def test_store_search_shows_the_matched_text_and_exits_1_on_no_match_on_postgres(
    tmp_path: Path, db: str
) -> None:
    # Issue 16's finding (no text, exit 0 on no match) on the other engine: the same
    # document as the SQLite store gives for the same session, and exit 1 on no match.
    cfg = tmp_path / "cfg"
    d = cfg / "projects" / "-home-u-p"
    d.mkdir(parents=True)
    (d / f"{SID}.jsonl").write_bytes((REAL / "v2.1.38-tool-heavy.jsonl").read_bytes())
    lite = f"sqlite:///{tmp_path / 's.db'}"

    def tt(*args: str) -> tuple[int, str, str]:
        p = _tt(cfg, *args)
        out, err = p.communicate(timeout=300)
        return p.returncode, out.decode(), err.decode()

    for url in (db, lite):
        assert tt("store", "push", SID, "--store", url, "--no-validate")[0] == 0
    code, out, err = tt("store", "search", "spotter", "--store", db, "--json")
    assert code == 0, err
    (s,) = json.loads(out)["sessions"]
    assert s["hits"] and all("spotter" in h["snippet"].lower() for h in s["hits"])
    other = json.loads(tt("store", "search", "spotter", "--store", lite, "--json")[1])
    (o,) = other["sessions"]
    assert {**s, "modified_ms": 0} == {**o, "modified_ms": 0}  # each store's own push time
    code, out, err = tt("store", "search", "zzzunfindable", "--store", db)
    assert (code, out) == (1, "") and "no matches" in err


def test_pull_dry_run_and_pull_with_cwd_on_postgres_as_on_sqlite(tmp_path: Path, db: str) -> None:
    # Issue 16's pull findings on the other engine: the dry run refuses what the pull
    # refuses (exit 6), and --cwd writes the relocated files the SQLite store's pull writes.
    cfg = tmp_path / "cfg"
    stage(REAL / "claude-config-2.1.332", cfg)
    sid = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
    lite = f"sqlite:///{tmp_path / 's.db'}"
    work = str(tmp_path / "work")

    def tt(config: Path, *args: str) -> tuple[int, str, str]:
        p = _tt(config, *args)
        out, err = p.communicate(timeout=300)
        return p.returncode, out.decode(), err.decode()

    for url in (db, lite):
        assert tt(cfg, "store", "push", sid, "--store", url, "--no-validate")[0] == 0
    local = cfg / "projects" / "-home-dev-demo-app" / f"{sid}.jsonl"
    local.write_bytes(local.read_bytes() + b"\n")  # the local copy differs from the stored one
    dry, real = (tt(cfg, "store", "pull", sid, "--store", db, *x) for x in (["--dry-run"], []))
    assert dry[0] == real[0] == 6 and dry[2] == real[2]
    files = {}
    for name, url in (("pg", db), ("lite", lite)):
        code, _, err = tt(tmp_path / name, "store", "pull", sid, "--store", url, "--cwd", work)
        assert code == 0, err
        root = tmp_path / name
        files[name] = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert files["pg"] == files["lite"] and len(files["pg"]) == 6
    from transcript_tools.edge.claude_dir import project_dir_name

    main = files["pg"][f"projects/{project_dir_name(work)}/{sid}.jsonl"]
    assert f'"cwd":"{work}"'.encode() in main and b'"cwd":"/home/dev/demo-app"' not in main


def test_findings_of_the_second_round_on_postgres_as_on_sqlite(tmp_path: Path, db: str) -> None:
    # Issue 16, a new user's second round, on the other engine: a 2.0.x session's agent
    # files beside it are pushed and pulled back in place (and `tt stats --store` counts
    # them), a file that is no transcript is refused (exit 4) and skipped in --all, and a
    # pull of what is there already writes nothing (exit 0).
    import random

    sid, pk = "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9", "-Users-zawakin-agent-sample"
    cfg = stage(REAL / "v2.0.28-project", tmp_path / "cfg" / "projects").parent
    stray = cfg / "projects" / pk / f"{uuid.UUID(int=31)}.jsonl"
    stray.write_bytes(random.Random(31).randbytes(2048))

    def tt(config: Path, *args: str) -> tuple[int, str, str]:
        p = _tt(config, *args)
        out, err = p.communicate(timeout=300)
        return p.returncode, out.decode(), err.decode()

    code, out, err = tt(cfg, "store", "push", "--all", "--store", db, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert [(s["session_id"], s["files"]) for s in doc["sessions"]] == [(sid, 2)]
    assert doc["skipped"] == [f"{stray}: binary data; this is not a transcript"]
    assert tt(cfg, "store", "push", str(stray), "--store", db)[0] == 4
    want = json.loads(tt(cfg, "stats", str(cfg / "projects" / pk / f"{sid}.jsonl"), "--json")[1])
    got = json.loads(tt(cfg, "stats", sid[:8], "--store", db, "--json")[1])
    assert got["subagents"] == want["subagents"] and want["subagents"]["files"] == 2
    (row,) = json.loads(tt(cfg, "ls", "--store", db, "--json")[1])["sessions"]
    assert row["session_id"] == sid and row["subagents"] == 2  # as `tt ls` counts them
    other = tmp_path / "other"
    assert tt(other, "store", "pull", sid, "--store", db)[0] == 0
    stray.unlink()
    files = {str(p.relative_to(cfg)): p.read_bytes() for p in cfg.rglob("*") if p.is_file()}
    assert {str(p.relative_to(other)): p.read_bytes() for p in other.rglob("*") if p.is_file()} == files
    code, out, err = tt(other, "store", "pull", sid, "--store", db, "--force")
    assert (code, err) == (0, "") and out.startswith("nothing to do") and len(list(other.rglob("*.bak"))) == 0


def test_the_index_holds_the_words_of_the_reference_cut_and_finds_each_line_by_them(db: str) -> None:
    """`store_postgres.words` (byte table + a regex for non-ASCII only) cuts the search text
    of every line of every real fixture, and Unicode edge cases (separators, combining marks,
    other scripts), as the plain regex does; the ``tsvector`` tt sends for it by binary COPY
    is what the server stores (its lexemes: those words, lowercased, each once), and a
    search for a word of the line finds it."""
    import psycopg

    from transcript_tools.edge.store_postgres import copy_tsvectors, query_params, words
    from transcript_tools.store import prepare, records

    texts = [
        "héllo—wörld→x_y",
        "日本語テキスト、です。",
        "a\u00a0b\u2028c\x85d",
        "①②③ ５６ Ⅻ",
        "e\u0301cole",
        "😀emoji😀x",
        "Ǆ ǅ ǆ ÉCOLE İstanbul",
        "tab\there_\x7fdel",
        "it's a back\\slash 'quoted' & | ! : * ( )",
    ]
    for p in sorted(REAL.rglob("*.jsonl")):
        for raw in records.split_lines(p.read_bytes()):
            f = records.facts(raw)
            if f.text:
                texts.append(prepare.clean_text(f.text))
    reference = re.compile(r"[\W_]+")
    assert any(not t.isascii() for t in texts) and len(texts) > 1000
    for t in texts:
        assert words(t).split() == reference.sub(" ", t).split(), t[:80]
    with psycopg.connect(db, autocommit=True) as c:
        c.execute("CREATE TEMP TABLE t (line_id BIGINT, tsv TSVECTOR)")
        with c.cursor() as cur:
            copy_tsvectors(cur, "t", list(enumerate(texts)))
        stored = dict(c.execute("SELECT line_id, tsvector_to_array(tsv) FROM t").fetchall())
        for i, t in enumerate(texts):
            assert sorted(stored[i]) == sorted(set(reference.sub(" ", t.lower()).split())), t[:80]
            ref = reference.sub(" ", t).split()
            for w in set(ref[:1] + ref[-1:]):  # as the text writes them: the query lowers them
                found = c.execute(
                    "SELECT line_id FROM t WHERE tsv @@ (%s::tsquery || plainto_tsquery('simple', %s))",
                    query_params(w),
                ).fetchall()
                assert (i,) in found, (w, t[:80])


def test_a_store_indexed_by_the_server_s_parser_is_searched_alike(tmp_path: Path, db: str) -> None:
    """Stores made before tt cut the words itself hold ``to_tsvector('simple', …)`` of each
    line's words: the same searches find the same lines on them."""
    from transcript_tools.edge.store_postgres import words
    from transcript_tools.store import prepare, records
    from transcript_tools.store.files import push_session

    src = REAL / "v2.1.38-tool-heavy.jsonl"
    d = tmp_path / "cfg" / "projects" / "p"
    d.mkdir(parents=True)
    p = d / f"{SID}.jsonl"
    p.write_bytes(src.read_bytes())
    s = _open(db)
    push_session(s, p, config=tmp_path / "cfg", diagnose=None)
    queries = ["spotter", "xterm", "Phoenix", "background command", "doesn", "bae407b", "Request interrupted"]
    before = {q: sorted(h.seq for h in s.search(q, limit=1000)) for q in queries}
    with s.write() as cur:
        rows = cur.execute("SELECT l.id, l.seq FROM tt_line l JOIN tt_fts f ON f.line_id = l.id").fetchall()
        raw = records.split_lines(src.read_bytes())
        for line_id, seq in rows:
            text = prepare.clean_text(records.facts(raw[seq]).text or "")
            cur.execute(
                "UPDATE tt_fts SET tsv = to_tsvector('simple', %s) WHERE line_id = %s", (words(text), line_id)
            )
    after = {q: sorted(h.seq for h in s.search(q, limit=1000)) for q in queries}
    assert len(rows) > 20 and all(before.values()) and after == before
    # Where the server's lexemes are not tt's (a cluster in the C locale lowers no 'É'), the
    # query asks for the server's too.
    from transcript_tools.edge.store_postgres import query_params

    with s.read() as cur:
        old_row = cur.execute("SELECT to_tsvector('simple', %s)::text", (words("École Straße"),)).fetchone()[
            0
        ]
        found = cur.execute(
            "SELECT to_tsvector('simple', %s) @@ (%s::tsquery || plainto_tsquery('simple', %s))",
            (words("École Straße"), *query_params("École")),
        ).fetchone()
    assert found == (True,), old_row
    # A word past a lexeme's size is in no index (the server drops it from a tsvector and
    # refuses it in a tsquery): a search for it finds nothing, and is no database error.
    assert s.search("a" * 3000, limit=5) == [] and s.search("!!!", limit=5) == []


def test_a_line_past_a_tsvector_s_size_is_pushed_and_found_by_its_first_words(
    tmp_path: Path, db: str
) -> None:
    """PostgreSQL refuses a ``tsvector`` past 1 MiB of lexemes ("string is too long for
    tsvector"): a tool output with more distinct words than that failed the whole push. The
    line is stored whole and indexed by its first 1 MiB of words."""
    from transcript_tools.store.files import push_session

    d = tmp_path / "cfg" / "projects" / "p"
    d.mkdir(parents=True)
    p = d / f"{SID}.jsonl"
    many = " ".join(f"w{i:07d}x" for i in range(130_000))  # 1.3 MB of distinct words
    recs = [
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": SID,
            "isSidechain": False,
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": "hi"},
        },
        {
            "type": "user",
            "uuid": "u2",
            "parentUuid": "u1",
            "sessionId": SID,
            "isSidechain": False,
            "timestamp": "2026-01-01T00:00:01Z",
            "message": {"role": "user", "content": many},
        },
    ]
    data = "".join(json.dumps(r) + "\n" for r in recs).encode()
    p.write_bytes(data)
    s = _open(db)
    push_session(s, p, config=tmp_path / "cfg", diagnose=None)
    assert [h.seq for h in s.search("w0000001x", limit=5)] == [1]
    assert s.search("w0129999x", limit=5) == []  # past the first MiB: not indexed
    with s.read() as cur:
        stream = s.stream(cur, StreamKey("p", SID))
        assert stream is not None
        assert b"".join(x[4] for x in s.lines(cur, stream.id, stream.current_version)) == data


def test_finding_postgres_search_reads_2_0_x_agent_files_and_what_the_index_cannot_see(
    tmp_path: Path, db: str
) -> None:
    """The new-user pass's findings 1 and 2 on PostgreSQL: the same code reads the 2.0.x
    subagent side files and scans for a pattern the index cannot see; the hits are SQLite's
    and `tt search`'s on the files (tests/store/test_search_beyond_index.py)."""
    from tests.store.test_search_beyond_index import BLIND, PROJECT_2028, V2028, _hits
    from transcript_tools.catalog.files import search_files
    from transcript_tools.catalog.search import make_matcher
    from transcript_tools.store.files import push_session
    from transcript_tools.store.find import search_store

    cfg = tmp_path / "cfg"
    stage(V2028, cfg / "projects")
    d = cfg / "projects" / "-home-u-p"
    d.mkdir()
    for i, name in enumerate(sorted(set(BLIND.values()))):
        (d / f"00000000-0000-4000-8000-{i:012d}.jsonl").write_bytes((REAL / name).read_bytes())
    post = _open(db)
    for p in sorted((cfg / "projects").glob("*/*-*-*-*-*.jsonl")):
        push_session(post, p, config=cfg, diagnose=None)
    dirs = [cfg / "projects" / PROJECT_2028, d]
    for pattern in ("Anthropic's official", "Warmup", *BLIND):
        m = make_matcher(pattern)
        files = _hits(search_files(dirs, m, per_session=1000))
        assert files, pattern
        for n in (None, 1):
            assert _hits(search_store(post, pattern, m, per_session=1000, sessions=n)) == files, pattern
