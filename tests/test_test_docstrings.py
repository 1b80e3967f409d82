"""Every test says in a one-line docstring the behaviour it checks.

A failing test's name and its first docstring line are what a reader sees first; a
test without one leaves them to reverse-engineer the assertions.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"


def undocumented(source: str, filename: str = "<test>") -> list[tuple[int, str]]:
    """(line, name) of each test function without a docstring, or whose docstring's first line is empty."""
    found = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.name.startswith("test"):
            continue
        doc = ast.get_docstring(node, clean=False)
        if doc is None or not doc.split("\n", 1)[0].strip():
            found.append((node.lineno, node.name))
    return sorted(found)


def test_every_test_has_a_one_line_docstring_saying_what_it_checks() -> None:
    """Every test function under tests/ has a docstring whose first line is not empty."""
    offenders = [
        f"{path.relative_to(ROOT)}:{line} {name}"
        for path in sorted(TESTS.rglob("test_*.py"))
        for line, name in undocumented(path.read_text(encoding="utf-8"), str(path))
    ]
    assert offenders == [], f"{len(offenders)} test(s) without a one-line docstring:\n" + "\n".join(offenders)


def test_missing_and_blank_first_line_docstrings_are_reported() -> None:
    """Tests without a docstring or with a blank first line are reported; documented ones and helpers are not."""
    source = (
        "def helper():\n"
        "    pass\n"
        "def test_documented():\n"
        '    """Says what it checks."""\n'
        "def test_bare():\n"
        "    assert True\n"
        "async def test_async_bare():\n"
        "    assert True\n"
        "def test_blank_first_line():\n"
        '    """\n'
        '    Says it on the second line."""\n'
        "class TestGroup:\n"
        "    def test_method(self):\n"
        "        '''A method with one.'''\n"
        "    def test_method_bare(self):\n"
        "        x = 'not a docstring'\n"
    )
    assert undocumented(source) == [(5, "test_bare"), (7, "test_async_bare"), (9, "test_blank_first_line"),
                                    (15, "test_method_bare")]
