"""Meaning-changing operators on answers that are not a bare number: matrices, inequalities,
word answers, and amounts with a unit, a currency, a percent or degrees.
"""

from __future__ import annotations

import random
import re
from typing import Final

from engine.testing.grading_adversary.registry import changing
from engine.testing.grading_adversary.shapes import core, plain_number
from engine.testing.grading_adversary.values import clearly_differs, same_value

_MATRIX: Final = re.compile(r"(\\begin\{([pbv]?matrix)\})(.*)(\\end\{\2\})", re.DOTALL)
_INEQUALITY: Final = re.compile(r"\\(?:leq|geq|le|ge|lt|gt)(?![a-zA-Z])|<=|>=|<|>")
_FLIPPED: Final = {
    "<": ["\\le", ">"], ">": ["\\ge", "<"], "\\lt": ["\\le", "\\gt"], "\\gt": ["\\ge", "\\lt"],
    "\\le": ["<", "\\ge"], "\\leq": ["<", "\\geq"], "\\ge": [">", "\\le"], "\\geq": [">", "\\leq"],
    "<=": ["<", ">="], ">=": [">", "<="],
}
_OPPOSITES: Final = {
    "even": "odd", "odd": "even", "yes": "no", "no": "yes", "true": "false", "false": "true",
    "east": "west", "west": "east", "north": "south", "south": "north", "increasing": "decreasing",
    "decreasing": "increasing", "positive": "negative", "negative": "positive", "always": "never",
    "never": "always", "ellipse": "hyperbola", "hyperbola": "ellipse", "parabola": "circle", "circle": "parabola",
    "monday": "tuesday", "tuesday": "wednesday", "wednesday": "thursday", "thursday": "friday",
    "friday": "saturday", "saturday": "sunday", "sunday": "monday", "convergent": "divergent",
    "divergent": "convergent",
}
_WORD: Final = re.compile(r"(\\(?:text|textbf|mathrm|mbox)\{\s*)([A-Za-z]+)(\s*\})")
_AMOUNT: Final = re.compile(
    r"(\\\$\s*)?(-?\d+(?:\.\d+)?)(\s*(?:\\%|\^\s*\{?\\circ\}?|°|\\(?:text|mbox|mathrm)\{.*\}.*))?"
)
"""A number with a currency before it or a percent, degrees or a unit in text after it."""


@changing
def matrix_entries_swapped(gold: str, rng: random.Random) -> str | None:
    """Two different entries of a matrix or column vector exchanged."""
    text = core(gold)
    match = _MATRIX.fullmatch(text)
    if match is None:
        return None
    rows = [row.split("&") for row in match.group(3).split("\\\\")]
    cells = [(r, c) for r, row in enumerate(rows) for c in range(len(row))]
    pairs = [(a, b) for i, a in enumerate(cells) for b in cells[i + 1 :]
             if rows[a[0]][a[1]].strip() != rows[b[0]][b[1]].strip()
             and same_value(rows[a[0]][a[1]], rows[b[0]][b[1]]) is False]
    if not pairs:
        return None
    (r1, c1), (r2, c2) = rng.choice(pairs)
    rows[r1][c1], rows[r2][c2] = rows[r2][c2], rows[r1][c1]
    return match.group(1) + " \\\\ ".join(" & ".join(c.strip() for c in row) for row in rows) + match.group(4)


@changing
def inequality_flipped(gold: str, rng: random.Random) -> str | None:
    """``x \\ge 5`` -> ``x > 5`` or ``x \\le 5``: strictness or direction of one inequality changed."""
    text = core(gold)
    spots = list(_INEQUALITY.finditer(text))
    if not spots or "\\text" in text:
        return None
    match = rng.choice(spots)
    return f"{text[: match.start()].rstrip()} {rng.choice(_FLIPPED[match.group()])} {text[match.end() :].lstrip()}"


@changing
def word_answer_swapped(gold: str, rng: random.Random) -> str | None:
    """``\\text{even}`` -> ``\\text{odd}``: a word answer replaced by its opposite (or the next day)."""
    match = _WORD.fullmatch(core(gold))
    if match is None or match.group(2).lower() not in _OPPOSITES:
        return None
    word = match.group(2)
    other = _OPPOSITES[word.lower()]
    other = other.capitalize() if word[0].isupper() else other
    return match.group(1) + other + match.group(3)


@changing
def amount_digit_changed(gold: str, rng: random.Random) -> str | None:
    """``\\$18.90`` -> ``\\$18.80``, ``45^\\circ`` -> ``46^\\circ``: the number of an amount with a unit changed."""
    match = _AMOUNT.fullmatch(core(gold))
    if match is None or not (match.group(1) or match.group(3)):
        return None
    number = match.group(2)
    spots = [i for i, char in enumerate(number) if char.isdigit()]
    candidates = [number[:i] + d + number[i + 1 :] for i in spots for d in "0123456789" if d != number[i]]
    rng.shuffle(candidates)
    changed = next((c for c in candidates if plain_number(c) is not None and not re.match(r"-?0\d", c)
                    and clearly_differs(number, c)), None)
    if changed is None:
        return None
    return (match.group(1) or "") + changed + (match.group(3) or "")
