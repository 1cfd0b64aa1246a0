"""hsbloom's modules import one another in layers: no import cycle, found statically.

Pure Python, no Spark: every module of the package is parsed (ast), every import of another hsbloom module is an
edge, at any depth (an import inside a function closes a cycle as surely as one at the top, only later), and a
cycle fails the test, naming it. The layers, lowest first, are listed in docs/design/architecture.md.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def module_names(package: Path) -> dict[str, Path]:
    """Every module of the package under `package` by its dotted name (a package's own name for its __init__)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports_of(module: str, path: Path, known: set[str]) -> set[str]:
    """The modules of `known` that the module imports anywhere in its source."""
    is_package = path.name == "__init__.py"
    imported: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package, one level up per extra dot
                package = module.split(".") if is_package else module.split(".")[:-1]
                anchor = package[: len(package) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # `from pkg import name`: the submodule pkg.name if there is one, else pkg itself.
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:  # `import a.b.c` of a non-module attribute: its module
                name = name.rpartition(".")[0]
            if name and name != module:
                imported.add(name)
    return imported


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports."""
    modules = module_names(package)
    return {name: imports_of(name, path, set(modules)) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the modules along it with the first repeated at the end, or None."""
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        if module in path:
            return path[path.index(module):] + [module]
        if module in done:
            return None
        path.append(module)
        for imported in sorted(graph.get(module, ())):
            cycle = visit(imported)
            if cycle:
                return cycle
        path.pop()
        done.add(module)
        return None

    for module in sorted(graph):
        cycle = visit(module)
        if cycle:
            return cycle
    return None


def test_hsbloom_has_no_import_cycle():
    graph = import_graph(ROOT / "hsbloom")
    # The graph is the real one: the layers' known edges are in it (a cycle could not hide behind an empty graph).
    assert {"hsbloom.launch", "hsbloom.session_checks"} <= graph["hsbloom.connect"]
    assert "hsbloom.session_checks" in graph["hsbloom.session"]
    assert "hsbloom.errors" in graph["hsbloom.readers.index"]
    assert find_cycle(graph) is None, f"import cycle: {' -> '.join(find_cycle(graph) or [])}"


def write_package(root: Path, modules: dict[str, str]) -> Path:
    package = root / "pkg"
    for name, source in {"__init__": "", **modules}.items():
        path = package / (name.replace(".", "/") + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return package


def test_a_cycle_closed_by_an_import_inside_a_function_is_found(tmp_path):
    package = write_package(tmp_path, {
        "a": "from pkg import b\n",
        "b": "import os\n\n\ndef late():\n    from pkg.c import value\n    return value\n",
        "c": "from .a import thing\n",
    })
    assert find_cycle(import_graph(package)) == ["pkg.a", "pkg.b", "pkg.c", "pkg.a"]


def test_imports_resolve_to_modules_and_a_package_importing_its_modules_is_no_cycle(tmp_path):
    package = write_package(tmp_path, {
        "__init__": "from pkg.a import f\nfrom pkg.sub import g\n",
        "a": "import pkg.sub.low\nfrom pkg.sub import low as renamed\n\n\ndef f():\n    pass\n",
        "sub.__init__": "from . import low\n",
        "sub.low": "from .. import errors\nfrom ..errors import Oops\n",
        "errors": "class Oops(Exception):\n    pass\n",
    })
    graph = import_graph(package)
    assert graph == {
        "pkg": {"pkg.a", "pkg.sub"},
        "pkg.a": {"pkg.sub.low"},
        "pkg.errors": set(),
        "pkg.sub": {"pkg.sub.low"},
        "pkg.sub.low": {"pkg.errors"},
    }
    assert find_cycle(graph) is None
    # A module that imports a name from its package's __init__, which imports that module: a cycle.
    (package / "errors.py").write_text("from pkg import f\n")
    assert find_cycle(import_graph(package)) == ["pkg", "pkg.a", "pkg.sub.low", "pkg.errors", "pkg"]
