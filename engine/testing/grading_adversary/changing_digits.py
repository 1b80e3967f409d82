"""Meaning-changing operators on the digits of the gold.

Typos (a digit changed, inserted, deleted or swapped, the point moved) are checked with
the adversary's own evaluator: a change that keeps the value (``0.50`` -> ``0.5``) is not
a mutant. Layout between digits (``4 \\quad 2``, ``4_2``, ``4^2``) is applied where it
cannot be read as a thousands separator (never before a group of three digits).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator

from engine.testing.grading_adversary.registry import changing
from engine.testing.grading_adversary.shapes import core, plain_integer
from engine.testing.grading_adversary.values import clearly_differs

_DIGIT = re.compile(r"\d")
_NUMERAL = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d.])")
_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
_TRIES = 8


def _first_that_differs(text: str, candidates: Iterator[str], rng: random.Random) -> str | None:
    """A candidate whose value clearly differs from ``text``'s, tried in a shuffled order."""
    pool = list(dict.fromkeys(candidates))
    rng.shuffle(pool)
    return next((mutant for mutant in pool[:_TRIES] if mutant != text and clearly_differs(text, mutant)), None)


def _edits(text: str, edit: Callable[[str, int], Iterator[str]]) -> Iterator[str]:
    for match in _DIGIT.finditer(text):
        yield from edit(text, match.start())


@changing
def digit_changed(gold: str, rng: random.Random) -> str | None:
    """``42`` -> ``47``: one digit replaced by another."""
    text = core(gold)
    return _first_that_differs(text, _edits(text, lambda t, i: (
        t[:i] + d + t[i + 1 :] for d in "0123456789" if d != t[i])), rng)


@changing
def digit_inserted(gold: str, rng: random.Random) -> str | None:
    """``42`` -> ``472``: one digit added inside or after a numeral."""
    text = core(gold)
    return _first_that_differs(text, _edits(text, lambda t, i: (
        t[: i + 1] + d + t[i + 1 :] for d in "123456789")), rng)


@changing
def digit_deleted(gold: str, rng: random.Random) -> str | None:
    """``427`` -> ``47``: one digit of a numeral of two or more digits removed."""
    text = core(gold)
    return _first_that_differs(text, _edits(text, lambda t, i: (
        iter([t[:i] + t[i + 1 :]]) if _in_long_numeral(t, i) else iter(()))), rng)


@changing
def digits_transposed(gold: str, rng: random.Random) -> str | None:
    """``42`` -> ``24``: two neighbouring, different digits swapped."""
    text = core(gold)
    return _first_that_differs(text, _edits(text, lambda t, i: (
        iter([t[:i] + t[i + 1] + t[i] + t[i + 2 :]]) if i + 1 < len(t) and t[i + 1].isdigit() else iter(()))), rng)


@changing
def decimal_point_moved(gold: str, rng: random.Random) -> str | None:
    """``42`` -> ``4.2``, ``0.25`` -> ``2.5``: the point put elsewhere in a numeral."""
    text = core(gold)
    numerals = [m for m in _NUMERAL.finditer(text) if len(m.group().replace(".", "")) > 1]
    candidates = []
    for match in numerals:
        digits = match.group().replace(".", "")
        for cut in range(1, len(digits)):
            moved = digits[:cut] + "." + digits[cut:]
            if moved != match.group():
                candidates.append(text[: match.start()] + moved + text[match.end() :])
    return _first_that_differs(text, iter(candidates), rng)


def _in_long_numeral(text: str, i: int) -> bool:
    return (i > 0 and text[i - 1].isdigit()) or (i + 1 < len(text) and text[i + 1].isdigit())


def _splits(gold: str) -> list[tuple[str, str]]:
    """Where a natural-number gold can be cut in two: never before a group of three digits."""
    text = core(gold)
    number = plain_integer(text)
    if number is None or number < 10 or text.startswith(("-", "0")):
        return []
    return [(text[:cut], text[cut:]) for cut in range(1, len(text)) if (len(text) - cut) % 3]


@changing
def subscript_digit(gold: str, rng: random.Random) -> str | None:
    """``42`` -> ``4_2``, ``4₂``: the tail of the number made a subscript."""
    splits = _splits(gold)
    if not splits:
        return None
    head, tail = rng.choice(splits)
    return rng.choice([f"{head}_{{{tail}}}", head + tail.translate(_SUBSCRIPTS)] +
                      ([f"{head}_{tail}"] if len(tail) == 1 else []))


@changing
def superscript_digit(gold: str, rng: random.Random) -> str | None:
    """``42`` -> ``4^2``, ``4²``: the tail of the number made an exponent."""
    number = plain_integer(core(gold))
    splits = [(h, t) for h, t in _splits(gold) if len(t) <= 3 and int(h) ** int(t) != number]
    if not splits:
        return None
    head, tail = rng.choice(splits)
    return rng.choice([f"{head}^{{{tail}}}", head + tail.translate(_SUPERSCRIPTS)] +
                      ([f"{head}^{tail}"] if len(tail) == 1 else []))


@changing
def base_subscript(gold: str, rng: random.Random) -> str | None:
    """``42`` -> ``42_8``: the numeral read in another base has another value."""
    text = core(gold)
    number = plain_integer(text)
    if number is None or number < 10 or text.startswith("-"):
        return None
    base = rng.choice([b for b in range(max(int(max(text)) + 1, 2), 17) if b != 10])
    return rng.choice([f"{text}_{{{base}}}", f"{text}_{{({base})}}"] + ([f"{text}_{base}"] if base < 10 else []))


def _layout(gold: str, rng: random.Random, spaces: list[str]) -> str | None:
    splits = _splits(gold)
    if not splits:
        return None
    head, tail = rng.choice(splits)
    return head + rng.choice(spaces) + tail


@changing
def wide_space_between_digits(gold: str, rng: random.Random) -> str | None:
    """``4 \\quad 2``: a wide space between digits separates two numbers."""
    return _layout(gold, rng, [" \\quad ", "\\quad ", "\\qquad ", "\\hspace{1em}", "\\hskip 1em ", "\\enspace "])


@changing
def narrow_space_between_digits(gold: str, rng: random.Random) -> str | None:
    """``4~2``, ``4\\ 2``, ``4\\;2``: a visible space that is not a thousands separator."""
    return _layout(gold, rng, ["~", "\\ ", "\\;", "\\:", "\\>", "\\,", "\\thinspace "])


@changing
def phantom_between_digits(gold: str, rng: random.Random) -> str | None:
    """``4\\phantom{0}2``: an invisible digit's width between digits."""
    return _layout(gold, rng, ["\\phantom{0}", "\\hphantom{0}", "\\phantom{00}", "\\hphantom{x}"])
