"""Parents Claude Code writes in another file of the session are links, not damage (issue 18.1).

A 2.1.39 compaction subagent starts with records whose ``parentUuid`` names main-file
entries (``fixtures/real/handwritten-2.1.39-acompact-subagent/``, modelled on marot/spotter's
real one: see its ``make_fixture.py``). `tt validate` must not call them dangling and
`tt repair` must leave every file Claude Code wrote without damage byte for byte: on every
real fixture, and on sessions the real CLIs write here, main file and subagents together.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.cli import tt
from tests.support.paths import REAL
from tests.validate.test_validate import CLEAN as VALIDATE_CLEAN
from transcript_tools.edge.loader import load_session
from transcript_tools.edge.siblings import session_files
from transcript_tools.model.diagnostics import CODES
from transcript_tools.repair.core import RepairOptions
from transcript_tools.repair.files import repair_file
from transcript_tools.validate.files import validate_path

ACOMPACT_PROJECT = (
    REAL / "handwritten-2.1.39-acompact-subagent" / "-home-USER-projects-spotter-worktrees-spotter-dov"
)
SID = "4d5611e5-241a-462a-8d15-5122611a9569"
MAIN = ACOMPACT_PROJECT / f"{SID}.jsonl"
ACOMPACT = ACOMPACT_PROJECT / SID / "subagents" / "agent-acompact-e1f845.jsonl"
#: The main-file entries the compaction subagent's first three records hang off.
MAIN_PARENTS = [
    "6d942f99-74cb-4183-92e6-69aa915cb5f6",
    "e9fefb1c-927a-42d2-80a7-61bb6cc646d2",
    "ce1910a6-d099-47d6-b88c-2f2f8abc0cc2",
]


def _dangling(path: Path) -> list[str]:
    return [
        d.message.split()[1]
        for d in validate_path(path, schema=False).diagnostics
        if d.code == "dangling-parent"
    ]


def _repair_dry(path: Path) -> object:
    return repair_file(
        path, RepairOptions(), dry_run=True, now="2026-01-01T00:00:00.000Z", new_id=lambda: "unused"
    )


def test_the_compaction_subagent_names_main_file_parents_and_validates_clean() -> None:
    main_uuids = MAIN.read_text()
    assert all(f'"uuid":"{u}"' in main_uuids for u in MAIN_PARENTS)  # the links are real links
    r = validate_path(ACOMPACT)
    assert r.diagnostics == [], [d.to_dict() for d in r.diagnostics]
    assert session_files(ACOMPACT) == [MAIN]


def test_without_its_main_file_the_same_subagent_is_dangling(tmp_path: Path) -> None:
    # The links are resolved against the session's main file, not ignored.
    lone = tmp_path / "p" / SID / "subagents" / ACOMPACT.name
    lone.parent.mkdir(parents=True)
    shutil.copy(ACOMPACT, lone)
    assert _dangling(lone) == MAIN_PARENTS


def test_repair_in_place_leaves_the_compaction_subagent_byte_for_byte(tmp_path: Path) -> None:
    project = tmp_path / ACOMPACT_PROJECT.name
    shutil.copytree(ACOMPACT_PROJECT, project)
    sub = project / SID / "subagents" / ACOMPACT.name
    before = sub.read_bytes()
    r = tt("repair", str(sub), "--in-place")
    assert r.returncode == 0 and "0 changed, 1 unchanged" in r.stdout, r.stdout + r.stderr
    assert sub.read_bytes() == before
    assert sorted(p.name for p in sub.parent.iterdir()) == [ACOMPACT.name]  # no backup, no quarantine


def test_the_loader_keeps_the_cross_file_parents() -> None:
    # resume, fork and show read through the in-memory repair: the links survive it.
    loaded = load_session(ACOMPACT)
    assert loaded.actions == []
    assert [e.record["parentUuid"] for e in loaded.session.entries[:3]] == MAIN_PARENTS


def test_a_main_record_whose_parent_is_in_a_subagent_file_is_not_dangling(tmp_path: Path) -> None:
    # The other direction (a main-file line, e.g. system/turn_duration, parented on an
    # agent file's entry): resolved the same way, through the session's subagent files.
    project = tmp_path / ACOMPACT_PROJECT.name
    shutil.copytree(ACOMPACT_PROJECT, project)
    main = project / f"{SID}.jsonl"
    line = (
        '{"parentUuid":"847d6d2c-0519-4b11-ab1f-d4399e9d8a9a","isSidechain":false,"userType":"external","cwd":"/x","sessionId":"'
        + SID
        + '","version":"2.1.39","type":"system","subtype":"turn_duration","durationMs":1870,"timestamp":"2026-02-12T20:31:00.000Z",'
        '"uuid":"0b1c2d3e-0000-4000-8000-0000000000ff","isMeta":false}\n'
    )
    with open(main, "a") as f:
        f.write(line)
    assert _dangling(main) == []
    assert _repair_dry(main).changed is False  # type: ignore[attr-defined]
    (project / SID / "subagents" / ACOMPACT.name).unlink()
    assert _dangling(main) == ["847d6d2c-0519-4b11-ab1f-d4399e9d8a9a"]


def _all_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.jsonl") if p.is_file())


def _fixable(path: Path) -> list[str]:
    return [d.code for d in validate_path(path, schema=False).diagnostics if CODES[d.code].fix is not None]


def test_repair_is_the_identity_on_every_real_file_with_nothing_to_fix() -> None:
    clean: list[Path] = []
    for p in _all_files(REAL):
        if _fixable(p):
            continue
        clean.append(p)
        r = _repair_dry(p)
        assert r.changed is False and r.actions == [], (p, [a.to_dict() for a in r.actions])  # type: ignore[attr-defined]
    # Every session Claude Code wrote without damage, main files and subagents alike.
    assert ACOMPACT in clean and MAIN in clean
    assert {REAL / n for n in VALIDATE_CLEAN} <= set(clean)  # the fixtures pinned clean, subagents included


@pytest.mark.claude
def test_repair_is_the_identity_on_every_file_the_real_cli_wrote(
    generated_session: object, tmp_path: Path
) -> None:
    g = generated_session.copy_to(tmp_path)  # type: ignore[attr-defined]
    files = [g.transcript, *sorted(g.session_dir.rglob("agent-*.jsonl"))]
    assert len(files) >= 2  # the bench's session has a subagent
    for p in files:
        assert validate_path(p).errors == 0, p
        before = p.read_bytes()
        r = tt("repair", str(p), "--in-place")
        assert r.returncode == 0, r.stdout + r.stderr
        assert p.read_bytes() == before, p
    left = sorted(q.name for q in g.project_dir.rglob("*") if q.name.endswith((".bak", ".quarantine.jsonl")))
    assert left == []  # nothing was rewritten, so nothing was backed up
