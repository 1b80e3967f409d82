"""apollo's math grader: what each side is read as, the bounds, and bad input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.grading.pool import ProcessPoolGrader
from handlers.grading import grade_answer
from handlers.grading.pipeline import grade_math

ISSUE_TABLE = [
    ("42**2", "42", 0.0),
    ("7 - \\frac{1}{\\mathrm{e}}", "7", 0.0),
    ("2 500", "2500", 1.0),
    ("12\\,345", "12345", 1.0),
    ("6.02 \\times 10^{23}", "6.02e23", 1.0),
    ("1.6 \\cdot 10^{-19}", "1.6e-19", 1.0),
    ("\\frac{2}{3}", "2./3", 1.0),
    ("¾", "\\frac{3}{4}", 1.0),
    ("2√5", "2\\sqrt{5}", 1.0),
    ("(-∞, 3]", "(-\\infty, 3]", 1.0),
    ("\uff11\uff12", "12", 1.0),  # full-width digits
    ("-1 < x < 4", "(-1, 4)", 1.0),
    ("0 \\le x \\le 3", "x \\in [0, 3]", 1.0),
]

HUGE = [
    "10^{10^{10}}", "9**9**9", "1000000!", "2^{2^{2^{2^{2^{2}}}}}", "\\binom{100000}{50000}", "99^{99999999}",
    "(10^{100})!", "\\binom{10^{9}}{10^{8}}",
]

GARBAGE = {
    "empty": "",
    "spaces": "   \n\t",
    "one megabyte": "7" * (1 << 20),
    "binary": "4\x00\x01\x02\xff2",
    "nested empty boxes": "\\boxed{\\boxed{}}",
    "unbalanced open": "\\frac{1}{2",
    "unbalanced close": "\\boxed{42}}",
    "deep fractions": "\\frac{" * 300 + "1" + "}{2}" * 300,
    "deep brackets": "(" * 500 + "1" + ")" * 500,
    "long sum": "+".join(["x"] * 3000),
    "lone backslash": "\\",
    "control only": "\x1b[31m",
    "long run of spaces": "1" + " " * 3990 + "ab",
    "long inequality chain": "1<" * 1990,
    "long power chain": "2^" * 1990 + "2",
}


@pytest.mark.parametrize(("answer", "truth", "score"), ISSUE_TABLE)
def test_every_row_of_the_issue_table_is_graded_right(answer: str, truth: str, score: float) -> None:
    """The wrong grades found in issue 21 are fixed, both ways round."""
    assert grade_math(answer, truth).score == score
    assert grade_math(truth, answer).score == score


def test_detail_says_what_each_side_was_read_as() -> None:
    """A user sees both readings and how they compared."""
    detail = grade_math("\\frac{5000}{2}", "2 500").detail
    assert detail == (
        "answer read as 2500 (number); ground truth read as 2500 (number) [digit grouping removed]; equal: exact"
    )
    detail = grade_math("0.50", "\\frac{1}{2}").detail
    assert detail == "answer read as 0.50 (number); ground truth read as 1/2 (number); equal: exact"


def test_detail_names_a_partial_reading_as_unequal() -> None:
    """The whole answer is read, so the extra '- 1/e' shows in the detail."""
    detail = grade_math("7 - \\frac{1}{\\mathrm{e}}", "7").detail
    assert "7 - exp(-1)" in detail and "e read as Euler's number" in detail and detail.endswith("not equal")


@pytest.mark.parametrize("huge", HUGE)
def test_numbers_too_large_to_evaluate_are_refused_before_sympy(huge: str) -> None:
    """Towers, huge powers, factorials and binomials score 0, refused with the reason."""
    grade = grade_math(huge, "1")
    assert grade.score == 0.0
    assert "the answer is" in grade.detail
    assert any(word in grade.detail for word in ("digits", "too large", "terms"))


def test_tiny_powers_are_not_mistaken_for_huge_ones() -> None:
    """A root of high degree or a negative power is small, so it is graded."""
    assert grade_math("\\sqrt[10^{9}]{2}", "1").detail.endswith("not equal")
    assert grade_math("\\frac{1}{2}^{100}", "2^{-100}").score == 1.0


def test_latex_that_is_slow_to_parse_still_gets_a_grade() -> None:
    """Deeply nested functions make the LaTeX parser crawl; reading stops after 2 s at most
    (how long depends on the machine, so only the grade is checked)."""
    grade = grade_math("\\sin(\\cos(\\tan(" * 8 + "x" + ")))" * 8, "1")
    assert grade.score == 0.0
    assert grade.detail.startswith("answer read as")


def test_a_huge_ground_truth_is_not_graded() -> None:
    """A ground truth that cannot be evaluated gives 0 and says the ground truth is at fault."""
    assert "not graded: the ground truth is" in grade_math("1", "9^{9^{9}}").detail


@pytest.mark.parametrize("name", sorted(GARBAGE))
def test_garbage_answers_score_zero_with_a_reason(name: str) -> None:
    """Empty, huge, binary, nested or unbalanced answers score 0 and the detail says why."""
    grade = grade_answer(GARBAGE[name], "42")
    assert grade.score == 0.0
    assert grade.detail


@pytest.mark.parametrize("name", sorted(GARBAGE))
def test_garbage_ground_truths_score_zero_with_a_reason(name: str) -> None:
    """The same inputs as ground truth score 0 too, never raising."""
    grade = grade_math("42", GARBAGE[name])
    assert grade.score == 0.0
    assert "ground truth" in grade.detail


def test_a_partial_answer_never_matches_its_prefix() -> None:
    """Text after a value that equals the gold makes the answer wrong."""
    for answer in ("42 + 1", "42 \\cdot 2", "42!", "42^{2}", "42, 43", "42 or 43"):
        assert grade_math(answer, "42").score == 0.0, answer


@pytest.mark.parametrize(
    ("raw", "same_as"),
    [
        ("\uff11\uff12", "12"),
        ("1\u200b2", "12"),
        ("10{,}080", "10080"),
        ("1,000", "1000"),
        ("1,2", "1, 2"),
        ("6.02e23", "6.02\\times 10^{23}"),
        ("2./3", "\\frac{2}{3}"),
        ("x \\ge 5", "[5, \\infty)"),
        ("\\boxed{\\boxed{3}}", "3"),
        ("125 miles", "125"),
        ("7 3/4", "\\frac{31}{4}"),
    ],
)
def test_the_forms_a_model_writes_read_as_their_plain_latex(raw: str, same_as: str) -> None:
    """Unicode, grouping, Python syntax, inequalities, boxes and units are read for what they mean."""
    grade = grade_math(raw, same_as)
    assert grade.score == 1.0, grade.detail


@pytest.fixture(scope="module")
def pool():
    grader = ProcessPoolGrader(workers=1)
    grader.start()
    yield grader
    grader.close()


async def test_pool_grades_with_the_math_mode(pool: ProcessPoolGrader) -> None:
    """The engine's process pool accepts the new mode and reads whole answers there."""
    assert (await pool.grade("2 500", "2500", "math")).score == 1.0
    assert (await pool.grade("42**2", "42", "math")).score == 0.0


@pytest.mark.parametrize("name", sorted(GARBAGE))
async def test_pool_scores_garbage_zero_and_keeps_serving(pool: ProcessPoolGrader, name: str) -> None:
    """Bad input through the pool scores 0 with a reason, and the next grade still works."""
    grade = await pool.grade(GARBAGE[name], "42", "math")
    assert grade.score == 0.0 and grade.detail
    assert (await pool.grade("\\frac{1}{2}", "0.5", "math")).score == 1.0


@pytest.mark.parametrize("huge", HUGE)
async def test_pool_refuses_huge_numbers_without_a_timeout(pool: ProcessPoolGrader, huge: str) -> None:
    """Huge numbers are refused inside the worker, not killed by the pool's deadline."""
    grade = await pool.grade(huge, "1", "math")
    assert (grade.score, grade.method) == (0.0, "math")


LATEX_PIECES = st.sampled_from(
    [*"0123456789+-*/^=<>(),.[]{}|!% xei",
       "\\frac", "\\sqrt", "\\boxed{", "\\text{", "\\left(", "\\right)", "\\pi", "\\infty", "\\le", "\\{", "\\}",
       "**", "\\cdot", "½", "√", "∞", "\\begin{pmatrix}", "\\end{pmatrix}", "&", "\\\\", "_", "\\%", "$", "\\in",
       "\\pm", "\\binom{", "\\,", "{,}", "10^{", "9**"]
)
"""Pieces of LaTeX and Python syntax that random answers are built from."""
LATEXISH = st.lists(LATEX_PIECES, max_size=30).map("".join)


@settings(max_examples=150, deadline=None)
@given(answer=st.one_of(st.text(max_size=60), LATEXISH), truth=st.one_of(st.text(max_size=30), LATEXISH))
def test_any_text_gets_a_grade_and_never_an_exception(answer: str, truth: str) -> None:
    """Arbitrary text on either side yields a 0 or 1 with a detail, never an exception."""
    grade = grade_math(answer, truth)
    assert grade.score in (0.0, 1.0) and grade.detail
