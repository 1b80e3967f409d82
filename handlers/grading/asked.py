"""What the question asks about: the quantity a final box's subject names must be one the question names.

``Its cube is \\boxed{27}``, ``The perimeter is \\boxed{24}`` and ``The sum of its digits is \\boxed{9}`` state a
value of a quantity made from another. Without the question a reader cannot tell whether that quantity is the one
asked for (the gold may be exactly its cube), so the reply gives no evidence either way. With the question, it does:
a subject that names such a quantity the question never names (the cube of the answer, the perimeter when the area
was asked) states something else than the answer, and its box is not the reply's answer to this question.

The same holds for a formula the box closes: ``So $2k = \\boxed{36}$`` states 2k, which is the answer only when the
question writes it (:func:`formula_names_what_is_asked`).

Extraction reads the question from :func:`question_asked`, which the callers that know it (an episode's decider,
a regrade, the right-reply benchmark) set around the call, through ``Domain.final_answer``. Without it neither
check runs, as before.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from typing import Final

from handlers.grading.tokens import MATH_SEGMENT

_QUESTION: ContextVar[str | None] = ContextVar("question_asked", default=None)


def _family(subject: str, question: str = "", signs: str = "") -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A derived quantity: the words a subject names it by, and the words and formula signs of a question that ask
    for it (the subject's words count too)."""
    asked = rf"\b(?:{subject}|{question})\b" if question else rf"\b(?:{subject})\b"
    return re.compile(rf"\b(?:{subject})\b", re.IGNORECASE), re.compile(f"{asked}|{signs}" if signs else asked,
                                                                      re.IGNORECASE)


DERIVED_QUANTITIES: Final = {
    "cube": _family(r"cubes?|cubed", r"cubic|cubing"),
    "square": _family(r"squares?|squared", r"squaring"),
    "double": _family(r"doubl(?:e|es|ed|ing)|twice", r"two\s+times"),
    "triple": _family(r"tripl(?:e|es|ed|ing)|thrice", r"three\s+times"),
    "quadruple": _family(r"quadrupl(?:e|es|ed|ing)", r"four\s+times"),
    "half": _family(r"half|halves|halved|halving"),
    "reciprocal": _family(r"reciprocals?"),
    "inverse": _family(r"inverses?", "", r"\^\{?-1\}?"),
    "negative": _family(r"negatives?|negation|opposites?"),
    "complement": _family(r"complements?", r"complementary"),
    "conjugate": _family(r"conjugates?"),
    "digit": _family(r"digits?"),
    "remainder": _family(r"remainders?|residues?|modulo|mod", r"pmod|bmod|divided"),
    "factorial": _family(r"factorials?", "", r"\d!"),
    "logarithm": _family(r"logarithms?|logs?", r"ln"),
    "exponential": _family(r"exponentials?", r"exp"),
    "absolute value": _family(r"absolute", "", r"\|"),
    "percentage": _family(r"percent|percentages?", "", r"%"),
    "perimeter": _family(r"perimeters?"),
    "area": _family(r"areas?"),
    "volume": _family(r"volumes?"),
    "circumference": _family(r"circumferences?"),
    "diameter": _family(r"diameters?"),
    "radius": _family(r"radius|radii"),
    "sum": _family(r"sums?", r"summ\w*|total|add\w*|plus|altogether|combined", r"\+"),
    "product": _family(r"products?", r"multipl\w*|times", r"\\cdot|\\times|\\prod"),
    "difference": _family(r"differences?", r"differ\w*|subtract\w*|minus", r"-"),
    "quotient": _family(r"quotients?", r"divid\w*", r"\\frac"),
    "ratio": _family(r"ratios?", r"fractions?", r"\\frac|:"),
    "average": _family(r"averages?", r"mean"),
    "median": _family(r"medians?"),
    "successor": _family(r"next|successor|predecessor|preceding"),
}
"""Quantities made from another (its cube, twice it, the sum of its digits, the remainder, the perimeter rather than
the area): the words a final box's subject names each by, and the words or signs of a question that ask for it
(``Find $a+b+c$`` asks for a sum). A closed list, so a subject in other words (``the maximum slope``, ``the roots``)
is not checked: synonyms of what was asked are common in right replies, and reading them would need the question
understood, not matched. ``mean`` names an average only in a question: in a reply's subject it is as often a verb
(``That means the value is``)."""


@contextlib.contextmanager
def question_asked(question: object) -> Iterator[None]:
    """While a reply is read: the question it answers, so a final box's subject is checked against it
    (:func:`names_what_is_asked`). A question that is not text names nothing, and the subject is not checked."""
    token = _QUESTION.set(question if isinstance(question, str) else None)
    try:
        yield
    finally:
        _QUESTION.reset(token)


def names_what_is_asked(subject: Iterable[str]) -> bool:
    """Whether ``subject`` (a final box's subject, its words in lower case: ``its cube``, ``the sum of the roots``)
    names a quantity the question being read asks for: the first quantity of :data:`DERIVED_QUANTITIES` it names, if
    any, must be one the question names too. ``True`` when no question is known."""
    question = _QUESTION.get()
    if question is None:
        return True
    words = " ".join(subject)
    named = [(found.start(), asked) for named, asked in DERIVED_QUANTITIES.values() if (found := named.search(words))]
    if not named:
        return True
    # The first one is the quantity the subject names ("the area of the square" is an area); a later one names it
    # too when it is of the answer ("the sum of its digits"), not when it is a thing the problem is about ("of the
    # square").
    without_objects = _OF_A_THING.sub(" ", words)
    also = [asked for named, asked in DERIVED_QUANTITIES.values() if named.search(without_objects)]
    return all(asked.search(question) for asked in [min(named, key=lambda pair: pair[0])[1], *also])


_OF_A_THING: Final = re.compile(r"\bof\s+(?:the|a|an|this|that|each|every)\s+[\w-]+", re.IGNORECASE)


def formula_names_what_is_asked(before: str) -> bool:
    """Whether the formula a final box closes states a value of what the question asks for. A first side that is
    an expression of names (``$2k = \\boxed{36}$``, ``$k + k =``, ``$(k) + 1 =``, ``$k! =``, ``$N^3 =``) names a
    quantity made from them, so it must be written in the question (``Find $m+n$.``). One name (``x``, ``a_5``,
    ``f(3)``, ``\\angle ABC``) and arithmetic on numbers (``6 \\cdot 7``, ``3 + 2i``) are left alone. ``before`` is the
    box's sentence up to the box; the caller skips this when the sentence's prose names a quantity the question
    names (``the distance between the foci is $2c =``); ``True`` when no question is known or the box closes no
    formula."""
    question = _QUESTION.get()
    if question is None:
        return True
    opened = _LAST_FORMULA.search(before)
    if opened is None or not _RELATION_AT_END.search(opened.group("formula")):
        return True
    first = _RELATION.split(opened.group("formula"))[0].strip()
    names = _CONSTANT.sub(" ", _COMMAND.sub(" ", first))
    if not _LETTER.search(names) or _ONE_NAME.fullmatch(first):
        return True
    return _compact(first) in _compact(question)


def subject_asked(words: Iterable[str]) -> bool:
    """Positive evidence that a subject (``the number of ways``, ``the product``) names what the question asks: it
    shares a word with the question, or names a quantity of :data:`DERIVED_QUANTITIES` the question asks for, and
    names no quantity the question does not. ``False`` when no question is known."""
    if _QUESTION.get() is None:
        return False
    words = list(words)
    if not names_what_is_asked(words):
        return False
    joined = " ".join(words)
    return subject_named_in_question(words) or any(named.search(joined) for named, _ in DERIVED_QUANTITIES.values())


def names_something_else(words: Iterable[str]) -> bool:
    """Whether a box's subject names a thing the question never mentions (``the apothem``, ``the smaller root``,
    ``the constant term``, asked to evaluate an expression): every word of it that names something (four letters or
    more, not a word for a value or an amount) is missing from the question. ``False`` when no question is known or
    the subject names nothing of its own (``the answer``, ``the total cost``)."""
    asked = question_words()
    words = [word.lower().strip(".,;:!?\"'()[]*_`") for word in words]
    words = [word for word in words if word]
    # Only a plain noun phrase is judged ("the smaller root"); a clause ("the value we're looking for") is not.
    if asked is None or not _NOUN_PHRASE.fullmatch(" ".join(words)):
        return False
    if any(named.search(" ".join(words)) for named, _ in DERIVED_QUANTITIES.values()):
        return False  # "The average is", asked for the mean: judged by names_what_is_asked
    naming = [word for word in words if len(word) >= _CONTENT_LETTERS and word.isalpha()
              and not {word, singular(word)} & (_GENERIC | _AMOUNTS)]
    return bool(naming) and not any(singular(word) in asked for word in naming)


_NOUN_PHRASE: Final = re.compile(r"(?:the|its|their|his|her)(?:\s+[a-z][a-z-]*){1,3}")
_AMOUNTS: Final = frozenset({
    "cost", "costs", "price", "amount", "money", "number", "count", "total", "value", "result", "quantity", "size",
    "time", "distance", "speed", "rate", "overall", "final", "required", "desired", "requested", "answer",
    "sought", "exact", "correct", "numerical", "whole", "entire", "combined", "altogether", "together", "exactly",
    "precisely", "therefore", "hence", "thus", "finally", "conclusion", "summary", "clearly", "indeed", "simply",
    "just", "also", "then", "here", "comes", "equals", "gives", "makes", "becomes", "totals", "amounts",
    "expression", "problem", "question", "computation", "calculation", "solution", "remaining", "left", "needed",
    "spent", "earned", "paid", "saved", "made", "used", "each", "every", "much", "many",
    # what an answer is called whatever the question's words for it (the roots, the image, the smallest such angle)
    "root", "zero", "image", "smallest", "largest", "least", "greatest", "minimum", "maximum", "such", "resulting",
    "possible", "positive", "real", "integer", "measure",
})
"""Words a subject uses for a value or an amount of whatever was asked (``the total cost``, ``the amount left``)."""


def question_text() -> str | None:
    """The question being read, or ``None``."""
    return _QUESTION.get()


def question_numbers() -> frozenset[str] | None:
    """The numbers the question writes (``4``, ``2.40``), as written; ``None`` when no question is known."""
    question = _QUESTION.get()
    if question is None:
        return None
    return frozenset(re.findall(r"\d+(?:\.\d+)?", question.replace(",", "")))


def counts_another_thing(words: Iterable[str]) -> bool:
    """Whether a subject counts a thing the question names only among its givens (``the number of roses``, asked
    ``How many thorns are there?`` about roses that have thorns): its box counts another thing than the one asked.
    ``False`` when no question is known, the subject counts nothing, or the thing is named where the question asks."""
    question = _QUESTION.get()
    counted = _COUNTED.search(" ".join(words))
    if question is None or counted is None:
        return False
    thing = singular(counted.group("thing"))
    if len(thing) < _CONTENT_LETTERS or thing in _GENERIC:
        return False
    asked = _words_of(asking_sentence(MATH_SEGMENT.sub(" ", question)))
    return thing in _words_of(question) and thing not in asked


def asking_sentence(question: str) -> str:
    """The sentence of ``question`` that asks: its last question, else its last sentence with a word that asks
    (``Find``, ``Compute``, ``What``, ``How``...), else the whole question (a diagram or a note may close it)."""
    sentences = _SENTENCE.findall(question) or [question]
    asking = ([sentence for sentence in sentences if sentence.rstrip().endswith("?")]
              or [sentence for sentence in sentences if _ASKING_WORD.search(sentence)])
    return asking[-1] if asking else question


_ASKING_WORD: Final = re.compile(
    r"\b(?:find|compute|calculate|determine|evaluate|what|how|which|express|give|simplify|solve|write)\b",
    re.IGNORECASE,
)


_COUNTED: Final = re.compile(r"\b(?:number|count|tally|total|amount|quantity)\s+of\s+(?:the\s+)?(?P<thing>[a-z]+)")


def verb_asked(word: str) -> bool:
    """Whether ``word``, a verb in the third person or the past (``earns``, ``spends``, ``paid``), is one the
    question's last sentence uses (``How much does she earn in a year?``): a box after ``she earns`` then states
    what is asked, as one after ``she has`` does. The question's asking sentence is read (:func:`asking_sentence`).
    ``False`` when no question is known."""
    question = _QUESTION.get()
    word = word.lower()
    if question is None or not word.isalpha():
        return False
    if word.endswith("ies"):
        stems = {word[:-3] + "y"}
    elif word.endswith("es"):
        stems = {word[:-2], word[:-1]}
    elif word.endswith("s") and not word.endswith("ss"):
        stems = {word[:-1]}
    elif word.endswith("ed"):
        stems = {word[:-2], word[:-1]}
    else:
        return False
    asked = set(_PLAIN_WORD.findall(asking_sentence(MATH_SEGMENT.sub(" ", question)).lower()))
    # The question holds the verb's plain form ("does she earn"), not a plural noun of the same stem ("pens").
    return any(len(stem) >= _VERB_LETTERS and (stem in asked or f"{stem}ing" in asked) for stem in stems)


_SENTENCE: Final = re.compile(r"[^.!?]+[.!?]?")
_VERB_LETTERS: Final = 3


def question_words() -> frozenset[str] | None:
    """The question's plain words (outside its formulas), lower case and singular; ``None`` when no question is
    known."""
    question = _QUESTION.get()
    return None if question is None else _words_of(question)


@functools.lru_cache(maxsize=64)
def _words_of(text: str) -> frozenset[str]:
    """Plain words of ``text`` outside its formulas, lower case and singular (read once per question: several rules
    ask for them on every reply)."""
    return frozenset(singular(word) for word in _PLAIN_WORD.findall(MATH_SEGMENT.sub(" ", text).lower()))


def name_made_from_the_answer(before: str, sentence: str) -> bool:
    """Whether the formula the box closes names, as its one-name first side, a name the reply defined as a quantity
    made from the answer (``I'll work with $u$, defined as twice the quantity asked for`` ... ``$u = \\boxed{100}$``):
    then the box holds that quantity, not the answer. ``before`` is the reply up to the box's sentence; a name the
    question writes is never judged here."""
    said = _NAME_SAID_EQUAL.search(sentence)  # "So $s$ equals $\\boxed{3000}$"
    opened = _LAST_FORMULA.search(sentence)
    # A display formula that opens its line is read into the answer whole ("w = " of "$$ w = \\boxed{193} $$").
    formula = opened.group("formula") if opened is not None else sentence if "$" not in sentence else ""
    if said is not None:
        first = said.group("name").strip()
    elif _RELATION_AT_END.search(formula):
        first = _RELATION.split(formula)[0].strip()
    else:
        return False
    if not _ONE_NAME.fullmatch(first) or len(first) > _NAME_LETTERS:
        return False
    question = _QUESTION.get()
    if question is not None and re.search(rf"(?<![A-Za-z\\]){re.escape(first)}(?![A-Za-z])", question):
        return False
    name = rf"(?:\$\s*{re.escape(first)}\s*\$|\\\(\s*{re.escape(first)}\s*\\\)|\b{re.escape(first)}\b)"
    for found in re.finditer(name + _DEFINED_AS, before, re.IGNORECASE):
        if _MADE_FROM.search(found.group("definition")):
            return True
    # "... so the answer is $m - 10$": the reply says the answer is made from the name, so the name is not it.
    escaped = re.escape(first)
    made = (rf"\banswer\s+(?:is|will\s+be|equals|=)\s*\$(?=[^$]*(?<![A-Za-z\\]){escaped}(?![A-Za-z]))"
            rf"(?!\s*{escaped}\s*\$)")
    return re.search(made, before, re.IGNORECASE) is not None


_NAME_LETTERS: Final = 12
_NAME_SAID_EQUAL: Final = re.compile(
    r"(?:\$|\\\()(?P<name>[^$]{1,12}?)(?:\$|\\\))\s+(?:equals|is|comes\s+to|=)\s*(?:\$\$?|\\\(|\\\[)?\s*\Z")
_DEFINED_AS: Final = (r"\s*,?\s*(?:(?:which\s+is\s+|is\s+)?defined\s+as|denot\w*|stands?\s+for|represents?|"
                      r"(?:be|to\s+be)\s+(?:equal\s+to\s+)?|:=|is\s+(?:shorthand|short)\s+for|\|)\s*"
                      r"(?P<definition>[^.;\n|]{1,120})")
"""A name defined in words (``$u$, defined as``, ``let $u$ be``, ``$u$ denotes``); an equation (``$u = 7$``) is a
step of the working, not a definition."""
_MADE_FROM: Final = re.compile(
    r"\b(?:twice|thrice|double|triple|half|halved|times|plus|minus|more\s+than|less\s+than|fewer\s+than|"
    r"(?:increased|decreased|raised|lowered|reduced|multiplied|divided|shifted)\s+by|"
    r"with\s+\w+\s+(?:subtracted|added|removed|taken\s+away)|"
    r"tripled|doubled|quadrupled|shifted|incremented|decremented|offset|"
    r"squared?|cubed?|reciprocal|inverse|negative|opposite|sum|product|difference|quotient|ratio|percent|"
    r"fraction|multiple|square\s+root|root)\b|\+|\*|/|\\(?:cdot|times|frac)\b",
    re.IGNORECASE,
)
"""A definition that makes a quantity from another (``twice the quantity asked for``, ``the answer plus 7``)."""


def subject_named_in_question(words: Iterable[str]) -> bool:
    """Whether a word of a box's prose subject (four letters or more, not a word that names nothing of its own) is
    a word of the question being read: positive evidence that the subject names what is asked (``the distance
    between the foci`` asked for "the distance between the foci")."""
    asked = question_words()
    if asked is None:
        return False
    return any(len(word) >= _CONTENT_LETTERS and word not in _GENERIC and singular(word) in asked
               for word in (w.lower().strip(".,;:!?\"'()[]*_`") for w in words))


_PLAIN_WORD: Final = re.compile(r"[a-z]+")
_CONTENT_LETTERS: Final = 4
_GENERIC: Final = frozenset({
    "answer", "answers", "result", "value", "values", "number", "numbers", "final", "total", "quantity", "that",
    "this", "these", "those", "which", "what", "there", "then", "thus", "hence", "therefore", "have", "with", "from",
    "into", "find", "given", "each", "some", "such", "when", "where", "will", "would", "could", "should", "must",
})
"""Words of four letters or more a subject and a question share without naming the same quantity."""


def singular(word: str) -> str:
    """A plural noun's singular by its plain -s ending (``ways`` to ``way``); shorter words are left alone."""
    return word[:-1] if word.endswith("s") and not word.endswith("ss") and len(word) > _CONTENT_LETTERS else word


_LAST_FORMULA: Final = re.compile(r"(?:\$\$?|\\\(|\\\[)(?P<formula>[^$]*?)\Z", re.DOTALL)
"""The formula still open where the box starts (``... so $2k = `` before ``\\boxed{36}$``)."""
_RELATION: Final = re.compile(r"=|\\approx|\\equiv")
_RELATION_AT_END: Final = re.compile(r"(?:=|\\approx|\\equiv)\s*\Z")
_LETTER: Final = re.compile(r"[A-Za-z]")
_COMMAND: Final = re.compile(r"\\[A-Za-z]+")
_CONSTANT: Final = re.compile(r"(?<![A-Za-z\\])(?:i|e)(?![A-Za-z])|\\pi\b|\\circ\b|\^\{?\\circ\}?")
"""``i``, ``e`` and ``\\pi`` are numbers, not names: ``3 + 2i =`` is arithmetic."""
_NAME: Final = r"(?:\\[A-Za-z]+|[A-Za-z])(?:_\{[^{}]*\}|_\w)?"
_ONE_NAME: Final = re.compile(
    rf"{_NAME}(?:'+|\^\{{?\\prime\}}?)?"  # x, a_5, a_{{n}}, x', \theta
    rf"|{_NAME}(?:\^\{{-1\}})?\s*(?:\\left)?\([^()]*\)(?:\\right\))?"  # f(3), P(A), f^{{-1}}(2)
    r"|\\(?:angle|overline|overarc|widehat|measuredangle|triangle)\s*\{?[A-Z]+\}?|\[[A-Z]+\]|[A-Z]{2,3}",
    re.DOTALL,
)
"""One name, which a reply may introduce for the answer (``x =``, ``a_{10} =``, ``f(3) =``, ``AB =``, ``[ABC] =``)."""
_COMPACT: Final = re.compile(r"\s+|\\[,;:! ]|\\left|\\right|[{}]")


def _compact(text: str) -> str:
    """Text with spaces, thin spaces, braces and bracket sizes dropped, to find a formula of the reply in the
    question's (``a + b + c`` in ``Find $a+b+c$``)."""
    return _COMPACT.sub("", text)
