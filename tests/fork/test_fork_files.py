"""`fork_files`: a fork on disk, on a copy of the real 2.1.332 session with a subagent —
the files and modes written, the original only read, and the rollback: a write that fails
(an exclusive create that meets a file, a file past the size limit) leaves exactly what
was there before."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tests.support.trees import digest, stage
from transcript_tools.edge.loader import load_session
from transcript_tools.edge.reader import MAX_TRANSCRIPT_READ_BYTES
from transcript_tools.fork.core import Fork, fork
from transcript_tools.fork.files import (
    SubagentCopy,
    UuidSource,
    copy_paths,
    plan_subagents,
    session_dir,
    sidecar,
    write_fork,
)
from transcript_tools.model.errors import WriteFailed
from transcript_tools.model.session import Session

PROJECT_332 = ROOT / "fixtures/real/claude-config-2.1.332/projects/-home-dev-demo-app"
SID = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
AGENT = "agent-a57f9afd470043d69"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return stage(PROJECT_332, tmp_path / "project")


def _fork(project: Path) -> tuple[Fork, Session]:
    s = load_session(project / f"{SID}.jsonl").session
    return fork(s, source_session_id=SID, now="2026-12-01T00:00:00.000Z", new_id=UuidSource()), s


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_session_dir_and_sidecar_names() -> None:
    assert session_dir(Path("/p/abc.jsonl")) == Path("/p/abc")
    assert session_dir(Path("/p/out.txt")) == Path("/p/out.txt.d")
    assert sidecar(Path("/p/abc/subagents/agent-x.jsonl")) == Path("/p/abc/subagents/agent-x.meta.json")


def test_writes_the_fork_and_its_subagent_with_private_modes_and_reads_the_original_only(
    project: Path,
) -> None:
    before = digest(project)
    f, s = _fork(project)
    subs = plan_subagents(project / f"{SID}.jsonl", f, s, MAX_TRANSCRIPT_READ_BYTES)
    assert [c.relative for c in subs] == [Path("subagents") / f"{AGENT}.jsonl"]
    path = project / f"{f.session_id}.jsonl"
    written = write_fork(path, f, subs)
    assert written == copy_paths(path, subs) == [project / f.session_id / "subagents" / f"{AGENT}.jsonl"]
    assert {k: v for k, v in digest(project).items() if k in before} == before
    assert path.read_bytes() == b"".join(f.chunks())
    sub = written[0]
    recs = [json.loads(x) for x in sub.read_bytes().splitlines()]
    assert recs and {r["sessionId"] for r in recs} == {f.session_id} and all(r["isSidechain"] for r in recs)
    originals = {
        json.loads(x).get("uuid")
        for x in (project / SID / "subagents" / f"{AGENT}.jsonl").read_bytes().splitlines()
    } - {None}
    assert originals and not originals & {r.get("uuid") for r in recs}
    # The sidecar names no entry uuid (2.1.332): copied byte for byte.
    assert sidecar(sub).read_bytes() == (project / SID / "subagents" / f"{AGENT}.meta.json").read_bytes()
    for p in (path, sub, sidecar(sub)):
        assert p.stat().st_mode & 0o777 == 0o600, p
    for d in (project / f.session_id, sub.parent):
        assert d.stat().st_mode & 0o777 == 0o700, d


def test_a_failed_write_removes_every_file_and_folder_this_call_made(project: Path) -> None:
    f, s = _fork(project)
    subs = plan_subagents(project / f"{SID}.jsonl", f, s, MAX_TRANSCRIPT_READ_BYTES)
    nested = SubagentCopy(Path("subagents/workflows/run-1/agent-b.jsonl"), (b'{"type":"user"}',), None)
    # The same target twice: the second exclusive create fails after the main file, two
    # transcripts, a sidecar and four folders were made.
    before = _tree(project)
    with pytest.raises(WriteFailed, match="already exists"):
        write_fork(project / f"{f.session_id}.jsonl", f, [*subs, nested, subs[0]])
    assert _tree(project) == before


def test_a_failed_write_leaves_what_was_there_before(project: Path) -> None:
    f, s = _fork(project)
    subs = plan_subagents(project / f"{SID}.jsonl", f, s, MAX_TRANSCRIPT_READ_BYTES)
    taken = project / f.session_id / "subagents"
    taken.mkdir(parents=True)
    (taken / f"{AGENT}.jsonl").write_bytes(b"someone else's\n")
    (taken / "keep.txt").write_bytes(b"keep\n")
    before = digest(project)
    with pytest.raises(WriteFailed, match="already exists"):
        write_fork(project / f"{f.session_id}.jsonl", f, subs)
    assert digest(project) == before and taken.is_dir()  # the main file went; the rest is as it was


# A real failure half-way through a file: RLIMIT_FSIZE makes the write fail with EFBIG once
# the subagent copy passes the limit (the main file fits). In a child process, so the limit
# binds nothing else.
_CHILD = textwrap.dedent(
    """
    import resource, signal, sys
    from pathlib import Path
    from transcript_tools.model.errors import WriteFailed
    from transcript_tools.fork.core import fork
    from transcript_tools.fork.files import SubagentCopy, UuidSource, write_fork
    from transcript_tools.edge.loader import load_session

    project, sid = Path(sys.argv[1]), sys.argv[2]
    f = fork(load_session(project / f"{sid}.jsonl").session, source_session_id=sid, now="2026-12-01T00:00:00.000Z", new_id=UuidSource())
    limit = sum(len(c) for c in f.chunks()) + 4096
    big = SubagentCopy(Path("subagents/agent-big.jsonl"), (b"x" * (limit + 1),), None)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    try:
        write_fork(project / f"{f.session_id}.jsonl", f, [big])
    except WriteFailed as e:
        print(e)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_half_written_file_is_removed_too(project: Path) -> None:
    before = _tree(project)
    r = subprocess.run(
        [sys.executable, "-B", "-c", _CHILD, str(project), SID],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    assert "agent-big.jsonl: write failed" in r.stdout, r.stdout
    assert _tree(project) == before
