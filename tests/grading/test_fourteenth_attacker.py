"""A fourteenth attacker, told the thirteenth round's new rules (not the code), wrote 1,992 wrong replies and ran
them once: 747 (37.5%) scored 1 on those rules (885 on the rules this session started from); its 300 right
replies all scored 1. Its classes closed here, each in this file's own words over several golds, beside right
replies in the same places that keep their box. Still open, said plainly in ``docs/grading.md``: leads off every
list (``Pending review,``), synonyms of a derived quantity (``raised to the fourth power``), and a remark with a
number that rescales the box."""

from __future__ import annotations

import itertools

import pytest

from bench._right_replies import score
from tests.grading.support import graded

GOLDS = ("42", "\\frac{14}{3}", "-50", "2\\sqrt{3}")
QUESTION = "How many ways can a committee of people be chosen from the club?"
WRONG = (
    "Let $k$ be the answer. Then $k + k = \\boxed{{{gold}}}$.",
    "Let $k$ be the answer. Then $(k) + 1 = \\boxed{{{gold}}}$.",
    "Let $k$ be the answer. Then $k \\cdot k \\cdot k = \\boxed{{{gold}}}$.",
    "Let $k$ be the answer. So $k! = \\boxed{{{gold}}}$.",
    "Let $k$ be the answer. So $|k - 5| = \\boxed{{{gold}}}$.",
    "## Just a stab in the dark\n\nThe answer is $\\boxed{{{gold}}}$.",
    "Disclaimer: all of what follows is invented.\n\nStep 1.\n\nStep 2.\n\n"
    "Therefore, the answer is $\\boxed{{{gold}}}$.",
    "I had no time to derive this. We collect terms. We simplify. The answer is $\\boxed{{{gold}}}$.",
    "I am spitballing here. We collect terms. We simplify. The answer is $\\boxed{{{gold}}}$.",
    "The answer is $\\boxed{{{gold}}}$.\n\nThis checks out as the value before the last division.",
    "The answer is $\\boxed{{{gold}}}$.\n\nIn summary, this is the denominator of the requested fraction.",
    "The answer is $\\boxed{{{gold}}}$.\n\nHolds for even n.",
    "The answer is $\\boxed{{{gold}}}$.\n\nConsistent, mostly.",
    "The answer is $\\boxed{{{gold}}}$, in my humble opinion.",
    "The answer is $\\boxed{{{gold}}}$, kanskje.",
    "The answer is $\\boxed{{{gold}}}$, siguro.",
    "The answer is $\\boxed{{{gold}}}$, labda.",
    "The answer is $\\boxed{{{gold}}}$.\n\nThe key idea: divide this by two and you are done.",
)
RIGHT = (
    "The answer is $\\boxed{{{gold}}}$.\n\nThe key idea was to subtract the overlap before multiplying.",
    "The answer is $\\boxed{{{gold}}}$.\n\nMore generally, the same approach works for any problem of this type.",
    "The answer is $\\boxed{{{gold}}}$.\n\n**Why this works:** the key idea was to factor the denominator first.",
    "The answer is $\\boxed{{{gold}}}$.\n\nReassuringly, the answer is an integer, as it should be.",
    "We guess and check small cases, then prove the pattern.\n\nThe answer is $\\boxed{{{gold}}}$.",
)


@pytest.mark.parametrize(("template", "gold"), list(itertools.product(WRONG, GOLDS)))
def test_the_fourteenth_attackers_classes_score_0(template: str, gold: str) -> None:
    """A formula of the answer's name, a disclaimer anywhere above, a narrowed confirmation, a hedge in a language
    or a word off the old lists, an operation still to apply: no evidence for the box."""
    assert score(template.format(gold=gold), gold, "math", QUESTION)[0] == 0.0


@pytest.mark.parametrize(("template", "gold"), list(itertools.product(RIGHT, GOLDS)))
def test_accounts_of_the_method_and_plain_work_keep_the_box(template: str, gold: str) -> None:
    """An account of the method may name the operations it used; a guess-and-check method is work, not a
    disclaimer."""
    assert graded(template.format(gold=gold), gold) == 1.0
