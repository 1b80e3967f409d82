"""Stage 2 of apollo's math grader: tokens read as a mathematical object.

A recursive-descent parser over the closed grammar below. It consumes every token or
raises :class:`Unreadable`; it never skips a token it does not understand, and layout
never does arithmetic (two numbers side by side are unreadable, not a product or a
concatenation). Values are built with sympy's evaluation off, so the guards can
refuse a huge power before anything computes it.

    answer    := item (sep item)*                 sep: , ; and or
    item      := quantity (relation quantity)*    relation: = < > \\le \\ne \\in \\not= ...
    quantity  := [currency] setexpr {':' setexpr} [scale] [unit...]
    setexpr   := expr {(\\cup | \\cap | \\setminus) expr}
    expr      := [+-\\pm] term {(+ - \\pm \\mp) term}
    term      := power {(* \\cdot \\times / \\div) power | juxtaposed power}
    power     := postfix [^ argument] | postfix ^\\circ
    postfix   := primary {! | _subscript}
    primary   := number | letter | greek | constant | function | \\frac | \\sqrt | \\binom
               | ( list ) | [ list ] | \\{ list \\} | { list } | |expr| | \\lfloor expr \\rfloor
               | matrix environment
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from handlers.grading.guards import check_tree
from handlers.grading.lexicon import (
    CONSTANTS,
    FRACTIONS,
    FUNCTIONS,
    GREEK,
    LIST_WORDS,
    NEGATED,
    PERCENT_WORDS,
    RELATIONS,
    SCALE_WORDS,
    Unit,
    unit_named,
)
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
from handlers.grading.tokens import Token, Unreadable

LOG_BASE: Final = "log-base"
"""Name of the symbol that stands for the base of a ``\\log`` written without one."""
DEGREE: Final = "degree-mark"
"""Name of the placeholder symbol a ``^\\circ`` becomes until the degrees are read."""
_MATRICES: Final = frozenset({"pmatrix", "bmatrix", "matrix", "Bmatrix", "smallmatrix"})
_CLOSERS: Final = {"(": (")", "]"), "[": ("]", ")"), "{": ("}",), "\\{": ("\\}",)}
_ADDITIVE: Final = frozenset({"+", "-"})
_SET_OPERATORS: Final = frozenset({"cup", "cap", "setminus"})
_ALONE: Final = frozenset({"money", "count", "percent"})
"""Dimensions of units that multiply with no other unit: a currency, a counted noun, percent."""
_PRODUCT_COMMANDS: Final = frozenset({"cdot", "times", "ast"})
_INVERSES: Final = {
    "sin": lambda sympy: sympy.asin, "cos": lambda sympy: sympy.acos, "tan": lambda sympy: sympy.atan,
    "cot": lambda sympy: sympy.acot, "sec": lambda sympy: sympy.asec, "csc": lambda sympy: sympy.acsc,
    "sinh": lambda sympy: sympy.asinh, "cosh": lambda sympy: sympy.acosh, "tanh": lambda sympy: sympy.atanh,
    "coth": lambda sympy: sympy.acoth,
}
"""Functions whose ``^{-1}`` names their inverse (``\\sin^{-1} x`` is arcsin x)."""


def parse(tokens: list[Token]) -> tuple[Any, tuple[str, ...]]:
    """The reading of ``tokens`` (see the grammar in the module docstring) and the notes on
    what was read (scale words, mixed numbers, converted degrees)."""
    import sympy

    parser = _Parser(tokens)
    with sympy.evaluate(False):
        reading = parser.answer()
    return reading, tuple(dict.fromkeys(parser.notes))


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        import sympy

        self.sympy = sympy
        self.tokens = tokens
        self.pos = 0
        self.notes: list[str] = []
        self.decimals = 0
        self.groups_ending_in_number: set[int] = set()
        """Where a bare ``{...}`` group whose last visible token is a number ended: braces are
        invisible, so ``{4}{2}`` is drawn as 42 and must read as layout, never as 4 times 2."""

    # -- token helpers -------------------------------------------------------------------

    def peek(self, offset: int = 0) -> Token | None:
        index = self.pos + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def at(self, kind: str, *texts: str, offset: int = 0) -> bool:
        token = self.peek(offset)
        return token is not None and token.kind == kind and (not texts or token.text in texts)

    def take(self) -> Token:
        token = self.peek()
        if token is None:
            msg = "an answer that ends too early"
            raise Unreadable(msg)
        self.pos += 1
        return token

    def expect(self, kind: str, text: str) -> None:
        token = self.peek()
        if token is None or token.kind != kind or token.text != text:
            found = "the end" if token is None else repr(token.text)
            msg = f"{text!r} expected, found {found}"
            raise Unreadable(msg)
        self.pos += 1

    @staticmethod
    def unreadable(what: str) -> Unreadable:
        return Unreadable(what)

    # -- answer, items and relations -------------------------------------------------------

    def answer(self) -> Any:
        if not self.tokens:
            raise self.unreadable("nothing to read")
        items = self.item_list(closers=())
        if self.peek() is not None:
            raise self.unreadable(f"{self.peek().text!r} where the answer should end")  # type: ignore[union-attr]
        return items[0] if len(items) == 1 else Collection("list", _flattened(items))

    def item_list(self, closers: tuple[str, ...]) -> list[Any]:
        items = [self.item()]
        while True:
            separated = False
            marks = 0
            while self.at("punct", ",", ";") or self.list_word():
                marks += self.at("punct", ",", ";")
                if marks > 1:
                    raise self.unreadable("an empty list item (two separators in a row: '1,,2' is no pair)")
                self.pos += 1
                separated = True
            if not separated:
                return items
            token = self.peek()
            if token is None or (token.kind == "punct" and token.text in closers):
                raise self.unreadable("a list that ends with a separator")
            items.append(self.item())

    def list_word(self) -> bool:
        token = self.peek()
        return token is not None and token.kind in ("word", "tword") and token.text.lower() in LIST_WORDS

    def item(self) -> Any:
        start = self.pos
        parts = [self.quantity()]
        spans = [(start, self.pos)]
        ops: list[str] = []
        while (op := self.relation()) is not None:
            ops.append(op)
            start = self.pos
            parts.append(self.quantity())
            spans.append((start, self.pos))
        if not ops:
            return parts[0]
        return self.relation_reading(ops, parts, spans)

    def relation(self) -> str | None:
        token = self.peek()
        if token is None:
            return None
        if token.kind == "punct" and token.text in "=<>":
            self.pos += 1
            return RELATIONS[token.text]
        if token.kind == "cmd" and token.text in RELATIONS:
            self.pos += 1
            return RELATIONS[token.text]
        if token.kind == "cmd" and token.text == "not":
            self.pos += 1
            negated = self.relation()
            if negated is None or negated not in NEGATED:
                raise self.unreadable("\\not before something that is not a relation")
            return NEGATED[negated]
        return None

    def relation_reading(self, ops: list[str], parts: list[Any], spans: list[tuple[int, int]]) -> Any:
        if all(op == "=" for op in ops):
            name = self.name_of(*spans[0])
            if name is not None:
                symbol = self.name_symbol(*spans[0])
                if symbol is None and isinstance(parts[0], Quantity) and isinstance(parts[0].value, self.sympy.Symbol):
                    symbol = parts[0].value
                return Assignment(name, parts[-1], symbol, tuple(parts[1:-1]))
            if len(parts) == 2:
                return Equation(_plain_value(parts[0], "an equation"), _plain_value(parts[1], "an equation"))
            raise self.unreadable("an equality chain without a name on the left")
        if "=" in ops:
            raise self.unreadable("a chain mixing = with other relations")
        if ops == ["approx"] and len(parts) == 2:
            exact = self.exact_beside_its_decimal(parts[0], parts[1])
            if exact is not None:
                return exact
        names = tuple(self.name_of(*span) for span in spans)
        return _relation(self.sympy, tuple(ops), parts, names)

    def exact_beside_its_decimal(self, exact: Any, decimal: Any) -> Any:
        """``-\\sqrt{3} \\approx -1.732``: an exact number followed by a decimal that agrees with it to the
        decimal's last place (rounded, or cut toward zero) is that exact number; a decimal that disagrees
        (``\\sqrt{3} \\approx 1.8``), a unit, or an exact side that is itself a decimal or holds a variable leaves
        the relation as it is."""
        if not (isinstance(exact, Quantity) and isinstance(decimal, Quantity)):
            return None
        if exact.units or decimal.units or exact.has_decimal or exact.kind != "number":
            return None
        places = decimal.decimal_places
        if places is None or places > _MOST_PLACES_COMPARED or not decimal.value.is_number:
            return None
        with self.sympy.evaluate(True):
            difference = self.sympy.N(exact.value - decimal.value, 40)
        if not difference.is_real:
            return None
        unit, off = 10.0**-places, float(difference)
        rounded = abs(off) <= unit / 2 * (1 + 1e-9)
        cut = abs(off) < unit and off * float(decimal.value) >= 0  # cut toward zero: the exact lies further out
        return exact if rounded or cut else None

    def name_of(self, start: int, end: int) -> str | None:
        """The text of tokens[start:end] when they only name something (``x``, ``f(x)``, ``a_{3}``,
        ``(p, q)``, ``|AB|``, ``V_1:V_2``), else ``None``. Two lower-case letters side by side are a
        product (``xy = 6`` is an equation), so they are no name."""
        tokens = self.tokens[start:end]
        index = 0
        previous: Token | None = None
        while index < len(tokens):
            token = tokens[index]
            if token.kind == "punct" and token.text == "_":
                index = _after_subscript(tokens, index + 1)
                previous = None
                continue
            if not _name_token(token):
                return None
            both_lower = previous is not None and previous.kind == token.kind == "letter" and (
                previous.text.islower() and token.text.islower())
            if both_lower:
                return None
            previous = token
            index += 1
        return "".join(token.text for token in tokens) if tokens else None

    def name_symbol(self, start: int, end: int) -> Any:
        tokens = self.tokens[start:end]
        if len(tokens) == 1 and tokens[0].kind == "letter":
            return self.symbol(tokens[0].text)
        if len(tokens) == 1 and tokens[0].kind == "cmd" and tokens[0].text in GREEK:
            return self.symbol(tokens[0].text)
        return None

    # -- quantities, units, scale words ----------------------------------------------------

    def quantity(self) -> Any:
        units: list[tuple[Unit, int]] = []
        if self.at("currency"):
            units.append((self.currency_unit(self.take().text), 1))
        decimals_before = self.decimals
        first = self.pos
        value = self.set_expression()
        ratio = [value]
        while self.at("punct", ":"):
            self.pos += 1
            ratio.append(self.set_expression())
        if len(ratio) > 1:
            return Ratio(tuple(_plain_value(part, "a ratio") for part in ratio))
        if not _is_value(value):
            if units:
                raise self.unreadable("a currency sign before something that is not a number")
            return value
        value, units = self.postfix_words(value, units)
        places = self.decimal_places(first)
        return self.as_quantity(value, tuple(units), places, self.decimals > decimals_before)

    def postfix_words(self, value: Any, units: list[tuple[Unit, int]]) -> tuple[Any, list[tuple[Unit, int]]]:
        """Scale words, percent and units after a number: each read, never dropped."""
        sympy = self.sympy
        while True:
            token = self.peek()
            if token is None:
                return value, units
            word = token.text.lower() if token.kind in ("word", "tword") else ""
            if token.kind in ("word", "tword") and word in SCALE_WORDS and not units:
                self.pos += 1
                value = sympy.Mul(value, sympy.Integer(SCALE_WORDS[word]))
                self.notes.append(f"'{token.text}' read as x{SCALE_WORDS[word]}")
            elif token.kind == "percent" or word in PERCENT_WORDS:
                self.pos += 1
                if any(unit.dimension == "percent" for unit, _ in units):
                    raise self.unreadable("a second percent sign (42%% is no amount)")
                units.append((unit_named("%"), 1))  # type: ignore[arg-type]
            elif token.kind == "currency":
                self.pos += 1
                units.append((self.stacked(self.currency_unit(token.text), units), 1))
            elif token.kind in ("word", "tword") or (token.kind == "letter" and token.roman):
                unit = unit_named(token.text)
                if unit is None:
                    if word in LIST_WORDS:
                        return value, units
                    raise self.unreadable(f"the word {token.text!r} after a number (not a unit)")
                self.pos += 1
                units.append((self.stacked(unit, units), self.unit_power()))
            elif token.kind == "punct" and token.text == "/" and units and self.unit_follows():
                self.pos += 1
                unit = unit_named(self.take().text)
                assert unit is not None
                units.append((unit, -self.unit_power()))
            elif token.kind == "degree" and self.pos > 0:
                self.pos += 1
                units.append((unit_named("degree"), 1))  # type: ignore[arg-type]
            else:
                return value, units

    def stacked(self, unit: Unit, units: list[tuple[Unit, int]]) -> Unit:
        """``unit`` written after ``units`` as a product: only physical units of different dimensions multiply
        (``N m``, ``kW h``). Two units of one dimension (``m m``, ``s h``), or a currency or a counted noun beside
        another unit (``32 m$``: million dollars?, ``\\$32 USD``, ``32 students ways``), is no reading a reader
        shares, so it is unreadable."""
        kinds = {unit.dimension.split(":")[0]}
        for other, power in units:
            if power <= 0:
                continue
            if other.dimension == unit.dimension or (kinds | {other.dimension.split(":")[0]}) & _ALONE:
                msg = f"the unit {unit.name!r} written beside {other.name!r} (stacked units are no reading)"
                raise self.unreadable(msg)
        return unit

    def unit_follows(self) -> bool:
        token = self.peek(1)
        return token is not None and token.kind in ("word", "tword", "letter") and unit_named(token.text) is not None

    def unit_power(self) -> int:
        if not self.at("punct", "^"):
            return 1
        self.pos += 1
        if self.at("num"):
            text = self.take().text
        else:
            self.expect("punct", "{")
            text = self.take().text
            self.expect("punct", "}")
        if not text.isdigit() or len(text) != 1 or text == "0":
            raise self.unreadable(f"a unit to the power {text!r}")
        return int(text)

    def currency_unit(self, symbol: str) -> Unit:
        unit = unit_named(symbol)
        assert unit is not None
        return unit

    def decimal_places(self, first: int) -> int | None:
        """Decimal places when the quantity is one decimal literal (``0.150`` has 3)."""
        tokens = [t for t in self.tokens[first : self.pos] if t.kind not in ("word", "tword", "percent", "currency")]
        if tokens and tokens[0].kind == "punct" and tokens[0].text in "+-":
            tokens = tokens[1:]
        if len(tokens) != 1 or tokens[0].kind != "num":
            return None
        return _places(tokens[0].text)

    def as_quantity(self, value: Any, units: tuple[tuple[Unit, int], ...], places: int | None,
                    has_decimal: bool = False) -> Quantity:
        sympy = self.sympy
        degree = sympy.Symbol(DEGREE)
        notes = list(self.notes)
        if value.has(degree) and units:
            # 30^\circ C is a temperature (or an angle times a coulomb): no reading is safe
            raise self.unreadable("a degree sign before a unit (30\u00b0C is a temperature, not an angle)")
        if value.has(degree):
            coefficient, rest = value.as_independent(degree, as_Add=False)
            if rest == degree and not units:
                value, units = coefficient, ((unit_named("degree"), 1),)  # type: ignore[assignment]
            else:
                value = value.subs(degree, sympy.pi / 180)
                notes.append("degrees converted to radians")
        kind = "number" if not getattr(value, "free_symbols", None) else "expression"
        return Quantity(value, units, places, has_decimal, tuple(notes), kind)  # type: ignore[arg-type]

    # -- set expressions and arithmetic ----------------------------------------------------

    def set_expression(self) -> Any:
        left = self.expression()
        while self.at("cmd", *_SET_OPERATORS):
            op = self.take().text
            right = self.expression()
            combined = _set_operation(self.sympy, op, _as_set(self.sympy, left), _as_set(self.sympy, right))
            left = SetReading(combined, "set")
        return left

    def expression(self) -> Any:
        sympy = self.sympy
        terms: list[Any] = []
        plus_minus: list[int] = []
        sign = 1
        if self.at("punct", "+", "-"):
            sign = -1 if self.take().text == "-" else 1
        elif self.at("cmd", "pm", "mp"):
            self.pos += 1
            plus_minus.append(0)
        first = self.term()
        if not _is_value(first):
            if sign == -1 or plus_minus:
                raise self.unreadable("a sign before something that is not a number")
            return first
        terms.append(sympy.Mul(sympy.Integer(-1), first) if sign == -1 else first)
        while True:
            if self.at("punct", *_ADDITIVE):
                op = self.take().text
                term = self.value_term()
                terms.append(sympy.Mul(sympy.Integer(-1), term) if op == "-" else term)
            elif self.at("cmd", "pm", "mp"):
                self.pos += 1
                plus_minus.append(len(terms))
                terms.append(self.value_term())
            else:
                break
        if not plus_minus:
            return terms[0] if len(terms) == 1 else sympy.Add(*terms)
        if len(plus_minus) > 1:
            raise self.unreadable("more than one \\pm")
        index = plus_minus[0]
        positive = sympy.Add(*terms)
        negative = sympy.Add(*(sympy.Mul(sympy.Integer(-1), t) if i == index else t for i, t in enumerate(terms)))
        return Collection("plus-minus", (self.as_quantity(positive, (), None), self.as_quantity(negative, (), None)))

    def value_term(self) -> Any:
        term = self.term()
        if not _is_value(term):
            raise self.unreadable("arithmetic on something that is not a number")
        return term

    def term(self) -> Any:
        sympy = self.sympy
        factors: list[Any] = []
        start = self.pos
        left = self.power()
        if not _is_value(left):
            return left
        factors.append(left)
        last_was_number = self.ends_in_number()
        divided = False
        while True:
            token = self.peek()
            if token is None:
                break
            if _is_operator(token, _PRODUCT_COMMANDS, "*"):
                self.pos += 1
                factors.append(self.value_power())
                divided = False
            elif _is_operator(token, frozenset({"div"}), "/"):
                self.pos += 1
                factors.append(sympy.Pow(self.value_power(), sympy.Integer(-1)))
                divided = True
            elif self.starts_factor(token):
                if self.after_a_decimal_point(token):
                    msg = "a bracket of digits or a factor right after a decimal (0.(3) and 0.1(6) repeat digits)"
                    raise self.unreadable(msg)
                if divided:
                    # 1/2x is 1/(2x) to many readers and x/2 to others: neither is guessed.
                    msg = "a product written after a slash (1/2x: is x in the denominator?)"
                    raise self.unreadable(msg)
                if token.kind == "num":
                    mixed = self.mixed_number(factors, last_was_number, token, start)
                    if mixed is not None:
                        factors[-1] = mixed
                        continue
                    msg = "a number written after another number or a letter (layout is not arithmetic)"
                    raise self.unreadable(msg)
                if self.opens_group_drawn_as_number(token):
                    msg = "a braced number written after another factor (braces are invisible: {4}{2} is drawn 42)"
                    raise self.unreadable(msg)
                if token.layout_before and last_was_number and self.starts_number_like(token):
                    raise self.unreadable("layout between two numbers")
                if self.pos in self.groups_ending_in_number and token.kind == "cmd" and token.text in FRACTIONS:
                    raise self.unreadable("a braced number before a fraction (a product or a mixed number?)")
                if last_was_number and token.kind == "cmd" and token.text in FRACTIONS:
                    mixed = self.mixed_fraction(factors, start)
                    if mixed is not None:
                        factors[-1] = mixed
                        last_was_number = False
                        continue
                factors.append(self.value_power())
            else:
                break
            last_was_number = self.ends_in_number()
        return factors[0] if len(factors) == 1 else sympy.Mul(*factors)

    def ends_in_number(self) -> bool:
        """Whether what was just read is drawn ending in a number (a numeral, or a bare group
        whose last visible token is one)."""
        return self.tokens[self.pos - 1].kind == "num" or self.pos in self.groups_ending_in_number

    def opens_group_drawn_as_number(self, token: Token) -> bool:
        """A bare ``{`` whose first visible token is a numeral or a sign: ``x{2}`` is drawn x2 and
        ``{4}{-2}`` is drawn 4-2, so neither may be read as a product."""
        if not (token.kind == "punct" and token.text == "{"):
            return False
        index = self.pos
        while index < len(self.tokens) and self.tokens[index].kind == "punct" and self.tokens[index].text == "{":
            index += 1
        if index >= len(self.tokens):
            return False
        first = self.tokens[index]
        return first.kind == "num" or (first.kind == "punct" and first.text in "+-") or (
            first.kind == "cmd" and first.text in ("pm", "mp"))

    def starts_number_like(self, token: Token) -> bool:
        return token.kind == "cmd" and token.text in FRACTIONS | {"sqrt"}

    def mixed_number(self, factors: list[Any], last_was_number: bool, token: Token, start: int) -> Any:
        """``7 3/4`` (an integer, a plain space, a proper fraction of integers) is 7 + 3/4."""
        sympy = self.sympy
        previous = self.tokens[self.pos - 1]
        if not (last_was_number and self.only_the_numeral(factors, start) and token.text.isdigit()):
            return None
        if token.layout_before or not self.at("punct", "/", offset=1) or not self.at("num", offset=2):
            return None
        denominator = self.peek(2).text  # type: ignore[union-attr]
        if not denominator.isdigit() or int(token.text) >= int(denominator) or int(denominator) == 0:
            return None
        following = self.peek(3)
        if self.continues_factor(following):
            return None
        self.pos += 3
        self.notes.append("read as a mixed number")
        return sympy.Add(sympy.Integer(previous.text), sympy.Rational(int(token.text), int(denominator)))

    def mixed_fraction(self, factors: list[Any], start: int) -> Any:
        """``137 \\frac{1}{2}``: an integer then a proper fraction of integers is a mixed number."""
        sympy = self.sympy
        previous = self.tokens[self.pos - 1]
        if not self.only_the_numeral(factors, start):
            return None
        saved = self.pos
        self.pos += 1
        try:
            top, bottom = self.argument(), self.argument()
        except Unreadable:
            self.pos = saved
            return None
        following = self.peek()
        integers = getattr(top, "is_Integer", False) and getattr(bottom, "is_Integer", False)
        if not integers:
            self.pos = saved
            return None
        if not 0 <= top < bottom or self.continues_factor(following):
            # 2\frac{3}{2} (mixed 3 1/2, or 3?) and 2\frac{1}{2}x (5x/2, or x?): either reading is a guess.
            msg = "an integer before a fraction of integers that is no mixed number (a product or a mixed number?)"
            raise self.unreadable(msg)
        self.notes.append("read as a mixed number")
        return sympy.Add(sympy.Integer(previous.text), sympy.Rational(int(top), int(bottom)))

    def after_a_decimal_point(self, token: Token) -> bool:
        """Whether ``token`` would be read as a factor right after a decimal numeral in a way that is
        also notation for repeating digits (``0.(3)``, ``0.1(6)``: 1/3 and 1/6, never 0 or 0.6), or
        after a numeral ending in its point (``4.x``)."""
        previous = self.tokens[self.pos - 1]
        if previous.kind != "num" or "." not in previous.text.lower().split("e")[0] or token.space_before:
            return False
        if previous.text.endswith("."):
            return True
        digits = self.peek(1)
        return token.text == "(" and digits is not None and digits.kind == "num" and digits.text.isdigit() and (
            self.at("punct", ")", offset=2))

    def only_the_numeral(self, factors: list[Any], start: int) -> bool:
        """Whether the term read so far (from ``start``) is one integer numeral and nothing else: only
        then can a fraction after it make a mixed number. The last digit of ``x^2``, ``2^3``, ``x_2``,
        ``\\sqrt 2`` or ``\\frac12`` is no integer part (``x^2 1/2`` is never 5/2)."""
        return len(factors) == 1 and self.pos - 1 == start and self.tokens[start].text.isdigit()

    def continues_factor(self, token: Token | None) -> bool:
        """Whether ``token`` would join the factor before it (so a mixed number cannot end there)."""
        return token is not None and (self.starts_factor(token) or (token.kind == "punct" and token.text in "^_!"))

    def starts_factor(self, token: Token) -> bool:
        if token.kind in ("num", "letter", "begin"):
            return True
        if token.kind == "word":
            return token.text in FUNCTIONS or (len(token.text) == 2 and unit_named(token.text) is None
                                               and token.text.lower() not in LIST_WORDS)
        if token.kind == "cmd":
            return token.text in GREEK or token.text in FUNCTIONS or token.text in (
                *FRACTIONS, "sqrt", "binom", "dbinom", "tbinom", "pi", "infty", "imath", "lfloor", "lceil", "lvert",
                "{",
            )
        return token.kind == "punct" and token.text in ("(", "[", "{")

    def value_power(self) -> Any:
        value = self.power()
        if not _is_value(value):
            raise self.unreadable("arithmetic on something that is not a number")
        return value

    def power(self) -> Any:
        sympy = self.sympy
        base = self.postfix()
        if not self.at("punct", "^"):
            return base
        self.pos += 1
        if self.at("degree") or (self.at("punct", "{") and self.at("degree", offset=1)):
            braced = self.at("punct", "{")
            self.pos += 2 if braced else 1
            if braced:
                self.expect("punct", "}")
            return sympy.Mul(_plain_value(base, "degrees"), sympy.Symbol(DEGREE))
        braced = self.at("punct", "{")
        exponent = self.exponent()
        if not braced and exponent == 1 and self.at("punct", "/"):
            # 9^1/2 means 9^(1/2) to whoever wrote a first power; LaTeX draws 9^1 over 2
            raise self.unreadable("a power of 1 before a slash (9^1/2: the root or a half?)")
        base = _plain_value(base, "a power")
        if _indeterminate_power(sympy, base, exponent):
            # 0^0 and oo^0 are indeterminate forms; sympy would quietly make them 1.
            raise self.unreadable("an indeterminate power (0^0 or infinity^0)")
        return sympy.Pow(base, exponent)

    def exponent(self) -> Any:
        """A power's exponent: a braced group, one digit, a letter or a command; ``9^9^9`` (Python's
        ``**`` chain) groups to the right."""
        sympy = self.sympy
        if self.at("num"):
            token = self.take()
            if token.text.isdigit() and len(token.text) > 1:
                self._push_back_digits(token)
                value = sympy.Integer(token.text[0])
            else:
                value = self.number(token.text)
        elif self.at("punct", "-", "+"):
            sign = self.take().text
            inner = self.exponent()
            value = sympy.Mul(sympy.Integer(-1), inner) if sign == "-" else inner
        else:
            if self.at("cmd", *FUNCTIONS) or self.at("word", *FUNCTIONS):
                # e^\sin x raises e to "sin" alone in LaTeX; reading e^{sin x} would be a guess.
                raise self.unreadable("a function name as an unbraced exponent (is its argument in the exponent?)")
            value = _plain_value(self.postfix(), "an exponent")
            if self.tokens[self.pos - 1].kind == "punct" and self.tokens[self.pos - 1].text == "!":
                # 2^{3}! draws the ! on the line, after the power: (2^3)! to a reader, never 2^(3!).
                raise self.unreadable("a factorial right after an exponent (of the power, or of the exponent?)")
        if self.at("punct", "^"):
            self.pos += 1
            value = sympy.Pow(value, self.exponent())
        return value

    def _push_back_digits(self, token: Token) -> None:
        """``x^23`` is ``x^{2}3`` in LaTeX: only the first digit is the exponent; the rest is a
        number after a power, which the term rule refuses."""
        self.tokens = [*self.tokens[: self.pos], Token("num", token.text[1:]), *self.tokens[self.pos :]]

    def postfix(self) -> Any:
        sympy = self.sympy
        start = self.pos
        value = self.primary()
        while True:
            if self.at("punct", "!"):
                self.pos += 1
                if self.at("punct", "!"):
                    # n!! is the double factorial to most readers and (n!)! to others: neither is guessed.
                    raise self.unreadable("'!!' (a double factorial, or a factorial of a factorial?)")
                value = sympy.factorial(_plain_value(value, "a factorial"))
            elif self.at("punct", "_"):
                value = self.subscript(value, start)
            elif self.at("punct", "'"):
                raise self.unreadable("a prime (')")
            else:
                return value

    def subscript(self, value: Any, start: int) -> Any:
        if self.pos != start + 1:
            raise self.unreadable("a subscript on something that is not a single name or numeral")
        self.pos += 1
        first = self.tokens[start]
        if self.at("punct", "{"):
            self.pos += 1
            inner_start = self.pos
            depth = 1
            while depth:
                token = self.take()
                depth += {"{": 1, "}": -1}.get(token.text, 0) if token.kind == "punct" else 0
            label = "".join(t.text for t in self.tokens[inner_start : self.pos - 1])
        else:
            token = self.take()
            label = token.text
            if label.isdigit() and len(label) > 1 and first.kind != "num":
                raise self.unreadable("a subscript of several digits without braces")
            if token.kind == "word" and len(label) > 1:
                # LaTeX subscripts one character: x_ab is x_a times b, never x_{ab}.
                raise self.unreadable("a subscript of several letters without braces")
        if first.kind == "num":
            if not (label.isdigit() and first.text.isdigit() and 2 <= int(label) <= 36):
                raise self.unreadable(f"a number with subscript {label!r}")
            return BaseNumeral(first.text.lstrip("0") or "0", int(label))
        if first.kind not in ("letter", "cmd") or (first.kind == "cmd" and first.text not in GREEK):
            raise self.unreadable("a subscript on something that is not a name")
        return self.symbol(f"{first.text}_{{{label}}}")

    # -- primaries -------------------------------------------------------------------------

    def primary(self) -> Any:
        token = self.take()
        handler: Callable[[Token], Any] | None = {
            "num": self.number_token, "letter": self.letter, "word": self.word, "cmd": self.command,
            "punct": self.bracketed, "begin": self.matrix,
        }.get(token.kind)
        if handler is None:
            raise self.unreadable(f"{token.text!r} where a value should be")
        return handler(token)

    def number_token(self, token: Token) -> Any:
        return self.number(token.text)

    def number(self, text: str) -> Any:
        sympy = self.sympy
        if "." in text.split("e")[0].split("E")[0].rstrip("."):
            self.decimals += 1
        mantissa, _, exponent = text.lower().partition("e")
        value = sympy.Rational(mantissa.rstrip(".") or "0")
        if exponent:
            if abs(int(exponent)) > 400:
                raise self.unreadable("an exponent over 400")
            value = sympy.Mul(value, sympy.Pow(sympy.Integer(10), sympy.Integer(int(exponent))))
        return value

    def symbol(self, name: str) -> Any:
        return self.sympy.Symbol(name)

    def letter(self, token: Token) -> Any:
        sympy = self.sympy
        if token.text == "e":
            return sympy.E
        if token.text == "i":
            return sympy.I
        following = self.peek()
        if following is not None and following.kind == "punct" and following.text == "(":
            return self.application(token.text)
        return self.symbol(token.text)

    def application(self, name: str) -> Any:
        """``f(0)``, ``u(t)``: a letter written against a bracket names a function applied to its
        arguments, never a product (``f(0)`` is not 0)."""
        self.pos += 1
        arguments = [_plain_value(item, "a function argument") for item in self.item_list((")",))]
        self.expect("punct", ")")
        self.notes.append(f"{name}(...) read as a function")
        return self.sympy.Function(name)(*arguments)

    def word(self, token: Token) -> Any:
        if token.text in FUNCTIONS:
            return self.function(token.text)
        if len(token.text) == 2 and unit_named(token.text) is None and not token.roman:
            return self.letter_pair(token.text)
        raise self.unreadable(f"the word {token.text!r}")

    def letter_pair(self, text: str) -> Any:
        """Two letters side by side are two factors: a power, subscript or factorial after them
        belongs to the second alone (``xy^2`` is x times y squared, never (xy)^2). With a capital
        letter the pair may also name one thing (``AB^2``: the segment AB squared, or A times B
        squared?), so a postfix after it is never guessed."""
        if any(char.isupper() for char in text):
            if self.at("punct", "^", "_", "!", "'"):
                msg = f"a power, subscript or factorial after {text!r} (one name, or a product?)"
                raise self.unreadable(msg)
            return self.sympy.Mul(*(self.letter(Token("letter", char)) for char in text))
        # The second letter goes back as a token of its own, read by the term rule as the next
        # factor with its own postfix (and refused after a slash, as in a/bc).
        self.tokens = [*self.tokens[: self.pos], Token("letter", text[1]), *self.tokens[self.pos :]]
        return self.letter(Token("letter", text[0]))

    def command(self, token: Token) -> Any:
        sympy = self.sympy
        name = token.text
        if name in FRACTIONS:
            top, bottom = self.argument(), self.argument()
            return sympy.Mul(top, sympy.Pow(bottom, sympy.Integer(-1)))
        if name == "sqrt":
            index = None
            if self.at("punct", "["):
                self.pos += 1
                index = _plain_value(self.expression(), "a root index")
                self.expect("punct", "]")
            braced = self.at("punct", "{")
            radicand = self.argument()
            if not braced and self.at("punct", "^"):
                # \sqrt x^2 draws a 2 high beside a bare x: the root squared, or the root of x^2?
                raise self.unreadable("a power right after a root's unbraced argument")
            index = sympy.Integer(2) if index is None else _checked(index)
            exponent = sympy.Rational(1, int(index)) if getattr(index, "is_Integer", False) and index != 0 else (
                sympy.Pow(index, sympy.Integer(-1)))
            return sympy.Pow(radicand, exponent)
        if name in ("binom", "dbinom", "tbinom"):
            return sympy.binomial(self.argument(), self.argument())
        if name in GREEK:
            return self.symbol(name)
        if name in CONSTANTS:
            return {"pi": sympy.pi, "infty": sympy.oo, "imath": sympy.I}.get(name) or SetReading(sympy.EmptySet, "set")
        if name in FUNCTIONS:
            return self.function(name)
        if name == "lvert":
            inner = _plain_value(self.expression(), "an absolute value")
            self.expect("cmd", "rvert")
            return sympy.Abs(inner)
        if name in ("lfloor", "lceil"):
            inner = _plain_value(self.expression(), "a floor")
            self.expect("cmd", "rfloor" if name == "lfloor" else "rceil")
            return (sympy.floor if name == "lfloor" else sympy.ceiling)(inner)
        if name == "{":
            return self.bracketed(token)
        raise self.unreadable(f"the command \\{name}")

    def argument(self) -> Any:
        """One LaTeX argument: a braced group, or a single digit, letter or command."""
        if self.at("punct", "{"):
            self.pos += 1
            value = _plain_value(self.expression(), "an argument")
            self.expect("punct", "}")
            return value
        token = self.take()
        if token.kind == "num":
            if len(token.text) > 1:
                self.pos -= 1
                self.tokens[self.pos] = Token("num", token.text[0])
                self.tokens.insert(self.pos + 1, Token("num", token.text[1:]))
                self.pos += 1
                return self.number(token.text[0])
            return self.number(token.text)
        if token.kind == "letter":
            return self.letter(token)
        if token.kind == "cmd" and (token.text in GREEK or token.text in ("pi", "infty")):
            return self.command(token)
        raise self.unreadable(f"{token.text!r} as an argument")

    def function(self, name: str) -> Any:
        sympy = self.sympy
        power = None
        base = None
        if self.at("punct", "_") and name == "log":
            self.pos += 1
            base = self.argument()
        if self.at("punct", "^"):
            self.pos += 1
            power = self.exponent()
        bracketed = self.at("punct", "(") or self.at("punct", "{")
        argument = self.group_value() if bracketed else self.bare_argument()
        if not bracketed and self.at("punct", "/"):
            # \sin\pi/6 is sin(pi/6) to most readers and sin(pi)/6 to LaTeX: no reading is safe
            raise self.unreadable(f"a slash after \\{name}'s unbracketed argument (inside the function or not?)")
        functions = {
            "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "cot": sympy.cot, "sec": sympy.sec,
            "csc": sympy.csc, "arcsin": sympy.asin, "arccos": sympy.acos, "arctan": sympy.atan,
            "arccot": sympy.acot, "arcsec": sympy.asec, "arccsc": sympy.acsc, "sinh": sympy.sinh,
            "cosh": sympy.cosh, "tanh": sympy.tanh, "coth": sympy.coth, "ln": sympy.log, "exp": sympy.exp,
        }
        inverse = power is not None and self.inverse_power(name, power)
        if inverse:
            self.notes.append(f"\\{name}^{{-1}} read as the inverse function")
            return _INVERSES[name](sympy)(argument)
        if name in ("log", "lg"):
            if base is None:
                # \log is base 10, e or 2 by field: read with an unknown base, it equals only what
                # holds whatever the base is (2\log 2 = \log 4; never \ln 2 or \log_{10} 2).
                base = sympy.Symbol(LOG_BASE, positive=True)
                self.notes.append(f"\\{name} read with an unknown base")
            elif _no_log_base(base):
                raise self.unreadable(f"a logarithm to the base {_checked(base)} (no logarithm has it)")
            value = sympy.Mul(sympy.log(argument), sympy.Pow(sympy.log(base), sympy.Integer(-1)))
        else:
            value = functions[name](argument)
        return sympy.Pow(value, power) if power is not None else value

    def inverse_power(self, name: str, power: Any) -> bool:
        """``\\sin^{-1}`` is arcsin (the usual reading, never 1/sin); a function to any other power
        than a positive integer (``\\sin^{-2}``, ``\\log^{-1}``) is not guessed."""
        sympy = self.sympy
        with sympy.evaluate(True):
            exponent = _checked(power)
        if exponent == -1 and name in _INVERSES:
            return True
        if not (getattr(exponent, "is_Integer", False) and exponent > 0):
            raise self.unreadable(f"\\{name} to the power {exponent} (an inverse or a reciprocal?)")
        return False

    def group_value(self) -> Any:
        closing = ")" if self.take().text == "(" else "}"
        value = _plain_value(self.expression(), "a function argument")
        self.expect("punct", closing)
        return value

    def bare_argument(self) -> Any:
        """``\\sin 2x``: juxtaposed numbers, letters and powers up to the next operator or function."""
        sympy = self.sympy
        factors = [self.value_power()]
        while True:
            token = self.peek()
            joins = token is not None and (
                token.kind == "letter" or (token.kind == "cmd" and token.text in GREEK | {"pi"}))
            if not joins:
                break
            factors.append(self.value_power())
        return factors[0] if len(factors) == 1 else sympy.Mul(*factors)

    def bracketed(self, token: Token) -> Any:
        if token.kind == "punct" and token.text == "|":
            inner = _plain_value(self.expression(), "an absolute value")
            self.expect("punct", "|")
            return self.sympy.Abs(inner)
        if token.text not in _CLOSERS:
            raise self.unreadable(f"{token.text!r} where a value should be")
        closers = _CLOSERS[token.text]
        if self.at("punct", *closers):
            closing = self.take().text
            if token.text in ("\\{", "{") or (token.text, closing) == ("(", ")"):
                return Collection("set", (), "{}") if token.text == "\\{" else self.unreadable_empty()
            raise self.unreadable("empty brackets")
        items = self.item_list(closers)
        closing_token = self.take()
        if closing_token.kind != "punct" or closing_token.text not in closers:
            raise self.unreadable(f"{token.text!r} closed by {closing_token.text!r}")
        if token.text == "{":
            self.note_group_end()
        return _bracket_reading(self.sympy, token.text, closing_token.text, items)

    def note_group_end(self) -> None:
        """Remember where a bare group just closed if its last visible token is a numeral."""
        index = self.pos - 2
        while index >= 0 and self.tokens[index].kind == "punct" and self.tokens[index].text == "}":
            index -= 1
        if index >= 0 and self.tokens[index].kind == "num":
            self.groups_ending_in_number.add(self.pos)

    def unreadable_empty(self) -> Any:
        raise self.unreadable("empty brackets")

    def matrix(self, token: Token) -> Any:
        if token.text not in _MATRICES:
            raise self.unreadable(f"the environment {token.text!r}")
        rows: list[list[Any]] = [[]]
        while not self.at("end"):
            rows[-1].append(_plain_value(self.expression(), "a matrix entry"))
            if self.at("punct", "&"):
                self.pos += 1
            elif self.at("punct", "\\\\"):
                self.pos += 1
                if not self.at("end"):
                    rows.append([])
            elif not self.at("end"):
                raise self.unreadable("a matrix entry followed by something else")
        end = self.take()
        if end.text != token.text:
            raise self.unreadable(f"\\begin{{{token.text}}} closed by \\end{{{end.text}}}")
        if not rows[-1]:
            rows.pop()
        if not rows or any(len(row) != len(rows[0]) for row in rows):
            raise self.unreadable("a matrix with rows of different lengths")
        return MatrixReading(self.sympy.ImmutableMatrix(rows))


def _no_log_base(base: Any) -> bool:
    """A number that is no logarithm's base (0, 1, a negative or complex number): sympy would still give
    ``\\log_0 5`` the value 0 and ``\\log_1 5`` complex infinity."""
    value = _checked(base)
    return bool(getattr(value, "is_number", False)) and not (value.is_positive and value != 1)


def _indeterminate_power(sympy: Any, base: Any, exponent: Any) -> bool:
    """``0^0`` and ``\\infty^0``, also when written ``0^{1-1}`` or ``(2-2)^0``: sympy would quietly
    make them 1, so base and exponent are evaluated (within the guards' bounds) before the check."""
    exponent, base = _checked(exponent), _checked(base)
    return exponent == 0 and (base == 0 or base in (sympy.oo, -sympy.oo, sympy.zoo))


def _name_token(token: Token) -> bool:
    if token.kind == "letter":
        return True
    if token.kind == "word":
        return token.text.isupper()
    if token.kind == "cmd":
        return token.text in GREEK or token.text in ("{", "}", *FRACTIONS)
    return token.kind == "punct" and token.text in "(),|:{}"


def _after_subscript(tokens: list[Token], index: int) -> int:
    if index < len(tokens) and tokens[index].kind == "punct" and tokens[index].text == "{":
        depth = 0
        while index < len(tokens):
            text = tokens[index].text if tokens[index].kind == "punct" else ""
            depth += {"{": 1, "}": -1}.get(text, 0)
            index += 1
            if depth == 0:
                return index
        return index
    return index + 1


_MOST_PLACES_COMPARED: Final = 12
"""Decimal places of an approximation beside an exact value checked in floating point (well within its precision)."""


def _places(text: str) -> int | None:
    """Decimal places of a decimal literal (``1.04e-3`` has 5); ``None`` for an integer."""
    mantissa, _, exponent = text.lower().partition("e")
    if "." not in mantissa or mantissa.endswith("."):
        return None if not exponent else max(0, -int(exponent))
    fraction = mantissa.split(".", 1)[1]
    if not fraction.strip("0") and not exponent:
        return None
    return max(0, len(fraction) - int(exponent or 0))


def _is_value(value: Any) -> bool:
    return not isinstance(value, Collection | SetReading | MatrixReading | Quantity | BaseNumeral | Ratio
                          | Assignment | Equation | Relation)


def _plain_value(value: Any, where: str) -> Any:
    if isinstance(value, Quantity) and not value.units:
        return value.value
    if not _is_value(value):
        msg = f"{getattr(value, 'kind', 'a structure')} inside {where}"
        raise Unreadable(msg)
    return value


def _bracket_reading(sympy: Any, opening: str, closing: str, items: list[Any]) -> Any:
    """``(a)`` groups; ``(a, b]`` is an interval; ``(a, b)`` a pair; ``\\{...\\}`` a set."""
    if opening in ("\\{",):
        return Collection("set", _flattened(items), "{}")
    if opening == "{":
        if len(items) == 1:
            item = items[0]
            return item.value if isinstance(item, Quantity) and not item.units else item
        return Collection("list", _flattened(items))
    if len(items) == 1:
        if (opening, closing) == ("[", "]"):
            raise Unreadable("[x] around one value (a group, or the floor in older texts)")
        if (opening, closing) == ("(", ")"):
            item = items[0]
            return item.value if isinstance(item, Quantity) and not item.units else item
        raise Unreadable(f"{opening}...{closing} around one value")
    mixed = (opening, closing) != ("(", ")")
    if len(items) == 2 and mixed and ((opening, closing) == ("[", "]") or _interval_ends(items)):
        return _interval(sympy, opening, closing, items)
    if (opening, closing) not in (("(", ")"), ("[", "]")):
        raise Unreadable(f"{opening}...{closing} around {len(items)} values")
    return Collection("tuple", tuple(items), opening + closing)


def _interval(sympy: Any, opening: str, closing: str, items: list[Any]) -> SetReading:
    low, high = (_checked(_plain_value(item, "an interval")) for item in items)
    if (low == -sympy.oo and opening == "[") or (high == sympy.oo and closing == "]"):
        raise Unreadable("an interval closed at infinity")
    if not ends_in_order(sympy, low, high, closed=(opening, closing) == ("[", "]")):
        raise Unreadable("an interval whose ends are not in increasing order ([3, 2] is no way to write the empty set)")
    with sympy.evaluate(True):
        return SetReading(sympy.Interval(low, high, opening == "(", closing == ")"), "interval")


def ends_in_order(sympy: Any, low: Any, high: Any, *, closed: bool = False) -> bool:
    """False when ``low < high`` (``low <= high`` for a closed interval) is proven false: such ends
    make no interval (``(5, 1)`` is only a pair, ``[3, 2]`` no way to write the empty set)."""
    with sympy.evaluate(True):
        try:
            low, high = sympy.sympify(low).doit(), sympy.sympify(high).doit()
            return (sympy.Le if closed else sympy.Lt)(low, high) is not sympy.false
        except TypeError:  # complex ends make no interval either
            return False


def _interval_ends(items: list[Any]) -> bool:
    return all(_is_value(item) or (isinstance(item, Quantity) and not item.units) for item in items)


def _is_operator(token: Token, commands: frozenset[str], symbol: str) -> bool:
    return (token.kind == "cmd" and token.text in commands) or (token.kind == "punct" and token.text == symbol)


def _is_pair(reading: Any) -> bool:
    """``(a, b)``: a pair, or an open interval."""
    return isinstance(reading, Collection) and reading.kind == "tuple" and reading.brackets == "()" and (
        len(reading.items) == 2)


def _flattened(items: list[Any]) -> tuple[Any, ...]:
    """Members of an unordered collection, with each ``a \\pm b`` as its two values."""
    flat: list[Any] = []
    for item in items:
        if isinstance(item, Collection) and item.kind == "plus-minus":
            flat.extend(item.items)
        else:
            flat.append(item)
    return tuple(flat)


def _checked(value: Any) -> Any:
    """``value`` after the guards' bounds: sets compare their members on construction."""
    check_tree(value)
    import sympy

    with sympy.evaluate(True):
        return value.doit() if hasattr(value, "doit") else value


def _as_set(sympy: Any, reading: Any) -> Any:
    with sympy.evaluate(True):
        return _as_set_evaluated(sympy, reading)


def _as_set_evaluated(sympy: Any, reading: Any) -> Any:
    if isinstance(reading, SetReading):
        return reading.value
    if _is_pair(reading):
        low, high = (_checked(_plain_value(item, "an interval")) for item in reading.items)
        if not ends_in_order(sympy, low, high):
            raise Unreadable("a pair whose ends are not in increasing order used as an interval")
        return sympy.Interval.open(low, high)
    if isinstance(reading, Collection) and reading.kind == "set":
        return sympy.FiniteSet(*(_checked(_plain_value(item, "a set")) for item in reading.items))
    msg = "a union or intersection of things that are not sets"
    raise Unreadable(msg)


def _set_operation(sympy: Any, op: str, left: Any, right: Any) -> Any:
    with sympy.evaluate(True):
        return {"cup": sympy.Union, "cap": sympy.Intersection, "setminus": sympy.Complement}[op](left, right)


def _relation(sympy: Any, ops: tuple[str, ...], parts: list[Any], names: tuple[str | None, ...]) -> Relation:
    """A relation; with one variable alone on one side, its solution set over the reals."""
    values = tuple(
        part if not _is_value(part) and not isinstance(part, Quantity) else _checked(_plain_value(part, "a relation"))
        for part in parts
    )
    with sympy.evaluate(True):
        variable, solution = _solution_set(sympy, ops, values, names)
    return Relation(ops, values, variable, solution)


_INTERVAL_OPS: Final = frozenset({"<", "<=", ">", ">=", "!="})


def _solution_set(sympy: Any, ops: tuple[str, ...], parts: tuple[Any, ...],
                  names: tuple[str | None, ...]) -> tuple[str | None, Any]:
    """``x < 4`` is ``(-oo, 4)``; ``-1 < x \\le 4`` is ``(-1, 4]``; ``x \\notin \\{3, 4\\}`` is the
    reals without 3 and 4; ``-x > -1`` is solved for x. Only for one unknown (a variable or a
    name such as ``f(x)``) against numbers; a name that is a formula of the unknown (``|x| < 2``)
    is solved for the unknown, never taken as the unknown itself."""
    names = tuple(name if name is not None and _is_unknown(sympy, part) else None for name, part in zip(
        names, parts, strict=True))
    if len(ops) == 2 and (set(ops) <= {"<", "<="} or set(ops) <= {">", ">="}):
        low, middle, high = parts
        if names[1] is not None and _numeric(low) and _numeric(high):
            if not _ends_in_order(sympy, ops, low, high):
                # 3 < x < 1 is (1, 3) with its ends swapped far more often than a way to write the empty set.
                msg = "a double inequality whose ends are not in order (no way to write the empty set)"
                raise Unreadable(msg)
            first = _one_sided(sympy, _flip(ops[0]), low)
            second = _one_sided(sympy, ops[1], high)
            return _variable(middle, names[1]), sympy.Intersection(first, second)
        return None, None
    if len(ops) != 1:
        return None, None
    op, (left, right) = ops[0], parts
    if op in ("in", "notin"):
        if names[0] is not None and isinstance(right, SetReading | Collection):
            members = _as_set(sympy, right)
            return _variable(left, names[0]), members if op == "in" else sympy.Complement(sympy.Reals, members)
        return None, None
    if op not in _INTERVAL_OPS:
        return None, None
    if names[0] is not None and _numeric(right):
        return _variable(left, names[0]), _one_sided(sympy, op, right)
    if names[1] is not None and _numeric(left):
        return _variable(right, names[1]), _one_sided(sympy, _flip(op), left)
    return _solved(sympy, op, left, right)


def _ends_in_order(sympy: Any, ops: tuple[str, ...], first: Any, last: Any) -> bool:
    """Whether ``a < x < b`` (or ``a > x > b``) has its ends in the order of its signs, as an interval's
    must be (:func:`ends_in_order`); ``1 \\le x \\le 1`` is {1}."""
    low, high = (first, last) if ops[0] in ("<", "<=") else (last, first)
    return ends_in_order(sympy, low, high, closed=set(ops) <= {"<=", ">="})


def _is_unknown(sympy: Any, value: Any) -> bool:
    """Whether ``value`` names one unknown: a variable (``x``, ``x_{1}``) or a function applied
    (``f(x)``). ``|x|`` or ``\\frac{x}{y}`` are formulas: their solution set is not the variable's."""
    from sympy.core.function import AppliedUndef

    return isinstance(value, sympy.Symbol | AppliedUndef)


def _variable(value: Any, name: str) -> str:
    import sympy

    return value.name if isinstance(value, sympy.Symbol) else name


def _solved(sympy: Any, op: str, left: Any, right: Any) -> tuple[str | None, Any]:
    """A one-unknown inequality with the unknown on both or either side (``-x > -1``)."""
    if not (_is_value(left) and _is_value(right)):
        return None, None
    unknowns = (left - right).free_symbols
    if len(unknowns) != 1:
        return None, None
    (unknown,) = unknowns
    relation = {"<": sympy.Lt, "<=": sympy.Le, ">": sympy.Gt, ">=": sympy.Ge, "!=": sympy.Ne}[op](left, right)
    try:
        solution = sympy.solveset(relation, unknown, sympy.Reals)
    except (NotImplementedError, ValueError, TypeError):
        return None, None
    if isinstance(solution, sympy.ConditionSet):
        return None, None
    return unknown.name, solution


def _numeric(value: Any) -> bool:
    return _is_value(value) and not getattr(value, "free_symbols", True)


def _flip(op: str) -> str:
    return {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "!=": "!="}[op]


def _one_sided(sympy: Any, op: str, bound: Any) -> Any:
    return {
        "<": lambda: sympy.Interval.open(-sympy.oo, bound),
        "<=": lambda: sympy.Interval(-sympy.oo, bound, True, False),
        ">": lambda: sympy.Interval.open(bound, sympy.oo),
        ">=": lambda: sympy.Interval(bound, sympy.oo, False, True),
        "!=": lambda: sympy.Complement(sympy.Reals, sympy.FiniteSet(bound)),
    }[op]()
