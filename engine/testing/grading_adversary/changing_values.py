"""Meaning-changing operators that compute something else from the gold.

A sign, a tiny term, a rounding, a power, a function, a swapped fraction: each mutant's
value is checked to differ from the gold's (exactly, for numerals; by the evaluator
otherwise), so ``0^2``, ``\\sqrt{1}`` or ``-0`` never count as mutants.
"""

from __future__ import annotations

import math
import random
import re
from fractions import Fraction

from engine.testing.grading_adversary.registry import changing
from engine.testing.grading_adversary.shapes import (
    braced,
    core,
    is_bare_value,
    is_expression,
    plain_integer,
    plain_number,
    single_term,
    value_like,
)
from engine.testing.grading_adversary.values import HAS_DECIMAL, clearly_differs, scalar

_FRACTION = re.compile(r"\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}")


def _checked(text: str, mutant: str) -> str | None:
    return mutant if clearly_differs(text, mutant) else None


@changing
def sign_flipped(gold: str, rng: random.Random) -> str | None:
    """``42`` -> ``-42``, ``-x+1`` -> ``x+1``: the sign of the value (or its first term) changed."""
    text = core(gold)
    if not is_expression(text):
        return None
    if text.startswith("-"):
        return _checked(text, text[1:].lstrip())
    return _checked(text, "-" + text if single_term(text) and rng.random() < 0.7 else f"-({text})")


@changing
def tiny_term_added(gold: str, rng: random.Random) -> str | None:
    """``\\pi + 10^{-20}``: a term too small for floating point, still not zero (exact golds only)."""
    text = core(gold)
    if not is_expression(text) or HAS_DECIMAL.search(text):  # a decimal gold's precision would absorb it
        return None
    term = rng.choice(["+ 10^{-20}", "- 10^{-30}", "+ \\frac{1}{10^{15}}", "+ 0.000000000001", "+ 1\\times 10^{-18}",
                       "- 2^{-60}"])
    return f"{text} {term}"


@changing
def exact_rounded(gold: str, rng: random.Random) -> str | None:
    """``\\pi`` -> ``3.141593``, ``\\frac13`` -> ``0.333333``: a decimal for an exact gold it does not equal."""
    text = core(gold)
    if HAS_DECIMAL.search(text) or not is_bare_value(text):
        return None  # a decimal gold states its own precision
    value = scalar(text)
    if value is None or value.imag:
        return None
    places = rng.choice([2, 3, 4, 6, 6, 6, 8, 10])
    exact = _rational(text)
    rounded = f"{value.real:.{places}f}"
    if exact is not None:
        return rounded if Fraction(rounded) != exact else None
    if abs(float(rounded) - value.real) <= 1e-12 * max(1.0, abs(value.real)):
        return None  # \sqrt{4}: the "irrational" is a whole number
    return rounded


def _rational(text: str) -> Fraction | None:
    """The exact value of an integer or a fraction of integers, else None."""
    match = re.fullmatch(r"(-?)\\[dt]?frac\{?(\d+)\}?\{?(\d+)\}?", text.replace(" ", "")) or re.fullmatch(
        r"(-?)(\d+)/(\d+)", text.replace(" ", ""))
    if match:
        return Fraction(int(match.group(2)), int(match.group(3))) * (-1 if match.group(1) else 1)
    number = plain_integer(text)
    return None if number is None else Fraction(number)


@changing
def decimal_rounded_coarser(gold: str, rng: random.Random) -> str | None:
    """``3.75`` -> ``3.8``: a decimal gold rounded to fewer places than it states."""
    text = core(gold)
    number = plain_number(text)
    if number is None or "." not in text:
        return None
    places = len(text.split(".")[1])
    if places < 2:
        return None
    coarser = f"{float(number):.{rng.randrange(0, places)}f}"
    return coarser if Fraction(coarser) != number else None


@changing
def repeating_bar_added(gold: str, rng: random.Random) -> str | None:
    """``0.25`` -> ``0.2\\overline{5}``: the last digit (5 to 8) made to repeat.

    From 5 up the repetition rounds the stated last digit up, so the mutant differs even at
    the gold's precision (``0.2\\overline{3}`` might be what ``0.23`` approximates).
    """
    text = core(gold)
    if plain_number(text) is None or not re.search(r"\.\d*[5-8]$", text):
        return None
    return text[:-1] + rng.choice(["\\overline{", "\\dot{"]) + text[-1] + "}"


@changing
def whole_powered(gold: str, rng: random.Random) -> str | None:
    """``42^2``, ``(x+1)^{3}``: the whole gold raised to a power."""
    text = core(gold)
    if not is_expression(text):
        return None
    power = rng.choice(["2", "{2}", "3", "{-1}", "{10}"])
    base = text if plain_number(text) is not None and not text.startswith("-") else f"({text})"
    return _checked(text, f"{base}^{power}")


@changing
def factorial_symbol(gold: str, rng: random.Random) -> str | None:
    """``42!``: the factorial (``!!`` the double factorial) of a whole number that is not its own."""
    text = core(gold)
    number = plain_integer(text)
    if number is None or not 0 <= number <= 170:
        return None
    mark = rng.choice(["!", "!", "!!"])
    return None if number <= (3 if mark == "!!" else 2) and number != 0 else f"{text}{mark}"


@changing
def function_applied(gold: str, rng: random.Random) -> str | None:
    """``\\ln 42``, ``\\sqrt{42}``: a function of the gold, checked to differ."""
    text = core(gold)
    if not is_expression(text):
        return None
    template = rng.choice(["\\ln({})", "\\log({})", "\\sin({})", "\\exp({})", "\\sqrt{{{}}}", "\\sqrt[3]{{{}}}",
                           "\\cos({})"])
    return _checked(text, template.format(text))


@changing
def fraction_inverted(gold: str, rng: random.Random) -> str | None:
    """``\\frac{2}{3}`` -> ``\\frac{3}{2}``; ``42`` -> ``\\frac{1}{42}``: a reciprocal."""
    text = core(gold)
    fractions = list(_FRACTION.finditer(text))
    if fractions:
        match = rng.choice(fractions)
        swapped = f"\\frac{{{match.group(2)}}}{{{match.group(1)}}}"
        return _checked(text, text[: match.start()] + swapped + text[match.end() :])
    return _checked(text, f"\\frac{{1}}{{{text}}}") if is_bare_value(text) else None


@changing
def radical_toggled(gold: str, rng: random.Random) -> str | None:
    """``\\sqrt{2}`` -> ``2``; ``42`` -> ``\\sqrt{42}``: a square root dropped or added."""
    text = core(gold)
    roots = list(re.finditer(r"\\sqrt\{([^{}]*)\}", text))
    if roots:
        match = rng.choice(roots)
        return _checked(text, text[: match.start()] + braced(match.group(1)) + text[match.end() :])
    return _checked(text, f"\\sqrt{{{text}}}") if plain_number(text) is not None else None


@changing
def constant_dropped(gold: str, rng: random.Random) -> str | None:
    """``\\frac{\\pi}{6}`` -> ``\\frac{1}{6}``, ``2\\pi`` -> ``2``: a constant left out."""
    text = core(gold)
    spots = [m for m in re.finditer(r"\\pi(?![a-zA-Z])", text)]
    if not spots:
        return None
    match = rng.choice(spots)
    alone = text[match.start() - 1 : match.start()] in ("{", "") and text[match.end() : match.end() + 1] in ("}", "")
    return _checked(text, text[: match.start()] + ("1" if alone else "") + text[match.end() :])


@changing
def operation_swapped(gold: str, rng: random.Random) -> str | None:
    """``2x + 3`` -> ``2x - 3``, ``a \\cdot b`` -> ``a + b``: one operation replaced."""
    text = core(gold)
    if not is_expression(text):
        return None
    spots = [(m.start(), m.end(), "-" if m.group() == "+" else "+") for m in re.finditer(r"\+|\\cdot|\\times", text)]
    spots += [(m.start(), m.end(), "+") for m in re.finditer(r"(?<=[\w})\]])\s*-", text)]  # binary minus only
    candidates = [text[:start] + new + text[end:] for start, end, new in spots]
    rng.shuffle(candidates)
    return next((m for m in candidates if clearly_differs(text, m)), None)


@changing
def arithmetic_appended(gold: str, rng: random.Random) -> str | None:
    """``42 + 1``, ``2 \\cdot 42``, ``\\frac{42}{2}``: the gold in a bigger computation."""
    text = core(gold)
    if not is_expression(text):
        return None
    template = rng.choice(["{} + 1", "{} - 1", "2 \\cdot {}", "\\frac{{{}}}{{2}}", "{} \\cdot 10", "0 \\cdot {}"])
    return _checked(text, template.format(text if single_term(text) else f"({text})"))


@changing
def power_of_ten_scaled(gold: str, rng: random.Random) -> str | None:
    """``42 \\times 10^{3}``: scientific notation that moves the value by powers of ten."""
    text = core(gold)
    if not single_term(text) or not is_bare_value(text):
        return None
    exponent = rng.choice([e for e in range(-6, 7) if e])
    times = rng.choice(["\\times", "\\cdot"])
    return _checked(text, f"{text} {times} 10^{{{exponent}}}")


@changing
def floor_or_ceiling_applied(gold: str, rng: random.Random) -> str | None:
    """``\\lfloor \\frac{7}{2} \\rfloor``: a whole number in place of a value that is not one."""
    text = core(gold)
    value = scalar(text)
    if value is None or value.imag or abs(value.real - round(value.real)) < 1e-9 or not is_bare_value(text):
        return None
    return rng.choice(["\\lfloor {} \\rfloor", "\\lceil {} \\rceil", "\\left\\lfloor {} \\right\\rfloor"]).format(text)


@changing
def absolute_value_of_negative(gold: str, rng: random.Random) -> str | None:
    """``|-4|`` for ``-4``: the absolute value of a negative gold."""
    text = core(gold)
    value = scalar(text)
    if value is None or value.imag or value.real > -1e-9 or not is_bare_value(text):
        return None
    return rng.choice(["|{}|", "\\left|{}\\right|", "\\lvert {} \\rvert", "\\abs{{{}}}"]).format(text)


@changing
def modulo_taken(gold: str, rng: random.Random) -> str | None:
    """``42 \\bmod 5``: a remainder, smaller than the whole-number gold."""
    text = core(gold)
    number = plain_integer(text)
    if number is None or number < 2:
        return None
    modulus = rng.randint(2, min(number, 1000))
    operator = rng.choice(["\\bmod", "\\mod", "\\operatorname{mod}"])
    return f"{text} {operator} {modulus}"


@changing
def binomial_taken(gold: str, rng: random.Random) -> str | None:
    """``\\binom{42}{2}``: a binomial coefficient of the gold (never one equal to it)."""
    text = core(gold)
    number = plain_integer(text)
    if number is None or not 3 <= number <= 10**6:
        return None
    k = rng.choice([k for k in (2, 3) if k < number and math.comb(number, k) != number] or [0])
    if not k:
        return None
    return rng.choice(["\\binom{#}{K}", "{# \\choose K}", "\\dbinom{#}{K}"]).replace("#", text).replace("K", str(k))


@changing
def function_value_given(gold: str, rng: random.Random) -> str | None:
    """``f(42)``: the value of an unknown function at the gold is not the gold (``f(0)`` is not 0)."""
    text = core(gold)
    if not (value_like(text) and (is_expression(text) or plain_number(text) is not None)):
        return None
    name = rng.choice([n for n in "fghPF" if n not in text])
    return f"{name}({text})" if rng.random() < 0.8 else f"{name}\\left({text}\\right)"
