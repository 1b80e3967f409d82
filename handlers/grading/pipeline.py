"""apollo's math grader: normalise, parse, compare; math-verify is one stage.

1. **Normalise** (:mod:`handlers.grading.normalise`): Unicode, Python syntax, digit
   grouping, units, ``x = v`` and one-variable inequalities become plain LaTeX.
2. **Parse** the *whole* normalised text with math-verify's LaTeX parser
   (``latex2sympy2_extended``). A parser that stops early raises, so a reading never
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
import threading
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any, Final

from handlers.grading.guards import TooCostly, check_raw, check_text, check_tree
from handlers.grading.normalise import Normalised, normalise_answer
from handlers.ports import Grade

METHOD: Final = "math"
_SHOWN_CHARS: Final = 80
_WORD: Final = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")
_SPACED_DIGITS: Final = re.compile(r"\d\s+\d")
_BASE_SUBSCRIPT: Final = re.compile(r"\d_\{?\d")
_UNICODE_TEXT: Final = re.compile(r"[^\x00-\x7f]")
_NEEDS_GUARD: Final = re.compile(r"[!^]|binom|choose")
_PLAIN_NUMBER: Final = re.compile(r"[-+]?(?:\d+(?:\.\d+)?|\.\d+)")
_PLAIN_FRACTION: Final = re.compile(r"(-?)(?:\\frac\{(\d+)\}\{(\d+)\}|(\d+)/(\d+))")
_ENVIRONMENT: Final = re.compile(r"\\(?:begin|end)\{\w+\*?\}")
_APPROXIMATELY: Final = re.compile(r"\\(?:approx|sim|simeq|ldots|cdots|dots|dotsc|dotsb)(?![A-Za-z])|\.\.\.|'")
_IMAGINARY_UNIT: Final = re.compile(r"(?<![A-Za-z\\])i(?![A-Za-z])")
_SPACE_NOT_BETWEEN_DIGITS: Final = re.compile(r"(?<!\d)\s+|\s+(?!\d)")


@dataclass(frozen=True)
class Reading:
    """What one side of a comparison was read as."""

    text: str
    kind: str
    value: Any = None
    percent: bool = False
    refused: str | None = None
    equation: str = ""
    """The whole equation when a name on its left was dropped (``y = 2x + 1``)."""
    name: str = ""
    unit: str = ""

    def describe(self) -> str:
        shown = self.text if self.value is None else _printable(self.value)
        if len(shown) > _SHOWN_CHARS:
            shown = shown[:_SHOWN_CHARS] + "..."
        suffix = "%" if self.percent else ""
        return f"{shown}{suffix} ({self.kind})"


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
    pred_text, gold_text = _prepare(answer), _prepare(ground_truth)
    if _plainly_identical(pred_text, gold_text):
        shown = Reading(text=pred_text.text, kind="as written", percent=pred_text.percent).describe()
        detail = f"answer read as {shown}; ground truth read as the same text; equal: same text"
        return Grade(score=1.0, method=METHOD, detail=detail)
    complex_numbers = _mentions_complex(answer) or _mentions_complex(ground_truth)
    pred = _read_prepared(pred_text, complex_numbers)
    gold = _read_prepared(gold_text, complex_numbers)
    verdict, score = _compare(pred, gold, timeout_seconds, complex_numbers)
    detail = (
        f"answer read as {pred.describe()}; ground truth read as {gold.describe()}; {verdict}"
    )
    return Grade(score=score, method=METHOD, detail=detail)


def read_answer(text: str, *, complex_numbers: bool = False) -> Reading:
    """Normalise and parse ``text``; a refusal or parse failure is recorded, never raised."""
    return _read_prepared(_prepare(text), complex_numbers)


def _prepare(text: str) -> Normalised | str:
    """``text`` normalised, or why it cannot be an answer at all."""
    problem = check_raw(text) if text.strip() else "empty"
    return problem or normalise_answer(text)


def _read_prepared(prepared: Normalised | str, complex_numbers: bool) -> Reading:
    if isinstance(prepared, str):
        return Reading(text="", kind="refused", refused=prepared)
    reading = read_normalised(prepared.text, prepared.percent, complex_numbers)
    return replace(reading, equation=prepared.equation, name=prepared.name, unit=prepared.unit)


def _plainly_identical(pred: Normalised | str, gold: Normalised | str) -> bool:
    """The same normalised text, with nothing a guard must look at first (powers, factorials)."""
    if isinstance(pred, str) or isinstance(gold, str) or pred.percent != gold.percent:
        return False
    if pred.name != gold.name or _different_units(pred.unit, gold.unit):
        return False
    return bool(pred.text) and _squash(pred.text) == _squash(gold.text) and not _NEEDS_GUARD.search(pred.text) \
        and check_text(pred.text) is None


def read_normalised(text: str, percent: bool, complex_numbers: bool) -> Reading:
    """Parse already normalised ``text`` whole, within the bounds of the guards."""
    problem = check_text(text) or (None if text else "empty")
    if problem:
        return Reading(text=text[:_SHOWN_CHARS], kind="refused", refused=problem)
    if _reads_as_text(text):
        return Reading(text=text, kind="text", percent=percent)
    try:
        text = _settle_chain(text, complex_numbers)
        value = _parse(text, complex_numbers)
        check_tree(value)
    except TooCostly as exc:
        return Reading(text=text, kind="refused", refused=str(exc))
    except Exception:  # the parser raises many types on text it cannot read whole  # noqa: BLE001
        return Reading(text=text, kind="text", percent=percent)
    if _not_a_value(value):
        return Reading(text=text, kind="text", percent=percent)
    return Reading(text, _kind(value), value, percent)


def _reads_as_text(text: str) -> bool:
    """Words, spaced digits (``3 4``), base subscripts (``204_5``), approximations, ellipses
    and primes are not read as math (the parser would drop the ellipsis or the prime)."""
    words = _ENVIRONMENT.sub("", text)
    return bool(
        _WORD.search(words)
        or _SPACED_DIGITS.search(text)
        or _BASE_SUBSCRIPT.search(text)
        or _UNICODE_TEXT.search(text)
        or _APPROXIMATELY.search(text)
    )


def _settle_chain(text: str, complex_numbers: bool) -> str:
    """``z = 1 + 1 = 2`` is its last part when every part after the name is equal;
    a chain that does not hold (``x = 5+5+1 = 7 = 11``) is refused."""
    parts = text.split("=")
    if len(parts) < 3 or any(mark in text for mark in ",;<>"):
        return text
    values = [_parse(part, complex_numbers) for part in parts[1:]]
    for value in values:
        check_tree(value)
    if not all(_verify([values[-1]], [value], 5) for value in values[:-1]):
        msg = "an equality chain that does not hold"
        raise TooCostly(msg)
    return parts[-1]


def _parse(text: str, complex_numbers: bool) -> Any:
    import sympy

    if _PLAIN_NUMBER.fullmatch(text):
        return sympy.Number(text)
    fraction = _PLAIN_FRACTION.fullmatch(text)
    if fraction:
        sign, top, bottom = (part for part in fraction.groups() if part is not None)
        return (-1 if sign else 1) * sympy.Rational(int(top), int(bottom))
    from latex2sympy2_extended.latex2sympy2 import NormalizationConfig, latex2sympy

    config = NormalizationConfig(
        basic_latex=True, units=False, malformed_operators=True, nits=True, boxed="all",
        equations=False,
    )
    value = latex2sympy(
        text, is_real=not complex_numbers, convert_degrees=False, normalization_config=config,
    )
    if complex_numbers and hasattr(value, "xreplace"):
        value = value.xreplace({s: sympy.I for s in getattr(value, "free_symbols", ()) if s.name == "i"})
    return value


def _mentions_complex(text: str) -> bool:
    from math_verify.grader import should_treat_as_complex

    return should_treat_as_complex(text) or bool(_IMAGINARY_UNIT.search(text))


def _not_a_value(value: Any) -> bool:
    """``12:00`` parses as 12/0; an undefined value is no evidence of anything."""
    import sympy

    atoms = getattr(value, "atoms", None)
    if atoms is None:
        return True
    return bool(atoms(sympy.zoo, sympy.nan) if not hasattr(value, "shape") else False)


def _printable(value: Any) -> str:
    try:
        return str(value)
    except ValueError:  # an integer past Python's 4300-digit printing limit
        return "(a number too long to print)"


def _kind(value: Any) -> str:
    import sympy

    kinds = (
        (sympy.Number, "number"), (sympy.NumberSymbol, "number"), (sympy.Interval, "interval"),
        (sympy.Union, "intervals"), (sympy.FiniteSet, "set"), (sympy.Tuple, "tuple"),
        (sympy.Eq, "equation"), (sympy.Rel, "inequality"), (sympy.And, "inequalities"),
        (sympy.MatrixBase, "matrix"),
    )
    for cls, name in kinds:
        if isinstance(value, cls):
            return name
    if getattr(value, "is_number", False):
        return "number"
    return "expression"


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
    if not (_PLAIN_NUMBER.fullmatch(pred.text) and _PLAIN_NUMBER.fullmatch(gold.text)):
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
    return _verify(golds, preds, timeout_seconds)


def _verify(golds: list[Any], preds: list[Any], timeout_seconds: int) -> bool:
    import math_verify

    timeout = timeout_seconds if threading.current_thread() is threading.main_thread() else None
    return bool(
        math_verify.verify(
            golds, preds, float_rounding=6, strict=True, allow_set_relation_comp=True,
            timeout_seconds=timeout,
        )
    )


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
