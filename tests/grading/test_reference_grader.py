"""Reference-compatible grading reproduces the published grader, quirks included."""

from __future__ import annotations

import pytest

from handlers.grading import (
    reference_extract_answer,
    reference_math_equal,
    reference_score,
    reference_strip,
)

# (reply text, ground truth, score, extracted) - the verified table, training column.
GOLDEN = [
    ("so \\boxed{3} and \\boxed{4}", "4", 0.0, "3} and \\boxed{4"),
    ("\\boxed{3}\n\\boxed{4}", "4", 1.0, "4"),
    ("<answer>\\boxed{\\frac{1}{2}}</answer>", "0.5", 0.0, "\\frac{1}{2}"),
    ("\\boxed{\\dfrac12}", "\\frac{1}{2}", 1.0, "\\dfrac12"),
    ("\\boxed{50\\%}", "50", 1.0, "50\\%"),
    ("\\boxed{(1,2)}", "(2,1)", 1.0, "(1,2)"),
    ("\\boxed{2\\pm\\sqrt{3}}", "2+\\sqrt{3}, 2-\\sqrt{3}", 1.0, "2\\pm\\sqrt{3}"),
    ("<answer>42</answer>", "42", 0.0, "<answer>42</answer>"),
    ("The final answer is 42", "42", 1.0, "42"),
    ("#### 1,234", "1234", 1.0, "1234"),
    ("\\boxed{x^2+2x+1}", "(x+1)^2", 0.0, "x^2+2x+1"),
    ("\\boxed{104.00001}", "104", 1.0, "104.00001"),
    ("\\boxed{10 degrees}", "10", 1.0, "10 degrees"),
]


@pytest.mark.parametrize(("text", "truth", "score", "extracted"), GOLDEN)
def test_reference_table_rows_score_the_same(
    text: str, truth: str, score: float, extracted: str
) -> None:
    """Every verified example extracts and scores as the reference grader does."""
    assert reference_extract_answer(text) == extracted
    assert reference_score(text, truth) == score


def test_pm_rule_works_both_ways() -> None:
    """A plus-minus answer matches a two-item list on either side, in any order."""
    assert reference_math_equal("1-\\sqrt{2}; 1+\\sqrt{2}", "1\\pm\\sqrt{2}")
    assert not reference_math_equal("1\\pm\\sqrt{2}", "1+\\sqrt{2}")


def test_symbolic_step_uses_plain_sympy() -> None:
    """Plain expressions compare symbolically; LaTeX does not parse."""
    assert reference_math_equal("2*x+2", "2*(x+1)")
    assert reference_math_equal("sqrt(8)", "2*sqrt(2)")
    assert not reference_math_equal("\\frac{1}{2}", "0.5")


@pytest.mark.parametrize(
    "hostile",
    [
        "__import__('os').system('echo hi')",
        "exit()",
        "input()",
        "x.__class__",
        "open(1)",
        "(1).real",
        "lambda: 1",
        "a_b",
    ],
)
def test_code_like_answers_never_reach_sympy(hostile: str) -> None:
    """Strings that sympify would evaluate as code compare unequal instead."""
    assert not reference_math_equal(hostile, "1")


def test_extraction_fallbacks_follow_the_reference_order() -> None:
    """Box, then GSM8K marker, then an 'answer is' phrase, then the last line."""
    assert reference_extract_answer("#### -3.5\nThe answer is 9") == "-3.5"
    assert reference_extract_answer("line one\nThe answer is: 12 apples") == "12 apples"
    assert reference_extract_answer("first\nlast") == "last"
    assert reference_extract_answer(None) == ""
    assert reference_extract_answer("\\boxed{}\n#### 5") == "5"
    assert reference_extract_answer("\\fbox{6}") == "6"


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("\\text{ 5 } cm.", "5cm"),
        ("90^{\\circ}", "90"),
        ("\\left( 1, 2 \\right)", "(1,2)"),
        ("\\frac1b", "\\frac{1}{b}"),
        ("\\frac1{b}", "\\frac{1}{b}"),
        ("\\sqrt3", "\\sqrt{3}"),
        ("$\\tfrac{3}{4}$", "\\frac{3}{4}"),
        ("\\frac", "\\frac"),
        ("12 square inches", "12"),
    ],
)
def test_strip_normalises_like_the_reference(raw: str, normalised: str) -> None:
    """Normalisation removes units and LaTeX noise and expands shorthand."""
    assert reference_strip(raw) == normalised


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        "{",
        "}",
        "\\boxed{",
        "\u00e9\u200b",
        "9" * 5000,
        "nan",
        "inf",
        "1e999",
        "2^2^2^2",
        "\x00",
        "((((((((",
        ",,,;;;",
    ],
)
def test_garbage_compares_without_raising(garbage: str) -> None:
    """Odd answers produce a boolean and never raise."""
    assert reference_math_equal(garbage, "1") in (True, False)
    assert reference_score(garbage, "1") in (0.0, 1.0)


def test_none_is_never_equal() -> None:
    """A missing prediction or reference is wrong."""
    assert not reference_math_equal(None, "1")
    assert not reference_math_equal("1", None)
