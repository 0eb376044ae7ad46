"""`tt store push` checks each line it stores without decoding it twice (`store.files_checks`):
the diagnostics it keeps are `tt validate`'s, and the rows are those of the line-by-line
reference (`records.facts_parsed`, `layers.split`), on every real fixture and on damaged files."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import tt
from tests.support.paths import REAL
from transcript_tools.edge.reader import iter_raw
from transcript_tools.edge.store_sqlite import open_sqlite
from transcript_tools.store import files_checks, layers, records
from transcript_tools.store.engine import StreamKey
from transcript_tools.store.files import prepare_stream, push_stream, validate_diagnostics
from transcript_tools.store.prepare import raw_lines
from transcript_tools.validate.files import validate_path

REAL_FILES = sorted(REAL.rglob("*.jsonl"))
SID = str(uuid.UUID(int=5))
BASE = (
    REAL / "claude-config-2.1.197/projects/-home-dev-demo-app/8c2f9135-4610-4218-97b1-bc3e03643255.jsonl"
).read_bytes()
GOOD = BASE.split(b"\n")[:-1]  # whole lines, without their newline


def _json(x: Any) -> Any:
    return json.loads(json.dumps(x))


def _validated(path: Path, cap: int | None = None) -> list[dict[str, Any]]:
    r = validate_path(path) if cap is None else validate_path(path, cap=cap)
    return _json([d.to_dict() for d in r.diagnostics])


def _stored(tmp: Path, path: Path) -> list[dict[str, Any]]:
    s = open_sqlite(tmp / f"store-{uuid.uuid4()}.sqlite3", lambda: 1)
    key = StreamKey("p", "s")
    push_stream(s, key, path, validate_diagnostics)
    with s.read() as cur:
        info = s.stream(cur, key)
        assert info is not None
        v = s.versions(cur, info.id)[-1]
    assert v.diagnostics is not None
    return v.diagnostics


@pytest.mark.parametrize("src", REAL_FILES, ids=lambda p: p.relative_to(REAL).as_posix())
def test_push_stores_the_diagnostics_of_tt_validate_on_every_real_fixture(tmp_path: Path, src: Path) -> None:
    # Pushed where they are (push only reads): subagent files keep their session beside them,
    # so parents held by another file of the session count as Claude Code's links here too.
    assert _stored(tmp_path, src) == _validated(src)


def test_the_real_fixtures_have_diagnostics_to_compare() -> None:
    # The comparison above is not between empty lists.
    codes = {d["code"] for p in REAL_FILES for d in _validated(p)}
    assert len(codes) >= 5, codes


def _damaged() -> dict[str, bytes]:
    g = GOOD
    fused = g[3] + g[4]
    return {
        "torn-tail": b"\n".join(g) + b"\n" + g[5][: len(g[5]) // 2],
        "nul-run": b"\n".join([*g[:4], b"\x00" * 300, *g[4:]]) + b"\n",
        "invalid-utf8": b"\n".join([*g[:2], g[2][:60] + b"\xff\xfe" + g[2][60:], *g[3:]]) + b"\n",
        "crlf-some": b"\n".join(x + b"\r" if i % 3 == 0 else x for i, x in enumerate(g)) + b"\n",
        "crlf-every": b"\r\n".join(g) + b"\r\n",
        "crlf-torn": b"\n".join(g) + b"\n" + g[1] + b"\r",
        "no-final-newline": b"\n".join(g),
        "blank-and-bom": b"\xef\xbb\xbf" + b"\n".join([*g[:3], b"", b"  ", *g[3:]]) + b"\n",
        "fused": b"\n".join([*g[:3], fused, *g[5:]]) + b"\n",
        "not-objects": b"\n".join([*g[:2], b"[1,2]", b"null", b"42", b'"s"', b" " + g[2], *g[3:]]) + b"\n",
        "separators": b"\n".join(
            [*g[:1], g[1].replace(b'"type"', "\u2028\u2029\x85".encode().join([b'"ty', b'pe"']), 1), *g[2:]]
        )
        + b"\n",
        "duplicates": b"\n".join(g + g[2:5]) + b"\n",
        "garbage": b"\n".join([*g[:3], b"not json at all", b'{"type":', *g[3:]]) + b"\n",
        "not-a-transcript": json.dumps({"a": [1, 2, {"b": 3}]}, indent=2).encode(),
        "empty": b"",
        "only-newlines": b"\n\n\n",
    }


@pytest.mark.parametrize("name", sorted(_damaged()))
def test_push_stores_the_diagnostics_of_tt_validate_on_damaged_files(tmp_path: Path, name: str) -> None:
    p = tmp_path / "projects" / "-home-u-p" / f"{SID}.jsonl"
    p.parent.mkdir(parents=True)
    p.write_bytes(_damaged()[name])
    assert _stored(tmp_path, p) == _validated(p)


MAIN_332 = (
    REAL / "claude-config-2.1.332/projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
)


def _with_orphan_result() -> bytes:
    """The 2.1.332 session (one compact boundary) with a tool result for no call at its end:
    an API finding only the checks on the part a resume loads can see."""
    data = MAIN_332.read_bytes()
    recs = [json.loads(x) for x in data.split(b"\n")[:-1]]
    last = [r for r in recs if r.get("type") in ("user", "assistant")][-1]
    user = {k: v for k, v in [r for r in recs if r.get("type") == "user"][-1].items() if k != "toolUseResult"}
    user |= {
        "uuid": str(uuid.UUID(int=99)),
        "parentUuid": last["uuid"],
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "x"}],
        },
    }
    return data + json.dumps(user, separators=(",", ":")).encode() + b"\n"


CAPPED = {
    "332-orphan-result": _with_orphan_result,
    "332": MAIN_332.read_bytes,
    "2.1.14-microcompact": (REAL / "v2.1.14-microcompact-partial-copy.jsonl").read_bytes,
    "2.1.29-image": (REAL / "v2.1.29-user-image-partial-copy.jsonl").read_bytes,
}


@pytest.mark.parametrize(
    "cap",
    [
        300_000,  # past the cap, the part after the last compact boundary fits: a second pass
        50_000,  # past the cap, and that part does not fit: the request size alone
        10_000,
    ],
)
@pytest.mark.parametrize("name", sorted(CAPPED))
def test_files_past_the_cap_get_the_same_second_pass(
    tmp_path: Path, monkeypatch, name: str, cap: int
) -> None:
    p = tmp_path / "projects" / "-home-u-p" / f"{SID}.jsonl"
    p.parent.mkdir(parents=True)
    p.write_bytes(CAPPED[name]())
    monkeypatch.setattr(files_checks, "CAP", cap)
    got = _stored(tmp_path, p)
    assert got == _validated(p, cap)
    assert any(d["code"] == "past-cap" for d in got)


def test_the_second_pass_is_reached_and_finds_what_only_it_finds(tmp_path: Path) -> None:
    # Past the cap the part after the boundary is checked in a second pass, whatever its size
    # (300 kB: it fits the cap; 50 kB: it does not), and the orphan result is reported both
    # times (the comparison above covers both).
    p = tmp_path / f"{SID}.jsonl"
    p.write_bytes(_with_orphan_result())
    for cap in (300_000, 50_000):
        r = validate_path(p, cap=cap)
        assert r.past_cap and r.api_checked and "tool-result-orphan" in {d.code for d in r.diagnostics}, cap


def test_raw_lines_are_the_readers_lines(tmp_path: Path) -> None:
    for name, data in _damaged().items():
        p = tmp_path / f"{name}.jsonl"
        p.write_bytes(data)
        assert list(raw_lines(data)) == list(iter_raw(p)), name
        for start in {0, len(data) // 2, len(data)}:
            start = data.rfind(b"\n", 0, start) + 1 if start else 0
            assert list(raw_lines(data, start)) == list(iter_raw(p, start)), (name, start)


@pytest.mark.parametrize("validate", [True, False])
def test_rows_are_the_line_by_line_reference(tmp_path: Path, validate: bool) -> None:
    """What each row holds (columns, search text, bytes) is what the per-line functions give."""
    s = open_sqlite(tmp_path / "s.sqlite3", lambda: 1)
    cases = {**_damaged(), **{p.name: p.read_bytes() for p in REAL_FILES}}
    for name, data in cases.items():
        p = tmp_path / "projects" / "-home-u-p" / f"{SID}.jsonl"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        job = prepare_stream(s, StreamKey("p", name), p, validate_diagnostics if validate else None)
        assert job.prepared is not None
        blobs = {
            **job.prepared.maybe_known,
            **{h: layers.decode_blob(c, b) for h, (c, b, _) in job.prepared.blobs.items()},
        }
        lines = records.split_lines(data)
        assert len(job.prepared.rows) == len(lines), name
        offset = 0
        for i, (raw, row, text) in enumerate(zip(lines, job.prepared.rows, job.prepared.texts, strict=True)):
            f, parsed = records.facts_parsed(raw)
            lay = layers.split(raw, json=parsed)
            seq, off, complete, typ, uid, parent, ts, codec, skel, refs = row
            assert (seq, off, complete) == (i, offset, 1 if raw.endswith(b"\n") else 0)
            assert (typ, uid, parent, ts) == (f.type, f.uuid, f.parent_uuid, f.timestamp), (name, i)
            assert layers.decode_blob(codec, skel) == lay.skeleton and layers.decode_refs(refs) == lay.refs
            assert layers.join(lay.skeleton, lay.refs, blobs) == raw
            assert text == (f.text.replace("\x00", " ") if f.text else None)
            offset += len(raw)


def test_tt_store_push_keeps_what_tt_validate_prints(tmp_path: Path) -> None:
    """The same, through the command line: a damaged session pushed, its version's
    diagnostics (`tt store log --json`) against `tt validate --json` on the file."""
    cfg = tmp_path / "cfg"
    p = cfg / "projects" / "-home-u-p" / f"{SID}.jsonl"
    p.parent.mkdir(parents=True)
    d = _damaged()
    p.write_bytes(d["nul-run"][:-1] + b"\r\n" + d["torn-tail"])
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    v = tt("validate", "--json", str(p), config=cfg, drop=("TT_STORE",))
    assert v.returncode == 1, v.stderr
    want = json.loads(v.stdout)["files"][0]["diagnostics"]
    assert {"nul-run", "torn-tail", "crlf"} <= {x["code"] for x in want}
    r = tt("store", "push", SID, "--store", url, config=cfg, drop=("TT_STORE",))
    assert r.returncode == 0, r.stderr
    log = tt("store", "log", SID, "--store", url, "--json", config=cfg, drop=("TT_STORE",))
    assert log.returncode == 0, log.stderr
    got = json.loads(log.stdout)["versions"]
    assert [v["subpath"] for v in got] == [""]
    assert got[0]["diagnostics"] == want
