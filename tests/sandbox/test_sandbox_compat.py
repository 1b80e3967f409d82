"""Code that models really write behaves as in the reference tool, minus its bugs."""

from __future__ import annotations

import pytest

from engine.sandbox import PythonSandbox

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def run_ok(box: PythonSandbox, code: str) -> str:
    outcome = await box.run(code)
    assert outcome.ok, outcome
    return outcome.stdout


async def test_sympy_solve_prints_solutions(sandbox: PythonSandbox) -> None:
    """A typical sympy snippet solves and prints."""
    code = "from sympy import symbols, solve\nx = symbols('x')\nprint(solve(x**2 - 5*x + 6, x))"
    assert await run_ok(sandbox, code) == "[2, 3]\n"


async def test_numpy_and_scipy_are_importable(sandbox: PythonSandbox) -> None:
    """numpy and scipy (including lazily imported submodules) work."""
    code = (
        "import numpy as np\nfrom scipy import optimize, integrate\n"
        "print(int(np.arange(10).sum()))\n"
        "print(round(optimize.brentq(lambda t: t**2 - 2, 0, 2), 6))\n"
        "print(round(integrate.quad(lambda t: t, 0, 1)[0], 6))\n"
    )
    assert await run_ok(sandbox, code) == "45\n1.414214\n0.5\n"


async def test_fractions_and_preimported_modules(sandbox: PythonSandbox) -> None:
    """The reference's pre-imported names are available without imports."""
    code = (
        "from fractions import Fraction\n"
        "print(Fraction(1, 3) + Fraction(1, 6))\n"
        "print(sqrt(16), gcd(12, 18), math.comb(5, 2))\n"
        "print(Counter('aab')['a'], list(permutations([1, 2])))\n"
        "print(json.dumps({'a': 1}), List)\n"
    )
    out = await run_ok(sandbox, code)
    assert out.splitlines() == ["1/2", "4.0 6 10", "2 [(1, 2), (2, 1)]", '{"a": 1} typing.List']


async def test_trailing_expression_value_is_printed(sandbox: PythonSandbox) -> None:
    """A final expression statement prints its value, like the reference."""
    assert await run_ok(sandbox, "x = 21\nx * 2") == "42\n"


async def test_trailing_call_returning_none_prints_nothing_extra(sandbox: PythonSandbox) -> None:
    """main() at the end prints what main prints, not an extra None."""
    code = "def main():\n    print('hi')\nmain()"
    assert await run_ok(sandbox, code) == "hi\n"


async def test_indented_trailing_expression_stays_valid(sandbox: PythonSandbox) -> None:
    """An indented last line (the reference broke these) runs unchanged."""
    code = "def main():\n    print('answer', 7)\n\nif __name__ == '__main__':\n    main()"
    assert await run_ok(sandbox, code) == "answer 7\n"
    assert await run_ok(sandbox, "for i in range(2):\n    print(i)\n    i * 10") == "0\n1\n"


async def test_trailing_assignment_is_printed(sandbox: PythonSandbox) -> None:
    """A final simple assignment prints the assigned value, as the reference did."""
    assert await run_ok(sandbox, "import math\nresult = math.factorial(5)") == "120\n"


async def test_syntax_error_reports_the_users_line(sandbox: PythonSandbox) -> None:
    """A real syntax error is a SyntaxError with the user's line number."""
    outcome = await sandbox.run("a = 1\nb = 2\nc = (a +\nprint(c)\n")
    assert not outcome.ok
    assert "SyntaxError" in outcome.stderr
    assert "line 3" in outcome.stderr
    assert "Forbidden" not in outcome.stderr


async def test_an_error_only_the_compiler_finds_reports_the_users_line(sandbox: PythonSandbox) -> None:
    """'return' outside a function parses, but is still reported as the user's syntax error."""
    outcome = await sandbox.run("x = 6 * 7\nreturn x\n")
    assert not outcome.ok
    assert "SyntaxError" in outcome.stderr and "'return' outside function" in outcome.stderr
    assert "line 2" in outcome.stderr


async def test_runtime_traceback_is_trimmed_to_user_code(sandbox: PythonSandbox) -> None:
    """Tracebacks show the user's lines, no wrapper frames or temp-file names."""
    code = "def f(d):\n    return 1 / d\n\nprint(f(0))\n"
    outcome = await sandbox.run(code)
    assert outcome.returncode == 1
    lines = outcome.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert 'File "<string>", line 4, in <module>' in outcome.stderr
    assert 'File "<string>", line 2, in f' in outcome.stderr
    assert lines[-1] == "ZeroDivisionError: division by zero"
    assert "runner.py" not in outcome.stderr and "temp_code_" not in outcome.stderr


async def test_fstring_with_literal_newline_is_repaired(sandbox: PythonSandbox) -> None:
    """A literal newline inside an f-string becomes an escape (reference fix)."""
    code = 'x = 3\nprint(f"value:\n{x}")\n'
    assert await run_ok(sandbox, code) == "value:\n3\n"


async def test_repaired_code_keeps_user_line_numbers(sandbox: PythonSandbox) -> None:
    """After the f-string repair, errors still point at the user's lines."""
    code = 'x = 3\nprint(f"a\nb{x}")\ny = 1 / 0\n'
    outcome = await sandbox.run(code)
    assert "line 4" in outcome.stderr
    assert "y = 1 / 0" in outcome.stderr


async def test_stray_indentation_is_repaired(sandbox: PythonSandbox) -> None:
    """Over-indented lines after a plain statement are dedented (reference fix)."""
    assert await run_ok(sandbox, "x = 1\n    y = 2\nprint(x + y)") == "3\n"


async def test_markdown_fences_are_ignored(sandbox: PythonSandbox) -> None:
    """Code wrapped in a markdown fence still runs."""
    assert await run_ok(sandbox, "```python\nprint('fenced')\n```") == "fenced\n"


async def test_stderr_is_captured_on_success(sandbox: PythonSandbox) -> None:
    """Warnings printed to stderr come back even when the code succeeds."""
    outcome = await sandbox.run("import sys\nprint('out')\nprint('warn', file=sys.stderr)")
    assert outcome.ok
    assert (outcome.stdout, outcome.stderr) == ("out\n", "warn\n")


async def test_sys_exit_codes_follow_python(sandbox: PythonSandbox) -> None:
    """sys.exit(0) succeeds, sys.exit(3) fails with return code 3."""
    assert (await sandbox.run("import sys\nprint('a')\nsys.exit(0)")).ok
    failed = await sandbox.run("import sys\nsys.exit(3)")
    assert (failed.returncode, failed.run_status) == (3, "Error")


async def test_random_numbers_differ_between_calls(sandbox: PythonSandbox) -> None:
    """Forked workers do not share the parent's random state."""
    code = "import random, numpy\nprint(random.random(), numpy.random.rand())"
    first, second = await run_ok(sandbox, code), await run_ok(sandbox, code)
    assert first != second


async def test_input_reads_end_of_file(sandbox: PythonSandbox) -> None:
    """input() does not hang: stdin is empty."""
    outcome = await sandbox.run("input()")
    assert "EOFError" in outcome.stderr


async def test_deep_recursion_works_like_the_reference(sandbox: PythonSandbox) -> None:
    """The reference's raised recursion limit is kept for pure-Python recursion."""
    code = "def d(n):\n    return 0 if n == 0 else 1 + d(n - 1)\nprint(d(20000))"
    assert await run_ok(sandbox, code) == "20000\n"
