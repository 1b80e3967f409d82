"""What a gold looks like: the shape tests the operators use to decide whether they apply.

Each test is conservative: a gold it is unsure of does not have the shape, so the operator
skips it rather than producing a mutant whose meaning is in doubt.
"""

from __future__ import annotations

import cmath
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from engine.testing.grading_adversary.values import Listing, Unreadable, evaluate, scalar

NUMBER: Final = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)")
INTEGER: Final = re.compile(r"-?\d+")
WORDY: Final = re.compile(
    r"\\(?:text\w*|mbox|mathrm|mathbf|mathit|operatorname|hbox|textbf)|[$%°]|\\circ|\\prime|(?<![\\a-zA-Z])[a-zA-Z]{2,}"
)
"""Words, units, currency, angles, percent: a gold holding any is not a bare value."""
RELATION: Final = re.compile(r"=|<|>|\\(?:n?eq|le|ge|leq|geq|lt|gt|ne|in|notin|not|approx|sim|pm|mp)(?![a-zA-Z])")
GROUPED_DIGITS: Final = re.compile(r"\d\s*(?:,|\{,\}|\\[,!; ]|~)\s*(?:\\!)?\s*\d")
"""A separator between digits: a thousands group, a decimal comma or a list; not for digit surgery."""
THOUSANDS: Final = re.compile(r"\d(?:,|\{,\})(?:\\!)?\s*\d{3}(?!\d)|\d\{,\}")
INFINITY: Final = re.compile(r"\\infty|∞")
DECIMAL_COMMA: Final = re.compile(r"\d,\d")
_DELIMITERS: Final = tuple(
    (left, rights)
    for prefix, suffix in (("", ""), ("\\left", "\\right"))
    for left, rights in (
        (prefix + "\\{", (suffix + "\\}",)),
        (prefix + "(", (suffix + ")", suffix + "]")),
        (prefix + "[", (suffix + ")", suffix + "]")),
    )
)


def commented(text: str) -> bool:
    """``text`` holds a LaTeX comment (an unescaped ``%``), which hides whatever follows it."""
    return re.search(r"(?<!\\)%", text) is not None


def plain_number(text: str) -> Fraction | None:
    """``text`` as an exact number when it is only a (signed) decimal numeral."""
    text = text.strip()
    return Fraction(text if not text.endswith(".") else text[:-1]) if NUMBER.fullmatch(text) else None


def plain_integer(text: str) -> int | None:
    text = text.strip()
    return int(text) if INTEGER.fullmatch(text) else None


def is_bare_value(text: str) -> bool:
    """A readable constant scalar with no words, units, relations or lists (``\\frac{\\pi}{6}``, ``42``)."""
    return not WORDY.search(text) and not RELATION.search(text) and "," not in text and scalar(text) is not None


def is_expression(text: str) -> bool:
    """A readable scalar, perhaps with variables, with no words, relations or lists (``2x+3``)."""
    if WORDY.search(text) or RELATION.search(text) or "," in text:
        return False
    try:
        value = evaluate(text)
    except Unreadable:
        return False
    return not isinstance(value, Listing) and cmath.isfinite(complex(value))  # not infinity


def value_like(text: str) -> bool:
    """One claimed value (a number, an expression, a word answer): not a relation or a list."""
    return bool(text) and not RELATION.search(text) and len(top_level_split(text)) == 1


def letters(text: str) -> set[str]:
    """Single-letter variables of ``text`` (letters outside command names)."""
    return set(re.findall(r"(?<![\\a-zA-Z])[a-zA-Z](?![a-zA-Z])", text))


def top_level_split(text: str, separator: str = ",") -> list[str]:
    """``text`` split at ``separator`` outside every bracket and brace (``\\{`` ``\\}`` count).

    An escaped character is never a separator: ``12\\,345`` is one item.
    """
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        if depth == 0 and text.startswith(separator, i):
            parts.append(text[start:i])
            start = i = i + len(separator)
            continue
        char = text[i]
        if char == "\\":
            depth += {"{": 1, "}": -1}.get(text[i + 1 : i + 2], 0)
            i += 2  # \left( counts its "(" next; \, and \{ are skipped whole
            continue
        depth += 1 if char in "({[" else -1 if char in ")}]" else 0
        i += 1
    parts.append(text[start:])
    return parts


@dataclass(frozen=True)
class Collection:
    """A bracketed or bare comma list: ``opener`` + ``", ".join(items)`` + ``closer``."""

    opener: str
    items: tuple[str, ...]
    closer: str

    @property
    def is_set(self) -> bool:
        return self.opener == "\\{"

    @property
    def is_bare(self) -> bool:
        return not self.opener

    def text(self, items: list[str] | tuple[str, ...], separator: str = ", ") -> str:
        return self.opener + separator.join(items) + self.closer


def collection(text: str) -> Collection | None:
    """The collection ``text`` is, if it is one list of at least two items and nothing else.

    A thousands group (``1,000``) and, in a bare list, a decimal comma (``1,22``) are refused.
    """
    text = text.strip()
    if THOUSANDS.search(text) or "\\cup" in text or "=" in text:
        return None
    opener, closer, inner = "", "", text
    for left, rights in _DELIMITERS:
        for right in rights:
            if text.startswith(left) and text.endswith(right) and _balanced(text[len(left) : -len(right)]):
                opener, closer, inner = left, right, text[len(left) : -len(right)]
    items = tuple(item.strip() for item in top_level_split(inner))
    if len(items) < 2 or not all(items) or not _balanced(inner) or (not opener and DECIMAL_COMMA.search(text)):
        return None
    return Collection(opener, items, closer)


def interval(text: str) -> Collection | None:
    """``text`` when it is surely an interval: mixed or square brackets, or an infinite end.

    ``(1, 2)`` alone is not: it may be a point.
    """
    found = collection(text)
    if found is None or found.is_set or found.is_bare or len(found.items) != 2:
        return None
    square = found.opener.endswith("[") or found.closer.endswith("]")
    return found if square or INFINITY.search(text) else None


def _balanced(text: str) -> bool:
    depth = 0
    for part in re.findall(r"\\[{}]|[()\[\]{}]", text):
        depth += 1 if part in ("(", "[", "{", "\\{") else -1
        if depth < 0:
            return False
    return depth == 0


_WRAPPERS: Final = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"))


def core(gold: str) -> str:
    """``gold`` without the math delimiters or ``\\boxed{}`` that enclose all of it."""
    text = gold.strip()
    while True:
        for left, right in _WRAPPERS:
            if len(text) > len(left) + len(right) and text.startswith(left) and text.endswith(right):
                inner = text[len(left) : -len(right)]
                if left not in inner:  # "$a$ and $b$" is two formulas, not one wrapped
                    text = inner.strip()
                    break
        else:
            if text.startswith("\\boxed{") and text.endswith("}") and _balanced(text[7:-1]):
                text = text[7:-1].strip()
                continue
            return text


def single_term(text: str) -> bool:
    """No top-level ``+``, binary ``-``, ``\\pm`` or comma: appending to it reads one way only."""
    body = text.strip().lstrip("-").lstrip()
    return all(len(top_level_split(body, op)) == 1 for op in ("+", "-", ",", "\\pm", "\\mp", "="))


def braced(text: str) -> str:
    """``text`` as one group when it is more than a numeral (``42`` stays, ``x+1`` becomes ``{x+1}``)."""
    return text if NUMBER.fullmatch(text) and not text.startswith("-") else "{" + text + "}"


def variable_for(text: str) -> str:
    """A variable name ``text`` does not already use."""
    return next(name for name in "xyztnkmuvw" if name not in letters(text))
