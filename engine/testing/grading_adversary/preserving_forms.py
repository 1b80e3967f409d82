"""Meaning-preserving operators on answers with a unit, a percent, or an equation.

A length converted exactly into another unit, a percent as its decimal, an equation with
its sides exchanged: the same quantity or relation, written another way.
"""

from __future__ import annotations

import random
import re
from fractions import Fraction
from typing import Final

from engine.testing.grading_adversary.preserving_values import terminating
from engine.testing.grading_adversary.registry import preserving
from engine.testing.grading_adversary.shapes import RELATION, core, plain_number, top_level_split

_METRES: Final = {"mm": Fraction(1, 1000), "cm": Fraction(1, 100), "m": Fraction(1), "km": Fraction(1000)}
_LENGTH: Final = re.compile(r"(-?\d+(?:\.\d+)?)\s*\\(?:text|mbox|mathrm)\{\s*~?\s*(mm|cm|m|km)\s*\}")
_PERCENT: Final = re.compile(r"(-?\d+(?:\.\d+)?)\s*\\%")


@preserving
def unit_converted(gold: str, rng: random.Random) -> str | None:
    """``5\\text{ m}`` -> ``500\\text{ cm}``: a length converted exactly into another metric unit."""
    match = _LENGTH.fullmatch(core(gold))
    if match is None:
        return None
    metres = Fraction(match.group(1)) * _METRES[match.group(2)]
    unit = rng.choice([u for u in _METRES if u != match.group(2)])
    number = terminating(metres / _METRES[unit])
    return None if number is None else f"{number}\\text{{ {unit}}}"


@preserving
def percent_as_decimal(gold: str, rng: random.Random) -> str | None:
    """``28\\%`` -> ``0.28``: a percentage as the number it stands for."""
    match = _PERCENT.fullmatch(core(gold))
    number = terminating(Fraction(match.group(1)) / 100) if match else None
    return number if number is None or plain_number(number) is not None else None


@preserving
def equation_sides_swapped(gold: str, rng: random.Random) -> str | None:
    """``y = 2x + 3`` -> ``2x + 3 = y``: an equation read from the other side."""
    text = core(gold)
    sides = top_level_split(text, "=")
    if len(sides) != 2 or not all(side.strip() for side in sides) or any(RELATION.search(s) for s in sides):
        return None
    if re.search(r"[<>!]$", sides[0].strip()) or "," in text or "\\text" in text:
        return None  # "<=", "!=", a list of assignments, words: not one equation
    return f"{sides[1].strip()} = {sides[0].strip()}"
