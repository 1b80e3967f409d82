"""A small, strict evaluator of LaTeX values: the adversary's own check that a mutant
really changes (or keeps) the gold's value.

It reads a closed grammar only: numbers (``4.5e33`` too), ``+ - \\cdot \\times / \\div``,
juxtaposition, ``^``, ``!``, ``\\frac`` and its variants, ``\\sqrt[n]{}``, ``\\pi``, ``e``,
``i``, a few named functions, letters (with subscripts) as variables, parentheses,
``\\left``/``\\right``, and lists: tuples and intervals (ordered, their brackets kept),
sets ``\\{a, b\\}`` and bare lists ``a, b`` (unordered, as the labelled cases read a
list of solutions). Anything else is
:class:`Unreadable`, and the operator that asked declines to mutate: it is better to skip a
gold than to call a mutant wrong on a guess. Variables take two fixed sets of values, so
``2x + 3`` and ``2y + 3`` differ while ``x + y`` and ``y + x`` agree.

Rational arithmetic is exact (numerals, variables and ``+ - * /`` and whole powers stay
:class:`~fractions.Fraction`), so ``2000001`` differs from ``2000000`` and ``0.5`` equals
``\\frac12``; roots, constants and functions are floating point, compared with a tolerance.
"""

from __future__ import annotations

import cmath
import hashlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Final

from engine.errors import EngineError

Number = Fraction | complex


@dataclass(frozen=True)
class Listing:
    """A list of values and its brackets: ``()``, ``(]``, ``[]``... ordered; ``{}`` and bare ``""`` not."""

    brackets: str
    items: tuple[Value, ...]

    @property
    def ordered(self) -> bool:
        return self.brackets not in ("{}", "")


Value = Number | Listing

_TOKEN: Final = re.compile(
    r"\s+|(?P<num>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)|(?P<cmd>\\[a-zA-Z]+|\\.)|(?P<char>.)", re.DOTALL
)
_SKIPPED: Final = frozenset({"\\left", "\\right", "\\displaystyle", "\\,", "\\!", "\\;", "\\:", "\\ "})
_FRACTIONS: Final = frozenset({"\\frac", "\\dfrac", "\\tfrac", "\\cfrac"})
_FUNCTIONS: Final[dict[str, Callable[[complex], complex]]] = {
    "\\sin": cmath.sin, "\\cos": cmath.cos, "\\tan": cmath.tan, "\\ln": cmath.log,
    "\\log": cmath.log10, "\\exp": cmath.exp,
}
_CONSTANTS: Final = {"\\pi": complex(math.pi), "e": complex(math.e), "i": 1j, "\\infty": complex(math.inf)}
_FACTOR_START: Final = frozenset("(0123456789.{") | {"\\sqrt", "\\pi", *_FRACTIONS, *_FUNCTIONS}
_GROUPING: Final = re.compile(r"\d(?:,|\{,\})(?:\\!\s*)?\d{3}(?!\d)")
HAS_DECIMAL: Final = re.compile(r"\d?\.\d|\d\.(?!\d)|\d[eE][-+]?\d")
"""A numeral with a decimal point or an exponent: a value stated to some precision."""
REL_TOL: Final = 1e-12
"""Values closer than this (relatively) are the same; further than 1e3 times this, different."""


class Unreadable(EngineError, ValueError):
    """The text is outside the evaluator's grammar."""


def evaluate(text: str, env_seed: int = 0) -> Value:
    """The value of ``text`` with its variables set by ``env_seed``; raises :class:`Unreadable`."""
    if _GROUPING.search(text):
        raise Unreadable("a thousands separator or a list: not called")
    tokens = _tokens(text)
    parser = _Parser(tokens, env_seed)
    try:
        value = parser.top()
    except (ZeroDivisionError, OverflowError, ValueError, TypeError) as exc:  # TypeError: a tuple in arithmetic
        raise Unreadable(str(exc)) from exc
    if parser.pos != len(tokens):
        raise Unreadable(f"unread text from token {parser.pos}")
    return value


def same_value(a: str, b: str) -> bool | None:
    """True when ``a`` and ``b`` agree under both variable settings, False when they clearly
    differ under one, None when either is unreadable or the difference is too fine to call."""
    verdicts = []
    for seed in (0, 1):
        try:
            verdicts.append(_close(evaluate(a, seed), evaluate(b, seed)))
        except Unreadable:
            return None
    if False in verdicts:
        return False
    return None if None in verdicts else True


def differs(a: str, b: str) -> bool:
    """``a`` and ``b`` are readable and their values clearly differ."""
    return same_value(a, b) is False


def clearly_differs(gold: str, mutant: str) -> bool:
    """``mutant`` differs from ``gold`` even at the precision a decimal gold states.

    A decimal gold (``4.49``, ``4.5e33``) may be an approximation: a mutant within half a
    unit of its last digit (``4.491``) might be the exact answer, so it does not count. An
    integer or exact gold is compared by :func:`differs`; a decimal inside a larger gold
    (``(1, 4.5)``) is not judged at all.
    """
    stated = _decimal(gold)
    if stated is None:
        return not HAS_DECIMAL.search(gold) and differs(gold, mutant)
    half_unit = Decimal(5).scaleb(stated.as_tuple().exponent - 1)  # type: ignore[operator]
    value = _decimal(mutant)
    if value is not None:
        return abs(value - stated) > half_unit
    other = scalar(mutant)
    return other is not None and (bool(other.imag) or abs(other.real - float(stated)) > 1.01 * float(half_unit))


def _decimal(text: str) -> Decimal | None:
    text = text.strip()
    if not re.fullmatch(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", text) or not HAS_DECIMAL.search(text):
        return None
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


def scalar(text: str) -> complex | None:
    """The value of a constant scalar (no variables), or None."""
    try:
        first, second = evaluate(text, 0), evaluate(text, 1)
    except Unreadable:
        return None
    if isinstance(first, Listing) or isinstance(second, Listing) or _close(first, second) is not True:
        return None
    return _complex(first)


def _complex(value: Number) -> complex | None:
    try:
        return complex(value)
    except OverflowError:
        return None


def _close(a: Value, b: Value) -> bool | None:
    if isinstance(a, Listing) or isinstance(b, Listing):
        return _close_listings(a, b)
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a == b
    a, b = _complex(a), _complex(b)  # type: ignore[assignment]
    if a is None or b is None or not (cmath.isfinite(a) and cmath.isfinite(b)):
        return None
    gap, scale = abs(a - b), max(1.0, abs(a), abs(b))
    if gap <= REL_TOL * scale:
        return True
    return False if gap > 1e3 * REL_TOL * scale else None


def _close_listings(a: Value, b: Value) -> bool | None:
    if not (isinstance(a, Listing) and isinstance(b, Listing)):
        return False  # a list is not a number
    if a.brackets != b.brackets:
        # A set and a bare list of solutions may mean the same; any other change of brackets does not.
        return None if {a.brackets, b.brackets} == {"{}", ""} else False
    if len(a.items) != len(b.items):
        return False
    first, second = (a.items, b.items) if a.ordered else (_sorted(a.items), _sorted(b.items))
    verdicts = [_close(x, y) for x, y in zip(first, second, strict=True)]
    return False if False in verdicts else (None if None in verdicts else True)


def _sorted(items: tuple[Value, ...]) -> tuple[Value, ...]:
    return tuple(sorted(items, key=_order_key))


def _tokens(text: str) -> list[str]:
    tokens = []
    for match in _TOKEN.finditer(text):
        token = match.group("num") or match.group("cmd") or match.group("char")
        if token and token not in _SKIPPED:
            tokens.append(token)
    return tokens


def _variable(name: str, seed: int) -> Fraction:
    """A fixed, name-dependent rational in about [0.6, 2.6): far from 0 and 1, where forms coincide."""
    digest = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return Fraction(600 + int.from_bytes(digest[:4], "big") % 2000, 1009)


class _Parser:
    """Recursive descent over the token list; every method returns a value or raises."""

    def __init__(self, tokens: list[str], seed: int) -> None:
        self.tokens, self.pos, self.seed = tokens, 0, seed

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise Unreadable(f"expected {expected or 'more'} at token {self.pos}, got {token!r}")
        self.pos += 1
        return token

    def top(self) -> Value:
        items = [self.sum()]
        while self.peek() == ",":
            self.take()
            items.append(self.sum())
        return items[0] if len(items) == 1 else Listing("", tuple(items))

    def sum(self) -> Number:
        value = self.product()
        while self.peek() in ("+", "-"):
            value = value + self.product() if self.take() == "+" else value - self.product()
        return value

    def product(self) -> Number:
        value = self.signed()
        while True:
            token = self.peek()
            if token in ("\\cdot", "\\times", "*"):
                self.take()
                value *= self.signed()
            elif token in ("/", "\\div"):
                self.take()
                value /= self.signed()
            elif token is not None and (token in _FACTOR_START or _is_letter(token) or token in _CONSTANTS):
                numeral_before = self.tokens[self.pos - 1][0].isdigit()
                if numeral_before and (token in _FRACTIONS or token[0] in "0123456789."):
                    raise Unreadable("a numeral before a fraction or a numeral: a mixed number, a group, a product?")
                value *= self.power()  # juxtaposition: 2x, 2\pi, (a)(b)
            else:
                return value

    def signed(self) -> Number:
        if self.peek() in ("+", "-"):
            sign = -1 if self.take() == "-" else 1
            return sign * self.signed()
        return self.power()

    def power(self) -> Number:
        base = self.atom()
        while self.peek() in ("^", "!"):
            if self.take() == "!":
                base = _factorial(base)
            else:
                exponent = self.signed_group()
                base = _power(base, exponent)
        return base

    def signed_group(self) -> Number:
        """An exponent: a braced group or one signed token (``x^2``, ``x^-1``)."""
        if self.peek() == "{":
            return self.group()
        if self.peek() == "-":
            self.take()
            return -self.atom_single()
        return self.atom_single()

    def atom_single(self) -> Number:
        """One token's value: ``x^23`` is ``x^2 \\cdot 3`` in LaTeX, so a number yields one digit."""
        token = self.peek()
        if token is not None and token[0].isdigit() and len(token) > 1:
            self.tokens[self.pos] = token[1:]
            return Fraction(int(token[0]))
        return self.atom()

    def group(self) -> Number:
        self.take("{")
        value = self.sum()
        self.take("}")
        return value

    def argument(self) -> Number:
        """A command's argument: a group, or one token (``\\frac12``, ``\\sqrt2``)."""
        return self.group() if self.peek() == "{" else self.atom_single()

    def atom(self) -> Number:
        token = self.take()
        if token[0].isdigit() or token[0] == ".":
            return Fraction(token)
        if token in ("(", "["):  # a parenthesis, a tuple, or an interval (either closer)
            value = self.top()
            closer = self.take()
            if closer not in (")", "]"):
                raise Unreadable("unclosed parenthesis")
            if isinstance(value, Listing) and not value.brackets:
                return Listing(token + closer, value.items)
            if token + closer not in ("()", "[]"):
                raise Unreadable("a half-open bracket around one value")
            return value
        if token == "{":
            value = self.sum()
            self.take("}")
            return value
        if token == "\\{":
            items = self.top()
            self.take("\\}")
            return Listing("{}", items.items if isinstance(items, Listing) and not items.brackets else (items,))
        if token in _FRACTIONS:
            numerator = self.argument()
            return numerator / self.argument()
        if token == "\\sqrt":
            return self.root()
        if token in _FUNCTIONS:
            return _FUNCTIONS[token](self.signed())
        if token in _CONSTANTS:
            return _CONSTANTS[token]
        if _is_letter(token):
            return _variable(token + self.subscript(), self.seed)
        raise Unreadable(f"unknown token {token!r}")

    def root(self) -> Number:
        degree = 2.0
        if self.peek() == "[":
            self.take()
            degree = self.sum().real
            self.take("]")
        radicand = self.argument()
        if degree == 2:
            return _exact_root(radicand) or cmath.sqrt(radicand)
        if radicand.imag == 0 and radicand.real < 0 and degree % 2 == 1:
            return -complex(abs(radicand.real) ** (1 / degree))  # the real odd root
        return radicand ** (1 / degree)

    def subscript(self) -> str:
        """A variable's subscript, as text (``P_{0}`` and ``P_0`` are the same name)."""
        if self.peek() != "_":
            return ""
        self.take()
        if self.peek() != "{":
            return "_" + self.take()
        depth, parts = 0, []
        while True:
            token = self.take()
            depth += {"{": 1, "}": -1}.get(token, 0)
            parts.append(token)
            if depth == 0:
                return "_" + "".join(parts[1:-1])


def _is_letter(token: str) -> bool:
    return len(token) == 1 and token.isalpha() and token.isascii() and token not in _CONSTANTS


def _order_key(value: Value) -> tuple[float, float]:
    number = None if isinstance(value, Listing) else _complex(value)
    if number is None:
        raise Unreadable("a set of lists or of huge numbers")
    return (round(number.real, 9), round(number.imag, 9))


def _exact_root(value: Number) -> Fraction | None:
    """The square root of a rational square (``\\sqrt{4}`` is exactly 2), else None."""
    if not isinstance(value, Fraction) or value < 0:
        return None
    top, bottom = math.isqrt(value.numerator), math.isqrt(value.denominator)
    return Fraction(top, bottom) if top * top == value.numerator and bottom * bottom == value.denominator else None


def _whole(value: Number) -> int | None:
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else None
    return int(value.real) if not value.imag and value.real.is_integer() else None


def _power(base: Number, exponent: Number) -> Number:
    number = _complex(base)
    if number is None:
        raise Unreadable("a base too large to compare")
    size = abs(number)
    if abs(exponent) > 1e4 or (size > 1 and abs(float(exponent.real)) * math.log10(size) > 300):
        raise Unreadable("a power too large to compare")
    if base == 0 and exponent.real <= 0:
        raise Unreadable("zero to a non-positive power")
    whole = _whole(exponent)
    if whole is not None:
        return base**whole
    return complex(base) ** complex(exponent)


def _factorial(value: Number) -> Fraction:
    whole = _whole(value)
    if whole is None or not 0 <= whole <= 170:
        raise Unreadable("factorial of a non-natural or huge number")
    return Fraction(math.factorial(whole))
