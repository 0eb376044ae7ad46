"""`bundle` (manifest, member names, relocation) `bundle_export` and `bundle_import`: a real
session from one config dir goes into a bundle and comes out in another, under another
cwd, with every file accounted for; crafted archives (``../``, absolute paths, symlinks,
devices, bombs, bad checksums, extra members) are refused before anything is written."""

from __future__ import annotations

import hashlib
import io
import json
import stat
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.paths import CONFIG_197, CONFIG_332, PUBLIC, REAL
from tests.support.trees import stage
from transcript_tools.bundle.core import (
    Limits,
    Manifest,
    Member,
    Relocation,
    member_problem,
    parse_manifest,
    posix_forms,
)
from transcript_tools.bundle.files_export import export_session
from transcript_tools.bundle.files_import import import_bundle, read_manifest
from transcript_tools.edge import claude_dir as store
from transcript_tools.edge.loader import load_session
from transcript_tools.model.errors import NotFound, Unreadable, UsageError, WriteFailed
from transcript_tools.validate.files import validate_path

SID = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
RECORDED_CWD = "/home/dev/demo-app"


@pytest.fixture
def source(tmp_path: Path) -> Path:
    config = tmp_path / "src-config"
    stage(CONFIG_332, config)
    return config


def _ref(config: Path) -> store.SessionRef:
    p = config / "projects" / "-home-dev-demo-app" / f"{SID}.jsonl"
    return store.SessionRef(p, SID)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --- names and manifest ----------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "../evil",
        "transcript/../../etc/passwd",
        "/etc/passwd",
        "transcript\\..\\x",
        "file-history/../x",
        "file-history/a/b",
        "transcript/./x.jsonl",
        "transcript//x.jsonl",
        "transcript/other-session.jsonl",
        f"transcript/{SID[:-1]}0/subagents/agent-x.jsonl",
        "elsewhere/x",
        "transcript/C:x",
        "",
    ],
)
def test_member_names_that_could_escape_are_refused(name: str) -> None:
    assert member_problem(name, SID) is not None


@pytest.mark.parametrize(
    "name",
    [
        "manifest.json",
        f"transcript/{SID}.jsonl",
        f"transcript/{SID}/subagents/agent-a1.jsonl",
        "transcript/agent-0c4c3cf8.jsonl",
        "file-history/cf6fbccebed484a3@v1",
    ],
)
def test_member_names_of_a_bundle(name: str) -> None:
    assert member_problem(name, SID) is None


def test_manifest_round_trips_and_rejects_other_documents() -> None:
    m = Manifest(
        SID,
        "/a",
        "-a",
        "/c/projects/-a",
        "/c",
        ("2.1.332",),
        "0.1.0",
        "2026-11-29T00:00:00.000Z",
        True,
        {"jwt": 1},
        (Member(f"transcript/{SID}.jsonl", "transcript", 3, "0" * 64),),
    )
    assert parse_manifest(m.to_bytes(), "x.zip") == m
    with pytest.raises(Unreadable, match="not a tt session bundle"):
        parse_manifest(b'{"format":"other"}', "x.zip")
    with pytest.raises(Unreadable, match="format version 9"):
        parse_manifest(m.to_bytes().replace(b'"format_version": 1', b'"format_version": 9'), "x.zip")
    with pytest.raises(Unreadable, match="session_id"):
        parse_manifest(m.to_bytes().replace(SID.encode(), b"../../x", 1), "x.zip")


def test_relocation_maps_paths_under_the_old_root_only() -> None:
    r = Relocation({"/home/dev/demo-app": "/srv/app"})
    assert r.text(
        "cat /home/dev/demo-app/a.py /home/dev/demo-app2/b /home/dev/demo-app.bak /home/dev/demo-app"
    ) == ("cat /srv/app/a.py /home/dev/demo-app2/b /home/dev/demo-app.bak /srv/app")
    rec = {
        "type": "user",
        "cwd": "/home/dev/demo-app",
        "message": {
            "content": [
                {"type": "tool_result", "content": "at /home/dev/demo-app/x"},
                {"type": "text", "text": "/home/dev/demo-app"},
            ]
        },
        "toolUseResult": {"filePath": "/home/dev/demo-app/x", "n": 1},
    }
    new = r.record(rec)
    assert new["cwd"] == "/srv/app" and new["toolUseResult"] == {"filePath": "/srv/app/x", "n": 1}
    assert new["message"]["content"][0]["content"] == "at /srv/app/x"
    assert new["message"]["content"][1]["text"] == "/home/dev/demo-app"  # conversation text is the user's
    assert rec["cwd"] == "/home/dev/demo-app"  # not mutated
    same = {"type": "user", "cwd": "/elsewhere"}
    assert r.record(same) is same


# --- export / import -------------------------------------------------------------------


def test_export_then_import_under_another_cwd(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "b.zip"
    exported = export_session(_ref(source), out, config=source)
    m = exported.manifest
    assert m.session_id == SID and m.cwd == RECORDED_CWD and m.claude_code_versions == ("2.1.332",)
    assert m.project_dir_name == "-home-dev-demo-app" and m.redacted and dict(m.redactions) == {}
    roles = sorted(x.role for x in m.members)
    assert roles == [
        "file-history",
        "file-history",
        "file-history",
        "subagent",
        "subagent-meta",
        "transcript",
    ]
    with zipfile.ZipFile(out) as zf:
        for x in m.members:
            assert hashlib.sha256(zf.read(x.path)).hexdigest() == x.sha256
    # Nothing to redact here: the stored transcript is the original, byte for byte.
    assert zipfile.ZipFile(out).read(f"transcript/{SID}.jsonl") == _ref(source).path.read_bytes()

    dest = tmp_path / "dst-config"
    cwd = tmp_path / "work" / "my app"
    cwd.mkdir(parents=True)
    imp = import_bundle(out, cwd, config=dest)
    proj = dest / "projects" / store.project_dir_name(str(cwd.resolve()))
    assert imp.path == proj / f"{SID}.jsonl" and imp.path.is_file()
    assert (proj / SID / "subagents" / "agent-a57f9afd470043d69.meta.json").read_bytes() == (
        source / "projects/-home-dev-demo-app" / SID / "subagents/agent-a57f9afd470043d69.meta.json"
    ).read_bytes()
    assert _files(dest / "file-history" / SID) == _files(source / "file-history" / SID)
    text = imp.path.read_text()
    cwds = {json.loads(ln).get("cwd") for ln in text.splitlines()} - {None}
    assert cwds == {str(cwd.resolve())}
    assert f'"filePath":"{cwd.resolve()}/app.py"' in text and 'realParentDir":"' + str(cwd.resolve()) in text
    # Lines without a path under the old root are the original bytes; the others changed
    # only in the relocated fields.
    orig = _ref(source).path.read_bytes().splitlines()
    new = imp.path.read_bytes().splitlines()
    assert len(orig) == len(new)
    sub = f"{SID}/subagents/agent-a57f9afd470043d69.jsonl"
    sub_changed = sum(
        a != b
        for a, b in zip(
            (source / "projects/-home-dev-demo-app" / sub).read_bytes().splitlines(),
            (proj / sub).read_bytes().splitlines(),
            strict=True,
        )
    )
    assert (
        sum(a != b for a, b in zip(orig, new, strict=True)) + sub_changed
        == imp.relocated_lines
        > sub_changed
        > 0
    )
    for a, b in zip(orig, new, strict=True):
        if a != b:
            ra, rb = json.loads(a), json.loads(b)
            assert Relocation({RECORDED_CWD: str(cwd.resolve())}).record(ra) == rb
    for b in new:
        rec = json.loads(b)
        for key in ("cwd", "toolUseResult", "snapshot", "backup"):
            assert RECORDED_CWD not in json.dumps(rec.get(key))
    assert validate_path(imp.path).errors == 0
    # tt's loader reads it, whole.
    s = load_session(imp.path).session
    assert len(s.messages()) == len(load_session(_ref(source).path).session.messages())
    assert store.resolve(SID, root=dest / "projects").path == imp.path


def test_import_refuses_an_existing_session_and_leaves_nothing(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "b.zip"
    export_session(_ref(source), out, config=source)
    cwd = tmp_path / "w"
    cwd.mkdir()
    import_bundle(out, cwd, config=tmp_path / "dst")
    before = _files(tmp_path / "dst")
    with pytest.raises(WriteFailed, match="exists already"):
        import_bundle(out, cwd, config=tmp_path / "dst")
    other = tmp_path / "w2"
    other.mkdir()
    with pytest.raises(WriteFailed, match="exists already"):  # the same id in another project
        import_bundle(out, other, config=tmp_path / "dst")
    assert _files(tmp_path / "dst") == before


def test_export_refuses_to_overwrite_and_needs_a_session_id(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "b.zip"
    out.write_bytes(b"keep")
    with pytest.raises(WriteFailed, match="already exists"):
        export_session(_ref(source), out, config=source)
    assert out.read_bytes() == b"keep"
    with pytest.raises(UsageError):
        export_session(store.SessionRef(_ref(source).path, None), tmp_path / "c.zip", config=source)


def test_export_redacts_transcripts_subagents_and_backups(source: Path, tmp_path: Path) -> None:
    key = "sk-ant-api03-" + "Qx7vT2pL9mN4bR8s" * 6 + "AA"
    (source / "file-history" / SID / "cf6fbccebed484a3@v1").write_text(f"API_KEY = '{key}'\n")
    sub = source / "projects/-home-dev-demo-app" / SID / "subagents/agent-a57f9afd470043d69.jsonl"
    lines = sub.read_text().splitlines(keepends=True)
    rec = json.loads(lines[0])
    rec["message"]["content"] = f"use {key}"
    lines[0] = json.dumps(rec, separators=(",", ":")) + "\n"
    sub.write_text("".join(lines))
    out = tmp_path / "b.zip"
    m = export_session(_ref(source), out, config=source).manifest
    assert dict(m.redactions) == {"anthropic-api-key": 2}
    with zipfile.ZipFile(out) as zf:
        assert all(key.encode() not in zf.read(n) for n in zf.namelist())
    raw = tmp_path / "raw.zip"
    m2 = export_session(_ref(source), raw, redact=False, config=source).manifest
    assert not m2.redacted and key.encode() in zipfile.ZipFile(raw).read(
        f"transcript/{SID}/subagents/agent-a57f9afd470043d69.jsonl"
    )


# --- crafted archives --------------------------------------------------------------------


def _manifest_for(members: dict[str, bytes], sid: str = SID) -> bytes:
    files = [
        Member(
            n, "transcript" if n.endswith(".jsonl") else "file-history", len(d), hashlib.sha256(d).hexdigest()
        )
        for n, d in members.items()
    ]
    return Manifest(
        sid,
        "/a",
        "-a",
        "/c/projects/-a",
        "/c",
        (),
        "0.1.0",
        "2026-11-29T00:00:00.000Z",
        False,
        {},
        tuple(files),
    ).to_bytes()


def _zip(
    path: Path,
    members: dict[str, bytes],
    *,
    manifest: bytes | None = None,
    modes: dict[str, int] | None = None,
) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("manifest.json", manifest if manifest is not None else _manifest_for(members))
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (modes or {}).get(name, stat.S_IFREG | 0o600) << 16
            info.create_system = 3
            zf.writestr(info, data)
    return path


GOOD = {
    f"transcript/{SID}.jsonl": (
        REAL / "claude-config-2.1.332/projects/-home-dev-demo-app" / f"{SID}.jsonl"
    ).read_bytes()
}


@pytest.mark.parametrize(
    ("members", "modes", "message"),
    [
        ({**GOOD, "../evil.jsonl": b"x"}, None, "escapes"),
        ({**GOOD, "transcript/../../../evil": b"x"}, None, "escapes"),
        ({**GOOD, "/etc/cron.d/evil": b"x"}, None, "absolute path"),
        (
            {**GOOD, f"transcript/{SID}/link": b"/etc/passwd"},
            {f"transcript/{SID}/link": stat.S_IFLNK | 0o777},
            "symbolic link",
        ),
        ({**GOOD, f"transcript/{SID}/dev": b""}, {f"transcript/{SID}/dev": stat.S_IFCHR | 0o600}, "device"),
        ({**GOOD, "somewhere/x": b"x"}, None, "outside transcript/"),
    ],
)
def test_crafted_archives_are_refused_before_anything_is_written(
    tmp_path: Path, members: dict[str, bytes], modes: dict[str, int] | None, message: str
) -> None:
    archive = _zip(tmp_path / "evil.zip", members, modes=modes)
    dest = tmp_path / "dst"
    with pytest.raises(Unreadable, match=message) as e:
        import_bundle(archive, tmp_path, config=dest)
    assert "refusing" in str(e.value)
    assert not dest.exists() or _files(dest) == {}
    assert not (tmp_path / "evil.jsonl").exists() and not (tmp_path.parent / "evil").exists()


def test_sizes_counts_checksums_and_unlisted_members_are_checked(tmp_path: Path) -> None:
    dest = tmp_path / "dst"
    ok = _zip(tmp_path / "ok.zip", GOOD)
    with pytest.raises(Unreadable, match="members, past the limit"):
        import_bundle(ok, tmp_path, config=dest, limits=Limits(members=1))
    with pytest.raises(Unreadable, match="past the limit of 100"):
        import_bundle(ok, tmp_path, config=dest, limits=Limits(member_bytes=100))
    with pytest.raises(Unreadable, match="uncompressed, past the limit"):
        import_bundle(ok, tmp_path, config=dest, limits=Limits(total_bytes=1000))
    bad_sum = _zip(tmp_path / "sum.zip", GOOD, manifest=_manifest_for({k: v + b"x" for k, v in GOOD.items()}))
    with pytest.raises(Unreadable, match="size"):
        import_bundle(bad_sum, tmp_path, config=dest)
    tampered = {k: v.replace(b"hello", b"HELLO") for k, v in GOOD.items()}
    with pytest.raises(Unreadable, match="sha256"):
        import_bundle(_zip(tmp_path / "t.zip", tampered, manifest=_manifest_for(GOOD)), tmp_path, config=dest)
    extra = _zip(tmp_path / "x.zip", {**GOOD, "file-history/aa@v1": b"x"}, manifest=_manifest_for(GOOD))
    with pytest.raises(Unreadable, match="do not match the manifest"):
        import_bundle(extra, tmp_path, config=dest)
    assert not dest.exists() or all(not p.is_file() for p in dest.rglob("*"))


def test_a_member_that_inflates_past_its_declared_size_is_refused(tmp_path: Path) -> None:
    # The central directory understates a member's size (a bomb in disguise): reading is
    # bounded by the declared size, and the member is refused.
    data = b"A" * 200_000
    name = b"file-history/aa@v1"
    path = _zip(
        tmp_path / "bomb.zip",
        {**GOOD, name.decode(): data},
        manifest=_manifest_for({**GOOD, name.decode(): data[:10]}),
    )
    raw = bytearray(path.read_bytes())
    i = raw.find(b"PK\x01\x02")
    while i >= 0:
        n = int.from_bytes(raw[i + 28 : i + 30], "little")
        if raw[i + 46 : i + 46 + n] == name:
            raw[i + 24 : i + 28] = (10).to_bytes(4, "little")  # uncompressed size
        i = raw.find(b"PK\x01\x02", i + 4)
    path.write_bytes(bytes(raw))
    assert zipfile.ZipFile(path).getinfo(name.decode()).file_size == 10
    with pytest.raises(Unreadable, match=r"inflates past its declared size|damaged"):
        import_bundle(path, tmp_path, config=tmp_path / "dst")
    assert not (tmp_path / "dst" / "file-history").exists()


def test_not_a_zip_and_missing_archive(tmp_path: Path) -> None:
    p = tmp_path / "x.zip"
    p.write_bytes(b"not a zip")
    with pytest.raises(Unreadable, match="not a zip archive"):
        read_manifest(p)
    with pytest.raises(NotFound):
        read_manifest(tmp_path / "missing.zip")
    with pytest.raises(Unreadable, match="no manifest"):
        with zipfile.ZipFile(tmp_path / "n.zip", "w") as zf:
            zf.writestr(f"transcript/{SID}.jsonl", b"{}")
        read_manifest(tmp_path / "n.zip")


def test_export_of_a_real_2_1_197_session_round_trips(tmp_path: Path) -> None:
    src = tmp_path / "c"
    stage(CONFIG_197, src)
    sid = "8c2f9135-4610-4218-97b1-bc3e03643255"
    ref = store.SessionRef(src / "projects/-home-dev-demo-app" / f"{sid}.jsonl", sid)
    out = tmp_path / "b.zip"
    assert export_session(ref, out, config=src).manifest.claude_code_versions == ("2.1.197",)
    buf = io.BytesIO(out.read_bytes())
    assert "manifest.json" in zipfile.ZipFile(buf).namelist()
    imp = import_bundle(out, RECORDED_CWD, config=tmp_path / "d")
    # Same cwd: nothing to relocate, every file byte for byte.
    assert imp.relocated_lines == 0 and imp.path.read_bytes() == ref.path.read_bytes()


_SEG = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=8)


@settings(max_examples=200, deadline=None)
@given(st.lists(_SEG, min_size=1, max_size=3), st.lists(_SEG, max_size=3), _SEG)
def test_relocation_maps_exactly_the_paths_under_the_root(
    root: list[str], rest: list[str], tail: str
) -> None:
    old = "/" + "/".join(root)
    r = Relocation({old: "/new/place"})
    under = old + "".join("/" + x for x in rest)
    assert r.text(f"see {under}, ok") == "see /new/place" + under[len(old) :] + ", ok"
    sibling = old + tail  # /a/app + "2": another folder, not under /a/app
    assert r.text(sibling + "/x") == sibling + "/x"
    assert r.value({"k": [sibling]})["k"] == [sibling]


# --- a session exported on Windows ---------------------------------------------------------

WIN_SID = "88a8d761-7b9a-4bf1-a8ca-c1febe6bf358"
WIN_CWD = "e:\\Workspace\\src\\github\\claude-code-log"


def test_import_cwd_maps_the_paths_of_a_real_windows_session(tmp_path: Path) -> None:
    # Found by a new user: after `tt import --cwd DIR` of daaain/claude-code-log's Windows
    # session the cwd fields were DIR, but toolUseResult.file.filePath was
    # "DIR\\claude_cod...": the root was mapped and the separators under it were not.
    from tests.support.cli import tt

    src = stage(PUBLIC, tmp_path / "src")
    original = src / "projects" / "e--Workspace-src-github-claude-code-log" / f"{WIN_SID}.jsonl"
    out = tmp_path / "win.zip"
    r = tt("export", WIN_SID, "-o", str(out), config=src)
    assert r.returncode == 0, r.stderr
    assert read_manifest(out).cwd == WIN_CWD
    cwd = tmp_path / "work" / "claude-code-log"
    cwd.mkdir(parents=True)
    dest = tmp_path / "dest"
    r = tt("import", str(out), "--cwd", str(cwd), config=dest)
    assert r.returncode == 0, r.stderr
    new = cwd.resolve()
    path = dest / "projects" / store.project_dir_name(str(new)) / f"{WIN_SID}.jsonl"
    before = [json.loads(x) for x in original.read_bytes().splitlines()]
    after = [json.loads(x) for x in path.read_bytes().splitlines()]
    assert {a.get("cwd") for a in after} == {str(new)}
    [tool] = [
        a["toolUseResult"]["file"]["filePath"] for a in after if (a.get("toolUseResult") or {}).get("file")
    ]
    assert tool == f"{new}/claude_cod..."
    # No path of the old root is left, in any form, and nothing else changed.
    text = path.read_text()
    assert "Workspace" not in text and "\\\\" not in text
    for a, b in zip(before, after, strict=True):
        assert {k: v for k, v in a.items() if k not in ("cwd", "toolUseResult")} == {
            k: v for k, v in b.items() if k not in ("cwd", "toolUseResult")
        }


def test_relocation_of_a_windows_root_maps_its_separators_and_ignores_case() -> None:
    r = Relocation({"C:\\Users\\x\\proj": "/home/x/proj"})
    assert r.text("C:\\Users\\x\\proj") == "/home/x/proj"
    assert r.text("c:/users/X/proj/src\\a.py") == "/home/x/proj/src/a.py"
    # One path as a whole keeps its spaces; in a command, a quoted one too.
    assert r.text("C:\\Users\\x\\proj\\My Docs\\a b.txt") == "/home/x/proj/My Docs/a b.txt"
    assert r.text('type "C:\\Users\\x\\proj\\My Docs\\a.txt" && dir C:\\Users\\x\\proj\\src') == (
        'type "/home/x/proj/My Docs/a.txt" && dir /home/x/proj/src'
    )
    # Another folder beside it is not under it.
    for other in ("C:\\Users\\x\\proj2\\a", "C:\\Users\\x\\proj.bak", "D:\\Users\\x\\proj\\a"):
        assert r.text(other) == other
    # A key of a dict (trackedFileBackups names files by path) is mapped too.
    assert r.value({"C:\\Users\\x\\proj\\a.py": 1}) == {"/home/x/proj/a.py": 1}
    # A drive's root: the paths under it, not a "c:" in prose.
    d = Relocation({"C:\\": "/mnt/c"})
    assert d.text("see C:\\a\\b.txt, option c: no") == "see /mnt/c/a/b.txt, option c: no"
    # A UNC share is a Windows root as well.
    u = Relocation({"\\\\srv\\share\\proj": "/p"})
    assert u.text("\\\\srv\\share\\proj\\a\\b.txt") == "/p/a/b.txt"


def test_relocation_of_a_windows_root_maps_its_git_bash_wsl_and_cygwin_forms() -> None:
    # A new user's find: a session run from Git Bash (Claude Code 2.1.296) names its
    # directory C:\Users\… in `cwd` and /c/Users/… in commands and `wireIngestContext`;
    # `tt import --cwd` mapped the first and left the second.
    r = Relocation({"C:\\Users\\anil1\\proj": "/home/u/proj"})
    assert r.text("cd /c/Users/anil1/proj && git commit -m x") == "cd /home/u/proj && git commit -m x"
    assert r.text("/c/Users/anil1/proj") == "/home/u/proj"
    assert (
        r.text("ls /mnt/c/Users/anil1/proj/src /cygdrive/c/Users/anil1/proj")
        == "ls /home/u/proj/src /home/u/proj"
    )
    # As Windows compares paths: any case (Git Bash writes the drive in lower case).
    assert r.text("/C/users/Anil1/PROJ/a.py") == "/home/u/proj/a.py"
    # Not a longer name beside it, not the same names under another folder or drive.
    for other in ("/c/Users/anil1/proj2/a", "/x/c/Users/anil1/proj", "/d/Users/anil1/proj", "/c/Users/anil1"):
        assert r.text(other) == other
    # Onto another Windows root, each form becomes the same form of it (a review's find:
    # `cd D:\dev\app` in a Git Bash command loses its backslashes to the shell).
    w = Relocation({"C:\\Users\\x\\proj": "D:\\dev\\proj"})
    assert w.text("cd /c/Users/x/proj/src && ls") == "cd /d/dev/proj/src && ls"
    assert w.text("/mnt/c/Users/x/proj/a") == "/mnt/d/dev/proj/a"
    assert w.text("C:\\Users\\x\\proj\\a.py") == "D:\\dev\\proj\\a.py"
    assert posix_forms("C:\\") == ["/c", "/mnt/c", "/cygdrive/c"]
    assert posix_forms("\\\\srv\\share") == [] and posix_forms("/home/x") == []


def test_import_cwd_maps_the_git_bash_paths_of_a_real_2_1_296_session(tmp_path: Path) -> None:
    from tests.support.cli import tt

    src = REAL / "v2.1.296-windows-git-bash-partial-copy.jsonl"
    sid = "54b91c91-badc-481e-b5b3-de78b2fa4c93"
    config = tmp_path / "src"
    project = config / "projects" / "C--Users-anil1-Downloads-Hackathon-TUMHackathon26"
    project.mkdir(parents=True)
    (project / f"{sid}.jsonl").write_bytes(src.read_bytes())
    assert b"/c/Users/anil1/Downloads/Hackathon/TUMHackathon26" in src.read_bytes()
    out = tmp_path / "b.zip"
    r = tt("export", sid, "-o", str(out), config=config)
    assert r.returncode == 0, r.stderr
    assert read_manifest(out).cwd == "C:\\Users\\anil1\\Downloads\\Hackathon\\TUMHackathon26"
    cwd = (tmp_path / "work" / "tum").resolve()
    cwd.mkdir(parents=True)
    dest = tmp_path / "dest"
    r = tt("import", str(out), "--cwd", str(cwd), config=dest)
    assert r.returncode == 0, r.stderr
    text = (dest / "projects" / store.project_dir_name(str(cwd)) / f"{sid}.jsonl").read_text()
    assert "anil1" not in text, [ln for ln in text.splitlines() if "anil1" in ln][:1]
    records = [json.loads(x) for x in text.splitlines()]
    assert {r["cwd"] for r in records if "cwd" in r} == {str(cwd)}
    nested = [c["cwd"] for r in records for c in (r.get("wireIngestContext") or {}).values()]
    assert nested and set(nested) == {str(cwd)}


@settings(max_examples=200, deadline=None)
@given(st.lists(_SEG, min_size=1, max_size=3), st.lists(_SEG, max_size=3), _SEG, st.sampled_from("\\/"))
def test_relocation_maps_exactly_the_paths_under_a_windows_root(
    root: list[str], rest: list[str], tail: str, sep: str
) -> None:
    old = "C:\\" + "\\".join(root)
    r = Relocation({old: "/new/place"})
    under = old + "".join(sep + x for x in rest)
    assert (
        r.text(f"see {under.upper()}, ok")
        == "see /new/place" + "".join("/" + x.upper() for x in rest) + ", ok"
    )
    sibling = old + tail
    assert r.text(sibling + "\\x") == sibling + "\\x"
