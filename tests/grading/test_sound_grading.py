"""Issue 30: the classes of wrong answers the old normaliser graded correct now score 0.

Each row is one class from the issue's table (answers written by someone else, to be
wrong but look right); the generated attack on every class is tests/grading/test_grading_fuzz.py.
"""

from __future__ import annotations

import pytest

from handlers.grading import extract_final_answer, grade_answer
from handlers.grading.pipeline import grade_math

WRONG = [
    ("42\\text{ is incorrect}", "42", "the words deny the number"),
    ("42 \\mbox{ is not the answer}", "42", "the words deny the number"),
    ("12 squared", "12", "a word changes the value"),
    ("5 factorial", "5", "a word changes the value"),
    ("7\\text{ hundred}", "7", "a scale word is read, not dropped"),
    ("x \\not= 42", "42", "a negated relation is not its right-hand side"),
    ("x \\neq 42", "42", "a negated relation is not its right-hand side"),
    ("x \\not\\in \\{3, 4\\}", "\\{3,4\\}", "a negated membership is not the set"),
    ("x < 42", "42", "an inequality is not a value"),
    ("3 + 2\\mathrm{i}", "5", "the imaginary unit is read"),
    ("2\\mathrm{e}", "2", "Euler's number is read"),
    ("\\sqrt{2}\\,\\mathrm{i}", "\\sqrt{2}", "the imaginary unit is read"),
    ("3 \\quad 4", "7", "layout is not addition"),
    ("1\\qquad 5", "6", "layout is not addition"),
    ("4~2", "42", "layout is not concatenation"),
    ("4\\hspace{1em}2", "42", "layout is not concatenation"),
    ("4\\phantom{0}2", "42", "hidden text is not read"),
    ("4₂", "42", "a subscript is not a digit"),
    ("3.141593", "\\pi", "a decimal is not an irrational value"),
    ("0.333333", "\\frac{1}{3}", "a decimal is not a repeating value"),
    ("\\frac{100}{3}", "33.3", "a repeating value is not a decimal"),
    ("\\pi + 10^{-20}", "\\pi", "a tiny term is not chopped"),
    ("\\frac{\\pi}{6}^\\circ", "\\frac{\\pi}{6}", "degrees are converted, not dropped"),
    ("45\\text{ rad}", "45°", "radians are not degrees"),
    ("42\\%", "\\$42", "a percentage is not money"),
    ("€42", "\\$42", "different currencies differ"),
    ("42\\text{ cm}", "42\\text{ m}", "different units differ"),
    ("42...", "42", "an ellipsis is kept"),
    ("[0, \\infty]", "[0, \\infty)", "an interval closed at infinity is not read"),
    ("(2, 1)", "(1, 2)", "a tuple is ordered"),
    ("2y+3", "2x+3", "a renamed variable differs"),
    ("x = 4", "y = 4", "a renamed variable differs"),
]


@pytest.mark.parametrize(("answer", "gold", "why"), WRONG, ids=[row[0] for row in WRONG])
def test_a_wrong_answer_of_each_class_scores_zero(answer: str, gold: str, why: str) -> None:
    """A wrong answer of each known trap class scores zero."""
    grade = grade_math(answer, gold)
    assert grade.score == 0.0, f"{why}: {grade.detail}"


HIDDEN_OR_HEDGED = [
    "The answer is \\boxed{41} % \\boxed{42}",
    "\\iffalse \\boxed{42} \\fi The answer is \\boxed{41}",
    "\\phantom{\\boxed{42}} \\boxed{41}",
    "<!-- \\boxed{42} --> \\boxed{41}",
    "{\\color{white} \\boxed{42}} \\boxed{41}",
    '<span style="display:none">\\boxed{42}</span> \\boxed{41}',
    "\\boxed{41} \\quad (\\text{not } \\boxed{42})",
    "\\boxed{42} or maybe \\boxed{41}",
]


@pytest.mark.parametrize("reply", HIDDEN_OR_HEDGED)
def test_a_box_a_reader_never_sees_or_a_hedge_never_earns_the_reward(reply: str) -> None:
    """A box a reader would never see, or a hedge between answers, never earns the reward."""
    answer = extract_final_answer(reply)
    assert grade_answer(answer, "42").score == 0.0, answer


def test_the_same_answer_boxed_twice_is_not_a_hedge() -> None:
    """The same answer boxed twice in different forms is not a hedge and scores 1."""
    answer = extract_final_answer("So \\boxed{\\frac{1}{2}}, that is \\boxed{0.5}.")
    grade = grade_answer(answer, "\\frac12")
    assert grade.score == 1.0, grade.detail
    assert "2 boxed answers, all equal" in grade.detail


RIGHT = [
    ("30^\\circ", "\\frac{\\pi}{6}"),
    ("\\frac{\\pi}{4} \\text{ rad}", "45^\\circ"),
    ("1 \\text{ km}", "1000 \\text{ m}"),
    ("42 \\text{ apples}", "42"),
    ("\\$42", "42"),
    ("42\\%", "0.42"),
    ("x > 5", "(5, \\infty)"),
    ("-x > -1", "x < 1"),
    ("\\{1\\pm\\sqrt{5},-2\\}", "\\{-2, 1+\\sqrt5, 1-\\sqrt5\\}"),
    ("137 \\frac{1}{2}", "\\frac{275}{2}"),
    ("2\\sqrt{5}", "\\sqrt{20}"),
]


@pytest.mark.parametrize(("answer", "gold"), RIGHT)
def test_units_angles_relations_and_forms_are_read_for_what_they_mean(answer: str, gold: str) -> None:
    """Units, angles, relations and alternative forms are graded by what they mean."""
    grade = grade_math(answer, gold)
    assert grade.score == 1.0, grade.detail


def test_the_detail_names_every_unit_constant_and_word_read() -> None:
    """The grade detail names every unit, constant and number word it read."""
    assert "i read as the imaginary unit" in grade_math("3 + 2\\mathrm{i}", "5").detail
    assert "'hundred' read as x100" in grade_math("7\\text{ hundred}", "700").detail
    assert "the answer's unit centimeter was read" in grade_math("42 \\text{ cm}", "42").detail
    assert "the word 'squared'" in grade_math("12 squared", "12").detail


def test_numeric_tolerance_is_an_explicit_opt_in() -> None:
    """Numeric closeness counts only when a numeric tolerance is explicitly given."""
    assert grade_math("3.1416", "\\pi").score == 0.0
    grade = grade_math("3.1416", "\\pi", numeric_tolerance=1e-4)
    assert grade.score == 1.0 and "numeric_tolerance" in grade.detail
