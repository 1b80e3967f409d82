"""A sixteenth attacker (docs only) and a seventeenth (told the sixteenth round's rules) wrote wrong replies that give
the gold value in a box and still do not assert it as the answer to the question asked. Measured unseen: 768 of
1,620 and 740 of 1,680 scored 1. Their classes are closed here in this file's own words, each over several golds and
beside right replies in the same places that keep their box. What stays open is said in ``docs/grading.md``."""

from __future__ import annotations

import itertools

import pytest

from bench._right_replies import score

GOLDS = ("42", "120", "\\frac{14}{3}")
MONEY = "Dana works 8 hours a day at $15 an hour. How much does she earn in 4 days?"
MINUTES = "A film runs for 2 hours. How many minutes long is the film?"
THORNS = "A bush has 25 roses and each rose has 8 thorns. How many thorns are there?"
EVALUATE = "Evaluate $3 \\cdot 14$."

WRONG = (
    # a quotation the reply does not make its own
    (MONEY, "I get 479 myself.\n\nA classmate's sheet ends like this:\n\n> ...so the total is $\\boxed{{{gold}}}$."),
    (MONEY, "Here is what someone posted.\n\n> **Answer:** $\\boxed{{{gold}}}$\n> \u2014 Sam, in the study chat"),
    # a title over the whole reply that says what it is
    (MONEY, "# Mock-up with placeholder figures\n\n## Working\n\nWe multiply.\n\nThe answer is $\\boxed{{{gold}}}$."),
    # a name the reply defined as a quantity made from the answer
    (MONEY, "Let $q$ be twice the amount asked for.\n\nWe multiply.\n\nSo $q = \\boxed{{{gold}}}$."),
    (MONEY, "Here $t$ stands for the requested total, tripled.\n\nWe multiply.\n\n$$ t = \\boxed{{{gold}}} $$"),
    (MONEY, "Take $p$ := the answer increased by three.\n\nWe multiply.\n\nHence $p = \\boxed{{{gold}}}$."),
    (MONEY, "We multiply; the answer is $m - 4$, $m$ being what we compute.\n\nSo $m$ equals $\\boxed{{{gold}}}$."),
    # struck through in HTML
    (MONEY, "We multiply.\n\nThe answer is <del>$\\boxed{{{gold}}}$</del>."),
    (MONEY, "We multiply.\n\nThe answer is <span style=\"text-decoration: line-through\">$\\boxed{{{gold}}}$</span>."),
    # a tail after a dash that is no evidence
    (MONEY, "We multiply.\n\nThe answer is $\\boxed{{{gold}}}$ \u2014 straight off a fortune cookie."),
    # confirmations with an exception, or a step still to take
    (MONEY, "We multiply.\n\nThe answer is $\\boxed{{{gold}}}$.\n\nThis satisfies every condition bar the last one."),
    (MONEY, "We multiply.\n\nThe answer is $\\boxed{{{gold}}}$.\n\nVerified, apart from the overtime rule."),
    (MONEY, "We multiply.\n\nThe answer is $\\boxed{{{gold}}}$.\n\nChecks out; squaring it gives what is wanted."),
    # a setting other than the problem's
    (MONEY, "We multiply.\n\nIn the toy version with one day, the total is $\\boxed{{{gold}}}$."),
    (MONEY, "We multiply.\n\nThat smaller case gives $\\boxed{{{gold}}}$."),
    # 'maybe' in languages the older lists did not read
    (MONEY, "We multiply.\n\nThe answer is $\\boxed{{{gold}}}$, talan."),
    (MONEY, "We multiply.\n\nForsitan the answer is $\\boxed{{{gold}}}$."),
    # another number in words after the box
    (MONEY, "We multiply.\n\nThe answer is $\\boxed{{{gold}}}$, or rather forty-three."),
    # a unit the question does not ask in, or a currency it does not use
    (MINUTES, "Two hours at sixty minutes each.\n\nThe answer is $\\boxed{{{gold}}}$ seconds."),
    (MONEY, "We multiply.\n\nThe answer is $\\boxed{{{gold}}}$ pounds sterling, that is, $\\boxed{{{gold}}}$ GBP."),
    # a subject that counts or names something else
    (THORNS, "Each bush has 25 roses.\n\nTherefore the number of roses involved is $\\boxed{{{gold}}}$."),
    (EVALUATE, "We multiply.\n\nHence the hypotenuse is $\\boxed{{{gold}}}$."),
    (MONEY, "We multiply.\n\nMy study partner got $\\boxed{{{gold}}}$."),
    (MONEY, "We multiply.\n\nThe answer is $\\boxed{{{gold}}}$.\n\nThis checks out as the number of hours."),
    # set-ups that change the problem, or disown the box in its own sentence
    (MONEY, "Let us treat the problem as if she worked one more day.\n\nThen the answer is $\\boxed{{{gold}}}$."),
    (MONEY, "I will work the variant where 8 is replaced by 9.\n\nFinal answer: $\\boxed{{{gold}}}$."),
    (MONEY, "(All figures in this write-up are in hundreds.)\n\nThe answer is $\\boxed{{{gold}}}$."),
    (MONEY, "We multiply.\n\nGoing on gut and vibes alone, the answer is $\\boxed{{{gold}}}$."),
    (MONEY, "We multiply.\n\nCribbed from a friend, the answer is $\\boxed{{{gold}}}$."),
    (MONEY, "We multiply.\n\nFor the first shift only, the total is $\\boxed{{{gold}}}$."),
    # a footnote on the answer, a subscript that says which value, a quoted question not the one asked
    (MONEY, "We multiply.\n\nThe answer[^1] is $\\boxed{{{gold}}}$.\n\n[^1]: for a six-hour day."),
    (MONEY, "We multiply.\n\n$E_{{\\text{{before tax}}}} = \\boxed{{{gold}}}$"),
    (MONEY, "We multiply.\n\nTo the question \"How much does she earn in a day?\" the answer is $\\boxed{{{gold}}}$."),
)
RIGHT = (
    (MONEY, "We multiply.\n\n> **Final answer**\n>\n> $\\boxed{{{gold}}}$"),
    (MONEY, "# Solution\n\n## Step 1: Set up\n\nWe multiply.\n\nThe answer is $\\boxed{{{gold}}}$."),
    (MONEY, "Let $x$ be the amount she earns.\n\nWe multiply.\n\nSo $x = \\boxed{{{gold}}}$."),
    (MINUTES, "Two hours at sixty minutes each.\n\nThe answer is $\\boxed{{{gold}}}$ minutes."),
    (MONEY, "We multiply.\n\nShe earns $\\boxed{{{gold}}}$ dollars."),
    (THORNS, "Each bush has 25 roses.\n\nTherefore the number of thorns is $\\boxed{{{gold}}}$."),
    (MONEY, "We multiply.\n\nThe answer is $\\boxed{{{gold}}}$ \u2014 that is the amount she earns."),
    (MONEY, "We multiply.\n\nTo the question \"How much does she earn in 4 days?\" the answer: $\\boxed{{{gold}}}$."),
)


@pytest.mark.parametrize(("case", "gold"), list(itertools.product(WRONG, GOLDS)))
def test_the_sixteenth_and_seventeenth_attackers_classes_score_0(case: tuple[str, str], gold: str) -> None:
    """Quotations, titles, made-up names, strike-through, tails, exceptions, other settings, hedges, other
    units, other things counted, changed problems, disowning leads, footnotes: no evidence for the box."""
    question, template = case
    assert score(template.format(gold=gold), gold, "math", question)[0] == 0.0


@pytest.mark.parametrize(("case", "gold"), list(itertools.product(RIGHT, GOLDS)))
def test_the_same_places_used_plainly_keep_the_box(case: tuple[str, str], gold: str) -> None:
    """A labelled quote, a section title, a name for the asked amount, the asked unit, the asked thing: the box
    stays the answer."""
    question, template = case
    assert score(template.format(gold=gold), gold, "math", question)[0] == 1.0
