"""``tt repair`` on disk: safe writes (new file, in place with a backup, dry run), the
input never changed without --in-place, refusal when the file changes meanwhile, the
quarantine file, sessions with subagents, --json and exit codes."""

from __future__ import annotations

import json
import shutil
import stat
import tempfile
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import damage
from tests.damage import check_accounting, id_source, repair_bytes, validate_bytes
from tests.support.cli import tt
from tests.support.paths import PUBLIC, REAL, ROOT
from tests.support.trees import stage
from transcript_tools.model.errors import FileChanged, Unreadable
from transcript_tools.repair.apply import original_bytes
from transcript_tools.repair.core import RepairOptions
from transcript_tools.repair.files import repair_file

CONFIG = REAL / "claude-config-2.1.332"
SID = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
S332 = CONFIG / f"projects/-home-dev-demo-app/{SID}.jsonl"
NOW = damage.NOW


@pytest.fixture
def damaged(tmp_path: Path) -> Path:
    """The 2.1.332 session with a torn tail after a crash mid-tool (two fixes needed)."""
    data = damage.tool_use_unpaired(S332.read_bytes()).data + b'{"parentUuid":"x","type":"us'
    p = tmp_path / f"{SID}.jsonl"
    p.write_bytes(data)
    p.chmod(0o640)
    return p


def _quarantine(p: Path) -> list[dict[str, object]]:
    return [orjson.loads(x) for x in p.read_bytes().splitlines()]


def test_output_file_and_its_quarantine(damaged: Path, tmp_path: Path) -> None:
    before = damaged.read_bytes()
    out = tmp_path / "fixed.jsonl"
    r = tt("repair", str(damaged), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert damaged.read_bytes() == before
    assert "add-interrupted-result" in r.stdout and "cut-torn-tail" in r.stdout
    expected = repair_bytes(before)
    got = out.read_bytes()
    # Same bytes as the core's, but for the added record's fresh uuid and time.
    assert len(got.splitlines()) == len(expected.data.splitlines())
    assert got.splitlines()[:-1] == expected.data.splitlines()[:-1]
    q = _quarantine(tmp_path / "fixed.jsonl.quarantine.jsonl")
    assert [x["reason"] for x in q] == ["torn-tail"]
    assert original_bytes(q[0]) == b'{"parentUuid":"x","type":"us'
    assert validate_bytes(got).errors == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


def test_output_never_overwrites_and_never_is_the_input(damaged: Path, tmp_path: Path) -> None:
    out = tmp_path / "exists.jsonl"
    out.write_bytes(b"mine")
    r = tt("repair", str(damaged), "-o", str(out))
    assert r.returncode == 6 and "already exists" in r.stderr
    assert out.read_bytes() == b"mine"
    assert not (tmp_path / "exists.jsonl.quarantine.jsonl").exists()
    before = damaged.read_bytes()
    r = tt("repair", str(damaged), "-o", str(damaged))
    assert r.returncode == 2
    assert "that is the input itself" in r.stderr and "--in-place" in r.stderr
    assert damaged.read_bytes() == before
    r = tt("repair", str(damaged))
    assert r.returncode == 2 and "-o OUT, --in-place or --dry-run" in r.stderr


def test_in_place_keeps_the_original_as_backup(damaged: Path) -> None:
    before = damaged.read_bytes()
    r = tt("repair", str(damaged), "--in-place")
    assert r.returncode == 0, r.stderr
    bak = damaged.with_name(damaged.name + ".bak")
    assert bak.read_bytes() == before
    assert validate_bytes(damaged.read_bytes()).errors == 0
    assert stat.S_IMODE(damaged.stat().st_mode) == 0o640
    assert (damaged.parent / f"{damaged.name}.quarantine.jsonl").is_file()
    # Clean now: nothing written, no second backup.
    after = damaged.read_bytes()
    r = tt("repair", str(damaged), "--in-place")
    assert r.returncode == 0 and "nothing to repair" in r.stdout
    assert damaged.read_bytes() == after
    assert sorted(p.name for p in damaged.parent.iterdir()) == sorted(
        [damaged.name, bak.name, f"{damaged.name}.quarantine.jsonl"]
    )


def test_second_in_place_repair_never_overwrites_backup_or_quarantine(damaged: Path) -> None:
    original = damaged.read_bytes()
    repair_file(damaged, in_place=True, now=NOW, new_id=id_source())
    first_q = (damaged.parent / f"{damaged.name}.quarantine.jsonl").read_bytes()
    damaged.write_bytes(original)  # damaged again
    repair_file(damaged, in_place=True, now=NOW, new_id=id_source(1))
    baks = sorted(p for p in damaged.parent.iterdir() if p.name.endswith(".bak"))
    qs = sorted(p for p in damaged.parent.iterdir() if p.name.endswith(".quarantine.jsonl"))
    assert len(baks) == 2 and len(qs) == 2
    assert (damaged.parent / f"{damaged.name}.quarantine.jsonl").read_bytes() == first_q


def test_dry_run_writes_nothing(damaged: Path) -> None:
    listing = sorted(damaged.parent.iterdir())
    before = damaged.read_bytes()
    r = tt("repair", str(damaged), "--dry-run")
    assert r.returncode == 0
    assert "dry run: nothing written" in r.stdout and "would change" in r.stdout
    assert sorted(damaged.parent.iterdir()) == listing and damaged.read_bytes() == before


def test_json_report(damaged: Path, tmp_path: Path) -> None:
    r = tt("repair", str(damaged), "-o", str(tmp_path / "o.jsonl"), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["changed"], doc["remaining_errors"]) == (1, 0)
    (f,) = doc["files"]
    assert f["fixes"] == {"cut-torn-tail": 1, "add-interrupted-result": 1}
    assert (f["records_added"], f["lines_quarantined"], f["written"], f["mode"]) == (1, 1, True, "output")
    assert f["quarantine"] == str(tmp_path / "o.jsonl.quarantine.jsonl")
    assert {tuple(sorted(a)) for a in f["actions"]} == {("code", "detail", "fix", "line", "uuid")}


def test_damage_repair_cannot_fix_exits_1(tmp_path: Path) -> None:
    # A conversation over the API's 32 MB whose last response alone is over it (the
    # compaction must keep it verbatim, so nothing shrinks it) and NULs.
    lines = S332.read_bytes().splitlines(keepends=True)
    i = max(k for k, ln in enumerate(lines) if b'"type":"assistant"' in ln and b'"type":"text"' in ln)
    rec = orjson.loads(lines[i])
    next(b for b in rec["message"]["content"] if b["type"] == "text")["text"] = "x" * 33_000_000
    p = tmp_path / "big.jsonl"
    p.write_bytes(b"".join([*lines[:i], orjson.dumps(rec) + b"\n", *lines[i + 1 :], b"\x00\x00\n"]))
    r = tt("repair", str(p), "-o", str(tmp_path / "o.jsonl"))
    assert r.returncode == 1
    assert "request-too-large" in r.stdout and "not repaired" in r.stdout
    assert b"\x00" not in (tmp_path / "o.jsonl").read_bytes()  # what could be fixed was


def _appending_ids(path: Path) -> object:
    ids = id_source()

    def new_id() -> str:
        # Called while planning, between reading and writing: Claude Code appends a line.
        with open(path, "ab") as f:
            f.write(b'{"type":"last-prompt","lastPrompt":"x"}\n')
        return ids()

    return new_id


def test_in_place_refuses_when_the_file_changed_meanwhile(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(damage.tool_use_unpaired(S332.read_bytes()).data + b"\x00\x00\n")
    with pytest.raises(FileChanged):
        repair_file(p, in_place=True, now=NOW, new_id=_appending_ids(p))  # type: ignore[arg-type]
    assert sorted(x.name for x in tmp_path.iterdir()) == ["s.jsonl"]  # no backup, quarantine or temp left
    assert p.read_bytes().endswith(b'{"type":"last-prompt","lastPrompt":"x"}\n')


def test_output_refuses_when_the_input_changed_meanwhile_unless_forced(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(damage.tool_use_unpaired(S332.read_bytes()).data + b"\x00\x00\n")
    with pytest.raises(FileChanged):
        repair_file(p, out=tmp_path / "o.jsonl", now=NOW, new_id=_appending_ids(p))  # type: ignore[arg-type]
    assert sorted(x.name for x in tmp_path.iterdir()) == ["s.jsonl"]
    r = repair_file(p, out=tmp_path / "o.jsonl", force=True, now=NOW, new_id=_appending_ids(p))  # type: ignore[arg-type]
    assert r.written and validate_bytes((tmp_path / "o.jsonl").read_bytes()).errors == 0


def _staged(tmp_path: Path) -> tuple[Path, Path, Path]:
    config = tmp_path / "config"
    stage(CONFIG, config)
    for p in [config, *config.rglob("*")]:
        p.chmod(p.stat().st_mode | 0o200)
    main = config / f"projects/-home-dev-demo-app/{SID}.jsonl"
    (sub,) = sorted((main.parent / SID / "subagents").glob("agent-*.jsonl"))
    main.write_bytes(damage.crlf(main.read_bytes()).data)
    sub.write_bytes(damage.torn_tail(sub.read_bytes()).data)
    return config, main, sub


def test_session_id_repairs_main_file_and_subagents_in_place(tmp_path: Path) -> None:
    config, main, sub = _staged(tmp_path)
    r = tt("repair", SID[:8], "--in-place", "--json", env={"CLAUDE_CONFIG_DIR": str(config)})
    assert r.returncode == 0, r.stderr
    files = json.loads(r.stdout)["files"]
    assert [f["path"] for f in files] == [str(main), str(sub)]
    assert [set(f["fixes"]) for f in files] == [{"normalise-line-ends"}, {"cut-torn-tail"}]
    assert main.read_bytes() == S332.read_bytes()
    assert validate_bytes(sub.read_bytes(), subagent=True).errors == 0


def test_session_id_with_output_folder_keeps_the_layout(tmp_path: Path) -> None:
    config, main, sub = _staged(tmp_path)
    env = {"CLAUDE_CONFIG_DIR": str(config)}
    r = tt("repair", SID, "-o", str(tmp_path / "out.jsonl"), env=env)
    assert r.returncode == 0, r.stderr  # the main file there, its subagents in out/subagents/
    assert (tmp_path / "out" / "subagents" / sub.name).is_file()
    r = tt("repair", SID, "-o", str(tmp_path / "out") + "/", env=env)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / main.name).read_bytes() == S332.read_bytes()
    assert (tmp_path / "out" / SID / "subagents" / sub.name).is_file()
    r = tt("repair", SID, "-o", str(main.parent), env=env)
    assert r.returncode == 2


def test_past_the_cap_fixes_what_a_resume_loads(tmp_path: Path) -> None:
    src = S332.read_bytes()
    d = damage.tool_use_unpaired(src).data
    p = tmp_path / "s.jsonl"
    p.write_bytes(d)
    boundary = d.index(b'"subtype":"compact_boundary"')
    start = d.rindex(b"\n", 0, boundary) + 1
    fits = repair_file(p, RepairOptions(cap=len(d) - start + 10), dry_run=True, now=NOW, new_id=id_source())
    assert fits.api_checked and [a.fix for a in fits.actions] == ["add-interrupted-result"]
    no_boundary = tmp_path / "nb.jsonl"
    no_boundary.write_bytes(
        d[:start]
        + d[d.index(b"\n", boundary) + 1 :].replace(b'"parentUuid":"992281a8', b'"parentUuid":"ff44c48a')
    )
    # Issue 14, round 2: past the cap with no boundary (all of it is sent), or with a part
    # after the last boundary over the cap, the same fix (tests/repair/test_past_the_cap.py).
    whole = repair_file(no_boundary, RepairOptions(cap=1000), dry_run=True, now=NOW, new_id=id_source())
    assert whole.api_checked and "add-interrupted-result" in {a.fix for a in whole.actions}
    over = repair_file(p, RepairOptions(cap=(len(d) - start) // 2), dry_run=True, now=NOW, new_id=id_source())
    assert over.api_checked and [a.fix for a in over.actions] == ["add-interrupted-result"]


_CASES = {
    "mixed": (
        lambda: damage.garbage(damage.duplicate_uuid(damage.invalid_utf8(S332.read_bytes()).data).data).data,
        RepairOptions(),
    ),
    "unpaired+torn": (
        lambda: damage.tool_use_unpaired(S332.read_bytes()).data + b'{"type":"us',
        RepairOptions(),
    ),
    "strip-thinking": (
        lambda: (REAL / "v2.1.237-attachments-chained-parallel-tools.jsonl").read_bytes(),
        RepairOptions(strip_thinking=True),
    ),
    "max-image-bytes": (
        lambda: (REAL / "v2.1.29-user-image-partial-copy.jsonl").read_bytes(),
        RepairOptions(max_image_bytes=1000),
    ),
}


@pytest.mark.parametrize("case", _CASES)
def test_file_repair_streams_the_same_bytes_as_the_core(tmp_path: Path, case: str) -> None:
    make, opts = _CASES[case]
    d = make()
    p = tmp_path / "s.jsonl"
    p.write_bytes(d)
    out = tmp_path / "o.jsonl"
    report = repair_file(p, opts, out=out, now=NOW, new_id=id_source())
    core = repair_bytes(d, opts)
    assert out.read_bytes() == core.data
    assert _quarantine(tmp_path / "o.jsonl.quarantine.jsonl") == core.quarantine
    assert (report.lines_quarantined, report.bytes_quarantined) == (
        len(core.quarantine),
        sum(int(q["length"]) for q in core.quarantine),
    )  # type: ignore[call-overload]
    assert (report.lines_out, report.bytes_out) == (len(core.data.splitlines()), len(core.data))
    assert report.changed and core.quarantine
    check_accounting(d, core)


@pytest.mark.parametrize(
    ("content", "needle"), [(b"", "an empty file"), (b"\x00\x01garbage\n[]\n", "binary data")]
)
def test_a_file_that_is_not_a_transcript_is_refused(tmp_path: Path, content: bytes, needle: str) -> None:
    p = tmp_path / "x.jsonl"
    p.write_bytes(content)
    r = tt("repair", str(p), "-o", str(tmp_path / "o.jsonl"))
    assert r.returncode == 4 and needle in r.stderr and "not a transcript" in r.stderr
    assert not (tmp_path / "o.jsonl").exists()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(sorted(damage.KINDS)), min_size=1, max_size=4),
    st.binary(max_size=30),
    st.floats(0, 1),
)
def test_the_file_path_writes_what_the_core_computes(kinds: list[str], junk: bytes, where: float) -> None:
    # The file path seeks to touched lines and copies the rest in blocks; the core walks
    # every line. Same bytes, same quarantine, whatever the damage.
    data = (REAL / "v2.1.38-tool-heavy.jsonl").read_bytes()
    for k in kinds:
        try:
            data = damage.KINDS[k](data).data
        except ValueError:
            continue
    i = int(where * len(data))
    data = data[:i] + junk + data[i:]
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "s.jsonl"
        p.write_bytes(data)
        core = repair_bytes(data)
        if not core.data and not core.quarantine:
            return
        try:
            repair_file(p, out=Path(tmp) / "o.jsonl", now=NOW, new_id=id_source())
        except Unreadable:
            assert not any(ln.entries for ln in damage.decoded(data))
            return
        assert (Path(tmp) / "o.jsonl").read_bytes() == core.data
        q = Path(tmp) / "o.jsonl.quarantine.jsonl"
        assert (_quarantine(q) if q.exists() else []) == core.quarantine


def test_in_place_without_a_backup(damaged: Path) -> None:
    r = tt("repair", str(damaged), "--in-place", "--no-backup")
    assert r.returncode == 0, r.stderr
    assert validate_bytes(damaged.read_bytes()).errors == 0
    # The quarantine still holds every byte the repair removed; no .bak.
    assert sorted(p.name for p in damaged.parent.iterdir()) == sorted(
        [damaged.name, f"{damaged.name}.quarantine.jsonl"]
    )
    assert tt("repair", str(damaged), "-o", str(damaged.parent / "x.jsonl"), "--no-backup").returncode == 2


def test_batch_repair_of_a_folder_into_a_folder_with_one_table(tmp_path: Path) -> None:
    src = tmp_path / "sessions"
    stage(ROOT / "fixtures" / "damaged", src)
    before = {p.name: p.read_bytes() for p in src.iterdir()}
    dry = tt("repair", str(src), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[-1] == (
        "5 session(s), 5 file(s): 5 would change, 0 unchanged; 10 repair(s) planned; 0 error(s) left"
    )
    table = [
        row
        for row in (ln.split() for ln in dry.stdout.splitlines())
        if len(row) == 5 and all(c.isdigit() for c in row[1:])
    ]
    assert sorted(row[0].rsplit("/", 1)[1] for row in table) == sorted(before)
    assert all(row[1:3] == ["1", "1"] and row[4] == "0" for row in table)
    # -o must name a folder for several sessions.
    bad = tt("repair", str(src), "-o", str(tmp_path / "one.jsonl"))
    assert bad.returncode == 2 and "several sessions go into a folder" in bad.stderr
    out = tmp_path / "fixed"
    r = tt("repair", str(src), "-o", f"{out}/", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert len(doc["sessions"]) == 5 and doc["changed"] == 5 and doc["remaining_errors"] == 0
    assert {p.name for p in src.iterdir()} == set(before) and all(
        p.read_bytes() == before[p.name] for p in src.iterdir()
    )
    for name in before:
        assert validate_bytes((out / name).read_bytes()).errors == 0
        assert (out / f"{name}.quarantine.jsonl").is_file()


def test_several_sessions_by_path(damaged: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    shutil.copy(ROOT / "fixtures" / "damaged" / "nul-run.jsonl", other)
    r = tt("repair", str(damaged), str(other), "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    assert [s["path"] for s in json.loads(r.stdout)["sessions"]] == [str(damaged), str(other)]


def test_a_batch_notes_a_file_that_is_no_transcript_and_repairs_the_rest(tmp_path: Path) -> None:
    # Found trying tt as a new user: `repair -a --in-place` over a folder holding a file of
    # NULs rewrote the sessions before it, printed nothing and stopped with exit 4.
    src = tmp_path / "sessions"
    stage(ROOT / "fixtures" / "damaged", src)
    (src / "00000000-0000-0000-0000-000000000000.jsonl").write_bytes(b"\0" * 5000)
    before = {p.name: p.read_bytes() for p in src.iterdir()}
    dry = tt("repair", str(src), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "NUL bytes only; this is not a transcript: skipped" in dry.stderr
    assert dry.stdout.splitlines()[-1] == (
        "5 session(s), 5 file(s): 5 would change, 0 unchanged; 10 repair(s) planned; 0 error(s) left"
    )
    r = tt("repair", str(src), "--in-place", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert len(doc["sessions"]) == 5 and doc["changed"] == 5 and doc["remaining_errors"] == 0
    assert len(doc["skipped"]) == 1 and "00000000-0000" in doc["skipped"][0]
    assert (src / "00000000-0000-0000-0000-000000000000.jsonl").read_bytes() == b"\0" * 5000
    for name in before:
        if not name.startswith("00000000"):
            assert validate_bytes((src / name).read_bytes()).errors == 0
    # Named on its own, the same file is an error (exit 4), as before.
    one = tt("repair", str(src / "00000000-0000-0000-0000-000000000000.jsonl"), "--dry-run")
    assert one.returncode == 4 and "not a transcript" in one.stderr


def _small_refused(tmp_path: Path) -> Path:
    """The real 2.1.332 session (~700 tokens on resume) ending in Claude Code's persisted
    "Prompt is too long" error (the prompt and the error record as `damage.prompt_too_long`
    writes them): a compaction cannot shrink what already fits its budget."""
    refused = damage.prompt_too_long(S332.read_bytes()).data.splitlines(keepends=True)[-2:]
    p = tmp_path / f"{SID}.jsonl"
    p.write_bytes(S332.read_bytes() + b"".join(refused))
    return p


def test_a_compaction_repair_does_not_write_is_not_reported_as_a_change(tmp_path: Path) -> None:
    """Finding (issue 18, round 2): when the compact-history fix wrote no compaction the
    report still said "1 changed"."""
    p = _small_refused(tmp_path)
    before = p.read_bytes()
    r = tt("repair", str(p), "--in-place")
    assert r.returncode == 1  # the error is left, and said
    out = r.stdout
    assert (
        "1 file(s): 0 changed, 1 unchanged; 0 repair(s); 1 error(s) left that repair does not fix (1 prompt-too-long)"
        in out
    )
    assert "compact-history (prompt-too-long) (not done)" in out
    assert "no compaction written (the error above says why); the file is unchanged" in out
    assert "fits the offline compaction's budget of 40,000 tokens" in out
    assert p.read_bytes() == before and not Path(f"{p}.bak").exists()
    doc = json.loads(tt("repair", str(p), "--in-place", "--json").stdout)
    [f] = doc["files"]
    assert doc["changed"] == 0 and f["changed"] is False and f["written"] is False and f["compacted"] is False
    assert f["backup"] is None and f["remaining_errors"] == 1
    # -o: the copy is written (byte for byte the input), the compaction is not
    copy = tmp_path / "copy.jsonl"
    doc = json.loads(tt("repair", str(p), "-o", str(copy), "--json").stdout)
    [f] = doc["files"]
    assert f["written"] is True and f["changed"] is False and f["compacted"] is False
    assert copy.read_bytes() == before
    # and a compaction that is written is reported as one
    big = damage.prompt_too_long(S332.read_bytes()).data
    p.write_bytes(big)
    doc = json.loads(tt("repair", str(p), "--in-place", "--json").stdout)
    [f] = doc["files"]
    assert f["compacted"] is True and f["changed"] is True and len(p.read_bytes()) > len(big)


WINDOWS = (
    PUBLIC
    / "projects"
    / "e--Workspace-src-github-claude-code-log"
    / "88a8d761-7b9a-4bf1-a8ca-c1febe6bf358.jsonl"
)


def test_the_summary_counts_what_validate_still_finds_after_repair(tmp_path: Path) -> None:
    # Found by a new user: repair mended the two dangling parents of daaain/claude-code-log's
    # session and said nothing was left, and `tt validate` on its output then gave 6 errors
    # (isMeta: null on every line, schema-invalid): repair never counted schema errors.
    # Lines 1 and 5 are rewritten (their parent relinked) and still hold isMeta: null, the
    # other four are copied as they are: both kinds are counted.
    src = stage(PUBLIC, tmp_path / "cfg")
    path = src / WINDOWS.relative_to(PUBLIC)
    out = tmp_path / "out.jsonl"
    dry = tt("repair", str(path), "--dry-run", "--json")
    r = tt("repair", str(path), "-o", str(out), "--json")
    assert r.returncode == dry.returncode == 1, r.stderr
    v = json.loads(tt("validate", str(out), "--json").stdout)
    [after] = v["files"]
    left = [(d["line"], d["code"]) for d in after["diagnostics"] if d["severity"] == "error"]
    assert left == [(n, "schema-invalid") for n in range(1, 7)]
    for doc in (json.loads(r.stdout), json.loads(dry.stdout)):
        [f] = doc["files"]
        assert doc["remaining_errors"] == f["remaining_errors"] == len(left)
        assert (
            f["left_by_code"] == {"schema-invalid": 6}
            and "not a record's fields" in f["left_why"]["schema-invalid"]
        )
        assert [(d["line"], d["code"]) for d in f["remaining"]] == left
        assert f["fixes"] == {"relink-parent": 2}
    # The text says what was fixed, what is left and why.
    out.unlink()
    text = tt("repair", str(path), "-o", str(out)).stdout
    assert text.splitlines()[-1] == (
        "1 file(s): 1 changed, 0 unchanged; 2 repair(s); 6 error(s) left that repair does not fix (6 schema-invalid)"
    )
    assert "schema-invalid left: repair mends lines, links and the API's rules, not a record's fields" in text
