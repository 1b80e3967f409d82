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
from dataclasses import dataclass
from typing import Any, Final

from handlers.grading.guards import TooCostly, check_raw, check_text, check_tree
from handlers.grading.normalise import normalise_answer
from handlers.ports import Grade

METHOD: Final = "math"
_SHOWN_CHARS: Final = 80
_WORD: Final = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")
_SPACED_DIGITS: Final = re.compile(r"\d\s+\d")
_BASE_SUBSCRIPT: Final = re.compile(r"\d_\{?\d")
_UNICODE_TEXT: Final = re.compile(r"[^\x00-\x7f]")
_SPACE_NOT_BETWEEN_DIGITS: Final = re.compile(r"(?<!\d)\s+|\s+(?!\d)")


@dataclass(frozen=True)
class Reading:
    """What one side of a comparison was read as."""

    text: str
    kind: str
    value: Any = None
    percent: bool = False
    refused: str | None = None

    def describe(self) -> str:
        shown = self.text if self.value is None else str(self.value)
        if len(shown) > _SHOWN_CHARS:
            shown = shown[:_SHOWN_CHARS] + "..."
        suffix = "%" if self.percent else ""
        return f"{shown}{suffix} ({self.kind})"


def grade_math(answer: str, ground_truth: str, *, timeout_seconds: int = 5) -> Grade:
    """Score ``answer`` against ``ground_truth`` by the three stages of the module docstring."""
    pred, gold = read_answer(answer), read_answer(ground_truth)
    verdict, score = _compare(pred, gold, timeout_seconds)
    detail = (
        f"answer read as {pred.describe()}; ground truth read as {gold.describe()}; {verdict}"
    )
    return Grade(score=score, method=METHOD, detail=detail)


def read_answer(text: str) -> Reading:
    """Normalise and parse ``text``; a refusal or parse failure is recorded, never raised."""
    problem = check_raw(text) if text.strip() else "empty"
    if problem:
        return Reading(text="", kind="refused", refused=problem)
    normalised = normalise_answer(text)
    problem = check_text(normalised.text) or (None if normalised.text else "empty")
    if problem:
        return Reading(text=normalised.text[:_SHOWN_CHARS], kind="refused", refused=problem)
    if _reads_as_text(normalised.text):
        return Reading(text=normalised.text, kind="text", percent=normalised.percent)
    try:
        value = _parse(normalised.text)
        check_tree(value)
    except TooCostly as exc:
        return Reading(text=normalised.text, kind="refused", refused=str(exc))
    except Exception:  # the parser raises many types on text it cannot read whole  # noqa: BLE001
        return Reading(text=normalised.text, kind="text", percent=normalised.percent)
    if _not_a_value(value):
        return Reading(text=normalised.text, kind="text", percent=normalised.percent)
    return Reading(normalised.text, _kind(value), value, normalised.percent)


def _reads_as_text(text: str) -> bool:
    """Words, spaced digits (``3 4``) and base subscripts (``204_5``) are not read as math."""
    return bool(
        _WORD.search(text)
        or _SPACED_DIGITS.search(text)
        or _BASE_SUBSCRIPT.search(text)
        or _UNICODE_TEXT.search(text)
    )


def _parse(text: str) -> Any:
    from latex2sympy2_extended.latex2sympy2 import NormalizationConfig, latex2sympy
    from math_verify.grader import should_treat_as_complex

    config = NormalizationConfig(
        basic_latex=True, units=False, malformed_operators=True, nits=True, boxed="all",
        equations=False,
    )
    return latex2sympy(
        text, is_real=not should_treat_as_complex(text), convert_degrees=False,
        normalization_config=config,
    )


def _not_a_value(value: Any) -> bool:
    """``12:00`` parses as 12/0; an undefined value is no evidence of anything."""
    import sympy

    atoms = getattr(value, "atoms", None)
    if atoms is None:
        return True
    return bool(atoms(sympy.zoo, sympy.nan) if not hasattr(value, "shape") else False)


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


def _compare(pred: Reading, gold: Reading, timeout_seconds: int) -> tuple[str, float]:
    if gold.refused:
        return f"not graded: the ground truth is {gold.refused}", 0.0
    if pred.refused:
        return f"not equal: the answer is {pred.refused}", 0.0
    if _squash(pred.text) == _squash(gold.text) and pred.percent == gold.percent:
        return "equal: same text", 1.0
    if pred.value is None or gold.value is None:
        if pred.kind == gold.kind == "text" and _squash(pred.text).casefold() == _squash(gold.text).casefold():
            return "equal: same text", 1.0
        return "not equal: compared as text", 0.0
    if _equal(pred, gold, timeout_seconds):
        how = "numeric" if pred.kind == gold.kind == "number" else "symbolic"
        return f"equal: {how}", 1.0
    return "not equal", 0.0


def _equal(pred: Reading, gold: Reading, timeout_seconds: int) -> bool:
    """math-verify's comparison, trying a percentage as the number and as its hundredth."""
    import math_verify
    import sympy

    golds, preds = [gold.value], [pred.value]
    if gold.percent and not pred.percent:
        golds.append(sympy.Mul(gold.value, sympy.Rational(1, 100)))
    if pred.percent and not gold.percent:
        preds.append(sympy.Mul(pred.value, sympy.Rational(1, 100)))
    timeout = timeout_seconds if threading.current_thread() is threading.main_thread() else None
    return bool(
        math_verify.verify(
            golds, preds, float_rounding=6, strict=True, allow_set_relation_comp=True,
            timeout_seconds=timeout,
        )
    )


def _squash(text: str) -> str:
    """``text`` without whitespace, except between digits (``3 4`` is not ``34``)."""
    return _SPACE_NOT_BETWEEN_DIGITS.sub("", text)
