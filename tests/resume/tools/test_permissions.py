"""`permissions` (pure rules) and the file tools kept inside the working directories
(issue 19). The expected texts are Claude Code 2.1.332's, as observed in ``-p`` mode
against the stand-in (the probes are replayed in tests/resume/tools/test_permissions_real_cli.py)."""

from __future__ import annotations

import json
import os
import posixpath
from pathlib import Path

import pytest

from transcript_tools.resume.tools.bash import WITHHELD_ENV, bash_env
from transcript_tools.resume.tools.permissions import (
    PathCheck,
    anchor,
    bash_outside_paths,
    decide_path,
    glob_regex,
    inside,
    is_sensitive,
    path_matches,
)
from transcript_tools.resume.tools.registry import ToolContext, ToolRegistry

MARK = "MARKER-OUTSIDE-4b1e"
DIRS = ("/w/proj",)


# --- the pure rules ------------------------------------------------------------------------


def test_inside_means_the_directory_or_below_it_not_a_sibling_with_the_same_prefix() -> None:
    assert inside("/w/proj", DIRS) and inside("/w/proj/a/b", DIRS)
    assert not inside("/w/project2/a", DIRS) and not inside("/w", DIRS)


def test_rule_paths_are_anchored_as_claude_code_reads_them() -> None:
    assert anchor("//etc/hosts", "/w/proj", "/home/u") == "/etc/hosts"
    assert anchor("~/notes/**", "/w/proj", "/home/u") == "/home/u/notes/**"
    # "/x" is relative to the project (2.1.332 denied Read(/abs/outside/file)), as are "./x" and "x".
    assert anchor("/etc/hosts", "/w/proj", "/home/u") == "/w/proj/etc/hosts"
    assert (
        anchor("./src/*.py", "/w/proj", "/home/u")
        == anchor("src/*.py", "/w/proj", "/home/u")
        == "/w/proj/src/*.py"
    )


def test_globs_star_stays_in_a_segment_double_star_crosses() -> None:
    assert glob_regex("/a/*.py").match("/a/x.py") and not glob_regex("/a/*.py").match("/a/b/x.py")
    assert glob_regex("/a/**").match("/a/b/c/x") and glob_regex("/a/**").match("/a")
    assert glob_regex("**/*.txt").match("x.txt") and glob_regex("**/*.txt").match("d/e/x.txt")
    assert glob_regex("*.{py,md}").match("r.md") and not glob_regex("*.{py,md}").match("r.rs")
    assert not glob_regex("/a/**").match("/ab/c")
    assert path_matches("~/notes/**", "/home/u/notes/n.txt", "/w/proj", "/home/u")
    assert not path_matches("~/notes/**", "/home/u/other.txt", "/w/proj", "/home/u")


def _decide(
    tool: str, requested: str, real: str | None = None, *, bare: bool = True, patterns: tuple[str, ...] = ()
) -> str | None:
    v = decide_path(
        tool,
        PathCheck(requested, real or requested),
        dirs=DIRS,
        bare=bare,
        patterns=patterns,
        cwd="/w/proj",
        home="/home/u",
    )
    return None if v.allowed else v.message


def test_reads_inside_are_allowed_outside_denied_in_claude_codes_words() -> None:
    assert _decide("Read", "/w/proj/a.txt") is None
    assert (
        _decide("Read", "/w/out/s.txt")
        == "Claude requested permissions to read from /w/out/s.txt, but you haven't granted it yet."
    )
    assert (
        _decide("Grep", "/w/out")
        == "Claude requested permissions to read from /w/out, but you haven't granted it yet."
    )
    assert (
        _decide("Write", "/w/out/n.txt")
        == "Claude requested permissions to write to /w/out/n.txt, but you haven't granted it yet."
    )


def test_a_symlink_counts_where_it_leads_and_says_so() -> None:
    assert _decide("Read", "/w/proj/link.txt", "/w/out/s.txt") == (
        "Claude requested permissions to read from /w/proj/link.txt, but you haven't granted it yet. "
        "/w/proj/link.txt resolves through a symlink to /w/out/s.txt, which is outside the allowed working directories."
    )
    assert _decide("Read", "/w/proj/link.txt", "/w/proj/real.txt") is None


def test_a_rule_naming_an_outside_path_allows_exactly_that_path_for_reads_only() -> None:
    assert _decide("Read", "/w/out/s.txt", patterns=("//w/out/s.txt",)) is None
    assert _decide("Read", "/w/out/t.txt", patterns=("//w/out/s.txt",)) is not None
    assert _decide("Read", "/home/u/notes/n", patterns=("~/notes/**",)) is None
    # A rule is matched where the path really leads, not where a symlink says.
    assert _decide("Read", "/w/out/s.txt", "/etc/shadow", patterns=("//w/out/**",)) is not None
    # Writes outside stay denied under a rule (2.1.332 denied Write(//outside/**)).
    assert _decide("Write", "/w/out/n.txt", patterns=("//w/out/**",)) is not None
    # A pattern-only tool is limited to its patterns, inside too.
    assert _decide("Edit", "/w/proj/a.py", bare=False, patterns=("*.md",)) is not None
    assert _decide("Edit", "/w/proj/a.md", bare=False, patterns=("*.md",)) is None


def test_writes_never_touch_sensitive_files_but_reads_of_them_inside_are_fine() -> None:
    msg = "Claude requested permissions to edit /w/proj/.git/config which is a sensitive file."
    assert _decide("Write", "/w/proj/.git/config") == msg
    assert _decide("Edit", "/w/proj/.claude/settings.json") is not None
    assert (
        _decide("Write", "/w/proj/.bashrc") is not None and _decide("Write", "/w/proj/sub/.NPMRC") is not None
    )
    assert _decide("Read", "/w/proj/.git/config") is None
    assert is_sensitive("/h/.config/git/config") and not is_sensitive("/w/proj/git/config")


def test_bash_arguments_leading_outside_are_found() -> None:
    links = {"/w/proj/link": "/w/out/s"}

    def real_of(word: str) -> PathCheck:
        requested = posixpath.normpath(posixpath.join("/w/proj", word.replace("~", "/home/u", 1)))
        return PathCheck(requested, links.get(requested, requested))

    assert bash_outside_paths(["cat", "/w/out/s"], DIRS, real_of) == ["/w/out/s"]
    assert bash_outside_paths(["cat", "../out/s", "a.txt", "./b", "-n"], DIRS, real_of) == ["/w/out/s"]
    assert bash_outside_paths(["cat", "~/x", "--file=/etc/p"], DIRS, real_of) == ["/home/u/x", "/etc/p"]
    assert bash_outside_paths(["cat", "link"], DIRS, real_of) == ["/w/proj/link"]
    assert bash_outside_paths(["cat", "/w/proj/a"], DIRS, real_of) == []


# --- the tools, on a real tree ------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> tuple[ToolContext, Path]:
    proj, out, extra = tmp_path / "proj", tmp_path / "out", tmp_path / "extra"
    for d in (proj, out, extra, proj / ".git"):
        d.mkdir()
    (proj / "inside.txt").write_text("INSIDE-OK\n")
    (out / "secret.txt").write_text(f"{MARK} secret\n")
    (extra / "more.txt").write_text("EXTRA\n")
    (proj / "link.txt").symlink_to(out / "secret.txt")
    (proj / "linkdir").symlink_to(out)
    (proj / ".git" / "config").write_text("[core]\n")
    return ToolContext(cwd=proj, home=tmp_path / "home"), tmp_path


def call(reg: ToolRegistry, name: str, ctx: ToolContext, **inp: object):  # type: ignore[no-untyped-def]
    return reg.call(name, "toolu_1", inp, ctx)


def _text(got) -> str:  # type: ignore[no-untyped-def]
    c = got.outcome.content
    return c if isinstance(c, str) else repr(c)


def test_read_outside_through_dotdot_or_a_symlink_is_a_denial_and_nothing_is_read(
    tree: tuple[ToolContext, Path],
) -> None:
    ctx, root = tree
    reg = ToolRegistry()
    for path in (str(root / "out" / "secret.txt"), "../out/secret.txt", "link.txt", "linkdir/secret.txt"):
        got = call(reg, "Read", ctx, file_path=path)
        assert got.denial is not None and got.outcome.is_error and MARK not in _text(got), path
        assert got.denial.tool_input["file_path"] == str(ctx.resolve(path))  # absolute, as 2.1.332 records it
    assert "resolves through a symlink to" in _text(call(reg, "Read", ctx, file_path="link.txt"))
    inside_read = call(reg, "Read", ctx, file_path="inside.txt")
    assert inside_read.denial is None and _text(inside_read) == "1\tINSIDE-OK\n2\t"
    assert call(reg, "Read", ctx, file_path=".git/config").denial is None


def test_add_dir_widens_and_a_named_rule_allows_that_path_only(tree: tuple[ToolContext, Path]) -> None:
    ctx, root = tree
    assert call(ToolRegistry(), "Read", ctx, file_path=str(root / "extra" / "more.txt")).denial is not None
    wide = ToolContext(cwd=ctx.cwd, add_dirs=(root / "extra",))
    assert (
        _text(call(ToolRegistry(), "Read", wide, file_path=str(root / "extra" / "more.txt")))
        == "1\tEXTRA\n2\t"
    )
    named = ToolRegistry([f"Read(/{root}/out/secret.txt)"])
    assert MARK in _text(call(named, "Read", ctx, file_path=str(root / "out" / "secret.txt")))
    (root / "out" / "other.txt").write_text("x\n")
    assert call(named, "Read", ctx, file_path=str(root / "out" / "other.txt")).denial is not None
    # A bare "Read" does not reach outside in tt (stricter than 2.1.332, which allows it).
    assert (
        call(ToolRegistry(["Read"]), "Read", ctx, file_path=str(root / "out" / "secret.txt")).denial
        is not None
    )


def test_glob_and_grep_neither_search_outside_nor_follow_symlinks(tree: tuple[ToolContext, Path]) -> None:
    ctx, root = tree
    reg = ToolRegistry()
    for tool, inp in (
        ("Glob", {"pattern": "*.txt", "path": str(root / "out")}),
        ("Glob", {"pattern": f"{root}/out/*.txt"}),
        ("Glob", {"pattern": "*.txt", "path": "linkdir"}),
        ("Grep", {"pattern": "MARKER", "path": str(root / "out"), "output_mode": "content"}),
        ("Grep", {"pattern": "MARKER", "path": "linkdir", "output_mode": "content"}),
        ("Grep", {"pattern": "MARKER", "path": "link.txt", "output_mode": "content"}),
    ):
        got = reg.call(tool, "toolu_1", inp, ctx)
        assert (
            got.denial is not None
            and "Claude requested permissions to read from" in _text(got)
            and MARK not in _text(got)
        ), inp
    glob = call(reg, "Glob", ctx, pattern="**/*.txt")
    assert glob.denial is None and glob.outcome.result["filenames"] == ["inside.txt"]
    grep = call(reg, "Grep", ctx, pattern="MARKER|INSIDE", output_mode="content")
    assert _text(grep) == "inside.txt:1:INSIDE-OK"
    count = call(reg, "Grep", ctx, pattern="MARKER|INSIDE", output_mode="count")
    assert _text(count) == "inside.txt:1"


def test_writes_outside_or_to_sensitive_files_are_denied_and_write_nothing(
    tree: tuple[ToolContext, Path],
) -> None:
    ctx, root = tree
    reg = ToolRegistry(["Write", "Edit", f"Write(/{root}/out/**)"])
    got = call(reg, "Write", ctx, file_path=str(root / "out" / "new.txt"), content="x")
    assert (
        _text(got)
        == f"Claude requested permissions to write to {root / 'out' / 'new.txt'}, but you haven't granted it yet."
    )
    assert not (root / "out" / "new.txt").exists()
    git = call(reg, "Write", ctx, file_path=".git/hooks/pre-commit", content="x")
    assert (
        _text(git)
        == f"Claude requested permissions to edit {ctx.cwd / '.git/hooks/pre-commit'} which is a sensitive file."
    )
    assert not (ctx.cwd / ".git" / "hooks").exists()
    through = call(reg, "Write", ctx, file_path="linkdir/new.txt", content="x")
    assert through.denial is not None and not (root / "out" / "new.txt").exists()
    assert (
        call(reg, "Write", ctx, file_path="ok.txt", content="x").denial is None
        and (ctx.cwd / "ok.txt").read_text() == "x"
    )


def test_bash_under_a_prefix_rule_cannot_chain_or_name_outside_paths(tree: tuple[ToolContext, Path]) -> None:
    ctx, root = tree
    reg = ToolRegistry(["Bash(cat:*)"])
    got = call(reg, "Bash", ctx, command=f"cat {root}/out/secret.txt")
    # 2.1.332's words under Bash(cat:*).
    assert _text(got) == (
        f"cat in '{root}/out/secret.txt' was blocked. For security, Claude Code may only concatenate files "
        f"from the allowed working directories for this session: '{ctx.cwd}'."
    )
    assert got.denial is not None and MARK not in _text(got)
    assert call(reg, "Bash", ctx, command="cat inside.txt; cat ../out/secret.txt").denial is not None
    assert call(reg, "Bash", ctx, command="cat inside.txt | tee x").denial is not None
    assert call(reg, "Bash", ctx, command="cat link.txt").denial is not None  # a symlink inside pointing out
    assert _text(call(reg, "Bash", ctx, command="cat inside.txt")) == "INSIDE-OK"


def test_bash_gets_the_environment_without_api_credentials(
    tree: tuple[ToolContext, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx, _ = tree
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-should-not-leak")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "tok-should-not-leak")
    monkeypatch.setenv("TT_VISIBLE", "yes")
    got = call(ToolRegistry(["Bash"]), "Bash", ctx, command="env")
    assert "should-not-leak" not in _text(got) and "TT_VISIBLE=yes" in _text(got)
    assert set(bash_env({"ANTHROPIC_API_KEY": "k", "PATH": "/bin"})) == {"PATH"}
    assert {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"} <= WITHHELD_ENV


def test_bash_output_is_bounded_in_memory(tree: tuple[ToolContext, Path]) -> None:
    ctx, _ = tree
    got = call(ToolRegistry(["Bash"]), "Bash", ctx, command="head -c 5000000 /dev/zero | tr '\\0' a; echo")
    assert got.outcome.result["stdout"].endswith("bytes of output dropped] ...")
    assert len(got.outcome.result["stdout"]) < 1_100_000 and len(_text(got)) < 31_000


def test_grep_skips_a_file_past_its_size_cap(
    tree: tuple[ToolContext, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from transcript_tools.resume.tools import search as search_tools

    ctx, _ = tree
    (ctx.cwd / "big.txt").write_text("INSIDE-OK\n" * 100)
    monkeypatch.setattr(search_tools, "MAX_GREP_FILE_BYTES", 500)
    assert _text(call(ToolRegistry(), "Grep", ctx, pattern="INSIDE")) == "Found 1 file\ninside.txt"


def test_a_large_file_is_read_by_offset_without_loading_it(tree: tuple[ToolContext, Path]) -> None:
    ctx, _ = tree
    big = ctx.cwd / "big.txt"
    with big.open("w") as f:
        for i in range(1, 40_001):
            f.write(f"line {i:08d}\n")
    assert big.stat().st_size > 256 * 1024
    got = call(ToolRegistry(), "Read", ctx, file_path="big.txt", offset=39_999, limit=5)
    assert _text(got) == "39999\tline 00039999\n40000\tline 00040000\n40001\t"
    assert got.outcome.result["file"]["totalLines"] == 40_001 == len(big.read_text().split("\n"))


def test_a_nul_byte_in_a_path_is_an_error_result_not_a_traceback(tree: tuple[ToolContext, Path]) -> None:
    ctx, _ = tree
    for name, inp in (
        ("Read", {"file_path": "a\x00b"}),
        ("Grep", {"pattern": "x", "path": "a\x00"}),
        ("Glob", {"pattern": "*", "path": "a\x00"}),
        ("Bash", {"command": "cat a\x00b"}),
    ):
        got = ToolRegistry(["Bash(cat:*)"]).call(name, "toolu_1", inp, ctx)
        assert got.outcome.is_error, name


def test_a_pipe_is_never_opened_by_read_or_grep(tree: tuple[ToolContext, Path]) -> None:
    ctx, _ = tree
    os.mkfifo(ctx.cwd / "fifo")  # nothing writes to it: opening it would block for ever
    got = call(ToolRegistry(), "Read", ctx, file_path="fifo")
    assert (
        got.outcome.is_error
        and _text(got)
        == "Nothing is writing to this pipe. Check that the app serving it is running and unlocked."
    )
    assert _text(call(ToolRegistry(), "Grep", ctx, pattern="INSIDE")) == "Found 1 file\ninside.txt"


def test_new_files_get_the_umask_mode_not_wider(tree: tuple[ToolContext, Path]) -> None:
    ctx, _ = tree
    old = os.umask(0o077)
    try:
        call(ToolRegistry(["Write"]), "Write", ctx, file_path="private.txt", content="x")
    finally:
        os.umask(old)
    assert (ctx.cwd / "private.txt").stat().st_mode & 0o777 == 0o600


# --- through `tt resume` --------------------------------------------------------------------

from tests.resume.test_cli_resume import SID332, api_env, config, tt  # noqa: E402, F401  (fixtures)
from tests.support.standin import StandIn, Text, ToolUse  # noqa: E402


def test_resume_denies_outside_exits_0_and_records_the_denial_and_add_dir_widens(
    tt, config: Path, tmp_path: Path, standin: StandIn
) -> None:  # type: ignore[no-untyped-def]
    proj, out = tmp_path / "p", tmp_path / "o"
    proj.mkdir()
    out.mkdir()
    (out / "s.txt").write_text(f"{MARK}\n")
    standin.script(ToolUse("Read", {"file_path": str(out / "s.txt")}), Text("done"))
    r = tt("resume", SID332, "-p", "go", "--output-format", "json", "--cwd", str(proj), env=api_env(standin))
    assert r.code == 0, r.err
    result = json.loads(r.out)
    assert result["is_error"] is False and result["subtype"] == "success"
    assert [(d["tool_name"], d["tool_input"]) for d in result["permission_denials"]] == [
        ("Read", {"file_path": str(out / "s.txt")})
    ]
    assert not any(MARK.encode() in q.raw for q in standin.requests)
    standin.clear()
    standin.script(ToolUse("Read", {"file_path": str(out / "s.txt")}), Text("done"))
    r = tt(
        "resume",
        SID332,
        "-p",
        "go",
        "--output-format",
        "json",
        "--cwd",
        str(proj),
        "--add-dir",
        str(out),
        env=api_env(standin),
    )
    assert r.code == 0 and json.loads(r.out)["permission_denials"] == []
    assert any(MARK.encode() in q.raw for q in standin.requests)  # the control: --add-dir lets it in
    assert (
        tt("resume", SID332, "-p", "go", "--add-dir", str(tmp_path / "nope"), env=api_env(standin)).code == 2
    )


def test_the_engine_keeps_its_tools_in_cwd_and_add_dirs(tmp_path: Path, standin: StandIn) -> None:
    from tests.resume.test_engine import make_engine, real_client, run

    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "e.txt").write_text("EXTRA-OK\n")
    (tmp_path / "o.txt").write_text(f"{MARK}\n")
    standin.script(
        ToolUse("Read", {"file_path": str(extra / "e.txt")}),
        ToolUse("Read", {"file_path": str(tmp_path / "o.txt")}),
        Text("done"),
    )
    with real_client(standin) as client:
        eng, _ = make_engine(tmp_path, client, add_dirs=[extra])
        events = run(eng)
    results = [e["message"]["content"][0] for e in events if e["type"] == "user"]
    assert results[0]["content"] == "1\tEXTRA-OK\n2\t"
    assert results[1]["is_error"] is True and results[1]["content"].startswith(
        "Claude requested permissions to read from"
    )
    assert events[-1]["permission_denials"] == [
        {
            "tool_name": "Read",
            "tool_use_id": results[1]["tool_use_id"],
            "tool_input": {"file_path": str(tmp_path / "o.txt")},
        }
    ]
    assert not any(MARK.encode() in q.raw for q in standin.requests)
