"""``--store URL`` on show, stats, validate and resume: each answers from the store exactly
as it answers from the original file (its path read as ``<project>/<id>.jsonl``), with the
store's exit codes; ``resume`` lands its turn in the store."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.resume.test_cli_resume import SID332, api_env, config, transcript, tt, work_dir  # noqa: F401  (the fixtures)
from tests.support import cli
from tests.support.paths import REAL
from tests.support.standin import StandIn, Text, ToolUse
from tests.support.trees import stage
from transcript_tools.edge.store_sqlite import open_sqlite
from transcript_tools.model.errors import WriteFailed
from transcript_tools.store.files import AsOf, find_session, session_bytes

CONFIG = REAL / "claude-config-2.1.197"  # a real session with subagents and file-history
SID = "8c2f9135-4610-4218-97b1-bc3e03643255"
PK = "-home-dev-demo-app"
DAMAGED_SID = str(uuid.UUID(int=11))

#: Each command, as run on the file (path) and from the store (id).
COMMANDS = [
    ("show", "--no-pager"),
    ("show", "--json"),
    ("show", "--tree"),
    ("show", "--tree", "--json"),
    ("show", "--markdown"),
    ("show", "--full", "-v", "--no-pager"),
    ("stats",),
    ("stats", "--json"),
    ("stats", "--no-subagents", "--json"),
    ("validate",),
    ("validate", "--json"),
]


def run(cfg: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    # TT_STORE unset: each test names its store
    env = {"TT_NOW": "2026-11-29T12:00:00Z", **(env or {})}
    r = cli.tt(*args, config=cfg, env=env, drop=("TT_STORE",), timeout=300)
    return r.returncode, r.stdout, r.stderr


@pytest.fixture(scope="module")
def pushed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A config dir with the real session and a damaged one, both pushed to an SQLite store."""
    root = tmp_path_factory.mktemp("storeflag")
    cfg = root / "cfg"
    stage(CONFIG, cfg)
    (cfg / "projects" / PK / f"{DAMAGED_SID}.jsonl").write_bytes(
        (REAL / "handwritten-edge-cases-not-object-lines.jsonl").read_bytes()
    )
    url = f"sqlite:///{root / 's.db'}"
    for sid in (SID, DAMAGED_SID):
        code, _, err = run(cfg, "store", "push", sid, "--store", url)
        assert code == 0, err
    return cfg, url


def _as_named(text: str, cfg: Path) -> str:
    """The file's output with its folder left out: the store names it <project>/<id>.jsonl
    (a table's padding follows the name's length, so runs of spaces count as one)."""
    return re.sub(" +", " ", text.replace(str(cfg / "projects") + "/", ""))


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _fresh_ids_masked(text: str, source: bytes) -> str:
    """The in-memory repair of a damaged file gives the lines it makes fresh random uuids
    (`loader`), different on every run of the same command on the same file: those, and
    only those (uuids not in the file), are masked."""
    return UUID.sub(lambda m: m[0] if m[0].encode() in source else "<fresh uuid>", text)


@pytest.mark.parametrize("sid", [SID, DAMAGED_SID])
@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_a_command_with_store_prints_what_it_prints_for_the_file(
    pushed: tuple[Path, str], sid: str, args: tuple[str, ...]
) -> None:
    cfg, url = pushed
    path = cfg / "projects" / PK / f"{sid}.jsonl"
    want = run(cfg, args[0], str(path), *args[1:])
    got = run(cfg, args[0], sid[:13], *args[1:], "--store", url)
    assert got[0] == want[0], (got, want)
    src = path.read_bytes()
    assert (
        _fresh_ids_masked(_as_named(got[1], cfg), src) == _fresh_ids_masked(_as_named(want[1], cfg), src)
        and got[1].strip()
    )
    assert _fresh_ids_masked(_as_named(got[2], cfg), src) == _fresh_ids_masked(_as_named(want[2], cfg), src)


def test_the_subagents_and_the_damage_come_from_the_store(pushed: tuple[Path, str]) -> None:
    # Not only equal: the subagents are there (stats counts them) and the damage is seen.
    cfg, url = pushed
    code, out, _ = run(cfg, "stats", SID, "--store", url, "--json")
    assert code == 0 and json.loads(out)["path"] == f"{PK}/{SID}.jsonl"
    with_subs, without = (
        json.loads(out),
        json.loads(run(cfg, "stats", SID, "--store", url, "--no-subagents", "--json")[1]),
    )
    assert with_subs != without
    code, out, _ = run(cfg, "validate", DAMAGED_SID, "--store", url, "--json")
    assert code == 1 and json.loads(out)["errors"] > 0


def test_exit_codes_with_store(pushed: tuple[Path, str], tmp_path: Path) -> None:
    cfg, url = pushed
    for cmd in ("show", "stats", "validate", "resume"):
        code, _, err = run(cfg, cmd, "0000dead", "--store", url, *(["-p", "hi"] if cmd == "resume" else []))
        assert code == 3 and err.startswith("tt: ") and "Traceback" not in err, (cmd, err)
    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"SQLite format 3\x00" + b"\x07" * 5000)
    for cmd in ("show", "stats", "validate"):
        code, _, err = run(cfg, cmd, SID, "--store", f"sqlite:///{bad}")
        assert code == 4 and err.startswith("tt: ") and "Traceback" not in err, (cmd, err)
    assert run(cfg, "stats", "--all", "--store", url)[0] == 2
    assert run(cfg, "validate", "--all", "--store", url)[0] == 2
    assert run(cfg, "show", "-c", "--store", url)[0] == 2


def test_the_temporary_copy_is_removed(pushed: tuple[Path, str], tmp_path: Path) -> None:
    cfg, url = pushed
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    assert run(cfg, "show", SID, "--store", url, "--no-pager", env={"TMPDIR": str(tmp)})[0] == 0
    assert list(tmp.iterdir()) == []


def test_store_has_one_help_everywhere() -> None:
    import click

    from transcript_tools.cli import cli

    ctx = click.Context(cli)
    helps = {}
    for name in ("ls", "search", "show", "stats", "validate", "resume"):
        cmd = cli.get_command(ctx, name)
        assert cmd is not None
        (o,) = [p for p in cmd.params if "--store" in getattr(p, "opts", [])]
        helps[name] = (o.help, o.metavar)
    assert len(set(helps.values())) == 1, helps


def _stored(db: Path, sid: str) -> bytes:
    s = open_sqlite(db, lambda: 0)
    return session_bytes(s, find_session(s, sid), AsOf())[""]


# --- resume: the turn lands in the store ---------------------------------------------------


def test_resume_with_store_appends_the_turn_to_the_store_not_the_file(
    tt: Any, config: Path, standin: StandIn, tmp_path: Path
) -> None:
    path = transcript(config)
    before = path.read_bytes()
    db = tmp_path / "s.db"
    url = f"sqlite:///{db}"
    assert tt("store", "push", SID332, "--store", url).code == 0
    standin.script(ToolUse("Read", {"file_path": "app.py"}), Text("It prints hello world."))
    r = tt(
        "resume",
        SID332[:8],
        "--store",
        url,
        "-p",
        "What does app.py print?",
        "--output-format",
        "json",
        "--cwd",
        work_dir(config),
        env=api_env(standin),
    )
    assert r.code == 0, r.err
    assert r.json()["result"] == "It prints hello world." and r.json()["session_id"] == SID332
    assert standin.message_requests[0].messages[-1] == {"role": "user", "content": "What does app.py print?"}
    assert path.read_bytes() == before  # the local file is not the one resumed
    stored = _stored(db, SID332)
    new = [json.loads(x) for x in stored[len(before) :].splitlines()]
    assert (
        stored.startswith(before) and len(new) == 6
    )  # prompt, call, result, answer, last-prompt, cost-state
    assert new[0]["message"]["content"] == "What does app.py print?"
    # One push extended the version the session was stored as (no rewrite).
    log = tt("store", "log", SID332, "--store", url, "--json").json()
    assert [v["version"] for v in log["versions"] if v["subpath"] == ""] == [1]
    # And a second turn continues from the stored one.
    standin.script(Text("Yes."))
    assert (
        tt(
            "resume", SID332, "--store", url, "-p", "Sure?", "--cwd", work_dir(config), env=api_env(standin)
        ).code
        == 0
    )
    assert "It prints hello world." in json.dumps(
        standin.message_requests[-1].messages
    )  # the stored turn was sent
    assert _stored(db, SID332).startswith(stored) and len(_stored(db, SID332)) > len(stored)


def test_a_resume_whose_push_fails_keeps_the_turn_and_says_where(
    tt: Any,
    config: Path,
    standin: StandIn,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tempfile

    from transcript_tools.store import files

    url = f"sqlite:///{tmp_path / 's.db'}"
    assert tt("store", "push", SID332, "--store", url).code == 0
    stored = _stored(tmp_path / "s.db", SID332)

    def refuse(*a: Any, **k: Any) -> Any:
        raise WriteFailed("the store refused the write")  # as a full disk or a lost server would

    monkeypatch.setattr(files, "push_session", refuse)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    standin.script(Text("Kept."))
    r = tt("resume", SID332, "--store", url, "-p", "hello", "--cwd", work_dir(config), env=api_env(standin))
    assert r.code == 6 and r.err.count("tt: ") == 1 and "the new turn is not in the store" in r.err, r.err
    kept = Path(r.err.split("it is kept in ")[1].split()[0])
    assert (
        kept.is_relative_to(tmp_path / "tmp")
        and kept.read_bytes().startswith(stored)
        and b"Kept." in kept.read_bytes()
    )
    assert _stored(tmp_path / "s.db", SID332) == stored


def test_resume_fork_with_store_pushes_the_new_session_and_leaves_the_old(
    tt: Any, config: Path, standin: StandIn, tmp_path: Path
) -> None:
    db = tmp_path / "s.db"
    url = f"sqlite:///{db}"
    assert tt("store", "push", SID332, "--store", url).code == 0
    stored = _stored(db, SID332)
    standin.script(Text("Forked."))
    r = tt(
        "resume",
        SID332,
        "--store",
        url,
        "--fork",
        "-p",
        "hello",
        "--output-format",
        "json",
        "--cwd",
        work_dir(config),
        env=api_env(standin),
    )
    assert r.code == 0, r.err
    new = r.json()["session_id"]
    assert new != SID332 and _stored(db, SID332) == stored
    forked = _stored(db, new)
    assert b"Forked." in forked and all(
        json.loads(x).get("sessionId") in (new, None) for x in forked.splitlines()
    )
