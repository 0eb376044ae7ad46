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
    "model/active",
    "model/chain",
    "model/diagnostics",
    "model/errors",
    "model/lines",
    "model/pricing",
    "model/session",
    "model/boundary_meta",
    "validate/core",
    "model/api_checks",
    "repair/core",
    "repair/plan",
    "repair/survey",
    "repair/apply",
    "repair/fixes",
    "repair/model",
    "repair/records",
    "fork/core",
    "fork/branch",
    "fork/subagents",
    "compact/plan",
    "model/conversation",
    "catalog/stats",
    "catalog/listing",
    "manage/core",
    "redact/rules",
    "doctor/core",
    "redact/core",
    "bundle/core",
    "rewind/core",
    "model/request",
    "show/items",
    "show/text",
    "show/subagents",
    "show/core",
    "store/layers",
    "store/records",
    "store/schema",
    "store/prepare",
    "store/model",
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
    # A core module that is not there was renamed or removed: update CORE, never skip it.
    assert tree is not None, f"core module transcript_tools/{name}(.py) not found: update CORE in this test"
    assert not (_imports(tree) & FORBIDDEN), name
    calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert "open" not in calls and "print" not in calls and "input" not in calls


def test_library_never_prints() -> None:
    for p in PKG.rglob("*.py"):
        rel = p.relative_to(PKG).parts
        if rel[0] in ("cli", "views"):
            continue
        tree = ast.parse(p.read_text(), str(p))
        calls = {
            n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        }
        assert "print" not in calls, p


def test_no_catch_all_exception_handlers() -> None:
    for p in PKG.rglob("*.py"):
        tree = ast.parse(p.read_text(), str(p))
        for n in ast.walk(tree):
            if isinstance(n, ast.ExceptHandler):
                assert n.type is not None, f"bare except in {p}:{n.lineno}"
                names = [n.type] if not isinstance(n.type, ast.Tuple) else list(n.type.elts)
                for t in names:
                    assert not (isinstance(t, ast.Name) and t.id in ("Exception", "BaseException")), (
                        f"{p}:{n.lineno}"
                    )


def test_every_module_has_a_docstring() -> None:
    for p in PKG.rglob("*.py"):
        tree = ast.parse(p.read_text(), str(p))
        assert ast.get_docstring(tree), p


def test_exported_members() -> None:
    assert set(transcript_tools.__all__) >= {
        "Diagnostic",
        "Entry",
        "MAX_TRANSCRIPT_READ_BYTES",
        "Report",
        "TTError",
        "TranscriptTooLarge",
        "iter_lines",
        "load",
        "resolve",
        "validate_path",
    }
    for name in transcript_tools.__all__:
        assert hasattr(transcript_tools, name), name


def _module_name(p: Path) -> str:
    rel = p.relative_to(PKG).with_suffix("")
    parts = ["transcript_tools", *rel.parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_imports(p: Path, name: str) -> set[str]:
    """The package's modules ``p`` imports anywhere (top level, in functions, under
    TYPE_CHECKING), resolved to module names."""
    is_pkg = p.name == "__init__.py"
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(p.read_text(), str(p))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("transcript_tools"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = base[: len(base) - node.level + 1]
                mod = ".".join(parent + ([node.module] if node.module else []))
            elif node.module and node.module.startswith("transcript_tools"):
                mod = node.module
            else:
                continue
            # `from . import x` names a module; `from .m import f` names m.
            out.update(
                f"{mod}.{a.name}"
                for a in node.names
                if (PKG.parent / f"{mod}.{a.name}".replace(".", "/")).with_suffix(".py").exists()
            )
            out.add(mod)
    return out


def test_no_module_imports_one_that_imports_it_back() -> None:
    # A one-way stack of modules (see the README's layout): a circle would mean two
    # modules that cannot be understood, tested or moved one without the other.
    files = {_module_name(p): p for p in PKG.rglob("*.py")}
    graph = {m: {i for i in _package_imports(p, m) if i in files and i != m} for m, p in files.items()}
    # Package __init__ files only hand names on; their arrows are not dependencies of a layer.
    for m in list(graph):
        if files[m].name == "__init__.py":
            graph[m] = set()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return stack[stack.index(n) :] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            circle = visit(m)
            assert circle is None, " -> ".join(circle)
