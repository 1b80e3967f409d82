"""The grading dispatcher and the math-verify mode (run in the test's main thread)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from handlers.grading import GRADING_MODES, grade_answer, grade_with_math_verify


@pytest.mark.parametrize(
    ("answer", "truth"),
    [
        ("\\frac{1}{2}", "0.5"),
        ("42", "42.0"),
        ("\\dfrac12", "1/2"),
        ("\\{1, 2\\}", "\\{2, 1\\}"),
        ("3, 5", "5, 3"),
        ("2\\sqrt{3}", "\\sqrt{12}"),
        ("x^2+2x+1", "(x+1)^2"),
        ("50\\%", "50"),
        ("1,234", "1234"),
        ("\\boxed{7}", "7"),
    ],
)
@pytest.mark.parametrize("mode", ["math", "math_verify"])
def test_math_modes_accept_equivalent_answers(answer: str, truth: str, mode: str) -> None:
    """Equivalent forms score 1 in the default mode (math) and in math-verify alone."""
    grade = grade_answer(answer, truth, mode)
    assert (grade.score, grade.method) == (1.0, mode)


def test_default_mode_is_apollos_math_grader() -> None:
    """Without a mode, answers go through apollo's math grader."""
    assert grade_answer("\\frac{1}{2}", "0.5").method == "math"


@pytest.mark.parametrize("mode", ["math", "math_verify"])
@pytest.mark.parametrize(("answer", "truth"), [("3", "4"), ("\\frac{1}{3}", "0.5"), ("x+1", "x")])
def test_math_modes_reject_wrong_answers(answer: str, truth: str, mode: str) -> None:
    """Different values score 0."""
    assert grade_answer(answer, truth, mode).score == 0.0


def test_unparseable_answers_compare_as_text() -> None:
    """When nothing parses, normalised text equality decides."""
    assert grade_with_math_verify("\\text{}", "\\text{}").detail.startswith("compared as text")


@pytest.mark.parametrize("mode", GRADING_MODES)
@pytest.mark.parametrize(
    "garbage", ["", None, "{", "}}}", "\\boxed{", "\u00e9\u00e8\u200b", "x" * 20_000, "\x00"]
)
def test_garbage_answers_score_zero_without_raising(garbage: str | None, mode: str) -> None:
    """Empty, missing, unbalanced, unicode and huge answers score 0 in every mode."""
    grade = grade_answer(garbage, "17", mode)
    assert grade.score == 0.0
    assert grade.method == mode


def test_reference_mode_grades_whole_replies_like_the_reference() -> None:
    """In reference mode the reply text goes through the reference extraction."""
    assert grade_answer("so \\boxed{104.00001}", "104", "reference").score == 1.0
    assert grade_answer("<answer>42</answer>", "42", "reference").score == 0.0


def test_exact_mode_only_trims_whitespace() -> None:
    """Exact mode is string equality after trimming."""
    assert grade_answer(" 42\n", "42", "exact").score == 1.0
    assert grade_answer("42.0", "42", "exact").score == 0.0


def test_unknown_mode_is_rejected() -> None:
    """A mode outside the known list raises ValueError naming the options."""
    with pytest.raises(ValueError, match="math_verify"):
        grade_answer("1", "1", "fuzzy")


def test_handler_modules_import_without_heavy_libraries() -> None:
    """Importing parsing, prompts and grading loads neither sympy nor math-verify."""
    code = (
        "import sys, handlers.episode.parsing, handlers.episode.prompts, handlers.grading;"
        "print(sorted(m for m in ('sympy', 'math_verify') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
