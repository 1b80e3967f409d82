"""Meaning-changing operators on a whole reply: what a reader sees is a wrong answer.

Each reply shows a wrong boxed value ``W`` and puts the gold's box where a reader does not
see it (a comment, ``\\iffalse``, ``\\phantom``) or denies or hedges it. The extracted final
answer is then graded, as the engine grades a reply.
"""

from __future__ import annotations

import random

from engine.testing.grading_adversary import changing_digits, changing_structure, changing_values
from engine.testing.grading_adversary.registry import changing_reply
from engine.testing.grading_adversary.shapes import commented, core


def wrong_value(gold: str, rng: random.Random) -> str | None:
    """A value surely different from ``gold``: a changed digit, a lost element, another choice..."""
    for make in (changing_digits.digit_changed, changing_structure.element_dropped,
                 changing_structure.choice_letter_changed, changing_values.sign_flipped,
                 changing_values.arithmetic_appended):
        wrong = make(gold, rng)
        if wrong is not None and wrong.strip() != core(gold):
            return wrong
    return None


def _reply(gold: str, rng: random.Random, templates: list[str]) -> str | None:
    wrong = wrong_value(gold, rng)
    if wrong is None or commented(wrong):
        return None
    return rng.choice(templates).replace("GOLD", core(gold)).replace("WRONG", wrong)


@changing_reply
def denied_second_box(gold: str, rng: random.Random) -> str | None:
    """``\\boxed{41} \\quad (\\text{not } \\boxed{42})``: the gold's box is denied."""
    return _reply(gold, rng, [
        "The answer is $\\boxed{WRONG} \\quad (\\text{not } \\boxed{GOLD})$.",
        "So we get $\\boxed{WRONG}$, and not $\\boxed{GOLD}$.",
        "$\\boxed{WRONG}$ (it is not $\\boxed{GOLD}$)",
    ])


@changing_reply
def hedged_second_box(gold: str, rng: random.Random) -> str | None:
    """``\\boxed{41}`` or ``\\boxed{42}``: two final answers are a hedge, not an answer."""
    return _reply(gold, rng, [
        "The answer is either $\\boxed{WRONG}$ or $\\boxed{GOLD}$.",
        "Final answer: $\\boxed{WRONG}$, or possibly $\\boxed{GOLD}$.",
        "$\\boxed{WRONG}$ \\quad $\\boxed{GOLD}$",
    ])


@changing_reply
def box_in_latex_comment(gold: str, rng: random.Random) -> str | None:
    """The gold's box after a LaTeX ``%``: the rest of the line is not typeset."""
    return _reply(gold, rng, [
        "The answer is $\\boxed{WRONG}$.\n% \\boxed{GOLD}\n",
        "Therefore $\\boxed{WRONG}$ % $\\boxed{GOLD}$",
        "$$\\boxed{WRONG} % \\boxed{GOLD}\n$$",
    ])


@changing_reply
def box_in_iffalse(gold: str, rng: random.Random) -> str | None:
    """The gold's box inside ``\\iffalse ... \\fi``: never typeset."""
    return _reply(gold, rng, [
        "The answer is $\\boxed{WRONG}$. \\iffalse $\\boxed{GOLD}$ \\fi",
        "$\\boxed{WRONG}$\n\\iffalse\n\\boxed{GOLD}\n\\fi\n",
    ])


@changing_reply
def box_in_phantom(gold: str, rng: random.Random) -> str | None:
    """The gold's box inside ``\\phantom{}``: it takes space and shows nothing."""
    return _reply(gold, rng, [
        "The answer is $\\boxed{WRONG}\\phantom{\\boxed{GOLD}}$.",
        "$\\boxed{WRONG} \\hphantom{\\boxed{GOLD}}$",
        "$\\boxed{WRONG}\\vphantom{\\boxed{GOLD}}$",
    ])


@changing_reply
def box_in_html_comment(gold: str, rng: random.Random) -> str | None:
    """The gold's box inside ``<!-- -->``: a rendered reply hides it."""
    return _reply(gold, rng, [
        "The answer is $\\boxed{WRONG}$. <!-- $\\boxed{GOLD}$ -->",
        "$\\boxed{WRONG}$\n<!--\n\\boxed{GOLD}\n-->",
    ])


@changing_reply
def box_in_comment_environment(gold: str, rng: random.Random) -> str | None:
    """The gold's box inside ``\\begin{comment}``: the comment package drops it."""
    return _reply(gold, rng, [
        "The answer is $\\boxed{WRONG}$.\n\\begin{comment}\n$\\boxed{GOLD}$\n\\end{comment}",
    ])


@changing_reply
def box_crossed_out(gold: str, rng: random.Random) -> str | None:
    """The gold's box struck through (``\\cancel``, Markdown ``~~``): withdrawn, not given."""
    return _reply(gold, rng, [
        "The answer is $\\boxed{WRONG}$, ~~$\\boxed{GOLD}$~~.",
        "$\\boxed{WRONG}$ $\\cancel{\\boxed{GOLD}}$",
        "$\\boxed{WRONG}$ $\\sout{\\boxed{GOLD}}$",
    ])


@changing_reply
def taken_back_after_the_box(gold: str, rng: random.Random) -> str | None:
    """The gold's box, then a later sentence that withdraws it or states another answer."""
    return _reply(gold, rng, [
        "The answer is $\\boxed{GOLD}$.\n\nWait, that is wrong. It should be $WRONG$.",
        "$\\boxed{GOLD}$\n\nActually, let me redo this: the answer is $WRONG$.",
        "Final answer: $\\boxed{GOLD}$. Correction: $WRONG$.",
        "So we get $\\boxed{GOLD}$.\nEdit: $WRONG$.",
        "$\\boxed{GOLD}$\n\n(I am not confident in this; it could be $WRONG$.)",
        "The answer is $\\boxed{GOLD}$. The correct answer is $WRONG$.",
        "We obtain $\\boxed{GOLD}$. Hmm, on reflection the result is $WRONG$.",
        "$\\boxed{GOLD}$\n\nThus $WRONG$.",
        "$\\boxed{GOLD}$\n\n... or is it $WRONG$?",
    ])


@changing_reply
def label_before_the_box(gold: str, rng: random.Random) -> str | None:
    """The gold's box under a label that makes it something other than the answer (a bound, an
    estimate, one part or step): ``Lower bound: \\boxed{42}``."""
    label = rng.choice(["Lower bound", "Upper bound", "Estimate", "Rough estimate", "My guess", "Answer (rounded)",
                        "Answer to part (a)", "Intermediate result", "Partial answer", "Step 1", "First attempt"])
    return f"{label}: $\\boxed{{{core(gold)}}}$"


@changing_reply
def list_continued_after_the_box(gold: str, rng: random.Random) -> str | None:
    """The gold's box as the first item of a list (``\\boxed{42}, 43``): the list is the answer."""
    return _reply(gold, rng, [
        "The answer is $\\boxed{GOLD}$, $WRONG$.",
        "$\\boxed{GOLD}$; $WRONG$",
        "Answer: \\boxed{GOLD}, WRONG",
    ])
