"""A later sentence that says the answer is arithmetic is read for the value it computes.

The eighth attacker's ``\\boxed{42}. It's 43 times 1.`` scored 1: its numbers are operands, so the rules that look
for another number after the box let it pass, yet a reader computes 43. Now such a sentence computes a second
value unless it computes the box's own (``That is 6 times 7.``).
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from handlers.grading.spoken_arithmetic import plain_number, spoken_value
from tests.grading.support import graded

OPERATIONS = {
    "times": lambda a, b: a * b, "multiplied by": lambda a, b: a * b, "$\\times$": lambda a, b: a * b,
    "plus": lambda a, b: a + b, "+": lambda a, b: a + b, "minus": lambda a, b: a - b,
    "divided by": lambda a, b: Fraction(a, b), "over": lambda a, b: Fraction(a, b),
}
SUBJECTS = ["It's", "It is", "That is", "That's", "This equals", "So it is", "Which is", "The answer is just"]


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 400), st.integers(1, 60), st.sampled_from(sorted(OPERATIONS)), st.sampled_from(SUBJECTS),
       st.integers(-5, 500))
def test_a_later_sum_is_read_for_its_value(a: int, b: int, operation: str, subject: str, box: int) -> None:
    """``\\boxed{42}. It's 43 times 1.``: 0; ``\\boxed{42}. That is 6 times 7.``: 1; whatever the numbers."""
    value = OPERATIONS[operation](a, b)
    reply = f"The answer is $\\boxed{{{box}}}$. {subject} {a} {operation} {b}."
    assert graded(reply, gold=str(box)) == (1.0 if value == box else 0.0), reply


def test_a_sum_of_other_quantities_is_not_judged() -> None:
    """``It is 6 times the radius.`` computes nothing: the box keeps its score."""
    assert graded("The answer is $\\boxed{42}$. It is 6 times the radius.") == 1.0


def test_spoken_value_reads_only_arithmetic_on_numbers() -> None:
    """Words and signs are read; a lone number, other words or huge powers give no value."""
    assert spoken_value("43 times 1") == 43
    assert spoken_value("$84 \\div 2$") == 42
    assert spoken_value("7 squared") == 49
    assert spoken_value("1,000 minus 958") == 42
    assert spoken_value("43") is None
    assert spoken_value("6 times the radius") is None
    assert spoken_value("2^1000000") is None
    assert spoken_value("((((((((9^64)^64)^64)^64)^64)^64)^64)^64)") is None
    assert spoken_value("1 divided by 0") is None
    assert spoken_value("__import__('os')") is None


def test_plain_number_reads_numbers_and_fractions_only() -> None:
    """A plain number or fraction has a value; an expression or a name does not."""
    assert plain_number("42") == 42
    assert plain_number("$-0.5$") == Fraction(-1, 2)
    assert plain_number("\\frac{3}{4}") == Fraction(3, 4)
    assert plain_number("1,000") == 1000
    assert plain_number("x = 42") is None
    assert plain_number("\\frac{1}{0}") is None
