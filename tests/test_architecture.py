"""The house rules that code review alone would let slip: a pure core, a quiet library.

- Core modules (data and operations) import no terminal, network, tokenizer or process
  library and never call ``open``/``print``.
- No module of the library prints except through the CLI and views.
- The public API is pinned (like httpx's test_exported_members).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import transcript_tools

PKG = Path(transcript_tools.__file__).parent

CORE = [
    "active", "chain", "diagnostics", "errors", "lines", "pricing", "session", "validate",
    "api_checks", "repair", "fork", "branch", "fork_subagents", "compact", "conversation", "stats", "listing", "manage", "redact_rules",
    "redact", "bundle", "rewind", "request", "display_items", "render_text", "subagents", "render",
]
FORBIDDEN = {"click", "rich", "anthropic", "tiktoken", "httpx", "subprocess", "socket", "requests", "urllib"}


def _tree(name: str) -> ast.Module | None:
    """The module's AST; for a package, all its modules' bodies in one tree."""
    p = PKG / f"{name}.py"
    if p.exists():
        return ast.parse(p.read_text(), str(p))
    d = PKG / name
    if d.is_dir():
        body: list[ast.stmt] = []
        for f in sorted(d.rglob("*.py")):
            body.extend(ast.parse(f.read_text(), str(f)).body)
        return ast.Module(body=body, type_ignores=[])
    return None


def _imports(tree: ast.Module) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
    return out


@pytest.mark.parametrize("name", CORE)
def test_core_module_is_pure(name: str) -> None:
    tree = _tree(name)
    if tree is None:
        pytest.skip(f"{name}.py not written yet")
    assert not (_imports(tree) & FORBIDDEN), name
    calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert "open" not in calls and "print" not in calls and "input" not in calls


def test_library_never_prints() -> None:
    for p in PKG.rglob("*.py"):
        rel = p.relative_to(PKG).parts
        if rel[0] in ("cli", "views"):
            continue
        tree = ast.parse(p.read_text(), str(p))
        calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        assert "print" not in calls, p


def test_no_catch_all_exception_handlers() -> None:
    for p in PKG.rglob("*.py"):
        tree = ast.parse(p.read_text(), str(p))
        for n in ast.walk(tree):
            if isinstance(n, ast.ExceptHandler):
                assert n.type is not None, f"bare except in {p}:{n.lineno}"
                names = [n.type] if not isinstance(n.type, ast.Tuple) else list(n.type.elts)
                for t in names:
                    assert not (isinstance(t, ast.Name) and t.id in ("Exception", "BaseException")), f"{p}:{n.lineno}"


def test_every_module_has_a_docstring() -> None:
    for p in PKG.rglob("*.py"):
        tree = ast.parse(p.read_text(), str(p))
        assert ast.get_docstring(tree), p


def test_exported_members() -> None:
    assert set(transcript_tools.__all__) >= {
        "Diagnostic", "Entry", "MAX_TRANSCRIPT_READ_BYTES", "Report", "TTError", "TranscriptTooLarge",
        "iter_lines", "load", "resolve", "validate_path",
    }
    for name in transcript_tools.__all__:
        assert hasattr(transcript_tools, name), name
