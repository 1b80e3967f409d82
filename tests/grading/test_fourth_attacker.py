"""A fourth attacker's classes: readings that dropped or moved what a reader sees.

Found on 2026-11-28 by probing the grader with about 2,200 hand-written wrong answers and replies.
Each class scored 1 before its fix:

- a mixed number built on the last digit of something else: ``x^2 1/2`` and ``2^3\\frac12`` read as
  5/2 and 7/2, ``2^21/2`` as 43/2 (the parser took the token before the fraction as the integer part
  and replaced the whole factor with it);
- a Unicode fraction split by its rewrite: ``2^½`` read as ``2^1/2`` (= 1), ``√½`` as 1/2, ``3/½`` as 3/2;
- a Unicode root whose reach a reader cannot see: ``√x²`` read as (√x)² = x, ``√xy`` as √(xy);
- ``3!!`` read as (3!)! = 720 (to most readers it is the double factorial, 3);
- an indeterminate power behind an unevaluated base or exponent: ``0^{1-1}`` and ``(2-2)^0`` as 1;
- an inequality whose name is a formula solved as if the formula were the variable: ``|x| < 2`` as
  x < 2, equal to ``(-\\infty, 2)``;
- a tuple named out of order: ``(y, x) = (1, 2)`` equal to the pair ``(1, 2)``;
- ``42\\%\\%`` read as 42 percent; an en dash between numbers (``10\\u201312``, a range) read as a minus;
- ``\\log_0 5`` read as 0 (no logarithm has the base 0, 1 or a negative one);
- ``2^{3}!`` read as 2^(3!) = 64 (the ``!`` stands after the power), ``e^\\sin x`` as e^(sin x) (LaTeX raises
  e to "sin" alone);
- ``3 < x < 1`` equal to the empty set (the ends of (1, 3) swapped, as ``[3, 2]`` already was);
- case folded in an unreadable formula: ``\\dot{X} = aX`` equal to ``\\dot{x} = Ax``, ``X'`` to ``x'``;
- repeating digits read as a product: ``0.(3)`` as 0, ``0.3(3)`` as 0.9, ``1.(6)`` as 6;
- an answer made of several boxes and other writing read as its boxes alone (``-\\boxed{42}, -\\boxed{42}``);
- in a reply: several boxes with different text read without their sentences (``... it is not
  \\boxed{42}``), a denial or sign on the line before a displayed box (``The answer is not`` then
  ``\\[\\boxed{42}\\]``; ``x = -`` then the box), a box inside brackets read without them
  (``-(\\boxed{21})``, ``(1, \\boxed{42})``), digits drawn against the box (``1\\,\\boxed{042}``) and a
  sign before ``\\displaystyle``, ``\\left(`` or ``\\quad``.

Each class is pinned by hand and generated with hypothesis below; the reply classes are also the
adversary operator ``written_against_a_displayed_box`` (``changing_prose.py``), which scored 300 false
positives in 300 mutants before the fix and none after.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from handlers.grading import extract_final_answer, grade_answer

WRONG = [
    ("x^2 1/2", "\\frac52", "the 2 is an exponent, not the integer part of a mixed number"),
    ("2^3 1/2", "\\frac72", "the 3 is an exponent"),
    ("10^3 1/2", "\\frac72", "the 3 is an exponent"),
    ("2^21/2", "\\frac{43}{2}", "the exponent is 2, then 1/2"),
    ("x_2 1/2", "\\frac52", "the 2 is a subscript"),
    ("\\sqrt 21/2", "\\frac52", "the 2 is under the root"),
    ("\\frac12 1/2", "\\frac52", "the 2 is a denominator"),
    ("x^2\\frac12", "\\frac52", "the 2 is an exponent"),
    ("2^3\\frac12", "\\frac72", "2 cubed times a half is 4"),
    ("2^\u00bd", "1", "2 to the power one half is the root of 2"),
    ("9^\u00bd", "\\frac92", "9 to the power one half is 3"),
    ("\u221a\u00bd", "\\frac12", "the root of a half"),
    ("3/\u00bd", "\\frac32", "3 divided by a half is 6"),
    ("2\u00f7\u00bd", "1", "2 divided by a half is 4"),
    ("x^\u2153", "\\frac{x}{3}", "the cube root of x"),
    ("\u221ax\u00b2", "x", "the root squared, or the root of x squared (|x|)?"),
    ("\u221ax \u00b2", "x", "the root squared, or the root of x squared (|x|)?"),
    ("\u221a(x)\u00b2", "x", "the root squared, or the root of x squared?"),
    ("\u221axy", "\\sqrt{xy}", "the root of x times y, or of xy?"),
    ("\u221a2x", "\\sqrt{2}x", "the root of 2 times x, or of 2x?"),
    ("3!!", "720", "the double factorial of 3 is 3"),
    ("4!!", "24!", "the double factorial of 4 is 8"),
    ("n!!", "(n!)!", "a double factorial, or a factorial of a factorial?"),
    ("3! !", "720", "a double factorial, or a factorial of a factorial?"),
    ("0^{1-1}", "1", "0^0 has no value"),
    ("(2-2)^0", "1", "0^0 has no value"),
    ("0^{x-x}", "1", "0^0 has no value"),
    ("\\infty^{1-1}", "1", "infinity^0 has no value"),
    ("|x| < 2", "(-\\infty, 2)", "|x| < 2 is -2 < x < 2"),
    ("|x| > 3", "(3, \\infty)", "|x| > 3 is also x < -3"),
    ("|x| \\le 2", "(-\\infty, 2]", "|x| <= 2 is -2 <= x <= 2"),
    ("\\left|x\\right| < 2", "(-\\infty, 2)", "|x| < 2 is -2 < x < 2"),
    ("|x| \\in [0, 2)", "[0, 2)", "x is in (-2, 2)"),
    ("\\frac{x}{y} < 1", "(-\\infty, 1)", "an inequality in two unknowns is no interval"),
    ("(y, x) = (1, 2)", "(1, 2)", "x = 2 and y = 1: the pair (x, y) is (2, 1)"),
    ("(b, a) = (1, 2)", "(1, 2)", "a = 2 and b = 1"),
    ("42\\%\\%", "42", "two percent signs make no amount"),
    ("10\u201312", "-2", "an en dash between numbers is a range"),
    ("3 \u2013 5", "-2", "an en dash between numbers is a range"),
    ("-\\boxed{42}, -\\boxed{42}", "42", "minus 42, twice"),
    ("\\boxed{42} \\neq \\boxed{42}", "42", "a relation between boxes"),
    ("\\boxed{42}^2 \\boxed{42}^2", "42", "squares of the boxes"),
    ("\\cancel{\\boxed{42}} \\boxed{42}", "42", "a crossed-out box beside a box"),
    ("\\text{not }\\boxed{42}\\text{ and not }\\boxed{42}", "42", "words around the boxes"),
    ("\\log_0 5", "0", "no logarithm has the base 0"),
    ("\\log_1 5", "\\infty", "no logarithm has the base 1"),
    ("\\log_{-2} 4", "2", "no real logarithm has a negative base"),
    ("2^{3}!", "64", "the factorial stands after the power: (2^3)! = 40320"),
    ("3^{2}!", "9", "the factorial stands after the power: 9!"),
    ("2^x!", "2^{x!}", "the factorial stands after the power"),
    ("e^\\sin x", "e^{\\sin x}", "LaTeX raises e to 'sin' alone"),
    ("e^\\ln 2", "2", "LaTeX raises e to 'ln' alone"),
    ("3 < x < 1", "\\emptyset", "the ends of (1, 3) swapped"),
    ("1 < x < 1", "\\emptyset", "no interval has these ends"),
    ("2 > x > 5", "\\emptyset", "the ends of (2, 5) swapped"),
    ("\\dot{X} = a X", "\\dot{x} = A x", "case tells variables apart in a formula"),
    ("X^{\\prime}", "x^{\\prime}", "X' is not x'"),
    ("\\vec{V}", "\\vec{v}", "V is not v"),
    ("P(A|B)", "P(a|b)", "events A and a differ"),
    ("0.(3)", "0", "0.(3) is 0.333..., one third"),
    ("1.(6)", "6", "1.(6) is 1.666..., five thirds"),
    ("0.3(3)", "0.9", "0.3(3) is 0.333..., one third"),
    ("3.(14)", "42", "3.(14) is 3.141414..."),
    ("4.x", "4x", "a numeral ending in its point before a letter"),
]

RIGHT = [
    ("7 3/4", "\\frac{31}{4}", "a mixed number"),
    ("-7 3/4", "-\\frac{31}{4}", "a negative mixed number"),
    ("137\\frac{1}{2}", "137.5", "a mixed number with \\frac"),
    ("x^2\\frac12", "\\frac{x^2}{2}", "a power times a half"),
    ("\u00bd", "\\frac12", "a half alone"),
    ("3\u00bd", "\\frac72", "a Unicode mixed number"),
    ("3 \u00bd", "\\frac72", "a Unicode mixed number with a space"),
    ("-\u00bd", "-\\frac12", "minus a half"),
    ("\u00bdx", "\\frac{x}{2}", "a half of x"),
    ("2^\u00bd", "\\sqrt{2}", "a half as an exponent"),
    ("\u221a\u00bd", "\\frac{\\sqrt{2}}{2}", "the root of a half"),
    ("3/\u00bd", "6", "divided by a half"),
    ("\u221a2", "\\sqrt{2}", "a root of a number"),
    ("2\u221a5", "2\\sqrt{5}", "a number times a root"),
    ("\u221a(x+1)", "\\sqrt{x+1}", "a root of a bracket"),
    ("\u221ax", "\\sqrt{x}", "a root of one letter"),
    ("\u221a2/2", "\\frac{\\sqrt{2}}{2}", "a root over 2"),
    ("\u221a2+1", "1+\\sqrt{2}", "a root plus 1"),
    ("\u221b8", "2", "a cube root"),
    ("3!", "6", "a factorial"),
    ("(3!)!", "720", "a factorial of a factorial, in brackets"),
    ("x^0", "1", "a power 0 of a variable"),
    ("2^{1-1}", "1", "a power 0 of 2"),
    ("|x| < 2", "(-2, 2)", "|x| < 2 solved for x"),
    ("x < 2", "(-\\infty, 2)", "one variable"),
    ("f(x) < 2", "(-\\infty, 2)", "a function named on the left"),
    ("x_1 \\ge 2", "[2, \\infty)", "a subscripted variable"),
    ("(x, y) = (1, 2)", "(1, 2)", "names in order"),
    ("(p, q) = (3, 2)", "(3, 2)", "names in order"),
    ("42\\%", "42", "one percent sign"),
    ("\u20135", "-5", "an en dash as a minus"),
    ("x \u2013 1", "x - 1", "an en dash between a letter and a number"),
    ("x = \u20135", "-5", "an en dash after a relation"),
    ("\\boxed{42} \\boxed{42.0}", "42", "two boxes, one value"),
    ("\\log_2 8", "3", "a logarithm to the base 2"),
    ("\\log_{\\frac12} 4", "-2", "a logarithm to the base one half"),
    ("\\log_b b", "1", "a logarithm to a named base"),
    ("2^{3!}", "64", "the factorial inside the exponent's braces"),
    ("x!^2", "(x!)^2", "a power of a factorial"),
    ("e^{\\ln 2}", "2", "a braced exponent"),
    ("2^\\frac12", "\\sqrt{2}", "a fraction as an unbraced exponent"),
    ("1 \\le x \\le 1", "\\{1\\}", "a closed interval of one point"),
    ("5 > x > 2", "(2, 5)", "ends in the order of the signs"),
    ("\\text{Yes}", "\\text{yes}", "case folded in prose"),
    ("\\textbf{YES}", "\\text{yes}", "case folded in prose"),
    ("x^{\\prime}", "x^{\\prime}", "the same formula"),
    ("2(3)", "6", "a product with a bracket after an integer"),
    ("0.5(x+1)", "\\frac{x+1}{2}", "a decimal times a bracket of more than digits"),
    ("2./3", "\\frac23", "a numeral ending in its point before a slash"),
    ("0.5x", "\\frac{x}{2}", "a decimal times a letter"),
]


def _score(answer: str, gold: str) -> float:
    return grade_answer(answer, gold, "math").score


@pytest.mark.parametrize(("answer", "gold", "why"), WRONG, ids=[f"{a} vs {g}" for a, g, _ in WRONG])
def test_the_fourth_attackers_wrong_answers_score_zero(answer: str, gold: str, why: str) -> None:
    """Each hand-written wrong answer of the answer-level classes scores 0."""
    assert _score(answer, gold) == 0.0, why


@pytest.mark.parametrize(("answer", "gold", "why"), RIGHT, ids=[f"{a} vs {g}" for a, g, _ in RIGHT])
def test_the_same_notation_used_rightly_still_scores_one(answer: str, gold: str, why: str) -> None:
    """The fixes refuse only the misreading: mixed numbers, Unicode fractions and roots, factorials,
    inequalities and named tuples written plainly still score 1."""
    assert _score(answer, gold) == 1.0, why


def test_boxes_alone_are_still_read_one_by_one() -> None:
    """An answer of boxes only is still read box by box: two values are a hedge."""
    assert _score("\\boxed{41} \\boxed{42}", "42") == 0.0
    assert _score("\\boxed{42}\\boxed{42}", "42") == 1.0


REPLIES = [
    ("Therefore the answer is not\n\\[\n\\boxed{42}\n\\]", 0.0),
    ("Therefore the answer is not\n$$\\boxed{42}$$", 0.0),
    ("It isn't\n\\boxed{42}", 0.0),
    ("The answer is not:\n\\boxed{42}", 0.0),
    ("Not so fast\n\n\\boxed{42}", 0.0),
    ("The answer is negative\n\\boxed{42}", 0.0),
    ("x = -\n\\boxed{42}", 0.0),
    ("$x = -$\n$\\boxed{42}$", 0.0),
    ("\\[ x = - \\]\n\\[ \\boxed{42} \\]", 0.0),
    ("\\(-\\)\\(\\boxed{42}\\)", 0.0),
    ("\\boxed{42}\n is not correct.", 0.0),
    ("The answer is \\boxed{42}\nwhich is not right.", 0.0),
    ("The answer is $\\boxed{x = 42}$. But that is wrong, it is not \\boxed{42}.", 0.0),
    ("First I thought \\boxed{42.0} but it is not \\boxed{42}.", 0.0),
    ("The answer is $-(\\boxed{42})$.", 0.0),
    ("The answer is $-[\\boxed{42}]$.", 0.0),
    ("The answer is $-\\left(\\boxed{42}\\right)$.", 0.0),
    ("The answer is $-\\displaystyle\\boxed{42}$.", 0.0),
    ("The answer is $-\\quad\\boxed{42}$.", 0.0),
    ("The answer is $(1, \\boxed{42})$.", 0.0),
    ("The answer is $1, \\boxed{42}$.", 0.0),
    ("The answer is $1\\,\\boxed{042}$.", 0.0),
    ("The answer is $1,\\boxed{042}$.", 0.0),
    ("The answer is $\\left(\\boxed{42}\\right)^2$.", 0.0),
    ("The answer is $\\{\\boxed{42}\\}$.", 0.0),
    ("The answer is \\boxed{42}.", 1.0),
    ("**Final Answer**\n\\[\n\\boxed{42}\n\\]", 1.0),
    ("Janet sells 16 - 3 - 4 = 9 duck eggs a day\n$$\\boxed{42}$$", 1.0),
    ("Final:\n\\[\n\\boxed{42}\n\\]\nThis is the number of ways.", 1.0),
    ("So we have\n\\[\n(\\boxed{42})\n\\]", 1.0),
    ("The answer is $\\left(\\boxed{42}\\right)$.", 1.0),
    ("$x = 5 \\quad \\boxed{42}$", 1.0),
    ("The answer is $\\displaystyle\\boxed{42}$.", 1.0),
    ("We first get $\\boxed{x = 42}$, so the answer is $\\boxed{42}$.", 1.0),
]


@pytest.mark.parametrize(("reply", "score"), REPLIES, ids=[reply for reply, _ in REPLIES])
def test_what_a_reader_reads_with_a_replys_box_is_read_with_it(reply: str, score: float) -> None:
    """A denial or sign on the line before a box, brackets, digits and each box's sentence are read with it."""
    answer = extract_final_answer(reply)
    assert answer is not None
    assert _score(answer, "42") == score


# -- generated ----------------------------------------------------------------------------------

DIGITS = st.integers(min_value=2, max_value=9)
PROPER = st.tuples(st.integers(1, 8), st.integers(2, 9)).filter(lambda pq: pq[0] < pq[1])


@settings(max_examples=150, deadline=None)
@given(digit=DIGITS, fraction=PROPER, head=st.sampled_from(["x^{}", "2^{}", "x_{}", "\\sqrt {}", "\\frac1{}"]),
       shape=st.sampled_from(["{head} {p}/{q}", "{head}\\frac{{{p}}}{{{q}}}", "{head}\\frac{p}{q}"]))
def test_a_fraction_after_a_power_root_or_subscript_is_never_a_mixed_number(
        digit: int, fraction: tuple[int, int], head: str, shape: str) -> None:
    """Generated: the last digit of a power, subscript, root or denominator is no integer part."""
    p, q = fraction
    assume(not (head == "2^{}" and 2**digit * p == digit * q + p))  # 2^2 times 2/3 is 8/3 as well
    answer = shape.format(head=head.format(digit), p=p, q=q)
    assert _score(answer, f"\\frac{{{digit * q + p}}}{{{q}}}") == 0.0


@settings(max_examples=100, deadline=None)
@given(whole=st.integers(1, 999), fraction=PROPER, sign=st.sampled_from(["", "-"]))
def test_a_mixed_number_written_plainly_is_still_read(whole: int, fraction: tuple[int, int], sign: str) -> None:
    """Generated: ``7 3/4`` and ``7\\frac{3}{4}`` are mixed numbers."""
    p, q = fraction
    value = f"{sign}\\frac{{{whole * q + p}}}{{{q}}}"
    assert _score(f"{sign}{whole} {p}/{q}", value) == 1.0
    assert _score(f"{sign}{whole}\\frac{{{p}}}{{{q}}}", value) == 1.0


VULGAR = {"\u00bd": (1, 2), "\u2153": (1, 3), "\u00bc": (1, 4), "\u00be": (3, 4), "\u2155": (1, 5), "\u215b": (1, 8)}


@settings(max_examples=150, deadline=None)
@given(char=st.sampled_from(sorted(VULGAR)), number=DIGITS,
       shape=st.sampled_from(["{n}^{c}", "{n}/{c}", "{n}\u00f7{c}", "\u221a{c}", "x^{c}"]))
def test_a_unicode_fraction_stays_one_group(char: str, number: int, shape: str) -> None:
    """Generated: ``n^½``, ``n/½``, ``√½`` take the whole fraction, never its numerator alone."""
    p, q = VULGAR[char]
    assume(shape != "{n}^{c}" or abs(number ** (p / q) - number ** p / q) > 1e-9)  # 4^½ is 2 either way
    answer = shape.format(n=number, c=char)
    split = {"{n}^{c}": f"\\frac{{{number ** p}}}{{{q}}}", "{n}/{c}": f"\\frac{{{number}}}{{{p * q}}}",
             "{n}\u00f7{c}": f"\\frac{{{number}}}{{{p * q}}}", "\u221a{c}": f"\\frac{{\\sqrt{{{p}}}}}{{{q}}}",
             "x^{c}": f"\\frac{{x^{{{p}}}}}{{{q}}}"}[shape]
    whole = {"{n}^{c}": f"{number}^{{{p}/{q}}}", "{n}/{c}": f"\\frac{{{number * q}}}{{{p}}}",
             "{n}\u00f7{c}": f"\\frac{{{number * q}}}{{{p}}}", "\u221a{c}": f"\\sqrt{{\\frac{{{p}}}{{{q}}}}}",
             "x^{c}": f"x^{{{p}/{q}}}"}[shape]
    assert _score(answer, split) == 0.0
    assert _score(answer, whole) == 1.0


ROOT_READINGS = {
    "\u00b2": ("\\sqrt{{{l}}}^{{2}}", "\\sqrt{{{l}^{{2}}}}"),
    "\u00b3": ("\\sqrt{{{l}}}^{{3}}", "\\sqrt{{{l}^{{3}}}}"),
    "{o}": ("\\sqrt{{{l}}} {o}", "\\sqrt{{{l} {o}}}"),
    "{d}": ("{d}\\sqrt{{{l}}}", "\\sqrt{{{d} {l}}}"),
    "({o})": ("\\sqrt{{{l}}}\\cdot {o}", "\\sqrt{{{l} {o}}}"),
}


@settings(max_examples=100, deadline=None)
@given(letter=st.sampled_from("abcdxyz"), other=st.sampled_from("mnpqrst"), digit=DIGITS,
       follower=st.sampled_from(sorted(ROOT_READINGS)))
def test_a_unicode_root_followed_by_what_it_may_cover_is_unreadable(letter: str, other: str, digit: int,
                                                                     follower: str) -> None:
    """Generated: ``√x²``, ``√xy``, ``√x2``, ``√x(y)`` equal neither reading of the root's reach."""
    answer = f"\u221a{letter}" + follower.format(o=other, d=digit)
    for reading in ROOT_READINGS[follower]:
        assert _score(answer, reading.format(l=letter, o=other, d=digit)) == 0.0
    assert _score(f"\u221a{letter}", f"\\sqrt{{{letter}}}") == 1.0


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 12), spaced=st.booleans())
def test_a_double_factorial_is_never_guessed(n: int, spaced: bool) -> None:
    """Generated: ``n!!`` equals neither the double factorial nor (n!)!; ``(n!)!`` and ``n!`` still read."""
    double = 1
    for k in range(n, 0, -2):
        double *= k
    answer = f"{n}! !" if spaced else f"{n}!!"
    assert _score(answer, str(double)) == 0.0
    assert _score(answer, f"({n}!)!") == 0.0
    assert _score(f"{n}!", f"{n}!") == 1.0


@settings(max_examples=100, deadline=None)
@given(zero=st.sampled_from(["0", "(1-1)", "(2-2)", "(x-x)", "{3-3}"]),
       exponent=st.sampled_from(["0", "{1-1}", "{x-x}", "{0\\cdot 5}", "{\\frac{0}{2}}"]))
def test_an_indeterminate_power_written_any_way_is_unreadable(zero: str, exponent: str) -> None:
    """Generated: 0^0 in any spelling never equals 1."""
    assert _score(f"{zero}^{exponent}", "1") == 0.0


@settings(max_examples=100, deadline=None)
@given(low=st.integers(-50, 50), high=st.integers(-50, 50), strict=st.booleans(), mirrored=st.booleans())
def test_a_double_inequality_needs_its_ends_in_order(low: int, high: int, strict: bool, mirrored: bool) -> None:
    """Generated: ``a < x < b`` is (a, b) when a < b, and unreadable otherwise (never the empty set)."""
    op = "<" if strict else "\\le"
    answer = f"{high} {op.replace('<', '>').replace('le', 'ge')} x {op.replace('<', '>').replace('le', 'ge')} {low}" \
        if mirrored else f"{low} {op} x {op} {high}"
    interval = f"({low}, {high})" if strict else f"[{low}, {high}]"
    in_order = low < high or (low == high and not strict)
    assert _score(answer, "\\emptyset") == 0.0
    if low < high:
        assert _score(answer, interval) == 1.0
    if not in_order:
        assert _score(answer, f"({high}, {low})" if strict else f"[{high}, {low}]") == 0.0


@settings(max_examples=100, deadline=None)
@given(base=st.integers(2, 9), exponent=st.sampled_from(["{2}", "{3}", "x", "n", "{k}"]))
def test_a_factorial_after_an_exponent_is_never_guessed(base: int, exponent: str) -> None:
    """Generated: ``b^{e}!`` equals neither (b^e)! nor b^(e!)."""
    bare = exponent.strip("{}")
    assert _score(f"{base}^{exponent}!", f"{base}^{{{bare}!}}") == 0.0
    assert _score(f"{base}^{exponent}!", f"({base}^{{{bare}}})!") == 0.0


@settings(max_examples=100, deadline=None)
@given(whole=st.integers(0, 99), places=st.text("0123456789", max_size=3), repeated=st.integers(1, 999))
def test_digits_in_brackets_after_a_decimal_are_never_a_product(whole: int, places: str, repeated: int) -> None:
    """Generated: ``a.b(c)`` writes repeating digits to many readers; it never equals the product."""
    decimal = f"{whole}.{places}"
    product = f"{decimal.rstrip('.') or '0'} \\cdot {repeated}"
    assert _score(f"{decimal}({repeated})", product) == 0.0


LETTERS = st.sampled_from("abcdfghkmnpqrstuvwxyz")


@settings(max_examples=100, deadline=None)
@given(letter=LETTERS, shape=st.sampled_from(["\\dot{{{}}}", "{}^{{\\prime}}", "\\vec{{{}}}", "\\hat{{{}}} + 1",
                                              "f({})'"]))
def test_case_is_never_folded_in_an_unreadable_formula(letter: str, shape: str) -> None:
    """Generated: an unreadable formula equals itself, and never the same formula in the other case."""
    assert _score(shape.format(letter.upper()), shape.format(letter)) == 0.0
    assert _score(shape.format(letter), shape.format(letter)) == 1.0


@settings(max_examples=100, deadline=None)
@given(bound=st.integers(1, 50), op=st.sampled_from(["<", "\\le", ">", "\\ge"]),
       wrap=st.sampled_from(["|x|", "\\left|x\\right|", "|{x}|"]))
def test_an_inequality_in_a_formula_of_x_is_solved_for_x(bound: int, op: str, wrap: str) -> None:
    """Generated: ``|x| < b`` is never the interval of x < b; it is the interval it solves to."""
    answer = f"{wrap} {op} {bound}"
    one_sided = {"<": f"(-\\infty, {bound})", "\\le": f"(-\\infty, {bound}]", ">": f"({bound}, \\infty)",
                 "\\ge": f"[{bound}, \\infty)"}[op]
    solved = {"<": f"(-{bound}, {bound})", "\\le": f"[-{bound}, {bound}]",
              ">": f"(-\\infty, -{bound}) \\cup ({bound}, \\infty)",
              "\\ge": f"(-\\infty, -{bound}] \\cup [{bound}, \\infty)"}[op]
    assert _score(answer, one_sided) == 0.0
    assert _score(answer, solved) == 1.0


NAMES = st.lists(st.sampled_from(["a", "b", "c", "p", "q", "x", "y", "z"]), min_size=2, max_size=3, unique=True)


@settings(max_examples=100, deadline=None)
@given(names=NAMES, values=st.lists(st.integers(-20, 20), min_size=3, max_size=3, unique=True))
def test_a_named_tuple_is_read_in_the_order_of_its_names(names: list[str], values: list[int]) -> None:
    """Generated: ``(y, x) = (1, 2)`` equals the bare tuple only when the names are in order."""
    values = values[: len(names)]
    answer = f"({', '.join(names)}) = ({', '.join(map(str, values))})"
    expected = 1.0 if names == sorted(names) else 0.0
    assert _score(answer, f"({', '.join(map(str, values))})") == expected


@settings(max_examples=100, deadline=None)
@given(low=st.integers(0, 99), high=st.integers(0, 99), spaced=st.booleans())
def test_an_en_dash_between_numbers_is_a_range(low: int, high: int, spaced: bool) -> None:
    """Generated: ``a\\u2013b`` is the range a to b, never a - b; a leading en dash is still a minus."""
    dash = " \u2013 " if spaced else "\u2013"
    assert _score(f"{low}{dash}{high}", str(low - high)) == 0.0
    assert _score(f"\u2013{high}", str(-high)) == 1.0


SIGNS_BEFORE = ["x = -\n", "$-$\n", "$x = -$\n$", "\\[ - \\]\n\\[", "-(", "-\\left(", "-\\displaystyle", "-\\quad",
                "The answer is not\n", "It isn't\n", "1\\,", "1,", "(1, ", "\\{"]


@settings(max_examples=150, deadline=None)
@given(number=st.integers(1, 10**6), before=st.sampled_from(SIGNS_BEFORE))
def test_what_stands_before_a_replys_box_is_read_with_it(number: int, before: str) -> None:
    """Generated: a sign, bracket, digits or denial before the final box (across a line break) change it."""
    closers = {"-(": ")", "-\\left(": "\\right)", "(1, ": ")", "\\[ - \\]\n\\[": "\\]", "$x = -$\n$": "$",
               "\\{": "\\}"}
    closing = closers.get(before, "")
    answer = extract_final_answer(f"{before}\\boxed{{{number}}}{closing}")
    assert answer is not None
    assert _score(answer, str(number)) == 0.0


@settings(max_examples=100, deadline=None)
@given(number=st.integers(1, 10**6), first=st.sampled_from(["x = {}", "{}.0", "\\frac{{{}}}{{1}}"]),
       denial=st.sampled_from(["it is not ", "that is wrong: not ", "it cannot be "]))
def test_each_of_several_boxes_is_read_with_its_sentence(number: int, first: str, denial: str) -> None:
    """Generated: a box of equal value but other text does not hide the denial in the final box's sentence."""
    reply = f"The answer is $\\boxed{{{first.format(number)}}}$. Hmm, {denial}$\\boxed{{{number}}}$."
    answer = extract_final_answer(reply)
    assert answer is not None
    assert _score(answer, str(number)) == 0.0
