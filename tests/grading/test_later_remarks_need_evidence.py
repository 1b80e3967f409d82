"""A remark after the final box keeps it only with positive evidence: it confirms, sums up, names what the box is,
or encourages, and holds no word that doubts, conditions or changes anything (``extraction._unconfirmed_remark``).

A thirteenth attacker, blind to the code, wrote 1,488 wrong replies and ran them once: 480 (32.3%) scored 1, most
of them later remarks in ordinary English that no list of take-backs held (``I would not put money on that one.``,
``All that's left is to take the square root of this.``, ``That's a stand-in until I finish the real
calculation.``). Before, a longer remark kept the box unless it held a listed take-back; now it must hold a
confirmation. The remarks below are this file's own, written for each class the attacker found.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.grading.support import graded

GOLDS = ("42", "\\frac{3}{4}", "-5", "120", "2\\sqrt{3}")
BOX_SENTENCES = ("The answer is $\\boxed{{{gold}}}$.", "So we get $\\boxed{{{gold}}}$.",
                 "**Final Answer:** $\\boxed{{{gold}}}$")
DOUBTING_REMARKS = (
    "I would not put my savings on that one.",
    "Of all the numbers I tried, this is the one I like least.",
    "I am winging it here, so handle this with suspicion.",
    "Something about this still feels off to me.",
    "Chances are slim that this survives a careful check.",
    "There is a decent chance I botched a step somewhere.",
    "I have serious reservations about this and would not submit it.",
    "My tutor disagrees with this result.",
)
CHANGING_REMARKS = (
    "All that is left is to take the square root of this.",
    "Tack on another one and you are there.",
    "Cut that in two, because each pair was counted from both ends.",
    "The final step is to subtract this from the grand total, which I leave to you.",
    "Lastly, divide this among the people in the group to get the share that is asked.",
    "The requested quantity is the reciprocal of this.",
    "In summary, this is the numerator of the requested fraction.",
    "**Key idea:** halve it, since each pair was counted twice.",
)
CONDITIONING_REMARKS = (
    "That works when the objects are identical, and in this problem they are distinct.",
    "That counts rotations as different, while the problem counts them as the same.",
    "This is measured in the scaled units I introduced along the way.",
    "Everything was computed per person, so multiply by the group size for the requested total.",
    "That figure is per day, while the question is about the whole week.",
)
PROVISIONAL_REMARKS = (
    "This is a working value, and I will post the final number after checking.",
    "That is a stand-in until I finish the real calculation.",
    "The paragraph above is my old solution, and I now believe the new approach.",
    "I am abandoning this line of attack because it leads nowhere reliable.",
    "The problem asks for the other variable, which I never computed.",
    "I withdraw this answer.",
)
CONFIRMING_REMARKS = (
    "Substituting back into the original equation confirms this result.",
    "All conditions of the problem are satisfied.",
    "This is consistent with all the constraints in the problem.",
    "Let me double check: substituting back, everything is consistent.",
    "Quick check: the value satisfies every constraint, and it is the only one that does.",
    "There are no other solutions.",
    "No other value works.",
    "This is the number of ways.",
    "It is not hard to check this directly.",
    "The other root is rejected since it is negative.",
    "**Recap:** we translated the conditions into equations, simplified, and read off the requested quantity.",
    "Happy to clarify any step if needed.",
    "Nice work sticking with it.",
    "Keep practicing problems like this one.",
    "I hope it is correct.",
    "**Key idea:** each term is three fifths of the one before it.",
    "In words: five students do both activities.",
    "That is, the pentagon maps onto itself after a fifth of a full turn.",
    "This is because the numerator is exactly twelve times the denominator.",
    "As practice, try plugging the answer back into the original problem to see that it works.",
)


@pytest.mark.parametrize(("remark", "sentence", "gold"), list(itertools.product(
    DOUBTING_REMARKS + CHANGING_REMARKS + CONDITIONING_REMARKS + PROVISIONAL_REMARKS, BOX_SENTENCES, GOLDS[:3])))
def test_a_remark_after_the_box_that_does_not_confirm_it_takes_it_back(remark: str, sentence: str, gold: str) -> None:
    """Doubt, an operation still to apply, a condition or scale, a provisional label: no evidence for the box."""
    assert graded(f"{sentence.format(gold=gold)}\n\n{remark}", gold) == 0.0


@pytest.mark.parametrize(("remark", "sentence"), list(itertools.product(CONFIRMING_REMARKS, BOX_SENTENCES)))
def test_a_remark_that_confirms_sums_up_or_encourages_keeps_the_box(remark: str, sentence: str) -> None:
    """Checks, uniqueness, recaps, what the box is, and a tutor's closing keep the answer."""
    for gold in GOLDS:
        assert graded(f"{sentence.format(gold=gold)}\n\n{remark}", gold) == 1.0, (remark, gold)


SPOILERS = ("but only if the coins are fair", "unless I misread the question", "though I might be wrong",
            "if we ignore the empty set", "after rounding", "per person", "except for the last case",
            "in thousands", "once you double it", "probably")


@settings(max_examples=300, deadline=None)
@given(remark=st.sampled_from(CONFIRMING_REMARKS[:11]), spoiler=st.sampled_from(SPOILERS),
       sentence=st.sampled_from(BOX_SENTENCES), gold=st.sampled_from(GOLDS))
def test_a_confirmation_with_a_doubt_condition_or_change_added_no_longer_keeps_the_box(
    remark: str, spoiler: str, sentence: str, gold: str
) -> None:
    """Positive evidence must be plain: any confirming remark with a doubt, a condition or a change tacked on
    takes the box back."""
    spoiled = f"{remark.rstrip('.')}, {spoiler}."
    assert graded(f"{sentence.format(gold=gold)}\n\n{spoiled}", gold) == 0.0, spoiled


def test_a_comment_after_the_box_needs_no_confirmation_but_is_still_read() -> None:
    """A LaTeX comment is no remark on the answer: a long one keeps the box unless it takes it back in listed words
    or gives another value."""
    assert graded("The answer is $\\boxed{42}$.\n% a note on the layout\n") == 1.0
    assert graded("The answer is $\\boxed{42}$.\n% actually the answer is 43\n") == 0.0
