"""A project module is imported inside a function only to defer something heavy, and says so.

Function-level imports used to hide import circles; those are gone (tests/test_import_cycles.py).
What remains keeps a heavy library (openai, torch, the sandbox runner...) off paths that never
use it, such as ``apollo --help``; each one carries a ``# deferred: <what>`` comment on the line
above it (or above the block of imports it heads).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("events", "handlers", "replay", "engine")
MARK = "# deferred:"


def _is_project_import(node: ast.stmt) -> bool:
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[0] in PACKAGES for alias in node.names)
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] in PACKAGES
    return False


def _bodies(node: ast.AST) -> list[list[ast.stmt]]:
    fields = (getattr(node, name, None) for name in ("body", "orelse", "finalbody"))
    return [value for value in fields if isinstance(value, list)]


def _heads(previous: ast.stmt, statement: ast.stmt) -> bool:
    """``previous`` is an import on the line right above ``statement`` (one block)."""
    return isinstance(previous, (ast.Import, ast.ImportFrom)) and previous.end_lineno == statement.lineno - 1


def unexplained(source: str, filename: str = "<source>") -> list[int]:
    """Line numbers of function-level project imports with no ``# deferred:`` comment above."""
    lines = source.splitlines()
    found: list[int] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        in_function = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for body in _bodies(node):
            for index, statement in enumerate(body):
                if in_function and _is_project_import(statement):
                    first = index
                    while first > 0 and _heads(body[first - 1], body[first]):
                        first -= 1
                    above = body[first].lineno - 2
                    if above < 0 or not lines[above].strip().startswith(MARK):
                        found.append(statement.lineno)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            visit(child, in_function)

    visit(ast.parse(source, filename=filename), in_function=False)
    return sorted(found)


def test_every_function_level_project_import_says_what_it_defers() -> None:
    """Every function-level import of project code has a comment saying what it defers."""
    offenders = [
        f"{path.relative_to(ROOT)}:{line}"
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for line in unexplained(path.read_text(encoding="utf-8"), str(path))
    ]
    assert offenders == []


def test_an_import_without_the_comment_is_reported() -> None:
    """Function-level project imports without the comment are reported by line; stdlib ones are not."""
    source = (
        "import json\n"
        "from engine.errors import EngineError\n"
        "\n"
        "def f():\n"
        "    import os\n"
        "    from engine.cli import main\n"
        "    return main\n"
        "\n"
        "class C:\n"
        "    def g(self):\n"
        "        if True:\n"
        "            from handlers import routes\n"
        "        from . import sibling\n"
    )
    assert unexplained(source) == [6, 12, 13]


def test_a_comment_above_a_block_of_imports_covers_the_block() -> None:
    """A deferral comment above a block of imports covers that block but not a later one."""
    source = (
        "def f():\n"
        "    # deferred: pulls in openai\n"
        "    from engine.models.router import ModelRouter\n"
        "    from engine.models.probe import probe_endpoint\n"
        "\n"
        "    from events.run import RunStarted\n"
    )
    assert unexplained(source) == [6]
