"""The house rules, read from the layout rather than from a hand-kept list.

Where a module lives says what it may do. Every module under ``transcript_tools/`` falls in
exactly one of these places (see the README's layout and CONTRIBUTING.md):

- ``edge/**``: the shared adapters (reader, writer, ``~/.claude``, client, tokenizer, clock, …);
- a verb's file side: ``<verb>/files.py`` or ``<verb>/files_*.py``;
- ``resume/tools/**``: the tools a resumed session runs act on the world (shell, files, search);
- ``cli/**``: the command line, a thin layer that parses, calls the library and renders;
- ``views/**``: rendering; may import rich/click but touches no disk;
- the top package's ``__init__.py``, ``__main__.py`` and ``api.py`` (the public surface);
- a package's ``__init__.py``: a docstring and nothing else (no imports, so ``tt ls`` starts
  fast), except ``cli/__init__.py``, the entry point the installed ``tt`` script names;
- everything else is PURE.

Pure means: no runtime import of a disk, process, network, terminal, tokenizer, clock or
randomness library (``FORBIDDEN``; an import under ``if TYPE_CHECKING:`` is only a type and
is allowed, and so are pathlib's pure classes), no call of ``open``/``print``/``input`` nor
of ``datetime.now``/``uuid4`` (the clock and ids are inputs), and no runtime import of a
module that is not pure itself (edge/, a file side, the tools, cli/, views/, api). A pure
module that needs a reader, a writer, a client or a clock is handed it (an injected value:
a function or object the file side passes in); it may name the adapter's type under
``TYPE_CHECKING``. Claude Code's serialisation that pure
code needs (``dumps``, the timestamp form) is ``model/wire.py``, which ``edge/writer.py`` imports.

A module that fits no place fails the test, as does a module at the top level other than
``__init__``/``__main__``/``api`` (the top level shows only the packages).

And, everywhere: no module imports one that imports it back, no bare or catch-all ``except``,
every module has a docstring, the library never prints (only cli/ and views/ do).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import transcript_tools

PKG = Path(transcript_tools.__file__).parent

# The standard library's and third parties' modules a pure module may not import at run time.
FORBIDDEN = {
    # the disk and the process
    "os",
    "pathlib",
    "mmap",
    "zipfile",
    "subprocess",
    "shutil",
    "tempfile",
    "sqlite3",
    "psycopg",
    # the network and the API
    "socket",
    "anthropic",
    "httpx",
    "requests",
    "urllib",
    # the tokenizer and the terminal
    "tiktoken",
    "click",
    "rich",
    # the clock and chance (a pure module is handed `now` and its ids)
    "time",
    "random",
    "secrets",
    # a module loaded by name escapes this test
    "importlib",
}
# What a view may not import: it renders values it is given and reads no disk.
VIEW_FORBIDDEN = FORBIDDEN - {"click", "rich", "time"}
IO_CALLS = {"open", "print", "input"}
PURE_PATHS = {"PurePath", "PurePosixPath", "PureWindowsPath"}

TOP = {"__init__.py", "__main__.py", "api.py"}


def place(rel: Path) -> str:
    """Where the module at ``rel`` (relative to the package) lives; ``"?"`` for nowhere."""
    parts = rel.parts
    if len(parts) == 1:
        return "top" if parts[0] in TOP else "?"
    if parts[-1] == "__init__.py":
        return "package-init"
    head = parts[0]
    if head == "edge":
        return "edge"
    if head == "cli":
        return "cli"
    if head == "views":
        return "views"
    if parts[:2] == ("resume", "tools"):
        return "tools"
    name = parts[-1]
    if name == "files.py" or (name.startswith("files_") and name.endswith(".py")):
        return "files"
    return "pure"


def _modules() -> list[Path]:
    return sorted(p.relative_to(PKG) for p in PKG.rglob("*.py"))


def _module_name(rel: Path) -> str:
    parts = ["transcript_tools", *rel.with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(rel): rel for rel in _modules()}


def _parse(rel: Path) -> ast.Module:
    p = PKG / rel
    return ast.parse(p.read_text(encoding="utf-8"), str(p))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that runs: at the top, in functions, in ``try``; not the body of
    an ``if TYPE_CHECKING:`` (its ``else`` does run)."""
    out: list[ast.Import | ast.ImportFrom] = []

    def walk(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                walk(child)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append(node)
        for child in ast.iter_child_nodes(node):
            walk(child)

    walk(tree)
    return out


def _resolve(node: ast.ImportFrom, name: str, rel: Path) -> str:
    """The absolute module an ``ImportFrom`` names (relative imports resolved from ``name``)."""
    if not node.level:
        return node.module or ""
    base = name.split(".") if rel.name == "__init__.py" else name.split(".")[:-1]
    parent = base[: len(base) - node.level + 1]
    return ".".join(parent + ([node.module] if node.module else []))


def _imported(nodes: list[ast.Import | ast.ImportFrom], name: str, rel: Path) -> set[str]:
    """The modules ``nodes`` import, as absolute names (``from . import x`` names module x)."""
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
            continue
        mod = _resolve(node, name, rel)
        out.add(mod)
        out.update(f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in MODULES)
    return out


def _libraries(nodes: list[ast.Import | ast.ImportFrom], forbidden: set[str]) -> set[str]:
    """The ``forbidden`` libraries ``nodes`` import. pathlib's pure classes (``PurePath``,
    ``PurePosixPath``: path arithmetic on names, no method that reaches the disk) are not
    the disk and may be imported by name."""
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif node.module and not node.level:
            top = node.module.split(".")[0]
            if not (top == "pathlib" and all(a.name in PURE_PATHS for a in node.names)):
                out.add(top)
    return out & forbidden


def _own(mods: set[str]) -> set[str]:
    """The package's modules among ``mods`` (a package counts as its ``__init__``)."""
    return {m for m in mods if m in MODULES}


def _calls(tree: ast.AST) -> set[str]:
    return {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


#: Calls that read the clock or draw a random id, by their last name (``datetime.now()``,
#: ``date.today()``, ``uuid.uuid4()``): the modules are fine (parsing, formatting), these not.
CLOCK_CALLS = {"now", "today", "utcnow", "uuid1", "uuid4"}


def _clock_calls(tree: ast.AST) -> set[str]:
    out: set[str] = set()
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        if isinstance(f, ast.Name) and f.id in CLOCK_CALLS - {"now", "today"}:
            out.add(f.id)
        elif (
            isinstance(f, ast.Attribute)
            and f.attr in CLOCK_CALLS
            and isinstance(f.value, ast.Name)
            and f.value.id in ("datetime", "date", "uuid", "_uuid")
        ):
            out.add(f"{f.value.id}.{f.attr}")
    return out


PLACES = {name: place(rel) for name, rel in MODULES.items()}
PURE = sorted(name for name, where in PLACES.items() if where == "pure")


def test_every_module_has_a_place() -> None:
    lost = sorted(str(rel) for rel in _modules() if place(rel) == "?")
    assert not lost, f"modules outside the layout (move them into a package): {lost}"


def test_the_layout_is_what_the_house_says() -> None:
    # The classifier itself, on paths worked out by hand (not read from the tree).
    cases = {
        "api.py": "top",
        "__main__.py": "top",
        "helpers.py": "?",
        "edge/reader.py": "edge",
        "edge/__init__.py": "package-init",
        "repair/files.py": "files",
        "compact/files_read.py": "files",
        "compact/filesystem.py": "pure",
        "resume/tools/bash.py": "tools",
        "resume/engine.py": "pure",
        "cli/manage.py": "cli",
        "views/show.py": "views",
        "model/wire.py": "pure",
    }
    assert {k: place(Path(k)) for k in cases} == cases
    # And the tree has every kind of place, with the pure core the largest.
    counts = {where: sum(1 for w in PLACES.values() if w == where) for where in set(cases.values()) - {"?"}}
    assert all(counts.values()), counts
    assert counts["pure"] > max(n for w, n in counts.items() if w != "pure")


@pytest.mark.parametrize("name", PURE)
def test_pure_module(name: str) -> None:
    rel = MODULES[name]
    tree = _parse(rel)
    nodes = _runtime_imports(tree)
    imported = _imported(nodes, name, rel)
    libs = _libraries(nodes, FORBIDDEN)
    assert not libs, (
        f"{rel} imports {sorted(libs)} at run time (pure: pass values in, or import under TYPE_CHECKING)"
    )
    # The top package is allowed too: its __init__ hands names on lazily and imports no verb
    # (tests/test_exported_members.py), so `from .. import __version__` brings in no I/O.
    impure = sorted(
        m for m in _own(imported) if PLACES[m] not in ("pure", "package-init") and m != "transcript_tools"
    )
    assert not impure, f"{rel} imports {impure}, which are not pure (inject the adapter instead)"
    calls = _calls(tree) & IO_CALLS
    assert not calls, f"{rel} calls {sorted(calls)}"
    clock = _clock_calls(tree)
    assert not clock, f"{rel} reads the clock or draws an id ({sorted(clock)}): take `now`/ids as inputs"


#: Views known to break the rule, each with the work that fixes it. Strict: when the fix
#: lands the test passes, the xfail fails, and the entry must go.
VIEW_DEBT: dict[str, str] = {}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(reason=VIEW_DEBT[n], strict=True)) if n in VIEW_DEBT else n
        for n in sorted(n for n, w in PLACES.items() if w == "views")
    ],
)
def test_view_touches_no_disk(name: str) -> None:
    rel = MODULES[name]
    tree = _parse(rel)
    nodes = _runtime_imports(tree)
    imported = _imported(nodes, name, rel)
    libs = _libraries(nodes, VIEW_FORBIDDEN)
    assert not libs, f"{rel} imports {sorted(libs)} at run time (a view renders the values it is given)"
    wrong = sorted(m for m in _own(imported) if PLACES[m] not in ("pure", "package-init", "views"))
    assert not wrong, f"{rel} imports {wrong} (a view gets its values from the CLI)"
    assert "open" not in _calls(tree) and "input" not in _calls(tree), rel


#: The one package __init__ with code: the command line's entry point, which the installed
#: ``tt`` script names (pyproject: ``tt = "transcript_tools.cli:run"``). Every cli/ module
#: needs what it imports (click, the errors) anyway, so it costs no command any start-up time.
ENTRY_POINT = "transcript_tools.cli"


@pytest.mark.parametrize(
    "name", sorted(n for n, w in PLACES.items() if w == "package-init" and n != ENTRY_POINT)
)
def test_package_init_is_only_a_docstring(name: str) -> None:
    # `tt ls` imports cli/ and a few modules; a package __init__ that imported its modules
    # would load every verb's code on start-up.
    tree = _parse(MODULES[name])
    assert ast.get_docstring(tree), name
    assert len(tree.body) == 1, f"{name}: a package __init__ holds its docstring and nothing else"


def test_the_entry_point_is_the_only_package_init_with_code() -> None:
    import tomllib

    scripts = tomllib.loads((PKG.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts["tt"].partition(":")[0] == ENTRY_POINT
    assert PLACES[ENTRY_POINT] == "package-init"


def test_library_never_prints() -> None:
    for rel in _modules():
        if place(rel) in ("cli", "views"):
            continue
        assert "print" not in _calls(_parse(rel)), rel


def test_no_catch_all_exception_handlers() -> None:
    for rel in _modules():
        for n in ast.walk(_parse(rel)):
            if isinstance(n, ast.ExceptHandler):
                assert n.type is not None, f"bare except in {rel}:{n.lineno}"
                names = [n.type] if not isinstance(n.type, ast.Tuple) else list(n.type.elts)
                for t in names:
                    assert not (isinstance(t, ast.Name) and t.id in ("Exception", "BaseException")), (
                        f"{rel}:{n.lineno}"
                    )


def test_every_module_has_a_docstring() -> None:
    for rel in _modules():
        assert ast.get_docstring(_parse(rel)), rel


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


def _all_imports(name: str, rel: Path) -> set[str]:
    """The package's modules ``name`` imports anywhere (top level, in functions, under
    TYPE_CHECKING): a type-only arrow is still an arrow between two modules."""
    tree = _parse(rel)
    nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    return _own(_imported(nodes, name, rel)) - {name}


def test_no_module_imports_one_that_imports_it_back() -> None:
    # A one-way stack of modules (see the README's layout): a circle would mean two
    # modules that cannot be understood, tested or moved one without the other.
    graph = {m: _all_imports(m, rel) for m, rel in MODULES.items()}
    # Package __init__ files only hand names on; their arrows are not dependencies of a layer.
    for m, rel in MODULES.items():
        if rel.name == "__init__.py":
            graph[m] = set()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return [*stack[stack.index(n) :], n]
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


def test_the_import_reader_resolves_relative_imports_and_skips_type_checking() -> None:
    # On a hand-written module model/active.py: `from . import chain` is the module
    # model.chain, `from ..edge import reader` is edge.reader, `from .lines import Entry` is
    # model.lines; an import under `if TYPE_CHECKING:` does not run, its `else:` does.
    src = "from . import chain\nfrom ..edge import reader\nfrom .lines import Entry\n"
    got = _imported(
        _runtime_imports(ast.parse(src)), "transcript_tools.model.active", Path("model/active.py")
    )
    assert got == {
        "transcript_tools.model",
        "transcript_tools.model.chain",
        "transcript_tools.edge",
        "transcript_tools.edge.reader",
        "transcript_tools.model.lines",
    }
    src = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import os\nelse:\n    import re\n"
    assert _imported(_runtime_imports(ast.parse(src)), "x", Path("x.py")) == {"typing", "re"}
    # pathlib's pure classes are allowed by name; Path, or the module, is the disk.
    for src, found in [
        ("from pathlib import PurePath, PurePosixPath", set()),
        ("from pathlib import PurePath, Path", {"pathlib"}),
        ("import pathlib", {"pathlib"}),
        ("import os.path", {"os"}),
        ("def f():\n    import shutil", {"shutil"}),
        ("import time", {"time"}),
    ]:
        assert _libraries(_runtime_imports(ast.parse(src)), FORBIDDEN) == found, src
    src = "datetime.now(UTC)\nuuid.uuid4()\nclock.now()\ndatetime.fromisoformat(s)\nuuid.UUID(s)\n"
    assert _clock_calls(ast.parse(src)) == {"datetime.now", "uuid.uuid4"}
