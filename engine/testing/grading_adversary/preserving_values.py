"""Meaning-preserving operators that write the same value in an equivalent form.

Each form is exact: ``0.5`` for ``\\frac12`` (a terminating decimal), never ``0.333`` for
``\\frac13``; rewritings of expressions are checked with the adversary's evaluator.
"""

from __future__ import annotations

import random
import re
from fractions import Fraction
from typing import Final

from engine.testing.grading_adversary.registry import preserving
from engine.testing.grading_adversary.shapes import (
    WORDY,
    Collection,
    collection,
    core,
    plain_integer,
    plain_number,
    top_level_split,
)
from engine.testing.grading_adversary.values import same_value

_LONE_FRACTION: Final = re.compile(r"(-?)\\[dt]?frac\{(\d+)\}\{(\d+)\}")
_GROUPED: Final = re.compile(r"-?\d{1,3}(?:(?:,|\{,\}|,\\!\s*|\\,)\d{3})+(?:\.\d+)?")
_WORDS: Final = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
)


def _rational(text: str) -> Fraction | None:
    """A lone fraction of integers or a plain numeral, exactly."""
    match = _LONE_FRACTION.fullmatch(text.replace(" ", ""))
    if match and int(match.group(3)):
        return Fraction(int(match.group(2)), int(match.group(3))) * (-1 if match.group(1) else 1)
    return plain_number(text)


def terminating(value: Fraction) -> str | None:
    """``value`` as an exact decimal numeral, if it has one."""
    denominator = value.denominator
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    if denominator != 1:
        return None
    places = 0
    while (value * 10**places).denominator != 1:
        places += 1
    return f"{float(value):.{places}f}" if places < 15 else None


@preserving
def equivalent_fraction(gold: str, rng: random.Random) -> str | None:
    """``\\frac12`` -> ``\\frac{3}{6}``, ``7`` -> ``\\frac{14}{2}``: numerator and denominator scaled alike."""
    text = core(gold)
    value = _rational(text)
    if value is None or "." in text:
        return None
    k = rng.randint(2, 9)
    sign = "-" if value < 0 else ""
    return f"{sign}\\frac{{{abs(value.numerator) * k}}}{{{value.denominator * k}}}"


@preserving
def decimal_for_fraction(gold: str, rng: random.Random) -> str | None:
    """``\\frac{1}{2}`` -> ``0.5``: a fraction with a terminating decimal, written as it."""
    text = core(gold)
    value = _rational(text)
    if value is None or plain_number(text) is not None:
        return None
    return terminating(value)


@preserving
def fraction_for_decimal(gold: str, rng: random.Random) -> str | None:
    """``0.25`` -> ``\\frac{1}{4}``: a decimal numeral as its exact fraction."""
    text = core(gold)
    value = plain_number(text)
    if value is None or value.denominator == 1:
        return None
    sign = "-" if value < 0 else ""
    return f"{sign}\\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"


@preserving
def product_for_integer(gold: str, rng: random.Random) -> str | None:
    """``42`` -> ``2 \\cdot 21``: a whole number as a product of two factors."""
    number = plain_integer(core(gold))
    if number is None or abs(number) > 10**12:
        return None
    factors = [d for d in range(2, min(abs(number), 10**4)) if d * d <= abs(number) and number % d == 0]
    if not factors:
        return None
    d = rng.choice(factors)
    times = rng.choice([" \\cdot ", "\\cdot ", " \\times ", "\\times"])
    return f"{'-' if number < 0 else ''}{d}{times}{abs(number) // d}"


@preserving
def root_of_square(gold: str, rng: random.Random) -> str | None:
    """``2`` -> ``\\sqrt{4}``: a natural number as the root of its square."""
    number = plain_integer(core(gold))
    if number is None or not 0 <= number <= 10**6:
        return None
    return f"\\sqrt{{{number * number}}}"


@preserving
def thousands_separated(gold: str, rng: random.Random) -> str | None:
    """``1000`` -> ``1{,}000``, ``1\\,000``: digit groups of three marked."""
    text = core(gold)
    if plain_number(text) is None:
        return None
    sign, rest = ("-", text[1:]) if text.startswith("-") else ("", text)
    whole, dot, fraction = rest.partition(".")
    if len(whole) < 4:
        return None
    groups = [whole[max(0, end - 3) : end] for end in range(len(whole), 0, -3)][::-1]
    return sign + rng.choice(["{,}", ",", "\\,", ",\\!"]).join(groups) + dot + fraction


@preserving
def thousands_unseparated(gold: str, rng: random.Random) -> str | None:
    """``10,\\!080`` -> ``10080``: digit-group marks removed."""
    text = core(gold)
    if not _GROUPED.fullmatch(text):
        return None
    return re.sub(r",\\!\s*|\{,\}|,|\\,", "", text)


@preserving
def trailing_zeros_added(gold: str, rng: random.Random) -> str | None:
    """``42`` -> ``42.0``, ``0.5`` -> ``0.50``: zeros after the last digit of a numeral."""
    text = core(gold)
    if plain_number(text) is None or text.endswith("."):
        return None
    return text + ("" if "." in text else ".") + "0" * rng.randint(1, 3)


@preserving
def leading_zero_toggled(gold: str, rng: random.Random) -> str | None:
    """``0.5`` <-> ``.5``."""
    text = core(gold)
    if plain_number(text) is None:
        return None
    if re.fullmatch(r"-?0\.\d+", text):
        return text.replace("0.", ".", 1)
    return text.replace(".", "0.", 1) if re.fullmatch(r"-?\.\d+", text) else None


@preserving
def sum_commuted(gold: str, rng: random.Random) -> str | None:
    """``2x + 3`` -> ``3 + 2x``: the two terms of a sum swapped."""
    text = core(gold)
    terms = top_level_split(text, "+")
    if len(terms) != 2 or any(len(top_level_split(t, "-")) > 1 or not t.strip() for t in terms):
        return None
    mutant = f"{terms[1].strip()} + {terms[0].strip()}"
    return mutant if same_value(text, mutant) is True else None


@preserving
def explicit_multiplication(gold: str, rng: random.Random) -> str | None:
    """``2\\sqrt{3}`` -> ``2 \\cdot \\sqrt{3}``: a product written with its dot."""
    text = core(gold)
    spots = [m.end() for m in re.finditer(r"\d(?=\s*(?:\\sqrt|\\pi|[a-df-hj-zA-DF-Z](?![a-zA-Z])))", text)]
    if not spots:
        return None
    cut = rng.choice(spots)
    mutant = text[:cut] + " \\cdot " + text[cut:].lstrip()
    return mutant if same_value(text, mutant) is True else None


@preserving
def set_reordered(gold: str, rng: random.Random) -> str | None:
    """``\\{1, 2, 3\\}`` -> ``\\{3, 1, 2\\}``: a set has no order."""
    found = collection(core(gold))
    return _shuffled(found, rng) if found is not None and found.is_set else None


@preserving
def solution_list_reordered(gold: str, rng: random.Random) -> str | None:
    """``4, 10, -2`` -> ``-2, 4, 10``: a bare list of solutions has no order (as the labelled cases say)."""
    found = collection(core(gold))
    return _shuffled(found, rng) if found is not None and found.is_bare else None


def _shuffled(found: Collection, rng: random.Random) -> str | None:
    if any(WORDY.search(item) for item in found.items):
        return None  # "19, 46, and 82": the words belong to a position
    items = list(found.items)
    for _ in range(10):
        rng.shuffle(items)
        if items != list(found.items):
            return found.text(items)
    return None


@preserving
def number_in_words(gold: str, rng: random.Random) -> str | None:
    """``7`` -> ``\\text{seven}``: a small whole number spelled out."""
    number = plain_integer(core(gold))
    if number is None or not 0 <= number < len(_WORDS) or (core(gold).startswith("0") and number):
        return None
    return rng.choice(["\\text{{{}}}", "\\text{{{}}}", "\\mbox{{{}}}"]).format(_WORDS[number])
