"""The closed vocabularies of apollo's math grader: every word and command it reads.

The grader is sound by construction because nothing outside these tables is dropped
or guessed: a command, word or character that is not listed here makes the reading
fail, and a failed reading scores 1 only against identical canonical text. Adding an
entry is a reviewed change (``docs/grading.md`` keeps the soundness table): each one
must either be purely presentational, or be read for its meaning (a unit is kept and
compared, a scale word multiplies, a relation becomes a relation).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

PRESENTATIONAL: Final = frozenset({
    "left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "biggl", "biggr",
    "displaystyle", "textstyle", "scriptstyle", "middle",
})
"""Commands that change only how the next symbol is drawn: dropped."""

SPACING: Final = frozenset({",", ":", ";", "!", " ", "quad", "qquad", "enspace", "thinspace", "medspace",
                            "thickspace", "negthinspace", "hfill"})
"""Spacing commands: read as a space, which never joins, adds or multiplies two numbers."""

GROUPING_SEPARATORS: Final = ("{,}", ",\\!", "\\,", "\\!", "\\;")
"""LaTeX digit-grouping marks (MATH writes ``10{,}080`` and ``10,\\!080``), read as grouping
only between a digit and exactly three digits."""

FRACTIONS: Final = frozenset({"frac", "dfrac", "tfrac", "cfrac"})
TEXT_COMMANDS: Final = frozenset({"text", "textrm", "textnormal", "textbf", "textit", "mbox", "textsf", "texttt"})
"""Font commands for prose: their content is read in text mode (words, not variables)."""
ROMAN: Final = frozenset({"mathrm", "mathit", "operatorname", "mathsf"})
"""Upright math: one letter is a constant or variable, a word must be a function or a unit."""

FUNCTIONS: Final = frozenset({
    "sin", "cos", "tan", "cot", "sec", "csc", "arcsin", "arccos", "arctan", "arccot", "arcsec",
    "arccsc", "sinh", "cosh", "tanh", "coth", "ln", "log", "exp", "lg",
})
"""Functions read by name, with or without a backslash (``\\sin x``, ``sin(x)``)."""

GREEK: Final = frozenset({
    "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta",
    "iota", "kappa", "lambda", "mu", "nu", "xi", "rho", "varrho", "sigma", "varsigma", "tau",
    "upsilon", "phi", "varphi", "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi",
    "Sigma", "Upsilon", "Phi", "Psi", "Omega", "hbar", "ell",
})
"""Greek letters (and ``\\hbar``, ``\\ell``) are variables (``\\pi`` is the constant, see :data:`CONSTANTS`)."""

CONSTANTS: Final = frozenset({"pi", "infty", "emptyset", "varnothing", "imath"})


RELATIONS: Final = {
    "=": "=", "<": "<", ">": ">", "le": "<=", "leq": "<=", "leqslant": "<=", "ge": ">=", "geq": ">=",
    "geqslant": ">=", "lt": "<", "gt": ">", "ne": "!=", "neq": "!=", "in": "in", "notin": "notin",
    "approx": "approx", "sim": "approx", "simeq": "approx", "equiv": "equiv", "cong": "approx",
}
"""Relation symbols and what they mean; ``\\not`` before ``=``, ``\\in``, ``<`` ... negates."""
NEGATED: Final = {"=": "!=", "in": "notin", "<": ">=", ">": "<=", "<=": ">", ">=": "<"}

SCALE_WORDS: Final = {"hundred": 100, "thousand": 10**3, "million": 10**6, "billion": 10**9,
                      "trillion": 10**12, "dozen": 12}
"""Number words that multiply the number before them (``2 million``); read, never dropped."""
LIST_WORDS: Final = frozenset({"and", "or"})
"""Between items of a list (``3 or 5``, ``19, 46, and 82``)."""
PERCENT_WORDS: Final = frozenset({"percent", "pct", "per cent"})


@dataclass(frozen=True)
class Unit:
    """A unit read after a number: its dimension and its size in the dimension's base unit."""

    name: str
    dimension: str
    factor: Fraction | None = None
    """Size in the base unit of the dimension; ``None`` when it converts to nothing else."""


def _units() -> dict[str, Unit]:
    table: dict[str, Unit] = {}

    def add(dimension: str, factor: Fraction | None, name: str, *aliases: str) -> None:
        unit = Unit(name, dimension, factor)
        for alias in (name, *aliases):
            table[alias] = unit

    one = Fraction(1)
    # Length, base metre.
    add("length", one, "meter", "m", "meters", "metre", "metres")
    add("length", Fraction(1, 100), "centimeter", "cm", "centimeters", "centimetre", "centimetres")
    add("length", Fraction(1, 1000), "millimeter", "mm", "millimeters", "millimetre", "millimetres")
    add("length", Fraction(1000), "kilometer", "km", "kilometers", "kilometre", "kilometres")
    add("length", Fraction(1, 10**6), "micrometer", "um", "micrometers", "microns", "micron")
    add("length", Fraction(1, 10**9), "nanometer", "nm", "nanometers")
    add("length", Fraction(3048, 10000), "foot", "ft", "feet", "foot")
    add("length", Fraction(254, 10000), "inch", "inches", "inch")
    add("length", Fraction(9144, 10000), "yard", "yd", "yards")
    add("length", Fraction(1609344, 1000), "mile", "mi", "miles")
    add("length", Fraction(1, 10**10), "angstrom", "angstroms")
    add("length", None, "parsec", "pc", "parsecs")
    add("length", None, "kiloparsec", "kpc", "kiloparsecs")
    add("length", None, "megaparsec", "Mpc", "megaparsecs")
    add("length", None, "astronomical unit", "AU", "au")
    add("length", None, "light-year", "ly", "lightyear", "lightyears")
    # Mass, base kilogram.
    add("mass", Fraction(1, 1000), "gram", "g", "grams", "gramme", "grammes")
    add("mass", one, "kilogram", "kg", "kilograms")
    add("mass", Fraction(1, 10**6), "milligram", "mg", "milligrams")
    add("mass", Fraction(45359237, 10**8), "pound", "lb", "lbs", "pounds")
    add("mass", Fraction(45359237, 16 * 10**8), "ounce", "oz", "ounces")
    add("mass", Fraction(1000), "tonne", "t", "tonnes")
    # Time, base second.
    add("time", one, "second", "s", "sec", "secs", "seconds")
    add("time", Fraction(60), "minute", "min", "mins", "minutes")
    add("time", Fraction(3600), "hour", "h", "hr", "hrs", "hours")
    add("time", Fraction(86400), "day", "days")
    add("time", Fraction(604800), "week", "weeks")
    add("time", None, "month", "months")
    add("time", None, "year", "years", "yr", "yrs")
    # Volume, base litre; area units are lengths to a power.
    add("volume", one, "liter", "l", "L", "liters", "litre", "litres")
    add("volume", Fraction(1, 1000), "milliliter", "ml", "mL", "milliliters", "millilitres")
    add("volume", Fraction(3785411784, 10**9), "gallon", "gal", "gallons")
    add("area", Fraction(10000), "hectare", "ha", "hectares")
    add("area", Fraction(40468564224, 10**7), "acre", "acres")
    # Speed, energy, force, power, charge, temperature: converted only within the same unit.
    add("speed", Fraction(1609344, 3600 * 1000), "mph")
    add("speed", Fraction(1000, 3600), "kph", "kmh")
    add("energy", one, "joule", "J", "joules")
    add("energy", Fraction(1000), "kilojoule", "kJ")
    add("energy", None, "electronvolt", "eV")
    add("energy", Fraction(1, 10**7), "erg", "ergs")
    add("energy", None, "calorie", "cal", "calories")
    add("energy", None, "kilocalorie", "kcal", "Cal", "kilocalories")
    add("force", one, "newton", "N", "newtons")
    add("power", one, "watt", "W", "watts")
    add("power", Fraction(1000), "kilowatt", "kW", "kilowatts")
    add("charge", None, "coulomb", "C", "coulombs")
    add("capacitance", None, "farad", "F", "farads")
    add("amount", None, "mole", "mol", "moles")
    add("voltage", None, "volt", "V", "volts")
    add("current", None, "ampere", "A", "amperes", "amps")
    add("temperature", None, "kelvin", "K", "kelvins")
    add("frequency", one, "hertz", "Hz")
    add("pressure", one, "pascal", "Pa", "pascals")
    add("pressure", None, "atmosphere", "atm")
    # Angles, base radian (degrees convert by pi/180, handled where pi is known).
    add("angle", None, "degree", "deg", "degrees", "circ")
    add("angle", None, "radian", "rad", "rads", "radians")
    add("angle", None, "gradian", "grad", "gon", "gradians")
    add("angle", None, "arcsecond", "arcsec", "arcseconds")
    add("angle", None, "arcminute", "arcmin", "arcminutes")
    # Money: symbols and codes are currencies; a cent is a hundredth of a dollar.
    add("money:USD", one, "dollar", "$", "USD", "dollars", "usd")
    add("money:USD", Fraction(1, 100), "cent", "cents", "¢")
    add("money:EUR", one, "euro", "€", "EUR", "euros", "eur")
    add("money:GBP", one, "pound sterling", "£", "GBP", "gbp")
    add("money:JPY", one, "yen", "¥", "JPY", "jpy")
    add("money:CNY", one, "yuan", "CNY", "RMB", "cny", "rmb")
    add("money:INR", one, "rupee", "rupees", "INR", "₹")
    # Percent is a unit too: it is kept, and compared against a bare number as n or n/100.
    add("percent", None, "percent", "%", "percent", "pct", "per cent")
    return table


UNITS: Final = _units()
_CASE_SENSITIVE: Final = frozenset(
    spelling.lower() for spelling, unit in UNITS.items()
    if any(other.lower() == spelling.lower() and UNITS[other] != unit for other in UNITS)
)
"""Spellings that name two units when case is ignored (``cal``, ``Cal``): matched exactly only."""

COUNT_NOUNS: Final = frozenset({
    "apple", "apples", "people", "person", "persons", "student", "students", "way", "ways", "point",
    "points", "digit", "digits", "edge", "edges", "unit", "units", "item", "items", "book", "books",
    "page", "pages", "ball", "balls", "card", "cards", "coin", "coins", "car", "cars", "tree",
    "trees", "cookie", "cookies", "marble", "marbles", "box", "boxes", "egg", "eggs", "flower",
    "flowers", "candy", "candies", "ticket", "tickets", "child", "children", "kid", "kids", "game",
    "games", "vertex", "vertices", "face", "faces", "triangle", "triangles",
    "number", "numbers", "integer", "integers", "solution", "solutions", "term", "terms", "step",
    "steps", "row", "rows", "seat", "seats", "animal", "animals", "dog", "dogs", "cat", "cats",
    "bird", "birds", "fish", "chicken", "chickens", "cow", "cows", "bag", "bags", "bottle",
    "bottles", "cup", "cups", "slice", "slices", "piece", "pieces", "sheep", "shirt", "shirts",
    "toy", "toys", "pencil", "pencils", "pen", "pens", "sticker", "stickers", "glass", "glasses",
    "letter", "letters", "word", "words", "line", "lines", "team", "teams", "member", "members",
    "worker", "workers", "visitor", "visitors", "house", "houses", "room", "rooms", "lap", "laps",
    "candle", "candles", "strawberry", "strawberries", "orange", "oranges",
    "banana", "bananas", "grape", "grapes", "cake", "cakes", "pie", "pies", "muffin", "muffins",
    "sandwich", "sandwiches", "bead", "beads", "block", "blocks", "brick", "bricks", "pizza",
    "pizzas", "tile", "tiles", "chair", "chairs", "table", "tables", "bike", "bikes", "bicycle",
    "bicycles", "boy", "boys", "girl", "girls", "man", "men", "woman", "women", "player",
    "players", "customer", "customers", "stamp", "stamps", "sock", "socks", "shoe",
    "shoes", "hat", "hats",
})
"""Nouns that only name what is counted (``24 ways``): allowed after a number when the
ground truth has none. Words that change a count (pairs, dozens, halves, squared) are not here."""


NOT_COUNT_NOUNS: Final = frozenset({
    "pair", "pairs", "dozen", "dozens", "couple", "couples", "score", "scores", "gross", "half", "halves", "third",
    "thirds", "quarter", "quarters", "fifth", "fifths", "tenth", "tenths", "hundredth", "hundredths", "hundred",
    "hundreds", "thousand", "thousands", "million", "millions", "billion", "billions", "percent", "percents",
    "times", "squared", "cubed", "double", "triple", "twice", "minus", "plus", "over", "under", "about", "around",
    "approximately", "roughly", "nearly", "almost", "least", "most", "more", "less", "fewer", "not", "never",
    "none", "nor", "than", "and", "the", "for", "with", "each", "per", "every", "all", "any", "some", "many",
    "much", "how", "what", "which", "who", "whom", "whose", "why", "when", "where", "there", "this", "that",
    "these", "those", "its", "his", "her", "their", "our", "your", "are", "was", "were", "been", "being", "has",
    "have", "had", "does", "did", "can", "could", "will", "would", "shall", "should", "may", "might", "must",
    "maybe", "probably", "perhaps", "possibly", "likely", "wrong", "incorrect", "false", "true", "correct",
    "right", "answer", "answers", "result", "results", "total", "left", "remaining", "only", "exactly", "else",
    "other", "another", "same", "different", "if", "unless", "but", "or", "then", "so", "too", "also", "such",
    "from", "into", "onto", "out", "off", "away", "back", "again", "still", "yet", "just", "even", "ever",
    "rounded", "round", "nearest", "estimate", "estimated", "guess", "cents", "cent",
})
"""Words a question may hold that never only name what is counted: multipliers and fractions (``pairs``,
``dozen``, ``halves``), hedges and bounds, function words and judgements. A word of the question after a number
counts as the counted noun only when it is not one of these."""

_QUESTION_NOUNS: ContextVar[frozenset[str] | None] = ContextVar("question_nouns", default=None)
_ASKED_FOR: Final = re.compile(
    r"\b(?:how\s+many|number\s+of|total\s+number\s+of|how\s+much)\s+((?:[A-Za-z-]+\s+){0,2}[A-Za-z-]+)",
    re.IGNORECASE,
)
"""Where a question names what it counts: the (up to three) words after ``how many`` or ``the number of``."""
_QUESTION_WORD: Final = re.compile(r"[A-Za-z]{3,}")
_ENDS_THE_NOUN_PHRASE: Final = frozenset({
    "of", "does", "do", "did", "is", "are", "was", "were", "will", "would", "can", "could", "should", "must",
    "have", "has", "had", "she", "he", "they", "it", "we", "you", "i", "there", "in", "on", "at", "to", "for",
    "from", "that", "which", "who", "with", "than", "per", "each", "if", "when", "after", "before", "by",
})


@contextlib.contextmanager
def question_nouns(question: object) -> Iterator[None]:
    """While graded: a word that ``question`` counts (``how many red chips``, ``the number of chips``) is a counted
    noun after a number (``22 chips``), unless :data:`NOT_COUNT_NOUNS` holds it. Positive evidence: the question
    names what it counts; a word it only mentions (``friends``) is not."""
    if not isinstance(question, str):
        question = None  # a dataset's own "question" field of another type names nothing
    words: set[str] = set()
    for match in _ASKED_FOR.finditer(question or ""):
        for word in match.group(1).lower().split():
            if word in _ENDS_THE_NOUN_PHRASE:  # "how many pairs of socks" counts pairs; "chips does she" ends at does
                break
            words.update(_QUESTION_WORD.findall(word))
    nouns = frozenset(words | {_singular(word) for word in words} | {word + "s" for word in words}) - NOT_COUNT_NOUNS
    token = _QUESTION_NOUNS.set(nouns if question else None)
    units_token = _QUESTION_UNITS.set(_units_asked_in(question) if question else None)
    mentioned_token = _QUESTION_MENTIONS.set(_units_mentioned_in(question) if question else None)
    try:
        yield
    finally:
        _QUESTION_NOUNS.reset(token)
        _QUESTION_UNITS.reset(units_token)
        _QUESTION_MENTIONS.reset(mentioned_token)


_QUESTION_UNITS: ContextVar[frozenset[str] | None] = ContextVar("question_units", default=None)
_ASKED_IN: Final = re.compile(
    r"\b(?:how\s+many|number\s+of|how\s+much|in|into|as|(?:answer|result)\s+in)\s+(?:units\s+of\s+|terms\s+of\s+)?"
    r"((?:[A-Za-z]+\s+){0,2}[A-Za-z]+)",
    re.IGNORECASE,
)


def _units_asked_in(question: str) -> frozenset[str]:
    """The units a question asks its answer in (``How many minutes``, ``Express your answer in centimeters``): the
    names of the units of :data:`UNITS` among the words after those phrases (three letters or more, so ``in a`` is
    no unit)."""
    asked: set[str] = set()
    for match in _ASKED_IN.finditer(question):
        for word in match.group(1).split():
            unit = UNITS.get(word.lower()) if len(word) >= 3 and word.lower() not in _CASE_SENSITIVE else None
            if unit is not None and unit.dimension != "percent":
                asked.add(unit.name)
    return frozenset(asked)


_QUESTION_MENTIONS: ContextVar[frozenset[Unit] | None] = ContextVar("question_unit_mentions", default=None)
_DOLLAR_AMOUNT: Final = re.compile(r"(?<!\\)\$\s?\d|\\\$\s?\d")
"""A dollar sign before a number in a question (``$10 an hour``, ``\\$2.40``): an amount in dollars."""
_WORD: Final = re.compile(r"[A-Za-z]{3,}")


def _units_mentioned_in(question: str) -> frozenset[Unit]:
    """Every unit of :data:`UNITS` a question names anywhere (three letters or more), and the dollar when it writes
    an amount with a dollar sign."""
    found = {UNITS[word.lower()] for word in _WORD.findall(question)
             if word.lower() in UNITS and word.lower() not in _CASE_SENSITIVE}
    if _DOLLAR_AMOUNT.search(question):
        found.add(UNITS["dollar"])
    return frozenset(unit for unit in found if unit.dimension != "percent")


def units_mentioned() -> frozenset[Unit] | None:
    """The units the question being graded names (:func:`question_nouns`); ``None`` when no question is known."""
    return _QUESTION_MENTIONS.get()


def units_asked() -> frozenset[str] | None:
    """The names of the units the question being graded asks in (:func:`question_nouns`); ``None`` when no question
    is known, empty when it names none."""
    return _QUESTION_UNITS.get()


def unit_named(word: str) -> Unit | None:
    """The unit called ``word`` (exact spelling first, then case-folded for words of 3+ letters), or a counted
    noun: a word of :data:`COUNT_NOUNS`, or of the question being graded (:func:`question_nouns`)."""
    found = UNITS.get(word)
    if found is None and len(word) >= 3 and word.lower() not in _CASE_SENSITIVE:
        found = UNITS.get(word.lower())
    lowered = word.lower()
    asked = _QUESTION_NOUNS.get()
    # With the question known, only what it counts is a counted noun ("22 socks" is not, when it asks how many
    # pairs); without it, the closed list of nouns that only name what is counted.
    counted = lowered in asked if asked is not None else lowered in COUNT_NOUNS
    if found is None and counted and lowered not in NOT_COUNT_NOUNS:
        return Unit(_singular(lowered), "count")
    return found


def _singular(word: str) -> str:
    for plural, single in (("ies", "y"), ("ches", "ch"), ("xes", "x"), ("s", "")):
        if word.endswith(plural) and len(word) > len(plural) + 1:
            return word[: -len(plural)] + single
    return word
