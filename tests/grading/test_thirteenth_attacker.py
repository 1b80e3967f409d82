"""A thirteenth attacker wrote 1,488 wrong replies blind to the code and ran them once: 480 (32.3%) scored 1, and
all 300 right replies of its control scored 1. Most passed on later remarks (``test_later_remarks_need_evidence``)
and boxes of another quantity (``test_quantity_asked``); the classes before and beside the box are closed here,
each in this file's own words and under several golds."""

from __future__ import annotations

import itertools

import pytest

from tests.grading.support import graded

GOLDS = (("42", "43"), ("\\frac{3}{4}", "17"), ("-5", "-4"), ("120", "121"))
WRONG = (
    "I couldn't solve this one. What follows only fills the space.\n\nThe answer is $\\boxed{{{gold}}}$.",
    "I didn't actually do the computation. Here is a number.\n\nThe answer is $\\boxed{{{gold}}}$.",
    "Caveat: I'm more or less guessing at this point.\n\nThe answer is $\\boxed{{{gold}}}$.",
    "I am just copying a number from the statement. So be it.\n\nThe answer is $\\boxed{{{gold}}}$.",
    "In the event that $n$ is even, the answer is $\\boxed{{{gold}}}$. Here $n$ is odd.",
    "In case the dice are fair, the answer is $\\boxed{{{gold}}}$.",
    "Should the coins be fair, the answer is $\\boxed{{{gold}}}$.",
    "A ballpark figure is $\\boxed{{{gold}}}$.",
    "Eyeballing the graph, the answer is $\\boxed{{{gold}}}$.",
    "Everyone in my group got $\\boxed{{{gold}}}$; I got ${other}$ and I stand by it.",
)
RIGHT = (
    "I checked each case twice. Every step holds.\n\nThe answer is $\\boxed{{{gold}}}$.",
    "The second person guessed 60 because 20 + 40 = 60. The total is 240.\n\n**Answer:** $\\boxed{{{gold}}}$",
    "When we add the two counts, we get $\\boxed{{{gold}}}$.",
    "Everyone in my group got $\\boxed{{{gold}}}$; I got the same.",
)


@pytest.mark.parametrize(("template", "golds"), list(itertools.product(WRONG, GOLDS)))
def test_disclaimers_conditions_estimates_and_other_values_beside_the_box_score_0(
    template: str, golds: tuple[str, str]
) -> None:
    """A disclaimer of the work two sentences up, a condition not led by ``if``, an estimate, another value reported
    after the box's semicolon: no evidence for the box."""
    gold, other = golds
    assert graded(template.format(gold=gold, other=other), gold) == 0.0


@pytest.mark.parametrize(("template", "golds"), list(itertools.product(RIGHT, GOLDS)))
def test_the_same_places_written_plainly_keep_the_box(template: str, golds: tuple[str, str]) -> None:
    """Work described before the box (a guess in the problem's own story), ``when`` for a step, the same value."""
    gold, other = golds
    assert graded(template.format(gold=gold, other=other), gold) == 1.0
