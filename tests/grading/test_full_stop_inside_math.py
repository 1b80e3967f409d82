"""A line whose last formula ends on a full stop (``... then $f(3) = 8.$``) ends its sentence, as a stop outside does.

A third writer's right replies lost their box when the paragraph before it ended that way and held an ``if`` or a
``not``: the line was read as running on into the box's sentence (``Thus, if $f(-3) = 2,$ then $f(3) = 8.$`` over
``So the answer is $\\boxed{8}$.``), and the box was read as conditioned. A line that stops short of its value
(``The answer is not`` or ``then $f(3) =$`` over the box) still runs on, and still refuses.
"""

from __future__ import annotations

import itertools

import pytest

from tests.grading.support import graded

CLOSED_FORMULAS = ["${} = 8.$", "$$x = {}.$$", "\\[x = {}.\\]", "\\(x = {}.\\)", "$x = {}.$ ", "**$x = {}.$**"]
"""A formula that ends on a full stop, inside its delimiters, in each way of writing math."""
LEADS = ["Thus, if $f(-3) = 2,$ then", "If $x$ were odd, we would get", "Since $n$ is not prime,",
         "Suppose the coin is fair; then", "We never divide by zero, so"]
ANNOUNCEMENTS = ["So the answer is $\\boxed{8}$.", "Respuesta: $\\boxed{8}$", "\\[\\boxed{8}\\]",
                 "La r\u00e9ponse finale est donc $\\boxed{8}$."]
OPEN_LINES = ["The answer is not", "Thus, if $f(-3) = 2,$ then $f(3) =$", "It is not:", "Either $9$ or",
              "If $n$ is odd, the answer is", "The answer is not $9$ but rather"]
"""Lines that stop before their value, so the box below finishes them."""


@pytest.mark.parametrize(("lead", "formula", "announcement"),
                         list(itertools.product(LEADS, CLOSED_FORMULAS, ANNOUNCEMENTS)))
def test_a_full_stop_inside_the_last_formula_of_a_line_ends_that_sentence(lead: str, formula: str,
                                                                             announcement: str) -> None:
    """The paragraph before the box is a finished sentence, so its ``if`` or ``not`` says nothing of the box."""
    reply = f"{lead} {formula.format(8)}\n\n{announcement}"
    assert graded(reply, "8") == 1.0, reply


BOXES_ON_THEIR_OWN = ["\\[\\boxed{8}\\]", "$\\boxed{8}$"]


@pytest.mark.parametrize(("line", "announcement"), list(itertools.product(OPEN_LINES, BOXES_ON_THEIR_OWN)))
def test_a_line_that_stops_before_its_value_still_runs_on_into_the_box(line: str, announcement: str) -> None:
    """``The answer is not`` over a box denies the box: no full stop closed the line."""
    assert graded(f"{line}\n\n{announcement}", "8") == 0.0


@pytest.mark.parametrize("formula", CLOSED_FORMULAS)
def test_a_finished_line_that_states_another_value_as_the_answer_still_refuses(formula: str) -> None:
    """Ending the line does not make two answers one: ``The answer is 9.`` then a box of 8 is still a hedge."""
    reply = f"The final answer is {formula.format(9)}\n\nThe final answer is $\\boxed{{8}}$. Actually it is $9$."
    assert graded(reply, "8") == 0.0


FRAMING_BEFORE = ["The answer is {}", "I am not sure about this: {}", "Maybe {}", "The following is wrong, since {}",
                  "Not the answer: {}", "If $n$ is odd, {}"]
"""Sentences right before the box's that deny, doubt, condition it or give another answer."""


@pytest.mark.parametrize(("framing", "formula"), list(itertools.product(FRAMING_BEFORE, CLOSED_FORMULAS[1:])))
def test_a_sentence_before_the_box_that_ends_inside_its_formula_is_still_read(framing: str, formula: str) -> None:
    """``The answer is $9.$`` over ``The answer is $\\boxed{8}$`` is two answers: the stop inside the formula
    once hid the whole sentence before the box (a single ``$`` after it read as the text's end)."""
    value = "9" if framing.startswith("The answer") else "8"
    reply = f"{framing.format(formula.format(value))}\n\nThe answer is $\\boxed{{8}}$."
    assert graded(reply, "8") == 0.0, reply
