"""Meaning-changing operators on how a form is read: look-alike characters and forms with two readings.

Each mutant is either a different value written with characters that look like the gold's
(``①②`` is two labels, not 12; ``2ᵏ`` is a power, not ``2k``), or a form a reader may take
two ways (``1/2x``, ``2\\frac{6}{2}``, ``\\sin^{-1}``): a grader that picks one reading for it
is guessing, so the mutant must score 0.
"""

from __future__ import annotations

import random
import re
from typing import Final

from engine.testing.grading_adversary.registry import changing
from engine.testing.grading_adversary.shapes import core, plain_integer, value_like

_LABELLED_DIGITS: Final = {
    "circled": "\u2460\u2461\u2462\u2463\u2464\u2465\u2466\u2467\u2468",
    "parenthesized": "\u2474\u2475\u2476\u2477\u2478\u2479\u247a\u247b\u247c",
    "full stop": "\u2488\u2489\u248a\u248b\u248c\u248d\u248e\u248f\u2490",
}
"""Digits 1-9 as list labels (①, ⑴, ⒈): Unicode's compatibility forms map them to plain digits."""
_RAISED: Final = dict(zip("abcdefghijklmnoprstuvwxyz", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ", strict=True))
_LOWERED: Final = dict(zip("aehijklmnoprstuvx", "ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ", strict=True))
_COEFFICIENT: Final = re.compile(r"(?<![\d.^_{a-zA-Z\\])(\d+)([a-z])(?![a-zA-Z(])")
_SLASHABLE: Final = re.compile(r"^(-?)\\frac\{(\\pi|\\sqrt\{\d+\}|[a-z])\}\{(\d+)\}$")
_TRIG: Final = re.compile(r"\\(sin|cos|tan)(?![a-zA-Z^])")
_RECIPROCAL: Final = {"csc": "sin", "sec": "cos", "cot": "tan"}


@changing
def digits_as_labels(gold: str, rng: random.Random) -> str | None:
    """``①②`` for 12: digits written as list labels (circled, parenthesized, with a full stop)."""
    number = plain_integer(core(gold))
    digits = str(number) if number is not None else ""
    if number is None or len(digits) < 2 or "0" in digits or number < 0:  # one label is one digit
        return None
    labels = _LABELLED_DIGITS[rng.choice(sorted(_LABELLED_DIGITS))]
    return "".join(labels[int(digit) - 1] for digit in digits)


@changing
def coefficient_raised_or_lowered(gold: str, rng: random.Random) -> str | None:
    """``2ᵏ`` or ``2ₖ`` for ``2k``: a letter after a number raised to a power or lowered to an index."""
    text = core(gold)
    found = [m for m in _COEFFICIENT.finditer(text) if m.group(2) in _RAISED]
    if not found:
        return None
    match = rng.choice(found)
    letter = match.group(2)
    table = _LOWERED if letter in _LOWERED and rng.random() < 0.5 else _RAISED  # a coin
    return text[: match.start(2)] + table[letter] + text[match.end(2) :]


@changing
def markdown_struck(gold: str, rng: random.Random) -> str | None:
    """``~~42~~``: Markdown strikes the value through; it is withdrawn, not given."""
    text = core(gold)
    if not value_like(text):
        return None
    return rng.choice(["~~{}~~", "~~ {} ~~", "~~{}"]).format(text)


@changing
def hyphen_range_in_text(gold: str, rng: random.Random) -> str | None:
    """``1\\text{-}5`` for -4: a hyphen in text is a dash (a range), not a minus sign."""
    number = plain_integer(core(gold))
    if number is None or abs(number) > 10**6:  # keep the range readable
        return None
    low = rng.randint(1, 9)
    high = low - number
    if high < 0:
        low, high = low + number, low
    return rng.choice(["{}\\text{{-}}{}", "\\text{{{}-{}}}", "{}\\text{{--}}{}", "\\text{{{} - {}}}"]).format(low, high)


@changing
def slash_before_product(gold: str, rng: random.Random) -> str | None:
    """``1/2\\pi`` for ``\\frac{\\pi}{2}``: is the factor after the slash in the denominator? Unsaid."""
    match = _SLASHABLE.match(core(gold))
    if match is None:
        return None
    sign, factor, denominator = match.groups()
    space = rng.choice(["", " "]) if factor.startswith("\\") else ""
    return f"{sign}1/{denominator}{space}{factor}"


@changing
def integer_before_improper_fraction(gold: str, rng: random.Random) -> str | None:
    """``2\\frac{6}{2}`` for 6: a product (6) or a mixed number (5)? An integer then an improper
    fraction of integers is never guessed."""
    number = plain_integer(core(gold))
    if number is None or number < 2:  # a factor of at least 2 is needed
        return None
    factors = [a for a in range(2, min(number, 50) + 1) if (2 * number) % a == 0 and 2 * number // a >= 2]
    if not factors:
        return None
    factor = rng.choice(factors)
    fraction = rng.choice(["\\frac", "\\dfrac"])
    return f"{factor}{fraction}{{{2 * number // factor}}}{{2}}"


@changing
def inverse_function_power(gold: str, rng: random.Random) -> str | None:
    """``\\sin^{-1}`` for ``\\sin`` (arcsin), ``\\sin^{-1}`` for ``\\csc``: the inverse, never the reciprocal."""
    text = core(gold)
    reciprocal = re.search(r"\\(csc|sec|cot)(?![a-zA-Z^])", text)
    if reciprocal and rng.random() < 0.5:  # a coin
        name = _RECIPROCAL[reciprocal.group(1)]
        return text[: reciprocal.start()] + f"\\{name}^{{-1}}" + text[reciprocal.end() :]
    found = list(_TRIG.finditer(text))
    if not found:
        return None
    match = rng.choice(found)
    return text[: match.end()] + "^{-1}" + text[match.end() :]
