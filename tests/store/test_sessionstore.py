"""The session store: byte-faithful layered storage, versions, push/pull, the SDK protocol."""

from __future__ import annotations

import asyncio
import itertools
import random
import re
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.paths import CONFIG_332, FIXTURES, REAL
from tests.support.trees import stage
from transcript_tools.edge.store_sqlite import open_sqlite
from transcript_tools.store import layers, records
from transcript_tools.store.engine import StreamKey
from transcript_tools.store.files import (
    AsOf,
    find_session,
    pull_session,
    push_session,
    push_stream,
    session_bytes,
)

REAL_FILES = sorted(REAL.rglob("*.jsonl"))


class Clock:
    """A store clock the test moves by hand (epoch ms)."""

    def __init__(self, start: int = 1_700_000_000_000) -> None:
        self.t = start

    def __call__(self) -> int:
        self.t += 1
        return self.t


def _store(tmp: Path, clock: Clock | None = None):
    return open_sqlite(tmp / "store.sqlite3", clock or Clock())


def _session(cfg: Path, data: bytes, n: int = 1, project: str = "-home-u-p") -> Path:
    d = cfg / "projects" / project
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"{uuid.UUID(int=n)}.jsonl"
    p.write_bytes(data)
    return p


def _pulled(store, sid: str, as_of: AsOf = AsOf()) -> bytes:
    return session_bytes(store, find_session(store, sid), as_of)[""]


# --- layers ------------------------------------------------------------------------

_pieces = st.lists(
    st.one_of(
        st.binary(max_size=40),
        st.sampled_from([b'"', b"\\", b'\\"', b"\x00", b"\\u0000", b"\n", b"\xff\xfe", b"{", b"}"]),
        st.builds(
            lambda c, n: b'"' + c * n + b'"',
            st.sampled_from([b"a", b"\\n", b"\xc3\xa9", b"\x00"]),
            st.integers(0, 1500),
        ),
    ),
    max_size=30,
)


@given(_pieces, st.integers(1, 64))
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_layers_join_split_is_the_identity(pieces: list[bytes], big: int) -> None:
    line = b"".join(pieces)
    lay = layers.split(line, big)
    assert layers.join(lay.skeleton, lay.refs, lay.blobs) == line
    assert layers.decode_refs(layers.encode_refs(lay.refs)) == lay.refs
    for h, b in lay.blobs.items():
        assert layers.digest(b) == h and len(b) >= big
        assert layers.decode_blob(*layers.encode_blob(b)) == b


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.text(alphabet=st.sampled_from('a"\\/\n\x00é😀 {}[]:,'), max_size=60)
    | st.builds(lambda c, n: c * n, st.sampled_from(["a", '"', "\\", '\\"', "é", "\n"]), st.integers(0, 700)),
    lambda kids: st.lists(kids, max_size=5) | st.dictionaries(st.text(max_size=8), kids, max_size=5),
    max_leaves=20,
)


@given(_json_values, st.integers(1, 64), st.sampled_from(["orjson", "ascii", "spaced"]), st.booleans())
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
def test_layers_split_of_a_json_line_cuts_where_the_regex_cuts(
    value: object, big: int, how: str, nl: bool
) -> None:
    import json

    import orjson

    line = {
        "orjson": lambda v: orjson.dumps(v),
        "ascii": lambda v: json.dumps(v).encode(),
        "spaced": lambda v: json.dumps(v, ensure_ascii=False, indent=1).replace("\n", " ").encode(),
    }[how](value)
    line += b"\r\n" if nl else b""
    assert layers.split(line, big, json=True) == layers.split(line, big)


def test_layers_split_of_every_real_line_cuts_where_the_regex_cuts() -> None:
    n = 0
    for p in REAL_FILES:
        for raw in records.split_lines(p.read_bytes()):
            _, parsed = records.facts_parsed(raw)
            if parsed:
                n += len(layers.split(raw).refs)
                assert layers.split(raw, json=True) == layers.split(raw), (p, raw[:80])
    assert n > 100  # long strings were cut


def test_base64_images_are_stored_decoded_and_come_back_exactly() -> None:
    import base64

    raw = bytes(range(256)) * 40
    b64 = base64.b64encode(raw)
    codec, payload = layers.encode_blob(b64)
    assert codec in (layers.B64, layers.B64_ZSTD) and len(payload) < len(b64)
    assert layers.decode_blob(codec, payload) == b64
    # base64 that does not re-encode to the same bytes (a newline inside) is kept as text
    odd = b64[:100] + b"\\n" + b64[100:200]
    assert layers.decode_blob(*layers.encode_blob(odd)) == odd


def test_split_lines_keeps_every_byte() -> None:
    data = b'{"a":1}\n\n{"b":\x00}\r\nplain\n{"torn'
    assert b"".join(records.split_lines(data)) == data
    assert records.split_lines(data)[-1] == b'{"torn'


# --- push and pull -----------------------------------------------------------------


@pytest.mark.parametrize("src", REAL_FILES, ids=lambda p: p.name)
def test_real_fixtures_pull_back_byte_identical(tmp_path: Path, src: Path) -> None:
    cfg = tmp_path / "cfg"
    p = _session(cfg, src.read_bytes())
    s = _store(tmp_path)
    r = push_session(s, p, config=cfg)
    assert r.streams[0].status == "new"
    assert _pulled(s, p.stem) == src.read_bytes()


_line = st.one_of(
    st.binary(max_size=60).map(lambda b: b.replace(b"\n", b"")),
    st.builds(
        lambda t, n: (
            '{"type":"user","uuid":"' + t + '","message":{"content":"' + "x\\u0000é" * n + '"}}'
        ).encode(),
        st.uuids().map(str),
        st.integers(0, 600),
    ),
)


@given(st.lists(_line, max_size=12), st.booleans(), st.lists(st.integers(0, 10_000), max_size=4))
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_incremental_pushes_at_any_cut_store_the_file_exactly(tmp_path_factory, lines, torn, cuts) -> None:
    """Claude Code appends; a push may come at any byte, mid-line included: the store holds
    the file exactly after every push, in one version."""
    tmp = tmp_path_factory.mktemp("inc")
    data = b"\n".join(lines) + (b"" if torn else b"\n")
    s = _store(tmp)
    p = _session(tmp / "cfg", b"")
    key = StreamKey(p.parent.name, p.stem)
    for c in sorted({min(c, len(data)) for c in cuts} | {len(data)}):
        p.write_bytes(data[:c])
        push_stream(s, key, p, None)
        assert _pulled(s, p.stem) == data[:c]
    with s.read() as cur:
        info = s.stream(cur, key)
        assert info is not None and [v.version for v in s.versions(cur, info.id)] == [1]


def test_a_rewritten_file_is_a_new_version_and_the_old_one_is_kept(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    first = (REAL / "v1.0.51-rejected-tool-interrupt.jsonl").read_bytes()
    p = _session(cfg, first)
    clock = Clock()
    s = _store(tmp_path, clock)
    push_session(s, p, config=cfg)
    after_first = clock.t
    p.write_bytes(first + b'{"type":"custom-title","customTitle":"x","sessionId":"s"}\n')
    r = push_session(s, p, config=cfg)
    assert (r.streams[0].status, r.streams[0].version, r.streams[0].lines) == ("appended", 1, 1)
    shrunk = b"\n".join(first.split(b"\n")[:3]) + b"\n"
    p.write_bytes(shrunk)
    r = push_session(s, p, config=cfg)
    assert (r.streams[0].status, r.streams[0].version) == ("rewritten", 2)
    assert _pulled(s, p.stem) == shrunk
    assert (
        _pulled(s, p.stem, AsOf(version=1))
        == first + b'{"type":"custom-title","customTitle":"x","sessionId":"s"}\n'
    )
    assert _pulled(s, p.stem, AsOf(time_ms=after_first)) == first


def test_damaged_lines_are_stored_as_they_are_with_their_diagnostics(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    good = (REAL / "v1.0.51-rejected-tool-interrupt.jsonl").read_bytes().split(b"\n")
    data = (
        good[0]
        + b"\n"
        + b"\x00" * 50
        + b"\n"
        + good[1][:40]
        + b"\xff\xfe\n"
        + b"\n".join(good[2:])
        + b'{"type":"us'
    )
    p = _session(cfg, data)
    s = _store(tmp_path)
    push_session(s, p, config=cfg)
    assert _pulled(s, p.stem) == data
    with s.read() as cur:
        info = s.stream(cur, StreamKey(p.parent.name, p.stem))
        v = s.versions(cur, info.id)[0]
    codes = {d["code"] for d in v.diagnostics}
    assert {"nul-run", "torn-tail"} <= codes, codes


def test_large_outputs_are_stored_once_across_sessions(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    src = (REAL / "v2.1.38-tool-heavy.jsonl").read_bytes()
    s = _store(tmp_path)
    push_session(s, _session(cfg, src, 1), config=cfg)
    one = s.size_bytes()
    push_session(s, _session(cfg, src, 2), config=cfg)
    two = s.size_bytes()
    assert one["blobs"] > 0 and two["blobs"] == one["blobs"]
    assert two["skeletons"] < 2.2 * one["skeletons"]


def test_pull_materialises_subagents_and_side_files_and_never_overwrites(tmp_path: Path) -> None:
    src = REAL / "claude-config-2.1.332"
    cfg = tmp_path / "cfg"
    stage(src, cfg)
    main = next(
        p
        for p in (cfg / "projects").rglob("*.jsonl")
        if "subagents" not in p.parts and (p.with_suffix("") / "subagents").is_dir()
    )
    s = _store(tmp_path)
    r = push_session(s, main, config=cfg)
    assert len(r.streams) > 1 and r.files > 0
    other = tmp_path / "other"
    written = pull_session(s, find_session(s, main.stem), config=other)
    for w in written:
        assert w.read_bytes() == (cfg / w.relative_to(other)).read_bytes(), w
    from transcript_tools.model.errors import WriteFailed

    # What is there already, byte for byte, is left alone (issue 16: it was refused, exit 6).
    assert pull_session(s, find_session(s, main.stem), config=other) == []
    changed = written[0]
    changed.write_bytes(changed.read_bytes() + b"\n")  # other bytes: refused without force
    with pytest.raises(WriteFailed):
        pull_session(s, find_session(s, main.stem), config=other)
    again = pull_session(s, find_session(s, main.stem), config=other, force=True)
    assert again == [changed] and changed.read_bytes() == main.read_bytes()
    from transcript_tools.edge.writer import BACKUP_SUFFIX, by_product

    assert by_product(changed, BACKUP_SUFFIX).read_bytes() == main.read_bytes() + b"\n"


def test_pull_with_cwd_rewrites_the_cwd_of_every_record_subagents_included_not_the_store(
    tmp_path: Path,
) -> None:
    # Issue 16, a new user's finding: `tt store pull --cwd DIR` moved the session into DIR's
    # project folder but left the records' `cwd` as recorded, where `tt import --cwd`
    # rewrites them. Checked here with the json module; the same bytes as import's in
    # tests/store/test_cli_store.py.
    import json

    cfg = tmp_path / "cfg"
    stage(REAL / "claude-config-2.1.332", cfg)
    old, new = "/home/dev/demo-app", "/home/someone/else"
    main = cfg / "projects" / "-home-dev-demo-app" / "4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
    s = _store(tmp_path)
    push_session(s, main, config=cfg, diagnose=None)
    stored = session_bytes(s, find_session(s, main.stem), AsOf())
    other = tmp_path / "other"
    written = pull_session(s, find_session(s, main.stem), config=other, cwd=new)
    transcripts = [w for w in written if w.suffix == ".jsonl"]
    assert len(transcripts) == 2  # the main transcript and its subagent
    for w in written:
        rel = w.relative_to(other)
        orig = cfg / rel if rel.parts[0] != "projects" else main.parent / Path(*rel.parts[2:])
        assert rel.parts[:2] in (("projects", "-home-someone-else"), ("file-history", main.stem)), rel
        if w.suffix != ".jsonl":
            assert w.read_bytes() == orig.read_bytes(), rel  # side files as stored
            continue
        before, after = orig.read_bytes().splitlines(), w.read_bytes().splitlines()
        assert len(before) == len(after)
        cwds = 0
        for a, b in zip(before, after, strict=True):
            if old.encode() not in a:
                assert a == b  # untouched lines byte for byte
                continue
            ra, rb = json.loads(a), json.loads(b)
            assert ra.get("uuid") == rb.get("uuid") and ra.get("type") == rb.get("type")
            if "cwd" in ra:
                assert ra["cwd"] == old and rb["cwd"] == new
                cwds += 1
        assert cwds > 0, rel
        assert f'"file_path":"{new}/'.encode() in w.read_bytes() or "subagents" in rel.parts
    # The store keeps the bytes as pushed.
    assert session_bytes(s, find_session(s, main.stem), AsOf()) == stored
    assert stored[""] == main.read_bytes()


# --- issue 16, a new user's second round -------------------------------------------

#: A real Claude Code 2.0.28 project folder: the main transcript and the session's two
#: subagent transcripts beside it (``agent-<id>.jsonl``, not under ``<id>/subagents/``).
V2028 = REAL / "v2.0.28-project"
SID2028 = "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9"


def _tree(root: Path) -> dict[Path, bytes]:
    return {p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_finding_2_0_x_agent_files_beside_the_session_are_pushed_with_it_and_pulled_back_in_place(
    tmp_path: Path,
) -> None:
    # Issue 16, a new user's finding (high): push/pull dropped the subagent transcripts of a
    # Claude Code 2.0.x session, which 2.0.x writes beside the main file; only the main
    # transcript was stored, so the pulled session had no subagents.
    cfg = tmp_path / "cfg"
    stage(V2028, cfg / "projects")
    proj = cfg / "projects" / "-Users-zawakin-agent-sample"
    main = proj / f"{SID2028}.jsonl"
    assert len(list(proj.glob("agent-*.jsonl"))) == 2
    s = _store(tmp_path)
    r = push_session(s, main, config=cfg)
    assert [x.key.subpath for x in r.streams] == [""] and r.files == 2
    with s.read() as cur:  # not stored as sessions of their own
        assert [x.key for x in s.list_streams(cur, None)] == [StreamKey(proj.name, SID2028)]
    other = tmp_path / "other"
    written = pull_session(s, find_session(s, SID2028), config=other)
    assert _tree(other) == _tree(cfg) and sorted(written) == sorted(other / k for k in _tree(cfg))
    # Unchanged: nothing pushed again; an agent file that grew is pushed with its session.
    assert push_session(s, main, config=cfg).files == 0
    agent = proj / "agent-90fa40b6.jsonl"
    agent.write_bytes(agent.read_bytes() + agent.read_bytes().splitlines(keepends=True)[-1])
    assert push_session(s, main, config=cfg).files == 1
    again = tmp_path / "again"
    pull_session(s, find_session(s, SID2028), config=again)
    assert _tree(again) == _tree(cfg)


def test_finding_a_resume_from_the_store_pushes_a_2_0_x_agent_file_back_with_its_session(
    tmp_path: Path,
) -> None:
    # What `--store` pulls into its temporary config dir it pushes back when it changed: a
    # 2.0.x agent file beside the sessions belongs to the session its records name, not to
    # a session of its own.
    from transcript_tools.store.files_materialise import _main_of

    cfg = tmp_path / "cfg"
    stage(V2028, cfg / "projects")
    proj = cfg / "projects" / "-Users-zawakin-agent-sample"
    assert _main_of(proj / "agent-0c4c3cf8.jsonl", cfg) == proj / f"{SID2028}.jsonl"
    assert _main_of(proj / f"{SID2028}.jsonl", cfg) == proj / f"{SID2028}.jsonl"


@pytest.mark.parametrize(
    "rel", ["project/7f2abd2d-0000.jsonl", "project/x/agent-1.jsonl", "project/notes.txt"]
)
def test_a_stored_project_file_that_is_no_2_0_x_agent_file_is_never_written(tmp_path: Path, rel: str) -> None:
    # A store may be anyone's: the side-file kind that writes into the project folder writes
    # only an `agent-*.jsonl` there, never another session's transcript or a path below.
    from transcript_tools.model.errors import Unreadable
    from transcript_tools.store.files import plan_pull

    cfg = tmp_path / "cfg"
    stage(V2028, cfg / "projects")
    s = _store(tmp_path)
    push_session(s, cfg / "projects" / "-Users-zawakin-agent-sample" / f"{SID2028}.jsonl", config=cfg)
    with s.write() as cur:
        s.put_file(cur, "-Users-zawakin-agent-sample", SID2028, rel, b"{}\n", None)
    with pytest.raises(Unreadable, match=r"is not a 2\.0\.x subagent transcript"):
        plan_pull(s, find_session(s, SID2028), config=tmp_path / "other")
    assert not (tmp_path / "other").exists()


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (b"", "an empty file"),
        (random.Random(16).randbytes(4096), "binary data"),
        (b"\0" * 5000, "NUL bytes only"),
        (b'{\n  "type": "user"\n}\n', "pretty-printed JSON"),
        (b'{"type":"us', "an incomplete JSON object"),
    ],
    ids=["empty", "random-bytes", "nuls", "pretty-json", "torn-only"],
)
def test_finding_a_file_in_which_no_line_is_a_json_object_is_not_pushed(
    tmp_path: Path, data: bytes, what: str
) -> None:
    # Issue 16, a new user's finding (medium): `tt store push binary.jsonl` stored random
    # bytes (and an empty file) as a session. Refused now with the words `tt validate FILE`
    # has for it (the oracle: validate's own report of the file).
    from transcript_tools.model.errors import NotATranscript
    from transcript_tools.validate.files import validate_path

    cfg = tmp_path / "cfg"
    p = _session(cfg, data)
    s = _store(tmp_path)
    with pytest.raises(NotATranscript) as e:
        push_session(s, p, config=cfg)
    assert validate_path(p).not_transcript == what
    assert e.value.message == f"{p}: {what}; this is not a transcript" and e.value.exit_code == 4
    with s.read() as cur:
        assert s.list_streams(cur, None) == []


def test_finding_a_damaged_transcript_is_still_pushed_as_it_is(tmp_path: Path) -> None:
    # Only a file with no JSON object at all is refused: one whose records sit after a NUL
    # run, or between torn lines, is a damaged session and is stored byte for byte.
    cfg = tmp_path / "cfg"
    good = (REAL / "v1.0.51-rejected-tool-interrupt.jsonl").read_bytes().splitlines(keepends=True)
    data = b"\0" * 3000 + b"\n" + b"\xff\xfe torn\n" + good[1] + b'{"type":"us'
    s = _store(tmp_path)
    damaged = [p.read_bytes() for p in sorted((FIXTURES / "damaged").glob("*.jsonl"))]
    for i, d in enumerate([data, *damaged]):
        p = _session(cfg, d, n=i + 1)
        push_session(s, p, config=cfg)
        assert _pulled(s, p.stem) == d


# --- the Agent SDK protocol --------------------------------------------------------


def test_sqlite_store_passes_the_agent_sdk_conformance_suite(tmp_path: Path) -> None:
    from claude_agent_sdk.testing import run_session_store_conformance

    from transcript_tools.store.sdk import TTSessionStore

    n = itertools.count()
    asyncio.run(
        run_session_store_conformance(
            lambda: TTSessionStore(open_sqlite(tmp_path / f"{next(n)}.db", Clock()))
        )
    )


def test_sdk_entries_with_nul_and_lone_surrogates_load_deep_equal(tmp_path: Path) -> None:
    from transcript_tools.store.sdk import TTSessionStore

    store = TTSessionStore(_store(tmp_path))
    key = {"project_key": "p", "session_id": "s"}
    entries = [
        {"type": "user", "uuid": "u1", "message": {"content": "a\x00b\udc80é"}},
        {"type": "assistant", "uuid": "u2", "n": 1.5},
        {"type": "user", "uuid": "u1", "dup": True},  # same uuid: the idempotency key
        {"type": "custom-title", "customTitle": "t"},
    ]
    asyncio.run(store.append(key, entries))
    assert asyncio.run(store.load(key)) == [entries[0], entries[1], entries[3]]


@pytest.mark.parametrize("sessions", [None, 1000])  # one join, or each session placed when reached
@pytest.mark.parametrize(
    "word", ["Grep", "def", "app", "compact", "agent", "tool_use", "app.py", "util.py", "file_path"]
)
def test_search_through_the_store_finds_what_tt_search_finds_in_the_files(
    tmp_path: Path, word: str, sessions: int | None
) -> None:
    from transcript_tools.catalog.files import search_files
    from transcript_tools.catalog.search import make_matcher
    from transcript_tools.store.find import search_store

    cfg = tmp_path / "cfg"
    stage(CONFIG_332, cfg)
    s = _store(tmp_path)
    for p in (cfg / "projects").rglob("*.jsonl"):
        if "subagents" not in p.parts:
            push_session(s, p, config=cfg, diagnose=None)
    m = make_matcher(word)
    # The index finds the lines holding every word of the pattern (letters and digits, as
    # FTS5's unicode61 cuts them: ``app.py`` is two) as a whole word, and the store matches
    # those lines as tt search does: `compact` inside `compacted` is found by tt search in
    # the files only. Every other hit must be the same.
    words = [
        re.compile(r"(?<![^\W_])" + re.escape(w) + r"(?![^\W_])", re.IGNORECASE)
        for w in re.findall(r"[^\W_]+", word)
    ]

    def whole_word_lines(hits: list) -> set[int]:  # type: ignore[type-arg]
        texts: dict[int, str] = {}
        for _, h in hits:
            texts[h.line] = texts.get(h.line, "") + "\n" + h.text
        return {line for line, text in texts.items() if all(w.search(text) for w in words)}

    files = []
    for sh in search_files(list((cfg / "projects").iterdir()), m, per_session=1000):
        keep = whole_word_lines(sh.hits)
        hits = [(a, h.line, h.kind, h.spans) for a, h in sh.hits if h.line in keep]
        if hits:
            files.append((sh.session_id, hits))
    stored = [
        (sh.session_id, [(a, h.line, h.kind, h.spans) for a, h in sh.hits])
        for sh in search_store(s, word, m, per_session=1000, sessions=sessions)
    ]
    assert stored and sorted(stored) == sorted(files)


def test_both_placements_give_the_same_sessions_in_the_same_order(tmp_path: Path) -> None:
    """`tt search --store -n N` places each session when it reaches it; without -n one join
    places every line. On a store with rewritten sessions (older versions indexed too) and
    subagents, both give the same sessions, in the same order, with the same hits."""
    from transcript_tools.catalog.search import make_matcher
    from transcript_tools.store.find import search_store

    cfg = tmp_path / "cfg"
    stage(CONFIG_332, cfg)
    s = _store(tmp_path)
    mains = sorted(p for p in (cfg / "projects").rglob("*.jsonl") if "subagents" not in p.parts)
    for p in mains:
        push_session(s, p, config=cfg, diagnose=None)
    # Rewrite two sessions (a new version each, the old one's lines still in the index),
    # then push the first one again after the others: it becomes the newest.
    for p in mains[:2]:
        lines = p.read_bytes().splitlines(keepends=True)
        p.write_bytes(b"".join(lines[: max(1, len(lines) // 2)]))
        push_session(s, p, config=cfg, diagnose=None)
    with s.read() as cur:
        for p in mains[:2]:
            stream = s.stream(cur, StreamKey(p.parent.name, p.stem))
            assert stream is not None and stream.current_version == 2

    def run(word: str, sessions: int | None, subagents: bool) -> list[tuple[str, list[tuple[object, ...]]]]:
        return [
            (sh.session_id, [(a, h.line, h.kind, h.spans) for a, h in sh.hits] + [sh.more])
            for sh in search_store(
                s, word, make_matcher(word), per_session=3, subagents=subagents, sessions=sessions
            )
        ]

    compared = 0
    for word in ["Grep", "def", "app", "the", "agent", "file_path", "compact"]:
        for subagents in (True, False):
            joined = run(word, None, subagents)
            placed = run(word, 1000, subagents)
            assert placed == joined, (word, subagents)
            compared += bool(joined)
    assert compared >= 10


@pytest.mark.parametrize("detail", ["full", "none"])  # a store made before 2026-12 has positions
def test_a_query_finds_the_lines_with_every_word_on_either_index(detail: str) -> None:
    import sqlite3

    from transcript_tools.edge.store_sqlite import _fts_query

    texts = {
        1: "Edit src/App.py: fixed the café",
        2: "app py",  # every token, not as one word: found, then matched exactly by the store
        3: "src/util.py and a CAFE",
        4: "the apple pie",
    }
    c = sqlite3.connect(":memory:")
    c.execute(f"CREATE VIRTUAL TABLE t USING fts5(text, content='', tokenize='unicode61', detail={detail})")
    c.executemany("INSERT INTO t (rowid, text) VALUES (?, ?)", texts.items())

    def found(q: str) -> set[int]:
        return {r for (r,) in c.execute("SELECT rowid FROM t WHERE t MATCH ?", (_fts_query(q),))}

    assert found("app.py") == {1, 2}
    assert found("Café") == found("cafe") == {1, 3}  # case and diacritics folded as the index folds them
    assert found('src/ "util') == {3}
    assert found("AND OR NEAR") == set()  # words, not FTS5 syntax
    assert found("---") == found("") == set()  # no word the index holds


def test_ls_rows_from_the_store_are_the_rows_of_the_files(tmp_path: Path) -> None:
    from transcript_tools.catalog.files import list_sessions
    from transcript_tools.store.find import store_rows

    cfg = tmp_path / "cfg"
    (cfg / "projects" / "p").mkdir(parents=True)
    for i, src in enumerate(sorted(REAL.glob("*.jsonl"))):  # 3 KB to 3.4 MB: heads and tails of every size
        (cfg / "projects" / "p" / f"{uuid.UUID(int=i + 1)}.jsonl").write_bytes(src.read_bytes())
    s = _store(tmp_path)
    for p in sorted((cfg / "projects" / "p").glob("*.jsonl")):
        push_session(s, p, config=cfg, diagnose=None)
    files = {
        r.session_id: (r.lite, r.size, r.counts, r.skipped, r.subagents)
        for r in list_sessions([cfg / "projects" / "p"], workers=1)
    }
    stored = {r.session_id: (r.lite, r.size, r.counts, r.skipped, r.subagents) for r in store_rows(s)}
    assert len(files) > 10 and stored == files
    # Without the lite row kept at push (a session the Agent SDK mirrored), the same rows are
    # rebuilt from the stored lines' first and last 64 KiB.
    s.conn.execute("UPDATE tt_version SET lite = NULL")
    rebuilt = {r.session_id: (r.lite, r.size, r.counts, r.skipped, r.subagents) for r in store_rows(s)}
    assert rebuilt == files


def test_finding_ls_from_the_store_counts_a_2_0_x_sessions_agent_files_as_tt_ls_does(tmp_path: Path) -> None:
    # Issue 16 (round 2): the 2.0.x subagent files are stored beside their session, and
    # `tt ls --store` counts them as `tt ls` counts them in the folder.
    from transcript_tools.catalog.files import list_sessions
    from transcript_tools.store.find import store_rows

    cfg = tmp_path / "cfg"
    stage(V2028, cfg / "projects")
    proj = cfg / "projects" / "-Users-zawakin-agent-sample"
    s = _store(tmp_path)
    push_session(s, proj / f"{SID2028}.jsonl", config=cfg, diagnose=None)
    files = {r.session_id: (r.lite, r.size, r.subagents) for r in list_sessions([proj], workers=1)}
    stored = {r.session_id: (r.lite, r.size, r.subagents) for r in store_rows(s)}
    assert stored == files and files[SID2028][2] == 2


# --- batched pushes ------------------------------------------------------------------


def test_push_many_commits_whole_sessions_a_batch_at_a_time(tmp_path: Path, monkeypatch) -> None:
    """A push that fails mid-way (here: the fourth session's insert raises) leaves the
    batches committed before it whole and nothing of the batch it was in."""
    from transcript_tools.store import files

    cfg = tmp_path / "cfg"
    srcs = REAL_FILES[:5]
    paths = [_session(cfg, src.read_bytes(), n=i + 1) for i, src in enumerate(srcs)]
    s = _store(tmp_path)
    monkeypatch.setattr(files, "BATCH_SESSIONS", 2)
    real_apply = files.apply_session

    def apply(store, cur, job, diagnose):
        if job.session_id == paths[3].stem:
            raise KeyboardInterrupt  # as a kill would, mid-transaction
        return real_apply(store, cur, job, diagnose)

    monkeypatch.setattr(files, "apply_session", apply)
    pushed = []
    with pytest.raises(KeyboardInterrupt):
        for r in files.push_many(s, s.url, paths, config=cfg, workers=1):
            pushed.append(r.session_id)
    assert pushed == [paths[0].stem, paths[1].stem]
    with s.read() as cur:
        stored = {x.key.session_id for x in s.list_streams(cur)}
        assert cur.execute("SELECT COUNT(DISTINCT stream_id) FROM tt_line").fetchone()[0] == 2
    assert stored == {paths[0].stem, paths[1].stem}
    for p in paths[:2]:
        assert _pulled(s, p.stem) == p.read_bytes()
    monkeypatch.setattr(files, "apply_session", real_apply)
    assert [r.streams[0].status for r in files.push_many(s, s.url, paths, config=cfg, workers=1)] == [
        "unchanged",
        "unchanged",
        "new",
        "new",
        "new",
    ]
    for p in paths:
        assert _pulled(s, p.stem) == p.read_bytes()


def test_a_job_prepared_before_another_push_committed_is_redone_not_duplicated(tmp_path: Path) -> None:
    """The CPU work is done with no lock held: if another push stores the session between
    the work and the write, the write plans again on what is stored then."""
    from transcript_tools.store.files import apply_session, prepare_session

    cfg = tmp_path / "cfg"
    data = (REAL_FILES[0]).read_bytes()
    lines = records.split_lines(data)
    half = b"".join(lines[: len(lines) // 2])
    p = _session(cfg, half)
    s = _store(tmp_path)
    push_session(s, p, config=cfg, diagnose=None)
    p.write_bytes(data)
    stale = prepare_session(s, p, config=cfg, diagnose=None)  # planned as an append of the rest
    assert stale.streams[0].plan[0] == "appended"
    push_session(s, p, config=cfg, diagnose=None)  # another push stores the rest first
    with s.write() as cur:
        r = apply_session(s, cur, stale, None)
    assert r.streams[0].status == "unchanged"
    assert _pulled(s, p.stem) == data
    with s.read() as cur:
        n = cur.execute("SELECT COUNT(*), COUNT(DISTINCT seq) FROM tt_line").fetchone()
    assert n == (len(lines), len(lines))


def test_a_blob_shared_within_a_batch_is_encoded_once_and_stored_once(tmp_path: Path, monkeypatch) -> None:
    """Sessions of one batch are prepared before any is committed: a long string the first
    one brought is not compressed again for the next, and is stored once."""
    from transcript_tools.store import files, prepare

    big = b"x" * 3000 + b"shared tool output"
    body = (
        b'{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"'
        + big
        + b'"}}\n'
    )
    cfg = tmp_path / "cfg"
    paths = [_session(cfg, body + f'{{"type":"x","n":{i}}}\n'.encode(), n=i + 1) for i in range(3)]
    s = _store(tmp_path)
    seen: list[int] = []
    real = layers.encode_blob

    def counting(data: bytes):
        seen.append(len(data))
        return real(data)

    monkeypatch.setattr(prepare.layers, "encode_blob", counting)
    out = list(files.push_many(s, s.url, paths, config=cfg, workers=1, validate=False))
    assert [r.streams[0].status for r in out] == ["new"] * 3
    assert seen == [len(big)]
    with s.read() as cur:
        assert cur.execute("SELECT COUNT(*) FROM tt_blob WHERE size = ?", (len(big),)).fetchone()[0] == 1
    for p in paths:
        assert _pulled(s, p.stem) == p.read_bytes()


def test_a_transaction_stores_its_blobs_first_and_in_hash_order(tmp_path: Path, monkeypatch) -> None:
    """Two PostgreSQL writers storing the same new blobs wait for each other on the unique
    index; in different orders they deadlock (two workers of `tt store push --all` did, on
    the bench set). Every transaction takes its blobs first, in hash order, whatever order
    its sessions bring them in."""
    from transcript_tools.store import files
    from transcript_tools.store.engine import Store

    texts = [f"{i} ".encode() * 700 for i in range(6)]
    texts.sort(key=layers.digest, reverse=True)  # brought in the opposite order to the hashes

    def line(n: int, t: bytes) -> bytes:
        return (
            b'{"type":"user","uuid":"u%d","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"'
            % n
            + t
            + b'"}}\n'
        )

    cfg = tmp_path / "cfg"
    paths = [
        _session(cfg, b"".join(line(i, t) for i, t in enumerate(texts[:4])), n=1),
        _session(cfg, b"".join(line(i, t) for i, t in enumerate(texts[::-1])), n=2),
    ]
    s = _store(tmp_path)
    order: list[str] = []
    real_q = Store._q

    def q(self, cur, sql, args=()):
        if sql.startswith("INSERT INTO tt_blob"):
            order.append(args[0])
        elif sql.startswith("INSERT INTO tt_line") or "FROM tt_line" in sql:
            order.append("line")
        return real_q(self, cur, sql, args)

    monkeypatch.setattr(Store, "_q", q)
    out = list(files.push_many(s, s.url, paths, config=cfg, workers=1, validate=False))
    assert [r.streams[0].status for r in out] == ["new", "new"]
    blobs = [x for x in order if x != "line"]
    assert len(blobs) == 6 and blobs == sorted(blobs)
    first_line = order.index("line")
    assert all(x == "line" for x in order[first_line:]), "every blob before any line"
    for p in paths:
        assert _pulled(s, p.stem) == p.read_bytes()
