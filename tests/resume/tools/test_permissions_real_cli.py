"""The compatibility bench of issue 19: each file-tool probe run through the real Claude
Code (2.1.332 and 2.1.197, ``-p`` against the stand-in, the call scripted by the policy's
``TOOL:`` line) and through ``tt resume`` (the call scripted on the stand-in), in the same
directories. Both must decide alike (tt may be stricter where a probe says so), a
denial must read and be recorded as Claude Code's, and no byte of the outside file may
reach any request tt sends."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_cli
from tests.resume.test_cli_resume import SID332, api_env, config, tt  # noqa: F401  (fixtures)
from tests.support.claude_cli import BUNDLED_VERSION, NPM_VERSION, Sandbox, run_claude
from tests.support.standin import StandIn, Text, ToolUse

MARK = "MARKER-OUTSIDE-9c2d"


@dataclass(frozen=True)
class Probe:
    name: str
    tool: str
    inp: dict[str, Any]
    cc_allowed: str | None  # --allowedTools for Claude Code (None: none)
    tt_allowed: tuple[str, ...] = ()
    cc_extra: tuple[str, ...] = ()
    tt_extra: tuple[str, ...] = ()
    denied: bool = True  # Claude Code's decision
    tt_denied: bool | None = None  # tt's, when stricter (None: as Claude Code)
    same_text: bool = True  # tt's is_error text is 2.1.332's word for word
    only: str | None = None  # run against this CLI version only
    denied_197: bool | None = None  # 2.1.197's decision where it differs from 2.1.332's
    notes: list[str] = field(default_factory=list)


def _probes(root: Path, home: Path) -> list[Probe]:
    proj, out, extra = root / "proj", root / "out", root / "extra"
    sec = str(out / "secret.txt")
    return [
        Probe("read inside (control)", "Read", {"file_path": str(proj / "inside.txt")}, None, denied=False),
        Probe("read outside", "Read", {"file_path": sec}, None),
        Probe("read outside by ../", "Read", {"file_path": "../out/secret.txt"}, None),
        Probe("read a symlink inside pointing out", "Read", {"file_path": str(proj / "link.txt")}, None),
        Probe(
            "read outside with a bare Read rule",
            "Read",
            {"file_path": sec},
            "Read",
            ("Read",),
            denied=False,
            tt_denied=True,
            same_text=False,
        ),
        Probe("glob outside", "Glob", {"pattern": "*.txt", "path": str(out)}, "Glob(./zz)"),
        Probe(
            "glob by an absolute pattern outside",
            "Glob",
            {"pattern": f"{out}/*.txt"},
            "Glob(./zz)",
            denied_197=False,
            tt_denied=True,
        ),
        Probe(
            "grep outside",
            "Grep",
            {"pattern": "MARKER", "path": str(out), "output_mode": "content"},
            "Grep(./zz)",
        ),
        Probe(
            "grep a symlinked dir inside",
            "Grep",
            {"pattern": "MARKER", "path": str(proj / "linkdir"), "output_mode": "content"},
            "Grep(./zz)",
        ),
        Probe(
            "grep inside skips symlinks",
            "Grep",
            {"pattern": "MARKER|INSIDE", "output_mode": "content"},
            "Grep(./zz)",
            denied=False,
        ),
        Probe("read inside .git", "Read", {"file_path": str(proj / ".git" / "config")}, None, denied=False),
        Probe(
            "write inside .git",
            "Write",
            {"file_path": str(proj / ".git" / "new"), "content": "x"},
            "Write",
            ("Write",),
        ),
        Probe(
            "write outside",
            "Write",
            {"file_path": str(out / "new.txt"), "content": "x"},
            None,
            ("Write",),
            ("--permission-mode", "acceptEdits"),
        ),
        Probe(
            "write through a symlinked dir inside",
            "Write",
            {"file_path": str(proj / "linkdir" / "new.txt"), "content": "x"},
            None,
            ("Write",),
            ("--permission-mode", "acceptEdits"),
        ),
        Probe(
            "write a relative path, Write not allowed",
            "Write",
            {"file_path": "rel.txt", "content": "x"},
            None,
        ),
        # 2.1.197 blocks on the pipe until killed (observed: a 60 s timeout); tt never opens it.
        Probe(
            "read a pipe (never blocks)",
            "Read",
            {"file_path": str(proj / "fifo")},
            None,
            denied=False,
            only=BUNDLED_VERSION,
        ),
        Probe(
            "read in an --add-dir",
            "Read",
            {"file_path": str(extra / "more.txt")},
            None,
            (),
            ("--add-dir", str(extra)),
            ("--add-dir", str(extra)),
            denied=False,
        ),
        Probe(
            "read a path a //abs rule names",
            "Read",
            {"file_path": str(out / "named.txt")},
            f"Read(/{out}/named.txt)",
            (f"Read(/{out}/named.txt)",),
            denied=False,
        ),
        Probe(
            "read a path a ~ rule names",
            "Read",
            {"file_path": str(home / "notes" / "n.txt")},
            "Read(~/notes/**)",
            ("Read(~/notes/**)",),
            denied=False,
        ),
        Probe(
            "read a path the ~ rule does not name",
            "Read",
            {"file_path": str(home / "other.txt")},
            "Read(~/notes/**)",
            ("Read(~/notes/**)",),
        ),
        Probe(
            "cat outside under Bash(cat:*)",
            "Bash",
            {"command": f"cat {sec}"},
            "Bash(cat:*)",
            ("Bash(cat:*)",),
        ),
    ]


def _layout(root: Path, home: Path) -> None:
    proj, out, extra = root / "proj", root / "out", root / "extra"
    for d in (proj / ".git", out, extra, home / "notes"):
        d.mkdir(parents=True, exist_ok=True)
    (proj / "inside.txt").write_text("INSIDE-OK\n")
    (proj / ".git" / "config").write_text("[core]\n")
    (out / "secret.txt").write_text(f"{MARK} secret\n")
    (out / "named.txt").write_text("NAMED-OK\n")
    (extra / "more.txt").write_text("EXTRA-OK\n")
    (home / "notes" / "n.txt").write_text("NOTES-OK\n")
    (home / "other.txt").write_text(f"{MARK} home\n")
    os.mkfifo(proj / "fifo")
    (proj / "link.txt").symlink_to(out / "secret.txt")
    (proj / "linkdir").symlink_to(out)


def _tool_result(api: StandIn) -> dict[str, Any] | None:
    for req in reversed(api.message_requests):
        for m in reversed(req.messages):
            if isinstance(m.get("content"), list):
                for b in m["content"]:
                    if isinstance(b, dict) and b.get("type") == "tool_result":
                        return b
    return None


def _text(block: dict[str, Any] | None) -> str:
    c = (block or {}).get("content")
    return c if isinstance(c, str) else json.dumps(c)


@pytest.mark.claude
@pytest.mark.parametrize("version", [BUNDLED_VERSION, NPM_VERSION])
def test_each_probe_is_decided_as_claude_code_decides_it_and_nothing_outside_leaks(
    version: str,
    tt: Any,
    config: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cli = require_cli(version)
    root = tmp_path / "bench"
    sandbox = Sandbox.create(root / "sb")
    _layout(root, sandbox.home)
    monkeypatch.setenv("HOME", str(sandbox.home))  # tt's "~" is the CLI's
    proj = root / "proj"
    problems: list[str] = []
    for p in _probes(root, sandbox.home):
        if p.only is not None and p.only != version:
            continue
        with StandIn() as api:
            run = run_claude(
                cli,
                f"TOOL:{p.tool} " + json.dumps(p.inp),
                sandbox=sandbox,
                cwd=proj,
                base_url=api.base_url,
                allowed_tools=p.cc_allowed,
                extra_args=p.cc_extra,
                check=False,
                timeout=60,
            )
            theirs = _tool_result(api)
        cc_denials = run.result.get("permission_denials")
        denied = p.denied if version == BUNDLED_VERSION or p.denied_197 is None else p.denied_197
        if run.returncode != 0 or theirs is None or (bool(cc_denials) != denied):
            problems.append(
                f"{p.name}: claude {version} no longer decides as recorded: rc={run.returncode} denials={cc_denials} result={_text(theirs)[:200]}"
            )
            continue
        with StandIn() as api:
            api.script(ToolUse(p.tool, p.inp), Text("done"))
            args = [
                "resume",
                SID332,
                "-p",
                "probe",
                "--output-format",
                "json",
                "--cwd",
                str(proj),
                *p.tt_extra,
            ]
            for rule in p.tt_allowed:
                args += ["--allowed-tools", rule]
            r = tt(*args, env=api_env(api))
            mine = _tool_result(api)
            leaked = [q.index for q in api.requests if MARK.encode() in q.raw]
        if r.code != 0:
            problems.append(f"{p.name}: tt exited {r.code}: {r.err}")
            continue
        result = json.loads(r.out)
        tt_denials = result["permission_denials"]
        want = denied if p.tt_denied is None else p.tt_denied
        if bool(tt_denials) != want:
            problems.append(
                f"{p.name}: tt decided {'deny' if tt_denials else 'allow'}, want {'deny' if want else 'allow'}: {_text(mine)[:200]}"
            )
        if leaked:
            problems.append(f"{p.name}: the outside marker reached tt's request(s) {leaked}")
        if want and (mine or {}).get("is_error") is not True:
            problems.append(f"{p.name}: tt's denial is not an is_error result: {mine}")
        if denied and want and p.same_text:
            if version == BUNDLED_VERSION and _text(mine) != _text(theirs):
                problems.append(f"{p.name}: text differs\n  tt:     {_text(mine)}\n  claude: {_text(theirs)}")
            # 2.1.197 says the first sentence only (no "resolves through a symlink" part).
            if version == NPM_VERSION and not _text(mine).startswith(_text(theirs)):
                problems.append(f"{p.name}: text differs\n  tt:     {_text(mine)}\n  claude: {_text(theirs)}")
            cc_input = cc_denials[0]["tool_input"]
            tt_input = tt_denials[0]["tool_input"]
            if tt_input != cc_input or tt_denials[0]["tool_name"] != cc_denials[0]["tool_name"]:
                problems.append(
                    f"{p.name}: denial differs\n  tt:     {tt_denials[0]}\n  claude: {cc_denials[0]}"
                )
        if not denied and not want and _text(mine) != _text(theirs):
            problems.append(
                f"{p.name}: the allowed result differs\n  tt:     {_text(mine)}\n  claude: {_text(theirs)}"
            )
    assert problems == []
