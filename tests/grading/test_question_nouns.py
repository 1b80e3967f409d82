"""A count may name what the question counts: ``22 \\text{ chips}`` when it asks how many chips.

Without the question the grader knows only a closed list of nouns that name what is counted (``apples``,
``students``), so right answers such as ``22 \\text{ chips}`` or ``300 \\text{ lemons}`` scored 0 (about 2% of an
unseen set of right answers and replies). An episode's grading and a regrade now hand the grader the problem's
question (``handlers.ports.grading_metadata``); the nouns it counts (after ``how many`` or ``the number of``, up
to a word that ends the noun phrase) are counted nouns. Positive evidence only: a word the question merely
mentions is not one, a multiplier never is (``how many pairs of socks`` counts pairs, so ``22 socks`` is not its
answer, and ``22 pairs`` is refused too), and with the question known the closed list is not used.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handlers.grading import grade_answer
from handlers.grading.builtin import math_grader
from handlers.ports import QUESTION_KEY, grading_metadata

CHIPS = "There are 110 chips. If 5 friends share them equally, how many chips does each get?"


@pytest.mark.parametrize(("answer", "question", "score"), [
    ("22 \\text{ chips}", CHIPS, 1.0),
    ("22 \\text{ chip}", CHIPS, 1.0),
    ("22 \\text{ chips}", None, 0.0),
    ("22 \\text{ friends}", CHIPS, 0.0),
    ("22 \\text{ chips wrong}", CHIPS, 0.0),
    ("22 \\text{ badges}", "Find the total number of badges Tom has.", 1.0),
    ("22 \\text{ ways}", "In how many ways can we seat them?", 1.0),
    ("22 \\text{ socks}", "How many pairs of socks are there?", 0.0),
    ("22 \\text{ pairs}", "How many pairs of socks are there?", 0.0),
    ("22 \\text{ she}", "How many apples does she have?", 0.0),
    ("22 \\text{ apples}", "How many apples does she have?", 1.0),
    ("22 \\text{ apples}", "What is x?", 0.0),
    ("22 \\text{ times}", "How many times does it ring?", 0.0),
    ("22 \\text{ thousand apples}", "How many apples are there?", 0.0),
    ("22 \\text{ cm}", "What is the length?", 1.0),
])
def test_a_count_may_name_only_what_the_question_counts(answer: str, question: str | None, score: float) -> None:
    """The asked noun after a number is read as a count; other words, multipliers and mere mentions are not."""
    assert grade_answer(answer, "22", question=question).score == score


def test_the_question_travels_in_the_graders_metadata() -> None:
    """grading_metadata puts the question beside the problem's metadata, which the math grader reads."""
    metadata = grading_metadata(CHIPS, {"level": 3})
    assert metadata == {"level": 3, QUESTION_KEY: CHIPS}
    assert math_grader("22 \\text{ chips}", "22", metadata).score == 1.0
    assert grading_metadata(None, {"level": 3}) == {"level": 3}


nouns = st.sampled_from(["lemons", "badges", "vines", "jewels", "sunflowers", "raspberries", "bookcases", "novels"])
multipliers = st.sampled_from(["pairs", "dozens", "dozen", "couples", "hundreds", "halves", "thirds", "scores"])


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=1, max_value=10**6), nouns, multipliers)
def test_generated_questions_name_their_counted_noun_and_never_a_multiplier(value: int, noun: str,
                                                                            multiplier: str) -> None:
    """``how many NOUN``: the noun counts; ``how many MULTIPLIER of NOUN``: neither does."""
    assert grade_answer(f"{value} \\text{{ {noun}}}", str(value), question=f"How many {noun} are left?").score == 1
    asked = f"How many {multiplier} of {noun} are there?"
    assert grade_answer(f"{value} \\text{{ {noun}}}", str(value), question=asked).score == 0
    assert grade_answer(f"{value} \\text{{ {multiplier}}}", str(value), question=asked).score == 0


@pytest.mark.parametrize("question", [42, {"text": "How many chips?"}, ["How many chips?"], b"How many chips?", ""])
def test_a_question_that_is_not_text_names_nothing_and_grades_as_without_one(question: object) -> None:
    """Metadata whose question is not a string (a dataset's own field) neither fails nor names a counted noun."""
    assert math_grader("22 \\text{ chips}", "22", {QUESTION_KEY: question}).score == 0.0
    assert math_grader("22 \\text{ apples}", "22", {QUESTION_KEY: question}).score == 1.0
    assert math_grader("22", "22", {QUESTION_KEY: question}).score == 1.0
