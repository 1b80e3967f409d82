"""No import circles anywhere in the project, counting every way a module can be imported.

An edge A -> B exists when A imports B at module level, inside a function, through
``importlib.import_module("B")`` with a literal name, or implicitly: importing ``a.b.c``
runs the ``__init__`` of ``a`` and ``a.b`` first. Imports under ``if TYPE_CHECKING:`` are
not executed and do not count. Any strongly connected component of more than one module
is a circle, reported with its members.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("events", "handlers", "replay", "engine")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    return {module_name(path): path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))}


def _is_type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _import_nodes(tree: ast.AST, *, type_only: bool = False) -> Iterator[ast.AST]:
    """Every node of the tree except what sits under ``if TYPE_CHECKING:`` (unless ``type_only``)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not type_only and _is_type_checking_block(child):
                stack.extend(child.orelse)
            else:
                stack.append(child)


def imported_names(module: str, source: str, *, is_package: bool, known: set[str] | dict[str, Path],
                   type_only: bool = False) -> set[str]:
    """The project modules ``module`` imports, by name (``from pkg import mod`` names ``pkg.mod``);
    with ``type_only``, the imports made only for type checkers count too."""
    found: set[str] = set()
    for node in _import_nodes(ast.parse(source), type_only=type_only):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        elif (isinstance(node, ast.Call) and ast.unparse(node.func).endswith("import_module")
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.add(node.args[0].value)
    return {name for name in found if name in known}


def import_graph(*, type_only: bool = False) -> dict[str, set[str]]:
    """Explicit imports plus the package ``__init__`` modules each import runs on the way."""
    known = project_modules()
    graph: dict[str, set[str]] = {}
    for module, path in known.items():
        ancestors = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
        edges: set[str] = set()
        source = path.read_text(encoding="utf-8")
        for target in imported_names(module, source, is_package=path.name == "__init__.py", known=known,
                                     type_only=type_only):
            parts = target.split(".")
            chain = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
            edges |= {name for name in chain if name in known}
        graph[module] = edges - ancestors - {module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_takes_part_in_an_import_circle() -> None:
    """No project module takes part in an import cycle."""
    assert circles(import_graph()) == []


def test_no_module_takes_part_in_a_circle_even_counting_type_only_imports() -> None:
    """Imports made only for type checkers close no circle either: each module has one place."""
    assert circles(import_graph(type_only=True)) == []


def test_the_detector_reports_each_circle_with_its_members() -> None:
    """The cycle detector reports each cycle with exactly its members."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]


def test_function_level_importlib_and_relative_imports_count_but_type_checking_ones_do_not() -> None:
    """Function-level, importlib and relative imports count as edges; TYPE_CHECKING imports do not."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from pkg.typing_only import T\n"
        "def late():\n"
        "    from pkg.inner import thing\n"
        "    import importlib\n"
        "    return importlib.import_module('pkg.plugin')\n"
        "from . import sibling\n"
    )
    known = {"pkg", "pkg.inner", "pkg.plugin", "pkg.sibling", "pkg.typing_only", "pkg.me"}
    assert imported_names("pkg.me", source, is_package=False, known=known) == {
        "pkg", "pkg.inner", "pkg.plugin", "pkg.sibling"}


def test_importing_a_submodule_counts_as_importing_its_package_init() -> None:
    """Importing a submodule counts as importing its package's __init__ as well."""
    graph = import_graph()
    assert "engine.cli.solve" in graph["engine.cli.main"]
    assert "engine.plugins" in graph["engine.cli.plugins"]  # `from engine.plugins import ...`
    assert "engine.sandbox" in graph["engine.tools.python_code"]  # runs engine/sandbox/__init__.py
