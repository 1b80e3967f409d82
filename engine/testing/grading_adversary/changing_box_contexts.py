"""Meaning-changing operators on what is written against the only box of a reply.

A reader does not see a box alone: ``-\\boxed{42}`` is -42, ``\\cancel{\\boxed{42}}`` is
withdrawn, ``\\frac{1}{\\boxed{42}}`` is 1/42, ``x \\neq \\boxed{42}`` is a relation and
``\\boxed{4}^2`` is 16. A box written without braces (``\\boxed 7``) boxes one token, and
``\\framebox`` is a box too: two of them with different values are a hedge.
"""

from __future__ import annotations

import random

from engine.testing.grading_adversary.changing_replies import wrong_value
from engine.testing.grading_adversary.registry import changing_reply
from engine.testing.grading_adversary.shapes import commented, core, plain_number, value_like
from engine.testing.grading_adversary.values import scalar


def _value(gold: str) -> complex | None:
    text = core(gold)
    return scalar(text) if value_like(text) and not commented(text) else None


@changing_reply
def box_inside_a_command(gold: str, rng: random.Random) -> str | None:
    """``\\cancel{\\boxed{42}}``, ``\\text{\\boxed{42} is wrong}``: the box is an argument, not the answer."""
    text = core(gold)
    if not value_like(text) or commented(text):
        return None
    templates = ["The answer is $\\cancel{\\boxed{GOLD}}$.", "So $\\sout{\\boxed{GOLD}}$.",
                 "$\\xcancel{\\boxed{GOLD}}$", "$\\text{\\boxed{GOLD} is wrong}$",
                 "$\\underbrace{\\boxed{GOLD}}_{\\text{not this}}$"]
    value = _value(gold)
    if value is not None and abs(value) not in (0, 1):
        templates += ["Hence $\\frac{1}{\\boxed{GOLD}}$.", "$\\sqrt{\\boxed{GOLD}}$"]
    return rng.choice(templates).replace("GOLD", text)


@changing_reply
def box_after_sign_or_relation(gold: str, rng: random.Random) -> str | None:
    """``-\\boxed{42}``, ``x \\neq \\boxed{42}``, ``x < \\boxed{42}``: the sign or relation applies to the box."""
    text = core(gold)
    if not value_like(text) or commented(text):
        return None
    templates = ["So $x \\neq \\boxed{GOLD}$.", "$x < \\boxed{GOLD}$", "$y \\approx \\boxed{GOLD}$",
                 "$\\pm\\boxed{GOLD}$", "$x \\not= \\boxed{GOLD}$"]
    if _value(gold) not in (None, 0):
        templates.append("The answer is $-\\boxed{GOLD}$.")
    return rng.choice(templates).replace("GOLD", text)


@changing_reply
def box_before_power_or_words(gold: str, rng: random.Random) -> str | None:
    """``\\boxed{4}^2``, ``\\boxed{5}!``, ``\\boxed{42}\\text{ is wrong}``, ``\\boxed{4}2``: what follows changes it."""
    text = core(gold)
    if not value_like(text) or commented(text):
        return None
    templates = ["$\\boxed{GOLD}\\text{ is wrong}$", "$\\boxed{GOLD} \\text{ (incorrect)}$", "$\\boxed{GOLD}?$"]
    value = _value(gold)
    if value is not None and abs(value) not in (0, 1):
        templates.append("$\\boxed{GOLD}^2$")
    number = plain_number(text)
    if number is not None and number == int(number) and number > 2:  # 1! and 2! are themselves
        templates += ["$\\boxed{GOLD}!$", "$\\boxed{GOLD}7$"]
    return rng.choice(templates).replace("GOLD", text)


@changing_reply
def other_box_commands_hedge(gold: str, rng: random.Random) -> str | None:
    """``\\framebox{41} \\boxed{42}``, ``\\boxed 7 \\boxed{42}``: every box counts, so two values are a hedge."""
    wrong = wrong_value(gold, rng)
    text = core(gold)
    if wrong is None or commented(wrong) or commented(text):
        return None
    templates = ["\\framebox{WRONG} \\quad $\\boxed{GOLD}$", "$\\bbox[2px]{WRONG}$ or $\\boxed{GOLD}$",
                 "$\\boxed{GOLD}$ \\framebox[3cm]{WRONG}"]
    digit = next((d for d in "7392" if scalar(d) != _value(gold)), None)
    if digit is not None and _value(gold) is not None:
        templates.append(f"$\\boxed {digit} \\boxed{{GOLD}}$")
    return rng.choice(templates).replace("GOLD", text).replace("WRONG", wrong)
