"""A later sentence that says what the true value is takes the box back unless it restates it.

The seventh attacker's ``\\boxed{42}. The true value is irrational.`` scored 1 (60 of its remaining 178): the
sentence names no other number, so neither the later-answer rule nor the other-value rules read it. A sentence
whose subject is the true, actual, exact or correct value, answer or count now has to restate the box.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.grading.support import graded

BOXES = ["The answer is $\\boxed{42}$.", "Therefore, \\boxed{42}.", "The answer:\n$$\\boxed{42}$$\n"]
ADJECTIVES = ["true", "actual", "real", "exact", "correct", "right", "precise", "intended", "expected"]
NOUNS = ["value", "answer", "result", "number", "count", "total", "figure", "amount"]
COPULAS = ["is", "was", "would be", "should be", "must be", "equals", ":", "="]
NOT_THE_BOX = ["irrational", "larger", "somewhat smaller", "negative", "unknown", "not an integer", "43",
               "$\\sqrt{2}$", "different", "a fraction", "closer to 50", "forty-three"]
RESTATING = ["42", "$42$", "42, as checked", "42 (verified in Python)"]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(BOXES), st.sampled_from(["The", "But the", "Note that the", "Still, the"]),
       st.sampled_from(ADJECTIVES), st.sampled_from(NOUNS), st.sampled_from(COPULAS), st.sampled_from(NOT_THE_BOX))
def test_a_later_true_value_that_is_not_the_box_takes_it_back(
    box: str, opening: str, adjective: str, noun: str, copula: str, said: str,
) -> None:
    """``\\boxed{42}. The true value is irrational.``: the box was not the value: 0."""
    reply = f"{box} {opening} {adjective} {noun} {copula} {said}."
    assert graded(reply) == 0.0, reply


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(BOXES), st.sampled_from(ADJECTIVES), st.sampled_from(NOUNS),
       st.sampled_from(["is", "was", "equals"]), st.sampled_from(RESTATING))
def test_a_later_true_value_that_restates_the_box_keeps_it(
    box: str, adjective: str, noun: str, copula: str, said: str,
) -> None:
    """``\\boxed{42}. The exact value is 42.`` restates the box: 1."""
    reply = f"{box} The {adjective} {noun} {copula} {said}."
    assert graded(reply) == 1.0, reply


def test_sentences_that_only_mention_a_real_number_keep_the_box() -> None:
    """``The real number line`` or ``the expected result of 42`` name no true value of their own: 1."""
    for later in ["The real number line helps to see why.", "This matches the expected result of 42.",
                  "The exact steps are shown above."]:
        assert graded(f"So $\\boxed{{42}}$. {later}") == 1.0, later


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["The answer is", "Final answer:", "So the answer is", "Thus"]),
       st.sampled_from(["$\\boxed{42}$", "\\boxed{42}", "\\fbox{42}", "$\\boxed{ 42 }$"]),
       st.sampled_from([" ", "\n\n"]),
       st.sampled_from(["The answer is", "Final answer:", "Hence", "The true answer is", "The actual answer is",
                        "The real answer is", "The exact answer is", "The correct answer is"]))
def test_the_same_answer_boxed_twice_keeps_it(first: str, box: str, gap: str, second: str) -> None:
    """``The answer is \\boxed{42}. The answer is \\boxed{42}.``: a repeated box restates the answer, not
    another one (the sentence before the last box had read as stating an answer other than 42)."""
    reply = f"{first} {box}.{gap}{second} \\boxed{{42}}."
    assert graded(reply) == 1.0, reply


def test_a_different_answer_boxed_before_still_refuses() -> None:
    """``The answer is \\boxed{43}. The answer is \\boxed{42}.`` hedges between two values: 0."""
    assert graded("The answer is \\boxed{43}. The answer is \\boxed{42}.") == 0.0
