"""`tt redact`, `tt export`, `tt import`, `tt rewind` end to end: wiring, exit codes,
``--json`` shapes, what lands on disk — and, marked ``claude``, what the real CLI makes
of it: a redacted session and an imported one resume; rewind restores the files of a
session the real CLI made with file checkpointing on, byte for byte."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from tests.redact.test_redact import DOTENV_SECRETS, _plant
from tests.support.claude_cli import ClaudeCLI
from tests.support.cli import tt
from tests.support.oracle import compare_histories, conversation_blocks, resume_with_cli
from tests.support.paths import REAL
from tests.support.sessions import GeneratedSession, stage_config
from tests.support.trees import digest, stage

SID = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
PROJECT = "-home-dev-demo-app"
RECORDED_CWD = "/home/dev/demo-app"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return stage(REAL / "claude-config-2.1.332", tmp_path / "claude-config")


def main_file(config: Path) -> Path:
    return config / "projects" / PROJECT / f"{SID}.jsonl"


def planted(config: Path, tmp_path: Path, *, after_boundary: bool = False) -> dict[str, str]:
    f = main_file(config)
    tmp = tmp_path / "planted.jsonl"
    got = _plant(f, tmp, after_boundary=after_boundary)
    shutil.copyfile(tmp, f)
    return got


# --- tt redact -----------------------------------------------------------------------


def test_redact_reports_by_default_and_never_prints_a_secret(config: Path, tmp_path: Path) -> None:
    secrets = planted(config, tmp_path)
    before = digest(config)
    r = tt("redact", SID, config=config)
    assert r.returncode == 1, r.stderr
    assert f"{main_file(config)}:" in r.stdout and "github-token" in r.stdout and "private-key" in r.stdout
    assert "Nothing written" in r.stdout
    for s in [*secrets.values(), *DOTENV_SECRETS]:
        assert s not in r.stdout and s not in r.stderr
    assert digest(config) == before
    j = tt("redact", SID, "--json", "--dry-run", config=config)
    assert j.returncode == 1
    doc = json.loads(j.stdout)
    assert set(doc) == {"files", "findings", "written"} and doc["written"] is False
    assert len(doc["files"]) == 2  # the main file and its subagent
    f0 = doc["files"][0]
    assert set(f0) >= {"path", "lines", "changed_lines", "findings", "by_kind"}
    assert all(set(x) == {"line", "kind", "where"} for x in f0["findings"])
    assert f0["by_kind"]["aws-access-key"] == 2 and doc["findings"] == sum(f0["by_kind"].values())
    assert not any(s in j.stdout for s in secrets.values())


def test_redact_output_and_in_place(config: Path, tmp_path: Path) -> None:
    secrets = planted(config, tmp_path)
    original = main_file(config).read_bytes()
    out = tmp_path / "copy.jsonl"
    r = tt("redact", str(main_file(config)), "-o", str(out), config=config)
    assert r.returncode == 0, r.stderr
    assert main_file(config).read_bytes() == original
    assert not any(s.encode() in out.read_bytes() for s in secrets.values())
    again = tt("redact", str(main_file(config)), "-o", str(out), config=config)
    assert again.returncode == 6 and "already exists" in again.stderr
    # In place: atomic, with a backup that still holds the secrets (and says so).
    r = tt("redact", SID, "--in-place", config=config)
    assert r.returncode == 0, r.stderr
    assert main_file(config).read_bytes() == out.read_bytes()
    bak = main_file(config).with_name(main_file(config).name + ".bak")
    assert bak.read_bytes() == original and "still holds the secrets" in r.stdout
    clean = tt("redact", SID, config=config)
    assert clean.returncode == 0 and "No secrets found" in clean.stdout
    v = tt("validate", str(main_file(config)), config=config)
    assert v.returncode == 0 and "0 error(s)" in v.stdout


def test_redact_session_with_subagents_to_a_folder_and_usage_errors(config: Path, tmp_path: Path) -> None:
    from tests.redact.test_redact import PLANTED

    planted(config, tmp_path)
    # A secret in the subagent's sidecar too: its description is the model's text of the
    # call that started it (a review's find: -o copied the sidecar as it was).
    meta = "agent-a57f9afd470043d69.meta.json"
    src_meta = config / "projects" / "-home-dev-demo-app" / SID / "subagents" / meta
    token = PLANTED["github-token"]
    doc = json.loads(src_meta.read_bytes())
    doc["description"] = f"{doc.get('description', '')} with {token}"
    src_meta.write_text(json.dumps(doc))
    report = json.loads(tt("redact", SID, "--json", config=config).stdout)
    sub = report["files"][1]["findings"]
    assert any(f["where"] == f"({meta})" and f["kind"] == "github-token" for f in sub)
    # The subagent's file named alone too (a new user's find: "No secrets found").
    agent = src_meta.with_name(meta.replace(".meta.json", ".jsonl"))
    alone = json.loads(tt("redact", str(agent), "--json", config=config).stdout)
    assert any(f["where"] == f"({meta})" for f in alone["files"][0]["findings"])
    out = tmp_path / "red"
    r = tt("redact", SID, "-o", f"{out}/", "--json", config=config)
    assert r.returncode == 0, r.stderr
    assert (out / f"{SID}.jsonl").is_file() and (
        out / SID / "subagents" / "agent-a57f9afd470043d69.jsonl"
    ).is_file()
    # The subagent's sidecar beside its copy, as repair -o and fork -o put it (a new user's
    # find: redact -o left it out, where the README says -o writes alike in all three),
    # redacted as tt export redacts it; the original is untouched.
    copied = (out / SID / "subagents" / meta).read_text()
    assert token not in copied and "[REDACTED:github-token]" in copied
    assert token in src_meta.read_text()
    assert json.loads(copied)["agentType"] == doc["agentType"]  # the rest as it was
    # In place too, with its backup beside it (dot-led, as a subagent's by-products are).
    assert tt("redact", SID, "--in-place", config=config).returncode == 0
    assert token not in src_meta.read_text() and token in (src_meta.parent / f".{meta}.bak").read_text()
    assert tt("redact", SID, "--in-place", "--dry-run", config=config).returncode == 2
    assert tt("redact", SID, "--no-backup", config=config).returncode == 2
    assert tt("redact", "no-such-session", config=config).returncode == 3


# --- tt export / tt import ------------------------------------------------------------


def test_export_import_round_trip_with_json_and_continue_hints(config: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "s.zip"
    r = tt("export", SID, "-o", str(bundle), "--json", config=config)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["session_id"] == SID and doc["cwd"] == RECORDED_CWD and doc["redacted"] is True
    assert {f["role"] for f in doc["files"]} == {"transcript", "subagent", "subagent-meta", "file-history"}
    assert zipfile.ZipFile(bundle).testzip() is None
    dest = tmp_path / "other-machine"
    work = tmp_path / "checkout" / "app"
    work.mkdir(parents=True)
    dry = tt("import", str(bundle), "--cwd", str(work), "--dry-run", config=dest)
    assert dry.returncode == 0 and "nothing extracted" in dry.stdout and not dest.exists()
    r = tt("import", str(bundle), "--cwd", str(work), config=dest)
    assert r.returncode == 0, r.stderr
    assert (
        f"tt resume {SID}" in r.stdout
        and f"claude --resume {SID}" in r.stdout
        and f"cd {work.resolve()}" in r.stdout
    )
    again = tt("import", str(bundle), "--cwd", str(work), "--json", config=dest)
    assert again.returncode == 6 and "exists already" in again.stderr
    # A dry run says so beforehand (new-user pass: "Bundle OK", then the import refused).
    dry = tt("import", str(bundle), "--cwd", str(work), "--dry-run", config=dest)
    assert (
        dry.returncode == 0 and "exists already" in dry.stdout and "a real import would refuse" in dry.stdout
    )
    dry_json = json.loads(
        tt("import", str(bundle), "--cwd", str(work), "--dry-run", "--json", config=dest).stdout
    )
    assert dry_json["exists"] and dry_json["exists"][0].endswith(f"{SID}.jsonl")
    # The imported session is found by id and validates.
    v = tt("validate", SID, config=dest)
    assert v.returncode == 0 and "0 error(s)" in v.stdout, v.stdout + v.stderr
    # Default -o: <id>.zip in the current folder; --no-redact marks the manifest.
    r = tt("export", SID[:8], "--no-redact", config=config, cwd=tmp_path)
    assert r.returncode == 0 and "not redacted" in r.stdout
    assert json.loads(zipfile.ZipFile(tmp_path / f"{SID}.zip").read("manifest.json"))["redacted"] is False


def test_import_of_a_directory_is_a_usage_error(tmp_path: Path) -> None:
    # New-user pass: exit 4 with the raw "[Errno 21] Is a directory"; every other command
    # says "is a directory" with exit 2.
    r = tt("import", str(tmp_path), config=tmp_path / "cfg")
    assert r.returncode == 2 and f"{tmp_path}: is a directory" in r.stderr and "Errno" not in r.stderr


def test_import_refuses_a_crafted_archive_with_a_clear_message(tmp_path: Path) -> None:
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("manifest.json", b"{}")
        zf.writestr("../../outside.txt", b"pwned")
    dest = tmp_path / "cfg"
    r = tt("import", str(evil), "--cwd", str(tmp_path), config=dest)
    assert r.returncode == 4
    assert "refusing" in r.stderr and "../../outside.txt" in r.stderr and "escapes" in r.stderr
    assert not (tmp_path.parent / "outside.txt").exists() and not dest.exists()
    link = tmp_path / "link.zip"
    with zipfile.ZipFile(link, "w") as zf:
        info = zipfile.ZipInfo(f"transcript/{SID}.jsonl")
        info.external_attr = 0o120777 << 16
        zf.writestr(info, "/etc/passwd")
    r = tt("import", str(link), config=dest)
    assert r.returncode == 4 and "symbolic link" in r.stderr
    absolute = tmp_path / "abs.zip"
    with zipfile.ZipFile(absolute, "w") as zf:
        zf.writestr("/tmp/x", b"x")
    r = tt("import", str(absolute), config=dest)
    assert r.returncode == 4 and "absolute path" in r.stderr
    assert tt("import", str(tmp_path / "missing.zip"), config=dest).returncode == 3


# --- tt rewind --------------------------------------------------------------------------


def _workdir(tmp_path: Path) -> Path:
    work = tmp_path / "demo-app"
    work.mkdir()
    backups = REAL / "claude-config-2.1.332" / "file-history" / SID
    (work / "app.py").write_bytes((backups / "cf6fbccebed484a3@v2").read_bytes())
    (work / "util.py").write_bytes((backups / "7f2e923fda84009b@v2").read_bytes())
    return work


def test_rewind_dry_run_shows_a_diff_and_changes_nothing(config: Path, tmp_path: Path) -> None:
    work = _workdir(tmp_path)
    before = digest(work)
    r = tt("rewind", SID, "--at", "21327ba7", "--cwd", str(work), "--dry-run", config=config)
    assert r.returncode == 0, r.stderr
    assert "restore" in r.stdout and "delete" in r.stdout
    assert "-print('hello world')\n+print('hello')" in r.stdout and "+++ /dev/null" in r.stdout
    assert digest(work) == before
    refused = tt("rewind", SID, "--at", "21327ba7", "--cwd", str(work), config=config)
    assert refused.returncode == 2 and "--yes" in refused.stderr and digest(work) == before
    j = tt(
        "rewind", SID, "--at", "21327ba7", "--cwd", str(work), "--yes", "--backup", "--json", config=config
    )
    assert j.returncode == 0, j.stderr
    doc = json.loads(j.stdout)
    assert doc["files"]["summary"] == {"restore": 1, "delete": 1}
    assert [(Path(a["path"]).name, a["done"]) for a in doc["applied"]] == [
        ("app.py", True),
        ("util.py", True),
    ]
    assert (work / "app.py").read_bytes() == b"print('hello')\n" and not (work / "util.py").exists()
    assert (work / "app.py.tt-rewind.bak").read_bytes() == b"print('hello world')\n"
    assert (work / "util.py.tt-rewind.bak").is_file()
    assert (
        tt("rewind", SID, "--at", "zzzz9999", "--cwd", str(work), "--dry-run", config=config).returncode == 3
    )


def test_rewind_conversation_forks_like_tt_fork_at(config: Path, tmp_path: Path) -> None:
    at = "886f247e-dc88-462d-96d6-d8a381728a8f"
    r = tt("rewind", SID, "--at", at, "--conversation", "--yes", "--json", config=config)
    assert r.returncode == 0, r.stderr
    conv = json.loads(r.stdout)["conversation"]
    assert "files" not in json.loads(r.stdout)  # --conversation alone leaves the files
    f = tt("fork", SID, "--at", at, "--json", config=config)
    fork = json.loads(f.stdout)
    assert conv["forked_from"] == fork["forked_from"] and conv["entries"] == fork["entries"]
    a = [json.loads(x) for x in Path(conv["path"]).read_text().splitlines()]
    b = [json.loads(x) for x in Path(fork["path"]).read_text().splitlines()]
    assert [x.get("message") for x in a] == [x.get("message") for x in b]


# --- with the real Claude Code CLI --------------------------------------------------------


def _staged(config: Path, tmp_path: Path) -> tuple[Path, Path]:
    cwd = (tmp_path / "demo-app-run").resolve()
    cwd.mkdir(parents=True)
    return stage_config(config, tmp_path / "staged", recorded_cwd=RECORDED_CWD, cwd=cwd), cwd


@pytest.mark.claude
def test_real_cli_resumes_a_redacted_session(claude_332: ClaudeCLI, config: Path, tmp_path: Path) -> None:
    # Planted after the last /compact: what a resume sends to the API.
    secrets = planted(config, tmp_path, after_boundary=True)
    assert set(secrets) == {"prompt", "bash", "aws", "env", "pem"}
    staged_before, cwd = _staged(config, tmp_path / "a")
    leaky = resume_with_cli(claude_332, staged_before, SID, cwd)
    assert all(s in json.dumps(leaky) for s in secrets.values())  # the plant reached the API
    r = tt("redact", SID, "--in-place", "--no-backup", config=config)
    assert r.returncode == 0, r.stderr
    staged, cwd = _staged(config, tmp_path / "b")
    sent = resume_with_cli(claude_332, staged, SID, cwd)
    text = json.dumps(sent)
    assert not any(s in text for s in [*secrets.values(), *DOTENV_SECRETS])
    assert "[REDACTED:github-token]" in text and "[REDACTED:private-key]" in text
    # The same conversation, block for block; only the secrets' texts differ.
    a, b = conversation_blocks(leaky), conversation_blocks(sent)
    assert [(x.role, x.kind) for x in a] == [(x.role, x.kind) for x in b]
    assert [x.value for x in a if x.kind != "text"] == [x.value for x in b if x.kind != "text"]
    assert sum(x.value != y.value for x, y in zip(a, b, strict=True)) == 1  # the prompt with the token


@pytest.mark.claude
def test_real_cli_resumes_a_session_exported_and_imported_under_another_cwd(
    claude_332: ClaudeCLI, config: Path, tmp_path: Path
) -> None:
    bundle = tmp_path / "s.zip"
    assert tt("export", SID, "-o", str(bundle), config=config).returncode == 0
    other = tmp_path / "machine-b" / ".claude"
    work = (tmp_path / "machine-b" / "src" / "app").resolve()
    work.mkdir(parents=True)
    r = tt("import", str(bundle), "--cwd", str(work), config=other)
    assert r.returncode == 0, r.stderr
    staged, cwd = _staged(config, tmp_path)
    original = resume_with_cli(claude_332, staged, SID, cwd)
    imported = resume_with_cli(claude_332, other, SID, work)
    assert compare_histories(original, imported, labels=("original", "imported")) == ""
    # tt's loader reads it too: the same messages as the original.
    from transcript_tools.edge.claude_dir import project_dir_name
    from transcript_tools.edge.loader import load_session

    a = load_session(main_file(config)).session.messages()
    b = load_session(other / "projects" / project_dir_name(str(work)) / f"{SID}.jsonl").session.messages()
    assert [e.uuid for e in a] == [e.uuid for e in b]
    # And `tt resume` picks it up by id, in the new cwd, with the conversation the real CLI sent.
    r = tt(
        "resume",
        SID,
        "-p",
        "Oracle probe: what do you remember?",
        "--dry-run",
        "--json",
        config=other,
        cwd=work,
    )
    assert r.returncode == 0, r.stderr
    request = json.loads(r.stdout)
    assert compare_histories(imported, request["messages"], labels=("claude", "tt")) == ""
    assert str(work) in request["system"] and "does not exist here" not in r.stderr


def _prompt_uuid(transcript: Path, startswith: str) -> str:
    for line in transcript.read_text().splitlines():
        rec = json.loads(line)
        msg = rec.get("message")
        if (
            rec.get("type") == "user"
            and isinstance(msg, dict)
            and isinstance(msg.get("content"), str)
            and msg["content"].startswith(startswith)
        ):
            return str(rec["uuid"])
    raise AssertionError(f"no prompt starting {startswith!r}")


@pytest.mark.claude
def test_rewind_restores_files_of_a_real_checkpointed_session_byte_for_byte(
    generated_session: GeneratedSession, tmp_path: Path
) -> None:
    s = generated_session.copy_to(tmp_path)
    # A private copy of the working folder (the generated one is shared by other tests).
    work = tmp_path / "work"
    stage(s.cwd, work)
    assert (work / "app.py").read_bytes() == b"print('hello world')\n"
    assert (work / "util.py").read_bytes() == b"def add(a, b):\n    return a + b\n"
    backups = list((s.config_dir / "file-history" / s.session_id).iterdir())
    assert backups, "the CLI wrote file-history backups (CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING)"
    write = _prompt_uuid(s.transcript, "TOOL:Write")
    glob = _prompt_uuid(s.transcript, "TOOL:Glob")
    # --no-backup: the folder must hold exactly what the checkpoint did (no .tt-rewind.bak)
    r = tt(
        "rewind", s.session_id, "--at", write, "--cwd", str(work), "--yes", "--no-backup", config=s.config_dir
    )
    assert r.returncode == 0, r.stdout + r.stderr
    # Before the Write: util.py did not exist, app.py held what the session started with.
    assert sorted(p.name for p in work.iterdir()) == ["app.py"]
    assert (work / "app.py").read_bytes() == b"print('hello')\n"
    r = tt(
        "rewind", s.session_id, "--at", glob, "--cwd", str(work), "--yes", "--no-backup", config=s.config_dir
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert (work / "app.py").read_bytes() == (s.cwd / "app.py").read_bytes()
    assert (work / "util.py").read_bytes() == (s.cwd / "util.py").read_bytes()


@pytest.mark.claude
def test_real_cli_sends_an_id_that_looks_random_and_redact_leaves_it_everywhere(
    claude_332: ClaudeCLI, config: Path, tmp_path: Path
) -> None:
    # Issue 18 item 4. The last tool call's id becomes a value the entropy rule flags on
    # its own, and the tool's output quotes it. The real CLI sends it as the tool_use id
    # and the tool_result's tool_use_id (so it is an id, not a secret); tt redact finds
    # nothing in the file and leaves it byte for byte (line by line, the quote alone
    # would have been redacted: the inconsistency the issue saw).
    from transcript_tools.edge.reader import iter_lines
    from transcript_tools.redact.core import redact_lines

    odd = "Zq8vN3mK1pL0rT7yXc5WbA2sD4fG6hJ9kL0"
    f = main_file(config)
    old = "toolu_be664747bacd42f49700be7f"  # the last tool_use of the 2.1.332 fixture
    lines = f.read_text().replace(old, odd).splitlines(keepends=True)
    for i, ln in enumerate(lines):
        rec = json.loads(ln)
        blocks = rec.get("message", {}).get("content") if isinstance(rec.get("message"), dict) else None
        if (
            isinstance(blocks, list)
            and blocks
            and isinstance(blocks[0], dict)
            and blocks[0].get("tool_use_id") == odd
        ):
            c = blocks[0]["content"]
            blocks[0]["content"] = (
                f"(call {odd}) " + c
                if isinstance(c, str)
                else [{"type": "text", "text": f"(call {odd})"}, *c]
            )
            lines[i] = json.dumps(rec, separators=(",", ":"), ensure_ascii=False) + "\n"
    f.write_text("".join(lines))
    assert any(r.findings for r in redact_lines(iter_lines(f)))  # judged line by line: flagged
    before = f.read_bytes()
    r = tt("redact", SID, "--json", config=config)
    assert r.returncode == 0, r.stderr
    assert all(x["findings"] == [] for x in json.loads(r.stdout)["files"])
    r = tt("redact", SID, "--in-place", "--no-backup", config=config)
    assert r.returncode == 0, r.stderr
    assert f.read_bytes() == before
    staged, cwd = _staged(config, tmp_path)
    sent = resume_with_cli(claude_332, staged, SID, cwd)
    blocks = [
        b for m in sent if isinstance(m.get("content"), list) for b in m["content"] if isinstance(b, dict)
    ]
    assert any(b.get("type") == "tool_use" and b.get("id") == odd for b in blocks)
    assert any(
        b.get("type") == "tool_result" and b.get("tool_use_id") == odd and odd in json.dumps(b.get("content"))
        for b in blocks
    )


def test_export_dry_run_reports_the_bundle_and_writes_nothing(config: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "s.zip"
    dry = json.loads(tt("export", SID, "-o", str(bundle), "--dry-run", "--json", config=config).stdout)
    assert not bundle.exists()
    real = json.loads(tt("export", SID, "-o", str(bundle), "--json", config=config).stdout)
    assert dry["dry_run"] is True and dry["exists"] is False and dry["path"] == str(bundle)
    # The same members, sizes and checksums as the bundle a real export then writes.
    assert dry["files"] == real["files"] and dry["redactions"] == real["redactions"]
    again = json.loads(tt("export", SID, "-o", str(bundle), "--dry-run", "--json", config=config).stdout)
    assert again["exists"] is True
    # No "Import it elsewhere with: tt import <zip>" for a zip a dry run did not write.
    text = tt("export", SID, "-o", str(tmp_path / "other.zip"), "--dry-run", config=config).stdout
    assert "nothing written" in text and "tt import" not in text


# --- one vocabulary: the documented names and the old spellings (issue 18 item 11, round 2) -


def test_import_max_bytes_is_the_documented_name_and_max_size_still_works(
    config: Path, tmp_path: Path
) -> None:
    """Finding: `tt import --max-size` where every other command says --max-bytes. Both
    spellings cap the bundle (a real session's export); only --max-bytes is in the help."""
    bundle = tmp_path / "s.zip"
    assert tt("export", SID, "-o", str(bundle), config=config).returncode == 0
    unpacked = sum(i.file_size for i in zipfile.ZipFile(bundle).infolist())
    work = tmp_path / "app"
    work.mkdir()
    for flag in ("--max-bytes", "--max-size"):
        small = tt(
            "import",
            str(bundle),
            "--cwd",
            str(work),
            "--dry-run",
            flag,
            str(unpacked - 1),
            config=tmp_path / "d",
        )
        assert small.returncode == 4 and f"past the limit of {unpacked - 1}" in small.stderr, (
            flag,
            small.stderr,
        )
        # The bundle is fine: the limit is the user's (a new user was told it was unsafe).
        assert "unsafe" not in small.stderr and "raise --max-bytes" in small.stderr
        fits = tt(
            "import", str(bundle), "--cwd", str(work), "--dry-run", flag, str(unpacked), config=tmp_path / "d"
        )
        assert fits.returncode == 0, (flag, fits.stderr)
    both = tt(
        "import", str(bundle), "--dry-run", "--max-bytes", "5", "--max-size", "6", config=tmp_path / "d"
    )
    assert both.returncode == 2 and "old name of --max-bytes" in both.stderr
    shown = tt("import", "--help").stdout
    assert "--max-bytes" in shown and "--max-size" not in shown


def test_rewind_keeps_backups_unless_no_backup_and_the_old_backup_flag_still_works(
    config: Path, tmp_path: Path
) -> None:
    """Finding: `tt rewind --backup` (opt-in) where redact, repair and compact say
    --no-backup (opt-out). Now a rewind keeps <file>.tt-rewind.bak by default, as the
    others keep <file>.bak; --no-backup keeps none; --backup is accepted, hidden."""
    args = ["--at", "21327ba7", "--yes", "--json"]
    for extra, kept in (([], True), (["--backup"], True), (["--no-backup"], False)):
        (tmp_path / ("x" + "".join(extra))).mkdir()
        work = _workdir(tmp_path / ("x" + "".join(extra)))
        r = tt("rewind", SID, "--cwd", str(work), *args, *extra, config=config)
        assert r.returncode == 0, (extra, r.stderr)
        assert (work / "app.py").read_bytes() == b"print('hello')\n" and not (work / "util.py").exists()
        assert (work / "app.py.tt-rewind.bak").is_file() is kept, extra
        assert (work / "util.py.tt-rewind.bak").is_file() is kept, extra
        if kept:
            assert (work / "app.py.tt-rewind.bak").read_bytes() == b"print('hello world')\n"
    (tmp_path / "both").mkdir()
    work = _workdir(tmp_path / "both")
    both = tt("rewind", SID, "--cwd", str(work), *args, "--backup", "--no-backup", config=config)
    assert both.returncode == 2 and "contradict" in both.stderr
    shown = tt("rewind", "--help").stdout
    assert "--no-backup" in shown and "--backup " not in shown


def test_import_speaks_of_redaction_only_when_a_secret_was_replaced(config: Path, tmp_path: Path) -> None:
    # Found by a new user: tt import said "the bundle was redacted: secrets read
    # [REDACTED:<kind>]" of a bundle whose export had found no secret.
    for planted_secrets in (False, True):
        if planted_secrets:
            planted(config, tmp_path)
        bundle = tmp_path / f"s{planted_secrets}.zip"
        doc = json.loads(tt("export", SID, "-o", str(bundle), "--json", config=config).stdout)
        found = sum(doc["redactions"].values())
        assert (found > 0) is planted_secrets
        work = tmp_path / f"work{planted_secrets}"
        work.mkdir()
        r = tt("import", str(bundle), "--cwd", str(work), config=tmp_path / f"dest{planted_secrets}")
        assert r.returncode == 0, r.stderr
        said = [ln for ln in r.stdout.splitlines() if "was redacted" in ln or "REDACTED" in ln]
        assert said == (
            [f"  the bundle was redacted: {found} secret(s) read [REDACTED:<kind>]"]
            if planted_secrets
            else []
        )
        j = tt("import", str(bundle), "--cwd", str(work), "--dry-run", "--json", config=tmp_path / "x")
        assert json.loads(j.stdout)["redactions"] == doc["redactions"]
