"""A third attacker's classes: two letters under one power, and the tilde that means "about".

Found on 2026-11-28 by probing the grader with answers it had not been tuned on:

- ``ab^2`` against ``a^2b^2`` scored 1, and ``2^xy`` against ``2^{xy}``, and ``x_ab`` against
  ``x_{ab}``: two letters written side by side were read as one factor, so a power, subscript
  or factorial after them (or an unbraced ``^`` or ``_`` before them) took both. A reader sees
  ``a b^2``, ``2^x y`` and ``x_a b``.
- ``a/bc`` against ``\\frac{a}{bc}`` scored 1: the letters after the slash were one factor,
  while ``1/2x`` was already refused as a guess.
- ``~42`` and ``x = ~42`` against 42 scored 1: ``~`` was always LaTeX's tie (a space), but
  with nothing tied on its left it is the prose sign for "about".

Each class is pinned by hand and generated here (letter pairs, powers and numbers drawn by
hypothesis); the tilde, in an answer and right before a reply's box, is also two adversary
operators (``tilde_for_about`` and ``tilde_before_the_box`` in
``engine/testing/grading_adversary/changing_prose.py``), fuzzed over every benchmark gold.
"""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handlers.grading import extract_final_answer, grade_answer
from handlers.grading.lexicon import FUNCTIONS, LIST_WORDS, unit_named

WRONG = [
    ("ab^2", "a^2b^2", "one power read on both letters"),
    ("xy^2", "(xy)^2", "one power read on both letters"),
    ("2^xy", "2^{xy}", "an unbraced exponent is one letter"),
    ("x_ab", "x_{ab}", "an unbraced subscript is one letter"),
    ("\\sqrt x^2", "x", "the root squared, or the root of x^2 (|x|)?"),
    ("\\sqrt 4^2", "4", "the root squared, or the root of 16?"),
    ("a/bc", "\\frac{a}{bc}", "a product after a slash is a guess"),
    ("1/ab", "\\frac{1}{ab}", "a product after a slash is a guess"),
    ("AB^2", "A^2B^2", "the segment AB squared, or A times B squared?"),
    ("~42", "42", "about 42"),
    ("~ 42", "42", "about 42"),
    ("x = ~42", "42", "about 42"),
    ("x =~ 42", "42", "about 42"),
    ("x=~42", "42", "about 42"),
    ("(~42)", "42", "about 42"),
    ("1, ~42", "1, 42", "about 42 in a list"),
    ("~\\frac{1}{2}", "\\frac{1}{2}", "about a half"),
    ("x = ~\\pi", "\\pi", "about pi"),
    ("\\$~42", "42", "about 42 dollars: the answer and a reply's box share one tilde rule"),
]

RIGHT = [
    ("xy^2", "x y^2", "x times y squared"),
    ("ab_1", "a b_1", "the subscript is on b"),
    ("xy!", "x \\cdot y!", "the factorial is on y"),
    ("2xy^2", "2 x y^2", "a number before the pair"),
    ("2^xy", "2^x y", "LaTeX's reading"),
    ("2^{xy}", "2^{yx}", "a braced exponent keeps both letters"),
    ("\\frac{xy}{2}", "\\frac{x y}{2}", "the pair inside a fraction"),
    ("a/(bc)", "\\frac{a}{bc}", "brackets say it"),
    ("AB^2", "AB^2", "the same text"),
    ("AB = 5", "5", "a name on the left"),
    ("42~\\text{cm}", "42", "a tie before a unit"),
    ("x~=~42", "42", "ties around the relation"),
    ("x~<~42", "x < 42", "ties around the relation"),
    ("\\sqrt{x}^2", "x", "braces say the root is squared"),
    ("3~\\times~4", "12", "ties around the operator"),
    ("42~", "42", "a tie at the end joins nothing"),
]


def _score(answer: str, gold: str) -> float:
    return grade_answer(answer, gold, "math").score


@pytest.mark.parametrize(("answer", "gold", "why"), WRONG, ids=[f"{a} vs {g}" for a, g, _ in WRONG])
def test_the_third_attackers_wrong_answers_score_zero(answer: str, gold: str, why: str) -> None:
    """Each hand-written wrong answer of the three classes scores 0."""
    assert _score(answer, gold) == 0.0, why


@pytest.mark.parametrize(("answer", "gold", "why"), RIGHT, ids=[f"{a} vs {g}" for a, g, _ in RIGHT])
def test_the_same_notation_used_rightly_still_scores_one(answer: str, gold: str, why: str) -> None:
    """The fixes refuse only the misreading: the letters, ties and slashes used plainly still score 1."""
    assert _score(answer, gold) == 1.0, why


def _a_product(pair: str) -> bool:
    """Whether the grader reads these two letters as a product (not a unit, function or list word)."""
    return unit_named(pair) is None and pair not in FUNCTIONS and pair.lower() not in LIST_WORDS


LOWER_PAIRS = st.tuples(st.sampled_from(string.ascii_lowercase), st.sampled_from(string.ascii_lowercase)).map(
    "".join).filter(lambda pair: pair[0] != pair[1] and _a_product(pair) and "e" not in pair and "i" not in pair)
"""Two distinct lower-case letters read as a product; ``e`` and ``i`` are constants, so a power
of them can equal a power of their product by coincidence (``i^2`` and ``(ib)^2``...)."""
UPPER_PAIRS = st.tuples(st.sampled_from(string.ascii_uppercase), st.sampled_from(string.ascii_uppercase)).map(
    "".join).filter(lambda pair: pair[0] != pair[1] and _a_product(pair))
POWERS = st.integers(min_value=2, max_value=9)


@settings(max_examples=150, deadline=None)
@given(pair=LOWER_PAIRS, power=POWERS)
def test_a_power_after_two_letters_is_the_second_letters_alone(pair: str, power: int) -> None:
    """Generated: ``ab^k`` equals ``a b^k`` and never ``(ab)^k`` or ``a^k b^k``."""
    a, b = pair
    assert _score(f"{a}{b}^{power}", f"{a} {b}^{{{power}}}") == 1.0
    assert _score(f"{a}{b}^{power}", f"({a}{b})^{power}") == 0.0
    assert _score(f"{a}{b}^{power}", f"{a}^{power}{b}^{power}") == 0.0


@settings(max_examples=100, deadline=None)
@given(pair=LOWER_PAIRS, base=st.integers(min_value=2, max_value=9))
def test_an_unbraced_exponent_is_one_letter(pair: str, base: int) -> None:
    """Generated: ``2^ab`` is 2^a times b, never 2^{ab}."""
    a, b = pair
    assert _score(f"{base}^{a}{b}", f"{b}\\cdot {base}^{{{a}}}") == 1.0
    assert _score(f"{base}^{a}{b}", f"{base}^{{{a}{b}}}") == 0.0


@settings(max_examples=100, deadline=None)
@given(pair=LOWER_PAIRS, name=st.sampled_from("xyzuvw"))
def test_an_unbraced_subscript_is_never_two_letters(pair: str, name: str) -> None:
    """Generated: ``x_ab`` is x_a times b in LaTeX; it never equals ``x_{ab}``."""
    assert _score(f"{name}_{pair}", f"{name}_{{{pair}}}") == 0.0
    assert _score(f"{name}_{{{pair}}}", f"{name}_{{{pair}}}") == 1.0


@settings(max_examples=100, deadline=None)
@given(pair=LOWER_PAIRS, top=st.integers(min_value=1, max_value=99))
def test_two_letters_after_a_slash_are_never_guessed(pair: str, top: int) -> None:
    """Generated: ``n/ab`` is n/(ab) to some readers and nb/a to others; it scores 0 against both."""
    a, b = pair
    assert _score(f"{top}/{a}{b}", f"\\frac{{{top}}}{{{a}{b}}}") == 0.0
    assert _score(f"{top}/{a}{b}", f"\\frac{{{top}{b}}}{{{a}}}") == 0.0


@settings(max_examples=100, deadline=None)
@given(pair=UPPER_PAIRS, power=POWERS)
def test_a_power_after_a_capital_pair_is_never_guessed(pair: str, power: int) -> None:
    """Generated: ``AB^k`` (segment AB squared, or A times B^k?) equals neither reading, only itself."""
    a, b = pair
    assert _score(f"{a}{b}^{power}", f"{a}^{power}{b}^{power}") == 0.0
    assert _score(f"{a}{b}^{power}", f"{a} {b}^{power}") == 0.0
    assert _score(f"{a}{b}^{power}", f"{a}{b}^{power}") == 1.0


NUMBERS = st.one_of(
    st.integers(min_value=-10**6, max_value=10**6).map(str),
    st.decimals(min_value=-1000, max_value=1000, places=3, allow_nan=False, allow_infinity=False).map(str),
    st.tuples(st.integers(1, 99), st.integers(2, 99)).map(lambda pq: f"\\frac{{{pq[0]}}}{{{pq[1]}}}"),
)
ABOUT = ["~{}", "~ {}", "~  {}", "x = ~{}", "x =~ {}", "x=~{}", "(~{})", "[~{}]", "\\{{~{}\\}}", "y = ~ {}"]


@settings(max_examples=200, deadline=None)
@given(number=NUMBERS, shape=st.sampled_from(ABOUT))
def test_a_tilde_with_nothing_tied_on_its_left_is_about_and_scores_zero(number: str, shape: str) -> None:
    """Generated: ``~N`` in any of its prose positions never equals N."""
    assert _score(shape.format(number), number) == 0.0


TIES = ["{}~\\text{{cm}}", "x~=~{}", "x~=~ {}", "{}~"]


@settings(max_examples=100, deadline=None)
@given(number=NUMBERS, shape=st.sampled_from(TIES))
def test_a_tilde_that_ties_two_things_is_layout(number: str, shape: str) -> None:
    """Generated: a tie between two things (or at the end) is a space, and the answer still scores 1."""
    assert _score(shape.format(number), number) == 1.0


REPLIES = [
    ("The answer is ~\\boxed{42}.", 0.0),
    ("~\\boxed{42}", 0.0),
    ("The answer is $~\\boxed{42}$.", 0.0),
    ("$x = ~\\boxed{42}$", 0.0),
    ("$x =~\\boxed{42}$", 0.0),
    ("It is ~ \\boxed{42}.", 0.0),
    ("Hence~\\boxed{42}.", 1.0),
    ("$x~=~\\boxed{42}$", 1.0),
    ("The answer is:~$\\boxed{42}$", 1.0),
    ("The answer is \\boxed{42}.", 1.0),
]


@pytest.mark.parametrize(("reply", "score"), REPLIES, ids=[reply for reply, _ in REPLIES])
def test_a_tilde_right_before_a_replys_box_is_read_with_it(reply: str, score: float) -> None:
    """An untied ``~`` before the final box makes it "about 42" (0); a tie after a word or relation is layout."""
    answer = extract_final_answer(reply)
    assert answer is not None
    assert _score(answer, "42") == score
