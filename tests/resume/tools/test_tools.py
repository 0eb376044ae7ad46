"""`tools` and `builtin_tools`: the registry's permission rules and each tool's results,
in Claude Code 2.1.332's shapes (observed against the stand-in; see builtin_tools)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools.model.errors import UsageError
from transcript_tools.resume.tools.builtin import structured_patch
from transcript_tools.resume.tools.registry import (
    DEFAULT_ALLOWED,
    Rule,
    ToolContext,
    ToolRegistry,
    parse_rules,
)
from transcript_tools.resume.tools.search import GLOB_LIMIT


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    (tmp_path / "app.py").write_text("print('hello')\n")
    return ToolContext(cwd=tmp_path)


def call(reg: ToolRegistry, name: str, ctx: ToolContext, **inp: object):  # type: ignore[no-untyped-def]
    return reg.call(name, "toolu_1", inp, ctx)


# --- registry and permissions ------------------------------------------------------------


def test_read_glob_grep_are_offered_by_default_the_rest_only_when_allowed() -> None:
    assert ToolRegistry().offered == list(DEFAULT_ALLOWED)
    assert ToolRegistry(["Bash,Edit"]).offered == ["Read", "Glob", "Grep", "Bash", "Edit"]
    assert ToolRegistry(["Bash Write"], ["Read"]).offered == ["Glob", "Grep", "Bash", "Write"]
    defs = ToolRegistry().definitions()
    assert [d["name"] for d in defs] == ["Read", "Glob", "Grep"]
    assert all(d["input_schema"]["type"] == "object" and d["description"] for d in defs)


def test_a_tool_not_allowed_is_denied_with_claude_codes_words(ctx: ToolContext) -> None:
    reg = ToolRegistry()
    got = call(reg, "Write", ctx, file_path="b.txt", content="x")
    # The recorded input names the path made absolute, as 2.1.332 records "../out/f".
    assert got.denial is not None and got.denial.to_dict() == {
        "tool_name": "Write",
        "tool_use_id": "toolu_1",
        "tool_input": {"file_path": str(ctx.cwd / "b.txt"), "content": "x"},
    }
    assert got.outcome.is_error
    assert (
        got.outcome.content
        == f"Claude requested permissions to write to {ctx.cwd / 'b.txt'}, but you haven't granted it yet."
    )
    assert not (ctx.cwd / "b.txt").exists()
    bash = call(reg, "Bash", ctx, command="touch made")
    assert bash.denial is not None and "permissions to use Bash" in str(bash.outcome.content)
    assert not (ctx.cwd / "made").exists()


def test_unknown_tools_are_errors_and_denials(ctx: ToolContext) -> None:
    got = call(ToolRegistry(), "WebFetch", ctx, url="https://example.com")
    assert got.outcome.block("toolu_1") == {
        "type": "tool_result",
        "content": "<tool_use_error>Error: No such tool available: WebFetch</tool_use_error>",
        "is_error": True,
        "tool_use_id": "toolu_1",
    }
    assert got.outcome.result == "Error: No such tool available: WebFetch"
    assert got.denial is not None and got.denial.tool_name == "WebFetch"


def test_disallowed_beats_allowed_and_patterns_narrow_a_tool(ctx: ToolContext) -> None:
    reg = ToolRegistry(["Bash(echo:*)"], ["Bash(echo secret:*)"])
    assert "Bash" in reg.offered
    assert call(reg, "Bash", ctx, command="echo hi").outcome.content == "hi"
    assert call(reg, "Bash", ctx, command="echo secret stuff").denial is not None
    assert call(reg, "Bash", ctx, command="ls").denial is not None
    edits = ToolRegistry(["Edit(*.md)"])
    assert (
        call(edits, "Edit", ctx, file_path=str(ctx.cwd / "app.py"), old_string="a", new_string="b").denial
        is not None
    )


def test_rules_parse_like_claude_codes_and_unknown_names_are_usage_errors() -> None:
    assert parse_rules(["Bash(git log:*), Read", "Edit"], ["Bash", "Read", "Edit"]) == [
        Rule("Bash", "git log:*"),
        Rule("Read"),
        Rule("Edit"),
    ]
    assert Rule("Bash", "git log:*").matches("Bash", "git log --oneline")
    assert not Rule("Bash", "git log:*").matches("Bash", "git logx")
    with pytest.raises(UsageError, match="no tool 'Nope'"):
        ToolRegistry(["Nope"])


def test_inputs_are_validated_before_anything_runs(ctx: ToolContext) -> None:
    got = call(ToolRegistry(), "Read", ctx)
    assert got.outcome.is_error and "The required parameter `file_path` is missing" in str(
        got.outcome.content
    )
    got = call(ToolRegistry(), "Read", ctx, file_path="app.py", limit="ten")
    assert "`limit` type is expected as `integer`" in str(got.outcome.content)
    got = call(ToolRegistry(), "Grep", ctx, pattern="x", output_mode="everything")
    assert got.outcome.is_error


# --- Read ----------------------------------------------------------------------------------


def test_read_numbers_lines_and_records_the_file_as_read(ctx: ToolContext) -> None:
    got = call(ToolRegistry(), "Read", ctx, file_path=str(ctx.cwd / "app.py"))
    assert got.outcome.content == "1\tprint('hello')\n2\t"
    assert got.outcome.result == {
        "type": "text",
        "file": {
            "filePath": str(ctx.cwd / "app.py"),
            "content": "print('hello')\n",
            "numLines": 2,
            "startLine": 1,
            "totalLines": 2,
        },
    }
    assert str(ctx.cwd / "app.py") in ctx.files_read
    assert got.outcome.block("toolu_1") == {
        "tool_use_id": "toolu_1",
        "type": "tool_result",
        "content": "1\tprint('hello')\n2\t",
    }


def test_read_offset_limit_missing_empty_binary_directory(ctx: ToolContext) -> None:
    reg = ToolRegistry()
    (ctx.cwd / "ten.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    assert (
        call(reg, "Read", ctx, file_path="ten.txt", offset=3, limit=2).outcome.content
        == "3\tline 3\n4\tline 4"
    )
    assert "shorter than the provided offset (50)" in str(
        call(reg, "Read", ctx, file_path="ten.txt", offset=50).outcome.content
    )
    missing = call(reg, "Read", ctx, file_path="nope.txt").outcome
    assert (
        missing.is_error
        and missing.content == f"File does not exist. Note: your current working directory is {ctx.cwd}."
    )
    (ctx.cwd / "empty.txt").write_text("")
    assert "contents are empty" in str(call(reg, "Read", ctx, file_path="empty.txt").outcome.content)
    (ctx.cwd / "blob.bin").write_bytes(b"\x00\x01\x02")
    assert "cannot read binary files" in str(call(reg, "Read", ctx, file_path="blob.bin").outcome.content)
    assert "EISDIR" in str(call(reg, "Read", ctx, file_path=str(ctx.cwd)).outcome.content)


def test_read_returns_images_as_image_blocks(ctx: ToolContext) -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
    (ctx.cwd / "pic.png").write_bytes(png)
    out = call(ToolRegistry(), "Read", ctx, file_path="pic.png").outcome
    assert isinstance(out.content, list) and out.content[0]["type"] == "image"
    assert out.content[0]["source"]["media_type"] == "image/png" and out.result["file"][
        "originalSize"
    ] == len(png)


def test_read_caps_long_lines_and_output(ctx: ToolContext) -> None:
    (ctx.cwd / "wide.txt").write_text("x" * 5000 + "\n")
    small = ToolContext(cwd=ctx.cwd, max_output=100)
    out = call(ToolRegistry(), "Read", small, file_path="wide.txt").outcome
    assert len(str(out.content)) < 200 and "characters truncated" in str(out.content)


# --- Glob and Grep -----------------------------------------------------------------------


def test_glob_lists_relative_paths_oldest_first(ctx: ToolContext) -> None:
    (ctx.cwd / "pkg").mkdir()
    (ctx.cwd / "pkg" / "mod.py").write_text("x = 1\n")
    (ctx.cwd / ".git").mkdir()
    (ctx.cwd / ".git" / "hook.py").write_text("")
    now = time.time()
    os.utime(ctx.cwd / "pkg" / "mod.py", (now - 100, now - 100))
    os.utime(ctx.cwd / "app.py", (now, now))
    out = call(ToolRegistry(), "Glob", ctx, pattern="**/*.py").outcome
    assert out.content == "pkg/mod.py\napp.py"
    assert (
        out.result["filenames"] == ["pkg/mod.py", "app.py"]
        and out.result["numFiles"] == 2
        and not out.result["truncated"]
    )
    assert call(ToolRegistry(), "Glob", ctx, pattern="*.none").outcome.content == "No files found"
    absolute = call(ToolRegistry(), "Glob", ctx, pattern=str(ctx.cwd / "pkg" / "*.py")).outcome
    assert absolute.content == "pkg/mod.py"


def test_glob_truncates_past_its_limit(ctx: ToolContext) -> None:
    for i in range(GLOB_LIMIT + 5):
        (ctx.cwd / f"f{i:03}.txt").write_text("")
    out = call(ToolRegistry(), "Glob", ctx, pattern="*.txt").outcome
    assert out.result["truncated"] and out.result["numFiles"] == GLOB_LIMIT
    assert str(out.content).endswith(
        "(Results are truncated. Consider using a more specific path or pattern.)"
    )


def test_grep_modes(ctx: ToolContext) -> None:
    (ctx.cwd / "g.txt").write_text("a zz b\nno\nzz\n")
    (ctx.cwd / "h.md").write_text("ZZ top\n")
    reg = ToolRegistry()
    files = call(reg, "Grep", ctx, pattern="zz").outcome
    assert files.content == "Found 1 file\ng.txt" and files.result == {
        "mode": "files_with_matches",
        "filenames": ["g.txt"],
        "numFiles": 1,
    }
    content = call(reg, "Grep", ctx, pattern="zz", output_mode="content").outcome
    assert content.content == "g.txt:1:a zz b\ng.txt:3:zz"
    assert content.result == {
        "mode": "content",
        "numFiles": 0,
        "filenames": [],
        "content": "g.txt:1:a zz b\ng.txt:3:zz",
        "numLines": 2,
    }
    assert call(reg, "Grep", ctx, pattern="zz", output_mode="count").outcome.content == "g.txt:2"
    both = call(reg, "Grep", ctx, pattern="zz", **{"-i": True}, glob="*.{md,txt}").outcome
    assert both.result["numFiles"] == 2
    assert call(reg, "Grep", ctx, pattern="zz", type="md", **{"-i": True}).outcome.result["filenames"] == [
        "h.md"
    ]
    ctxt = call(reg, "Grep", ctx, pattern="^no$", output_mode="content", **{"-C": 1}).outcome
    assert ctxt.content == "g.txt-1-a zz b\ng.txt:2:no\ng.txt-3-zz"
    assert call(reg, "Grep", ctx, pattern="nothing-here").outcome.content == "No files found"
    assert call(reg, "Grep", ctx, pattern="(").outcome.is_error


# --- Bash --------------------------------------------------------------------------------


def test_bash_runs_in_the_cwd_and_reports_like_claude_code(ctx: ToolContext) -> None:
    reg = ToolRegistry(["Bash"])
    ok = call(reg, "Bash", ctx, command="ls; echo err >&2").outcome
    assert ok.content == "app.py\nerr" and not ok.is_error
    assert ok.result == {
        "stdout": "app.py",
        "stderr": "err",
        "interrupted": False,
        "isImage": False,
        "noOutputExpected": False,
    }
    assert ok.block("t")["is_error"] is False  # Claude Code writes it explicitly for Bash
    bad = call(reg, "Bash", ctx, command="echo out; echo err >&2; exit 3").outcome
    assert (
        bad.is_error
        and bad.content == "Exit code 3\nout\nerr"
        and bad.result == "Error: Exit code 3\nout\nerr"
    )
    assert call(reg, "Bash", ctx, command="true").outcome.content == "(Bash completed with no output)"


def test_bash_times_out_and_kills_the_whole_group(ctx: ToolContext) -> None:
    started = time.monotonic()
    out = call(ToolRegistry(["Bash"]), "Bash", ctx, command="sleep 30 & sleep 30", timeout=300).outcome
    assert time.monotonic() - started < 10
    assert (
        out.is_error
        and str(out.content).startswith("Command timed out after 0.3s")
        and out.result["interrupted"]
    )


def test_bash_output_is_capped(ctx: ToolContext) -> None:
    small = ToolContext(cwd=ctx.cwd, bash_max_output=50)
    out = call(ToolRegistry(["Bash"]), "Bash", small, command="head -c 500 /dev/zero | tr '\\0' a").outcome
    assert str(out.content).startswith("a" * 50) and "[450 characters truncated]" in str(out.content)


# --- Write and Edit ----------------------------------------------------------------------


def test_write_creates_but_will_not_overwrite_a_file_not_read(ctx: ToolContext) -> None:
    reg = ToolRegistry(["Write"])
    new = call(
        reg, "Write", ctx, file_path="sub/util.py", content="def add(a, b):\n    return a + b\n"
    ).outcome
    assert new.content == f"File created successfully at: {ctx.cwd / 'sub/util.py'}"
    assert (
        new.result["type"] == "create"
        and new.result["originalFile"] is None
        and new.result["structuredPatch"] == []
    )
    refused = call(reg, "Write", ctx, file_path="app.py", content="x").outcome
    assert refused.is_error and "File has not been read yet" in str(refused.content)
    assert (ctx.cwd / "app.py").read_text() == "print('hello')\n"
    call(reg, "Read", ctx, file_path="app.py")
    upd = call(reg, "Write", ctx, file_path="app.py", content="print('bye')\n").outcome
    assert upd.result["type"] == "update" and upd.result["originalFile"] == "print('hello')\n"
    assert upd.result["structuredPatch"] == [
        {
            "oldStart": 1,
            "oldLines": 1,
            "newStart": 1,
            "newLines": 1,
            "lines": ["-print('hello')", "+print('bye')"],
        }
    ]


def test_edit_rules(ctx: ToolContext) -> None:
    reg = ToolRegistry(["Edit"])
    path = str(ctx.cwd / "app.py")
    assert "has not been read" in str(
        call(reg, "Edit", ctx, file_path=path, old_string="hello", new_string="hi").outcome.content
    )
    call(reg, "Read", ctx, file_path=path)
    same = call(reg, "Edit", ctx, file_path=path, old_string="a", new_string="a").outcome
    assert "No changes to make" in str(same.content)
    missing = call(reg, "Edit", ctx, file_path=path, old_string="absent", new_string="x").outcome
    assert (
        missing.content
        == "<tool_use_error>String to replace not found in file.\nString: absent</tool_use_error>"
    )
    twice = call(reg, "Edit", ctx, file_path=path, old_string="l", new_string="L").outcome
    assert "Found 2 matches of the string to replace, but replace_all is false" in str(twice.content)
    done = call(reg, "Edit", ctx, file_path=path, old_string="hello", new_string="hello world").outcome
    assert done.content == f"The file {path} has been updated successfully."
    assert done.result["structuredPatch"] == [
        {
            "oldStart": 1,
            "oldLines": 1,
            "newStart": 1,
            "newLines": 1,
            "lines": ["-print('hello')", "+print('hello world')"],
        }
    ]
    assert call(
        reg, "Edit", ctx, file_path=path, old_string="l", new_string="L", replace_all=True
    ).outcome.result["replaceAll"]
    assert (ctx.cwd / "app.py").read_text() == "print('heLLo worLd')\n"


def test_edit_refuses_a_file_changed_since_it_was_read(ctx: ToolContext) -> None:
    reg = ToolRegistry(["Edit"])
    call(reg, "Read", ctx, file_path="app.py")
    time.sleep(0.01)
    (ctx.cwd / "app.py").write_text("print('changed by someone')\n")
    out = call(reg, "Edit", ctx, file_path="app.py", old_string="changed", new_string="x").outcome
    assert out.is_error and "modified since read" in str(out.content)


def _apply(old: str, hunks: list[dict[str, object]]) -> str:
    lines = old.splitlines()
    out: list[str] = []
    pos = 0
    for h in hunks:
        start = int(h["oldStart"]) - 1  # type: ignore[call-overload]
        out.extend(lines[pos:start])
        pos = start
        for ln in h["lines"]:  # type: ignore[attr-defined]
            if ln[0] == " ":
                out.append(lines[pos])
                pos += 1
            elif ln[0] == "-":
                pos += 1
            else:
                out.append(ln[1:])
    out.extend(lines[pos:])
    return "\n".join(out)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "c", "dd", ""]), max_size=12),
    st.lists(st.sampled_from(["a", "b", "x", ""]), max_size=12),
)
def test_structured_patch_applied_to_the_old_text_gives_the_new(old: list[str], new: list[str]) -> None:
    a, b = "\n".join(old), "\n".join(new)
    assert _apply(a, structured_patch(a, b)) == "\n".join(b.splitlines())
