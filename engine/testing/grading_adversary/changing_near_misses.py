"""Meaning-changing operators that stay close to the gold: near misses a tolerance would accept.

One unit in the last stated digit, a fraction a millionth away from an irrational, an
exponent's sign, an angle converted to degrees with its sign dropped: each mutant is
close to (or a familiar rewriting of) the gold, and not equal to it.
"""

from __future__ import annotations

import math
import random
import re
from fractions import Fraction
from typing import Final

from engine.testing.grading_adversary.registry import changing
from engine.testing.grading_adversary.shapes import core, is_bare_value
from engine.testing.grading_adversary.values import Unreadable, clearly_differs, evaluate, scalar

_NUMERAL: Final = re.compile(r"(-?\d*\.?\d*?)(\d)((?:[eE][-+]?\d+)?)")
_EXPONENT: Final = re.compile(r"(10\^\{?|\d[eE])([-+]?)(\d+)")


@changing
def least_digit_nudged(gold: str, rng: random.Random) -> str | None:
    """``2000000`` -> ``2000001``, ``4.49`` -> ``4.48``: one unit in the last stated place."""
    match = _NUMERAL.fullmatch(core(gold))
    if match is None:
        return None
    head, digit, exponent = match.groups()
    steps = [step for step in (-1, 1) if 0 <= int(digit) + step <= 9]
    return head + str(int(digit) + rng.choice(steps)) + exponent


@changing
def rational_approximation(gold: str, rng: random.Random) -> str | None:
    """``\\pi`` -> ``\\frac{355}{113}``: a fraction close to an irrational gold is not it."""
    text = core(gold)
    try:
        exact = evaluate(text)
    except Unreadable:
        return None
    value = scalar(text)
    if isinstance(exact, Fraction) or value is None or value.imag or not is_bare_value(text):
        return None  # rational golds (and sums of them) have no near-but-different fraction to offer
    near = Fraction(value.real).limit_denominator(rng.choice([100, 1000, 10**4, 10**5]))
    if near.denominator == 1 or abs(float(near) - value.real) <= 1e-13 * max(1.0, abs(value.real)):
        return None  # a float that is really a rational (\sqrt{2}\sqrt{2}/3) would give the gold back
    sign = "-" if near < 0 else ""
    return f"{sign}\\frac{{{abs(near.numerator)}}}{{{near.denominator}}}"


@changing
def exponent_sign_flipped(gold: str, rng: random.Random) -> str | None:
    """``6.02 \\times 10^{23}`` -> ``6.02 \\times 10^{-23}``: the exponent's sign flipped."""
    text = core(gold)
    spots = [m for m in _EXPONENT.finditer(text) if int(m.group(3))]
    if not spots:
        return None
    match = rng.choice(spots)
    sign = "" if match.group(2) == "-" else "-"
    mutant = text[: match.start(2)] + sign + text[match.end(2) :]
    return mutant if clearly_differs(text, mutant) else None


@changing
def degree_number_for_radians(gold: str, rng: random.Random) -> str | None:
    """``\\frac{\\pi}{6}`` -> ``30``: the angle's number of degrees, without a degree sign."""
    text = core(gold)
    value = scalar(text)
    if "\\pi" not in text or value is None or value.imag or abs(value.real) < 1e-9 or not is_bare_value(text):
        return None
    degrees = math.degrees(value.real)
    return str(round(degrees)) if abs(degrees - round(degrees)) < 1e-9 else f"{degrees:.4f}"
