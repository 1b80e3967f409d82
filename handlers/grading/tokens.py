"""Stage 1 of apollo's math grader: an answer as tokens from a closed vocabulary.

:func:`prepare` rewrites notation into equivalent notation by a closed table (Unicode
math as LaTeX, math delimiters and a whole ``\\boxed{}`` removed, digit grouping), and
:func:`tokenize` cuts the result into tokens. Every character ends up in a token or
the answer is :class:`Unreadable`: nothing is dropped because it was not understood.
The only things dropped are the presentational commands of
:data:`handlers.grading.lexicon.PRESENTATIONAL`, zero-width characters and a final
full stop.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final

from handlers.errors import HandlerError
from handlers.grading.lexicon import (
    GROUPING_SEPARATORS,
    PRESENTATIONAL,
    ROMAN,
    SPACING,
    TEXT_COMMANDS,
)

MATH_SEGMENT: Final = re.compile(r"\$\$.*?\$\$|\$.*?\$|\\\(.*?\\\)|\\\[.*?\\\]", re.DOTALL)
"""One formula of a reply: ``$$...$$``, ``$...$``, ``\\(...\\)`` or ``\\[...\\]``."""
_ANGSTROM = re.compile(r"\\AA(?![A-Za-z])|[\u00c5\u212b]")
"""The angstrom inside text: LaTeX's ``\\AA``, the letter \u00c5 or the angstrom sign."""


class Unreadable(HandlerError):
    """The answer holds something the grader's vocabulary does not cover; the message says what."""


_ZERO_WIDTH: Final = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
_SPACES: Final = dict.fromkeys(
    map(ord, "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000\t\n\r"), " "
)
_VULGAR: Final = {
    "½": "1/2", "⅓": "1/3", "⅔": "2/3", "¼": "1/4", "¾": "3/4", "⅕": "1/5", "⅖": "2/5", "⅗": "3/5",
    "⅘": "4/5", "⅙": "1/6", "⅚": "5/6", "⅐": "1/7", "⅛": "1/8", "⅜": "3/8", "⅝": "5/8", "⅞": "7/8",
    "⅑": "1/9", "⅒": "1/10",
}
_SYMBOLS: Final = {
    "∞": r"\infty ", "π": r"\pi ", "≤": r"\le ", "≥": r"\ge ", "≠": r"\ne ", "\u00d7": r"\times ",
    "·": r"\cdot ", "⋅": r"\cdot ", "∙": r"\cdot ", "÷": r"\div ", "\u2212": "-",
    "\u222a": r"\cup ", "∩": r"\cap ", "∈": r"\in ", "∉": r"\notin ", "±": r"\pm ", "∓": r"\mp ",
    "°": r"^\circ ", "\u2044": "/", "∅": r"\emptyset ", "≈": r"\approx ", "√": "√", "∛": "∛", "∜": "∜",
}
_SUPERSCRIPT: Final = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SUPERSCRIPT_RUN: Final = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+")
_SUBSCRIPT: Final = str.maketrans("₀₁₂₃₄₅₆₇₈₉₋₊", "0123456789-+")
_SUBSCRIPT_RUN: Final = re.compile("[₀₁₂₃₄₅₆₇₈₉₋₊]+")
_ROOT: Final = re.compile(
    r"([√∛∜])\s*(\([^()]*\)|\{[^{}]*\}|\d+(?:\.\d+)?|\\[A-Za-z]+|[A-Za-z])(?!\s*\^)(?![A-Za-z\d({\[\\√∛∜])"
)
"""A Unicode root and the operand it covers. Without a vinculum a reader cannot tell how far it reaches
when a power, a letter, a digit or a bracket follows (``√x²``: the root squared, or the root of x²?
``√2x``, ``√xy``: one factor or two?), so then it is left unconverted, and unreadable."""
_VULGAR_RUN: Final = re.compile("(?P<integer>\\d *)?(?P<fraction>[" + "".join(_VULGAR) + "])")
_EN_DASH: Final = re.compile(r"(?P<before>\d?)(?P<space>\s*)\u2013(?=(?P<after>\s*\d)?)")
_ROOT_INDEX: Final = {"√": "", "∛": "[3]", "∜": "[4]"}
_DELIMITERS: Final = (("$$", "$$"), ("$", "$"), (r"\(", r"\)"), (r"\[", r"\]"))
_BOX: Final = re.compile(r"\\(?:boxed|fbox)\s*\{")
_INLINE_MATH: Final = re.compile(r"(?<!\\)\$\$?((?:[^$]|\\\$)*?)(?<!\\)\$\$?")
_SEPARATOR: Final = "(?:" + "|".join(re.escape(mark) for mark in GROUPING_SEPARATORS) + ") ?"
_GROUPED_DIGITS: Final = re.compile(rf"(?<![\d.])[1-9]\d{{0,2}}(?:{_SEPARATOR}\d{{3}})+(?![\d])")
"""A number grouped in threes by LaTeX marks: the first group has 1-3 digits and no leading 0
(``0{,}111`` is a decimal comma, never 111)."""
_SEPARATOR_MARK: Final = re.compile(_SEPARATOR)
_GROUPED_WHOLE: Final = re.compile(
    r"(?P<head>\\\$|\$|[-+])?\s*(?P<open>\{)?(?P<number>[1-9]\d{0,2}(?P<sep>,|\s)\d{3}(?:(?P=sep)\d{3})*"
    r"(?:\.\d+)?)(?(open)\})(?P<tail>\s*(?:\\%|%|\$|\\(?:text|mathrm)\s*\{\s*[A-Za-z]+\s*\})|\s+[A-Za-z]+)?"
)
"""A whole answer that is one number grouped by commas or spaces, with a sign or a currency before it and a
percent sign, a currency or one word after it (``$\\$70,000$``, ``{70,000} dollars``, the box's braces kept by
extraction): a list would not carry one unit after its last item."""
_PYTHON_POWER: Final = re.compile(r"\*\*")
_WHITESPACE_RUN: Final = re.compile(r"\s+")
_DRAWN_SPACES: Final = {0x1680: "\ufffd"}
"""White space to Unicode that is drawn as a mark: the Ogham space mark (U+1680) shows a dash, so ``\u168042``
is never 42; it becomes a character with no reading (the answer is unreadable), before any strip drops it."""


@dataclass(frozen=True)
class Token:
    """One token: its kind, its text, and what separated it from the token before it."""

    kind: str
    """``num``, ``letter``, ``word``, ``tword`` (a word inside ``\\text{}``), ``cmd``, ``punct``,
    ``begin``, ``end``, ``degree``, ``percent``, ``currency``."""
    text: str
    space_before: bool = False
    layout_before: bool = False
    """A spacing command (``\\quad``, ``~``, ``\\hspace``) stood before this token."""
    roman: bool = False
    """Written upright (``\\mathrm{e}``, ``\\operatorname{lcm}``)."""


@dataclass(frozen=True)
class Prepared:
    """An answer after the closed rewriting table, ready to tokenize."""

    text: str
    rewrites: tuple[str, ...] = ()
    """What was rewritten or dropped, for the grade's detail (``digit grouping``...)."""


def prepare(raw: str) -> Prepared:
    """``raw`` rewritten by the closed table of the module docstring."""
    rewrites: list[str] = []
    text = raw.translate(_DRAWN_SPACES).translate(_ZERO_WIDTH).translate(_SPACES)
    text = _unicode_math(text)
    text = _WHITESPACE_RUN.sub(" ", text)
    text = _unwrap(text)
    text = _PYTHON_POWER.sub("^", text).replace("!=", r"\ne ").replace("<=", r"\le ").replace(">=", r"\ge ")
    grouped = _GROUPED_DIGITS.sub(lambda match: _SEPARATOR_MARK.sub("", match.group()), text)
    if grouped != text:
        rewrites.append("digit grouping removed")
        text = grouped
    whole = _GROUPED_WHOLE.fullmatch(text.strip())
    if whole:
        number = re.sub(r"[,\s]", "", whole.group("number"))
        tail = (whole.group("tail") or "").strip()
        text = (whole.group("head") or "") + number + (f" {tail}" if tail[:1].isalpha() or tail[:1] == "\\" else tail)
        rewrites.append("digit grouping removed")
    return Prepared(text.strip(), tuple(dict.fromkeys(rewrites)))


def _unicode_math(text: str) -> str:
    text = _VULGAR_RUN.sub(_vulgar_as_latex, text)
    text = _EN_DASH.sub(_en_dash_as_latex, text)
    text = _SUPERSCRIPT_RUN.sub(lambda m: "^{" + m.group().translate(_SUPERSCRIPT) + "}", text)
    text = _SUBSCRIPT_RUN.sub(lambda m: "_{" + m.group().translate(_SUBSCRIPT) + "}", text)
    for char, latex in _SYMBOLS.items():
        text = text.replace(char, latex)
    text = _ROOT.sub(_root_as_latex, text)
    return "".join(_plain_character(char) for char in text)


def _plain_character(char: str) -> str:
    """A full-width ASCII character, a mathematical alphanumeric (bold, italic ... letters and
    digits) or a decimal digit of another script, as the ASCII character a reader sees; any other
    character as it is (the tokenizer then refuses it). Unicode's compatibility forms are not
    applied wholesale: they turn ``①②`` into 12, ``2ⁿ`` into 2n and ``aₙ`` into an."""
    if char.isascii():
        return char
    if unicodedata.category(char) == "Nd":
        return str(unicodedata.decimal(char))
    code = ord(char)
    if 0xFF01 <= code <= 0xFF5E or 0x1D400 <= code <= 0x1D7FF:
        plain = unicodedata.normalize("NFKC", char)
        return plain if plain.isascii() else char
    return char


def _vulgar_as_latex(match: re.Match[str]) -> str:
    """``½`` after an integer is a mixed number (``3½`` is ``3 1/2``); anywhere else it is one group,
    so a power, root or division takes all of it (``2^½`` is ``2^{1/2}``, never ``2^1/2``)."""
    fraction = _VULGAR[match.group("fraction")]
    integer = match.group("integer")
    return f"{integer.rstrip()} {fraction}" if integer else f"{{{fraction}}}"


def _en_dash_as_latex(match: re.Match[str]) -> str:
    """An en dash is a minus sign, except between two numbers, where typography makes it a range
    (``10\\u201312`` is 10 to 12, never -2): that one is kept, and unreadable."""
    dash = "\u2013" if match.group("before") and match.group("after") else "-"
    return match.group("before") + match.group("space") + dash


def _root_as_latex(match: re.Match[str]) -> str:
    operand = match.group(2)
    if operand[0] in "({":
        operand = operand[1:-1]
    return rf"\sqrt{_ROOT_INDEX[match.group(1)]}{{{operand}}}"


def _unwrap(text: str) -> str:
    """Math delimiters, a ``\\boxed{}`` around everything and a final full stop removed; inline
    ``$...$`` pairs inside prose (``$125$ miles``) are math delimiters too."""
    if text.count("$") - text.count("\\$") >= 2 and (text.count("$") - text.count("\\$")) % 2 == 0:
        text = _INLINE_MATH.sub(lambda match: match.group(1), text)
    previous = None
    while previous != text:
        previous = text
        text = text.strip()
        if text.endswith(".") and not text.endswith(".."):
            text = text[:-1].strip()
        for opening, closing in _DELIMITERS:
            if len(text) > len(opening) + len(closing) and text.startswith(opening) and text.endswith(closing):
                inner = text[len(opening) : -len(closing)]
                if opening != "$" or "$" not in inner:
                    text = inner
        text = _unbox(text)
    return text


def _unbox(text: str) -> str:
    match = _BOX.match(text)
    if match is None or not text.endswith("}"):
        return text
    end = matching_brace(text, match.end() - 1)
    return text[match.end() : end] if end == len(text) - 1 else text


def matching_brace(text: str, start: int) -> int | None:
    """Index of the ``}`` that closes the ``{`` at ``start`` (escaped braces skipped)."""
    depth = 0
    index = start
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return None


_NUMBER: Final = re.compile(r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+(?![A-Za-z\d]))?", re.ASCII)
_DIGITS: Final = frozenset("0123456789")
_PUNCT: Final = frozenset("+-*/^_!,;:=<>()[]{}|'&")
_COMMAND: Final = re.compile(r"\\([A-Za-z]+|.)")
_ENVIRONMENT: Final = re.compile(r"\{(\w+\*?)\}")
_LETTERS: Final = re.compile(r"[A-Za-z]+")
_LAYOUT_WITH_ARGUMENT: Final = frozenset({"hspace", "hspace*", "kern", "mkern", "hskip"})
_HIDDEN: Final = frozenset({"phantom", "hphantom", "vphantom", "iffalse", "fi", "ignorespaces"})


_FRACTION_STYLE: Final = re.compile(r"\\[dt]frac(?![A-Za-z])")
_SIZING: Final = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)(?![A-Za-z])")


def size_marks_dropped(text: str) -> str:
    """``text`` with what only sets a size made plain: ``\\dfrac`` and ``\\tfrac`` written ``\\frac``, and
    delimiter sizes (``\\left(``, ``\\big|``) dropped. Both spellings mean the same formula."""
    return _SIZING.sub("", _FRACTION_STYLE.sub(r"\\frac", text))


def tilde_untied_on_left(text: str, index: int, start: int = 0) -> bool:
    """Whether the ``~`` at ``index`` has nothing tied on its left, so it is the prose sign for
    "about" rather than LaTeX's tie.

    A tie keeps two things on one line (``42~\\text{cm}``, ``x~=~4``), so it needs something
    glued on its left. With nothing there (``start``, a space, ``$``, an opening bracket, a comma),
    or after a relation or sign not tied on its own left (``x =~ 42``, ``x=~42``), it means
    "about" (``~42``, ``x = ~42``). The answer's tokenizer and the reply's box extraction both
    ask this, so an answer and a box read the same ``~`` the same way.
    """
    before = text[index - 1] if index > start else ""
    if before == "" or before.isspace() or before in "$([{,":
        return True
    if before in "=<>+-":
        return not (index - 2 >= start and text[index - 2] == "~")
    return False


def _tilde_means_about(text: str, index: int, start: int, end: int) -> bool:
    """An untied ``~`` (:func:`tilde_untied_on_left`) with something after it: "about" that
    something. A tie at the very end joins nothing and says nothing."""
    following = index + 1
    while following < end and text[following] == " ":
        following += 1
    return following < end and tilde_untied_on_left(text, index, start)


def tokenize(text: str) -> list[Token]:
    """Tokens of prepared ``text``; :class:`Unreadable` names the first thing not covered."""
    return _Tokenizer(text).run()


class _Tokenizer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[Token] = []
        self.space = False
        self.layout = False

    def emit(self, kind: str, text: str, *, roman: bool = False) -> None:
        self.tokens.append(Token(kind, text, self.space or self.layout, self.layout, roman))
        self.space = self.layout = False

    def run(self) -> list[Token]:
        self.math(self.text, 0, len(self.text))
        return self.tokens

    def math(self, text: str, start: int, end: int) -> None:
        index = start
        while index < end:
            char = text[index]
            if char == " ":
                self.space = True
                index += 1
            elif char == "~":
                if text.startswith("~~", index):
                    msg = "'~~' (Markdown strikethrough: what it marks is withdrawn)"
                    raise Unreadable(msg)
                if _tilde_means_about(text, index, start, end):
                    msg = "'~' with nothing tied on its left (in prose, ~42 is about 42)"
                    raise Unreadable(msg)
                self.layout = True
                index += 1
            elif char in _DIGITS or (char == "." and index + 1 < end and text[index + 1] in _DIGITS):
                match = _NUMBER.match(text, index, end)
                assert match is not None  # a digit or ".digit" always starts a number
                number = match.group()
                if number.endswith(".") and index + len(number) < end and text[index + len(number)] == ".":
                    number = number[:-1]  # "1..." : the dots are an ellipsis, not a decimal point
                self.emit("num", number)
                index += len(number)
            elif char.isalpha() and char.isascii():
                letters = _LETTERS.match(text, index, end)
                assert letters is not None
                word = letters.group()
                self.emit("word" if len(word) > 1 else "letter", word)
                index = letters.end()
            elif char == "\\":
                index = self.command(text, index, end)
            elif char in _PUNCT:
                self.emit("punct", char)
                index += 1
            elif char == "%":
                self.emit("percent", "%")
                index += 1
            elif char in "$€£¥¢₹":
                self.emit("currency", char)
                index += 1
            else:
                msg = f"the character {char!r}"
                raise Unreadable(msg)

    def command(self, text: str, index: int, end: int) -> int:
        match = _COMMAND.match(text, index, end)
        if match is None:
            msg = "a lone backslash"
            raise Unreadable(msg)
        name = match.group(1)
        after = match.end()
        if name in PRESENTATIONAL:
            return after
        if name in SPACING:
            self.layout = True
            return after
        if name.rstrip("*") in _LAYOUT_WITH_ARGUMENT:
            self.layout = True
            return self._skip_argument(text, after, end, name)
        if name in _HIDDEN:
            msg = f"\\{name} (text a reader does not see)"
            raise Unreadable(msg)
        if name in ("%", "$"):
            self.emit("percent" if name == "%" else "currency", name)
            return after
        if name in ("{", "}", "|"):
            self.emit("punct", "\\" + name)
            return after
        if name == "\\":
            self.emit("punct", "\\\\")
            return after
        if name in ("begin", "end"):
            env = _ENVIRONMENT.match(text, after, end)
            if env is None:
                msg = f"\\{name} without an environment name"
                raise Unreadable(msg)
            self.emit(name, env.group(1))
            return env.end()
        if name in TEXT_COMMANDS:
            return self._text_block(text, after, end, name)
        if name in ROMAN:
            return self._roman(text, after, end, name)
        if name in ("circ", "degree"):
            self.emit("degree", name)
            return after
        self.emit("cmd", name)
        return after

    def _argument(self, text: str, start: int, end: int, name: str) -> tuple[int, int]:
        index = start
        while index < end and text[index] == " ":
            index += 1
        if index >= end or text[index] != "{":
            msg = f"\\{name} without a braced argument"
            raise Unreadable(msg)
        close = matching_brace(text[:end], index)
        if close is None:
            msg = f"\\{name} with unbalanced braces"
            raise Unreadable(msg)
        return index + 1, close

    def _skip_argument(self, text: str, start: int, end: int, name: str) -> int:
        _, close = self._argument(text, start, end, name)
        return close + 1

    def _text_block(self, text: str, start: int, end: int, name: str) -> int:
        """``\\text{...}``: words are words (never variables); numbers, %, $ and punctuation keep
        their meaning; any other command inside is unreadable."""
        inner_start, close = self._argument(text, start, end, name)
        body = text[inner_start:close]
        if body[:1] == " ":
            self.space = True
        index = 0
        while index < len(body):
            char = body[index]
            if char.isalpha() and char.isascii():
                letters = _LETTERS.match(body, index)
                assert letters is not None
                self.emit("tword", letters.group())
                index = letters.end()
            elif char == "\\" and body[index + 1 : index + 2] in ("%", "$", ",", ";", ":", "!", " "):
                symbol = body[index + 1]
                if symbol in "%$":
                    self.emit("percent" if symbol == "%" else "currency", symbol)
                else:
                    self.space = True
                index += 2
            elif _ANGSTROM.match(body, index):
                self.emit("tword", "angstrom")  # \AA and the letter \u00c5 (or the sign \u212b): the length unit
                index = _ANGSTROM.match(body, index).end()  # type: ignore[union-attr]
            elif char == "\\":
                msg = f"a command inside \\{name}{{}}"
                raise Unreadable(msg)
            elif char == "-":
                msg = f"a hyphen inside \\{name}{{}} (a dash in prose, not a minus: '1-5' is a range)"
                raise Unreadable(msg)
            else:
                run_end = index + 1
                while run_end < len(body) and not (body[run_end].isalpha() or body[run_end] in "\\-"):
                    run_end += 1
                self.math(body, index, run_end)
                index = run_end
        if body[-1:] == " ":
            self.space = True
        return close + 1

    def _roman(self, text: str, start: int, end: int, name: str) -> int:
        """``\\mathrm{e}`` is the constant e, ``\\operatorname{lcm}`` a name to look up: letters
        only (and spaces), so nothing is hidden inside."""
        inner_start, close = self._argument(text, start, end, name)
        body = text[inner_start:close].strip()
        if not body:
            msg = f"an empty \\{name}{{}}"
            raise Unreadable(msg)
        if body in ("%", r"\%"):
            self.emit("percent", "%")
            return close + 1
        words = body.split()
        if not all(_LETTERS.fullmatch(word) for word in words) or len(words) > 2:
            msg = f"\\{name}{{{body}}}"
            raise Unreadable(msg)
        for word in words:
            self.emit("letter" if len(word) == 1 else "word", word, roman=True)
        return close + 1
