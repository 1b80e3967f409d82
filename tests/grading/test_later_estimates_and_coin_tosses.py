"""Later sentences that call the box an estimate, a coin toss or a random pick, or leave its check unticked.

Found by probing the rules after this stop's changes: ``This is a lower estimate.``, ``I'm 50/50 on this.``,
``This answer was generated randomly.``, ``- [ ] verified`` and ``The exact answer involves pi.`` after the box
all scored 1. Each now takes the box back; the ticked box and ordinary mentions keep it.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.grading.support import graded

BOX = "The answer is $\\boxed{42}$.\n\n"
TAKING_BACK = [
    "This is a {kind} {noun}.", "That is only a {kind} {noun}.", "Treat it as a {kind} {noun}.",
]
KINDS = ["lower", "upper", "rough", "crude", "loose", "conservative"]
NOUNS = ["estimate", "bound", "guess", "approximation"]
CHANCES = ["I'm 50/50 on this.", "Honestly it's 50 / 50.", "Fifty-fifty, really.", "It's a toss-up.",
           "A coin toss between this and 43.", "This answer was generated randomly.", "I guessed at random.",
           "The value was picked randomly.", "- [ ] verified", "- [ ] checked against the original", "\u2610 checked",
           "The exact answer involves pi.", "The true value contains a square root.",
           "The correct answer requires one more step."]


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(TAKING_BACK), st.sampled_from(KINDS), st.sampled_from(NOUNS))
def test_a_later_estimate_or_bound_takes_the_box_back(template: str, kind: str, noun: str) -> None:
    """``This is a lower estimate.`` after the box: the box is not the answer itself: 0."""
    later = template.format(kind=kind, noun=noun)
    assert graded(BOX + later) == 0.0, later


def test_a_later_coin_toss_random_pick_or_unticked_check_takes_the_box_back() -> None:
    """Chance, randomness, an unticked check or a true value with more in it: 0."""
    for later in CHANCES:
        assert graded(BOX + later) == 0.0, later


def test_a_ticked_check_and_plain_mentions_keep_the_box() -> None:
    """``- [x] verified`` and a check of the box keep it: 1."""
    for later in ["- [x] verified", "The answer was checked by substitution.",
                  "We checked it with Python."]:
        assert graded(BOX + later) == 1.0, later
