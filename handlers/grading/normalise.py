"""Stage 1 of apollo's math grader: rewrite a final answer into plain LaTeX.

Pure string work, no parsing library: what a model writes in Unicode, Python or
prose becomes the LaTeX that the parse stage reads. Each rule is one small function,
applied in the order of :data:`_RULES`. Rules never guess: text that could mean two
things (``1,2`` is a pair, not one point two; ``3 4`` is not 34) is left alone, so
the parse stage refuses it rather than reading one meaning by luck.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final

_ZERO_WIDTH: Final = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
_SPACES: Final = dict.fromkeys(
    map(ord, "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"), " "
)
_WHITESPACE_RUN: Final = re.compile(r"\s+")
"""Collapsed to one space first: later patterns then never scan long runs (linear time)."""
_VULGAR: Final = {
    "½": (1, 2), "⅓": (1, 3), "⅔": (2, 3), "¼": (1, 4), "¾": (3, 4), "⅕": (1, 5),
    "⅖": (2, 5), "⅗": (3, 5), "⅘": (4, 5), "⅙": (1, 6), "⅚": (5, 6), "⅐": (1, 7),
    "⅛": (1, 8), "⅜": (3, 8), "⅝": (5, 8), "⅞": (7, 8), "⅑": (1, 9), "⅒": (1, 10),
}
_SYMBOLS: Final = {
    "∞": r"\infty ", "π": r"\pi ", "≤": r"\le ", "≥": r"\ge ", "≠": r"\ne ",
    "\u00d7": r"\times ", "·": r"\cdot ", "⋅": r"\cdot ", "∙": r"\cdot ", "÷": r"\div ",
    "\u2212": "-", "\u2013": "-", "\u222a": r"\cup ", "∩": r"\cap ", "∈": r"\in ", "±": r"\pm ",
    "∓": r"\mp ", "°": r"^\circ ", "\u2044": "/", "∅": r"\emptyset ",
}
_SUPERSCRIPTS: Final = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SUPERSCRIPT_RUN: Final = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+")
_ROOT: Final = re.compile(r"([√∛∜])\s*(\([^()]*\)|\{[^{}]*\}|\d+(?:\.\d+)?|\\?[A-Za-z]+)")
_ROOT_INDEX: Final = {"√": "", "∛": "[3]", "∜": "[4]"}

_DELIMITERS: Final = (("$$", "$$"), ("$", "$"), (r"\(", r"\)"), (r"\[", r"\]"))
_BOX: Final = re.compile(r"\\(?:boxed|fbox)\s*\{")
_STYLE: Final = re.compile(r"\\(?:displaystyle|textstyle|left|right|big|Big|bigg|Bigg)(?![A-Za-z])")
_EMPTY_SET: Final = re.compile(r"\\varnothing|\\\{\s*\\\}")
_WHOLE_TEXT: Final = re.compile(r"\\(?:text|textbf|textnormal|mathrm|mbox|textit)\{([^{}]*)\}")

_E_NOTATION: Final = re.compile(r"(?<![\w.\\])(\d+(?:\.\d*)?|\.\d+)[eE]([+-]?\d+)(?![\w.])")
_LIST_WORD: Final = re.compile(r"(?:\s*,)?\s*(?:\\text\{\s*(?:and|or)\s*\}|\s(?:and|or)\s)\s*")
_SCALES: Final = {"thousand": "3", "million": "6", "billion": "9", "trillion": "12"}
_SCALE_WORD: Final = re.compile(r"\s*\b(thousand|million|billion|trillion)\b", re.IGNORECASE)
_MIXED_NUMBER: Final = re.compile(r"^\s*(-?)(\d+)\s+(\d+)\s*/\s*(\d+)\s*$")
_NUMBER_TIMES_BRACKET: Final = re.compile(r"(?<=[\d)])\s*(?=\(\s*-?[\d.]+\s*\))")
_POWER_CHAIN: Final = re.compile(r"(?<![\w.])[\w.]+(?:\s*\^\s*[\w.]+){2,}")
_PYTHON_FLOAT: Final = re.compile(r"(\d)\.(?![\d\w])")
_LATEX_GROUPING: Final = re.compile(r"(?<=\d)(?:\{,\}|,\\!|\\,|\\!|\\;|\\ |~)(?=\d{3}(?!\d))")
_GROUPED_NUMBER: Final = re.compile(r"[-+]?\d{1,3}(?:(,|\s)\d{3})(?:\1\d{3})*(?:\.\d+)?")
_PERCENT: Final = re.compile(r"\s*(?:\\%|%|\\text\{\s*\\?%\s*\}|\s(?:percent|pct)\.?)$", re.IGNORECASE)
_DEGREES_AND_CURRENCY: Final = re.compile(
    r"\^\s*\{?\s*\\circ\s*\}?|\\circ|\\degree|\s*degrees?$|\\\$|^\$(?=\s*\d)|[€£¥]"
)
_TRAILING_UNIT: Final = re.compile(
    r"(?:\\(?:text|textnormal|mbox|mathrm|textbf|operatorname)\s*\{\s*[A-Za-z][A-Za-z .]*\}"
    r"|(?<![A-Za-z\\])[A-Za-z]{2,}\.?)(?:\s*\^\s*\{?\d\}?)?$"
)
_UNIT_GAP_REVERSED: Final = re.compile(r"(?:[,;!: ]\\|~|\s)+")
"""Spaces and LaTeX spacing before a unit, matched on the reversed text (linear time)."""
_LETTER_OR_COMMAND: Final = re.compile(r"[A-Za-z\\]")
_ASSIGNED: Final = re.compile(r"^\s*(?P<name>[^=<>]+?)\s*(?:=|\\in(?![A-Za-z]))\s*(?P<value>[^=<>]+)$")
_SUBSCRIPT: Final = re.compile(r"_(?:\{[^{}]*\}|\w)")
_UNIT_ALIASES: Final = {
    "m": "meter", "metre": "meter", "cm": "centimeter", "centimetre": "centimeter", "mm": "millimeter",
    "km": "kilometer", "kilometre": "kilometer", "ft": "foot", "feet": "foot", "in": "inche", "inch": "inche",
    "sec": "second", "min": "minute", "h": "hour", "hr": "hour", "g": "gram", "kg": "kilogram",
    "deg": "degree", "mi": "mile", "yd": "yard",
}
_COMMAND: Final = re.compile(r"\\[A-Za-z]+")
_NAME: Final = re.compile(r"[A-Za-z|:(),'{}\s]+")
_PRODUCT: Final = re.compile(r"[a-z]{2}")
_RELATION_WORDS: Final = (
    (re.compile(r"\\(?:leq?slant|leq|le)(?![A-Za-z])|<="), r" \le "),
    (re.compile(r"\\(?:geq?slant|geq|ge)(?![A-Za-z])|>="), r" \ge "),
    (re.compile(r"\\lt(?![A-Za-z])"), " < "),
    (re.compile(r"\\gt(?![A-Za-z])"), " > "),
)
_BOUND: Final = r"[^<>=,;]+?"
_OPS: Final = r"(<|>|\\le|\\ge)"
_CHAIN: Final = re.compile(rf"^\s*(?P<lo>{_BOUND})\s*{_OPS}\s*(?P<var>[A-Za-z])\s*{_OPS}\s*(?P<hi>{_BOUND})\s*$")
_ONE_SIDED: Final = re.compile(rf"^\s*(?P<left>{_BOUND})\s*{_OPS}\s*(?P<right>{_BOUND})\s*$")
_VARIABLE: Final = re.compile(r"^[A-Za-z]$")


@dataclass(frozen=True)
class Normalised:
    """An answer rewritten for parsing, and whether it was written as a percentage."""

    text: str
    percent: bool = False
    equation: str = ""
    """The text before a name on the left of ``=`` was dropped (``y = 2x + 1``), else empty."""
    name: str = ""
    """That name (``y``), else empty."""
    unit: str = ""
    """The unit dropped after the number (``cm``), else empty."""


def normalise_answer(text: str) -> Normalised:
    """``text`` rewritten into plain LaTeX by every rule in turn (see module docstring)."""
    for rule in _RULES:
        text = rule(text)
    percent = bool(_PERCENT.search(text))
    if percent:
        text = _PERCENT.sub("", text)
    text, unit = _units(text)
    text = _unwrap(text)
    name, value = _assignment(text)
    equation = _thousands(text).strip() if name else ""
    for rule in _VALUE_RULES:
        value = rule(value)
    return Normalised(value.strip(), percent, equation, _squash_unit(name), _squash_unit(unit))


def _unicode_math(text: str) -> str:
    """Unicode math symbols as LaTeX, odd spaces and runs of spaces as one space, full-width
    forms as ASCII."""
    text = _WHITESPACE_RUN.sub(" ", text.translate(_ZERO_WIDTH).translate(_SPACES))
    for char, (top, bottom) in _VULGAR.items():
        text = text.replace(char, rf"\frac{{{top}}}{{{bottom}}}")
    text = _SUPERSCRIPT_RUN.sub(lambda m: "^{" + m.group().translate(_SUPERSCRIPTS) + "}", text)
    text = _ROOT.sub(_root_as_latex, text)
    for char, latex in _SYMBOLS.items():
        text = text.replace(char, latex)
    return unicodedata.normalize("NFKC", text)


def _root_as_latex(match: re.Match[str]) -> str:
    operand = match.group(2)
    if operand[0] in "({":
        operand = operand[1:-1]
    return rf"\sqrt{_ROOT_INDEX[match.group(1)]}{{{operand}}}"


def _unwrap(text: str) -> str:
    """Drop math delimiters, a ``\\boxed{}`` around everything, styling and a final full stop."""
    previous = None
    while previous != text:
        previous = text
        text = text.strip().removesuffix(".").strip()
        for opening, closing in _DELIMITERS:
            if len(text) > len(opening) + len(closing) and text.startswith(opening) and text.endswith(closing):
                text = text[len(opening) : -len(closing)]
        text = _unbox(text)
    return _EMPTY_SET.sub(lambda _: r"\emptyset", _STYLE.sub("", text))


def _unbox(text: str) -> str:
    """The content of a ``\\boxed{...}`` that spans the whole text, else ``text``."""
    match = _BOX.match(text)
    if match is None or not text.endswith("}"):
        return text
    depth = 0
    for index in range(match.end() - 1, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return text[match.end() : index] if index == len(text) - 1 else text
    return text


def _words(text: str) -> str:
    """``!=`` as ``\\ne``, "million" as a power of ten, "and"/"or" between items as a comma,
    ``2(12)`` as a product (the parser would add) and a mixed number (``7 3/4``) as a sum."""
    text = text.replace("!=", r" \ne ")
    text = _LIST_WORD.sub(", ", text)
    text = _SCALE_WORD.sub(lambda m: r" \times 10^{" + _SCALES[m.group(1).lower()] + "}", text)
    text = _NUMBER_TIMES_BRACKET.sub(lambda _: r"\cdot ", text)
    return _MIXED_NUMBER.sub(r"\1(\2+\3/\4)", text)


def _python_syntax(text: str) -> str:
    """``**`` powers, ``2./3`` floats and ``6.02e23`` exponents as LaTeX; a chain of powers
    groups to the right as in Python and in mathematics (``9**9**9`` is ``9^{9^{9}}``)."""
    text = _POWER_CHAIN.sub(_right_nested_power, text.replace("**", "^"))
    text = _E_NOTATION.sub(r"\1\\times 10^{\2}", text)
    return _PYTHON_FLOAT.sub(r"\1", text)


def _right_nested_power(match: re.Match[str]) -> str:
    base, *exponents = re.split(r"\s*\^\s*", match.group())
    return base + "".join("^{" + exponent for exponent in exponents) + "}" * len(exponents)


def _thousands(text: str) -> str:
    """Digit grouping removed: LaTeX thin spaces and ``{,}`` anywhere, a plain comma or space
    only when the whole answer is one number grouped in threes (``1,000``, ``2 500``)."""
    text = _LATEX_GROUPING.sub("", text)
    stripped = text.strip()
    if _GROUPED_NUMBER.fullmatch(stripped):
        return re.sub(r"[,\s]", "", stripped)
    return text


def _degrees_and_currency(text: str) -> str:
    return _DEGREES_AND_CURRENCY.sub("", text).strip()


def _units(text: str) -> tuple[str, str]:
    """A unit written after a number (``10\\text{ cm}^2``, ``125 miles``) is split off."""
    match = _TRAILING_UNIT.search(text)
    if match is None:
        return text, ""
    value = text[: match.start()]
    gap = _UNIT_GAP_REVERSED.match(value[::-1])
    value = value[: len(value) - gap.end()] if gap else value
    after_last_letter = _LETTER_OR_COMMAND.split(value)[-1]
    if "=" in value or not any(char.isdigit() for char in after_last_letter):
        return text, ""
    return value.strip(), text[match.start() :].strip()


def _squash_unit(text: str) -> str:
    """A unit or name compared without LaTeX wrapping, spaces, a plural s or abbreviation."""
    text = re.sub(r"\\[A-Za-z]+\s*\{([^{}]*)\}", r"\1", text)
    text = re.sub(r"[\s{}~\\,;!.]", "", text)
    text = text.removesuffix("s") if len(text) > 2 and not text.endswith("ss") else text
    return _UNIT_ALIASES.get(text.lower(), text)


def _plain_text(text: str) -> str:
    """A whole answer in ``\\text{...}`` is that text (``\\text{Evelyn}``, ``\\text{(C)}``)."""
    match = _WHOLE_TEXT.fullmatch(text.strip())
    return match.group(1).strip() if match else text


def _assignment(text: str) -> tuple[str, str]:
    """``x = 4``, ``f(x) = 4``, ``(p, q) = (3, 2)``, ``AB = 4`` and ``x \\in [0, 3]`` are their
    right-hand side, returned with the name. A name is letters, subscripts and brackets with
    no number or operator; two lower-case letters side by side are a product (``xy = 6`` is
    an equation), so they are no name."""
    match = _ASSIGNED.match(text)
    if match is None:
        return "", text
    name = match.group("name").strip()
    letters = _COMMAND.sub("", _SUBSCRIPT.sub("", name))
    if not _NAME.fullmatch(letters) or _PRODUCT.search(letters):
        return "", text
    return name, match.group("value").strip()


def _relations(text: str) -> str:
    """One-variable inequalities as intervals: ``-1 < x < 4`` is ``(-1, 4)``, ``x \\ge 5`` is
    ``[5, \\infty)``."""
    for pattern, latex in _RELATION_WORDS:
        text = pattern.sub(lambda _, latex=latex: latex, text)
    chain = _CHAIN.match(text)
    if chain and chain.group(2) == chain.group(4) and chain.group(2) in ("<", r"\le"):
        return _interval(chain.group("lo"), chain.group(2), chain.group("hi"), chain.group(4))
    if chain and chain.group(2) == chain.group(4) and chain.group(2) in (">", r"\ge"):
        return _interval(chain.group("hi"), chain.group(4), chain.group("lo"), chain.group(2))
    one = _ONE_SIDED.match(text)
    if one is None:
        return text
    left, op, right = one.group("left").strip(), one.group(2), one.group("right").strip()
    if _VARIABLE.match(left) and not _VARIABLE.match(right) and right:
        bound, below = right, op in ("<", r"\le")
    elif _VARIABLE.match(right) and not _VARIABLE.match(left) and left:
        bound, below = left, op in (">", r"\ge")
    else:
        return text
    closed = op in (r"\le", r"\ge")
    if below:
        return rf"(-\infty, {bound}" + ("]" if closed else ")")
    return ("[" if closed else "(") + rf"{bound}, \infty)"


def _interval(lo: str, lo_op: str, hi: str, hi_op: str) -> str:
    lo, hi = lo.strip(), hi.strip()
    if not lo or not hi:
        return f"{lo} {lo_op} x {hi_op} {hi}"
    closed = (r"\le", r"\ge")
    return ("[" if lo_op in closed else "(") + f"{lo}, {hi}" + ("]" if hi_op in closed else ")")


_RULES: Final = (_unicode_math, _unwrap, _plain_text, _words, _python_syntax, _degrees_and_currency, _thousands)
_VALUE_RULES: Final = (_relations, _thousands)
