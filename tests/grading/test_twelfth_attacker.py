"""A twelfth attacker wrote 1,600 wrong replies blind to the code, ran them once: 145 (9.1%) scored 1, unseen.

That is this stop's honest soundness figure for fresh wrong replies (the 300 right replies of its control all
scored 1). Six of its passing templates are closed here, each under every gold it used; the other two classes (a
box that names another quantity than the one asked for, and hedges off the word lists) stay open.
"""

from __future__ import annotations

import itertools

import pytest

from tests.grading.support import graded

GOLDS = [("42", "43"), ("7", "8"), ("\\frac{3}{4}", "\\frac{1}{4}"), ("120", "121"), ("-5", "5")]
TEMPLATES = [
    "The answer is $\\boxed{{{gold}}}$, as long as the coins are fair. For a biased coin it changes.",
    "So $\\boxed{{{gold}}}$ \u2014 alternatively ${other}$.",
    "The answer is $\\boxed{{{gold}}}$, in units of $10$.",
    "I ran out of time, so this is a random pick.\n\n$\\boxed{{{gold}}}$",
    "I give up on this one and just write something down.\n\n$\\boxed{{{gold}}}$",
    "The answer $\\stackrel{{?}}{{=}} \\boxed{{{gold}}}$",
    "So the final answer is $\\boxed{{{gold}}}$.\n\nHonestly I'm far from certain this is right.",
    "Die Antwort lautet $\\boxed{{{gold}}}$, glaube ich.",
    "A resposta \u00e9 $\\boxed{{{gold}}}$, acho eu.",
]


@pytest.mark.parametrize(("template", "golds"), list(itertools.product(TEMPLATES, GOLDS)))
def test_the_twelfth_attackers_closed_templates_refuse(template: str, golds: tuple[str, str]) -> None:
    """A condition, an alternative, a scale, an earlier disclaimer, a questioned relation or a hedge: no evidence."""
    gold, other = golds
    assert graded(template.format(gold=gold, other=other), gold) == 0.0


@pytest.mark.parametrize("reply", [
    "We pick a random point in the square; by symmetry the probability is $\\boxed{42}$.",
    "The answer is $\\boxed{42}$, as expected.", "Die Antwort lautet $\\boxed{42}$.",
])
def test_right_replies_beside_them_keep_the_box(reply: str) -> None:
    """``random point`` in the working is no random pick, and an expected answer is no condition."""
    assert graded(reply) == 1.0
