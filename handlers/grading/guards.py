"""Bounds on what the math grader hands to sympy, checked before sympy evaluates.

sympy computes exact integers: ``9^{9^{9}}`` or ``1000000!`` would run for hours and
fill memory, and C-level integer arithmetic cannot be interrupted by the grading
timeout. So a reading is refused, with the reason, when its text is too long or too
deeply nested, or when a number in its expression tree would have more digits than
:data:`MAX_DIGITS`. Magnitudes are estimated in log space, never computed.
"""

from __future__ import annotations

import math
import re
from typing import Any, Final

from handlers.errors import HandlerError

MAX_CHARS: Final = 4000
"""Longest final answer read at all; a longer one is not an answer but a passage."""
MAX_PARSED_CHARS: Final = 1000
MAX_DEPTH: Final = 24
MAX_NODES: Final = 3000
MAX_DIGITS: Final = 10_000
MAX_PRODUCT_TERMS: Final = 1000
_CONTROL: Final = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_BIG_BINOMIAL: Final = re.compile(r"\\[dt]?binom\s*\{?\s*\d{4,}|\\choose\s*\{?\s*\d{4,}")


class TooCostly(HandlerError):  # a verdict, not an error: the reading is refused
    """The text or expression is refused; the message says why."""


def check_raw(text: str) -> str | None:
    """Why ``text`` cannot be an answer at all (too long, binary), or ``None``."""
    if len(text) > MAX_CHARS:
        return f"{len(text)} characters long (limit {MAX_CHARS})"
    if _CONTROL.search(text):
        return "contains control characters (binary data?)"
    return None


def check_text(text: str) -> str | None:
    """Why the normalised ``text`` must not reach the parser, or ``None``."""
    if len(text) > MAX_PARSED_CHARS:
        return f"{len(text)} characters after normalisation (limit {MAX_PARSED_CHARS})"
    depth = deepest = braces = 0
    for index, char in enumerate(text):
        escaped = index > 0 and text[index - 1] == "\\"
        if char in "{([":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "})]":
            depth -= 1
        if not escaped:
            braces += {"{": 1, "}": -1}.get(char, 0)
            if braces < 0:
                return "unbalanced braces (a '}' closes nothing)"
    if braces:
        return f"unbalanced braces ({braces} '{{' left open)"
    if deepest > MAX_DEPTH:
        return f"nested {deepest} levels deep (limit {MAX_DEPTH})"
    if _BIG_BINOMIAL.search(text):
        return "a binomial coefficient too large to evaluate"
    return None


def check_tree(expr: Any) -> None:
    """Raise :class:`TooCostly` when ``expr`` holds a number too large to evaluate."""
    nodes = 0
    stack = [expr]
    while stack:
        node = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            msg = f"more than {MAX_NODES} terms"
            raise TooCostly(msg)
        args = getattr(node, "args", ())
        if type(node).__name__ == "Product":
            _check_product(node)
        if getattr(node, "is_Pow", False) or _is_factorial(node):
            digits = _log10_bound(node)
            if digits is not None and digits > MAX_DIGITS:
                msg = f"a number with more than {MAX_DIGITS} digits"
                raise TooCostly(msg)
        stack.extend(arg for arg in args if hasattr(arg, "args"))


def _check_product(node: Any) -> None:
    """A product over more than :data:`MAX_PRODUCT_TERMS` terms would be multiplied out."""
    for limits in node.args[1:]:
        low, high = limits[1], limits[2]
        if getattr(high - low, "is_number", False) and abs(complex(high - low)) > MAX_PRODUCT_TERMS:
            msg = f"a product of more than {MAX_PRODUCT_TERMS} terms"
            raise TooCostly(msg)


def _log10_bound(node: Any) -> float | None:
    """Upper bound of log10 |node| for numeric nodes; ``None`` when it holds symbols."""
    if getattr(node, "free_symbols", None):
        return None
    if getattr(node, "is_Integer", False):
        return abs(int(node)).bit_length() * math.log10(2)
    if getattr(node, "is_Rational", False):
        return (abs(node.p).bit_length() - abs(node.q).bit_length() + 1) * math.log10(2)
    if getattr(node, "is_Float", False):
        return _float_bound(node)
    if getattr(node, "is_Pow", False):
        return _power_bound(node)
    if _is_factorial(node):
        return _factorial_bound(node.args[0])
    parts = [_log10_bound(arg) for arg in getattr(node, "args", ())]
    known = [part for part in parts if part is not None]
    if not known:
        return 0.0
    if getattr(node, "is_Mul", False):
        return sum(max(part, 0.0) for part in known)
    return max(known) + 1.0


def _power_bound(node: Any) -> float | None:
    base, exponent = node.args
    base_digits, exponent_digits = _log10_bound(base), _log10_bound(exponent)
    if base_digits is None or exponent_digits is None:
        return None
    if exponent_digits > 7:
        return math.inf if base not in (0, 1, -1) else 0.0
    return abs(complex(exponent)) * max(abs(base_digits), 1.0)


def _factorial_bound(argument: Any) -> float | None:
    digits = _log10_bound(argument)
    if digits is None:
        return None
    if digits > 7:
        return math.inf
    n = abs(complex(argument))
    return n * math.log10(max(n, 2.0))


def _float_bound(node: Any) -> float:
    value = abs(float(node))
    return math.log10(value) if 0 < value < math.inf else 400.0


def _is_factorial(node: Any) -> bool:
    return type(node).__name__ in ("factorial", "factorial2", "subfactorial", "binomial", "gamma")
