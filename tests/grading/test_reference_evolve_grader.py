"""Grader B (``reference_evolve``): the reference's evolving grader, §1.6 of the spec.

Same as grader A except that the last ``<answer>`` block is read right after the
boxed search and before the GSM8K pattern. The rows are the spec's verified table
(evolving column) plus cases that pin where the answer block sits in the order.
"""

from __future__ import annotations

import pytest

from handlers.grading.dispatch import grade_answer
from handlers.grading.reference import (
    extracted_answer,
    last_answer_block,
    reference_evolve_score,
    reference_extract_answer,
)

# (reply text, ground truth, score under B, extracted) - spec §1.6 verified table, evolving column.
VERIFIED_TABLE = [
    ("so \\boxed{3} and \\boxed{4}", "4", 0.0, "3} and \\boxed{4"),
    ("\\boxed{3}\n\\boxed{4}", "4", 1.0, "4"),
    ("<answer>\\boxed{\\frac{1}{2}}</answer>", "0.5", 0.0, "\\frac{1}{2}"),
    ("\\boxed{\\dfrac12}", "\\frac{1}{2}", 1.0, "\\dfrac12"),
    ("\\boxed{50\\%}", "50", 1.0, "50\\%"),
    ("\\boxed{(1,2)}", "(2,1)", 1.0, "(1,2)"),
    ("\\boxed{2\\pm\\sqrt{3}}", "2+\\sqrt{3}, 2-\\sqrt{3}", 1.0, "2\\pm\\sqrt{3}"),
    ("<answer>42</answer>", "42", 1.0, "42"),
    ("The final answer is 42", "42", 1.0, "42"),
    ("#### 1,234", "1234", 1.0, "1234"),
    ("\\boxed{x^2+2x+1}", "(x+1)^2", 0.0, "x^2+2x+1"),
    ("\\boxed{104.00001}", "104", 1.0, "104.00001"),
    ("\\boxed{10 degrees}", "10", 1.0, "10 degrees"),
]


@pytest.mark.parametrize(("text", "truth", "score", "extracted"), VERIFIED_TABLE)
def test_verified_table_rows_score_as_the_evolving_grader(text: str, truth: str, score: float, extracted: str) -> None:
    """Every verified example extracts and scores as the reference's evolving grader does."""
    assert reference_extract_answer(text, answer_tags=True) == extracted
    assert reference_evolve_score(text, truth) == score


def test_the_last_answer_block_wins_over_gsm8k_and_phrases() -> None:
    """The answer block comes after the boxed search and before '####' and 'The answer is'."""
    text = "<answer>7</answer>\nThe answer is 9\n#### 8\n<answer> 12 </answer>"
    assert reference_extract_answer(text, answer_tags=True) == "12"
    assert reference_extract_answer(text) == "8"  # grader A never reads answer blocks


def test_a_boxed_value_still_beats_the_answer_block() -> None:
    """The boxed search runs first, as in grader A."""
    assert reference_extract_answer("\\boxed{5}\n<answer>6</answer>", answer_tags=True) == "5"


def test_an_empty_answer_block_falls_through() -> None:
    """A blank block is no answer: extraction goes on to the next rule."""
    assert reference_extract_answer("<answer>  </answer>\n#### 3", answer_tags=True) == "3"


@pytest.mark.parametrize(
    ("text", "block"),
    [("<answer>a</answer><answer>b</answer>", "b"), ("<answer>a</answer><answer>open", "a"),
     ("</answer><answer>x", None), ("<answer>" * 10_000, None), ("", None)],
)
def test_last_answer_block_takes_complete_blocks_left_to_right(text: str, block: str | None) -> None:
    """Blocks are matched left to right like a non-greedy findall; unclosed ones are not blocks."""
    assert last_answer_block(text) == block


def test_the_dispatcher_grades_mode_reference_evolve_and_says_what_it_read() -> None:
    """grade_answer(mode='reference_evolve') scores with B and records the extracted answer."""
    grade = grade_answer("<think>hmm</think><answer>42</answer>", "42", "reference_evolve")
    assert (grade.score, grade.method, extracted_answer(grade.detail)) == (1.0, "reference_evolve", "42")
    assert grade_answer("<answer>42</answer>", "42", "reference").score == 0.0


@pytest.mark.parametrize("garbage", ["", "\x00", "<answer>" * 5000 + "}", "\\boxed{" * 2000, "🙂" * 1000])
def test_garbage_scores_zero_without_raising(garbage: str) -> None:
    """Any text grades to 0 (or 1 only with evidence) and never raises."""
    assert reference_evolve_score(garbage, "42") == 0.0
