"""Stage 3 of apollo's math grader: are two readings the same mathematical object?

Kind by kind, and exact: two values are equal only when their difference simplifies
to exactly 0 (a high-precision evaluation may prove them different, never equal). A
decimal is never equal to an exact value that does not terminate, unless the ground
truth itself is that decimal (then the exact answer is rounded, or cut, to the ground
truth's places) or the run sets ``grading.numeric_tolerance``. Units are compared, not
dropped: an answer may carry a unit the ground truth lacks; two different units are
converted only within one dimension by exact factors. Anything undecided is unequal.
"""

from __future__ import annotations

import random
import re
from decimal import Decimal
from typing import Any, Final

from handlers.grading.lexicon import units_asked, units_mentioned
from handlers.grading.parser import ends_in_order
from handlers.grading.readings import (
    Assignment,
    BaseNumeral,
    Collection,
    Equation,
    MatrixReading,
    Quantity,
    Ratio,
    Relation,
    SetReading,
)

_PROOF_DIGITS: Final = 50
_CLEARLY_DIFFERENT: Final = Decimal("1e-30")
_UNORDERED: Final = frozenset({"set", "list", "plus-minus"})


class Verdict:
    """Whether two readings are equal and how that was decided (for the detail)."""

    def __init__(self, equal: bool, how: str) -> None:
        self.equal = equal
        self.how = how

    def __bool__(self) -> bool:
        return self.equal


def unequal(how: str = "not equal") -> Verdict:
    return Verdict(False, how)


class Comparer:
    """Decides equality of readings; ``tolerance`` is ``grading.numeric_tolerance`` (relative)."""

    def __init__(self, tolerance: float | None = None) -> None:
        import sympy

        self.sympy = sympy
        self.tolerance = tolerance

    # -- dispatch ----------------------------------------------------------------------------

    def readings(self, pred: Any, gold: Any) -> Verdict:
        if isinstance(pred, Assignment) or isinstance(gold, Assignment):
            return self.assignments(pred, gold)
        if isinstance(pred, Quantity) and isinstance(gold, Quantity):
            return self.quantities(pred, gold)
        if isinstance(pred, Collection) and isinstance(gold, Collection):
            return self.collections(pred, gold)
        if isinstance(pred, Equation) and isinstance(gold, Equation):
            return self.equations(pred, gold)
        if isinstance(pred, Relation) or isinstance(gold, Relation):
            return self.relations(pred, gold)
        if self.as_set(pred) is not None and self.as_set(gold) is not None:
            if isinstance(pred, Collection) and isinstance(gold, Collection):
                return self.collections(pred, gold)
            return self.sets(self.as_set(pred), self.as_set(gold))
        if isinstance(pred, MatrixReading) and isinstance(gold, MatrixReading):
            return self.matrices(pred, gold)
        if isinstance(pred, BaseNumeral) and isinstance(gold, BaseNumeral):
            return self.numerals(pred, gold)
        if isinstance(pred, Ratio) and isinstance(gold, Ratio):
            return self.ratios(pred, gold)
        return unequal(f"not equal: {_article(pred)} against {_article(gold)}")

    # -- numbers and expressions -------------------------------------------------------------

    def quantities(self, pred: Quantity, gold: Quantity) -> Verdict:
        pairs, how = self.unit_pairs(pred, gold)
        if not pairs:
            return unequal(how)
        for pred_value, gold_value in pairs:
            verdict = self.numbers(pred_value, gold_value, pred, gold)
            if verdict:
                return Verdict(True, f"{verdict.how}{how}")
        return unequal(f"not equal{how}" if how else "not equal")

    def unit_pairs(self, pred: Quantity, gold: Quantity) -> tuple[list[tuple[Any, Any]], str]:
        """The value pairs to compare once units are accounted for, and a note on the units."""
        sympy = self.sympy
        pred_units, gold_units = _unit_map(pred), _unit_map(gold)
        percent_p, percent_g = pred_units.pop("percent", None), gold_units.pop("percent", None)
        pv, gv = pred.value, gold.value
        if percent_p and percent_g:
            pairs = [(pv, gv)]
        elif percent_p or percent_g:
            if (pred_units if percent_p else gold_units) or (gold_units if percent_p else pred_units):
                return [], "not equal: a percentage against a quantity with a unit"
            hundredth = sympy.Rational(1, 100)
            pairs = [(pv, gv), (pv * hundredth, gv)] if percent_p else [(pv, gv), (pv, gv * hundredth)]
        else:
            pairs = [(pv, gv)]
        angle = self.angles(pred_units, gold_units, pairs)
        if angle is not None:
            return angle
        if pred_units == gold_units:
            return pairs, ""
        if not gold_units:
            names = ", ".join(pred_units)
            asked = units_asked() or frozenset()
            other = [name for name, (unit, _) in pred_units.items() if unit.dimension != "count" and name not in asked]
            if asked and other:  # "How many minutes ...?" answered in hours: the number is another quantity
                wanted = ", ".join(sorted(asked))
                return [], f"not equal: the answer is in {', '.join(other)}, the question asks in {wanted}"
            foreign = _units_the_question_does_not_use(pred_units)
            if foreign:  # an amount in euros when every amount of the question is in dollars
                return [], f"not equal: the answer is in {foreign}, a unit of a kind the question gives only in others"
            return pairs, f" (the answer's unit {names} was read; the ground truth has none)"
        if not pred_units:
            return pairs, " (the ground truth's unit was read; the answer has none)"
        return self.converted(pred_units, gold_units, pairs)

    def angles(self, pred_units: dict, gold_units: dict, pairs: list) -> tuple[list, str] | None:
        """Degrees are converted, never dropped. A side with no angle unit is in radians when it
        holds pi, else in the other side's unit; both sides are then compared in radians."""
        sympy = self.sympy
        p_angle, g_angle = _angle(pred_units), _angle(gold_units)
        if p_angle is None and g_angle is None:
            return None
        if set(pred_units) - _ANGLES or set(gold_units) - _ANGLES:
            return [], "not equal: an angle against another unit"
        to_radians = {"degree": sympy.pi / 180, "radian": sympy.Integer(1), "gradian": sympy.pi / 200}
        converted = []
        for pv, gv in pairs:
            p_kind = p_angle or ("radian" if _has_pi(pv) else g_angle)
            g_kind = g_angle or ("radian" if _has_pi(gv) else p_angle)
            converted.append((pv * to_radians[p_kind or "radian"], gv * to_radians[g_kind or "radian"]))
        return converted, (
            f" (angles compared in radians: answer in {p_angle or 'no unit'}, ground truth in {g_angle or 'no unit'})"
        )

    def converted(self, pred_units: dict, gold_units: dict, pairs: list) -> tuple[list, str]:
        if len(pred_units) != 1 or len(gold_units) != 1:
            return [], "not equal: different units"
        (p_name, (p_unit, p_power)), = pred_units.items()
        (g_name, (g_unit, g_power)), = gold_units.items()
        if p_unit.dimension != g_unit.dimension or p_power != g_power or p_unit.factor is None or g_unit.factor is None:
            return [], f"not equal: different units ({p_name} vs {g_name})"
        scale = self.sympy.Rational(p_unit.factor / g_unit.factor) ** p_power
        return [(pv * scale, gv) for pv, gv in pairs], f" (converted {p_name} to {g_name})"

    def numbers(self, pv: Any, gv: Any, pred: Quantity, gold: Quantity) -> Verdict:
        if self.exactly_equal(pv, gv):
            return Verdict(True, "equal: exact")
        if self.tolerance is not None and self.within_tolerance(pv, gv):
            return Verdict(True, f"equal within grading.numeric_tolerance {self.tolerance}")
        if gold.decimal_places is not None and not pred.has_decimal:
            return unequal("not equal: an exact value is not this decimal (set grading.numeric_tolerance to compare"
                           " numerically)")
        if pred.has_decimal and not gold.has_decimal:
            return unequal("not equal: a decimal is not the exact value")
        return unequal()

    def within_tolerance(self, pv: Any, gv: Any) -> bool:
        sympy = self.sympy
        try:
            p, g = complex(sympy.N(pv, 30)), complex(sympy.N(gv, 30))
        except (TypeError, ValueError):
            return False
        return abs(p - g) <= float(self.tolerance or 0) * max(1.0, abs(g))

    def exactly_equal(self, a: Any, b: Any) -> bool:
        """Proven equal: the difference simplifies to exactly 0. Numbers that differ at 50
        digits are rejected first, and expressions that differ at a random point."""
        sympy = self.sympy
        a, b = sympy.sympify(a).doit(), sympy.sympify(b).doit()
        if a == b:
            return True
        if a.has(sympy.oo, -sympy.oo, sympy.zoo, sympy.nan) or b.has(sympy.oo, -sympy.oo, sympy.zoo, sympy.nan):
            return False
        if {s.name for s in a.free_symbols} != {s.name for s in b.free_symbols}:
            return False
        difference = a - b
        if self.clearly_nonzero(difference):
            return False
        simplified = sympy.simplify(difference)
        if simplified == 0:
            return True
        return bool(sympy.expand(sympy.radsimp(simplified)) == 0)

    def clearly_nonzero(self, difference: Any) -> bool:
        sympy = self.sympy
        symbols = sorted(difference.free_symbols, key=lambda s: s.name)
        rng = random.Random(7)
        point = {s: sympy.Rational(rng.randint(3, 97), rng.randint(101, 199)) for s in symbols}
        try:
            value = sympy.N(difference.subs(point), _PROOF_DIGITS)
            number = complex(value)
        except (TypeError, ValueError, ZeroDivisionError, OverflowError):
            return False
        return abs(number) > float(_CLEARLY_DIFFERENT)

    # -- structures --------------------------------------------------------------------------

    def collections(self, pred: Collection, gold: Collection) -> Verdict:
        if len(pred.items) != len(gold.items):
            return unequal(f"not equal: {len(pred.items)} items against {len(gold.items)}")
        kinds = {pred.kind, gold.kind}
        if kinds == {"set", "tuple"}:
            return unequal("not equal: a set against an ordered tuple")
        if "tuple" in kinds:
            if pred.kind == gold.kind == "tuple" and pred.brackets != gold.brackets:
                return unequal(f"not equal: {pred.brackets} against {gold.brackets}")
            if not (_names_in_order(pred) and _names_in_order(gold)):
                return unequal("not equal: named values out of alphabetical order against an ordered tuple"
                               " (y = 1, x = 2 is not (1, 2))")
            for p, g in zip(pred.items, gold.items, strict=True):
                if not self.readings(p, g):
                    return unequal("not equal: in order, an item differs")
            return Verdict(True, "equal: item by item, in order")
        unused = list(gold.items)
        for p in pred.items:
            match = next((index for index, g in enumerate(unused) if self.readings(p, g)), None)
            if match is None:
                return unequal(f"not equal: {p.describe()} has no equal item")
            unused.pop(match)
        return Verdict(True, "equal: the same items in any order")

    def as_set(self, reading: Any) -> Any:
        sympy = self.sympy
        if isinstance(reading, SetReading):
            return reading.value
        if isinstance(reading, Relation) and reading.solution is not None:
            return reading.solution
        if isinstance(reading, Collection) and reading.kind == "tuple" and reading.brackets == "()" and (
                len(reading.items) == 2):
            values = [item.value if isinstance(item, Quantity) and not item.units else None for item in reading.items]
            if None not in values and ends_in_order(sympy, *values):
                return sympy.Interval.open(*values)
        if isinstance(reading, Collection) and reading.kind == "set":
            values = [item.value if isinstance(item, Quantity) and not item.units else None for item in reading.items]
            if None not in values:
                return sympy.FiniteSet(*values)
        return None

    def sets(self, pred: Any, gold: Any) -> Verdict:
        sympy = self.sympy
        with sympy.evaluate(True):
            pred, gold = _evaluated(sympy, pred), _evaluated(sympy, gold)
            if pred == gold:
                return Verdict(True, "equal: the same set")
            if isinstance(pred, sympy.Interval) and isinstance(gold, sympy.Interval):
                same = (pred.left_open, pred.right_open) == (gold.left_open, gold.right_open) and self.exactly_equal(
                    pred.start, gold.start) and self.exactly_equal(pred.end, gold.end)
                return Verdict(True, "equal: the same interval") if same else unequal("not equal: different intervals")
            empty = sympy.EmptySet
            if sympy.Complement(pred, gold) == empty and sympy.Complement(gold, pred) == empty:
                return Verdict(True, "equal: the same set")
        return unequal("not equal: different sets")

    def relations(self, pred: Any, gold: Any) -> Verdict:
        if not (isinstance(pred, Relation) and isinstance(gold, Relation)):
            other = gold if isinstance(pred, Relation) else pred
            relation = pred if isinstance(pred, Relation) else gold
            if relation.solution is not None and isinstance(other, SetReading | Collection):
                other_set = self.as_set(other)
                if other_set is not None:
                    return self.sets(relation.solution, other_set)
            return unequal(f"not equal: a relation against {_article(other)}")
        if pred.solution is not None and gold.solution is not None:
            if pred.variable != gold.variable:
                return unequal(f"not equal: relations in {pred.variable} and {gold.variable}")
            return self.sets(pred.solution, gold.solution)
        if _mirror(pred) == gold.ops and len(pred.parts) == len(gold.parts):
            pairs = zip(reversed(pred.parts), gold.parts, strict=True)
        elif pred.ops == gold.ops and len(pred.parts) == len(gold.parts):
            pairs = zip(pred.parts, gold.parts, strict=True)
        else:
            return unequal("not equal: different relations")
        for p, g in pairs:
            if not _is_plain(p) or not _is_plain(g) or not self.exactly_equal(p, g):
                return unequal("not equal: different relations")
        return Verdict(True, "equal: the same relation")

    def equations(self, pred: Equation, gold: Equation) -> Verdict:
        """Equal when one side-difference is a nonzero constant multiple of the other."""
        sympy = self.sympy
        first = sympy.sympify(pred.lhs - pred.rhs).doit()
        second = sympy.sympify(gold.lhs - gold.rhs).doit()
        if self.exactly_equal(first, second) or self.exactly_equal(first, -second):
            return Verdict(True, "equal: the same equation")
        if first == 0 or second == 0 or {s.name for s in first.free_symbols} != {s.name for s in second.free_symbols}:
            return unequal("not equal: different equations")
        ratio = sympy.simplify(first / second)
        if ratio.free_symbols or ratio == 0 or not ratio.is_number or ratio.has(sympy.zoo, sympy.nan):
            return unequal("not equal: different equations")
        return Verdict(True, "equal: the same equation up to a constant factor")

    def assignments(self, pred: Any, gold: Any) -> Verdict:
        if isinstance(pred, Assignment) and isinstance(gold, Assignment):
            if _squash(pred.name) != _squash(gold.name):
                both = _as_equation(pred), _as_equation(gold)
                if None not in both:  # x = y against y = x: the same equation under other names
                    return self.equations(*both)
                return unequal(f"not equal: different names ({pred.name} vs {gold.name})")
            return self.readings(pred.value, gold.value)
        named = pred if isinstance(pred, Assignment) else gold
        other = gold if named is pred else pred
        if isinstance(other, Equation):
            if named.symbol is None or not isinstance(named.value, Quantity) or named.value.units:
                return unequal("not equal: an assignment against an equation")
            as_equation = Equation(named.symbol, named.value.value)
            return self.equations(as_equation, other) if named is pred else self.equations(other, as_equation)
        if isinstance(other, Relation):
            return unequal("not equal: a value against a relation")
        if _in_its_own_value(named):
            return unequal(f"not equal: the name {named.name} stands in its own value (an equation in it, not a value)")
        if _index_shifted(named):
            return unequal(f"not equal: the name {named.name} is indexed by another expression of its value's variable")
        if not _tuple_names_in_order(named):
            return unequal("not equal: a tuple named out of alphabetical order against a value ((y, x) = (1, 2)"
                           " is not (1, 2))")
        verdict = self.readings(named.value, other) if named is pred else self.readings(other, named.value)
        return Verdict(verdict.equal, f"{verdict.how} (the name {named.name} on one side only)")

    def matrices(self, pred: MatrixReading, gold: MatrixReading) -> Verdict:
        if pred.value.shape != gold.value.shape:
            return unequal(f"not equal: shapes {pred.value.shape} and {gold.value.shape}")
        for p, g in zip(pred.value, gold.value, strict=True):
            if not self.exactly_equal(p, g):
                return unequal("not equal: an entry differs")
        return Verdict(True, "equal: entry by entry")

    def numerals(self, pred: BaseNumeral, gold: BaseNumeral) -> Verdict:
        if pred.base != gold.base:
            return unequal("not equal: different bases")
        return Verdict(True, "equal: same numeral") if pred.digits == gold.digits else unequal()

    def ratios(self, pred: Ratio, gold: Ratio) -> Verdict:
        if len(pred.parts) != len(gold.parts):
            return unequal("not equal: ratios of different lengths")
        first_p, first_g = pred.parts[0], gold.parts[0]
        if any(self.exactly_equal(part, 0) for part in (*pred.parts, *gold.parts)):
            same = all(self.exactly_equal(p, g) for p, g in zip(pred.parts, gold.parts, strict=True))
            return Verdict(True, "equal: part by part") if same else unequal("not equal: different ratios")
        for p, g in zip(pred.parts[1:], gold.parts[1:], strict=True):
            if not self.exactly_equal(p * first_g, g * first_p):
                return unequal("not equal: different ratios")
        return Verdict(True, "equal: the same ratio")


def _names_in_order(collection: Collection) -> bool:
    """A bare list of named values read in order against a tuple: the names carry the order, so
    it is only the tuple's order when the names are sorted (``x = 1, y = 2``; ``y = 1, x = 2`` is
    (2, 1)). Coordinates named out of alphabetical order (rho, theta, phi) are a false negative."""
    if collection.kind != "list" or not all(isinstance(item, Assignment) for item in collection.items):
        return True
    names = [_squash(item.name) for item in collection.items]
    return names == sorted(names) and len(set(names)) == len(names)


def _in_its_own_value(assignment: Assignment) -> bool:
    """``x = x^3 + 3x - 6`` is an equation in x, not the expression: the name is among its value's symbols."""
    value = getattr(assignment.value, "value", assignment.value)
    free = getattr(value, "free_symbols", None) or ()
    return assignment.symbol is not None and any(
        symbol.name == getattr(assignment.symbol, "name", None) for symbol in free)


_INDEXED_NAME = re.compile(r"[A-Za-z\\]+_(?:\{(?P<braced>[^{}]+)\}|(?P<bare>\w))")


def _index_shifted(assignment: Assignment) -> bool:
    """``a_{n+1} = 8n^2 + 4n + 1`` states the term after a_n: an index that uses the value's variable in any other
    way than being it (``a_n``) names another quantity than the value."""
    match = _INDEXED_NAME.fullmatch(assignment.name.replace(" ", ""))
    if match is None:
        return False
    index = match.group("braced") or match.group("bare")
    value = getattr(assignment.value, "value", assignment.value)
    names = {symbol.name for symbol in getattr(value, "free_symbols", None) or ()}
    return any(letter in names for letter in re.findall(r"[A-Za-z]", index)) and index not in names


def _tuple_names_in_order(assignment: Assignment) -> bool:
    """``(x, y) = (1, 2)`` against a bare tuple: the names carry the order, as in :func:`_names_in_order`,
    so ``(y, x) = (1, 2)`` is (2, 1) in the usual order and never equals (1, 2)."""
    if not (isinstance(assignment.value, Collection) and assignment.value.kind == "tuple"):
        return True
    names = [_squash(name) for name in _squash(assignment.name).strip("()[]").split(",")]
    return names == sorted(names) and len(set(names)) == len(names)


def _as_equation(assignment: Assignment) -> Equation | None:
    value = assignment.value
    if assignment.symbol is None or not isinstance(value, Quantity) or value.units:
        return None
    return Equation(assignment.symbol, value.value)


def _units_the_question_does_not_use(units: dict[str, tuple[Any, int]]) -> str:
    """The answer's units that the question never names while it names others of their kind (money in euros when
    the question's amounts are in dollars, seconds when it speaks of hours and minutes), joined; empty when none or
    no question is known. A unit of a kind the question does not measure in is left to the comparison."""
    mentioned = units_mentioned()
    if not mentioned:
        return ""
    names = {unit.name for unit in mentioned}
    kinds = {_kind(unit) for unit in mentioned}
    return ", ".join(name for name, (unit, _) in units.items()
                     if _kind(unit) in kinds and unit.dimension != "count" and name not in names)


def _kind(unit: Any) -> str:
    """What a unit measures: its dimension, with every currency one kind (``money:USD`` and ``money:EUR`` are money)."""
    return str(unit.dimension).split(":", 1)[0]


def _unit_map(quantity: Quantity) -> dict[str, tuple[Any, int]]:
    units: dict[str, tuple[Any, int]] = {}
    for unit, power in quantity.units:
        name = "percent" if unit.dimension == "percent" else unit.name
        previous = units.get(name)
        units[name] = (unit, power + (previous[1] if previous else 0))
    return units


_ANGLES: Final = frozenset({"degree", "radian", "gradian"})


def _angle(units: dict) -> str | None:
    for name in ("degree", "radian", "gradian"):
        if name in units:
            return name
    return None


def _has_pi(value: Any) -> bool:
    import sympy

    return bool(getattr(value, "has", lambda _: False)(sympy.pi))


def _evaluated(sympy: Any, value: Any) -> Any:
    return value.doit() if hasattr(value, "doit") else value


def _mirror(relation: Relation) -> tuple[str, ...]:
    flip = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "!=": "!=", "approx": "approx"}
    return tuple(flip.get(op, "?") for op in reversed(relation.ops))


def _is_plain(value: Any) -> bool:
    return hasattr(value, "free_symbols") and not isinstance(value, SetReading | Collection)


def _squash(text: str) -> str:
    return "".join(text.split())


def _article(reading: Any) -> str:
    kind = getattr(reading, "kind", "value")
    return f"an {kind}" if kind[:1] in "aeiou" else f"a {kind}"
