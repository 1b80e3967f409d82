"""A ninth attacker, told the documented rules and not the code: 960 wrong replies in 16 classes scored 1.

Nearly all were prose off the closed lists: a short remark after the box (``Yeah right.``, ``Psych!``, ``My bad.``,
``Beats me.``), a mark no list held (``(\u00d7)``, ``\U0001f645``), a lead clause that narrows the box (``For even
$n$,``, ``In base 7,``, ``Before dividing by 2,``) and later sentences about other solutions or missed cases. A
short remark after the box now keeps it only with a word that confirms or closes it; 375 of the 960 still score
1 (docs/grading.md says which kinds).
"""

from __future__ import annotations

import pytest

from tests.grading.support import graded

ENDINGS = ["The answer is $\\boxed{42}$.", "Therefore, \\boxed{42}.", "<answer>42</answer>",
           "**Final Answer**\n\n\\boxed{42}"]
LATER = [
    "Yeah right.", "Psych!", "April fools!", "Just joking.", "Said no one ever.", "Whoops.", "My bad.", "I goofed.",
    "Dubious.", "Beats me.", "Sbagliato.", "Errado.", "Fel.", "Salah.", "(\u00d7)", "[\u00d7]", "\u2a2f",
    "\U0001f645", "\U0001f925", "The problem has no solution.", "No such number exists.",
    "There is also a second solution.", "The negative root works too.", "It is not unique.",
    "That's for n = 5 only.", "Only in the limiting case.", "The endpoint was left out.", "That omits one case.",
    "Includes a duplicate.", "Python disagrees.", "This is the intermediate value.", "That's in hex.",
]
LEADS = ["For even $n$, the answer is", "When $n = 5$, the answer is", "In base 7, the answer is",
         "In hexadecimal, the answer is", "Ignoring the constraint, the answer is",
         "Before dividing by 2, the answer is", "For now, the answer is", "At first glance, the answer is",
         "In the case $n = 3$, the answer is"]
BOX = "The answer is $\\boxed{42}$."
STILL_RIGHT = [
    BOX + "\n\nDoes that make sense?", BOX + " Confidence: high.", BOX + " \U0001f389", BOX + "\n\n\u220e",
    BOX + "\n\n---", BOX + " Good luck!", BOX + " You've got this!", BOX + "\n\n~cool_geo", BOX + " Verified.",
    "Ignoring the constant term, which cancels, the sum is $\\boxed{42}$.",
    "For this problem, the answer is $\\boxed{42}$.", BOX + " This is the only solution.",
    BOX + " There are no other solutions.",
]


@pytest.mark.parametrize("ending", ENDINGS)
@pytest.mark.parametrize("later", LATER)
def test_a_remark_or_sentence_after_the_box_that_does_not_confirm_it_takes_it_back(ending: str, later: str) -> None:
    """``\\boxed{42}. Yeah right.``, ``(\u00d7)``, ``The problem has no solution.``: 0, whatever the ending."""
    assert graded(f"{ending}\n\n{later}") == 0.0, later


@pytest.mark.parametrize("lead", LEADS)
def test_a_lead_clause_that_narrows_the_box_leaves_it_unreadable(lead: str) -> None:
    """``For even $n$, the answer is \\boxed{42}.``: the box holds for a case, a base or a changed problem: 0."""
    assert graded(f"{lead} $\\boxed{{42}}$.") == 0.0, lead


@pytest.mark.parametrize("reply", STILL_RIGHT)
def test_confirmations_courtesies_and_plain_leads_keep_the_box(reply: str) -> None:
    """A tutor's question, a confidence, a celebration, a QED mark, a signature, a lead about the work: 1."""
    assert graded(reply) == 1.0, reply
