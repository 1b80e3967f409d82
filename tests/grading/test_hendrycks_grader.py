"""Grader C: the Hendrycks MATH is_equiv normaliser, by the facts of spec §1.6 "C"."""

from __future__ import annotations

import pytest

from handlers.grading import grade_answer
from handlers.grading.hendrycks import hendrycks_equal, hendrycks_strip
from handlers.grading.registry import get_grader

# hendrycks/math:modeling/math_equivalence_test.py, as (test_in, test_out, is_equiv).
HENDRYCKS_TESTS = [
    ("\\tfrac{1}{2} + \\frac1{72}", "\\\\frac{1}{2} + 2/3", False),
    ("10, 4, -2", "4, 10, -2", False),
    ("10, 4, 2", "4, 12, 2", False),
    ("\\tfrac{1}{2} +\\! \\frac1{72}", "\\\\dfrac{1}{2} +\\frac{1}{72}", True),
    ("10\\text{ units}", "10 ", True),
    ("10\\text{ units}", "100 ", False),
    ("10", "\\$10", True),
    ("\\left(x-2\\right)\\left(x+2\\right)", "(x-2)(x+2)", True),
    ("0.1, 4, 2", "4, .1, 2", False),
    ("0.1", ".1", True),
    ("10\\%", "10", True),
    ("10\\sqrt{3} + \\sqrt4", "10\\sqrt3 + \\sqrt{4}", True),
    ("\\frac34i", "\\frac{3}{4}i", True),
    ("\\tfrac83", "\\frac{8}{3}", True),
    ("5x - 7y + 11z + 4 = 0", "x + y - z + 2 = 0", False),
    ("1/2", "\\frac{1}{2}", True),
]


@pytest.mark.parametrize(("first", "second", "equal"), HENDRYCKS_TESTS)
def test_hendrycks_grader_passes_the_original_tests(first: str, second: str, equal: bool) -> None:
    """Each of the MATH release's is_equiv tests gives its expected verdict."""
    assert hendrycks_equal(first, second) is equal


@pytest.mark.parametrize(
    ("raw", "stripped"),
    [
        ("0.5", "\\frac{1}{2}"),
        ("k = 3", "3"),
        ("abc = 3", "abc=3"),
        ("\\frac12", "\\frac{1}{2}"),
        ("\\frac1{72}", "\\frac{1}{72}"),
        ("\\sqrt3", "\\sqrt{3}"),
        ("3/4", "\\frac{3}{4}"),
        ("03/4", "03/4"),
        ("90^\\circ", "90"),
        ("50\\%", "50"),
        (".25", "0.25"),
        ("5 \\text{ cm}", "5"),
        ("a\nb", "ab"),
    ],
)
def test_strip_follows_the_spec_steps(raw: str, stripped: str) -> None:
    """Fractions, roots, short assignments, degrees, percent, units and line breaks as listed."""
    assert hendrycks_strip(raw) == stripped


def test_no_numeric_tolerance_and_no_symbolic_step() -> None:
    """Only the literal 0.5 becomes a half; equal values in other forms differ."""
    assert not hendrycks_equal("0.50", "\\frac{1}{2}")
    assert not hendrycks_equal("x+1", "1+x")
    assert not hendrycks_equal("104.00001", "104")


def test_unreadable_units_fall_back_to_raw_equality() -> None:
    """Two '\\text{ ' units cannot be normalised: the raw strings are compared."""
    text = "1\\text{ a}\\text{ b}"
    assert hendrycks_equal(text, text)
    assert not hendrycks_equal(text, "1")


def test_hendrycks_is_a_registered_grader_mode() -> None:
    """Grader C is available by name, through the grading dispatcher."""
    assert get_grader("hendrycks").pooled
    grade = grade_answer("\\dfrac12", "0.5", "hendrycks")
    assert (grade.score, grade.method) == (1.0, "hendrycks")
    assert grade_answer("\\x00", "1", "hendrycks").score == 0.0
