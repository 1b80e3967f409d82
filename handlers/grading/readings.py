"""What an answer was read as: one small record per kind of mathematical object.

The parser (:mod:`handlers.grading.parser`) builds these; the comparison
(:mod:`handlers.grading.compare`) decides equality kind by kind. Every record can
describe itself for the grade's detail, including the units, words and constants
that were read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from handlers.grading.lexicon import Unit

SHOWN_CHARS: Final = 80


def show(value: Any) -> str:
    try:
        text = str(value)
    except ValueError:  # an integer past Python's 4300-digit printing limit
        return "(a number too long to print)"
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "..."


@dataclass(frozen=True)
class Quantity:
    """A number or expression, with the unit written after it (if any)."""

    value: Any
    units: tuple[tuple[Unit, int], ...] = ()
    """Each unit with its power (``m/s^2`` is ``((meter, 1), (second, -2))``)."""
    decimal_places: int | None = None
    """Set when the whole quantity is one decimal literal (``0.150`` has 3)."""
    has_decimal: bool = False
    """Any decimal literal inside (``0.5x``): such a value is not exact."""
    notes: tuple[str, ...] = ()
    kind: str = "number"

    def describe(self) -> str:
        unit = " ".join(_unit_text(unit, power) for unit, power in self.units)
        return f"{self.shown()}{' ' + unit if unit else ''} ({self.kind})"

    def shown(self) -> str:
        """The value as a reader would write it: a decimal as that decimal, else evaluated
        (safe: the guards bounded every number before this is called)."""
        if self.decimal_places is not None and getattr(self.value, "is_Rational", False):
            return _decimal(self.value, self.decimal_places)
        try:
            return show(self.value.doit())
        except Exception:  # noqa: BLE001 - showing must never fail a grade
            return show(self.value)


def _decimal(value: Any, places: int) -> str:
    from decimal import Decimal, localcontext

    with localcontext() as context:
        context.prec = 200
        number = Decimal(int(value.p)) / Decimal(int(value.q))
    return f"{number:.{min(places, 100)}f}"


def _unit_text(unit: Unit, power: int) -> str:
    return unit.name if power == 1 else f"{unit.name}^{power}"


@dataclass(frozen=True)
class Collection:
    """Several values: ``set`` (``\\{...\\}``), ``tuple`` (brackets, ordered), ``list`` (bare,
    unordered) or ``plus-minus`` (``a \\pm b``)."""

    kind: str
    items: tuple[Any, ...]
    brackets: str = ""

    def describe(self) -> str:
        inner = ", ".join(_short(item) for item in self.items)
        opening, closing = (self.brackets[:1], self.brackets[1:]) if self.brackets else ("", "")
        return show(f"{opening}{inner}{closing}") + f" ({self.kind})"


def _short(reading: Any) -> str:
    """A reading's description without its kind, for the members of a bigger reading."""
    if hasattr(reading, "describe"):
        return reading.describe().rsplit(" (", 1)[0]
    return show(reading)


@dataclass(frozen=True)
class SetReading:
    """An interval, a union of intervals or another subset of the reals (``kind`` says which)."""

    value: Any
    kind: str = "interval"

    def describe(self) -> str:
        return f"{show(self.value)} ({self.kind})"


@dataclass(frozen=True)
class MatrixReading:
    value: Any
    kind: str = "matrix"

    def describe(self) -> str:
        return f"{show(self.value.tolist())} (matrix)"


@dataclass(frozen=True)
class Assignment:
    """``name = value`` with a plain name on the left (``x = 5``, ``f(x) = 2x``, ``(p, q) = (3, 2)``)."""

    name: str
    value: Any
    symbol: Any = None
    """The name as a sympy symbol when it is one, so the assignment can become an equation."""
    chain: tuple[Any, ...] = ()
    """Middle members of ``name = a = b``: each must equal the last (checked when compared)."""
    kind: str = "assignment"

    def describe(self) -> str:
        shown = self.value.describe() if hasattr(self.value, "describe") else show(self.value)
        return f"{self.name} = {shown}"


@dataclass(frozen=True)
class Equation:
    lhs: Any
    rhs: Any
    kind: str = "equation"

    def describe(self) -> str:
        return f"{show(self.lhs)} = {show(self.rhs)} (equation)"


@dataclass(frozen=True)
class Relation:
    """An inequality, a negated relation or a membership; with one variable, its solution set."""

    ops: tuple[str, ...]
    parts: tuple[Any, ...]
    variable: str | None = None
    solution: Any = None
    kind: str = "relation"

    def describe(self) -> str:
        text = _short(self.parts[0])
        for op, part in zip(self.ops, self.parts[1:], strict=True):
            text += f" {op} {_short(part)}"
        if self.solution is not None:
            text += f", i.e. {self.variable} in {show(self.solution)}"
        return f"{text} (relation)"


@dataclass(frozen=True)
class Ratio:
    parts: tuple[Any, ...]
    kind: str = "ratio"

    def describe(self) -> str:
        return ":".join(show(part) for part in self.parts) + " (ratio)"


@dataclass(frozen=True)
class BaseNumeral:
    """A numeral with its base written as a subscript (``204_5``)."""

    digits: str
    base: int
    kind: str = "base numeral"

    def describe(self) -> str:
        return f"{self.digits} in base {self.base} (base numeral)"


@dataclass(frozen=True)
class Text:
    """An answer that is not read as mathematics: it equals only the same canonical text."""

    text: str
    why: str = ""
    kind: str = "text"
    notes: tuple[str, ...] = field(default=())

    def describe(self) -> str:
        return f"{show(self.text)!r} (text: {self.why})" if self.why else f"{show(self.text)!r} (text)"


@dataclass(frozen=True)
class Refused:
    """An answer too costly or too malformed to read at all; it never scores 1."""

    why: str
    kind: str = "refused"

    def describe(self) -> str:
        return f"nothing (refused: {self.why})"
