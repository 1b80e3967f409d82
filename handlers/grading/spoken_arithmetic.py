"""The value of a short arithmetic phrase a reply says in words or signs: ``43 times 1``, ``84 divided by 2``.

A sentence after the final box such as ``It's 43 times 1.`` gives a second value: its numbers are operands, so
the rules that look for a number other than the box's leave it alone, yet a reader computes 43. Only exact
arithmetic on plain numbers is done (``+ - * /``, powers with small integer exponents), with fractions, so a
value is either known exactly or not at all.
"""

from __future__ import annotations

import ast
import operator
import re
from fractions import Fraction
from typing import Final

_WORDS: Final = (
    (re.compile(r"\b(?:multiplied\s+by|times)\b|\\times|\\cdot|[\u00d7\u00b7]", re.IGNORECASE), "*"),
    (re.compile(r"\b(?:divided\s+by|over)\b|\\div|\u00f7", re.IGNORECASE), "/"),
    (re.compile(r"\bplus\b", re.IGNORECASE), "+"),
    (re.compile(r"\b(?:minus|less)\b|\u2212", re.IGNORECASE), "-"),
    (re.compile(r"\bsquared\b", re.IGNORECASE), "**2"),
    (re.compile(r"\bcubed\b", re.IGNORECASE), "**3"),
    (re.compile(r"\^"), "**"),
)
_ONLY_ARITHMETIC: Final = re.compile(r"[\d\s.+\-*/()]+")
_OPERATOR: Final = re.compile(r"\d\s*(?:\*\*|[-+*/])\s*[\d(]")
DIGIT_GROUP_COMMA: Final = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
"""The comma between groups of three digits (``1,940``): dropped, it leaves the number it groups."""
_MAX_EXPONENT: Final = 64
_MAX_CHARACTERS: Final = 80
_MAX_BITS: Final = 4096

_BINARY: Final = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def spoken_value(phrase: str) -> Fraction | None:
    """The exact value of ``phrase`` when it is arithmetic on numbers with at least one operator, else ``None``.

    ``43 times 1`` is 43, ``$84 \\div 2$`` is 42, ``6 squared`` is 36; ``6 times the radius``, ``43`` alone
    (no operation) and anything longer than a short phrase are ``None``.
    """
    if len(phrase) > _MAX_CHARACTERS:
        return None
    text = DIGIT_GROUP_COMMA.sub("", phrase.replace("$", " ").replace("{", "(").replace("}", ")"))
    for pattern, symbol in _WORDS:
        text = pattern.sub(f" {symbol} ", text)
    text = text.replace("* *", "**").strip()
    if not _ONLY_ARITHMETIC.fullmatch(text) or not _OPERATOR.search(text):
        return None
    try:
        tree = ast.parse(text, mode="eval")
        return _evaluated(tree.body)
    except (SyntaxError, ZeroDivisionError, ValueError, OverflowError, RecursionError):
        return None


def _evaluated(node: ast.expr) -> Fraction | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return Fraction(str(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _evaluated(node.operand)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.BinOp):
        left, right = _evaluated(node.left), _evaluated(node.right)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Pow):
            if right.denominator != 1 or abs(right) > _MAX_EXPONENT:
                return None
            size = max(left.numerator.bit_length(), left.denominator.bit_length())
            if size * abs(int(right)) > _MAX_BITS:
                return None  # "((9^64)^64)^64": nested powers outgrow any answer
            return left ** int(right)
        combine = _BINARY.get(type(node.op))
        return None if combine is None else combine(left, right)
    return None


_PLAIN_NUMBER: Final = re.compile(r"[-+]?\d+(?:\.\d+)?")
_PLAIN_FRACTION: Final = re.compile(r"(?P<sign>[-+]?)\\[dt]?frac\{(?P<top>\d+)\}\{(?P<bottom>\d+)\}")


def plain_number(answer: str) -> Fraction | None:
    """The value of an answer that is a plain number or fraction (``42``, ``-0.5``, ``\\frac{1}{2}``), else ``None``."""
    text = re.sub(r"\s+|\$", "", answer).replace(",", "") if re.fullmatch(r"[\s$\d,.+-]+", answer) else \
        re.sub(r"\s+|\$", "", answer)
    if _PLAIN_NUMBER.fullmatch(text):
        return Fraction(text)
    fraction = _PLAIN_FRACTION.fullmatch(text)
    if fraction is None or int(fraction["bottom"]) == 0:
        return None
    value = Fraction(int(fraction["top"]), int(fraction["bottom"]))
    return -value if fraction["sign"] == "-" else value


_SMALL_NUMBERS: Final = {word: value for value, word in enumerate((
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"))}
_TENS: Final = {word: 10 * value for value, word in enumerate((
    "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"), start=2)}
_SCALES: Final = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_NUMBER_WORD: Final = re.compile(r"[a-z]+", re.IGNORECASE)
_OVER: Final = re.compile(r"\s+(?:over|divided\s+by)\s+", re.IGNORECASE)


def number_in_words(text: str) -> Fraction | None:
    """The value of a number written out in English (``two hundred ninety-three``, ``forty-two``, ``minus
    seven``, ``one over three``), else ``None``: every word must be part of the number."""
    parts = _OVER.split(text.strip())
    if len(parts) == 2:  # a numerator and a denominator
        top, bottom = number_in_words(parts[0]), number_in_words(parts[1])
        return top / bottom if top is not None and bottom else None
    if len(parts) != 1:
        return None
    words = [word.lower() for word in _NUMBER_WORD.findall(text)]
    if not words or _NUMBER_WORD.sub("", text).strip(" -,") or len(words) > _MAX_NUMBER_WORDS:
        return None
    sign = -1 if words[0] in {"minus", "negative"} else 1
    words = words[1:] if sign < 0 else words
    total, group, seen, last = 0, 0, False, ""
    for word in words:
        if word == "and" and seen:
            continue
        if word in _SMALL_NUMBERS:
            if last in _SMALL_NUMBERS or (last in _TENS and _SMALL_NUMBERS[word] >= 10):  # "two two", "forty twelve"
                return None
            group += _SMALL_NUMBERS[word]
        elif word in _TENS:
            if last in _SMALL_NUMBERS or last in _TENS:
                return None
            group += _TENS[word]
        elif word == "hundred" and seen:
            group *= 100
        elif word in _SCALES and seen:
            total, group = total + group * _SCALES[word], 0
        else:
            return None
        seen, last = True, word
    return Fraction(sign * (total + group)) if seen else None


_MAX_NUMBER_WORDS: Final = 12
