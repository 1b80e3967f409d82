"""apollo's math grader: normalise, parse, compare; math-verify is one stage.

1. **Normalise** (:mod:`handlers.grading.normalise`): Unicode, Python syntax, digit
   grouping, units, ``x = v`` and one-variable inequalities become plain LaTeX.
2. **Parse** (:mod:`handlers.grading.reading`) the *whole* normalised text with
   math-verify's LaTeX parser (``latex2sympy2_extended``). A parser that stops early raises, so a reading never
   covers only a prefix: ``7 - \\frac{1}{\\mathrm{e}}`` is read whole or not at all.
   The bounds of :mod:`handlers.grading.guards` are checked before and after parsing.
3. **Compare** with ``math_verify.verify`` (numeric, symbolic, sets, intervals,
   matrices). Text that does not parse as math (``\\text{Evelyn}``) is compared as
   case-folded text. A percentage matches the same number or its hundredth.

A score of 1 needs positive evidence: anything refused, unreadable or timed out is 0,
and the grade's ``detail`` says what each side was read as.

``math_verify.verify`` guards itself with ``signal.alarm``, which only works in a
process's main thread; elsewhere it runs without that timer and the guards alone bound
the work. The engine calls this in a pool worker's main thread.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Final

from handlers.grading.guards import check_text
from handlers.grading.normalise import Normalised
from handlers.grading.reading import (
    PLAIN_NUMBER,
    Reading,
    mentions_complex,
    prepare,
    read_normalised,
    read_prepared,
    verify_values,
)
from handlers.ports import Grade

METHOD: Final = "math"
_NEEDS_GUARD: Final = re.compile(r"[!^]|binom|choose")
_SPACE_NOT_BETWEEN_DIGITS: Final = re.compile(r"(?<!\d)\s+|\s+(?!\d)")


def grade_math(answer: str, ground_truth: str, *, timeout_seconds: int = 5) -> Grade:
    """Score ``answer`` against ``ground_truth`` by the three stages of the module docstring.

    Never raises: a failure inside a library on strange input scores 0 and names it.
    """
    try:
        return _grade(answer, ground_truth, timeout_seconds)
    except Exception as exc:  # noqa: BLE001 - a grade with the reason beats a crashed worker
        detail = f"not graded: the grader failed on this input ({type(exc).__name__})"
        return Grade(score=0.0, method=METHOD, detail=detail)


def _grade(answer: str, ground_truth: str, timeout_seconds: int) -> Grade:
    pred_text, gold_text = prepare(answer), prepare(ground_truth)
    if _plainly_identical(pred_text, gold_text):
        shown = Reading(text=pred_text.text, kind="as written", percent=pred_text.percent).describe()
        detail = f"answer read as {shown}; ground truth read as the same text; equal: same text"
        return Grade(score=1.0, method=METHOD, detail=detail)
    complex_numbers = mentions_complex(answer) or mentions_complex(ground_truth)
    pred = read_prepared(pred_text, complex_numbers)
    gold = read_prepared(gold_text, complex_numbers)
    verdict, score = _compare(pred, gold, timeout_seconds, complex_numbers)
    detail = (
        f"answer read as {pred.describe()}; ground truth read as {gold.describe()}; {verdict}"
    )
    return Grade(score=score, method=METHOD, detail=detail)


def _plainly_identical(pred: Normalised | str, gold: Normalised | str) -> bool:
    """The same normalised text, with nothing a guard must look at first (powers, factorials)."""
    if isinstance(pred, str) or isinstance(gold, str) or pred.percent != gold.percent:
        return False
    if pred.name != gold.name or _different_units(pred.unit, gold.unit):
        return False
    same = bool(pred.text) and _squash(pred.text) == _squash(gold.text)
    return same and not _NEEDS_GUARD.search(pred.text) and check_text(pred.text) is None


def _compare(pred: Reading, gold: Reading, timeout_seconds: int, complex_numbers: bool) -> tuple[str, float]:
    if gold.refused:
        return f"not graded: the ground truth is {gold.refused}", 0.0
    if pred.refused:
        return f"not equal: the answer is {pred.refused}", 0.0
    if _different_units(pred.unit, gold.unit):
        return f"not equal: different units ({pred.unit} vs {gold.unit})", 0.0
    pred, gold = _as_equations_where_needed(pred, gold, complex_numbers)
    if _squash(pred.text) == _squash(gold.text) and pred.percent == gold.percent:
        return "equal: same text", 1.0
    if pred.value is None or gold.value is None:
        if pred.kind == gold.kind == "text" and _squash(pred.text).casefold() == _squash(gold.text).casefold():
            return "equal: same text", 1.0
        return "not equal: compared as text", 0.0
    if (pred.kind == "equation") != (gold.kind == "equation"):
        return "not equal: an equation against a value", 0.0
    if _set_against_sequence(pred.text, gold.text):
        return "not equal: a set against an ordered pair or interval", 0.0
    pred, gold = _list_in_brackets_where_needed(pred, gold, complex_numbers)
    decimals = _both_decimals(pred, gold)
    if decimals is not None:
        return ("equal: same decimal", 1.0) if decimals else ("not equal", 0.0)
    if _equal(pred, gold, timeout_seconds):
        how = "numeric" if pred.kind == gold.kind == "number" else "symbolic"
        return f"equal: {how}", 1.0
    return "not equal", 0.0


def _as_equations_where_needed(pred: Reading, gold: Reading, complex_numbers: bool) -> tuple[Reading, Reading]:
    """``y = 2x + 1`` against an equation, or ``x = 4`` against ``y = 4``, compare as equations."""
    names_differ = bool(pred.name and gold.name and pred.name != gold.name)
    if pred.equation and (gold.kind == "equation" or names_differ):
        pred = read_normalised(pred.equation, pred.percent, complex_numbers)
    if gold.equation and (pred.kind == "equation" or names_differ):
        gold = read_normalised(gold.equation, gold.percent, complex_numbers)
    return pred, gold


def _list_in_brackets_where_needed(pred: Reading, gold: Reading, complex_numbers: bool) -> tuple[Reading, Reading]:
    """A bare list (``1, 2``) against a pair or interval is read in the other side's brackets,
    so its order counts."""
    for bare, other in ((pred, gold), (gold, pred)):
        brackets = other.text.strip()[:1] + other.text.strip()[-1:]
        plain_list = bare.kind == "set" and not any(mark in bare.text for mark in "=;([\\{")
        if plain_list and other.kind in ("tuple", "interval") and brackets[:1] in "([":
            wrapped = read_normalised(f"{brackets[0]}{bare.text}{brackets[1]}", bare.percent, complex_numbers)
            if wrapped.value is not None:
                return (wrapped, gold) if bare is pred else (pred, wrapped)
    return pred, gold


def _both_decimals(pred: Reading, gold: Reading) -> bool | None:
    """Two numbers written as decimals are equal only digit for digit (``1.50`` is ``1.5``,
    ``0.1234567`` is not ``0.1234568``); ``None`` when either is not a plain decimal."""
    if not (PLAIN_NUMBER.fullmatch(pred.text) and PLAIN_NUMBER.fullmatch(gold.text)):
        return None
    preds, golds = [Decimal(pred.text)], [Decimal(gold.text)]
    if pred.percent and not gold.percent:
        preds.append(preds[0] / 100)
    if gold.percent and not pred.percent:
        golds.append(golds[0] / 100)
    return any(p == g for p in preds for g in golds)


def _equal(pred: Reading, gold: Reading, timeout_seconds: int) -> bool:
    """math-verify's comparison, trying a percentage as the number and as its hundredth."""
    import sympy

    golds, preds = [gold.value], [pred.value]
    if gold.percent and not pred.percent:
        golds.append(sympy.Mul(gold.value, sympy.Rational(1, 100)))
    if pred.percent and not gold.percent:
        preds.append(sympy.Mul(pred.value, sympy.Rational(1, 100)))
    return verify_values(golds, preds, timeout_seconds)


def _different_units(first: str, second: str) -> bool:
    return bool(first and second and first.casefold() != second.casefold())


def _set_against_sequence(pred: str, gold: str) -> bool:
    """``\\{1, 2\\}`` is a set and ``(1, 2)`` a pair or interval: never the same thing."""
    starts = (pred.lstrip()[:2], gold.lstrip()[:2])
    sets = [start == "\\{" for start in starts]
    sequences = [start[:1] in "([" and start != "" for start in starts]
    return (sets[0] and sequences[1]) or (sets[1] and sequences[0])


def _squash(text: str) -> str:
    """``text`` without whitespace, except between digits (``3 4`` is not ``34``)."""
    return _SPACE_NOT_BETWEEN_DIGITS.sub("", text)
