"""Nothing outside tests/ imports from it: shared fakes live in engine/testing/.

Benchmarks, examples and plugins run from a checkout without the test suite, and the
package must never need it.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTSIDE_TESTS = ("bench", "examples", "events", "handlers", "replay", "engine")


def imports_of_tests(source: str) -> list[int]:
    """Lines that import the ``tests`` package (at any depth of the file)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        else:
            continue
        if any(name == "tests" or name.startswith("tests.") for name in names):
            lines.append(node.lineno)
    return lines


def test_no_benchmark_example_or_package_module_imports_tests() -> None:
    """No benchmark, example or package module imports from tests."""
    offenders = [
        f"{path.relative_to(ROOT)}:{line}"
        for folder in OUTSIDE_TESTS
        for path in sorted((ROOT / folder).rglob("*.py"))
        for line in imports_of_tests(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_an_import_of_tests_is_found_wherever_it_sits() -> None:
    """An import of tests is found at module or function level, but a look-alike name is not."""
    source = (
        "import tests.support.cluster\n"
        "from testsuite import x\n"
        "def f():\n"
        "    from tests.support import cluster\n"
        "    import tests\n"
    )
    assert imports_of_tests(source) == [1, 4, 5]
