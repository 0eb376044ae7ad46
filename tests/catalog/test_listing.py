"""`listing` and `titles`: the lite read of `tt ls` gives the Agent SDK's titles.

The SDK (claude-agent-sdk, a test dependency) is the oracle: its ``list_sessions`` on
every real fixture laid out in a config dir, and its private string scans on generated
bytes, damaged ones included.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import damage
from tests.support.paths import REAL
from transcript_tools.catalog.listing import (
    LITE_READ_BYTES,
    count_entries,
    created_at_ms,
    health_of,
    parse_lite,
    sort_rows,
)
from transcript_tools.edge.reader import iter_lines, read_head_tail
from transcript_tools.model.titles import (
    first_prompt,
    first_record_field,
    first_string_field,
    last_string_field,
    last_titles,
)
from transcript_tools.validate.files import validate_path

sdk_sessions = pytest.importorskip(
    "claude_agent_sdk._internal.sessions", reason="claude-agent-sdk is a test dependency"
)


#: Real files whose head holds a nested ``"cwd"`` before the first record's own: the SDK's
#: byte scan takes the nested one (2.1.296's ``wireIngestContext``, in Git Bash's form);
#: tt takes the record's. File -> (tt's cwd, the SDK's cwd), read off the file by hand.
SDK_TAKES_A_NESTED_CWD = {
    "v2.1.296-windows-git-bash-partial-copy.jsonl": (
        "C:\\Users\\anil1\\Downloads\\Hackathon\\TUMHackathon26",
        "/c/Users/anil1/Downloads/Hackathon/TUMHackathon26",
    ),
}


def main_files() -> list[Path]:
    """Every real transcript that is not a subagent file."""
    return sorted(
        p for p in REAL.rglob("*.jsonl") if not p.name.startswith("agent-") and "subagents" not in p.parts
    )


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, Path]]:
    """The real fixtures as sessions of one project in a temp config dir (file names
    made session ids: the SDK lists only ``<uuid>.jsonl``)."""
    proj = tmp_path / "projects" / "-home-dev-fixtures"
    proj.mkdir(parents=True)
    where: dict[str, Path] = {}
    for k, src in enumerate(main_files()):
        sid = str(uuid.uuid5(uuid.NAMESPACE_URL, str(src.relative_to(REAL))))
        dest = proj / f"{sid}.jsonl"
        shutil.copy(src, dest)
        os.utime(dest, (1_700_000_000 + 60 * k, 1_700_000_000 + 60 * k))  # distinct: the order is defined
        where[sid] = src
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    return proj, where


def test_titles_match_the_sdk_list_sessions(config: tuple[Path, dict[str, Path]]) -> None:
    from claude_agent_sdk import list_sessions

    proj, where = config
    sdk = {s.session_id: s for s in list_sessions()}
    assert len(sdk) >= 10  # the SDK saw the fixtures at all
    for p in sorted(proj.iterdir()):
        head, tail, st_ = read_head_tail(p)
        lite = parse_lite(p.stem, head, tail, st_.st_size)
        s = sdk.get(p.stem)
        name = where[p.stem].name
        assert (s is None) == (lite.hidden is not None), name
        if s is None:
            continue
        assert lite.title == s.summary, name
        assert lite.sdk_custom_title == s.custom_title, name
        assert lite.first_prompt == s.first_prompt, name
        assert lite.git_branch == s.git_branch, name
        if name in SDK_TAKES_A_NESTED_CWD:
            # The one field tt reads better than the SDK (`titles.first_record_field`).
            assert lite.cwd == SDK_TAKES_A_NESTED_CWD[name][0], name
            assert s.cwd == SDK_TAKES_A_NESTED_CWD[name][1], name
        else:
            assert lite.cwd == s.cwd, name
        assert lite.tag == s.tag, name
        assert created_at_ms(lite.created_at) == s.created_at, name


def test_catalog_lists_what_the_sdk_lists_newest_first(config: tuple[Path, dict[str, Path]]) -> None:
    from claude_agent_sdk import list_sessions

    from transcript_tools.catalog.files import list_sessions as tt_list

    proj, _ = config
    rows = [r for r in tt_list([proj]) if r.lite.hidden is None]
    sdk = list_sessions()
    assert [r.session_id for r in rows] == [s.session_id for s in sdk]
    assert [r.lite.title for r in rows] == [s.summary for s in sdk]
    assert [r.mtime_ms for r in rows] == [s.last_modified for s in sdk]


def test_a_custom_title_appended_by_the_sdk_wins(config: tuple[Path, dict[str, Path]]) -> None:
    from claude_agent_sdk import list_sessions, rename_session, tag_session

    proj, _ = config
    sid = sorted(p.stem for p in proj.iterdir())[0]
    rename_session(sid, "Renamed by the SDK")
    tag_session(sid, "important")
    head, tail, st_ = read_head_tail(proj / f"{sid}.jsonl")
    lite = parse_lite(sid, head, tail, st_.st_size)
    (s,) = [s for s in list_sessions() if s.session_id == sid]
    assert lite.title == s.summary == "Renamed by the SDK"
    assert lite.title_source == "custom-title"
    assert lite.tag == s.tag == "important"


# --- the scans against the SDK's own functions -----------------------------------------------

FRAGMENTS = [
    '{"customTitle":"',
    '{"customTitle": "',
    '{"aiTitle":"',
    '"aiTitle": "',
    '"lastPrompt":"',
    '"summary":"',
    '"',
    "\\",
    '\\"',
    "\\\\",
    "\n",
    "ab",
    "é",
    "}",
    ":",
    ",",
    'Title":"',
    "\\u00e9",
    "\\n",
]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=16))
def test_string_scans_equal_the_sdk(parts: list[str]) -> None:
    text = "".join(parts)
    data = text.encode()
    for key in ("customTitle", "aiTitle", "lastPrompt", "summary"):
        assert last_string_field(data, key) == sdk_sessions._extract_last_json_string_field(text, key), key
        assert first_string_field(data, key) == sdk_sessions._extract_json_string_field(text, key), key
    custom, ai = last_titles(data)
    assert custom == sdk_sessions._extract_last_json_string_field(text, "customTitle")
    assert ai == sdk_sessions._extract_last_json_string_field(text, "aiTitle")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_scans_never_raise_on_any_bytes(data: bytes) -> None:
    text = data.decode("utf-8", errors="replace")
    assert last_string_field(data, "customTitle") == sdk_sessions._extract_last_json_string_field(
        text, "customTitle"
    )
    first_prompt(data)
    parse_lite("x", data, data, len(data))


@pytest.mark.parametrize("path", main_files(), ids=lambda p: p.name[:40])
def test_first_prompt_equals_the_sdk_on_real_heads(path: Path) -> None:
    head = path.read_bytes()[:LITE_READ_BYTES]
    assert first_prompt(head) == sdk_sessions._extract_first_prompt_from_head(
        head.decode("utf-8", errors="replace")
    )


# --- counts ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", main_files(), ids=lambda p: p.name[:40])
def test_lite_counts_are_exact_when_covered_and_a_lower_bound_otherwise(path: Path) -> None:
    head, tail, st_ = read_head_tail(path)
    lite = parse_lite("x", head, tail, st_.st_size)
    exact = count_entries(e for ln in iter_lines(path) for e in ln.entries)
    assert lite.counts.exact == (st_.st_size <= 2 * LITE_READ_BYTES)
    if lite.counts.exact:
        assert (lite.counts.messages, lite.counts.compactions) == (exact.messages, exact.compactions)
    else:
        assert lite.counts.messages <= exact.messages
        assert lite.counts.compactions <= exact.compactions


def test_model_is_the_last_real_model(tmp_path: Path) -> None:
    path = REAL / "v1.0.51-rejected-tool-interrupt.jsonl"
    import orjson

    models = [
        r["message"]["model"]
        for r in map(orjson.loads, path.read_bytes().splitlines())
        if r.get("type") == "assistant" and r["message"].get("model") != "<synthetic>"
    ]
    head, tail, st_ = read_head_tail(path)
    assert parse_lite("x", head, tail, st_.st_size).model == models[-1]


# --- damage ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["torn-tail", "nul-run", "garbage", "not-object", "fused-records"])
def test_damage_in_head_or_tail_is_reported_with_its_line(kind: str) -> None:
    src = (REAL / "v2.1.38-tool-heavy.jsonl").read_bytes()  # fits in the head: every line seen
    d = damage.KINDS[kind](src)
    lite = parse_lite("x", d.data, d.data, len(d.data))
    report = damage.validate_bytes(d.data)
    expected = {
        (x.line, x.code)
        for x in report.diagnostics
        if x.family == "line" and x.code not in ("no-final-newline",)
    }
    got = {(s.line, s.code) for s in lite.skipped}
    # The lite read sees NULs and a torn end without parsing; the rest it sees when a
    # marker line it reads is damaged.
    if kind in ("torn-tail", "nul-run"):
        assert got == expected
    else:
        assert got <= expected
    assert lite.title is not None


def test_empty_file_is_hidden_and_garbage_does_not_raise() -> None:
    assert parse_lite("x", b"", b"", 0).hidden == "empty"
    junk = b"\x00\xff" * 40000
    lite = parse_lite("x", junk[:LITE_READ_BYTES], junk[-LITE_READ_BYTES:], len(junk))
    assert lite.hidden == "no-title"
    assert lite.skipped


# --- health ----------------------------------------------------------------------------------------


def test_health_clean_repairable_damaged_past_cap(tmp_path: Path) -> None:
    src = REAL / "v2.1.38-tool-heavy.jsonl"
    assert health_of(validate_path(src, schema=False)) == "clean"
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(damage.torn_tail(src.read_bytes()).data)
    assert health_of(validate_path(torn, schema=False)) == "repairable"
    assert health_of(validate_path(src, cap=1000, schema=False)) == "past-cap"
    # An error `tt repair` has no fix for: a record that does not fit its schema (an
    # assistant line's timestamp a number). Empty content was this test's example until
    # repair learnt to drop an empty message (`drop-empty-message`).
    import orjson

    bad = tmp_path / "schema.jsonl"
    out, done = [], False
    for ln in src.read_bytes().splitlines(keepends=True):
        r = orjson.loads(ln)
        if r.get("type") == "assistant" and not done:
            r["timestamp"], done = 12345, True
            ln = orjson.dumps(r) + b"\n"
        out.append(ln)
    bad.write_bytes(b"".join(out))
    assert [d.code for d in validate_path(bad).diagnostics] == ["schema-invalid"]
    assert health_of(validate_path(bad)) == "damaged"
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"".join(_with_first_assistant_content_emptied(src)))
    assert health_of(validate_path(empty, schema=False)) == "repairable"


def _with_first_assistant_content_emptied(src: Path) -> list[bytes]:
    import orjson

    out: list[bytes] = []
    for ln in src.read_bytes().splitlines(keepends=True):
        r = orjson.loads(ln)
        if r.get("type") == "assistant" and not out_has_empty(out):
            r["message"]["content"] = []
            ln = orjson.dumps(r) + b"\n"
        out.append(ln)
    return out


def out_has_empty(out: list[bytes]) -> bool:
    return any(b'"content":[]' in ln for ln in out)


def test_sort_rows_keeps_the_newest_row_of_a_session() -> None:
    from transcript_tools.catalog.listing import Lite, Row

    rows = [
        Row("a", "p1", 5, 1, Lite("s1", "t", None)),
        Row("b", "p2", 9, 1, Lite("s1", "u", None)),
        Row("c", "p1", 7, 1, Lite("s2", "v", None)),
    ]
    assert [(r.session_id, r.path) for r in sort_rows(rows)] == [("s1", "b"), ("s2", "c")]


def test_ls_check_calls_a_file_of_nuls_what_validate_and_repair_call_it(tmp_path: Path) -> None:
    # Found trying tt as a new user: `tt ls --check` said "repairable" of a file of NULs
    # that `tt repair` refuses as no transcript.
    import json

    from tests.support.cli import tt
    from tests.support.paths import CONFIG_332
    from tests.support.trees import stage

    cfg = tmp_path / "cfg"
    stage(CONFIG_332, cfg)
    project = next((cfg / "projects").iterdir())
    (project / "33333333-3333-3333-3333-333333333333.jsonl").write_bytes(b"\0" * 5000)
    r = tt("ls", "-a", "--check", "--json", config=cfg)
    assert r.returncode == 0, r.stderr
    health = {s["session_id"][:8]: s["health"] for s in json.loads(r.stdout)["sessions"]}
    assert health == {"33333333": "not a transcript", "4cd0c8e6": "clean"}
    v = tt("validate", str(project / "33333333-3333-3333-3333-333333333333.jsonl"), config=cfg)
    assert "not a transcript" in v.stdout + v.stderr


def test_ls_check_health_agrees_with_validate_on_every_session(tmp_path: Path) -> None:
    # Found trying tt as a new user on public transcripts: `tt ls --check` called
    # 0a1b2c3d "clean" while `tt validate` gave it a schema-invalid error (a tool_use
    # without id): ls ran every family of checks but the schema. Now both run the same.
    import json

    from tests.support.cli import tt
    from tests.support.paths import PUBLIC
    from tests.support.trees import stage

    cfg = tmp_path / "cfg"
    stage(PUBLIC, cfg)
    r = tt("ls", "-a", "--check", "--json", config=cfg)
    assert r.returncode == 1, r.stderr
    rows = json.loads(r.stdout)["sessions"]
    assert {s["session_id"][:8] for s in rows} == {"0a1b2c3d", "88a8d761", "11111111"}
    for s in rows:
        # The session's file and its subagent files, as `tt validate SESSION` checks them.
        from transcript_tools.catalog.files_scope import agent_files

        reports = [validate_path(f) for f in [Path(s["path"]), *agent_files(Path(s["path"]))]]
        assert (s["errors"], s["warnings"]) == (
            sum(r.errors for r in reports),
            sum(r.warnings for r in reports),
        ), s["path"]
        assert s["health"] != "clean" and s["health"] in {health_of(r) for r in reports}, s["path"]
        assert s["damaged_subagents"] == [
            str(f) for f, r in zip(agent_files(Path(s["path"])), reports[1:], strict=True) if r.errors
        ]
    first = next(s for s in rows if s["session_id"].startswith("0a1b2c3d"))
    assert first["error_codes"][0] == "schema-invalid" and first["health"] == "damaged"
    # Every file `tt validate --all` checks is in one row: the same totals, the same exit code.
    listed = tt("ls", "-a", "--check", "--hidden", "--json", config=cfg)
    checked = tt("validate", "--all", "--json", config=cfg)
    assert listed.returncode == checked.returncode == 1
    every = json.loads(listed.stdout)["sessions"]
    v = json.loads(checked.stdout)
    assert (
        sum(s["errors"] for s in every) == v["errors"] and sum(s["warnings"] for s in every) == v["warnings"]
    )
    assert len(v["files"]) == len(every) + sum(s["subagents"] for s in every)


def test_finding_ls_check_agrees_with_validate_on_subagent_files_and_files_not_named_by_an_id(
    tmp_path: Path,
) -> None:
    """New-user pass: `tt ls --check` called a session clean when only one of its subagent
    files was damaged (`tt validate` on the session's folder reported it), and left out a
    damaged file of the project folder not named by a session id. On Claude Code 2.1.332's
    own session: its subagent file torn at the end, and a real transcript copied beside it
    under another name with a line that is no JSON."""
    import json

    from tests.support.cli import tt
    from tests.support.paths import CONFIG_332
    from tests.support.trees import stage

    cfg = tmp_path / "cfg"
    stage(CONFIG_332, cfg)
    project = cfg / "projects" / "-home-dev-demo-app"
    (agent,) = project.glob("*/subagents/agent-*.jsonl")
    agent.write_bytes(agent.read_bytes() + b'{"type":"user","mess\n')
    copy = project / "my-copy.jsonl"
    copy.write_bytes((REAL / "v2.1.38-tool-heavy.jsonl").read_bytes() + b"not json\n")

    v = tt("validate", str(project), "--json", config=cfg)
    assert v.returncode == 1
    bad = {f["path"]: f["errors"] for f in json.loads(v.stdout)["files"] if f["errors"]}
    assert set(bad) == {str(agent), str(copy)}

    r = tt("ls", "--check", "-p", str(project), "--json", config=cfg)
    assert r.returncode == 1, r.stderr  # was 0: "clean"
    rows = {Path(s["path"]).name: s for s in json.loads(r.stdout)["sessions"]}
    session = rows["4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"]
    assert session["health"] == "repairable" and session["errors"] == bad[str(agent)]
    assert session["damaged_subagents"] == [str(agent)]
    other = rows["my-copy.jsonl"]  # was missing
    assert other["hidden"] == "name-not-an-id" and other["errors"] == bad[str(copy)]
    assert sum(s["errors"] for s in rows.values()) == json.loads(v.stdout)["errors"]
    text = tt("ls", "--check", "-p", str(project), config=cfg, width=200)
    assert f"subagent file {agent} has errors" in text.stdout


def test_finding_hidden_lists_files_that_are_no_session_s_without_check(tmp_path: Path) -> None:
    """New-user pass: `tt ls --hidden` listed a subagent file whose session's file is gone
    only together with --check (`tt ls --check --hidden` showed it, `tt ls --hidden` did
    not), though --hidden's help promises every file the picker leaves out."""
    import json

    from tests.support.cli import tt
    from tests.support.paths import CONFIG_332
    from tests.support.trees import stage

    cfg = tmp_path / "cfg"
    stage(CONFIG_332, cfg)
    project = cfg / "projects" / "-home-dev-demo-app"
    (agent,) = project.glob("*/subagents/agent-*.jsonl")
    (project / "4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl").unlink()  # the session's file gone
    copy = project / "my-copy.jsonl"
    copy.write_bytes((REAL / "v2.1.38-tool-heavy.jsonl").read_bytes())

    def listed(*args: str) -> set[str]:
        r = tt("ls", "-p", str(project), "--json", *args, config=cfg)
        assert r.returncode == 0, r.stderr
        return {s["path"] for s in json.loads(r.stdout)["sessions"]}

    assert listed("--hidden") == listed("--hidden", "--check") == {str(agent), str(copy)}
    assert listed() == set()
    rows = json.loads(tt("ls", "-p", str(project), "--json", "--hidden", config=cfg).stdout)["sessions"]
    assert {r["health"] for r in rows} == {None}  # not checked: no health


@pytest.mark.parametrize("check", [False, True])
def test_many_processes_list_what_one_lists(config: tuple[Path, dict[str, Path]], check: bool) -> None:
    from transcript_tools.catalog.files import list_sessions

    proj, _ = config
    one = list_sessions([proj], check=check, workers=1)
    assert len(one) > 10
    assert list_sessions([proj], check=check, workers=3) == one


def test_finding_a_windows_working_directory_names_its_project_folder(tmp_path: Path) -> None:
    """New-user pass: `tt ls -p 'C:\\Users\\…'` on a Windows config dir copied here was exit 3,
    where a POSIX path of the recording machine names its folder; Claude Code on Windows
    names the folder the same way ("C--Users-…")."""
    import json

    from tests.support.cli import tt

    folder = tmp_path / "cfg" / "projects" / "C--Users-dev-app"
    folder.mkdir(parents=True)
    sid = "00000000-0000-4000-8000-0000000000c1"
    (folder / f"{sid}.jsonl").write_bytes(
        (REAL / "v2.1.38-tool-heavy.jsonl")
        .read_bytes()
        .replace(b"10f4eb64-3d2d-45c8-ae00-9374ec6afd8e", sid.encode())
    )
    for spec in ("C:\\Users\\dev\\app", "C:/Users/dev/app"):
        r = tt("ls", "-p", spec, "--json", config=tmp_path / "cfg")
        assert r.returncode == 0, r.stderr
        assert [s["session_id"] for s in json.loads(r.stdout)["sessions"]] == [sid]


def test_first_record_field_takes_the_record_s_own_key_not_a_nested_one() -> None:
    nested = b'{"message":{"content":[]},"ctx":{"t1":{"cwd":"/c/x"}},"cwd":"C:\\\\x","type":"assistant"}'
    # The SDK's scan (and `first_string_field`) takes the first match, the nested one.
    assert first_string_field(nested, "cwd") == "/c/x"
    assert first_record_field(nested + b"\n", "cwd") == "C:\\x"
    # A record with the key only nested: the next line's own.
    only_nested = b'{"ctx":{"cwd":"/nested"},"type":"summary"}\n{"type":"user","cwd":"/home/u/app"}\n'
    assert first_record_field(only_nested, "cwd") == "/home/u/app"
    # The head's torn end: the byte match of that line, as the SDK's scan gives it.
    torn = b'{"type":"x"}\n{"type":"user","cwd":"/home/u/app","message":{"content":"tr'
    assert first_record_field(torn, "cwd") == "/home/u/app"
    # A whole line orjson refuses but tt reads (a lone surrogate of a tool input cut
    # mid-emoji, a BOM): decoded as every reader decodes it, not scanned (a review's find).
    lone = b'{"t":"x\\ud83d","w":{"cwd":"/c/u/app"},"cwd":"C:\\\\u\\\\app"}\n'
    assert first_record_field(lone, "cwd") == "C:\\u\\app"
    assert first_record_field(b"\xef\xbb\xbf" + lone.replace(b'"x\\ud83d"', b'"x"'), "cwd") == "C:\\u\\app"
    # A first line past the head, cut after the nested key: its own key at the top level,
    # outside strings (one that only mentions it, escaped, is text), or none.
    cut = b'{"w":{"cwd":"/c/u/app"},"text":"a \\"cwd\\":\\"no\\"","cwd" : "C:\\\\u","message":{"con'
    assert first_record_field(cut, "cwd") == "C:\\u"
    assert first_record_field(b'{"w":{"cwd":"/c/u/app"},"message":{"content":"tr', "cwd") is None
    # Not a string, or not there at all.
    assert first_record_field(b'{"cwd":null}\n', "cwd") is None
    assert first_record_field(b'{"type":"user"}\n', "cwd") is None
    assert first_record_field(b"", "cwd") is None
