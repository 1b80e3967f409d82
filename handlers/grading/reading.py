"""Stage 2 of apollo's math grader: read one normalised answer as a sympy value.

The *whole* text is parsed with math-verify's LaTeX parser (``latex2sympy2_extended``),
which raises when it cannot consume all of it, so a reading never covers a prefix. What
is not math (words, ``3 4``, ``204_5``, approximations, ellipses, primes, undefined
values) is read as text; what the guards refuse is recorded with the reason. Nothing here
raises for bad input.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Final

from handlers.grading.guards import TooCostly, check_raw, check_text, check_tree
from handlers.grading.normalise import Normalised, normalise_answer

_SHOWN_CHARS: Final = 80
PARSE_TIMEOUT_S: Final = 2
"""Longest one side may take to parse; with math-verify's 5 s per comparison, a grade stays
under the grading pool's 10 s deadline."""
_WORD: Final = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")
_SPACED_DIGITS: Final = re.compile(r"\d\s+\d")
_BASE_SUBSCRIPT: Final = re.compile(r"\d_\{?\d")
_UNICODE_TEXT: Final = re.compile(r"[^\x00-\x7f]")
PLAIN_NUMBER: Final = re.compile(r"[-+]?(?:\d+(?:\.\d+)?|\.\d+)")
_PLAIN_FRACTION: Final = re.compile(r"(-?)(?:\\frac\{(\d+)\}\{(\d+)\}|(\d+)/(\d+))")
_ENVIRONMENT: Final = re.compile(r"\\(?:begin|end)\{\w+\*?\}")
_APPROXIMATELY: Final = re.compile(r"\\(?:approx|sim|simeq|ldots|cdots|dots|dotsc|dotsb)(?![A-Za-z])|\.\.\.|'")
_IMAGINARY_UNIT: Final = re.compile(r"(?<![A-Za-z\\])i(?![A-Za-z])")


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


def read_answer(text: str, *, complex_numbers: bool = False) -> Reading:
    """Normalise and parse ``text``; a refusal or parse failure is recorded, never raised."""
    return read_prepared(prepare(text), complex_numbers)


def prepare(text: str) -> Normalised | str:
    """``text`` normalised, or why it cannot be an answer at all."""
    problem = check_raw(text) if text.strip() else "empty"
    return problem or normalise_answer(text)


def read_prepared(prepared: Normalised | str, complex_numbers: bool) -> Reading:
    """Read what :func:`prepare` returned (a refusal stays a refusal)."""
    if isinstance(prepared, str):
        return Reading(text="", kind="refused", refused=prepared)
    reading = read_normalised(prepared.text, prepared.percent, complex_numbers)
    return replace(reading, equation=prepared.equation, name=prepared.name, unit=prepared.unit)


def read_normalised(text: str, percent: bool, complex_numbers: bool) -> Reading:
    """Parse already normalised ``text`` whole, within the bounds of the guards."""
    problem = check_text(text) or (None if text else "empty")
    if problem:
        return Reading(text=text[:_SHOWN_CHARS], kind="refused", refused=problem)
    if _reads_as_text(text):
        return Reading(text=text, kind="text", percent=percent)
    from math_verify.errors import TimeoutException

    try:
        text = _settle_chain(text, complex_numbers)
        value = _bounded(_parse, text, complex_numbers)
        check_tree(value)
    except TooCostly as exc:
        return Reading(text=text, kind="refused", refused=str(exc))
    except TimeoutException:
        return Reading(text=text, kind="refused", refused=f"too slow to parse (over {PARSE_TIMEOUT_S} s)")
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
    values = [_bounded(_parse, part, complex_numbers) for part in parts[1:]]
    for value in values:
        check_tree(value)
    if not all(verify_values([values[-1]], [value], 1) for value in values[:-1]):
        msg = "an equality chain that does not hold"
        raise TooCostly(msg)
    return parts[-1]


def _bounded(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` stopped after :data:`PARSE_TIMEOUT_S` (main thread only: the
    timer is ``signal.alarm``). The LaTeX parser's time grows fast with nesting."""
    if threading.current_thread() is not threading.main_thread():
        return function(*args)
    from math_verify.utils import timeout

    return timeout(PARSE_TIMEOUT_S)(function)(*args)


def _parse(text: str, complex_numbers: bool) -> Any:
    import sympy

    if PLAIN_NUMBER.fullmatch(text):
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


def mentions_complex(text: str) -> bool:
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


def verify_values(golds: list[Any], preds: list[Any], timeout_seconds: int) -> bool:
    """math-verify's comparison; its ``signal.alarm`` timer only in a main thread."""
    import math_verify

    timeout = timeout_seconds if threading.current_thread() is threading.main_thread() else None
    return bool(
        math_verify.verify(
            golds, preds, float_rounding=6, strict=True, allow_set_relation_comp=True,
            timeout_seconds=timeout,
        )
    )
